"""One import package: the wheel installs `bench` and nothing else, and a user's own `tasks/`,
`adapters/` or `leaderboard/` package (common in research repositories) never shadows the harness."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT
from helpers import copy_working_tree, missing_output

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built from a copy of the working tree (the checkout gets no build/ folder)."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = copy_working_tree(tmp / "src")
    # setuptools at hand: no isolated build environment to download
    isolation = [] if importlib.util.find_spec("setuptools") is None else ["--no-build-isolation"]
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *isolation, "-w", str(tmp / "dist"), str(source)],
        check=True,
        capture_output=True,
        timeout=1800,
    )
    [built] = (tmp / "dist").glob("instruct_bench-*.whl")
    return built


def test_the_wheel_holds_exactly_one_top_level_package(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")} == {"bench"}
    top_level = [n for n in names if n.endswith(".dist-info/top_level.txt")]
    if top_level:  # setuptools writes it; other backends need not
        assert zipfile.ZipFile(wheel).read(top_level[0]).decode().split() == ["bench"]


def test_the_wheel_carries_the_package_data(wheel: Path):
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "bench/tasks/demo_data/DemoInstructSTS/test.jsonl",
        "bench/tasks/instruction_variants/demo.yaml",
        "bench/tasks/descriptive_stats/STS/DemoInstructSTS.json",  # MTEB reads them from the installed package
        "bench/tasks/descriptive_stats/STS/SICK-R-SentEval.json",
        "bench/leaderboard/templates/index.html",
        "bench/leaderboard/schemas/result.schema.json",
        "bench/leaderboard/static/leaderboard.js",
    ):
        assert needed in names, needed
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/", "docs/"))]


def _readme_demo_scores() -> str:
    """The score table the README shows after `python -m bench run` (the first table of its first `text` block)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^```text\n(.*?)^```$", text, re.MULTILINE | re.DOTALL).group(1)
    return block.split("\n\n")[0]


def test_bench_runs_beside_a_users_own_tasks_adapters_and_leaderboard(tmp_path: Path, session_cache: Path):
    """The user's packages raise when imported: the harness must use none of them (vectors may come from
    the session's cache: the import path is what is tested)."""
    home = tmp_path / "research-repo"
    for name in ("tasks", "adapters", "leaderboard", "dataset_builders"):
        (home / name).mkdir(parents=True)
        (home / name / "__init__.py").write_text(
            f"raise ImportError('the harness imported the user\\'s own {name} package')\n", encoding="utf-8"
        )
    env = {**os.environ, "INSTRUCT_BENCH_CACHE": str(session_cache), "COLUMNS": "200"}
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "run", "--output-dir", str(tmp_path / "out")],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    scores = _readme_demo_scores()
    assert scores.count("| Demo") == 3 and "| Average (demo)" in scores
    assert missing_output(scores, proc.stdout) is None, missing_output(scores, proc.stdout)
