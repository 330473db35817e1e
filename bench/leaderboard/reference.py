"""What the harness itself says about each task, which a submitted result must agree with.

Everything here is read from the task classes in `tasks.TASKS`, never restated, so a task added by
anyone is checked the same way: its version, main score, instruction-set hash and the dataset
revisions the harness would itself produce (the pinned hub revision; for packaged demo data, the hash
of the shipped files; for a local copy, the hash of the files in a `--data-dir` the maintainer passes).
The classes are read once, into the task catalogue (bench/results/task_catalog.py, task_facts.py), so a
build whose catalogue is cached imports no task and no MTEB.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from bench.core.metric_specs import ANY
from bench.results import task_catalog
from bench.results.task_facts import instance


def metric_range(key: str) -> tuple[float, float] | None:
    """The range of values a score named `key` can take, from its metric's declaration
    (bench/core/metric_specs.py); None when no metric is declared for it, or its metric has no range
    (a key that is then only checked to be a finite number, and printed as it is)."""
    metric = task_catalog.metric_index().resolve(key)
    if metric is None or metric.range == ANY:
        return None
    return metric.range


@dataclass(frozen=True)
class TaskReference:
    """The harness's own facts about one task."""

    name: str
    version: str
    type: str
    main_score: str
    instructions_sha256: dict[str, str]  # accepted instruction-set hash -> which variant (default, a style)
    revisions: dict[str, str] = field(default_factory=dict)  # revision -> where the harness gets it
    description: str = ""


def task_reference(name: str, data_dirs: Iterable[Path] = ()) -> TaskReference | None:
    """Facts about task `name`, or None when the harness has no such task.

    Read from the task catalogue, so a build imports neither the tasks nor MTEB; only a local copy's
    revision (`data_dirs`, files outside the package) needs the task class itself.
    """
    facts = task_catalog.facts(name)
    if facts is None:
        return None
    revisions = dict(facts["revisions"])
    for data_dir in data_dirs:
        revision = _local_revision(name, Path(data_dir))
        if revision:
            revisions.setdefault(revision, f"local copy in {data_dir}")
    return TaskReference(
        name=name,
        version=facts["version"],
        type=facts["type"],
        main_score=facts["main_score"],
        instructions_sha256=dict(facts["instructions_sha256"]),
        revisions=revisions,
        description=facts["description"],
    )


@cache
def _local_revision(name: str, data_dir: Path) -> str | None:
    from bench.tasks import TASKS

    task = instance(TASKS[name], data_dir=data_dir)
    if task is None or not task.local_files:
        return None
    return task.metadata.revision
