"""Rebuild the README's leaderboard screenshots from real runs.

    python tools/leaderboard_screenshots.py RUN_DIR [RUN_DIR ...] --out docs/ [--verify RUN_DIR]

Each RUN_DIR (a `bench run --output-dir`) is packed with `bench submit` as its own submission, as a
researcher would send them; `--verify` re-runs one of them with `bench leaderboard verify` so that its
verified mark shows; then `bench leaderboard build` writes the site, and headless Chromium (Debian
packages `chromium` and `chromium-driver`, selenium from the dev extras) takes the first screen of it
at 1400 px (`leaderboard.png`) and at a phone's 400 px (`leaderboard-phone.png`).

The commands the README shows made the runs (docs/reference/leaderboard.md#reading-the-leaderboard).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SHOTS = {"leaderboard.png": (1400, 1000), "leaderboard-phone.png": (400, 860)}


def bench(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "bench", *args], check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=Path("docs"))
    parser.add_argument("--verify", type=Path, action="append", default=[])
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lb-shots-"))
    zips = []
    for run in args.runs:
        target = work / f"{run.name}.zip"
        bench("submit", str(run), "--out", str(target))
        zips.append(target)
    checks = []
    for run in args.verify:
        check = work / f"{run.name}.verification.json"
        bench("leaderboard", "verify", str(work / f"{run.name}.zip"), "--out", str(check))
        checks += ["--verification", str(check)]
    site = work / "site"
    bench("leaderboard", "build", "--results", *map(str, zips), *checks, "--out", str(site))
    shoot(site / "index.html", args.out)
    print(f"screenshots in {args.out}; site in {site}")
    return 0


def shoot(page: Path, out: Path) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1"):
        options.add_argument(flag)
    options.binary_location = next(
        shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)
    )
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    try:
        for name, (width, height) in SHOTS.items():
            driver.set_window_size(width, height)
            driver.get(page.as_uri())
            chrome = height - driver.execute_script("return window.innerHeight")
            driver.set_window_size(width, height + chrome)  # the page itself is width x height
            driver.save_screenshot(str(out / name))
    finally:
        driver.quit()


if __name__ == "__main__":
    raise SystemExit(main())
