"""What the harness itself says about one task class: the facts a submitted result must agree with.

Read from the class, never restated, so a task added by anyone is checked the same way: its version,
type, main score and description, the splits and subsets MTEB's TaskMetadata evaluates, and what only
a task object knows (built to read it; no data is loaded): the hash of its instruction set (one per
instruction style it takes) and the dataset revisions the harness would itself produce (the pinned
hub revision; for packaged demo data, the hash of the shipped files).

All of it depends only on the files under bench/tasks and the installed MTEB, so the task catalogue
(bench/results/task_catalog.py) stores it, and the leaderboard reads it without importing the tasks.
A local copy's revision (`--data-dir`) depends on files elsewhere: the leaderboard builds that task
object itself, with `instance` (bench/leaderboard/reference.py).
"""

from __future__ import annotations

import logging
import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, Unpack

from bench.core.errors import BenchError
from bench.core.json_types import JSONObject

if TYPE_CHECKING:  # imported where used: `bench.tasks` imports MTEB, which reading the catalogue never needs
    from mteb.abstasks import AbsTask

    from bench.tasks.abstasks.base import InstructionTask

logger = logging.getLogger(__name__)


class TaskFacts(TypedDict):
    """One task's entry in the task catalogue (`derive`): what its class says, JSON-ready."""

    main_score: str  # the main score's name in MTEB's scores ("cosine_spearman")
    metrics: list[JSONObject]  # the task's own metric declarations (bench/core/metric_specs.py `Metric.to_json`)
    version: str  # the task's version (`task_version`): a result of another version is another task's
    type: str  # MTEB's task type ("STS", "Clustering", ...)
    description: str
    dataset_path: str  # the dataset's hub path ("" where the metadata names none)
    packaged: bool  # its data ships inside the package (the demo tasks)
    local_only: bool  # a paper's own split, built locally only (bench/results/marks.py `paper_split`)
    subsets: dict[str, list[str]]  # eval split -> the subsets MTEB evaluates there
    revisions: dict[str, str]  # dataset revision -> where the harness gets data of that revision
    instructions_sha256: dict[str, str]  # an accepted instruction set's hash -> which one ("default", a style)


class TaskOptions(TypedDict, total=False):
    """What `instance` passes a task class beside its data folder (only what is given: most tasks take none)."""

    instruction_style: str  # a style the task takes (`instruction_styles`, GSTransform's)


def derive(cls: type[AbsTask]) -> TaskFacts:
    """One task's catalogue entry, JSON-ready (lists, not tuples: the cached copy must equal it)."""
    from bench.tasks.abstasks.base import InstructionTask

    assert issubclass(cls, InstructionTask)  # every registered task is one (it registers from its __init_subclass__)
    meta, built = cls.metadata, _built(cls)
    return {
        "main_score": meta.main_score,
        "metrics": [m.to_json() for m in getattr(cls, "metrics", ())],
        "version": str(cls.task_version),
        "type": meta.type,
        "description": meta.description or "",
        "dataset_path": str(meta.dataset.get("path", "")),
        "packaged": bool(getattr(cls, "packaged", False)),
        "local_only": bool(getattr(cls, "local_only", False)),  # a paper's own split, built locally only
        "subsets": {split: list(meta.hf_subsets) for split in meta.eval_splits},
        "revisions": built["revisions"],
        "instructions_sha256": built["instructions_sha256"],
    }


@cache
def _built(cls: type[InstructionTask]) -> dict[str, dict[str, str]]:
    """The facts only a task object knows: revisions (revision -> where the harness gets it) and accepted
    instruction-set hashes (hash -> which variant). Cached per class: a class never changes them."""
    revisions = {cls.metadata.dataset["revision"]: "pinned in the task's metadata"}
    task = instance(cls, data_dir=None)
    if getattr(cls, "packaged", False) and task is not None:
        revisions[task.metadata.revision] = "data shipped in the package"
    hashes = {task.instruction_set_sha256(): "default"} if task is not None else {}
    # Tasks that take an instruction style (GSTransform: `bench run --instruction-style`) accept each.
    for style in getattr(cls, "instruction_styles", ()):
        variant = instance(cls, data_dir=None, instruction_style=style)
        if variant is not None:
            hashes.setdefault(variant.instruction_set_sha256(), f"instruction style '{style}'")
    return {"revisions": revisions, "instructions_sha256": hashes}


def instance(cls: type[AbsTask], *, data_dir: Path | None, **options: Unpack[TaskOptions]) -> InstructionTask | None:
    """A task object, built only to read its revision and instructions (no data is loaded); None when it
    cannot be built (the reason is logged)."""
    from bench.tasks.abstasks.base import InstructionTask

    assert issubclass(cls, InstructionTask)  # as in `derive`
    try:
        return cls(data_dir=data_dir, **options) if data_dir is not None else _without_env_data_dir(cls, **options)
    except BenchError as e:
        logger.debug("cannot build %s for reference (%s)", cls.__name__, e)
        return None


def _without_env_data_dir(cls: type[InstructionTask], **options: Unpack[TaskOptions]) -> InstructionTask:
    """Build the hub-backed task even when $INSTRUCT_BENCH_DATA_DIR points somewhere: the facts are the
    harness's own, whatever this shell's environment."""
    from bench.tasks.data import DATA_DIR_ENV

    saved = os.environ.pop(DATA_DIR_ENV, None)
    try:
        return cls(**options)
    finally:
        if saved is not None:
            os.environ[DATA_DIR_ENV] = saved
