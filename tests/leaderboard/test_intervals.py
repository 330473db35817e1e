"""Bootstrap intervals and tied rank bands on the board (bench/leaderboard/intervals.py, issue 42 "Uncertainty"):
leaderboard.json's suite rows carry each task's and the ranking average's 95% interval where their run records
kept per-item outcomes, rows whose intervals overlap share a rank band ("tied"), published and reported rows
say they have no interval, and the comparability rule's unranked rows get no band."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.core.bootstrap import average_interval, has_items
from bench.leaderboard import build
from bench.leaderboard.external import reported_rows
from bench.leaderboard.intervals import INCOMPLETE, NO_ITEMS, NO_RECORD_ITEMS, bands, overlap
from bench.results.literature import load_table
from leaderboard_fixtures import add_settings, copy_results, edit_json, result_files

DEMO_TABLE = Path(__file__).parent.parent / "fixtures" / "leaderboard-reported-demo.yaml"


@pytest.fixture(scope="module")
def crafted(demo_results: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """The demo run with the crafted settings (two ranked rows, three blind ones) and a paper's table."""
    root = copy_results(demo_results, tmp_path_factory.mktemp("intervals") / "results")
    add_settings(root)
    out = root.parent / "site"
    return out, build([root], out, external=reported_rows([load_table(DEMO_TABLE)])).data


def _demo(data: dict) -> dict:
    (suite,) = [s for s in data["suites"] if s["name"] == "demo"]
    return suite


def test_two_demo_rows_tied_when_their_intervals_overlap(crafted):
    """The two ranked demo settings differ by a fraction of a point on tasks of 60-192 items: their 95%
    intervals overlap, so the second shares the first's band and both are marked tied (on the page too)."""
    out, data = crafted
    suite = _demo(data)
    ranked = [r for r in suite["rows"] if r["rank"] is not None and r["source"] == "submitted"]
    assert len(ranked) == 2 and ranked[0]["rank"] < ranked[1]["rank"]
    first, second = ranked
    assert overlap(first["interval"], second["interval"])
    assert first["band"] == second["band"] == first["rank"] and first["tied"] and second["tied"]
    for r in ranked:
        low, high = r["interval"]
        assert low < high and r["interval_note"] is None
        assert set(r["intervals"]) == {t for t, v in r["scores"].items() if v is not None}
    index = (out / "index.html").read_text(encoding="utf-8")
    assert index.count('class="rank num tied"') == 2
    assert f"{first['interval'][0]:.2f}–{first['interval'][1]:.2f}" in index


def test_the_average_interval_is_the_bootstrap_of_its_tasks(crafted, demo_results):
    """The default setting's interval is bench/core/bootstrap.py's `average_interval` of its run records'
    items ×100 (the one `bench results --intervals` prints), and holds its average."""
    _, data = crafted
    suite = _demo(data)
    default = {m["id"] for m in data["models"] if m["setting"] == "default" and "MiniLM" in m["name"]}
    (row,) = [r for r in suite["rows"] if r["model_id"] in default]
    items = {}
    for task in suite["columns"]:
        _, record = result_files(demo_results, task["task"])
        found = json.loads(record.read_text(encoding="utf-8"))["items"]
        assert has_items(found)
        items[task["task"]] = found
    low, high = average_interval(items)
    assert row["interval"] == pytest.approx([100 * low, 100 * high])
    assert row["interval"][0] <= row["average"] <= row["interval"][1]


def test_unranked_rows_get_no_band_and_reported_rows_say_why_they_have_no_interval(crafted):
    out, data = crafted
    suite = _demo(data)
    for r in suite["rows"]:
        if r["rank"] is None:
            assert r["band"] is None and not r["tied"], r["model_id"]
        if r["source"] == "reported":
            assert r["interval"] is None and r["intervals"] == {}
            assert r["interval_note"] in (NO_ITEMS["reported"], INCOMPLETE)
    assert any(r["interval_note"] == NO_ITEMS["reported"] for r in suite["rows"])
    index = (out / "index.html").read_text(encoding="utf-8")
    assert f'<span class="ci none" title="{NO_ITEMS["reported"]}">no CI</span>' in index


def test_a_run_without_items_has_no_interval_and_says_so(demo_results, tmp_path):
    root = copy_results(demo_results, tmp_path / "results")
    _, record = result_files(root, "DemoIntentEmotion")
    edit_json(record, lambda d: d.pop("items"))
    data = build([root], tmp_path / "site").data
    suite = _demo(data)
    default = next(m["id"] for m in data["models"] if m["setting"] == "default")
    (row,) = [r for r in suite["rows"] if r["model_id"] == default]
    assert row["interval"] is None and row["interval_note"] == NO_RECORD_ITEMS
    assert "DemoIntentEmotion" not in row["intervals"] and "DemoNYTClustering" in row["intervals"]
    assert row["band"] == row["rank"] == 1 and not row["tied"]  # alone: no interval to overlap


def _row(rank: int | None, interval: list[float] | None) -> dict[str, object]:
    return {"model_id": f"m{rank}", "rank": rank, "interval": interval, "band": None, "tied": False}


def test_bands_follow_the_ranked_row_above():
    """A band continues while each ranked row's interval overlaps the ranked row above's (an unranked row
    between them neither breaks nor joins it); equal ranks share a band even without intervals."""
    rows = [
        _row(1, [60.0, 64.0]),
        _row(2, [55.0, 59.0]),  # below 60: a band of its own
        _row(None, [50.0, 70.0]),  # a baseline: never banded, not "the row above"
        _row(3, [58.5, 61.0]),  # overlaps rank 2
        _row(4, [57.0, 58.0]),  # below rank 3's 58.5: a new band
        _row(4, None),  # the same rank as the row above: tied by the rule itself
    ]
    bands(rows)
    assert [r["band"] for r in rows] == [1, 2, None, 2, 4, 4]
    assert [r["tied"] for r in rows] == [False, True, False, True, True, True]
