"""Label-derived PROXY builders for two InBedder test sets (IntentEmotion, InstructSTSB).

Why this exists: the real InBedder test sets were generated with GPT-4 and cannot be
downloaded in an offline environment, yet the harness must be exercised on real text.
These builders turn staged public raw files into files with the *published schema*:

* ``IntentEmotion/{intent,emotion}.csv`` -- columns ``anchor,positive,negative``.
  Proxy: triplets are derived purely from gold class labels (BANKING77 intent
  categories, GoEmotions emotion labels). The real set's triplets were curated with
  GPT-4; here anchor/positive merely share a label and the negative has another.
* ``InstructSTSB/test.jsonl`` -- keys ``sentence1, sentence2, score, instruction``.
  Proxy: the real InstructSTSB has a GPT-4-written instruction per pair, and the
  same sentence pair appears with BOTH labels under different instructions (that is
  the point of the benchmark). Here every row shares one generic instruction and
  the binary label is derived from the STS-B gold score (>= 4.0 -> 1, <= 1.0 -> 0),
  so instruction-following is NOT tested by this proxy; only the plumbing is.

Every output folder carries a ``manifest.json`` with ``"proxy": true``, a note, the
parameters, and sha256 digests of sources and outputs. Outputs contain no timestamps
so that a rebuild with the same seed is byte-identical.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench.core.bounded import load_jsonl_bounded
from bench.core.errors import DataError
from bench.dataset_builders.common import (
    SourceFile,
    read_source,
    write_manifest,
    write_outputs,
)

BANKING_TEST = "task-specific-datasets/banking_data/test.csv"
GO_EMOTION = "Cluster-Swarm/datasets/go_emotion/small.jsonl"
STSB_TEST = "SynWMD/data/downstream/STS/STSBenchmark/stsbenchmark/sts-test.csv"

TRIPLET_HEADER = ("anchor", "positive", "negative")
STS_INSTRUCTION = "Do the two sentences describe the same thing?"
MIN_EMOTION_EXAMPLES = 20
STS_POS_MIN = 4.0
STS_NEG_MAX = 1.0

INTENT_NOTE = (
    "Label-derived PROXY of the InBedder IntentEmotion test set, NOT the original. "
    "The original triplets were produced with GPT-4 and are unavailable offline. Here "
    "intent.csv is built from the BANKING77 test split and emotion.csv from a GoEmotions "
    "sample: anchor and positive share a gold label, the negative has a different gold "
    "label, all texts are verbatim from the sources. It matches the published schema "
    "(anchor,positive,negative) and is meant for offline harness testing; scores on it "
    "are not comparable to published IntentEmotion numbers."
)
STS_NOTE = (
    "Label-derived PROXY of the InBedder InstructSTSB test set, NOT the original. The "
    "original pairs carry GPT-4-written instructions and the same pair appears with both "
    "labels under different instructions; that data is unavailable offline. Here pairs "
    "come from the STS-B test split, the binary score is derived from the gold similarity "
    "(>= 4.0 -> 1, <= 1.0 -> 0, others dropped) and every row has the same generic "
    "instruction, so it does not test instruction-following. It matches the published "
    "schema (sentence1, sentence2, score, instruction) and is meant for offline harness "
    "testing; scores on it are not comparable to published InstructSTSB numbers."
)


def triplets_to_csv_bytes(rows: Sequence[tuple[str, str, str]]) -> bytes:
    """Serialise with the csv module so embedded commas/quotes/newlines round-trip."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(TRIPLET_HEADER)
    writer.writerows(rows)
    return buf.getvalue().encode("utf-8")


def records_to_jsonl_bytes(records: Sequence[dict[str, object]]) -> bytes:
    """One JSON object per line; key order is preserved from the dicts."""
    lines = [json.dumps(rec, ensure_ascii=False) + "\n" for rec in records]
    return "".join(lines).encode("utf-8")


# ---------------------------------------------------------------------------
# Source parsing
# ---------------------------------------------------------------------------


def group_unique_texts(pairs: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    """Group (text, label) pairs by label, de-duplicated, in first-seen order.

    Texts seen under more than one label are dropped: otherwise a "negative" could
    be the very same string as an anchor with a different label, and the label
    lookup used to validate triplets would be ambiguous.
    """
    labels_of: dict[str, set[str]] = {}
    order: list[str] = []
    for text, label in pairs:
        text, label = text.strip(), label.strip()
        if not text or not label:
            continue
        if text not in labels_of:
            labels_of[text] = set()
            order.append(text)
        labels_of[text].add(label)
    groups: dict[str, list[str]] = {}
    for text in order:
        if len(labels_of[text]) == 1:
            groups.setdefault(next(iter(labels_of[text])), []).append(text)
    return groups


def parse_banking(src: SourceFile) -> list[tuple[str, str]]:
    """BANKING77 CSV has a ``text,category`` header; fail loudly if that changes."""
    reader = csv.DictReader(io.StringIO(src.text, newline=""))
    if reader.fieldnames is None or not {"text", "category"} <= set(reader.fieldnames):
        raise DataError(f"{src.rel_path}: expected columns text,category, got {reader.fieldnames}")
    return [(row["text"] or "", row["category"] or "") for row in reader]


def parse_go_emotion(src: SourceFile) -> list[tuple[str, str]]:
    """JSON lines with keys task,input,label; blank lines are tolerated. Parsed within bounds (size,
    nesting, integer digits: `load_jsonl_bounded`), so a damaged line is one DataError naming it."""
    pairs: list[tuple[str, str]] = []
    for lineno, obj in load_jsonl_bounded(src.data, src.rel_path, error=DataError):
        if not isinstance(obj, dict) or "input" not in obj or "label" not in obj:
            raise DataError(f"{src.rel_path}:{lineno}: expected keys 'input' and 'label'")
        pairs.append((str(obj["input"]), str(obj["label"])))
    return pairs


def parse_stsb(src: SourceFile) -> list[tuple[str, str, float]]:
    """STS-B TSV without header; QUOTE_NONE because sentences contain bare quotes.

    Some rows carry two extra trailing provenance fields, which are ignored.
    """
    rows: list[tuple[str, str, float]] = []
    reader = csv.reader(io.StringIO(src.text, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE)
    for lineno, row in enumerate(reader, start=1):
        if len(row) < 7:
            raise DataError(f"{src.rel_path}:{lineno}: expected >= 7 tab-separated fields, got {len(row)}")
        rows.append((row[5].strip(), row[6].strip(), float(row[4])))
    return rows


# ---------------------------------------------------------------------------
# Sampling
# ---------------------------------------------------------------------------


def balanced_assignment(labels: Sequence[str], n: int, rng: np.random.Generator) -> list[str]:
    """Spread n slots over labels so counts differ by at most one; order is shuffled."""
    base, extra = divmod(n, len(labels))
    bonus = set(rng.permutation(len(labels))[:extra].tolist())
    slots = [lab for i, lab in enumerate(labels) for _ in range(base + (i in bonus))]
    return [slots[i] for i in rng.permutation(len(slots))]


def derange_against(anchors: Sequence[str], pool: list[str]) -> list[str]:
    """Swap pool entries so pool[i] != anchors[i] while keeping pool's label counts.

    Keeping the multiset intact means negatives stay as balanced as anchors.
    """
    neg = list(pool)
    for i in range(len(neg)):
        if neg[i] != anchors[i]:
            continue
        for j in range(len(neg)):
            if neg[j] != anchors[i] and anchors[j] != neg[i]:
                neg[i], neg[j] = neg[j], neg[i]
                break
        else:
            raise DataError("cannot assign negative labels different from anchor labels")
    return neg


def sample_pairs(size: int, m: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """Draw m distinct unordered index pairs from range(size), in random orientation.

    Sampling pair ids without replacement guarantees anchor != positive and that
    no (anchor, positive) pair repeats within a label.
    """
    total = size * (size - 1) // 2
    if m > total:
        raise DataError(f"need {m} distinct pairs but a label with {size} texts only has {total}")
    ids = rng.choice(total, size=m, replace=False)
    pairs = [decode_pair(int(k), size) for k in ids]
    flips = rng.integers(0, 2, size=m)
    return [(b, a) if f else (a, b) for (a, b), f in zip(pairs, flips, strict=True)]


def decode_pair(k: int, size: int) -> tuple[int, int]:
    """Map a linear index in [0, C(size,2)) to the pair (i, j) with i < j."""
    i = 0
    row_len = size - 1
    while k >= row_len:
        k -= row_len
        i += 1
        row_len -= 1
    return i, i + 1 + k


def sample_triplets(groups: dict[str, list[str]], n: int, rng: np.random.Generator) -> list[tuple[str, str, str]]:
    """Build n (anchor, positive, negative) triplets stratified over labels."""
    labels = sorted(lab for lab, texts in groups.items() if len(texts) >= 2)
    if len(labels) < 2:
        raise DataError(f"need at least 2 labels with >= 2 texts to build triplets, got {len(labels)}")
    if n < 1:
        raise DataError(f"number of triplets must be positive, got {n}")
    anchor_labels = balanced_assignment(labels, n, rng)
    neg_labels = derange_against(anchor_labels, balanced_assignment(labels, n, rng))
    pair_queue = {lab: sample_pairs(len(groups[lab]), anchor_labels.count(lab), rng) for lab in labels}
    triplets = []
    for a_lab, n_lab in zip(anchor_labels, neg_labels, strict=True):
        i, j = pair_queue[a_lab].pop()
        neg_texts = groups[n_lab]
        negative = neg_texts[int(rng.integers(len(neg_texts)))]
        triplets.append((groups[a_lab][i], groups[a_lab][j], negative))
    return triplets


def binarize_sts(rows: Sequence[tuple[str, str, float]]) -> dict[int, list[tuple[str, str]]]:
    """Keep only clear-cut pairs; mid-range scores are ambiguous as binary labels."""
    pools: dict[int, list[tuple[str, str]]] = {0: [], 1: []}
    seen: set[tuple[str, str]] = set()
    for s1, s2, score in rows:
        if not s1 or not s2 or (s1, s2) in seen:
            continue
        label = 1 if score >= STS_POS_MIN else 0 if score <= STS_NEG_MAX else None
        if label is not None:
            seen.add((s1, s2))
            pools[label].append((s1, s2))
    return pools


def sample_sts(pools: dict[int, list[tuple[str, str]]], n: int, rng: np.random.Generator) -> list[dict[str, object]]:
    """Balanced draw (label 1 gets the extra row when n is odd), then shuffled."""
    if n < 1:
        raise DataError(f"n_pairs must be positive, got {n}")
    want = {1: n - n // 2, 0: n // 2}
    chosen: list[tuple[str, str, int]] = []
    for label in (1, 0):
        pool = pools[label]
        if want[label] > len(pool):
            raise DataError(f"n_pairs={n} needs {want[label]} pairs with label {label}, only {len(pool)} available")
        idx = rng.choice(len(pool), size=want[label], replace=False)
        chosen.extend((*pool[int(k)], label) for k in idx)
    order = rng.permutation(len(chosen))
    return [
        {"sentence1": chosen[k][0], "sentence2": chosen[k][1], "score": chosen[k][2], "instruction": STS_INSTRUCTION}
        for k in order
    ]


# ---------------------------------------------------------------------------
# Public builders
# ---------------------------------------------------------------------------


DEFAULT_SIZE = 300


def _size(size: int | None) -> int:
    size = DEFAULT_SIZE if size is None else size
    if size < 1:
        raise DataError(f"--size must be a positive number, got {size}.")
    return size


def build_intent_emotion_proxy(
    *, source_dir: Path, out_dir: Path, seed: int = 42, size: int | None = None, task_name: str = "IntentEmotion"
) -> dict[str, object]:
    """Write <task_name>/{intent,emotion}.csv (`size` triplets each, default 300) + manifest.json; return the manifest."""
    n = _size(size)
    banking = read_source(source_dir, BANKING_TEST)
    emotion = read_source(source_dir, GO_EMOTION)
    rng = np.random.default_rng(seed)
    intent_groups = group_unique_texts(parse_banking(banking))
    intent_rows = sample_triplets(intent_groups, n, rng)
    emo_groups = {
        lab: texts
        for lab, texts in group_unique_texts(parse_go_emotion(emotion)).items()
        if len(texts) >= MIN_EMOTION_EXAMPLES
    }
    emotion_rows = sample_triplets(emo_groups, n, rng)
    task_dir = Path(out_dir) / task_name
    outputs = write_outputs(
        task_dir,
        {
            "intent.csv": (triplets_to_csv_bytes(intent_rows), len(intent_rows)),
            "emotion.csv": (triplets_to_csv_bytes(emotion_rows), len(emotion_rows)),
        },
    )
    return write_manifest(
        task_dir,
        {
            "builder": "bench.dataset_builders.label_derived.build_intent_emotion_proxy",
            "task": task_name,
            "proxy": True,
            "note": INTENT_NOTE,
            "seed": seed,
            "parameters": {"size": n, "min_emotion_examples": MIN_EMOTION_EXAMPLES},
            "labels_used": {"intent.csv": len(intent_groups), "emotion.csv": len(emo_groups)},
            "sources": [banking.record, emotion.record],
            "outputs": outputs,
        },
    )


def build_instruct_stsb_proxy(
    *, source_dir: Path, out_dir: Path, seed: int = 42, size: int | None = None
) -> dict[str, object]:
    """Write InstructSTSB/test.jsonl (`size` pairs, default 300) + manifest.json; return the manifest."""
    n = _size(size)
    stsb = read_source(source_dir, STSB_TEST)
    rng = np.random.default_rng(seed)
    pools = binarize_sts(parse_stsb(stsb))
    records = sample_sts(pools, n, rng)
    task_dir = Path(out_dir) / "InstructSTSB"
    outputs = write_outputs(task_dir, {"test.jsonl": (records_to_jsonl_bytes(records), len(records))})
    label_counts = {str(lab): sum(r["score"] == lab for r in records) for lab in (0, 1)}
    return write_manifest(
        task_dir,
        {
            "builder": "bench.dataset_builders.label_derived.build_instruct_stsb_proxy",
            "task": "InstructSTSB",
            "proxy": True,
            "note": STS_NOTE,
            "seed": seed,
            "parameters": {
                "size": n,
                "positive_if_score_gte": STS_POS_MIN,
                "negative_if_score_lte": STS_NEG_MAX,
                "instruction": STS_INSTRUCTION,
            },
            "label_counts": {"test.jsonl": label_counts},
            "available_pairs": {str(lab): len(pool) for lab, pool in sorted(pools.items())},
            "sources": [stsb.record],
            "outputs": outputs,
        },
    )
