"""The built site in a real headless Chromium, opened from disk (file://): sorting, filtering, rank order,
escaping, the sticky model column on a phone-sized window, no console errors, screenshots at 1400 and 400 px.

Needs the Debian packages `chromium` and `chromium-driver` (and selenium from the dev extras); the test
is skipped, saying so, where they are missing. The screenshots land in the test's tmp folder and, when
$LEADERBOARD_SCREENSHOT names a file, there too (the 400 px one with `-400` before the extension):

    LEADERBOARD_SCREENSHOT=/tmp/leaderboard.png python -m pytest tests/test_leaderboard_browser.py

With $LEADERBOARD_RESULTS (paths separated by ':', e.g. a `bench run --output-dir`) and optionally
$LEADERBOARD_DATA_DIR, a second test builds the site from those results, checks every table sorts,
and saves a full-page screenshot beside $LEADERBOARD_SCREENSHOT (`-results` added to its name).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from leaderboard import build
from leaderboard_fixtures import copy_results, demo_results  # noqa: F401 (fixture)
from test_leaderboard import HOSTILE, make_hostile

pytestmark = pytest.mark.slow

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
CHROMEDRIVER = shutil.which("chromedriver")
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--window-size=1400,900",
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
    yield driver
    driver.quit()


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


def test_site_sorts_escapes_and_screenshots(browser, demo_results, tmp_path):
    from selenium.webdriver.common.by import By

    hostile = copy_results(demo_results, tmp_path / "hostile")
    make_hostile(hostile)
    for folder in list(hostile.rglob("experiments")):  # keep only the renamed default setting
        shutil.rmtree(folder)
    site = tmp_path / "site"
    result = build([demo_results, hostile], site)
    assert not result.rejected
    browser.get((site / "index.html").as_uri())
    assert browser.title == "instruct-bench leaderboard"  # the hostile onerror handler never ran
    data = json.loads((site / "leaderboard.json").read_text())
    (suite,) = [s for s in data["suites"] if s["name"] == "demo"]
    _rank_order(browser, data, suite)
    assert [r["rank"] for r in suite["rows"] if not r["baseline"]] == [1, 1]  # default and its renamed (hostile) copy tie

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
    expected = sorted((r["scores"]["DemoNYTClustering"] for s in data["suites"] if s["name"] == "demo" for r in s["rows"]), reverse=True)
    assert values == pytest.approx(expected)
    assert _column(browser, table, avg) != before  # the order really changed (NYT and Avg rank differently)

    headers[nyt].find_element(By.TAG_NAME, "button").click()
    assert headers[nyt].get_attribute("aria-sort") == "ascending"
    assert [float(v) for v in _column(browser, table, nyt)] == pytest.approx(sorted(expected))

    # the hostile model name is shown as text, and the only script on the page is the site's own
    names = [r.find_element(By.TAG_NAME, "a").text for r in browser.find_elements(By.CSS_SELECTOR, f"#{table} tbody tr")]
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


@pytest.mark.parametrize("width", [1400, 400, 320])
def test_phone_width_keeps_the_model_in_view(browser, demo_results, tmp_path, width):
    """The page itself never scrolls sideways. At 1400 px the demo table fits; at phone widths it scrolls,
    with the rank and model columns kept in view."""
    from selenium.webdriver.common.by import By

    site = tmp_path / "site"
    build([demo_results], site)
    browser.set_window_size(width, 900)
    browser.get((site / "index.html").as_uri())
    viewport = browser.execute_script("return window.innerWidth")
    assert viewport <= width
    assert browser.execute_script("return document.documentElement.scrollWidth") <= viewport  # no page-wide overflow
    scroller = browser.find_element(By.CSS_SELECTOR, "#suite-demo .scroll")
    hidden = browser.execute_script("return arguments[0].scrollWidth - arguments[0].clientWidth", scroller)
    if width == 1400:
        assert hidden == 0  # every column in view, no sideways scrolling
        return
    assert hidden > 0  # the scores do not fit: the table scrolls
    cell = browser.find_element(By.CSS_SELECTOR, "#table-demo tbody tr td.model")
    last = browser.find_elements(By.CSS_SELECTOR, "#table-demo tbody tr:first-child td")[-1]
    before = cell.rect
    assert before["x"] + before["width"] <= viewport
    browser.execute_script("arguments[0].scrollLeft = arguments[0].scrollWidth", scroller)
    after = cell.rect
    assert after["x"] == pytest.approx(before["x"], abs=1) and after["x"] >= 0  # stuck to the left edge
    assert 0 <= last.rect["x"] and last.rect["x"] + last.rect["width"] <= viewport + 1  # the average came into view
    assert last.rect["x"] >= after["x"] + after["width"] - 1  # beside the model column, not under it
    assert _console_errors(browser) == []
    if width == 400:
        browser.execute_script("arguments[0].scrollLeft = 0", scroller)
        _screenshot(browser, tmp_path / "leaderboard-400.png", suffix="-400", width=400)


@pytest.mark.parametrize("width", [1400, 320])
def test_sensitivity_section_fits_a_phone(browser, demo_results, tmp_path, width):
    """The instruction-sensitivity plot shrinks into the window; its table scrolls inside its own box."""
    from selenium.webdriver.common.by import By

    from test_leaderboard import variant_submission

    site = tmp_path / "site"
    build([variant_submission(demo_results, tmp_path)], site)
    browser.set_window_size(width, 900)
    browser.get((site / "index.html").as_uri())
    viewport = browser.execute_script("return window.innerWidth")
    assert browser.execute_script("return document.documentElement.scrollWidth") <= viewport
    plot = browser.find_element(By.CSS_SELECTOR, "#sensitivity svg.plot").rect
    assert plot["x"] >= 0 and plot["x"] + plot["width"] <= viewport
    assert len(browser.find_elements(By.CSS_SELECTOR, "#sensitivity circle.variant-dot")) == 9
    assert browser.find_element(By.ID, "stability-DemoInstructSTS").rect["width"] <= viewport
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


def test_site_from_given_results(browser, tmp_path):
    from selenium.webdriver.common.by import By

    if not os.environ.get("LEADERBOARD_RESULTS"):
        pytest.skip("set LEADERBOARD_RESULTS=DIR[:DIR...] (and LEADERBOARD_DATA_DIR) to check a site built from them")
    data_dirs = [Path(d) for d in os.environ.get("LEADERBOARD_DATA_DIR", "").split(":") if d]
    result = build(os.environ["LEADERBOARD_RESULTS"].split(":"), tmp_path / "site", data_dirs=data_dirs)
    assert not result.rejected, [r.summary() for r in result.rejected]
    browser.get((tmp_path / "site" / "index.html").as_uri())
    for suite in result.data["suites"]:
        table = f"table-{suite['name']}"
        th = browser.find_elements(By.CSS_SELECTOR, f"#{table} thead th")[1]
        th.find_element(By.TAG_NAME, "button").click()
        names = [v.lower() for v in _column(browser, table, 1)]
        assert names == sorted(names) and th.get_attribute("aria-sort") == "ascending"
        th.find_element(By.TAG_NAME, "button").click()  # and back
    browser.get((tmp_path / "site" / "index.html").as_uri())
    for suite in result.data["suites"]:
        _rank_order(browser, result.data, suite)
    assert _console_errors(browser) == []
    _screenshot(browser, tmp_path / "leaderboard-results.png", suffix="-results")
