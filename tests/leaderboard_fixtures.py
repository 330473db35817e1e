"""Real result files for the leaderboard tests: the demo suite run by `bench run` with the default model.

Two settings (instruction template `prefix`, the default, and `none`), so tables have two rows whose
order differs by column. Made once per test session; tests copy the folder before changing it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.runner import RunOptions, run


@pytest.fixture(scope="session")
def demo_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lb-results")
    cache = root.parent / "lb-cache"
    for template in (None, "none"):
        run(RunOptions(suite="demo", template=template, output_dir=str(root), cache_dir=str(cache), show_progress_bar=False))
    return root


def copy_results(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def result_files(root: Path, task: str, *, experiment: bool = False) -> tuple[Path, Path]:
    """(result file, run record) of `task` in the default setting (or in the experiment)."""
    for path in sorted(root.rglob(f"{task}.json")):
        if path.parent.name == "run_records" or ("experiments" in path.parts) != experiment:
            continue
        return path, path.parent / "run_records" / path.name
    raise FileNotFoundError(task)


def edit_json(path: Path, change: Callable[[Any], Any]) -> None:
    """Apply `change` (which mutates the parsed JSON in place) and write the file back."""
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
