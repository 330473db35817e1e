"""Bootstrap 95% intervals of a suite table's scores, and the rank bands they make (issue 42 "Uncertainty").

Why: the demo's tasks have 60-192 items, so two rows a point apart may differ by chance alone. Each score the
harness computed itself keeps its per-item outcomes in its run record (`items`), and its interval is the
seeded percentile bootstrap of bench/core/bootstrap.py, the one `bench results --intervals` prints:

* `intervals` (task -> [low, high], ×100): each task score of the row whose record kept its items;
* `interval` ([low, high], ×100): the row's ranking average (the table's `average_label`), when it is complete
  and every one of its tasks kept its items; replicate b of the average is the mean of the tasks' replicates b,
  each task drawn with its own seed (`bootstrap.mean_interval`, as `average_interval`). None otherwise, and `interval_note` says
  why: a published or reported row has no items at all; an older run (or one with too many items) kept none.

Rank bands: walking the ranked rows best first, a row whose interval overlaps the interval of the ranked row
above it (or whose rank equals that row's) joins that row's band; `band` is the rank of the band's first row
and `tied` is True for every row of a band of two or more. Only rows the comparability rule ranks
(bench/results/comparability.py `decide`) get a band: a baseline, a limited run or a row on other data keeps
`band` None, and the "row above" is the ranked row above, never an unranked one between them. A row without
an interval starts its own band unless its rank equals the row above's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypedDict

import numpy as np

from bench.core.bootstrap import has_items, mean_interval, percentile_interval, replicates
from bench.core.run_record import Items
from bench.leaderboard.external import SUBMITTED
from bench.leaderboard.row_types import SuiteRow

# Why a row has no interval, by its source (a submitted row's reason depends on its records: `_why_none`).
NO_ITEMS = {
    "mteb": "published by MTEB: its scores come without per-item outcomes, so no interval",
    "reported": "reported in a paper: its scores come without per-item outcomes, so no interval",
}
NO_RECORD_ITEMS = (
    "its run records keep no per-item outcomes for every task of the average (a run from an older harness, "
    "or a task with too many items), so no interval"
)
INCOMPLETE = "no complete average, so no interval"


class RowIntervals(TypedDict):
    """A suite row's intervals (×100) and why its average has none (`note`)."""

    intervals: dict[str, list[float]]
    interval: list[float] | None
    note: str | None


class Replicates:
    """Each (row, task)'s bootstrap replicates, drawn once per build: a task shared by several suites (the
    demo's tasks are in `demo` and in the paper suites) is resampled once."""

    def __init__(self) -> None:
        self._found: dict[tuple[str, str], np.ndarray] = {}

    def of(self, row_id: str, task: str, items: Items) -> np.ndarray:
        key = (row_id, task)
        if key not in self._found:
            self._found[key] = replicates(task, items)
        return self._found[key]


def annotate(
    rows: Sequence[SuiteRow],
    label: str | None,
    tasks: Sequence[str],
    items_of: Mapping[str, Mapping[str, object]],
    cache: Replicates,
) -> None:
    """Give each suite row (dicts as suite_tables makes them, in served order) `intervals`, `interval`,
    `interval_note`, `band` and `tied` (module docstring). `tasks`: the tasks the ranking average `label`
    covers; `items_of`: per model id, its records' `items` by task (whatever they hold: only items that
    `bootstrap.has_items` accepts are resampled)."""
    for row in rows:
        found = _row_intervals(row, label, tasks, items_of, cache)
        row["intervals"], row["interval"], row["interval_note"] = found["intervals"], found["interval"], found["note"]
        row["band"], row["tied"] = None, False
    bands(rows)


def _row_intervals(
    row: SuiteRow,
    label: str | None,
    tasks: Sequence[str],
    items_of: Mapping[str, Mapping[str, object]],
    cache: Replicates,
) -> RowIntervals:
    model_id, source = row["model_id"], row["source"]
    items = {t: i for t, i in items_of.get(model_id, {}).items() if has_items(i)} if source == SUBMITTED else {}
    shown = [t for t in row["scores"] if t in items]
    intervals = {t: _x100(percentile_interval(cache.of(model_id, t, items[t]))) for t in shown}
    complete = label is not None and row["averages"].get(label) is not None
    interval, note = None, None
    if source != SUBMITTED:
        note = NO_ITEMS.get(source, NO_ITEMS["reported"])
    elif not complete:
        note = INCOMPLETE
    elif tasks and all(t in items for t in tasks):
        interval = _x100(mean_interval([cache.of(model_id, t, items[t]) for t in tasks]))
    else:
        note = NO_RECORD_ITEMS
    return {"intervals": intervals, "interval": interval, "note": note}


def _x100(bounds: tuple[float, float]) -> list[float]:
    return [100 * bounds[0], 100 * bounds[1]]


def overlap(a: Sequence[float] | None, b: Sequence[float] | None) -> bool:
    """Whether two intervals ([low, high]) share a point; False when either is missing."""
    return a is not None and b is not None and a[0] <= b[1] and b[0] <= a[1]


def bands(rows: Sequence[SuiteRow]) -> None:
    """`band` and `tied` of the ranked rows, best first (module docstring); unranked rows keep None / False."""
    ranked = sorted((r for r in rows if r["rank"] is not None), key=lambda r: r["rank"] or 0)
    above: SuiteRow | None = None
    for row in ranked:
        if above is not None and (row["rank"] == above["rank"] or overlap(row.get("interval"), above.get("interval"))):
            row["band"] = above.get("band")
            row["tied"] = above["tied"] = True
        else:
            row["band"] = row["rank"]
            row.setdefault("tied", False)
        above = row
