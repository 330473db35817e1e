"""Instruction sensitivity: the statistics against hand-computed values, and `bench results` on a results
folder written by hand in the layout `bench run --instruction-variants` writes (bench/results/sensitivity.py)."""

from __future__ import annotations

import json
import math
import random
import shutil
from pathlib import Path

import pytest
from scipy.stats import kendalltau

from bench.cli.main import main
from bench.core.variants import Variant, VariantFile, variant_label
from bench.results.comparison import results_table
from bench.results.sensitivity import (
    VariantScore,
    base_experiment,
    collect,
    rank_stability,
    stability_by_task,
    summarize,
)
from bench.results.store import find_results
from bench.results.tables import format_score

TASK = "DemoInstructSTS"
MAIN = "cosine_spearman"
# Two models x three variants (named sets), and each model's run under the task's own instruction.
SCORES = {
    "org/a": {("correct", 0): 0.50, ("correct", 1): 0.60, ("incorrect", 0): 0.40},
    "org/b": {("correct", 0): 0.40, ("correct", 1): 0.50, ("incorrect", 0): 0.45},
}
DEFAULTS = {"org/a": 0.55, "org/b": 0.48}
INSTRUCTIONS = {
    ("correct", 0): "Represent the sentence for similarity: ",
    ("correct", 1): "Represent the meaning of the sentence: ",
    ("incorrect", 0): "Represent the sentence's length: ",
}
SOURCE = VariantFile(name="hand-made", sha256="0" * 64, variants={})


def _variant(task: str, set_name: str | None, index: int, instruction: str) -> Variant:
    return Variant(task, instruction, set_name, index, variant_label(set_name, index, instruction))


def write_result(
    root: Path,
    model: str,
    task: str,
    score: float,
    *,
    variant: Variant | None = None,
    experiment: dict | None = None,
    revision: str = "rev1",
    blind: bool = False,
) -> Path:
    """A TaskResult and its run record where `bench run` files them (a variant under experiments/<name>/)."""
    experiment = dict(experiment or {})
    if variant is not None:
        experiment["instruction"] = variant.label
    folder = root / model.replace("/", "__") / revision
    if experiment:
        folder = folder / "experiments" / "__".join(f"{k}={v}" for k, v in sorted(experiment.items()))
    result = {
        "task_name": task,
        "dataset_revision": "packaged",
        "mteb_version": "2.26.24",
        "scores": {"test": [{"main_score": score, MAIN: score, "hf_subset": "default", "languages": ["eng-Latn"]}]},
        "evaluation_time": 0.1,
    }
    record = {
        "record_version": 1,
        "task": {"name": task, "main_score": MAIN},
        "model": {"name": model, "revision": revision, "family": "toy", "experiment": experiment},
    }
    if variant is not None:
        record["variant"] = variant.record(SOURCE)
    if blind:  # measured by the run: the setting's input ignores the instruction
        record["model"]["instruction_use"] = {"follows_instructions": False, "method": "render"}
    (folder / "run_records").mkdir(parents=True, exist_ok=True)
    (folder / f"{task}.json").write_text(json.dumps(result), encoding="utf-8")
    (folder / "run_records" / f"{task}.json").write_text(json.dumps(record), encoding="utf-8")
    return folder / f"{task}.json"


@pytest.fixture
def variant_results(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    for model, scores in SCORES.items():
        write_result(root, model, TASK, DEFAULTS[model])
        for (set_name, index), score in scores.items():
            write_result(
                root, model, TASK, score, variant=_variant(TASK, set_name, index, INSTRUCTIONS[set_name, index])
            )
    return root


# ----------------------------------------------------------------------------------- summarize
def test_summarize_against_hand_computed_values():
    scores = [
        VariantScore(f"{s}{i}", s, v)
        for s, vs in (("correct", (0.6, 0.7)), ("implicit", (0.5,)), ("incorrect", (0.2, 0.3, 0.4)))
        for i, v in enumerate(vs)
    ]
    s = summarize(scores, ("correct", "implicit", "incorrect"))
    assert s["n"] == 6 and s["mean"] == pytest.approx(0.45)
    # deviations .15 .25 .05 -.25 -.15 -.05: squares sum to .175; sample variance .175 / 5
    assert s["std"] == pytest.approx(math.sqrt(0.035)) and s["min"] == 0.2 and s["max"] == 0.7
    assert s["set_means"] == pytest.approx({"correct": 0.65, "implicit": 0.5, "incorrect": 0.3})
    assert list(s["set_differences"]) == ["correct-implicit", "correct-incorrect", "implicit-incorrect"]
    assert s["set_differences"] == pytest.approx(
        {"correct-implicit": 0.15, "correct-incorrect": 0.35, "implicit-incorrect": 0.2}
    )


def test_summarize_a_plain_list_and_a_single_variant():
    s = summarize([VariantScore("v01", None, 0.2), VariantScore("v02", None, 0.4)])
    assert s["mean"] == pytest.approx(0.3) and s["std"] == pytest.approx(math.sqrt(0.02)) and "set_differences" not in s
    one = summarize([VariantScore("v01", None, 0.2)])
    assert one["std"] is None and one["min"] == one["max"] == 0.2
    with pytest.raises(ValueError, match="at least one variant score"):
        summarize([])


def test_set_differences_follow_the_given_set_order():
    scores = [VariantScore("i", "incorrect", 0.1), VariantScore("c", "correct", 0.5)]
    assert list(summarize(scores, ("correct", "incorrect"))["set_differences"]) == ["correct-incorrect"]
    assert summarize(scores, ("correct", "incorrect"))["set_differences"]["correct-incorrect"] == pytest.approx(0.4)


# ----------------------------------------------------------------------------------- rank stability
# Rankings: v1 A>B>C, v2 A>C>B, v3 B>A>C. Pairs (AB, AC, BC): v1|v2 +,+,- -> 1/3; v1|v3 -,+,+ -> 1/3;
# v2|v3 -,+,- -> -1/3. Means A .5, B .45, C .4: A is top, but not under v3.
THREE = {
    "A": {"v1": 0.50, "v2": 0.60, "v3": 0.40},
    "B": {"v1": 0.40, "v2": 0.50, "v3": 0.45},
    "C": {"v1": 0.30, "v2": 0.55, "v3": 0.35},
}


def test_rank_stability_against_hand_computed_kendall_tau():
    r = rank_stability(THREE)
    assert r["models"] == 3 and r["variants"] == 3
    assert r["kendall_tau"] == pytest.approx({"v1|v2": 1 / 3, "v1|v3": 1 / 3, "v2|v3": -1 / 3})
    assert r["mean_tau"] == pytest.approx(1 / 9) and r["min_tau"] == pytest.approx(-1 / 3)
    assert r["top_by_mean"] == "A" and r["variants_with_other_top"] == ["v3"]
    assert r["top_change_share"] == pytest.approx(1 / 3)


def test_rank_stability_matches_scipy_on_random_scores():
    rng = random.Random(7)
    labels = [f"v{i}" for i in range(6)]
    by_model = {f"m{j}": {v: rng.random() for v in labels} for j in range(5)}
    r = rank_stability(by_model)
    for pair, tau in r["kendall_tau"].items():
        a, b = pair.split("|")
        expected = kendalltau([by_model[m][a] for m in by_model], [by_model[m][b] for m in by_model]).statistic
        assert tau == pytest.approx(expected)
    assert len(r["kendall_tau"]) == 15 and r["mean_tau"] == pytest.approx(sum(r["kendall_tau"].values()) / 15)


def test_rank_stability_uses_shared_variants_and_needs_two_of_each():
    assert rank_stability({"A": THREE["A"]}) is None  # one model
    assert rank_stability({"A": {"v1": 0.5, "v2": 0.4}, "B": {"v1": 0.3, "v3": 0.2}}) is None  # one shared variant
    r = rank_stability({"A": {**THREE["A"], "extra": 0.9}, "B": THREE["B"]})
    assert r["variants"] == 3 and "extra" not in json.dumps(r)
    tied = rank_stability({"A": {"v1": 0.5, "v2": 0.5}, "B": {"v1": 0.5, "v2": 0.4}})
    assert tied["kendall_tau"] == {"v1|v2": None} and tied["mean_tau"] is None  # a constant ranking has no τ
    assert tied["top_change_share"] == 0.0  # A ties for first under v1: still on top


def test_the_statistics_hold_the_keys_their_types_name():
    """`SensitivitySummary` and `RankStability` say what each key means; they must name what the code gives."""
    from bench.results.sensitivity import RankStability, SensitivitySummary

    with_sets = summarize([VariantScore("c", "correct", 0.5), VariantScore("i", "incorrect", 0.25)])
    assert set(with_sets) == set(SensitivitySummary.__annotations__)
    assert set(summarize([VariantScore("v", None, 0.5)])) == set(SensitivitySummary.__annotations__) - {
        "set_means",
        "set_differences",
    }
    assert set(rank_stability(THREE) or {}) == set(RankStability.__annotations__)


# ----------------------------------------------------------------------------------- collect
def test_collect_groups_variants_and_attaches_the_default(variant_results):
    groups = collect(find_results(variant_results))
    assert [(g.task, g.model) for g in groups] == [
        (TASK, ("org/a", "rev1", "default")),
        (TASK, ("org/b", "rev1", "default")),
    ]
    a = groups[0]
    assert a.default == 0.55 and a.main_score_name == MAIN and a.set_order == ("correct", "incorrect")
    assert [s.label.split("-")[0] for s in a.scores] == ["correct01", "correct02", "incorrect01"]
    assert [(s.set, s.score) for s in a.scores] == [("correct", 0.5), ("correct", 0.6), ("incorrect", 0.4)]
    assert a.summary()["set_differences"] == pytest.approx({"correct-incorrect": 0.15})
    stability = stability_by_task(groups)[TASK]
    assert sorted(stability["kendall_tau"].values()) == pytest.approx([-1.0, -1.0, 1.0])
    assert stability["top_by_mean"] == ("org/a", "rev1", "default") and stability["top_change_share"] == pytest.approx(
        1 / 3
    )


def test_base_experiment_drops_only_the_instruction():
    assert base_experiment({"instruction": "v01-12345678"}) == "default"
    assert base_experiment({"template": "none", "instruction": "v01-12345678"}) == "template=none"
    assert base_experiment(None) == "default"


# ----------------------------------------------------------------------------------- bench results
def _table(text: str, title: str) -> list[list[str]]:
    """The rows (cells) of the github table printed under `title`."""
    lines = text.split(f"\n{title}\n\n", 1)[1].splitlines()
    table = lines[: next((i for i, line in enumerate(lines) if not line.startswith("|")), len(lines))]
    return [[c.strip() for c in line.split("|")[1:-1]] for line in table]


def test_results_shows_sensitivity_and_rank_stability_not_variant_rows(variant_results, capsys):
    assert main(["results", str(variant_results)]) == 0
    out = capsys.readouterr().out
    main_table = out.split("\n\nInstruction sensitivity\n")[0]
    rows = [line for line in main_table.splitlines() if "| org/" in line]
    assert len(rows) == 2 and "instruction=" not in main_table  # no variant rows or experiments
    assert f"| {format_score(DEFAULTS['org/a'])} " in rows[0]

    header, _, a, b = _table(out, "Instruction sensitivity")
    assert header == ["Task", "Model", "Metric", "Variants", "Own", "Mean", "Std", "Min", "Max", "correct-incorrect"]
    assert a == [TASK, "org/a", MAIN, "3", "55.00", "50.00", "10.00", "40.00", "60.00", "15.00"]
    assert b == [TASK, "org/b", MAIN, "3", "48.00", "45.00", "5.00", "40.00", "50.00", "0.00"]

    header, _, row = _table(out, "Rank stability")
    assert header == ["Task", "Models", "Shared variants", "Mean τ", "Min τ", "Top by mean", "Other top"]
    # two models: τ is +1 between the correct variants (a first under both), -1 against the incorrect one
    assert row == [TASK, "2", "3", "-0.33", "-1.00", "org/a", "1 of 3 (33%)"]


def test_a_blind_setting_is_shown_but_left_out_of_the_rank_stability(variant_results):
    """As on the site: a baseline (∅) gets its sensitivity row but takes no part in the ranking's stability,
    though its scores (all equal, the best under one variant) would change it."""
    for set_name, index in SCORES["org/a"]:
        write_result(
            variant_results,
            "org/c",
            TASK,
            0.7,
            blind=True,
            variant=_variant(TASK, set_name, index, INSTRUCTIONS[set_name, index]),
        )
    out = results_table(variant_results)
    assert [r[1] for r in _table(out, "Instruction sensitivity")[2:]] == ["org/a", "org/b", "org/c ∅"]
    _header, _, row = _table(out, "Rank stability")
    assert row == [TASK, "2", "3", "-0.33", "-1.00", "org/a", "1 of 3 (33%)"]  # as without org/c


def test_results_without_variants_prints_no_sensitivity_tables(tmp_path):
    write_result(tmp_path, "org/a", TASK, 0.5)
    out = results_table(tmp_path)
    assert "Instruction sensitivity" not in out and "Rank stability" not in out


def test_one_model_gets_sensitivity_but_no_rank_stability(variant_results):
    shutil.rmtree(variant_results / "org__b")
    out = results_table(variant_results)
    assert "Instruction sensitivity" in out and "Rank stability" not in out


def test_experiments_are_kept_apart(tmp_path):
    """A model's variants under another setting (template=none) are their own row, with its own default."""
    for experiment, shift in (({}, 0.0), ({"template": "none"}, -0.1)):
        write_result(tmp_path, "org/a", TASK, 0.5 + shift, experiment=experiment)
        for (set_name, index), score in SCORES["org/a"].items():
            write_result(
                tmp_path,
                "org/a",
                TASK,
                score + shift,
                experiment=experiment,
                variant=_variant(TASK, set_name, index, INSTRUCTIONS[set_name, index]),
            )
    out = results_table(tmp_path)
    rows = _table(out, "Instruction sensitivity")
    assert rows[0][:3] == ["Task", "Model", "Experiment"]
    assert [r[2] for r in rows[2:]] == ["default", "template=none"]
    assert [r[5] for r in rows[2:]] == ["50.00", "40.00"] and [r[6] for r in rows[2:]] == ["50.00", "40.00"]
    stability = _table(out, "Rank stability")[2]
    assert stability[5] == "org/a" and stability[6] == "0 of 3 (0%)"
