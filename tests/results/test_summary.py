"""CLI tables: one number format, averages only over comparable and complete sets, stand-in marks, every
result layout MTEB writes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import mteb
import pytest

from bench.cli.main import main
from bench.results.comparison import results_table
from bench.results.outcome import TaskOutcome
from bench.results.summary import run_table, suite_averages
from bench.results.tables import format_score
from bench.tasks import SUITES, DemoInstructSTS, DemoNYTClustering
from bench.tasks.data import stand_in_of
from toy_encoders import HashEncoder

AWARENESS = {"InstructSTSB": 0.40, "IntentEmotion": 0.25, "NYTClustering": 0.10}
ROBUSTNESS = dict(zip(SUITES["robustness"], (0.05, 0.01, -0.02, 0.03, 0.00, 0.06), strict=True))


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.split("|")[1:-1]]


def _outcome(task: str, score: float, stand_in_note: str | None = None) -> TaskOutcome:
    dataset = {"stand_in": stand_in_note is not None, "stand_in_note": stand_in_note}
    return TaskOutcome(task, "main", score, {"main_score": score}, "reused", {"task": {"dataset": dataset}})


def test_format_score_is_x100_two_decimals():
    assert format_score(0.1284) == "12.84" and format_score(-0.10594) == "-10.59" and format_score(1) == "100.00"


def test_complete_suite_average_is_the_mean():
    [avg] = suite_averages(AWARENESS)
    assert avg.complete and avg.title == "Average (awareness)"
    assert avg.value == pytest.approx((0.40 + 0.25 + 0.10) / 3)


def test_partial_average_is_labelled_and_names_what_is_missing():
    [avg] = suite_averages({"InstructSTSB": 0.40, "NYTClustering": 0.10})
    assert not avg.complete and avg.title == "Average (awareness, 2 of 3 tasks, partial)"
    assert avg.value == pytest.approx(0.25) and avg.missing == ["IntentEmotion"]
    table = run_table([_outcome("InstructSTSB", 0.40), _outcome("NYTClustering", 0.10)])
    scores = table.split("\n\n")[0].splitlines()  # the scores table, then the run's diagnostics
    assert _cells(scores[0]) == ["Task", "Metric", "Score", "Details"]
    assert _cells(scores[-1]) == [
        "Average (awareness, 2 of 3 tasks, partial)",
        "mean of 2 tasks",
        "25.00",
        "missing: IntentEmotion",
    ]


def test_delta_ci_is_never_averaged_with_absolute_scores():
    """awareness + robustness ran together: two averages, each over its own kind; none over both
    (the inbedder and all suites mix them, so they get none)."""
    averages = {a.suite: a for a in suite_averages({**AWARENESS, **ROBUSTNESS})}
    assert set(averages) == {"awareness", "robustness"}
    assert averages["robustness"].title == "Mean Δci (robustness)"
    assert averages["robustness"].value == pytest.approx(sum(ROBUSTNESS.values()) / 6)
    assert averages["awareness"].value == pytest.approx(0.25)


def test_one_task_gets_no_average():
    assert suite_averages({"InstructSTSB": 0.4}) == []
    assert "Average" not in run_table([_outcome("InstructSTSB", 0.4)])


def test_stand_in_scores_are_marked_with_a_footnote():
    note = "Label-derived PROXY of the InBedder InstructSTSB test set, NOT the original."
    table = run_table([_outcome("InstructSTSB", 0.40, note), _outcome("IntentEmotion", 0.25)])
    assert "| InstructSTSB‡ " in table and "| IntentEmotion " in table and "†" not in table
    footnote = table.split("\n\n")[1].splitlines()  # between the scores and the diagnostics tables
    assert footnote[0].startswith("‡ stand-in: computed on stand-in (proxy) data")
    assert footnote[-1] == f"  - InstructSTSB: {note}"


@pytest.fixture(scope="module")
def mteb_results(tmp_path_factory) -> Path:
    """What docs/guides/mteb.md's snippet writes: `mteb.evaluate(model, tasks, cache=mteb.ResultCache(DIR))`, plus
    the same result filed by a run record under another model (as `bench run` files it) on stand-in data."""
    root = tmp_path_factory.mktemp("mteb-results")
    model = HashEncoder(cache_dir=root / "cache")
    mteb.evaluate(
        model,
        [DemoInstructSTS(), DemoNYTClustering()],
        cache=mteb.ResultCache(root / "out"),
        show_progress_bar=False,
        co2_tracker=False,
    )
    written = root / "out" / "results" / "toy__hash" / "v1" / "experiments" / "family_toy"
    assert (written / "DemoInstructSTS.json").is_file()
    other = root / "out" / "results" / "org__other" / "r2"
    shutil.copy(written / "DemoInstructSTS.json", other.mkdir(parents=True) or other / "DemoInstructSTS.json")
    record = {
        "model": {"name": "org/other", "revision": "r2", "experiment": {}},
        "task": {"dataset": {"stand_in": True, "stand_in_note": "a 48-text stand-in"}},
    }
    (other / "run_records").mkdir()
    (other / "run_records" / "DemoInstructSTS.json").write_text(json.dumps(record), encoding="utf-8")
    return root / "out"


@pytest.mark.parametrize("where", [".", "results", "results/toy__hash", "results/toy__hash/v1/experiments"])
def test_results_reads_mteb_layouts_from_any_level(mteb_results, where):
    table = results_table(mteb_results / where)
    rows = {line.split("|")[2].strip(): line for line in table.splitlines()[2:] if line.startswith("|")}
    assert "toy/hash" in rows and "results" not in rows and "toy__hash" not in rows
    assert "| v1 " in rows["toy/hash"] and "| family=toy " in rows["toy/hash"]
    score = json.loads(next(mteb_results.rglob("DemoInstructSTS.json")).read_text())["scores"]["test"][0]["main_score"]
    assert f"| {format_score(score)} " in rows["toy/hash"]


def test_results_table_marks_stand_ins_and_partial_averages(mteb_results, capsys):
    assert main(["results", str(mteb_results)]) == 0
    out = capsys.readouterr().out
    other = next(line for line in out.splitlines() if "| org/other" in line)
    assert "‡" in other and "a 48-text stand-in" in out
    toy = next(line for line in out.splitlines() if "| toy/hash" in line)
    assert "(2 of 3, partial)" in toy and "Average (demo)" in out


def test_stand_in_comes_from_the_builders_manifest(tmp_path):
    def folder(name: str, manifest: str | None) -> dict[str, Path]:
        (tmp_path / name).mkdir()
        if manifest is not None:
            (tmp_path / name / "manifest.json").write_text(manifest, encoding="utf-8")
        return {"test": tmp_path / name / "test.jsonl"}

    assert stand_in_of(folder("proxy", '{"proxy": true, "note": "GoalEx labels"}')) == {
        "stand_in": True,
        "stand_in_note": "GoalEx labels",
    }
    assert stand_in_of(folder("published", '{"proxy": false, "note": "ClusterLLM release"}')) == {
        "stand_in": False,
        "stand_in_note": None,
    }
    assert stand_in_of(folder("hand-made", None)) == {"stand_in": False, "stand_in_note": None}
    assert stand_in_of(folder("broken", "{not json")) == {"stand_in": False, "stand_in_note": None}
    assert stand_in_of(None) == {"stand_in": False, "stand_in_note": None}  # hub or packaged data


def test_damaged_manifest_and_model_meta_are_passed_over_never_parsed_deep(tmp_path):
    """Neither file is the user's to fix in `bench results` or a run: deep or numeric garbage is ignored (a
    warning for the manifest), never a RecursionError or ValueError."""
    from bench.results.naming import model_of

    deep, long_int = "[" * 100_000 + "]" * 100_000, '{"proxy": ' + "9" * 5000 + "}"
    for i, text in enumerate((deep, long_int)):
        folder = tmp_path / f"d{i}" / "Task"
        folder.mkdir(parents=True)
        (folder / "manifest.json").write_text(text, encoding="utf-8")
        assert stand_in_of({"part": folder / "part.csv"}) == {"stand_in": False, "stand_in_note": None}
        result = tmp_path / f"r{i}" / "org__model" / "rev" / "Task.json"
        result.parent.mkdir(parents=True)
        (result.parent / "model_meta.json").write_text(text, encoding="utf-8")
        assert model_of(result, None) == ("org/model", "rev", "default")


def test_read_json_treats_a_hostile_result_as_missing(tmp_path, caplog):
    """The runner's reader: a deep or long-integer result file is "to be recomputed", with a warning."""
    from bench.results.store import read_json

    for name, text in (
        ("deep", "[" * 100_000 + "]" * 100_000),
        ("long", '{"a": ' + "9" * 5000 + "}"),
        ("surrogate", '{"task_name": "\\ud800"}'),
        ("broken", "{"),
    ):
        (tmp_path / f"{name}.json").write_text(text, encoding="utf-8")
        assert read_json(tmp_path / f"{name}.json") is None
    assert read_json(tmp_path / "missing.json") is None
    assert caplog.text.count("It will be recomputed.") == 4
