"""What the harness itself says about each task, which a submitted result must agree with.

Everything here is read from the task classes in `tasks.TASKS`, never restated, so a task added by
anyone is checked the same way: its version, main score, instruction-set hash and the dataset
revisions the harness would itself produce (the pinned hub revision; for packaged demo data, the hash
of the shipped files; for a local copy, the hash of the files in a `--data-dir` the maintainer passes).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

# Score key pattern -> (low, high) of its metric, first match wins. A key no pattern matches is only
# checked to be a finite number. Robustness gaps (delta_*) are differences of two [0, 1] scores.
METRIC_RANGES: tuple[tuple[str, tuple[float, float]], ...] = (
    (r"(^|_)num_|_num$|(^|_)count$", (0, math.inf)),
    (r"^delta_|_delta$|^dci|^dii", (-1.0, 1.0)),
    (r"spearman|pearson|kendall|(^|_)corr", (-1.0, 1.0)),
    (
        r"success_rate|v_measure|accuracy|(^|_)f1|precision|recall|(^|_)map|mrr|ndcg|(^|_)ap$|(^|_)ari$|(^|_)nmi$",
        (0.0, 1.0),
    ),
    (r"^evaluation_time$|_seconds$", (0, math.inf)),
)


def metric_range(key: str) -> tuple[float, float] | None:
    """The range of values a score named `key` can take, or None when the name says nothing."""
    for pattern, bounds in METRIC_RANGES:
        if re.search(pattern, key):
            return bounds
    return None


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
    detail_scores: dict[str, str] = field(default_factory=dict)


def task_reference(name: str, data_dirs: Iterable[Path] = ()) -> TaskReference | None:
    """Facts about task `name`, or None when the harness has no such task."""
    from bench.tasks import TASKS

    cls = TASKS.get(name)
    if cls is None:
        return None
    base = _base_reference(name)
    revisions = dict(base.revisions)
    for data_dir in data_dirs:
        revision = _local_revision(name, Path(data_dir))
        if revision:
            revisions.setdefault(revision, f"local copy in {data_dir}")
    return TaskReference(**{**base.__dict__, "revisions": revisions})


@cache
def _base_reference(name: str) -> TaskReference:
    from bench.tasks import TASKS
    from bench.tasks.abstasks.base import InstructionTask

    cls = TASKS[name]
    assert issubclass(cls, InstructionTask)  # every registered task is one (it registers from its __init_subclass__)
    meta = cls.metadata
    revisions = {meta.dataset["revision"]: "pinned in the task's metadata"}
    instance = _instance(cls, data_dir=None)
    if getattr(cls, "packaged", False) and instance is not None:
        revisions[instance.metadata.revision] = "data shipped in the package"
    hashes = {instance.instruction_set_sha256(): "default"} if instance is not None else {}
    # Tasks that take an instruction style (GSTransform: `bench run --instruction-style`) accept each.
    for style in getattr(cls, "instruction_styles", ()):
        variant = _instance(cls, data_dir=None, instruction_style=style)
        if variant is not None:
            hashes.setdefault(variant.instruction_set_sha256(), f"instruction style '{style}'")
    return TaskReference(
        name=name,
        version=str(cls.task_version),
        type=meta.type,
        main_score=meta.main_score,
        instructions_sha256=hashes,
        revisions=revisions,
        description=meta.description or "",
        detail_scores=dict(getattr(cls, "detail_scores", {}) or {}),
    )


@cache
def _local_revision(name: str, data_dir: Path) -> str | None:
    from bench.tasks import TASKS

    instance = _instance(TASKS[name], data_dir=data_dir)
    if instance is None or not instance.local_files:
        return None
    return instance.metadata.revision


def _instance(cls: type, *, data_dir: Path | None, **options: Any) -> Any:
    """A task object, built only to read its revision and instructions (no data is loaded)."""
    from bench.core.errors import BenchError

    try:
        return cls(data_dir=data_dir, **options) if data_dir is not None else _without_env_data_dir(cls, **options)
    except BenchError as e:
        logger.debug("cannot build %s for reference (%s)", cls.__name__, e)
        return None


def _without_env_data_dir(cls: type, **options: Any) -> Any:
    """Build the hub-backed task even when $INSTRUCT_BENCH_DATA_DIR points somewhere."""
    import os

    from bench.tasks.data import DATA_DIR_ENV

    saved = os.environ.pop(DATA_DIR_ENV, None)
    try:
        return cls(**options)
    finally:
        if saved is not None:
            os.environ[DATA_DIR_ENV] = saved
