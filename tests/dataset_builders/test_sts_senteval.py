"""Builders for the generic STS set (sts_senteval.py) and the GSTransform datasets (gstransform_sources.py)."""

from __future__ import annotations

import csv
import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from bench.core.errors import DataError
from bench.dataset_builders.common import MissingSourceError
from bench.dataset_builders.gstransform_sources import AMZCF_TEST, build_gstransform
from bench.dataset_builders.registry import LABEL_BUILDERS
from bench.dataset_builders.sts_senteval import STS_TASK_NAMES, build_sts_senteval

# MTEB's pairs under MTEB's names (SICK-R: all 9,927 pairs, as mteb/sickr-sts); SentEval's test-only SICK-R and
# lower-cased STS-B under their own names (MetaEOL's evaluation data).
STS_ROWS = {
    "STS12": 3108,
    "STS13": 1500,
    "STS14": 3750,
    "STS15": 3000,
    "STS16": 1186,
    "STSBenchmark": 1379,
    "SICK-R": 9927,
    "STSBenchmark-SentEval": 1379,
    "SICK-R-SentEval": 4927,
}


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_builders_are_registered() -> None:
    for name in (
        "sts-senteval",
        "gstransform",
        "gst-amzcf",
        "gst-mnews",
        "gst-multihate",
        "gst-toxic",
        "gst-agnews",
        "gst-intemo",
        "intent-emotion-proxy",
        "instruct-stsb-proxy",
    ):
        assert callable(LABEL_BUILDERS[name].function())


def test_sts_sets_are_complete_byte_identical_and_hashed(raw_dir: Path, tmp_path: Path) -> None:
    result = build_sts_senteval(source_dir=raw_dir, out_dir=tmp_path / "a")
    build_sts_senteval(source_dir=raw_dir, out_dir=tmp_path / "b")
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    assert {t: m["test.jsonl"] for t, m in result["summary"]["tasks"].items()} == STS_ROWS
    for task in STS_TASK_NAMES:
        manifest = json.loads((tmp_path / "a" / task / "manifest.json").read_text(encoding="utf-8"))
        for src in manifest["sources"]:
            assert src["sha256"] == hashlib.sha256((raw_dir / src["path"]).read_bytes()).hexdigest()
        data = (tmp_path / "a" / task / "test.jsonl").read_bytes()
        assert manifest["outputs"]["test.jsonl"]["sha256"] == hashlib.sha256(data).hexdigest()
        rows = [json.loads(x) for x in data.decode().splitlines()]
        assert all(list(r) == ["sentence1", "sentence2", "score"] and 0 <= r["score"] <= 5 for r in rows)
        assert all(r["sentence1"] == " ".join(r["sentence1"].split()) for r in rows)  # SentEval tokenisation
    first = json.loads((tmp_path / "a" / "STS12" / "test.jsonl").read_text().splitlines()[0])
    folder = raw_dir / "SynWMD/data/downstream/STS/STS12-en-test"
    s1, s2 = (folder / "STS.input.MSRpar.txt").read_text(encoding="utf-8").splitlines()[0].split("\t")
    gold = float((folder / "STS.gs.MSRpar.txt").read_text().splitlines()[0])
    assert first == {"sentence1": " ".join(s1.split()), "sentence2": " ".join(s2.split()), "score": gold}


def test_sts_size_keeps_a_seeded_subset(raw_dir: Path, tmp_path: Path) -> None:
    build_sts_senteval(source_dir=raw_dir, out_dir=tmp_path / "a", size=50, seed=1)
    build_sts_senteval(source_dir=raw_dir, out_dir=tmp_path / "b", size=50, seed=2)
    a = (tmp_path / "a" / "STS13" / "test.jsonl").read_text().splitlines()
    assert len(a) == 50 and a != (tmp_path / "b" / "STS13" / "test.jsonl").read_text().splitlines()


def test_gstransform_sources_rebuild_identically_with_their_labels(raw_dir: Path, tmp_path: Path) -> None:
    only = ("GSTAmzCF", "GSTMNews", "GSTToxic", "GSTAGNews", "GSTIntEmo")
    build_gstransform(source_dir=raw_dir, out_dir=tmp_path / "a", only=only)
    result = build_gstransform(source_dir=raw_dir, out_dir=tmp_path / "b", only=only)
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    assert result["summary"]["tasks"]["GSTAmzCF"] == {"counterfactual.csv": 670}
    amz = Counter(r["cluster"] for r in _csv(tmp_path / "a" / "GSTAmzCF" / "counterfactual.csv"))
    assert amz == {"not-counterfactual": 539, "counterfactual": 131}  # EN test: 539 / 131 (MANIFEST)
    ag = Counter(r["label"] for r in _csv(tmp_path / "a" / "GSTAGNews" / "topic.csv"))
    assert ag == {"World": 1900, "Sports": 1900, "Business": 1900, "Sci/Tech": 1900}
    toxic = Counter(r["label"] for r in _csv(tmp_path / "a" / "GSTToxic" / "toxic.csv"))
    assert toxic == {"not toxic": 88, "toxic": 13}
    assert json.loads((tmp_path / "a" / "GSTToxic" / "manifest.json").read_text())["proxy"] is True
    assert set(Counter(r["cluster"] for r in _csv(tmp_path / "a" / "GSTMNews" / "topic.csv"))) == {
        "business",
        "entertainment",
        "health",
        "politics",
        "sports",
        "technology",
    }
    assert (tmp_path / "a" / "GSTIntEmo" / "intent.csv").read_bytes().startswith(b"anchor,positive,negative\n")


def test_multihate_has_both_aspects_over_the_same_texts(raw_dir: Path, tmp_path: Path) -> None:
    build_gstransform(source_dir=raw_dir, out_dir=tmp_path, only=("GSTMultiHate",), size=1100)
    hateful = _csv(tmp_path / "GSTMultiHate" / "hateful.csv")
    language = _csv(tmp_path / "GSTMultiHate" / "language.csv")
    assert len(hateful) == len(language) == 1100
    assert {r["label"] for r in hateful} == {"hateful", "non-hateful"}
    assert len({r["label"] for r in language}) == 11  # 10 MHC languages + English HateCheck


def test_missing_source_names_the_file_and_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(MissingSourceError, match=f"{tmp_path / 'empty' / AMZCF_TEST}.*raw data root"):
        build_gstransform(source_dir=tmp_path / "empty", out_dir=tmp_path / "out", only=("GSTAmzCF",))
    with pytest.raises(DataError, match=r"SICK_test_annotated|STS.input"):
        build_sts_senteval(source_dir=tmp_path / "empty", out_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_malformed_sources_are_data_errors_with_a_location(tmp_path: Path) -> None:
    bad = tmp_path / "raw" / AMZCF_TEST
    bad.parent.mkdir(parents=True)
    bad.write_text("sentence\tis_counterfactual\nfine review\t0\nbroken review\tmaybe\n", encoding="utf-8")
    with pytest.raises(DataError, match="is_counterfactual must be 0 or 1, found 'maybe'"):
        build_gstransform(source_dir=tmp_path / "raw", out_dir=tmp_path / "out", only=("GSTAmzCF",))
    bad.write_text("text\tlabel\nx\t0\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"missing column.*sentence"):
        build_gstransform(source_dir=tmp_path / "raw", out_dir=tmp_path / "out", only=("GSTAmzCF",))
    sts = tmp_path / "raw" / "SynWMD/data/downstream/STS/STS12-en-test"
    sts.mkdir(parents=True)
    (sts / "STS.input.MSRpar.txt").write_text("one sentence only\n", encoding="utf-8")
    (sts / "STS.gs.MSRpar.txt").write_text("3.0\n", encoding="utf-8")
    from bench.dataset_builders.common import read_source
    from bench.dataset_builders.sts_senteval import parse_senteval_subset

    base = "SynWMD/data/downstream/STS/STS12-en-test"
    with pytest.raises(DataError, match="line 1: expected 2 tab-separated sentences"):
        parse_senteval_subset(
            read_source(tmp_path / "raw", f"{base}/STS.input.MSRpar.txt"),
            read_source(tmp_path / "raw", f"{base}/STS.gs.MSRpar.txt"),
        )
