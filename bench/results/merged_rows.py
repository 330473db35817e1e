"""One model's rows from several tables of one paper and suite, as one row where no cell conflicts.

Why: a paper often prints the same model twice on one suite (MetaEOL's Table 4 row "TC+SA+PI+IE" is, value
for value, Table 1's "MetaEOL-LLAMA2 (Ours)" 7B). `bench results --reported A --reported B` showed it as two
rows, each ranked, so one model held two ranks. Two rows are one model when they come from the same paper
and suite and name the same `bench run` spec (or, without a spec, print the same label); they become one row
only where every task both print and every average both print over the same tasks agree as printed. Where
a cell conflicts, the rows stay apart and a note says which cell (`MergedRows.notes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bench.results.literature import ReportedRow, ReportedTable

Part = tuple[ReportedTable, ReportedRow]


@dataclass(frozen=True)
class MergedRow:
    """One model's printed rows (one per table, in the order the tables were given) shown as one row, and
    why a row of the same model stays apart from it, where one does (`conflicts`)."""

    parts: tuple[Part, ...]
    conflicts: tuple[str, ...] = ()

    @property
    def table(self) -> ReportedTable:
        return self.parts[0][0]

    @property
    def row(self) -> ReportedRow:
        return self.parts[0][1]

    @property
    def label(self) -> str:
        """The first table's label of the row, whole as printed."""
        return self.row.label

    @property
    def notes(self) -> tuple[str, ...]:
        """What a reader of the row needs beyond its tables' notes: which rows it merges, or which it is not."""
        if len(self.parts) == 1:
            return self.conflicts
        named = " and ".join(f"Table {t.number}'s {r.label!r}" for t, r in self.parts)
        return (f"One row: {self.label!r} is {named} (the same model; no cell in conflict).", *self.conflicts)

    @property
    def key(self) -> str:
        """The tables' ids joined: distinct from any one table's rows."""
        return "+".join(t.id for t, _ in self.parts)

    @property
    def source(self) -> str:
        """ "MetaEOL (Lei et al., ACL 2024), Tables 1 and 4"; one table's label when the row is one table's."""
        if len(self.parts) == 1:
            return self.table.label
        numbers = [str(t.number) for t, _ in self.parts]
        return f"{self.table.paper.label}, Tables {', '.join(numbers[:-1])} and {numbers[-1]}"

    def scores(self) -> dict[str, tuple[ReportedTable, float]]:
        """Task -> the table it is printed in and the value as printed (×100); the first table's on a shared task."""
        found: dict[str, tuple[ReportedTable, float]] = {}
        for table, row in self.parts:
            for task, value in row.scores(table).items():
                found.setdefault(task, (table, value))
        return found


@dataclass(frozen=True)
class MergedRows:
    """The rows of the tables given, merged where they may be, and one note per merge and per conflict."""

    rows: tuple[MergedRow, ...]
    notes: tuple[str, ...]


def _same_model(a: Part, b: Part) -> bool:
    (ta, ra), (tb, rb) = a, b
    if ta.paper.key != tb.paper.key or ta.suite != tb.suite or ta.id == tb.id:
        return False
    if ra.spec is not None and rb.spec is not None:
        return ra.spec == rb.spec
    return ra.label == rb.label


def _own_average(part: Part) -> tuple[frozenset[str], float] | None:
    table, row = part
    tasks = frozenset(c.task for c in table.task_columns() if c.task)
    found = table.printed_average(row, tasks)
    return (tasks, found.value) if found is not None else None


def conflict(a: Part, b: Part) -> str | None:
    """The first cell two rows of one model print differently ("STS12 is 64.16 in Table 1 and 64.10 in Table
    4"), a task both print or an average both print over the same tasks; None when none does."""
    (ta, ra), (tb, rb) = a, b
    sa, sb = ra.scores(ta), rb.scores(tb)
    for task in sorted(set(sa) & set(sb)):
        if sa[task] != sb[task]:
            return (
                f"{task} is {ta.printed(sa[task])} in Table {ta.number} and {tb.printed(sb[task])} in Table {tb.number}"
            )
    avg_a, avg_b = _own_average(a), _own_average(b)
    if avg_a is not None and avg_b is not None and avg_a[0] == avg_b[0] and avg_a[1] != avg_b[1]:
        return (
            f"the printed average is {ta.printed(avg_a[1])} in Table {ta.number} and "
            f"{tb.printed(avg_b[1])} in Table {tb.number}"
        )
    return None


def merge(tables: Sequence[ReportedTable]) -> MergedRows:
    """Every row with a value on a harness task, one model's rows of several tables of one paper and suite
    merged where no cell conflicts (in the order given); a row that conflicts with a group stays its own."""
    groups: list[list[Part]] = []
    conflicts: list[list[str]] = []
    for table in tables:
        for row in table.rows:
            part = (table, row)
            if not row.scores(table):
                continue
            chosen, why_apart = None, []
            for group in groups:
                if not any(_same_model(p, part) for p in group) or any(p[0].id == table.id for p in group):
                    continue
                why = next((w for p in group if (w := conflict(p, part)) is not None), None)
                if why is None:
                    chosen = group
                    break
                why_apart.append(
                    f"Two rows: {group[0][1].label!r} ({group[0][0].label}) and {row.label!r} ({table.label}) are "
                    f"the same model but are not merged: {why}."
                )
            if chosen is None:
                groups.append([part])
                conflicts.append(why_apart)
            else:
                chosen.append(part)
    merged = tuple(MergedRow(tuple(g), tuple(c)) for g, c in zip(groups, conflicts, strict=True))
    return MergedRows(merged, tuple(n for m in merged for n in m.notes))
