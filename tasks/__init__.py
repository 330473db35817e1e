"""The harness's MTEB tasks and the suites that group them.

Each task is an MTEB task class: pass instances to `mteb.evaluate(model, tasks=[IntentEmotion()])`.
`get_tasks` resolves names (with close-match suggestions) and passes `data_dir`, `limit` and `seed`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bench.errors import UnknownNameError
from tasks.demo import DemoInstructSTS, DemoIntentEmotion, DemoNYTClustering
from tasks.instruct_stsb import InstructSTSB
from tasks.intent_emotion import IntentEmotion
from tasks.nyt_clustering import NYTClustering

if TYPE_CHECKING:
    from collections.abc import Iterable

    from tasks.abstasks import InstructionTask

TASKS: dict[str, type[InstructionTask]] = {
    cls.metadata.name: cls
    for cls in (IntentEmotion, InstructSTSB, NYTClustering, DemoIntentEmotion, DemoInstructSTS, DemoNYTClustering)
}

SUITES: dict[str, tuple[str, ...]] = {
    "demo": ("DemoIntentEmotion", "DemoInstructSTS", "DemoNYTClustering"),
    "awareness": ("IntentEmotion", "InstructSTSB", "NYTClustering"),
}
SUITE_DESCRIPTIONS: dict[str, str] = {
    "demo": "small offline demo data shipped with the package (default)",
    "awareness": "InBedder instruction-awareness tests (paper §3.2, Table 1)",
}
DEFAULT_SUITE = "demo"


def task_names(*, tasks: Iterable[str] | None = None, suite: str | None = None) -> list[str]:
    """Resolve `--tasks` / `--suite` to registered task names, failing on the first unknown one."""
    if tasks:
        names = list(dict.fromkeys(tasks))
        for name in names:
            if name not in TASKS:
                raise UnknownNameError("task", name, TASKS)
        return names
    suite = suite or DEFAULT_SUITE
    if suite not in SUITES:
        raise UnknownNameError("suite", suite, SUITES)
    return list(SUITES[suite])


def get_tasks(
    names: Iterable[str], *, data_dir: str | Path | None = None, limit: int | None = None, seed: int = 42
) -> list[InstructionTask]:
    """Task instances ready for `mteb.evaluate`; local files are located (and checked) here."""
    out = []
    for name in names:
        if name not in TASKS:
            raise UnknownNameError("task", name, TASKS)
        out.append(TASKS[name](data_dir=data_dir, limit=limit, seed=seed))
    return out


__all__ = [
    "SUITES",
    "TASKS",
    "DemoInstructSTS",
    "DemoIntentEmotion",
    "DemoNYTClustering",
    "InstructSTSB",
    "IntentEmotion",
    "NYTClustering",
    "get_tasks",
    "task_names",
]
