"""STS12-16, STSBenchmark and SICK-R test sets from the SentEval data layout, as MetaEOL reads them.

Output per task: `<out>/<TaskName>/test.jsonl` with keys `sentence1, sentence2, score`, the local
layout of the generic STS tasks (tasks/generic.py), plus `manifest.json`.

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
from typing import Any

import numpy as np

from bench.errors import DataError
from dataset_builders.common import SourceFile, jsonl_bytes, read_source, summary, write_manifest, write_outputs

STS_ROOT = "SynWMD/data/downstream/STS"
SICK_TEST = "research_embeddings_fine_tuning/data/downstream/SICK/SICK_test_annotated.txt"
STSB_TEST = f"{STS_ROOT}/STSBenchmark/sts-test.csv"
SENTEVAL_SUBSETS: dict[str, tuple[str, ...]] = {
    "STS12": ("MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"),
    "STS13": ("FNWN", "headlines", "OnWN"),
    "STS14": ("deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"),
    "STS15": ("answers-forums", "answers-students", "belief", "headlines", "images"),
    "STS16": ("answer-answer", "headlines", "plagiarism", "postediting", "question-question"),
}
STS_TASK_NAMES = (*SENTEVAL_SUBSETS, "STSBenchmark", "SICK-R")

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
    for n, (line, score) in enumerate(zip(lines, scores), start=1):
        if score.strip() == "":
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            raise DataError(f"{inputs.rel_path} line {n}: expected 2 tab-separated sentences, found {len(fields)} fields.")
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


def parse_sick(src: SourceFile) -> list[Pair]:
    lines = src.text.splitlines()
    if not lines or not lines[0].startswith("pair_ID"):
        raise DataError(f"{src.rel_path}: expected a header line starting with 'pair_ID'.")
    pairs = []
    for n, line in enumerate(lines[1:], start=2):
        fields = line.strip().split("\t")
        if len(fields) < 4:
            raise DataError(f"{src.rel_path} line {n}: expected >= 4 tab-separated fields, found {len(fields)}.")
        pairs.append((_tokens(fields[1]), _tokens(fields[2]), _score(fields[3], f"{src.rel_path} line {n}")))
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
    if task == "STSBenchmark":
        src = read_source(source_dir, STSB_TEST)
        return parse_stsb(src), [src]
    src = read_source(source_dir, SICK_TEST)
    return parse_sick(src), [src]


def build_sts_senteval(*, source_dir: Path, out_dir: Path, seed: int = 42, size: int | None = None) -> dict[str, Any]:
    """Write the seven STS test sets; `size` keeps a seeded random subset of that many pairs per task (order kept)."""
    if size is not None and size <= 0:
        raise DataError(f"--size must be a positive number of pairs, got {size}.")
    read = {task: _read_task(Path(source_dir), task) for task in STS_TASK_NAMES}  # all sources first: fail before writing
    manifests = {}
    for task, (pairs, sources) in read.items():
        kept = pairs
        if size is not None and size < len(pairs):
            idx = np.sort(np.random.default_rng(seed).choice(len(pairs), size=size, replace=False))
            kept = [pairs[i] for i in idx.tolist()]
        records = [{"sentence1": s1, "sentence2": s2, "score": score} for s1, s2, score in kept]
        task_dir = Path(out_dir) / task
        outputs = write_outputs(task_dir, {"test.jsonl": (jsonl_bytes(records), len(records))})
        manifests[task] = write_manifest(task_dir, {
            "builder": "dataset_builders.sts_senteval:build_sts_senteval",
            "task": task,
            "proxy": False,
            "note": "SentEval-parsed test set (MetaEOL's evaluation data): scored pairs only, whitespace-tokenised.",
            "seed": seed,
            "parameters": {"size": size, "subsets": list(SENTEVAL_SUBSETS.get(task, ()))},
            "available_pairs": len(pairs),
            "sources": [s.record for s in sources],
            "outputs": outputs,
        })
    return {"summary": summary("sts-senteval", seed, manifests), "tasks": manifests}
