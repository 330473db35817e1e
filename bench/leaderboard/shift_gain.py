"""Instruction shift against instruction gain, per suite (issue 44): does moving the embedding pay?

The shift (`bench run --shift-sample N`, bench/run/shift.py) says how far a task's instruction moves a text's
embedding: the mean cosine distance between the text embedded with the instruction and without it, kept in
the run record's `instruction_shift`. The gain says what the instruction buys: the row's suite average
(×100, the table's `average_label`) minus the average of the same model, at the same revision, run without
instructions (`--template none`, the ∅ row: its experiment is the row's with `template=none`) where the board
has both, complete.

A row is a point when it follows instructions (not a baseline), is ranked or at least has a complete average,
has a shift on one or more of the suite's tasks (its shift: their mean) and has its ∅ row in the table. The
plot's quadrants split at gain 0 and at the median shift of the points (`split`): "moves, gains" (top
right), "moves, no gain" (bottom right), "barely moves, gains" (top left), "barely moves, no gain" (bottom
left). Rows with a shift but no ∅ row are named in `unpaired`, not plotted.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from bench.leaderboard.entries import experiment_label
from bench.leaderboard.external import SUBMITTED
from bench.leaderboard.row_types import ShiftGain, ShiftGainPoint, SuiteRow, SuiteTable
from bench.leaderboard.rows import ModelRow

BLIND = {"template": "none"}  # the experiment keys of the ∅ run (`bench run --template none`)


def blind_key(row: ModelRow) -> tuple[str, str, str]:
    """(name, revision, experiment) of the row's ∅ run: its experiment with `template=none`."""
    experiment = row.first.record["model"].get("experiment")
    options = dict(experiment) if isinstance(experiment, Mapping) else {}
    return row.key.name, row.key.revision, experiment_label({**options, **BLIND})


def row_shift(row: ModelRow, tasks: Sequence[str]) -> tuple[float, int] | None:
    """The mean recorded shift over `tasks` the row has one for, and how many; None without any."""
    found = []
    for task in tasks:
        entry = row.results.get(task)
        block = entry.record.get("instruction_shift") if entry is not None else None
        value = block.get("mean_cosine_distance") if isinstance(block, Mapping) else None
        if isinstance(value, int | float) and not isinstance(value, bool):
            found.append(float(value))
    return (sum(found) / len(found), len(found)) if found else None


def shift_gain(suite: SuiteTable, rows: Sequence[ModelRow]) -> ShiftGain:
    """The suite table's shift-vs-gain points (module docstring); `rows` are the board's model rows."""
    table: list[SuiteRow] = [r for r in suite["rows"] if r["source"] == SUBMITTED]
    averages = {r["model_id"]: r["average"] for r in table}
    by_id = {r.id: r for r in rows}
    by_key = {(r.key.name, r.key.revision, r.key.experiment): r for r in rows}
    tasks = [c["task"] for c in suite["columns"]]
    points: list[ShiftGainPoint] = []
    unpaired = []
    for r in table:
        model = by_id.get(r["model_id"])
        average = r["average"]
        if model is None or r["baseline"] or average is None:  # marks.BASELINE: blind, its own ∅
            continue
        shift = row_shift(model, tasks)
        if shift is None:
            continue
        blind = by_key.get(blind_key(model))
        blind_average = averages.get(blind.id) if blind is not None else None
        if blind is None or blind_average is None:
            unpaired.append(model.key.label)
            continue
        points.append(
            {
                "model_id": model.id,
                "label": model.key.label,
                "blind_id": blind.id,
                "shift": shift[0],
                "tasks": shift[1],
                "gain": average - blind_average,
            }
        )
    split = statistics.median(p["shift"] for p in points) if points else None
    return {"points": points, "split": split, "unpaired": unpaired}
