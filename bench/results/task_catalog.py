"""What the summary table needs to know about tasks, readable without importing them (or MTEB).

`bench results DIR` prints suite averages and per-task sub-scores, which need each task's main score,
its `detail_scores` and the suites; importing `bench.tasks` for that costs MTEB's import (seconds). So
the catalogue is derived from the task classes once and kept in the cache
(`$INSTRUCT_BENCH_CACHE/catalog/tasks-<fingerprint>.json`), keyed by a fingerprint of every source
file of `bench/tasks/` and the installed MTEB: a new task file, an edited one or another MTEB makes
another key, so the catalogue is never stale and nothing is stored in the repository (a task is one
file, with no second edit). When `bench.tasks` is already imported (`bench run`), the live registry is
used and written to the cache, so `bench results` after a run starts without MTEB. A cache that
cannot be written costs only speed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import sys
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from bench.core.errors import StorageError
from bench.core.fileio import atomic_write_json
from bench.core.paths import cache_root

logger = logging.getLogger(__name__)

TASKS_DIR = Path(__file__).resolve().parents[1] / "tasks"


def build(*, own_only: bool = False) -> dict[str, Any]:
    """The catalog from the task classes themselves (imports `bench.tasks`, hence MTEB).

    `own_only` keeps the classes defined in `bench/tasks/` (what the fingerprint covers), leaving out
    tasks a script or a test registered in this process.
    """
    from bench.tasks import SUITES, TASKS

    tasks = {n: c for n, c in TASKS.items() if not own_only or c.__module__.startswith("bench.tasks.")}
    return {
        "suites": {suite: [t for t in members if t in tasks] for suite, members in SUITES.items()},
        "tasks": {
            name: {"main_score": cls.metadata.main_score, "detail_scores": getattr(cls, "detail_scores", None)}
            for name, cls in tasks.items()
        },
    }


def fingerprint() -> str:
    """sha256 of the task sources (every `*.py` under bench/tasks, by relative path) and MTEB's version."""
    digest = hashlib.sha256()
    for path in sorted(TASKS_DIR.rglob("*.py")):
        digest.update(path.relative_to(TASKS_DIR).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    with contextlib.suppress(metadata.PackageNotFoundError):
        digest.update(metadata.version("mteb").encode())
    return digest.hexdigest()


def catalog_path() -> Path:
    return cache_root() / "catalog" / f"tasks-{fingerprint()[:16]}.json"


def catalog() -> dict[str, Any]:
    """The live registry when `bench.tasks` is imported (caching its own tasks once), else the cached file."""
    if "bench.tasks" in sys.modules:
        _cache_once()
        return build()
    return _cached()


@cache
def _cache_once() -> None:
    path = catalog_path()
    if not path.is_file():
        _write(path, build(own_only=True))


@cache
def _cached() -> dict[str, Any]:
    path = catalog_path()
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        logger.debug("no task catalogue at %s: importing the tasks", path)
    built = build(own_only=True)
    _write(path, built)
    return built


def _write(path: Path, built: dict[str, Any]) -> None:
    try:
        atomic_write_json(path, built, what="task catalogue", option="$INSTRUCT_BENCH_CACHE")
    except (StorageError, OSError) as e:  # a read-only or full cache costs only speed
        logger.debug("task catalogue not cached: %s", e)


def suites() -> dict[str, tuple[str, ...]]:
    return {suite: tuple(members) for suite, members in catalog()["suites"].items()}


def main_scores() -> dict[str, str]:
    return {name: facts["main_score"] for name, facts in catalog()["tasks"].items()}


def detail_scores(task_name: str) -> dict[str, str] | None:
    facts = catalog()["tasks"].get(task_name)
    return facts["detail_scores"] if facts else None
