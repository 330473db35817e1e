"""The field on the board: rows a paper reported (and MTEB published) beside the submitted ones.

One site, built once per module from the demo run (tests/leaderboard_fixtures.py) plus every packaged
reported table (bench/results/reported/) and a made-up table on the demo suite
(tests/fixtures/leaderboard-reported-demo.yaml: a row that outranks the demo run, and one whose name is a
spreadsheet formula with markup). Checked: each packaged table's rows on its suite's table with source
"reported", their printed values, the § mark and the linked words "reported in <paper>, Table N", the
table's notes on the suite page; never verified, never flagged or in conflicts; `source` in
leaderboard.json and the CSV (formula-neutralised); the "Hide reported" switch and the source filter;
`bench leaderboard build` adds the packaged tables unless --no-reported, the library only what it is
given. The browser test (slow) opens the same site over HTTP at 1400 and 400 px.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape
from test_site_browser import _console_errors
from test_site_browser import browser as browser  # the one Chromium driver fixture (skips without it)

from bench.cli.main import main
from bench.leaderboard import build
from bench.leaderboard.external import SOURCES, ExternalRow, external_json, reported_row, reported_rows
from bench.results import deltas, marks
from bench.results.literature import all_tables, load_table
from leaderboard_fixtures import copy_results, edit_json, result_files, served_site

DEMO_TABLE = Path(__file__).parent.parent / "fixtures" / "leaderboard-reported-demo.yaml"
# The tables issue 31 names, and the suite table each must show up on.
REQUIRED = {
    "inbedder-2024-table1": "awareness",
    "inbedder-2024-table2": "generic",
    "gstransform-2025-table1": "gstransform",
    "metaeol-2024-table1": "metaeol-sts",
}
ISSUE_42 = {"instructor-2023-table10": "generic", "metaeol-2024-table4": "metaeol-sts"}  # issue 42, item 9


@pytest.fixture(scope="module")
def site(demo_results: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("reported") / "site"
    external = reported_rows([*all_tables(), load_table(DEMO_TABLE)])
    return out, build([demo_results], out, external=external).data


def _section(index: str, suite: str) -> str:
    return index.split(f'<section class="suite" id="suite-{suite}">', 1)[1].split("</section>", 1)[0]


def _row_html(section: str, row_id: str) -> str:
    """The <tr> of the row `row_id` (its data-model-id, as the template escapes it)."""
    start = section.rindex("<tr", 0, section.index(f'data-model-id="{escape(row_id)}"'))
    return section[start : section.index("</tr>", start)]


def _suite(data: dict[str, Any], name: str) -> dict[str, Any]:
    (suite,) = [s for s in data["suites"] if s["name"] == name]
    return suite


@pytest.mark.parametrize("table_id", sorted(REQUIRED | ISSUE_42))
def test_reported_rows_on_their_suite(site, table_id):
    """Every row of the table is on its suite's table, source "reported", with the values as printed
    (two decimals), the § badge and the linked words, never verified or flagged; the suite page lists the
    table with each of its notes."""
    out, data = site
    table = load_table(table_id)
    assert table.suite == (REQUIRED | ISSUE_42)[table_id]
    suite = _suite(data, table.suite)
    rows = {r["model_id"]: r for r in suite["rows"]}
    index = (out / "index.html").read_text(encoding="utf-8")
    section = _section(index, table.suite)
    expected = [x for x in reported_rows([*all_tables(), load_table(DEMO_TABLE)]) if x.table == table_id]
    # one model's rows of two tables of one paper and suite are one row, on its first table (issue 42):
    # Table 4's TC+SA+PI+IE is Table 1's MetaEOL-LLAMA2 (Ours) 7B
    assert len(expected) == len(table.rows) - (table_id == "metaeol-2024-table4") > 0
    for x in expected:
        row = rows[x.id]
        assert row["source"] == "reported" and row["verification"] is None and not row["flags"]
        assert {t: v for t, v in row["scores"].items() if v is not None} == x.scores
        html = _row_html(section, x.id)
        assert 'data-source="reported"' in html and 'data-verification=""' in html
        assert (
            f'<span class="sym">{marks.REPORTED.symbol}</span> <span class="word">{marks.REPORTED.label}</span>' in html
        )
        assert f'<a href="{table.url}"' in html and f">reported in {escape(table.label)}</a>" in html
        assert 'class="badge verified"' not in html and 'class="badge self-reported"' not in html
        for value in x.scores.values():
            assert f">{value:.2f}</td>" in html  # as printed, two decimals
    (listed,) = [s for s in suite["sources"] if s["table"] == table_id]
    assert listed["label"] == f"reported in {table.label}" and listed["url"] == table.url
    assert listed["rows"] == len(expected) and set(table.notes) <= set(listed["notes"])
    sources = section.split('<ul class="sources">', 1)[1].split("</ul>\n  </div>", 1)[0]
    assert f'<a href="{table.url}">reported in {escape(table.label)}</a>' in sources
    for note in table.notes:
        assert f"<li>{escape(note)}</li>" in sources


def test_reported_rows_ranked_with_submitted_ones_and_filtered_by_source(site):
    """On the demo suite a complete reported row is ranked with the submitted ones (first here), a row
    with one task is shown unranked; the suite offers the source filter and the "Hide reported" switch;
    a suite with reported rows only has the switch but no source choice."""
    out, data = site
    demo = _suite(data, "demo")
    by_source = {s: [r for r in demo["rows"] if r["source"] == s] for s in SOURCES}
    assert len(by_source["submitted"]) == 2 and len(by_source["reported"]) == 2 and not by_source["mteb"]
    best, partial = (next(r for r in by_source["reported"] if name in r["model_id"]) for name in ("|demo-paper", "|=H"))
    assert best["rank"] == 1 and partial["rank"] is None
    assert any(r["rank"] is not None for r in by_source["submitted"])  # ranked beside it, not apart
    assert data["filters"]["sources"] == ["submitted", "reported"]
    index = (out / "index.html").read_text(encoding="utf-8")
    section = _section(index, "demo")
    assert '<input type="checkbox" class="f-hide-reported"> Hide reported</label>' in section
    assert re.search(
        r'<select class="f-source"><option value="">all</option><option value="submitted">[^<]+</option>'
        r'<option value="reported">[^<]+</option></select>',
        section,
    )
    awareness = _section(index, "awareness")
    assert 'class="f-hide-reported"' in awareness and 'class="f-source"' not in awareness
    legend = index.split('id="legend"', 1)[1].split("</div>", 1)[0]
    assert str(escape(marks.REPORTED.meaning)) in legend  # the mark explained once, from the one set of marks


def test_source_in_json_and_csv(site):
    """Every row of leaderboard.json and of the CSV carries its source; a reported value is the printed
    one; a paper's model name that reads as a formula is neutralised in the CSV and escaped on the page."""
    out, _ = site
    saved = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    assert all(m["source"] == "submitted" for m in saved["models"])
    assert {x["source"] for x in saved["external"]} == {"reported"}
    assert all(r["source"] in SOURCES for s in saved["suites"] for r in s["rows"])
    rows = list(csv.DictReader((out / "leaderboard.csv").open(encoding="utf-8")))
    assert {r["source"] for r in rows} == {"submitted", "reported"}
    submitted = [r for r in rows if r["source"] == "submitted"]
    assert len(submitted) == 6 and all(r["source_label"] == "" for r in submitted)
    printed = {(x["source_label"], x["name"], t): v for x in saved["external"] for t, v in x["scores"].items()}
    reported = [r for r in rows if r["source"] == "reported"]
    assert len(reported) == len(printed)
    for r in reported:
        name = r["model"][1:] if r["model"].startswith("'=") else r["model"]
        assert r["main_score_x100"] == f"{printed[(r['source_label'], name, r['task'])]:.2f}"
        assert r["source_label"].startswith("reported in ") and r["source_url"].startswith("https://")
        assert r["verification"] == ""
    (hostile,) = [r for r in reported if "HYPERLINK" in r["model"]]
    assert hostile["model"].startswith("'=") and hostile["main_score_x100"] == "-5.50"
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "<b>bold</b>" not in index and "&lt;b&gt;bold&lt;/b&gt;" in index


def test_external_rows_never_verified_flagged_or_in_conflicts(demo_results, tmp_path):
    """External rows whose scores equal a submitted row's, and each other's, flag nothing and conflict with
    nothing; an MTEB row shows the ◇ mark and its ModelMeta facts; a source's `javascript:` address is
    never a link."""
    plain = build([demo_results], tmp_path / "plain").data
    assert plain["external"] == [] and all(r["source"] == "submitted" for s in plain["suites"] for r in s["rows"])
    submitted = _suite(plain, "demo")["rows"][0]
    scores = {t: v for t, v in submitted["scores"].items() if v is not None}
    copies = [
        ExternalRow("reported", name, scores, "reported in X (Y et al., Z 2024), Table 1", "https://example.org/x", "x")
        for name in ("copy-a", "copy-b")
    ]
    mteb = ExternalRow(
        "mteb",
        "org/published-model",
        {t: v + 1 for t, v in scores.items()},
        marks.PUBLISHED.label,
        "javascript:alert(1)",
        facts={
            "n_parameters": 335_000_000,
            "license": "mit",
            "release_date": "2023-05-19",
            "reference": "javascript:x",
        },
    )
    out = tmp_path / "site"
    data = build([demo_results], out, external=[*copies, mteb]).data
    demo = _suite(data, "demo")
    assert data["conflicts"] == [] and all(not r["flags"] for r in demo["rows"])
    assert all(not m["flags"] and m["same_scores_count"] == 0 for m in data["models"])
    assert [m["verification"] for m in data["models"]] == [m["verification"] for m in plain["models"]]
    assert {x["id"]: x["verification"] for x in data["external"]} == {x.id: None for x in [*copies, mteb]}
    published = next(x for x in data["external"] if x["source"] == "mteb")
    assert published["url"] is None and published["reference"] is None
    assert (published["n_parameters"], published["size_bucket"], published["license"]) == (
        335_000_000,
        "100M–1B",
        "mit",
    )
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "javascript:" not in index
    html = _row_html(_section(index, "demo"), mteb.id)
    assert f'<span class="sym">{marks.PUBLISHED.symbol}</span>' in html and "published by MTEB" in html
    assert ">335M</td>" in html and ">mit</td>" in html and ">2023-05-19</td>" in html
    assert external_json(mteb)["source_label"] == marks.PUBLISHED.label


def test_model_page_says_what_it_reproduces(site):
    """The demo run's default setting matches the made-up table's row spec (`all-MiniLM-L6-v2`, no options):
    its model page says "reproduces <table>: mean |Δ| x" with each cell's Δ (bench.results.deltas); the
    `--template none` run does not match (an option the row does not name), so its page says nothing."""
    out, data = site
    table = load_table(DEMO_TABLE)
    row = table.row("demo-paper-model")
    models = {m["setting"]: m for m in data["models"]}
    default, blind = models["default"], next(m for s, m in models.items() if "template=none" in s)
    assert blind["reproduces"] == []
    (rep,) = default["reproduces"]
    ours = {t: r["main_score"] * 100 for t, r in default["results"].items()}
    expected = deltas.reproduction(table, row, ours)
    assert rep["label"] == table.label and rep["row"] == row.name and rep["missing"] == []
    assert rep["mean_abs_delta"] == expected.mean_abs_delta is not None and expected.mean_abs_delta > 0
    assert [c["delta"] for c in rep["cells"]] == [c.delta for c in expected.cells]
    page = (out / "models" / f"{default['id']}.html").read_text(encoding="utf-8")
    assert f'reproduces <a href="{table.url}">{escape(table.label)}</a>: mean |Δ| {expected.mean_abs_delta:.2f}' in page
    # (the section, not the word: the page also shows the run record, whose `command` is this pytest's argv)
    assert 'id="reproduces"' in page and 'id="reproduces"' not in (out / "models" / f"{blind['id']}.html").read_text(
        encoding="utf-8"
    )


def test_cli_adds_the_packaged_tables_unless_no_reported(demo_results, tmp_path, capsys):
    """`bench leaderboard build` shows every packaged table's rows and says how many; --no-reported none."""
    site = tmp_path / "site"
    assert main(["leaderboard", "build", "--results", str(demo_results), "--out", str(site)]) == 0
    out = capsys.readouterr().out
    data = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    tables = all_tables()
    assert {x["table"] for x in data["external"]} == {t.id for t in tables} >= set(REQUIRED)
    assert len(data["external"]) == len(reported_rows(tables))
    assert f"{len(data['external'])} reported row(s) from {len(tables)} paper table(s)" in out
    bare = tmp_path / "bare"
    assert main(["leaderboard", "build", "--results", str(demo_results), "--out", str(bare), "--no-reported"]) == 0
    data = json.loads((bare / "leaderboard.json").read_text(encoding="utf-8"))
    assert data["external"] == [] and [s["name"] for s in data["suites"]] == ["demo"]
    assert all(r["source"] == "submitted" for s in data["suites"] for r in s["rows"])


# ----------------------------------------------------------------------------------- in a browser
@pytest.mark.slow
def test_reported_rows_in_a_browser(site, browser):
    """Over HTTP, at 1400 and 400 px: the reported rows with their § badge and source link, no page-wide
    sideways scroll, and "Hide reported" hiding exactly them (the "N of M shown" count follows) and back."""
    from selenium.webdriver.common.by import By

    out, data = site
    demo = _suite(data, "demo")
    reported = {r["model_id"] for r in demo["rows"] if r["source"] == "reported"}
    total = len(demo["rows"])
    driver = browser
    with served_site(out) as base:
        driver.get(base + "index.html")
        for width in (1400, 400):
            driver.set_window_size(width, 900)
            assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth"), width
            for name in ("awareness", "demo"):
                # one suite at a time: open its tab
                driver.find_element(By.CSS_SELECTOR, f'nav.suites a[data-suite="{name}"]').click()
                rows = driver.find_elements(By.CSS_SELECTOR, f'#table-{name} tbody tr[data-source="reported"]')
                assert rows and len(rows) == sum(r["source"] == "reported" for r in _suite(data, name)["rows"])
                for row in rows[:3]:
                    assert row.find_element(By.CSS_SELECTOR, ".badge.reported .sym").text == marks.REPORTED.symbol
                    link = row.find_element(By.CSS_SELECTOR, ".setting.source a")
                    assert link.is_displayed() and link.text.startswith("reported in ")
            controls = driver.find_element(By.CSS_SELECTOR, '.controls[data-for="table-demo"]')
            count = controls.find_element(By.CSS_SELECTOR, ".count")
            switch = controls.find_element(By.CSS_SELECTOR, "input.f-hide-reported")
            assert switch.is_displayed() and count.text == f"{total} of {total} shown"
            switch.click()
            assert count.text == f"{total - len(reported)} of {total} shown"
            shown = driver.find_elements(By.CSS_SELECTOR, "#table-demo tbody tr")
            assert {r.get_attribute("data-model-id") for r in shown if not r.is_displayed()} == reported
            assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth"), width
            switch.click()
            assert count.text == f"{total} of {total} shown"
        assert _console_errors(driver) == []


def test_a_reproduced_cell_on_stand_in_data_is_marked_and_not_in_the_mean(demo_results):
    """A result on stand-in data (InBedder's NYT, whose texts could not be had) is set beside the paper's
    cell, marked, and left out of the model page's mean |Δ|: it compares the paper with another dataset."""
    from bench.leaderboard.entries import Entry
    from bench.leaderboard.external import reported_rows, reproductions
    from bench.results.store import find_results

    table = load_table(DEMO_TABLE)
    found = [(p, d, r) for p, d, r in find_results(demo_results) if r and deltas.matches(table.rows[0].spec, r)]
    entries = {d["task_name"]: Entry("s", str(p), d["task_name"], ("m", "r", "default"), d, r) for p, d, r in found}
    plain = reproductions({("m", "r", "default"): entries}, reported_rows([table]))
    stand_in = dict(entries)
    task = "DemoIntentEmotion"
    record = json.loads(json.dumps(entries[task].record))
    record["task"]["dataset"].update({"stand_in": True, "stand_in_note": "a proxy"})
    stand_in[task] = Entry("s", "f", task, ("m", "r", "default"), entries[task].result, record)
    (rep,) = reproductions({("m", "r", "default"): stand_in}, reported_rows([table]))[("m", "r", "default")]
    (before,) = plain[("m", "r", "default")]
    cells = {c["task"]: c for c in rep["cells"]}
    assert cells[task]["stand_in"] and rep["on_stand_in"] == [task]
    others = [abs(c["delta"]) for c in rep["cells"] if c["task"] != task]
    assert rep["mean_abs_delta"] == round(sum(others) / len(others), 2) != before["mean_abs_delta"]


def test_a_paper_s_average_is_shown_as_printed(site):
    """Issue 42, item 3: MetaEOL prints PromptBERT's Avg. as 78.54, the mean of its seven printed cells is
    78.52. The board ranks and shows 78.54, keeps 78.52 beside it marked "recomputed" (leaderboard.json's
    `printed_averages` and the page), and a row whose printed average is its mean shows no second number."""
    out, data = site
    suite = _suite(data, "metaeol-sts")
    rows = {r["model_id"]: r for r in suite["rows"]}
    label = suite["average_label"]
    table = load_table("metaeol-2024-table1")
    bert, llama13, simcse = (
        rows[reported_row(table, table.row(name)).id]
        for name in ("PromptBERT (110M)", "PromptEOL-LLAMA2 (13B)", "SimCSE-BERT (110M)")
    )
    assert bert["averages"][label] == bert["average"] == 78.54
    assert bert["printed_averages"] == {label: {"printed": 78.54, "recomputed": 78.52}}
    assert llama13["averages"][label] == 68.83 and llama13["printed_averages"][label]["recomputed"] == 68.88
    assert simcse["printed_averages"] == {label: {"printed": 76.25, "recomputed": None}}
    assert all(r["printed_averages"] == {} for r in suite["rows"] if r["source"] != "reported")
    section = _section((out / "index.html").read_text(encoding="utf-8"), "metaeol-sts")
    html = _row_html(section, reported_row(table, table.row("PromptBERT (110M)")).id)
    assert '>78.54 <span class="recomputed">(78.52 recomputed)</span></td>' in html
    assert ">76.25</td>" in _row_html(section, reported_row(table, table.row("SimCSE-BERT (110M)")).id)


# ----------------------------------------------------------------------------------------- comparability (issue 42)
def test_a_stand_in_run_is_shown_marked_and_unranked_and_no_row_ranks_on_a_partial(site, demo_results, tmp_path):
    """Issue 42's done-when, on the board: the demo submission with its default setting's scores on stand-in
    data beside the packaged reported tables. The stand-in row is shown, marked, unranked with its reason (the
    "—" rank cell's title) and never shaded best; no row of any suite is ranked on a partial average; the
    other rows keep the ranks they have among themselves on the same board without the stand-in."""
    root = copy_results(demo_results, tmp_path / "sub")
    for task in ("DemoInstructSTS", "DemoIntentEmotion"):
        _, record = result_files(root, task)  # the default setting's run
        edit_json(record, lambda d: d["task"]["dataset"].update(stand_in=True, stand_in_note="a proxy"))
    out = tmp_path / "site"
    data = build([root], out, external=reported_rows([*all_tables(), load_table(DEMO_TABLE)])).data
    demo = _suite(data, "demo")
    (ours,) = [r for r in demo["rows"] if r["stand_in"]]
    assert ours["stand_in"] == ["DemoInstructSTS", "DemoIntentEmotion"] and ours["average"] is not None
    assert ours["rank"] is None and ours["unranked_reason"].startswith(
        "not the same data: stand-in data (‡) on DemoInstructSTS, DemoIntentEmotion (never ranked against "
    )
    comparable = [r for r in demo["rows"] if r["unranked_reason"] is None]
    assert any(r["source"] != "submitted" for r in comparable)  # the paper's rows are ranked with ours
    for task, best in demo["best"].items():
        assert best == max(r["scores"][task] for r in comparable if r["scores"][task] is not None)
    row = _row_html(_section((out / "index.html").read_text(), "demo"), ours["model_id"])
    assert f'class="rank num" title="not ranked: {escape(ours["unranked_reason"])}">—</td>' in row
    assert " best" not in row and '<sup class="stand-in">‡</sup>' in row

    # no row of any suite is ranked on a partial average; every unranked row but a baseline says why
    for suite in data["suites"]:
        for r in suite["rows"]:
            if r["rank"] is not None:
                assert r["averages"][suite["average_label"]] is not None and r["unranked_reason"] is None
            else:
                assert r["unranked_reason"] or r["averages"][suite["average_label"]] is None

    # the comparable rows' ranks are those they have among themselves without the stand-in row
    before = {r["model_id"]: r for r in _suite(site[1], "demo")["rows"]}
    values = {k: before[k]["average"] for k in before if before[k]["rank"] is not None and k != ours["model_id"]}
    expected = {k: 1 + sum(v > x for v in values.values()) for k, x in values.items()}
    assert {r["model_id"]: r["rank"] for r in demo["rows"] if r["rank"] is not None} == expected
    assert before[ours["model_id"]]["rank"] is not None  # on the published data it was ranked


def test_one_model_s_rows_of_two_tables_of_one_suite_are_one_reported_row():
    """Issue 42: MetaEOL's Table 4 row TC+SA+PI+IE is Table 1's MetaEOL-LLAMA2 (Ours) 7B, value for value and
    spec for spec: the board shows it once, on Table 1, with a note naming both rows (before: two rows)."""
    rows = reported_rows([load_table("metaeol-2024-table1"), load_table("metaeol-2024-table4")])
    assert len(rows) == 21 + 3 and "TC+SA+PI+IE" not in [x.model for x in rows]
    (llama,) = [x for x in rows if x.model == "MetaEOL-LLAMA2 (Ours) (7B)"]
    assert llama.table == "metaeol-2024-table1"
    assert any("Table 1's 'MetaEOL-LLAMA2 (Ours) (7B)' and Table 4's 'TC+SA+PI+IE'" in n for n in llama.notes)
