"""Where MTEB finds the harness's descriptive statistics: inside this package, never in MTEB's.

MTEB 2.26 reads a task's statistics (`TaskMetadata.descriptive_stats`, and `n_samples` from them) from
`TaskMetadata.descriptive_stat_path`, a property that points into the installed MTEB package
(`mteb/descriptive_stats/<type>/<name>.json`); `AbsTask.calculate_descriptive_statistics()` writes its result to
that same path. The harness's tasks carry `PackagedStatsMetadata` instead (`packaged_stats_metadata`, applied when
a task class registers), whose path is `bench/tasks/descriptive_stats/<type>/<name>.json`: MTEB's own readers
find the shipped files there, and `YourTask().calculate_descriptive_statistics()` writes there, never into
site-packages. A task that keeps an MTEB task's name (the generic tasks) keeps MTEB's metadata and MTEB's
statistics.

Statistics are shipped only where the local data provably is the task's pinned data (`provably_pinned`): the
demo tasks (their data ships in `demo_data/`) and the SentEval splits, which have no hub copy (their only data is
the local build). Every other task's pinned data is a hub revision this offline machine does not hold, so no
local copy can be checked against it; docs/guides/mteb.md lists each such task with its reason.
`tools/descriptive_stats.py` regenerates the files with MTEB's own `calculate_descriptive_statistics`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mteb import TaskMetadata

if TYPE_CHECKING:
    from mteb.abstasks import AbsTask

STATS_DIR = Path(__file__).parent / "descriptive_stats"


class PackagedStatsMetadata(TaskMetadata):
    """MTEB's `TaskMetadata`, with its statistics file inside this package (see the module docstring)."""

    @property
    def descriptive_stat_path(self) -> Path:
        """`bench/tasks/descriptive_stats/<type>/<name>.json`, where MTEB reads and writes this task's statistics."""
        return STATS_DIR / str(self.type) / f"{self.name}.json"


def _is_mteb_task_name(name: str) -> bool:
    """True when MTEB's own task registry holds `name` under one of MTEB's classes."""
    from bench.tasks.mteb_compat import mteb_registry

    existing = mteb_registry().get(name)
    return existing is not None and existing.__module__.startswith("mteb.")


def packaged_stats_metadata(metadata: TaskMetadata) -> TaskMetadata:
    """`metadata` as `PackagedStatsMetadata` (the same fields), unless it is an MTEB task's (kept as is)."""
    if isinstance(metadata, PackagedStatsMetadata) or _is_mteb_task_name(metadata.name):
        return metadata
    return PackagedStatsMetadata.model_validate(dict(metadata))


def provably_pinned(task: type[AbsTask]) -> bool:
    """True when the task's local data is its pinned data: packaged demo data, or a split with no hub copy."""
    return bool(getattr(task, "packaged", False) or getattr(task, "local_only", False))
