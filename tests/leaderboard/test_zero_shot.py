"""bench/leaderboard/zero_shot.py: a row's zero-shot facts on a suite, computed as MTEB's leaderboard computes them."""

from __future__ import annotations

import pytest

from bench.leaderboard.zero_shot import zero_shot
from bench.results import task_catalog

GENERIC = task_catalog.suites()["generic"]
STS = task_catalog.suites()["generic-sts"]


def test_trained_on_none_of_the_tasks_is_zero_shot():
    assert zero_shot({"MSMARCO", "NQ"}, GENERIC) == {"zero_shot": "yes", "zero_shot_pct": 100, "trained_on": []}


def test_trained_on_some_tasks_is_not_zero_shot_with_mtebs_percentage():
    found = zero_shot({"STS12", "SciDocsRR", "STSBenchmark", "MSMARCO"}, GENERIC)
    assert found == {"zero_shot": "no", "zero_shot_pct": 72, "trained_on": ["STS12", "STSBenchmark", "SciDocsRR"]}


def test_unknown_training_data_is_unknown_and_no_tasks_is_zero_shot():
    assert zero_shot(None, GENERIC) == {"zero_shot": "unknown", "zero_shot_pct": None, "trained_on": []}
    assert zero_shot({"STS12"}, []) == {"zero_shot": "yes", "zero_shot_pct": None, "trained_on": []}


@pytest.mark.parametrize(
    "model",
    [
        "intfloat/multilingual-e5-small",  # zero-shot on both suites
        "lightonai/DenseOn",  # trained on SciDocsRR: not zero-shot on generic, zero-shot on generic-sts
        "Bytedance/Seed1.6-embedding-1215",  # trained on STS12, STSBenchmark and TwentyNewsgroupsClustering
        "openai/text-embedding-3-small",  # MTEB's registry names no training data: unknown ("⚠️ NA")
    ],
)
def test_the_same_as_mtebs_own_functions(model):
    """`ModelMeta.is_zero_shot_on` and `zero_shot_percentage`, on the training datasets the reader takes from
    MTEB's registry (bench/leaderboard/mteb_published.py `training_datasets`)."""
    import mteb

    from bench.leaderboard.mteb_published import training_datasets

    meta = mteb.get_model_meta(model)
    for tasks in (GENERIC, STS):
        found = zero_shot(training_datasets(model), tasks)
        expected = meta.is_zero_shot_on(list(tasks))
        assert found["zero_shot"] == {True: "yes", False: "no", None: "unknown"}[expected], (model, tasks)
        assert found["zero_shot_pct"] == meta.zero_shot_percentage(list(tasks)), (model, tasks)
    if model == "lightonai/DenseOn":
        assert zero_shot(training_datasets(model), GENERIC)["trained_on"] == ["SciDocsRR"]


@pytest.mark.parametrize(
    "model", ["intfloat/multilingual-e5-small", "lightonai/DenseOn", "openai/text-embedding-3-small", "acme/unknown"]
)
def test_the_catalogue_of_mtebs_registry_holds_the_same_training_datasets(model):
    """A submitted run's or a paper's row finds its model's training datasets in the cached catalogue of MTEB's
    registry (bench/results/model_catalog.py), so a build needs no MTEB import: the same as MTEB's own."""
    from bench.leaderboard.facts import registry_training
    from bench.leaderboard.mteb_published import training_datasets

    assert registry_training(model) == training_datasets(model)
    if model == "lightonai/DenseOn":
        assert "SciDocsRR" in (registry_training(model) or ())


def test_a_papers_row_gets_the_zero_shot_facts_of_its_spec_s_model():
    """GTR (335M) of INSTRUCTOR's Table 10 runs as sentence-transformers/gtr-t5-large: MTEB's registry names its
    training data (none of generic's tasks); a row without a spec is unknown."""
    from bench.leaderboard.external import reported_rows
    from bench.leaderboard.suite_tables import suite_tables

    tables = {t["name"]: t for t in suite_tables([], external=reported_rows())}
    rows = {r["model_id"]: r for r in tables["generic"]["rows"]}
    gtr = rows["reported|instructor-2023-table10|GTR (335M)"]
    assert (gtr["zero_shot"], gtr["zero_shot_pct"], gtr["trained_on"]) == ("yes", 100, [])
    assert any(r["zero_shot"] == "unknown" for r in rows.values())
