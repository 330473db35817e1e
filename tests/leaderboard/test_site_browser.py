"""The built site in a real headless Chromium, served over HTTP as a user opens it (`served_site`: a file://
page never asks for a missing favicon, a served one does): sorting, filtering, rank order, escaping, no
console error on any page (the `browser` fixture fails a test that leaves one: a script error, a 404),
screenshots; and at 1400, 768, 400 and 320 px, with and without a rejected
submission: a score column in the table's first screen, no page-wide sideways scroll, the sticky model
column, the "Model details" toggle, and no instruction-blind setting ranked (`test_every_width`).

Needs the Debian packages `chromium` and `chromium-driver` (and selenium from the dev extras); the test
is skipped, saying so, where they are missing. The screenshots land in the test's tmp folder and, when
$LEADERBOARD_SCREENSHOT names a file, there too (the 768, 400 and 320 px ones with `-768`, `-400`,
`-320` before the extension):

    LEADERBOARD_SCREENSHOT=/tmp/leaderboard.png python -m pytest tests/leaderboard/test_site_browser.py

With $LEADERBOARD_RESULTS (paths separated by ':', e.g. a `bench run --output-dir`) and optionally
$LEADERBOARD_DATA_DIR, a second test builds the site from those results, checks every table sorts,
and saves a full-page screenshot beside $LEADERBOARD_SCREENSHOT (`-results` added to its name).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from test_leaderboard import HOSTILE, MINILM, make_hostile

from bench.leaderboard import build
from leaderboard_fixtures import (
    SMOLLM,
    add_settings,
    copy_results,
    edit_json,
    result_files,
    served_site,
)

pytestmark = pytest.mark.slow

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
CHROMEDRIVER = shutil.which("chromedriver")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,900",
)


@pytest.fixture
def browser(tmp_path):
    if not CHROMIUM or not CHROMEDRIVER:
        pytest.skip("headless Chromium not installed: apt-get install -y chromium chromium-driver")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium not installed: pip install -e '.[dev]'")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="chromium-profile-", dir=tmp_path)
    options.add_argument(f"--user-data-dir={profile}")
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
        assert _console_errors(driver) == []  # whatever page the test ended on
    finally:
        driver.quit()


@pytest.fixture
def serve() -> Iterator[Callable[[Path], str]]:
    """`serve(site)` -> the base URL of `site` served over HTTP (leaderboard_fixtures.served_site), until the test ends."""
    with ExitStack() as stack:
        yield lambda folder: stack.enter_context(served_site(folder))


def _column(driver, table_id: str, index: int) -> list[str]:
    from selenium.webdriver.common.by import By

    rows = driver.find_elements(By.CSS_SELECTOR, f"#{table_id} tbody tr")
    return [r.find_elements(By.TAG_NAME, "td")[index].get_attribute("data-value") for r in rows]


def _console_errors(driver) -> list[dict]:
    """SEVERE entries of the page's console (script errors, failed loads) since the last call."""
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def _rank_order(driver, data: dict, suite: dict) -> None:
    """Rows in the page's order and their rank cells are leaderboard.json's."""
    from selenium.webdriver.common.by import By

    rows = driver.find_elements(By.CSS_SELECTOR, f"#table-{suite['name']} tbody tr")
    assert [r.get_attribute("data-model-id") for r in rows] == [r["model_id"] for r in suite["rows"]]
    shown = [r.find_element(By.CSS_SELECTOR, "td.rank").text for r in rows]
    assert shown == ["—" if r["rank"] is None else str(r["rank"]) for r in suite["rows"]]
    assert [r.get_attribute("class") == "baseline" for r in rows] == [r["baseline"] for r in suite["rows"]]


def _show_suite(driver, name: str) -> None:
    """Open the suite's tab (the page shows one suite at a time when it has several)."""
    from selenium.webdriver.common.by import By

    tabs = driver.find_elements(By.CSS_SELECTOR, f'nav.suites a[data-suite="{name}"]')
    if len(driver.find_elements(By.CSS_SELECTOR, "section.suite")) > 1:
        tabs[0].click()
        assert driver.find_element(By.ID, f"suite-{name}").is_displayed()


def _ranked(driver, suite: dict) -> list[str]:
    """Model ids of the rows whose rank cell shows a rank, in the page's order."""
    from selenium.webdriver.common.by import By

    rows = driver.find_elements(By.CSS_SELECTOR, f"#table-{suite['name']} tbody tr")
    return [r.get_attribute("data-model-id") for r in rows if r.find_element(By.CSS_SELECTOR, "td.rank").text != "—"]


def test_site_sorts_escapes_and_screenshots(browser, serve, demo_results, tmp_path):
    from selenium.webdriver.common.by import By

    hostile = copy_results(demo_results, tmp_path / "hostile")
    make_hostile(hostile)
    for folder in list(hostile.rglob("experiments")):  # keep only the renamed default setting
        shutil.rmtree(folder)
    site = tmp_path / "site"
    result = build([demo_results, hostile], site)
    assert not result.rejected
    browser.get(serve(site) + "index.html")
    assert browser.title == "instruct-bench leaderboard"  # the hostile onerror handler never ran
    data = json.loads((site / "leaderboard.json").read_text())
    (suite,) = [s for s in data["suites"] if s["name"] == "demo"]
    _rank_order(browser, data, suite)
    assert [r["rank"] for r in suite["rows"] if not r["baseline"]] == [
        1,
        1,
    ]  # default and its renamed (hostile) copy tie

    table = "table-demo"
    headers = browser.find_elements(By.CSS_SELECTOR, f"#{table} thead th")
    labels = [h.text.strip(" ▲▼") for h in headers]
    nyt = labels.index("NYT (demo)")
    avg = labels.index("Avg")
    before = _column(browser, table, avg)
    assert [float(v) for v in before] == sorted((float(v) for v in before), reverse=True)  # served sorted by Avg

    headers[nyt].find_element(By.TAG_NAME, "button").click()
    assert headers[nyt].get_attribute("aria-sort") == "descending"
    values = [float(v) for v in _column(browser, table, nyt)]
    expected = sorted(
        (r["scores"]["DemoNYTClustering"] for s in data["suites"] if s["name"] == "demo" for r in s["rows"]),
        reverse=True,
    )
    assert values == pytest.approx(expected)
    assert _column(browser, table, avg) != before  # the order really changed (NYT and Avg rank differently)

    headers[nyt].find_element(By.TAG_NAME, "button").click()
    assert headers[nyt].get_attribute("aria-sort") == "ascending"
    assert [float(v) for v in _column(browser, table, nyt)] == pytest.approx(sorted(expected))

    # the hostile model name is shown as text, and the only script on the page is the site's own
    names = [
        r.find_element(By.TAG_NAME, "a").text for r in browser.find_elements(By.CSS_SELECTOR, f"#{table} tbody tr")
    ]
    assert HOSTILE in names
    assert len(browser.find_elements(By.TAG_NAME, "script")) == 1
    assert browser.find_elements(By.CSS_SELECTOR, "img") == []

    # filtering hides the rows that do not match
    box = browser.find_element(By.CSS_SELECTOR, f'input[data-table="{table}"]')
    box.send_keys("template=none")
    visible = [r for r in browser.find_elements(By.CSS_SELECTOR, f"#{table} tbody tr") if r.is_displayed()]
    assert len(visible) == 1 and "template=none" in visible[0].text
    box.clear()
    box.send_keys(" ")  # back to all rows
    assert all(r.is_displayed() for r in browser.find_elements(By.CSS_SELECTOR, f"#{table} tbody tr"))

    # the rank column sorts 1, 1, ... first, the unranked baseline last; a second click reverses
    headers[0].find_element(By.TAG_NAME, "button").click()
    assert headers[0].get_attribute("aria-sort") == "ascending"
    assert _column(browser, table, 0) == ["1", "1", ""]
    headers[avg].find_element(By.TAG_NAME, "button").click()  # back to the served order
    _rank_order(browser, data, suite)

    assert _console_errors(browser) == []
    _screenshot(browser, tmp_path / "leaderboard.png", suffix="")
    model = browser.find_element(By.CSS_SELECTOR, f"#{table} tbody tr td.model a").get_attribute("href")
    browser.get(model)
    assert "All scores are ×100 with two decimals" in browser.find_element(By.TAG_NAME, "main").text
    assert _console_errors(browser) == []


WIDTHS = (1400, 768, 400, 320)


def _inputs(demo_results: Path, tmp_path: Path, rejected: bool) -> tuple[list[Path], set[str]]:
    """The demo run plus crafted settings (leaderboard_fixtures.add_settings), and with `rejected` a copy
    under a markup name with an out-of-range score: a rejected submission whose problems quote long paths.
    Returns the inputs and the labels of the instruction-blind settings, which must never be ranked."""
    root = copy_results(demo_results, tmp_path / "results")
    added = add_settings(root)
    blind = {label for label, follows in added.items() if not follows} | {f"{MINILM} [template=none]"}
    assert blind == {f"{MINILM} [template=none]", f"{MINILM} [template=model]", SMOLLM}  # PromptEOL without a template
    inputs = [root]
    if rejected:
        bad = copy_results(demo_results, tmp_path / "rejected-submission-with-a-long-folder-name-that-never-wraps")
        make_hostile(bad)
        result, _ = result_files(bad, "DemoIntentEmotion")
        edit_json(result, lambda d: d["scores"]["test"][0].update(emotion_success_rate=1.5))
        inputs.append(bad)
    return inputs, blind


@pytest.mark.parametrize("rejected", [False, True], ids=["accepted", "with-rejected"])
def test_every_width(browser, serve, demo_results, tmp_path, rejected):
    """One site per state, the window resized through 1400, 768, 400 and 320 px: at each, the first score
    column is in view when the table's top is and it is scrolled to its left edge, the page never scrolls
    sideways, and the rows with a rank are exactly the settings that follow instructions."""
    from selenium.webdriver.common.by import By

    inputs, blind = _inputs(demo_results, tmp_path, rejected)
    site = tmp_path / "site"
    result = build(inputs, site)
    assert len(result.rejected) == int(rejected)
    data = result.data
    ids = {m["label"]: m["id"] for m in data["models"]}
    blind_ids = {ids[label] for label in blind}
    assert len(blind_ids) == 3
    base = serve(site)
    browser.get(base + "index.html")
    (suite,) = data["suites"]
    table_id = f"table-{suite['name']}"
    for width in WIDTHS:
        browser.set_window_size(width, 900)
        viewport, height = browser.execute_script("return [window.innerWidth, window.innerHeight]")
        assert viewport <= width
        assert browser.execute_script("return document.documentElement.scrollWidth") <= viewport, (
            width
        )  # no page-wide pan
        table = browser.find_element(By.ID, table_id)
        scroller = browser.find_element(By.CSS_SELECTOR, f"#suite-{suite['name']} .scroll")
        browser.execute_script("arguments[0].scrollLeft = 0; arguments[1].scrollIntoView()", scroller, table)
        score = table.find_element(By.CSS_SELECTOR, "thead th.avg").rect  # the first average: scores first
        assert score["x"] >= 0 and score["x"] + score["width"] <= viewport, width
        assert score["y"] >= 0 and score["y"] + score["height"] <= height, width
        meta = table.find_element(By.CSS_SELECTOR, "thead th.meta")
        assert meta.is_displayed() == (width > 768), width  # model details wait for the toggle up to 768 px
        ranked = _ranked(browser, suite)
        assert ranked and not set(ranked) & blind_ids, width
        assert set(ranked) == {r["model_id"] for r in suite["rows"] if r["rank"] is not None}
        for row in browser.find_elements(By.CSS_SELECTOR, f"#{table_id} tbody tr"):
            if row.get_attribute("data-model-id") in blind_ids:  # unranked, marked, never shaded best
                assert row.get_attribute("class") == "baseline" and row.find_elements(By.CSS_SELECTOR, ".badge.base")
                assert not row.find_elements(By.CSS_SELECTOR, "td.best")
        if rejected:  # the rejected list scrolls in its own box
            problems = browser.find_element(By.CSS_SELECTOR, "#rejected table.problems")
            assert browser.execute_script("return arguments[0].parentNode.classList.contains('scroll')", problems)
        hidden = browser.execute_script("return arguments[0].scrollWidth - arguments[0].clientWidth", scroller)
        if width <= 400:
            assert hidden > 0  # the scores do not fit a phone: the table scrolls, the model column stays
            cell = table.find_element(By.CSS_SELECTOR, "tbody tr td.model")
            before = cell.rect
            browser.execute_script("arguments[0].scrollLeft = arguments[0].scrollWidth", scroller)
            after = cell.rect
            assert after["x"] == pytest.approx(before["x"], abs=1) and after["x"] >= 0  # stuck to the left edge
            last = [c for c in table.find_elements(By.CSS_SELECTOR, "tbody tr:first-child td") if c.is_displayed()][-1]
            assert (
                last.rect["x"] >= 0 and last.rect["x"] + last.rect["width"] <= viewport + 1
            )  # the last score came into view
            assert last.rect["x"] >= after["x"] + after["width"] - 1  # beside the model column, not under it
            browser.execute_script("arguments[0].scrollLeft = 0", scroller)
        if width == 400:  # "Model details" shows the metadata columns, inside the table's own scroll box
            toggle = browser.find_element(By.CSS_SELECTOR, f'.controls[data-for="{table_id}"] input.show-details')
            toggle.click()
            assert meta.is_displayed()
            assert browser.execute_script("return document.documentElement.scrollWidth") <= viewport
            toggle.click()
            if not rejected:
                _screenshot(browser, tmp_path / "leaderboard-400.png", suffix="-400", width=400)
        # every prose note opened (papers, run records): still no sideways scroll
        browser.execute_script("document.querySelectorAll('details').forEach(function (d) { d.open = true; })")
        assert browser.execute_script("return document.documentElement.scrollWidth") <= viewport, width
        if width in (768, 320) and not rejected and os.environ.get("LEADERBOARD_SCREENSHOT"):
            browser.get(base + "index.html")  # as a phone opens it: filters folded
            _screenshot(browser, tmp_path / f"leaderboard-{width}.png", suffix=f"-{width}", width=width)
    assert _console_errors(browser) == []

    # the model page of PromptEOL without an instruction template: its facts, and no sideways scroll at 320 px
    browser.get(f"{base}models/{ids[SMOLLM]}.html")
    browser.execute_script("document.querySelectorAll('details').forEach(function (d) { d.open = true; })")
    facts = browser.find_element(By.CSS_SELECTOR, "table.facts").text
    for text in (
        "License apache-2.0",
        "Released 2024-10-31",
        "Max tokens 8192",
        "Follows instructions no: instruction-blind",
        "gave the same model input",
    ):
        assert text in facts, text
    assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    assert _console_errors(browser) == []


def test_rank_by_borda_and_filters(browser, serve, demo_results, tmp_path):
    """ "Rank by: Borda" shows and sorts by borda_rank, "Mean" restores the served order; the family, size,
    instruction-aware and verified filters combine with the text filter, and the count follows."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    inputs, _ = _inputs(demo_results, tmp_path, rejected=False)
    site = tmp_path / "site"
    data = build(inputs, site).data
    (suite,) = data["suites"]
    table = f"table-{suite['name']}"
    browser.get(serve(site) + "index.html")
    controls = browser.find_element(By.CSS_SELECTOR, f'.controls[data-for="{table}"]')

    def rows() -> list:
        return browser.find_elements(By.CSS_SELECTOR, f"#{table} tbody tr")

    def count() -> str:
        return controls.find_element(By.CSS_SELECTOR, ".count").text

    controls.find_element(By.CSS_SELECTOR, '.rank-by input[value="borda"]').click()
    by_borda = sorted(suite["rows"], key=lambda r: (r["borda_rank"] is None, r["borda_rank"] or 0))
    assert [r.get_attribute("data-model-id") for r in rows()] == [r["model_id"] for r in by_borda]
    assert [r.find_element(By.CSS_SELECTOR, "td.rank").text for r in rows()] == [
        "—" if r["borda_rank"] is None else str(r["borda_rank"]) for r in by_borda
    ]
    controls.find_element(By.CSS_SELECTOR, '.rank-by input[value="mean"]').click()
    _rank_order(browser, data, suite)

    models = {m["id"]: m for m in data["models"]}
    total = len(suite["rows"])
    Select(controls.find_element(By.CSS_SELECTOR, "select.f-family")).select_by_visible_text("prompteol")
    assert count() == f"1 of {total} shown"
    shown = [r.get_attribute("data-model-id") for r in rows() if r.is_displayed()]
    assert shown == [r["model_id"] for r in suite["rows"] if models[r["model_id"]]["family"] == "prompteol"]
    Select(controls.find_element(By.CSS_SELECTOR, "select.f-family")).select_by_index(0)
    controls.find_element(By.CSS_SELECTOR, "input.f-aware").click()
    aware = [r["model_id"] for r in suite["rows"] if models[r["model_id"]]["instruction_aware"] is True]
    assert [r.get_attribute("data-model-id") for r in rows() if r.is_displayed()] == aware and aware
    controls.find_element(By.CSS_SELECTOR, "input.filter").send_keys("template=prefix")
    assert count() == f"1 of {total} shown"
    controls.find_element(By.CSS_SELECTOR, "input.f-verified").click()  # nothing verified here
    assert count() == f"0 of {total} shown"
    assert _console_errors(browser) == []


@pytest.mark.parametrize("width", [1400, 320])
def test_sensitivity_section_fits_a_phone(browser, serve, demo_results, tmp_path, width):
    """The instruction-sensitivity plot shrinks into the window; its table scrolls inside its own box."""
    from selenium.webdriver.common.by import By
    from test_leaderboard import variant_submission

    site = tmp_path / "site"
    build([variant_submission(demo_results, tmp_path)], site)
    browser.set_window_size(width, 900)
    browser.get(serve(site) + "index.html")
    viewport = browser.execute_script("return window.innerWidth")
    assert browser.execute_script("return document.documentElement.scrollWidth") <= viewport
    plot = browser.find_element(By.CSS_SELECTOR, "#sensitivity svg.plot").rect
    assert plot["x"] >= 0 and plot["x"] + plot["width"] <= viewport
    assert len(browser.find_elements(By.CSS_SELECTOR, "#sensitivity circle.variant-dot")) == 9
    assert browser.find_element(By.ID, "stability-DemoInstructSTS").rect["width"] <= viewport
    assert _console_errors(browser) == []


def test_partial_suite_shows_a_score_first_on_a_phone(browser, serve, gst_partial_results, tmp_path):
    """GSTransform with 5 of its 9 tasks (the offline case) at 320 px: once the table's top is in view, a cell
    of the first row holds a number inside the window (before, the first columns were empty type means and
    an empty Mean); the partial Mean says how partial ("(4 of 9)") and the ranking rule is printed under the table."""
    from selenium.webdriver.common.by import By

    from bench.results.comparability import RULE

    root, data_dir = gst_partial_results
    site = tmp_path / "site"
    build([root], site, data_dirs=[data_dir])
    browser.set_window_size(320, 900)
    browser.get(serve(site) + "index.html")
    viewport, height = browser.execute_script("return [window.innerWidth, window.innerHeight]")
    table = browser.find_element(By.ID, "table-gstransform")
    scroller = browser.find_element(By.CSS_SELECTOR, "#suite-gstransform .scroll")
    browser.execute_script("arguments[0].scrollLeft = 0; arguments[1].scrollIntoView()", scroller, table)
    first_row = table.find_elements(By.CSS_SELECTOR, "tbody tr:first-child td:not(.rank):not(.model)")
    in_view = [
        c
        for c in first_row
        if c.is_displayed()
        and c.text.split(" ")[0].replace(".", "", 1).lstrip("-").isdigit()
        and c.rect["x"] >= 0
        and c.rect["x"] + c.rect["width"] <= viewport
        and c.rect["y"] >= 0
        and c.rect["y"] + c.rect["height"] <= height
    ]
    assert in_view, [(c.text, c.rect) for c in first_row[:4]]
    assert in_view[0].text.endswith(" of 9)")  # the first score in view is the partial Mean, saying how partial
    assert browser.find_elements(By.CSS_SELECTOR, "#table-gstransform th.tmean") == []  # no column nobody fills
    assert RULE in browser.find_element(By.CSS_SELECTOR, "#suite-gstransform p.rank-rule").text
    assert browser.execute_script("return document.documentElement.scrollWidth") <= viewport


@pytest.mark.parametrize("width", [1400, 400])
def test_one_suite_at_a_time_one_line_rows_intervals_ties_and_shift_plot(browser, serve, demo_results, tmp_path, width):
    """Issue 42's board at scale and its uncertainty, issue 44's shift plot, at 1400 and 400 px: the page shows
    one suite at a time (its tab picks it), each row is one line tall, an average shows its 95% interval (a
    reported row says it has none), overlapping rows' ranks carry the tied mark, "open weights only" keeps the
    open models, and the shift-vs-gain plot fits the window with its four quadrants labelled."""
    from selenium.webdriver.common.by import By
    from test_intervals import DEMO_TABLE
    from test_shift_gain import add_shifts

    from bench.leaderboard.external import reported_rows
    from bench.leaderboard.intervals import NO_ITEMS
    from bench.results.literature import all_tables, load_table

    inputs, _ = _inputs(demo_results, tmp_path, rejected=False)
    add_shifts(inputs[0])
    site = tmp_path / "site"
    data = build(inputs, site, external=reported_rows([*all_tables(), load_table(DEMO_TABLE)])).data
    names = [s["name"] for s in data["suites"]]
    (suite,) = [s for s in data["suites"] if s["name"] == "demo"]
    assert len(names) > 1 and names[0] == "demo"
    browser.set_window_size(width, 900)
    browser.get(serve(site) + "index.html")
    viewport = browser.execute_script("return window.innerWidth")

    def shown() -> list[str]:
        return [
            s.get_attribute("id") for s in browser.find_elements(By.CSS_SELECTOR, "section.suite") if s.is_displayed()
        ]

    assert shown() == ["suite-demo"]
    other = browser.find_element(By.CSS_SELECTOR, f'nav.suites a[data-suite="{names[1]}"]')
    other.click()
    assert shown() == [f"suite-{names[1]}"] and other.get_attribute("aria-current") == "page"
    _show_suite(browser, "demo")
    assert shown() == ["suite-demo"]
    assert browser.execute_script("return document.documentElement.scrollWidth") <= viewport

    rows = browser.find_elements(By.CSS_SELECTOR, "#table-demo tbody tr")
    assert [r.get_attribute("data-model-id") for r in rows] == [r["model_id"] for r in suite["rows"]]
    for row, r in zip(rows, suite["rows"], strict=True):
        cell = row.find_element(By.CSS_SELECTOR, "td.model")
        line = browser.execute_script("return parseFloat(getComputedStyle(arguments[0]).lineHeight)", cell)
        assert row.rect["height"] < 2 * line, (width, r["model_id"])  # one line, not name + setting + marks
        rank = row.find_element(By.CSS_SELECTOR, "td.rank")
        mark = browser.execute_script("return getComputedStyle(arguments[0], '::after').content", rank)
        assert (mark == '"≈"') == r["tied"], (width, r["model_id"])
        ci = row.find_elements(By.CSS_SELECTOR, "td.avg .ci")
        if r["interval"] is not None:
            assert ci[0].text == f"{r['interval'][0]:.2f}–{r['interval'][1]:.2f}"
        elif r["source"] == "reported" and r["average"] is not None:
            assert ci[0].text == "no CI" and ci[0].get_attribute("title") == NO_ITEMS["reported"]
    assert sum(r["tied"] for r in suite["rows"]) == 2  # the two ranked demo settings: their intervals overlap

    controls = browser.find_element(By.CSS_SELECTOR, '.controls[data-for="table-demo"]')
    folded = controls.find_element(By.CSS_SELECTOR, "details.filters")
    if not folded.get_attribute("open"):  # a phone opens with the filters folded
        folded.find_element(By.TAG_NAME, "summary").click()
    controls.find_element(By.CSS_SELECTOR, "input.f-open").click()
    models = {m["id"]: m for m in [*data["models"], *data["external"]]}
    open_ids = [r["model_id"] for r in suite["rows"] if models[r["model_id"]]["open_weights"] is True]
    assert open_ids and len(open_ids) < len(suite["rows"])
    assert [r.get_attribute("data-model-id") for r in rows if r.is_displayed()] == open_ids
    controls.find_element(By.CSS_SELECTOR, "input.f-open").click()

    plot = browser.find_element(By.CSS_SELECTOR, "#suite-demo svg.plot.shift")
    browser.execute_script("arguments[0].scrollIntoView()", plot)
    assert plot.rect["x"] >= 0 and plot.rect["x"] + plot.rect["width"] <= viewport
    assert len(plot.find_elements(By.CSS_SELECTOR, "text.quadrant")) == 4
    assert len(plot.find_elements(By.CSS_SELECTOR, "circle.shift-dot")) == len(suite["shift_gain"]["points"]) == 2
    assert browser.execute_script("return document.documentElement.scrollWidth") <= viewport
    _screenshot(browser, tmp_path / f"board-{width}.png", suffix=f"-board-{width}", width=width)
    assert _console_errors(browser) == []


def _screenshot(driver, shot: Path, *, suffix: str, width: int = 1400) -> None:
    """Whole page at `width` px to `shot`, copied to $LEADERBOARD_SCREENSHOT (with `suffix` before its extension)."""
    driver.set_window_size(width, 900)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    chrome = 900 - driver.execute_script("return window.innerHeight")  # the window's own bars, not page
    driver.set_window_size(width, min(max(900, height + chrome + 20), 6000))
    assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    if os.environ.get("LEADERBOARD_SCREENSHOT"):
        target = Path(os.environ["LEADERBOARD_SCREENSHOT"])
        target = target.with_name(f"{target.stem}{suffix}{target.suffix}")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, target)


def test_site_from_given_results(browser, serve, tmp_path):
    from selenium.webdriver.common.by import By

    if not os.environ.get("LEADERBOARD_RESULTS"):
        pytest.skip("set LEADERBOARD_RESULTS=DIR[:DIR...] (and LEADERBOARD_DATA_DIR) to check a site built from them")
    data_dirs = [Path(d) for d in os.environ.get("LEADERBOARD_DATA_DIR", "").split(":") if d]
    result = build(os.environ["LEADERBOARD_RESULTS"].split(":"), tmp_path / "site", data_dirs=data_dirs)
    assert not result.rejected, [r.summary() for r in result.rejected]
    base = serve(tmp_path / "site")
    browser.get(base + "index.html")
    for suite in result.data["suites"]:
        _show_suite(browser, suite["name"])
        table = f"table-{suite['name']}"
        th = browser.find_elements(By.CSS_SELECTOR, f"#{table} thead th")[1]
        th.find_element(By.TAG_NAME, "button").click()
        names = [v.lower() for v in _column(browser, table, 1)]
        assert names == sorted(names) and th.get_attribute("aria-sort") == "ascending"
        th.find_element(By.TAG_NAME, "button").click()  # and back
    browser.get(base + "index.html")
    for suite in result.data["suites"]:
        _show_suite(browser, suite["name"])
        _rank_order(browser, result.data, suite)
    assert _console_errors(browser) == []
    _screenshot(browser, tmp_path / "leaderboard-results.png", suffix="-results")


def _published_site(tmp_path: Path) -> tuple[Path, dict]:
    """A site of MTEB's published rows (the mimic of MTEB's results repository) beside the papers' reported
    rows, no submitted run, plus one row built here that MTEB's registry would say was trained on STS12
    (a stand-in for a not zero-shot model: the mimic's models are all zero-shot on these suites)."""
    from dataclasses import replace

    from bench.leaderboard.external import reported_rows
    from bench.leaderboard.mteb_published import published

    found = published(Path(__file__).parent.parent / "fixtures" / "mteb_results")
    mxbai = next(r for r in found.rows if r.model == "mixedbread-ai/mxbai-embed-large-v1")
    trained = replace(mxbai, model="example/trained-on-sts12", training=frozenset({"STS12", "MSMARCO"}))
    empty = tmp_path / "no-runs"
    empty.mkdir()
    site = tmp_path / "site"
    data = build([empty], site, external=[*reported_rows(), *found.rows, trained], excluded=found.excluded).data
    return site, data


@pytest.mark.parametrize("width", [1400, 400])
def test_published_marks_zero_shot_filter_and_comparable_switch(browser, serve, tmp_path, width):
    """Issue 42 at 1400 and 400 px: a published cell on an older metric or dataset revision carries its mark
    (ᴹ, ᴿ) with its words; the zero-shot filter keeps MTEB's three settings (allow all, remove unknown, only
    zero-shot); "comparable with harness runs only" hides the rows with a marked cell; the models left out
    are listed with why; nothing scrolls the page sideways."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    site, data = _published_site(tmp_path)
    browser.set_window_size(width, 900)
    browser.get(serve(site) + "index.html")
    suites = {s["name"]: s for s in data["suites"]}

    def shown(suite: str) -> list[str]:
        rows = browser.find_elements(By.CSS_SELECTOR, f"#table-{suite} tbody tr")
        return [r.get_attribute("data-model-id") for r in rows if r.is_displayed()]

    def controls(suite: str):
        found = browser.find_element(By.CSS_SELECTOR, f'.controls[data-for="table-{suite}"]')
        details = found.find_element(By.CSS_SELECTOR, "details.filters")
        if not details.get_attribute("open"):  # closed on a phone
            details.find_element(By.TAG_NAME, "summary").click()
        return found

    # the marks: e5-small's SciDocsRR on generic, an older MTEB's `map` on an older dataset revision
    _show_suite(browser, "generic")  # the page shows one suite at a time: its tab first
    e5 = browser.find_element(
        By.CSS_SELECTOR, '#table-generic tr[data-model-id="mteb||intfloat/multilingual-e5-small"]'
    )
    marks = e5.find_elements(By.CSS_SELECTOR, "sup.cell-mark")
    assert {m.text for m in marks} == {"ᴹ", "ᴿ"}
    assert any("map_at_1000" in m.get_attribute("title") for m in marks)

    # zero-shot on generic-sts: e5-small and mxbai yes, the stand-in row no (STS12), the papers' rows unknown
    sts = suites["generic-sts"]
    zero = {r["model_id"]: r["zero_shot"] for r in sts["rows"]}
    assert zero["mteb||example/trained-on-sts12"] == "no" and "unknown" in zero.values()
    _show_suite(browser, "generic-sts")
    box = controls("generic-sts")
    select = Select(box.find_element(By.CSS_SELECTOR, "select.f-zero-shot"))
    select.select_by_value("yes")
    assert shown("generic-sts") == [r["model_id"] for r in sts["rows"] if r["zero_shot"] == "yes"]
    select.select_by_value("known")
    assert shown("generic-sts") == [r["model_id"] for r in sts["rows"] if r["zero_shot"] != "unknown"]
    select.select_by_value("")
    assert len(shown("generic-sts")) == len(sts["rows"])
    cell = browser.find_element(
        By.CSS_SELECTOR, '#table-generic-sts tr[data-model-id="mteb||example/trained-on-sts12"] td.zs'
    )
    assert cell.get_attribute("textContent") == "no (1)" and "STS12" in cell.get_attribute("title")

    # comparable with harness runs only: generic's rows with a marked cell hidden, the others kept
    generic = suites["generic"]
    _show_suite(browser, "generic")
    box = controls("generic")
    box.find_element(By.CSS_SELECTOR, "input.f-comparable").click()
    kept = [r["model_id"] for r in generic["rows"] if r["comparable_with_runs"]]
    assert shown("generic") == kept and "mteb||intfloat/multilingual-e5-small" not in kept and kept
    box.find_element(By.CSS_SELECTOR, "input.f-comparable").click()
    assert len(shown("generic")) == len(generic["rows"])

    # the models left out, each with why, reachable from the top
    assert browser.find_element(By.CSS_SELECTOR, 'nav.suites a[href="#excluded"]').text == "left out (2)"
    listed = browser.find_element(By.ID, "excluded").text
    assert "openai/text-embedding-3-small" in listed.replace("\n", "") and "lacks STS13, STS14" in listed
    assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    assert _console_errors(browser) == []
