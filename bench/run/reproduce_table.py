"""`bench reproduce TABLE` as functions: run the rows of a paper's reported table, or plan them.

Each row that names a spec (bench/results/literature.py) runs through the run layer's one entry point,
`bench.run.runner.run`, on the table's tasks the row prints a value for, so its result files are the
ordinary ones (`bench results`, `bench submit` and the leaderboard read them) and a rerun reuses what is
finished. A row that cannot run here (no spec; a model, hub, GPU or API key this machine lacks; its task
data missing) becomes one `RowRun` saying why, and the other rows still run: one paper table mixes
released and unreleased checkpoints, 7B and 1B models, so a partial reproduction is the common case.
The Δ is computed in the results layer (bench/results/deltas.py), which the leaderboard also uses.

Not `bench/run/reproduce.py`: that is `bench leaderboard verify`'s entry point, which re-runs a submission
under its own threat model; this one runs a table's published setting, as the user asks.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bench.core.errors import BenchError, ConfigError, DataError, StorageError
from bench.results import comparability
from bench.results.deltas import Reproduction, reproduction, row_tasks
from bench.results.literature import ReportedRow, ReportedTable
from bench.results.outcome import TaskOutcome
from bench.run.dry_run import dry_run, dry_run_facts, gated_lines
from bench.run.runner import RunOptions, run

logger = logging.getLogger("bench")

DATA_NOT_LOCAL = "data not local"
NO_TASK_CELL = "the row prints no value in a column of a harness task"


@dataclass(frozen=True)
class SelectedRow:
    """A row of the table, with its 1-based position as printed."""

    index: int
    row: ReportedRow

    @property
    def label(self) -> str:
        return f"row {self.index} {self.row.label!r}"


@dataclass(frozen=True)
class RowRun:
    """What became of one row: its outcomes and Δ, or why it did not run."""

    selected: SelectedRow
    outcomes: tuple[TaskOutcome, ...] = ()
    reproduction: Reproduction | None = None
    skipped: str | None = None  # no spec: the table's why_not (not a failure)
    failed: str | None = None  # had a spec but could not run here: the error, one line


@dataclass(frozen=True)
class RowPlan:
    """What a run of one row would do: its spec and tasks, and the dry run's count (or why there is none)."""

    selected: SelectedRow
    tasks: tuple[str, ...] = ()
    texts: int | None = None  # inputs the model would encode (after the cache), from `bench.run.dry_run.dry_run`
    tokens: int | None = None
    skipped: str | None = None  # no spec: the table's why_not
    unavailable: str | None = None  # DATA_NOT_LOCAL, or why the row cannot be planned
    details: tuple[str, ...] = ()  # the data errors behind DATA_NOT_LOCAL, one per task, printed once under the plan
    facts: tuple[str, ...] = ()  # what the run would meet, one line each (stand-in data, gated weights, ...)


def select_rows(table: ReportedTable, wanted: Sequence[str] | None) -> list[SelectedRow]:
    """The rows `--rows` names (a row's label, `ReportedTable.row`, or its 1-based position), in the order given;
    all rows when None.

    Rows without a spec are kept: they print their `why_not`, so the output accounts for every row asked for.
    """
    rows = list(table.rows)
    if not wanted:
        return [SelectedRow(i, r) for i, r in enumerate(rows, start=1)]
    out: list[SelectedRow] = []
    for item in wanted:
        if item.strip().isdigit():
            index = int(item)
            if not 1 <= index <= len(rows):
                raise ConfigError(
                    f"--rows {item}: {table.id} has rows 1 to {len(rows)}; give a position in that range or a "
                    "row's name as printed (`python -m bench reproduce TABLE --dry-run` lists them)."
                )
            chosen = SelectedRow(index, rows[index - 1])
        else:
            row = table.row(item)  # an UnknownNameError listing the rows
            chosen = SelectedRow(next(i for i, r in enumerate(rows, start=1) if r is row), row)
        if chosen not in out:
            out.append(chosen)
    return out


def row_options(table: ReportedTable, row: ReportedRow, base: RunOptions) -> RunOptions:
    """`base` (the run options the user gave: folders, cache, seed, device, ...) with the row's model and the
    table's tasks the row prints a value for. The row's `model_args` are the model's options, as a
    `--model-config` file's would be; `base`'s device and batch size shorthands still apply."""
    assert row.spec is not None
    return replace(
        base,
        model=str(row.spec["model"]),
        model_options=dict(row.spec.get("model_args") or {}),
        tasks=row_tasks(table, row),
        suite=None,
    )


def reproduce(table: ReportedTable, rows: Sequence[SelectedRow], base: RunOptions) -> Iterator[RowRun]:
    """Run each selected row that has a spec; one `RowRun` per row, in order, yielded as each finishes, so that
    a caller keeps the rows that ran when a StorageError (the output folder cannot be written) stops the rest."""
    for i, selected in enumerate(rows, start=1):
        yield _run_row(table, selected, base, f"[{i}/{len(rows)}]")


def _run_row(table: ReportedTable, selected: SelectedRow, base: RunOptions, step: str) -> RowRun:
    row = selected.row
    if row.spec is None:
        logger.info("%s %s: not run: %s", step, selected.label, row.why_not)
        return RowRun(selected, skipped=row.why_not or "no spec")
    options = row_options(table, row, base)
    if not options.tasks:  # only the paper's averages: nothing to compare (and no task list means the demo suite)
        return RowRun(selected, skipped=NO_TASK_CELL)
    logger.info("%s %s: %s on %s", step, selected.label, spec_text(row), ", ".join(options.tasks))
    try:
        outcomes = run(options)
    except StorageError:
        raise  # the output folder is not writable: no other row would get further
    except BenchError as e:
        reason = one_line(e)
        logger.warning("%s %s: could not run: %s", step, selected.label, reason)
        return RowRun(selected, failed=reason)
    scores = {o.task: 100 * o.main_score for o in outcomes if not o.variant}
    stand_in, local = comparability.split_issues({o.task: o.record for o in outcomes if not o.variant})
    return RowRun(selected, tuple(outcomes), reproduction(table, row, scores, stand_in, local))


def plan(table: ReportedTable, rows: Sequence[SelectedRow], base: RunOptions) -> list[RowPlan]:
    """What `reproduce` would do, per row: spec, tasks, and the inputs the model would encode, counted by
    `bench run --dry-run`'s own function (no weights loaded, nothing written). A row whose task data is not
    here says "data not local" instead of a count, with every such task's reason under the plan (the data of
    a set of tasks is tried once: the rows of a table share it); one whose model cannot be resolved says why.
    Each row also carries the dry run's facts (stand-in data, a prompt per text) and its gated weights."""
    plans = []
    missing_data: dict[tuple[str, ...], tuple[str, ...]] = {}  # tasks -> why their data is not here
    for selected in rows:
        row = selected.row
        if row.spec is None:
            plans.append(RowPlan(selected, skipped=row.why_not or "no spec"))
            continue
        options = row_options(table, row, base)
        tasks = tuple(options.tasks or ())
        if not tasks:
            plans.append(RowPlan(selected, skipped=NO_TASK_CELL))
            continue
        gated = tuple(gated_lines(options))
        if tasks in missing_data:
            plans.append(RowPlan(selected, tasks, unavailable=DATA_NOT_LOCAL, details=missing_data[tasks], facts=gated))
            continue
        try:
            estimates = dry_run(options)
        except DataError as e:  # the data is here but cannot be read
            missing_data[tasks] = (one_line(e),)
            plans.append(RowPlan(selected, tasks, unavailable=DATA_NOT_LOCAL, details=missing_data[tasks], facts=gated))
            continue
        except BenchError as e:
            plans.append(RowPlan(selected, tasks, unavailable=f"cannot plan: {one_line(e)}", facts=gated))
            continue
        facts = (*dry_run_facts([e for e in estimates if e.counted]), *gated)
        not_here = tuple(e.unavailable for e in estimates if e.unavailable is not None)
        if not_here:
            missing_data[tasks] = not_here
            plans.append(RowPlan(selected, tasks, unavailable=DATA_NOT_LOCAL, details=not_here, facts=facts))
            continue
        tokens = [e.estimate.get("tokens") for e in estimates]
        total_tokens = sum(t for t in tokens if t is not None) if tokens and None not in tokens else None
        plans.append(RowPlan(selected, tasks, texts=sum(e.texts for e in estimates), tokens=total_tokens, facts=facts))
    return plans


def spec_text(row: ReportedRow) -> str:
    """A row's spec as one would type it: `inbedder:ORG/NAME (pooling=avg-gen, pattern=qa)`."""
    if row.spec is None:
        return "no spec"
    args: dict[str, Any] = row.spec.get("model_args") or {}
    shown = ", ".join(f"{k}={v}" for k, v in args.items())
    return f"{row.spec['model']}" + (f" ({shown})" if shown else "")


def one_line(error: Exception) -> str:
    """An error's message on one line (a plan or report line per row)."""
    return " ".join(str(error).split())
