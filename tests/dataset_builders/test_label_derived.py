"""Tests for the label-derived InBedder proxy builders, run on the staged raw data."""

from __future__ import annotations

import csv
import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from bench.core.errors import DataError
from bench.dataset_builders.label_derived import (
    BANKING_TEST,
    GO_EMOTION,
    STS_INSTRUCTION,
    STSB_TEST,
    build_instruct_stsb_proxy,
    build_intent_emotion_proxy,
)

RAW = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "raw"
N = 120


@pytest.fixture(scope="module")
def raw() -> Path:
    if not all((RAW / rel).is_file() for rel in (BANKING_TEST, GO_EMOTION, STSB_TEST)):
        pytest.skip(f"raw data not available under {RAW}")
    return RAW


def read_triplets(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


def banking_labels(raw: Path) -> dict[str, str]:
    with (raw / BANKING_TEST).open(encoding="utf-8", newline="") as handle:
        return {row["text"].strip(): row["category"] for row in csv.DictReader(handle)}


def emotion_labels(raw: Path) -> dict[str, set[str]]:
    labels: dict[str, set[str]] = {}
    for line in (raw / GO_EMOTION).read_text(encoding="utf-8").splitlines():
        if line.strip():
            obj = json.loads(line)
            labels.setdefault(obj["input"].strip(), set()).add(obj["label"])
    return labels


def intent_emotion(raw: Path, out: Path, **kw) -> Path:
    build_intent_emotion_proxy(source_dir=raw, out_dir=out, **kw)
    return out / "IntentEmotion"


def instruct_stsb(raw: Path, out: Path, **kw) -> Path:
    build_instruct_stsb_proxy(source_dir=raw, out_dir=out, **kw)
    return out / "InstructSTSB"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_intent_emotion_is_byte_identical_on_rebuild(raw: Path, tmp_path: Path) -> None:
    first = intent_emotion(raw, tmp_path / "a", seed=7, size=N)
    second = intent_emotion(raw, tmp_path / "b", seed=7, size=N)
    assert snapshot(first) == snapshot(second)
    assert set(snapshot(first)) == {"intent.csv", "emotion.csv", "manifest.json"}
    assert not [p for p in first.iterdir() if p.name.endswith(".tmp")]


def test_stsb_is_byte_identical_on_rebuild(raw: Path, tmp_path: Path) -> None:
    first = instruct_stsb(raw, tmp_path / "a", seed=7, size=N)
    second = instruct_stsb(raw, tmp_path / "b", seed=7, size=N)
    assert snapshot(first) == snapshot(second)
    assert set(snapshot(first)) == {"test.jsonl", "manifest.json"}


def test_different_seed_changes_output(raw: Path, tmp_path: Path) -> None:
    a = intent_emotion(raw, tmp_path / "a", seed=1, size=N)
    b = intent_emotion(raw, tmp_path / "b", seed=2, size=N)
    assert (a / "intent.csv").read_bytes() != (b / "intent.csv").read_bytes()


def test_intent_triplets_respect_banking_categories(raw: Path, tmp_path: Path) -> None:
    task = intent_emotion(raw, tmp_path, size=300)
    header, rows = read_triplets(task / "intent.csv")
    assert header == ["anchor", "positive", "negative"]
    assert (task / "intent.csv").read_bytes().startswith(b"anchor,positive,negative\n")
    assert len(rows) == 300
    label_of = banking_labels(raw)
    for anchor, positive, negative in rows:
        assert anchor != positive
        assert label_of[anchor] == label_of[positive]
        assert label_of[negative] != label_of[anchor]
    counts = Counter(label_of[a] for a, _, _ in rows)
    assert len(counts) == 77 and max(counts.values()) - min(counts.values()) <= 1
    assert len({tuple(r) for r in rows}) == len(rows)


def test_emotion_triplets_respect_labels(raw: Path, tmp_path: Path) -> None:
    task = intent_emotion(raw, tmp_path, size=300)
    header, rows = read_triplets(task / "emotion.csv")
    assert header == ["anchor", "positive", "negative"]
    assert len(rows) == 300
    labels = emotion_labels(raw)
    support = Counter(next(iter(v)) for v in labels.values() if len(v) == 1)
    for anchor, positive, negative in rows:
        assert anchor != positive and anchor.strip() == anchor and anchor
        (a_lab,), (p_lab,), (n_lab,) = labels[anchor], labels[positive], labels[negative]
        assert a_lab == p_lab != n_lab
        assert support[a_lab] >= 20 and support[n_lab] >= 20


def test_stsb_proxy_rows_are_balanced_and_well_formed(raw: Path, tmp_path: Path) -> None:
    task = instruct_stsb(raw, tmp_path, size=300)
    lines = (task / "test.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 300
    assert all(list(r) == ["sentence1", "sentence2", "score", "instruction"] for r in records)
    assert Counter(r["score"] for r in records) == {0: 150, 1: 150}
    assert all(r["instruction"] == STS_INSTRUCTION for r in records)
    assert all(r["sentence1"] and r["sentence2"] for r in records)
    assert any(any(c.isupper() for c in r["sentence1"]) for r in records)  # original casing


def test_stsb_labels_match_gold_scores(raw: Path, tmp_path: Path) -> None:
    gold: dict[tuple[str, str], float] = {}
    with (raw / STSB_TEST).open(encoding="utf-8", newline="") as handle:
        for row in csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
            gold.setdefault((row[5].strip(), row[6].strip()), float(row[4]))
    task = instruct_stsb(raw, tmp_path, size=101)
    records = [json.loads(x) for x in (task / "test.jsonl").read_text(encoding="utf-8").splitlines()]
    assert Counter(r["score"] for r in records) == {1: 51, 0: 50}
    for r in records:
        score = gold[(r["sentence1"], r["sentence2"])]
        assert (score >= 4.0) if r["score"] == 1 else (score <= 1.0)


@pytest.mark.parametrize("builder", [intent_emotion, instruct_stsb])
def test_manifest_hashes_and_counts(raw: Path, tmp_path: Path, builder) -> None:
    task = builder(raw, tmp_path)
    manifest = json.loads((task / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["seed"] == 42 and manifest["parameters"]["size"] == 300
    assert manifest["proxy"] is True and "PROXY" in manifest["note"]
    assert manifest["seed"] == 42 and manifest["parameters"]
    for src in manifest["sources"]:
        data = (raw / src["path"]).read_bytes()
        assert src["sha256"] == hashlib.sha256(data).hexdigest()
        assert src["bytes"] == len(data)
    for name, rec in manifest["outputs"].items():
        data = (task / name).read_bytes()
        assert rec["sha256"] == hashlib.sha256(data).hexdigest()
        assert rec["rows"] == 300
    assert "time" not in json.dumps(manifest).lower()


@pytest.mark.parametrize(
    ("builder", "rel"),
    [(build_intent_emotion_proxy, BANKING_TEST), (build_instruct_stsb_proxy, STSB_TEST)],
)
def test_missing_source_raises(tmp_path: Path, builder, rel: str) -> None:
    with pytest.raises(DataError) as excinfo:  # a DataError that is also a FileNotFoundError
        builder(source_dir=tmp_path / "empty", out_dir=tmp_path / "out")
    assert isinstance(excinfo.value, FileNotFoundError)
    message = str(excinfo.value)
    assert str(tmp_path / "empty" / rel) in message
    assert "raw data root" in message
    assert not (tmp_path / "out").exists()


def test_unsatisfiable_sampling_raises(raw: Path, tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"only .* available"):
        instruct_stsb(raw, tmp_path, size=10_000)
    with pytest.raises(DataError, match="distinct pairs"):
        intent_emotion(raw, tmp_path, size=77 * 800)
