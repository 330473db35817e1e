"""Reported vs ours: a paper table's row beside the harness's scores for the same setting, with Δ per cell.

Used by `bench reproduce TABLE` (bench/run/reproduce_table.py prints it after running the rows) and by the
leaderboard's model page ("reproduces <table>: mean |Δ| x"), so both say the same number.

Δ compares printed figures: ours rounded to two decimals (×100, as every harness table prints it), minus the
paper's value as printed (bench/results/literature.py keeps it ×100). A difference below the print precision is
no difference: a paper that prints one decimal gives Δ within ±0.05 of zero on an exact reproduction. The
paper's own average columns are stored, not recomputed (literature.py), so they get no Δ. A cell whose result
was computed on stand-in data (the task's published set could not be had: InBedder's NYT texts, ‡) or on a
local copy of another set (†) shows its Δ marked and is left out of the mean |Δ|: it compares the paper with
another dataset. Which cells those are is the one comparability rule's (bench/results/comparability.py
`cell_issue`, `split_issues`), as in `bench results` and on the site; a paper's own split built locally is
the paper's data.

Matching a result to a row (`matches`): the run record's model must be the row's spec, with the row's options:

1. the record's `model.spec` is the row's `spec.model` as a run record writes it (a local path by its last
   component: `inbedder:SmolLM2-135M-Instruct.Q4_1.gguf`);
2. every option the row's `model_args` names has the same value in the record's `model.settings` (compared
   as text, so `5` and `"5"` agree, and `dtype: float32` agrees with the dtype the run resolved; a local
   path by its last component, as the record writes it);
3. every option the run set away from its family's default (the record's MTEB `experiment`, less `family`)
   is one the row names: a row without `model_args` matches only the family's default setting, never a
   `--template none` run of the same model. (A family that names an option in its experiment even at its
   default, sentence-transformers' `template`, needs that option named in the row.)
4. the result is a whole run of the task's own instructions: no `--limit`, no instruction variant.

Reading run records only (no model is loaded, MTEB is not imported), so the leaderboard can call it.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from bench.core.json_types import object_at
from bench.core.run_record import RecordView
from bench.results.literature import ReportedRow, ReportedTable
from bench.results.sensitivity import FoundView, is_variant

DECIMALS = 2  # the harness prints scores ×100 with two decimals (bench.results.tables.format_score)


@dataclass(frozen=True)
class DeltaCell:
    """One printed cell of a row: the paper's value, ours (×100, None when the task has no result) and Δ."""

    column: str  # the paper's column label, "I.STSB"
    task: str
    reported: float
    ours: float | None
    delta: float | None  # ours − reported, both as printed (two decimals); None when ours is missing
    stand_in: bool = False  # ours was computed on stand-in data (‡): shown, never in the mean |Δ|
    local_copy: bool = False  # ours was computed on a local copy of another set (†): shown, never in the mean |Δ|


@dataclass(frozen=True)
class Reproduction:
    """A row of a paper table set against the harness's scores for its setting."""

    table: str  # the table's id
    row: str  # the row's label: its name as printed, with its size where the paper prints one name twice
    cells: tuple[DeltaCell, ...]

    @property
    def compared(self) -> tuple[DeltaCell, ...]:
        """The cells that have both numbers, ours on the task's own data (what the mean |Δ| is over)."""
        return tuple(c for c in self.cells if c.delta is not None and not c.stand_in and not c.local_copy)

    @property
    def on_stand_in(self) -> tuple[str, ...]:
        """Tasks whose result of ours was computed on stand-in data (Δ shown, not in the mean)."""
        return tuple(c.task for c in self.cells if c.stand_in)

    @property
    def on_local_copy(self) -> tuple[str, ...]:
        """Tasks whose result of ours was computed on a local copy of another set (Δ shown, not in the mean)."""
        return tuple(c.task for c in self.cells if c.local_copy)

    @property
    def missing(self) -> tuple[str, ...]:
        """Tasks the row prints that have no result of ours."""
        return tuple(c.task for c in self.cells if c.delta is None)

    @property
    def mean_abs_delta(self) -> float | None:
        """Mean |Δ| over the compared cells, or None when none is."""
        return mean_abs_delta([self])


def printed(value: float) -> float:
    """A score ×100 as the harness prints it (two decimals); -0.0 becomes 0.0, so Δ never reads "-0.00"."""
    return round(value, DECIMALS) + 0.0


def reproduction(
    table: ReportedTable,
    row: ReportedRow,
    scores: Mapping[str, float],
    stand_in: Collection[str] = (),
    local_copy: Collection[str] = (),
) -> Reproduction:
    """Row `row` of `table` beside `scores` (harness task name -> our main score ×100), one cell per printed
    task column of the row, in the paper's order; `stand_in` and `local_copy`: the tasks whose score is on
    stand-in data or on a local copy of another set (`comparability.split_issues` of their run records)."""
    cells = []
    for column in table.task_columns():
        if column.label not in row.cells or column.task is None:
            continue
        reported = row.cells[column.label]
        ours = scores.get(column.task)
        ours = printed(ours) if ours is not None and math.isfinite(ours) else None
        delta = None if ours is None else printed(ours - reported)
        on_stand_in = ours is not None and column.task in stand_in
        on_local = ours is not None and column.task in local_copy and not on_stand_in
        cells.append(DeltaCell(column.label, column.task, reported, ours, delta, on_stand_in, on_local))
    return Reproduction(table.id, row.label, tuple(cells))


def mean_abs_delta(reproductions: Iterable[Reproduction]) -> float | None:
    """Mean |Δ| over every compared cell of `reproductions` (each cell counts once: the overall figure is
    not a mean of rows' means), or None when no cell is compared."""
    deltas = [abs(c.delta) for r in reproductions for c in r.compared if c.delta is not None]
    return printed(sum(deltas) / len(deltas)) if deltas else None


def row_tasks(table: ReportedTable, row: ReportedRow) -> list[str]:
    """The harness tasks a reproduction of `row` runs: the task columns it has a printed value in (a blank cell
    has nothing to compare with), in the paper's order."""
    return list(row.scores(table))


# ---------------------------------------------------------------------------------------- matching results
def matches(spec: Mapping[str, object], record: RecordView | None) -> bool:
    """Whether a run record's result was computed with a table row's `spec` (the module docstring's rules)."""
    from bench.adapters.options import public_value

    if not record or is_variant(record) or object_at(record.get("task")).get("limit") is not None:
        return False
    model = object_at(record.get("model"))
    if model.get("spec") != public_spec(str(spec["model"])):
        return False
    named = object_at(spec.get("model_args"))  # literature._spec: a mapping of option: value
    settings = object_at(model.get("settings"))  # as the run record writes them: a local path by its last component
    if any(k not in settings or _text(settings[k]) != _text(public_value(v)) for k, v in named.items()):
        return False
    return all(k in named for k in object_at(model.get("experiment")) if k != "family")


def public_spec(spec: str) -> str:
    """A spec as its run record writes it (bench.run.runner.public_spec): an existing local path reduced to its
    last component, so a row may name a file on this machine and still match a result made on another."""
    from bench.adapters.options import public_value

    prefix, sep, rest = spec.partition(":")
    if sep and len(prefix) > 1:
        return f"{prefix}:{public_value(rest)}"
    return str(public_value(spec))


def _text(value: object) -> str:
    """An option value as text: YAML's `true`/`5` and the record's `True`/`5` (or "5") compare equal."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def row_scores(spec: Mapping[str, object], found: Iterable[FoundView]) -> dict[str, float]:
    """Task -> main score ×100 of the results in `found` (`bench.results.store.find_results`) that `matches`
    `spec`; of several for one task (another revision, another day), the latest run's (`started_at`)."""
    from bench.results.store import main_score

    latest: dict[str, tuple[str, float]] = {}
    for _path, data, record in found:
        if record is None or not matches(spec, record):
            continue
        started = str(record.get("started_at") or "")
        task = str(data["task_name"])
        if task not in latest or started >= latest[task][0]:
            latest[task] = (started, 100 * main_score(data))
    return {task: score for task, (_, score) in latest.items()}


def reproductions(table: ReportedTable, found: Iterable[FoundView]) -> list[Reproduction]:
    """Each row of `table` that has a spec and at least one matching result in `found`, set against it."""
    found = list(found)
    out = []
    for row in table.rows:
        if row.spec is None:
            continue
        scores = row_scores(row.spec, found)
        if scores:
            out.append(reproduction(table, row, scores))
    return out
