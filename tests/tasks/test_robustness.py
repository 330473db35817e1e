"""Instruction-robustness tasks: gap metrics, instruction lists, encode-once, local data errors, table."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import mteb
import numpy as np
import pytest

from bench.core.errors import DataError
from bench.dataset_builders.clustering_sets import build_few_rel
from bench.results.outcome import TaskOutcome
from bench.results.summary import run_table
from bench.run.runner import RunOptions, run
from bench.tasks import SUITES, TASKS, FewRelClustering, NYTTopicClustering
from bench.tasks.abstasks import AbsTaskInstructionRobustness
from bench.tasks.abstasks.base import PACKAGED_DATA_DIR
from bench.tasks.abstasks.instruction_robustness import INSTRUCTION_SETS
from bench.tasks.metrics import cluster_v_measure, robustness_gaps
from helpers import scores_of, write_csv, write_jsonl
from toy_encoders import HashEncoder, ScaledHashEncoder

INBEDDER_JSON = "InBedder/derived/task_descriptions_and_instructions.json"


# ----------------------------------------------------------------------------- metrics
def test_gaps_by_hand_both_definitions_differ():
    correct, implicit, incorrect = [0.50, 0.60, 0.90], [0.40, 0.45, 0.50], [0.20, 0.55, 0.30]
    gaps = robustness_gaps(correct, implicit, incorrect)
    # means: correct 2.0/3, implicit 0.45, incorrect 1.05/3 = 0.35
    assert gaps["delta_ci_mean"] == pytest.approx(2.0 / 3 - 0.35)
    assert gaps["delta_ii_mean"] == pytest.approx(0.10)
    # worst case (InBedder's code): min(correct) - max(incorrect), min(implicit) - max(incorrect)
    assert gaps["delta_ci_worst_case"] == pytest.approx(0.50 - 0.55)
    assert gaps["delta_ii_worst_case"] == pytest.approx(0.40 - 0.55)
    # the two readings disagree even in sign here
    assert gaps["delta_ci_mean"] > 0 > gaps["delta_ci_worst_case"]


def test_gaps_reject_empty_or_nan():
    with pytest.raises(ValueError, match="implicit"):
        robustness_gaps([0.1], [], [0.2])
    with pytest.raises(ValueError, match="incorrect"):
        robustness_gaps([0.1], [0.1], [float("nan")])


# ----------------------------------------------------------------------------- instructions
def test_suite_lists_the_six_tasks_of_inbedders_code():
    assert SUITES["robustness"] == (
        "NYTTopicClustering",
        "FeedbacksClustering",
        "RateMyProfClustering",
        "FewRelClustering",
        "FewEventClustering",
        "FewNerdClustering",
    )


def test_instruction_lists_are_inbedders_verbatim(raw_dir):
    source = json.loads((raw_dir / INBEDDER_JSON).read_text(encoding="utf-8"))
    for name in SUITES["robustness"]:
        cls = TASKS[name]
        recorded = cls.instruction_set(cls.__new__(cls))["robustness"]
        everything = []
        for which in INSTRUCTION_SETS:
            assert list(cls.instructions[which]) == source[name][f"{which}_instructions"], (name, which)
            assert recorded[which] == source[name][f"{which}_instructions"]
            assert len(cls.instructions[which]) == 10
            everything += cls.instructions[which]
        assert len(set(everything)) == 30, name  # sets disjoint, no repeats
        assert cls.metadata.dataset == {"path": source[name]["hf_hub_name"], "revision": source[name]["revision"]}
    assert NYTTopicClustering.hub_configs == (source["NYTTopicClustering"]["config_name"],)


def test_a_malformed_instruction_list_is_refused_at_class_definition():
    with pytest.raises(TypeError, match=r"\['implicit'\] has 9 instructions"):
        type(
            "Broken",
            (AbsTaskInstructionRobustness,),
            {
                "instructions": {
                    "correct": tuple(f"c{i}" for i in range(10)),
                    "implicit": tuple(f"i{i}" for i in range(9)),
                    "incorrect": tuple(f"w{i}" for i in range(10)),
                },
            },
        )
    with pytest.raises(TypeError, match="repeat"):
        type(
            "Broken",
            (AbsTaskInstructionRobustness,),
            {
                "instructions": {
                    "correct": tuple(f"c{i}" for i in range(10)),
                    "implicit": tuple(f"c{i}" for i in range(10)),
                    "incorrect": tuple(f"w{i}" for i in range(10)),
                },
            },
        )


# ----------------------------------------------------------------------------- scoring on real FewRel texts
@pytest.fixture(scope="module")
def fewrel_dir(raw_dir, tmp_path_factory) -> Path:
    """128 FewRel texts (2 per relation, 64 relations) in the local schema, from the real corpus."""
    out = tmp_path_factory.mktemp("fewrel")
    build_few_rel(source_dir=raw_dir, out_dir=out, seed=42, size=128)
    return out


def test_scores_per_instruction_set_means_and_gaps(fewrel_six_dir):
    task = FewRelClustering(data_dir=fewrel_six_dir)
    model = ScaledHashEncoder(use_cache=False)
    scores = scores_of(model, task)
    per_set = {w: [scores[f"v_measure_{w}_{i}"] for i in range(10)] for w in INSTRUCTION_SETS}
    assert len({round(v, 9) for values in per_set.values() for v in values}) > 1  # instructions matter here
    for which, values in per_set.items():
        assert scores[f"{which}_mean_v_measure"] == pytest.approx(np.mean(values))
        assert scores[f"{which}_min_v_measure"] == min(values) and scores[f"{which}_max_v_measure"] == max(values)
    gaps = robustness_gaps(*per_set.values())
    assert {k: scores[k] for k in gaps} == pytest.approx(gaps)
    assert scores["main_score"] == scores["delta_ci_mean"]
    assert scores["num_texts"] == 60 and scores["num_clusters"] == 6
    # every (text, instruction) pair is a distinct input, each encoded once
    assert model.stats.requested == model.stats.unique == model.stats.encoded == 30 * 60
    # one instruction per call, so the task never holds 30 x N vectors at once
    assert [len(group) for group in model.groups] == [60] * 30
    # each V-measure is the plain k-means V-measure of that instruction's embeddings
    texts, labels = _corpus(fewrel_six_dir / "FewRelClustering" / "test.jsonl")
    emb = model.encode_inputs([[FewRelClustering.instructions["incorrect"][3], t] for t in texts])
    assert scores["v_measure_incorrect_3"] == pytest.approx(cluster_v_measure(emb, labels, seed=42))


def test_result_is_a_valid_mteb_task_result(fewrel_six_dir):
    result = mteb.evaluate(
        HashEncoder(use_cache=False),
        FewRelClustering(data_dir=fewrel_six_dir),
        cache=None,
        show_progress_bar=False,
        co2_tracker=False,
    )
    task_result = result.task_results[0]
    reloaded = mteb.TaskResult.model_validate_json(task_result.model_dump_json())
    (scores,) = reloaded.scores["test"]
    assert reloaded.get_score() == scores["delta_ci_mean"]
    numbers = {k: v for k, v in scores.items() if k not in ("hf_subset", "languages", "mteb_version")}
    assert all(isinstance(v, int | float) for v in numbers.values())
    assert sum(k.startswith("v_measure_") for k in numbers) == 30


@pytest.mark.slow
def test_blind_model_encodes_the_corpus_once_and_scores_30_equal_v_measures(fewrel_dir, tmp_path):
    """--template none, no cache: 30 x 128 inputs requested, 128 encoded, one V-measure 30 times."""
    (outcome,) = run(
        RunOptions(
            tasks=["FewRelClustering"],
            data_dir=str(fewrel_dir),
            template="none",
            use_cache=False,
            output_dir=str(tmp_path / "out"),
            show_progress_bar=False,
        )
    )
    encode = outcome.record["encode"]
    assert encode["texts_requested"] == 30 * 128
    assert encode["unique_inputs"] == encode["texts_encoded"] == 128
    values = {outcome.scores[f"v_measure_{w}_{i}"] for w in INSTRUCTION_SETS for i in range(10)}
    assert len(values) == 1
    assert outcome.main_score == outcome.scores["delta_ci_worst_case"] == 0.0

    from bench.adapters.registry import load_model

    texts, labels = _corpus(fewrel_dir / "FewRelClustering" / "test.jsonl")
    model = load_model("all-MiniLM-L6-v2", template="none", use_cache=False)
    single = cluster_v_measure(model.encode_inputs([model.render(t, None, None) for t in texts]), labels, seed=42)
    assert values.pop() == pytest.approx(single, abs=1e-6)  # result files keep 6 decimals


@pytest.mark.slow
def test_nyt_topic_reuses_the_nyt_clustering_corpus(tmp_path):
    """NYTTopicClustering reads NYTClustering/topic.*; a blind model embeds those texts once in all."""
    data = tmp_path / "data"
    shutil.copytree(PACKAGED_DATA_DIR / "DemoNYTClustering", data / "NYTClustering")
    first, second = run(
        RunOptions(
            tasks=["NYTClustering", "NYTTopicClustering"],
            data_dir=str(data),
            template="none",
            output_dir=str(tmp_path / "out"),
            cache_dir=str(tmp_path / "cache"),
            show_progress_bar=False,
        )
    )
    assert first.record["encode"]["texts_encoded"] == 64  # topic and location share the 64 texts
    assert second.record["encode"]["texts_requested"] == 30 * 64
    assert second.record["encode"]["texts_encoded"] == 0
    assert second.record["encode"]["cache_hits"] == second.record["encode"]["unique_inputs"] == 64
    assert second.scores["num_clusters"] == 4
    assert second.scores["correct_mean_v_measure"] == pytest.approx(first.scores["v_measure_topic"], abs=1e-6)


# ----------------------------------------------------------------------------- local data errors
def test_missing_folder_names_the_shared_corpus(tmp_path):
    with pytest.raises(DataError, match=r"shared with NYTClustering.*topic\.jsonl"):
        NYTTopicClustering(data_dir=tmp_path)
    with pytest.raises(DataError, match=r"FewRelClustering.*text,cluster"):
        FewRelClustering(data_dir=tmp_path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"text": "a", "cluster": "x"}\n{"text": "b", "clust\n', r"line 2: malformed JSON"),
        ('{"text": "a", "cluster": "x"}\n{"text": "b"}\n', r"line 2: malformed row, missing key\(s\) cluster"),
        ('{"text": "a", "cluster": "x"}\n{"text": "  ", "cluster": "y"}\n', r"row 2, column 'text': empty text"),
        ('{"text": "a", "cluster": "x"}\n{"text": "b", "cluster": "x"}\n', r"1 gold cluster\(s\)"),
    ],
)
def test_malformed_local_rows_are_reported(tmp_path, content, message):
    folder = tmp_path / "FewRelClustering"
    folder.mkdir()
    (folder / "test.jsonl").write_text(content, encoding="utf-8")
    task = FewRelClustering(data_dir=tmp_path)
    with pytest.raises(DataError, match=message):
        task.load_data()


def test_csv_with_wrong_columns_is_reported(tmp_path):
    write_csv(tmp_path / "FewRelClustering" / "test.csv", ["sentence", "label"], [["a", "x"], ["b", "y"]])
    with pytest.raises(DataError, match="missing column"):
        FewRelClustering(data_dir=tmp_path).load_data()


def test_local_csv_and_jsonl_give_the_same_rows(tmp_path):
    rows = [{"text": f"t{i}", "cluster": i % 3} for i in range(9)]
    write_jsonl(tmp_path / "a" / "FewRelClustering" / "test.jsonl", rows)
    write_csv(
        tmp_path / "b" / "FewRelClustering" / "test.csv", ["text", "cluster"], [[r["text"], r["cluster"]] for r in rows]
    )
    loaded = []
    for sub in ("a", "b"):
        task = FewRelClustering(data_dir=tmp_path / sub)
        task.load_data()
        loaded.append(task.dataset["test"].to_list())
    assert loaded[0] == loaded[1] and loaded[0][4] == {"text": "t4", "cluster": "1"}


# ----------------------------------------------------------------------------- printed table
def test_run_table_shows_set_means_and_both_gaps():
    scores = {
        "main_score": 0.02,
        "delta_ci_mean": 0.02,
        "delta_ii_mean": -0.01,
        "delta_ci_worst_case": -0.05,
        "delta_ii_worst_case": -0.08,
        "correct_mean_v_measure": 0.5,
        "implicit_mean_v_measure": 0.47,
        "incorrect_mean_v_measure": 0.48,
        "v_measure_correct_0": 0.5,
        "num_texts": 10,
    }
    outcome = TaskOutcome(
        "FewRelClustering",
        "delta_ci_mean",
        0.02,
        scores,
        "computed",
        {"encode": {"texts_encoded": 10, "cache_hits": 0}, "evaluation_seconds": 1.0},
    )
    table = run_table([outcome])
    row = table.splitlines()[2]
    assert "| correct 50.00, implicit 47.00, incorrect 48.00, … |" in row  # cut to 60 characters, in full below
    assert (
        "  FewRelClustering: correct 50.00, implicit 47.00, incorrect 48.00, ci-gap(mean) 2.00, ii-gap(mean) "
        "-1.00, ci-gap(worst) -5.00, ii-gap(worst) -8.00"
    ) in table.replace("\n    ", " ")
    assert "v_measure_correct_0" not in table and "correct_0" not in table


def _corpus(path: Path) -> tuple[list[str], list[str]]:
    rows: list[dict[str, Any]] = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [r["text"] for r in rows], [str(r["cluster"]) for r in rows]
