"""Instruction shift against gain per suite (bench/leaderboard/shift_gain.py and its plot, shift_plot.py; issue
44): a row with a recorded shift and its ∅ run (`--template none`) on the table is a point, its gain the
average minus the ∅ row's; a row without a ∅ run is named, not plotted; the plot labels its four quadrants."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.leaderboard import build
from bench.leaderboard.entries import experiment_label
from bench.leaderboard.shift_gain import shift_gain
from bench.leaderboard.shift_plot import QUADRANTS, shift_gain_svg
from leaderboard_fixtures import add_settings, copy_results, edit_json

SHIFTS = {"default": 0.08, "template=prefix": 0.21}  # per MiniLM setting: the mean cosine distance recorded


def add_shifts(root: Path, shifts: dict[str, float] = SHIFTS) -> None:
    """Give the MiniLM settings' run records an `instruction_shift`, as `bench run --shift-sample` writes it."""
    for record in root.rglob("run_records/*.json"):
        model = json.loads(record.read_text(encoding="utf-8"))["model"]
        setting = experiment_label(model.get("experiment") or {})
        if "MiniLM" in model["name"] and setting in shifts:
            block = {"sample": 64, "population": 100, "mean_cosine_distance": shifts[setting], "seed": 7}
            edit_json(record, lambda d, block=block: d.update(instruction_shift=block))


@pytest.fixture(scope="module")
def shifted(demo_results: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    root = copy_results(demo_results, tmp_path_factory.mktemp("shift") / "results")
    add_settings(root)
    add_shifts(root)
    out = root.parent / "site"
    return out, build([root], out).data


def test_points_are_shift_and_gain_over_the_template_none_row(shifted):
    out, data = shifted
    (suite,) = data["suites"]
    models = {m["id"]: m for m in data["models"]}
    averages = {r["model_id"]: r["average"] for r in suite["rows"]}
    (blind,) = [i for i, m in models.items() if m["setting"] == "template=none"]
    found = suite["shift_gain"]
    assert {models[p["model_id"]]["setting"]: p["shift"] for p in found["points"]} == SHIFTS
    for p in found["points"]:
        assert p["blind_id"] == blind and p["tasks"] == len(suite["columns"])
        assert p["gain"] == pytest.approx(averages[p["model_id"]] - averages[blind])
    assert found["split"] == pytest.approx(sum(SHIFTS.values()) / 2) and found["unpaired"] == []
    index = (out / "index.html").read_text(encoding="utf-8")
    assert index.count('class="shift-dot"') == 2 and "instruction shift against gain" in index


def test_a_row_without_its_template_none_run_is_named_not_plotted(shifted):
    _, data = shifted
    (suite,) = data["suites"]
    models = {m["id"]: m for m in data["models"]}
    rows = [r for r in suite["rows"] if models[r["model_id"]]["setting"] != "template=none"]
    # the table without its ∅ row: every MiniLM setting with a shift is unpaired
    without = shift_gain({**suite, "rows": rows}, _model_rows(data))
    assert without["points"] == [] and without["split"] is None
    assert sorted(without["unpaired"]) == sorted(
        m["label"] for r in rows if (m := models[r["model_id"]])["setting"] in SHIFTS and "MiniLM" in m["name"]
    )


def _model_rows(data: dict) -> list:
    """The board's ModelRows again, from the run records leaderboard.json keeps."""
    from bench.leaderboard.entries import Entry, ModelKey
    from bench.leaderboard.rows import ModelRow

    rows = []
    for m in data["models"]:
        key = ModelKey(m["name"], m["revision"], m["setting"])
        results = {
            t: Entry("s", r["file"], t, key, {"scores": {"test": [r["scores"]]}}, r["record"])
            for t, r in m["results"].items()
        }
        rows.append(ModelRow(key, results))
    return rows


def test_the_plot_labels_its_quadrants_and_escapes_labels():
    points = [
        {"model_id": "a", "label": "<b>org/a</b>", "blind_id": "z", "shift": 0.3, "tasks": 1, "gain": 2.5},
        {"model_id": "b", "label": "org/b", "blind_id": "z", "shift": 0.1, "tasks": 3, "gain": -1.0},
    ]
    svg = str(shift_gain_svg("demo: shift", {"points": points, "split": 0.2, "unpaired": []}))
    for label, _, _ in QUADRANTS:
        assert f">{label}</text>" in svg
    assert svg.count('class="shift-dot"') == 2 and "<b>" not in svg and "&lt;b&gt;org/a&lt;/b&gt;" in svg
    assert "gain <strong>+2.50</strong>" in svg and "(one task)" in svg
