"""What the summary table needs to know about tasks, readable without importing them (or MTEB).

`bench results DIR` prints suite averages and per-task sub-scores, which need each task's main score,
its `detail_scores` and the suites; importing `tasks` for that costs MTEB's import (~2 s). This module
serves those facts from `task_catalog.json`, generated from the task classes:

    python -m bench.results.task_catalog     # rewrite bench/results/task_catalog.json after adding or changing a task

`tests/test_imports.py` fails when the file and the classes disagree. When `tasks` is already
imported (`bench run`), the live registry is used instead, so the file is only a start-up shortcut.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

CATALOG_PATH = Path(__file__).with_name("task_catalog.json")


def build() -> dict[str, Any]:
    """The catalog from the task classes themselves (imports `tasks`, hence MTEB)."""
    from bench.tasks import SUITES, TASKS

    return {
        "suites": {suite: list(members) for suite, members in SUITES.items()},
        "tasks": {
            name: {"main_score": cls.metadata.main_score, "detail_scores": getattr(cls, "detail_scores", None)}
            for name, cls in TASKS.items()
        },
    }


@cache
def _stored() -> dict[str, Any]:
    return json.loads(CATALOG_PATH.read_text(encoding="utf-8"))


def catalog() -> dict[str, Any]:
    """The live registry when `tasks` is imported, else the stored file."""
    return build() if "bench.tasks" in sys.modules else _stored()


def suites() -> dict[str, tuple[str, ...]]:
    return {suite: tuple(members) for suite, members in catalog()["suites"].items()}


def main_scores() -> dict[str, str]:
    return {name: facts["main_score"] for name, facts in catalog()["tasks"].items()}


def detail_scores(task_name: str) -> dict[str, str] | None:
    facts = catalog()["tasks"].get(task_name)
    return facts["detail_scores"] if facts else None


def write() -> None:
    CATALOG_PATH.write_text(json.dumps(build(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write()
    print(f"wrote {CATALOG_PATH}")
