"""Robustness corpus builders (bench/dataset_builders/clustering_sets.py) on the staged raw data."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from bench.core.errors import DataError
from bench.dataset_builders.clustering_sets import CLUSTER_LLM, GOALEX_TAXONOMY, NYT_DIR, build_nyt, parse_cluster_llm
from bench.dataset_builders.registry import get_builder
from bench.tasks import FewRelClustering, NYTClustering, NYTTopicClustering, RateMyProfClustering

ROBUSTNESS_BUILDERS = {
    "few-rel-clustering": ("FewRelClustering", 4480, 64),
    "few-nerd-clustering": ("FewNerdClustering", 3789, 58),
    "few-event-clustering": ("FewEventClustering", 4742, 34),
    "ratemyprof-clustering-standin": ("RateMyProfClustering", 48, 4),
    "feedbacks-clustering-standin": ("FeedbacksClustering", 66, 3),
}


def _build(name: str, raw: Path, out: Path, **kw) -> dict:
    return get_builder(name).function()(source_dir=raw, out_dir=out, seed=kw.get("seed", 42), size=kw.get("size"))


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("name", sorted(ROBUSTNESS_BUILDERS))
def test_builder_is_byte_identical_on_rebuild_and_records_its_sources(name, raw_dir, tmp_path):
    task, rows, clusters = ROBUSTNESS_BUILDERS[name]
    manifest = _build(name, raw_dir, tmp_path / "a")
    _build(name, raw_dir, tmp_path / "b")
    first = _snapshot(tmp_path / "a" / task)
    assert first == _snapshot(tmp_path / "b" / task)
    assert set(first) == {"test.jsonl", "manifest.json"}
    written = json.loads(first["manifest.json"])
    assert "summary" not in written and manifest["summary"]["task"] == task
    for source in written["sources"]:
        assert source["sha256"] == hashlib.sha256((raw_dir / source["path"]).read_bytes()).hexdigest()
    out = written["outputs"]["test.jsonl"]
    assert out["sha256"] == hashlib.sha256(first["test.jsonl"]).hexdigest()
    data = _rows(tmp_path / "a" / task / "test.jsonl")
    assert (out["rows"], out["clusters"]) == (len(data), len({r["cluster"] for r in data})) == (rows, clusters)
    assert written["seed"] == 42 and written["proxy"] is name.endswith("standin")
    assert all(list(r) == ["text", "cluster"] for r in data)


def test_few_rel_copies_clusterllm_verbatim_and_loads_as_the_task(raw_dir, tmp_path):
    _build("few-rel-clustering", raw_dir, tmp_path)
    source = [json.loads(line) for line in (raw_dir / CLUSTER_LLM["FewRelClustering"]).read_text().splitlines()]
    assert _rows(tmp_path / "FewRelClustering" / "test.jsonl") == [
        {"text": s["input"], "cluster": s["label"]} for s in source
    ]
    task = FewRelClustering(data_dir=tmp_path)
    task.load_data()
    assert len(task.dataset["test"]) == 4480


def test_size_samples_every_cluster_and_seed_matters(raw_dir, tmp_path):
    _build("few-rel-clustering", raw_dir, tmp_path / "a", size=128, seed=1)
    _build("few-rel-clustering", raw_dir, tmp_path / "b", size=128, seed=2)
    a = _rows(tmp_path / "a" / "FewRelClustering" / "test.jsonl")
    b = _rows(tmp_path / "b" / "FewRelClustering" / "test.jsonl")
    assert len(a) == len(b) == 128 and len({r["cluster"] for r in a}) == 64
    assert a != b


def test_standins_are_balanced_real_texts_with_goalex_labels(raw_dir, tmp_path):
    _build("ratemyprof-clustering-standin", raw_dir, tmp_path)
    rows = _rows(tmp_path / "RateMyProfClustering" / "test.jsonl")
    assert set(Counter(r["cluster"] for r in rows).values()) == {12}
    taxonomy = json.loads((raw_dir / GOALEX_TAXONOMY["RateMyProfClustering"]).read_text())
    members = {d: set(n["texts"]) for d, n in taxonomy["description2taxonomy"].items()}
    personality = next(texts for d, texts in members.items() if d.startswith("talks about professor's personality"))
    for r in rows:
        assert r["text"] in taxonomy["texts"]
        assert (r["cluster"] == "personal qualities") == (r["text"] in personality)
    task = RateMyProfClustering(data_dir=tmp_path)
    task.load_data()
    assert len(task.dataset["test"]) == 48


def test_nyt_builder_refuses_to_run_without_texts(raw_dir, tmp_path):
    with pytest.raises(
        DataError, match=r"label ids only.*processed_data/nyt/topic/data\.json.*github\.com/ZihanWangKi"
    ):
        build_nyt(source_dir=raw_dir, out_dir=tmp_path, seed=42, size=None)
    assert not (tmp_path / "NYTClustering").exists()


def test_nyt_builder_with_user_supplied_texts(raw_dir, tmp_path):
    source = tmp_path / "raw"
    for aspect in ("topic", "location"):
        target = source / NYT_DIR / aspect
        target.mkdir(parents=True)
        shutil.copy(raw_dir / NYT_DIR / aspect / "labels.json", target / "labels.json")
    # Placeholder articles stand for the user's download; the builder only pairs them with the labels.
    (source / NYT_DIR / "topic" / "data.json").write_text(json.dumps({"texts": [f"article {i}" for i in range(2160)]}))
    manifest = build_nyt(source_dir=source, out_dir=tmp_path / "out", seed=42, size=None)
    assert manifest["skipped_aspects"] == ["location"]
    rows = _rows(tmp_path / "out" / "NYTClustering" / "topic.jsonl")
    assert len(rows) == 2160 and Counter(r["cluster"] for r in rows)["health"] == 240
    labels = json.loads((raw_dir / NYT_DIR / "topic" / "labels.json").read_text())["labels"]
    assert rows[0] == {
        "text": "article 0",
        "cluster": ["health", "estate", "politics", "science", "sports", "business", "arts", "technology", "education"][
            labels[0]
        ],
    }
    topic = NYTTopicClustering(data_dir=tmp_path / "out")  # the robustness task reads NYTClustering/topic
    topic.load_data()
    assert len(topic.dataset["test"]) == 2160
    with pytest.raises(DataError, match="location"):  # the awareness task needs both aspects
        NYTClustering(data_dir=tmp_path / "out")

    (source / NYT_DIR / "topic" / "data.json").write_text(json.dumps({"texts": ["only one"]}))
    with pytest.raises(DataError, match=r"1 texts but labels.json 2160 labels"):
        build_nyt(source_dir=source, out_dir=tmp_path / "out2", seed=42, size=None)


def test_malformed_clusterllm_line_is_named():
    good = json.dumps({"task": "t", "input": "a sentence", "label": "x"})
    with pytest.raises(DataError, match=r"small.jsonl line 2: malformed JSON"):
        parse_cluster_llm(good + "\n{oops\n", "small.jsonl")
    with pytest.raises(DataError, match="line 1: expected an object"):
        parse_cluster_llm(json.dumps({"input": "a"}) + "\n", "small.jsonl")


def test_missing_source_names_the_file_and_the_fix(tmp_path):
    with pytest.raises(DataError, match=r"few_rel_nat/small\.jsonl.*--source-dir"):
        _build("few-rel-clustering", tmp_path, tmp_path / "out")
