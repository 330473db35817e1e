"""STS12-16, STSBenchmark and SICK-R test sets from the SentEval data layout, as MTEB and MetaEOL define them.

Output per task: `<out>/<TaskName>/test.jsonl` with keys `sentence1, sentence2, score`, the local
layout of the generic STS tasks (bench/tasks/generic.py), plus `manifest.json`.

Tasks under MTEB's names hold MTEB's pairs (sizes checked against MTEB's descriptive statistics in the
tests): STS12-16 as below (3,108 / 1,500 / 3,750 / 3,000 / 1,186 pairs), STSBenchmark from the original
cased test file (1,379), SICK-R from all of SICK (train + trial + test, 9,927 pairs, by pair id), as
`mteb/sickr-sts` holds it. MetaEOL evaluates through SentEval, whose STSBenchmark is tokenised and
lower-cased and whose SICK-R is the 4,927 test pairs: those are `STSBenchmark-SentEval` and
`SICK-R-SentEval` (suite `metaeol-sts`).

Parsing follows SentEval (facebookresearch/SentEval, senteval/sts.py), which MetaEOL evaluates with:
* STS12-16: `STS.input.<subset>.txt` (s1 TAB s2) with `STS.gs.<subset>.txt` (score per line; blank
  lines are unscored pairs and are dropped), subsets in SentEval's order and concatenated (MetaEOL
  reports Spearman over "all", i.e. this concatenation). Sentences are whitespace-tokenised and
  re-joined with single spaces, as SentEval's `s.split()` and the batcher's `' '.join` do.
* STSBenchmark: SentEval's tokenised, lower-cased `STSBenchmark/sts-test.csv` (fields 5, 6; score 4).
* SICK-R: `SICK/SICK_test_annotated.txt` (header skipped; sentence_A, sentence_B, relatedness_score).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench.core.errors import DataError
from bench.dataset_builders.common import SourceFile, jsonl_bytes, read_source, summary, write_manifest, write_outputs

STS_ROOT = "SynWMD/data/downstream/STS"
SICK_DIR = "research_embeddings_fine_tuning/data/downstream/SICK"
SICK_TEST = f"{SICK_DIR}/SICK_test_annotated.txt"
SICK_ALL = (f"{SICK_DIR}/SICK_train.txt", f"{SICK_DIR}/SICK_trial.txt", SICK_TEST)
STSB_TEST = f"{STS_ROOT}/STSBenchmark/stsbenchmark/sts-test.csv"  # original casing, as mteb/stsbenchmark-sts
STSB_SENTEVAL_TEST = f"{STS_ROOT}/STSBenchmark/sts-test.csv"  # SentEval's tokenised, lower-cased copy
SENTEVAL_SUBSETS: dict[str, tuple[str, ...]] = {
    "STS12": ("MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"),
    "STS13": ("FNWN", "headlines", "OnWN"),
    "STS14": ("deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"),
    "STS15": ("answers-forums", "answers-students", "belief", "headlines", "images"),
    "STS16": ("answer-answer", "headlines", "plagiarism", "postediting", "question-question"),
}
STS_TASK_NAMES = (*SENTEVAL_SUBSETS, "STSBenchmark", "SICK-R", "STSBenchmark-SentEval", "SICK-R-SentEval")
NOTES = {
    "STSBenchmark": "MTEB's STSBenchmark test split: the original cased sts-test.csv.",
    "SICK-R": "MTEB's SICK-R: all 9,927 SICK pairs (train + trial + test) in pair-id order.",
    "STSBenchmark-SentEval": "SentEval's tokenised, lower-cased STS-B test set (MetaEOL's evaluation data).",
    "SICK-R-SentEval": "SentEval's SICK-R: the 4,927 SICK test pairs (MetaEOL's evaluation data).",
}

Pair = tuple[str, str, float]


def _tokens(text: str) -> str:
    return " ".join(text.split())


def _score(value: str, where: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise DataError(f"{where}: gold score {value!r} is not a number.") from None


def parse_senteval_subset(inputs: SourceFile, gold: SourceFile) -> list[Pair]:
    """Scored pairs of one STS12-16 subset (SentEval's loadFile)."""
    lines = inputs.text.splitlines()
    scores = gold.text.splitlines()
    if len(lines) != len(scores):
        raise DataError(
            f"{inputs.rel_path} has {len(lines)} lines but {gold.rel_path} has {len(scores)}; they must pair up."
        )
    pairs = []
    for n, (line, score) in enumerate(zip(lines, scores, strict=True), start=1):
        if score.strip() == "":
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            raise DataError(
                f"{inputs.rel_path} line {n}: expected 2 tab-separated sentences, found {len(fields)} fields."
            )
        pairs.append((_tokens(fields[0]), _tokens(fields[1]), _score(score, f"{gold.rel_path} line {n}")))
    return pairs


def parse_stsb(src: SourceFile) -> list[Pair]:
    pairs = []
    for n, line in enumerate(src.text.splitlines(), start=1):
        fields = line.strip().split("\t")
        if len(fields) < 7:
            raise DataError(f"{src.rel_path} line {n}: expected >= 7 tab-separated fields, found {len(fields)}.")
        pairs.append((_tokens(fields[5]), _tokens(fields[6]), _score(fields[4], f"{src.rel_path} line {n}")))
    return pairs


def parse_sick(src: SourceFile) -> list[tuple[int, Pair]]:
    """(pair id, pair) of one SICK file."""
    lines = src.text.splitlines()
    if not lines or not lines[0].startswith("pair_ID"):
        raise DataError(f"{src.rel_path}: expected a header line starting with 'pair_ID'.")
    pairs = []
    for n, line in enumerate(lines[1:], start=2):
        fields = line.strip().split("\t")
        if len(fields) < 4 or not fields[0].isdigit():
            raise DataError(f"{src.rel_path} line {n}: expected a pair id and >= 3 more tab-separated fields.")
        pair = (_tokens(fields[1]), _tokens(fields[2]), _score(fields[3], f"{src.rel_path} line {n}"))
        pairs.append((int(fields[0]), pair))
    return pairs


def _read_task(source_dir: Path, task: str) -> tuple[list[Pair], list[SourceFile]]:
    if task in SENTEVAL_SUBSETS:
        pairs: list[Pair] = []
        sources = []
        for subset in SENTEVAL_SUBSETS[task]:
            folder = f"{STS_ROOT}/{task}-en-test"
            inputs = read_source(source_dir, f"{folder}/STS.input.{subset}.txt")
            gold = read_source(source_dir, f"{folder}/STS.gs.{subset}.txt")
            pairs += parse_senteval_subset(inputs, gold)
            sources += [inputs, gold]
        return pairs, sources
    if task in ("STSBenchmark", "STSBenchmark-SentEval"):
        src = read_source(source_dir, STSB_TEST if task == "STSBenchmark" else STSB_SENTEVAL_TEST)
        return parse_stsb(src), [src]
    sources = [read_source(source_dir, f) for f in (SICK_ALL if task == "SICK-R" else (SICK_TEST,))]
    by_id = sorted(p for src in sources for p in parse_sick(src))
    return [pair for _, pair in by_id], sources


def build_sts_senteval(
    *, source_dir: Path, out_dir: Path, seed: int = 42, size: int | None = None
) -> dict[str, object]:
    """Write the seven STS test sets; `size` keeps a seeded random subset of that many pairs per task (order kept)."""
    if size is not None and size <= 0:
        raise DataError(f"--size must be a positive number of pairs, got {size}.")
    read = {
        task: _read_task(Path(source_dir), task) for task in STS_TASK_NAMES
    }  # all sources first: fail before writing
    manifests = {}
    for task, (pairs, sources) in read.items():
        kept = pairs
        if size is not None and size < len(pairs):
            idx = np.sort(np.random.default_rng(seed).choice(len(pairs), size=size, replace=False))
            kept = [pairs[i] for i in idx.tolist()]
        records = [{"sentence1": s1, "sentence2": s2, "score": score} for s1, s2, score in kept]
        task_dir = Path(out_dir) / task
        outputs = write_outputs(task_dir, {"test.jsonl": (jsonl_bytes(records), len(records))})
        manifests[task] = write_manifest(
            task_dir,
            {
                "builder": "bench.dataset_builders.sts_senteval:build_sts_senteval",
                "task": task,
                "proxy": False,
                "note": NOTES.get(
                    task, "SentEval-parsed test set: scored pairs only, whitespace-tokenised (MTEB's pairs)."
                ),
                "seed": seed,
                "parameters": {"size": size, "subsets": list(SENTEVAL_SUBSETS.get(task, ()))},
                "available_pairs": len(pairs),
                "sources": [s.record for s in sources],
                "outputs": outputs,
            },
        )
    return {"summary": summary("sts-senteval", seed, manifests), "tasks": manifests}
