"""Metrics as data (bench/core/metric_specs.py): one declaration per metric, read by every range check,
description, detail and ×100 format, and declared where the metric is computed (a task type's `metrics`)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bench.core.metric_specs import ANY, GENERAL, Metric, MetricIndex, core_metrics, resolve
from bench.leaderboard.reference import metric_range
from bench.results import suites
from bench.results.summary import detail_values

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_a_family_matches_its_words_where_it_declares_them():
    last = Metric("success_rate", place="last")
    assert last.rest("intent_success_rate") == "intent"
    assert last.rest("success_rate") == ""
    assert last.rest("success_rate_intent") is None
    first = Metric("v_measure", place="first")
    assert first.rest("v_measure_incorrect_9") == "incorrect_9"
    assert first.rest("hmean_v_measure") is None
    anywhere = Metric("map", place="anywhere")
    assert anywhere.rest("nAUC_map_max") == "nAUC_max"
    assert not anywhere.matches("mapping")  # words, not substrings
    assert not Metric("cosine_spearman").matches("manhattan_cosine_spearman")


def test_an_exact_declaration_wins_then_a_count_over_a_score():
    exact = Metric("num_correct_success_rate", range=(0.0, 0.5))
    assert resolve("num_correct_success_rate", (*GENERAL, Metric("success_rate", place="last"), exact)) is exact
    assert resolve("intent_num_triplets", (Metric("triplets", place="last"), *GENERAL)).kind == "count"


def test_the_catalogue_round_trips_a_declaration_with_an_infinite_bound():
    for metric in (*core_metrics(), Metric("x", range=ANY, detail=True, label="x!")):
        assert Metric.from_json(metric.to_json()) == metric
        assert all(b is None or math.isfinite(b) for b in metric.to_json()["range"])


def test_a_correct_instruction_v_measure_is_a_v_measure_not_a_correlation():
    """The regex table read `v_measure_correct_3` as a correlation ((^|_)corr), so it accepted -0.5."""
    assert metric_range("v_measure_correct_3") == (0.0, 1.0)
    assert metric_range("correct_mean_v_measure") == (0.0, 1.0)


def test_a_metric_declared_on_a_task_class_is_what_every_reader_sees(monkeypatch):
    """A task type's `metrics` reach the range check, the description and the details, with no other edit."""
    from bench.tasks import TASKS
    from bench.tasks.demo import DemoIntentEmotion

    class MarginTriplets(DemoIntentEmotion):  # no `metadata` in the body: not registered with MTEB
        metrics = (
            *DemoIntentEmotion.metrics,
            Metric("mean_margin", "mean of d(a, n) - d(a, p) over the triplets", range=(-2.0, 2.0)),
            Metric("margin", "one criterion's mean margin", range=(-2.0, 2.0), place="last", detail=True),
        )

    MarginTriplets.metadata = DemoIntentEmotion.metadata.model_copy(
        update={"name": "MarginTriplets", "main_score": "mean_margin"}
    )
    monkeypatch.setitem(TASKS, "MarginTriplets", MarginTriplets)

    assert metric_range("mean_margin") == (-2.0, 2.0)
    assert metric_range("intent_margin") == (-2.0, 2.0)
    assert suites.metric_note("mean_margin") == "mean of d(a, n) - d(a, p) over the triplets"
    scores = {"mean_margin": 0.3, "intent_margin": 0.2, "intent_success_rate": 0.9, "intent_num_triplets": 4}
    assert detail_values("MarginTriplets", scores, "mean_margin") == [
        ("intent_margin", "intent", 0.2),
        ("intent_success_rate", "intent", 0.9),
    ]


@pytest.mark.registry
def test_every_task_declares_its_main_score_and_sound_metrics():
    """Every registered task's main score is a declared metric (a guide's new task included), and each
    declaration says how it is computed and has a range that holds something."""
    from bench.results.task_catalog import metrics
    from bench.tasks import TASKS

    for name, cls in TASKS.items():
        declared = metrics(name)
        assert declared is not None
        assert resolve(cls.metadata.main_score, declared) is not None, (name, cls.metadata.main_score)
        for metric in declared:
            assert metric.description, (name, metric)
            assert metric.range[0] < metric.range[1], (name, metric)


def test_no_module_reads_what_a_score_is_from_its_name():
    """The regex range table and the summary's name patterns are gone: the declarations are the one place."""
    for path in BENCH.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "METRIC_RANGES" not in text, path
        assert 'endswith("success_rate")' not in text and 'startswith("v_measure_")' not in text, path
        assert 'startswith("delta_")' not in text, path


def test_the_index_resolves_as_resolve_does_once_per_key():
    metrics = (*GENERAL, Metric("success_rate", place="last"))
    index = MetricIndex(metrics)
    for key in ("intent_success_rate", "intent_num_triplets", "delta_ci_mean", "unknown"):
        assert index.resolve(key) is resolve(key, metrics)
    assert set(index._found) == {"intent_success_rate", "intent_num_triplets", "delta_ci_mean", "unknown"}
