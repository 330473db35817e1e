"""Bootstrap intervals of the harness's own main scores (bench/core/bootstrap.py, issue 42 "Uncertainty").

Each interval is checked against an independent computation: a plain loop that seeds NumPy itself from
SHA-256 of the task name, draws the same indices and scores them with numpy / scipy / sklearn directly.
"""

from __future__ import annotations

import hashlib
import json
import shutil

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import v_measure_score
from test_robustness import ScaledHashEncoder

from bench.core.bootstrap import (
    average_interval,
    bounded_items,
    has_items,
    replicates,
    score_items,
    task_interval,
)
from bench.results.comparison import results_table
from bench.run.runner import RunOptions, run
from bench.tasks import FewRelClustering
from bench.tasks.gstransform import GSTAGNews, GSTAmzCF, GSTMultiHate
from helpers import scores_of, write_csv
from toy_encoders import HashEncoder

B = 1000


def _draws(name: str, sizes: list[int]):
    """The indices, drawn here without the module: default_rng(first 8 bytes of SHA-256 of the name)."""
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big"))
    return [[rng.integers(0, n, n) for n in sizes] for _ in range(B)]


def _percentiles(values) -> tuple[float, float]:
    return float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))


def _triplet_items(rng):
    return {
        "kind": "triplet",
        "groups": {
            "intent": {"success": rng.integers(0, 2, 60).tolist()},
            "emotion": {"success": (rng.random(45) < 0.8).astype(int).tolist()},
        },
    }


def _sts_items(rng):
    gold = rng.integers(0, 2, 80).astype(float)
    return {
        "kind": "sts",
        "groups": {"default": {"similarity": (gold + rng.normal(0, 1, 80)).tolist(), "gold": gold.tolist()}},
    }


def _clustering_items(rng):
    def aspect(n, k):
        labels = rng.integers(0, k, n)
        noisy = np.where(rng.random(n) < 0.7, labels, rng.integers(0, k, n))
        return {"labels": [f"c{x}" for x in labels], "assignments": noisy.tolist()}

    return {"kind": "clustering", "groups": {"topic": aspect(50, 4), "location": aspect(40, 3)}}


def test_triplet_interval_equals_a_plain_loop():
    items = _triplet_items(np.random.default_rng(0))
    a = np.array(items["groups"]["intent"]["success"], float)
    e = np.array(items["groups"]["emotion"]["success"], float)
    expected = []
    for ia, ie in _draws("DemoIntentEmotion", [60, 45]):
        r = [a[ia].mean(), e[ie].mean()]
        expected.append(0.0 if 0 in r else 2 / (1 / r[0] + 1 / r[1]))
    assert replicates("DemoIntentEmotion", items) == pytest.approx(expected, abs=1e-12)
    lo, hi = task_interval("DemoIntentEmotion", items)
    assert (lo, hi) == pytest.approx(_percentiles(expected), abs=1e-12)
    assert lo <= score_items(items) <= hi


def test_sts_interval_equals_a_plain_spearmanr_loop():
    items = _sts_items(np.random.default_rng(1))
    g = np.array(items["groups"]["default"]["gold"])
    s = np.array(items["groups"]["default"]["similarity"])
    expected = [spearmanr(g[i], s[i])[0] for (i,) in _draws("DemoInstructSTS", [80])]
    assert score_items(items) == pytest.approx(spearmanr(g, s)[0], abs=1e-12)
    assert task_interval("DemoInstructSTS", items) == pytest.approx(_percentiles(expected), abs=1e-12)


def test_clustering_interval_rescores_the_stored_clusters_with_sklearn():
    items = _clustering_items(np.random.default_rng(2))
    t, loc = items["groups"]["topic"], items["groups"]["location"]
    tl, ta = np.array(t["labels"]), np.array(t["assignments"])
    ll, la = np.array(loc["labels"]), np.array(loc["assignments"])
    expected = []
    for it, il in _draws("DemoNYTClustering", [50, 40]):
        v = [v_measure_score(tl[it], ta[it]), v_measure_score(ll[il], la[il])]
        expected.append(0.0 if 0 in v else 2 / (1 / v[0] + 1 / v[1]))
    assert task_interval("DemoNYTClustering", items) == pytest.approx(_percentiles(expected), abs=1e-12)


def test_robustness_interval_resamples_texts_across_all_its_clusterings():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 3, 30)
    runs = {
        s: [np.where(rng.random(30) < p, labels, rng.integers(0, 3, 30)).tolist() for _ in range(2)]
        for s, p in (("correct", 0.8), ("implicit", 0.6), ("incorrect", 0.3))
    }
    items = {"kind": "robustness", "labels": [f"r{x}" for x in labels], "assignments": runs}
    expected = []
    for (i,) in _draws("FewRelClustering", [30]):
        m = {
            s: np.mean([v_measure_score(labels[i], np.array(a)[i]) for a in runs[s]]) for s in ("correct", "incorrect")
        }
        expected.append(m["correct"] - m["incorrect"])
    assert task_interval("FewRelClustering", items) == pytest.approx(_percentiles(expected), abs=1e-12)


def test_a_suite_average_interval_averages_replicates_of_the_same_index():
    rng = np.random.default_rng(4)
    items = {"DemoIntentEmotion": _triplet_items(rng), "DemoInstructSTS": _sts_items(rng)}
    both = np.mean([replicates(name, it) for name, it in items.items()], axis=0)
    assert average_interval(items) == pytest.approx(_percentiles(both), abs=1e-12)
    # each task drawn with its own seed: swapping names changes the draws, not only the order
    assert average_interval(dict(reversed(list(items.items())))) == pytest.approx(_percentiles(both), abs=1e-12)


def test_too_many_items_are_left_out_with_a_note():
    items = {"kind": "triplet", "groups": {"a": {"success": [1] * 11}}}
    assert bounded_items(items, limit=11) == items
    kept = bounded_items(items, limit=10)
    assert not has_items(kept) and kept["omitted"].startswith("11 numbers")
    by_size = bounded_items(items, max_bytes=100)  # as the record writes it, indented
    assert not has_items(by_size) and "bytes of JSON" in by_size["omitted"]


def test_robustness_task_keeps_clusters_that_rescore_to_its_gap(fewrel_six_dir):
    task = FewRelClustering(data_dir=fewrel_six_dir)
    scores = scores_of(ScaledHashEncoder(use_cache=False), task)
    assert task.run_items["kind"] == "robustness"
    assert score_items(task.run_items) == pytest.approx(scores["delta_ci_mean"], abs=1e-12)


def _run_demo(tmp_path, monkeypatch):
    monkeypatch.setattr("bench.run.runner.build_model", lambda _options: HashEncoder(use_cache=False))
    out = tmp_path / "out"
    outcomes = run(RunOptions(suite="demo", output_dir=str(out), show_progress_bar=False))
    return out, outcomes


def test_a_run_keeps_items_and_intervals_contain_the_point_score(tmp_path, monkeypatch):
    out, outcomes = _run_demo(tmp_path, monkeypatch)
    for o in outcomes:
        items = o.record["items"]
        assert has_items(items), o.task
        assert score_items(items) == pytest.approx(o.main_score, abs=1e-6), o.task  # result files: 6 decimals
        assert o.main_score_name in o.scores  # MTEB's scores carry no items
        assert not any("items" in k for k in o.scores)
        lo, hi = task_interval(o.task, items)
        assert lo <= o.main_score <= hi
    table = results_table([out], intervals=True)
    header = next(line for line in table.splitlines() if "95% CI" in line)
    row = next(line for line in table.splitlines() if "toy/hash" in line)
    ci = [c.strip() for c in row.split("|")][[c.strip() for c in header.split("|")].index("95% CI")]
    lo_s, hi_s = ci.split("–")
    average = np.mean([o.main_score for o in outcomes])
    assert float(lo_s) <= round(100 * average, 2) <= float(hi_s)
    assert "percentile bootstrap interval (B = 1,000)" in table


def test_default_results_output_is_unchanged_by_items(tmp_path, monkeypatch):
    out, _ = _run_demo(tmp_path, monkeypatch)
    bare = tmp_path / "bare"
    shutil.copytree(out, bare)
    for path in bare.rglob("run_records/*.json"):
        record = json.loads(path.read_text())
        del record["items"]
        path.write_text(json.dumps(record))
    for fmt in ("markdown", "csv", "latex"):
        assert results_table([out], fmt=fmt) == results_table([bare], fmt=fmt)
        assert "95% CI" not in results_table([out], fmt=fmt)
    row = next(line for line in results_table([bare], intervals=True).splitlines() if "toy/hash" in line)
    assert row.rstrip(" |").endswith("–")  # records without items: no interval


@pytest.mark.parametrize("task_class", [GSTMultiHate, GSTAGNews, GSTAmzCF])
def test_label_sampled_and_clustering_tasks_keep_items_that_rescore_to_their_score(tmp_path, task_class):
    from test_gstransform_tasks import TOPICS

    rows = [(text, topic) for topic, texts in TOPICS.items() for text in texts]
    write_csv(tmp_path / "GSTAGNews" / "topic.csv", ["text", "label"], rows)
    write_csv(tmp_path / "GSTMultiHate" / "hateful.csv", ["text", "label"], rows)
    lang = [(t, "en" if i % 2 else "xx") for i, (t, _) in enumerate(rows)]
    write_csv(tmp_path / "GSTMultiHate" / "language.csv", ["text", "label"], lang)
    write_csv(tmp_path / "GSTAmzCF" / "counterfactual.csv", ["text", "cluster"], rows)
    task = task_class(data_dir=tmp_path)
    scores = scores_of(HashEncoder(use_cache=False), task)
    assert score_items(task.run_items) == pytest.approx(scores["main_score"], abs=1e-12)
