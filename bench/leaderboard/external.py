"""Rows the leaderboard shows beside the submitted ones without having computed them: numbers a paper
reported (`bench.results.literature`) and MTEB's published results (`bench.leaderboard.mteb_published`).

Why a type of their own: a submitted row is a set of result files with run records, identities and a
verification state; an external row is a claim with a source. Keeping them apart means no external row
can ever be taken for verified, counted in a conflict, or reach a rule written for run records; the
table code reads both through the few fields they share (model name, scores per task).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from bench.results.literature import ReportedRow, ReportedTable, all_tables

Source = Literal["reported", "mteb"]
SUBMITTED = "submitted"  # the `source` of every submitted row in leaderboard.json and the CSV
SOURCES: tuple[str, ...] = (SUBMITTED, "reported", "mteb")


@dataclass(frozen=True)
class ExternalRow:
    """One model's scores as a paper table or MTEB's results repository gives them.

    Attributes:
        source: "reported" (a paper's table) or "mteb" (MTEB's published results).
        model: the model as the source names it ("llama-2-7b-INBEDDER (1st-gen)", "intfloat/e5-large-v2").
        scores: task name -> main score ×100, exactly as the source gives it (a paper's printed value).
        label: the mark's words: "reported in InBedder (Peng et al., ACL 2024), Table 1" / "published by MTEB".
        url: where the number comes from (the paper, MTEB's results repository).
        table: the reported table's id ("inbedder-2024-table1"), None for MTEB rows.
        notes: what differs between the source's setting and the harness's task, shown with the row.
        facts: model facts for the site's columns and filters (n_parameters, revision, release_date, ...).
        spec: the `bench run --model` spec (and options) the harness would run the row with, when one exists.
        origin: the reported table and row it was read from (None for MTEB rows): what `bench.results.deltas`
            needs to set a submitted run beside it ("reproduces <table>: mean |Δ| x" on the model page).
    """

    source: Source
    model: str
    scores: dict[str, float]
    label: str
    url: str
    table: str | None = None
    notes: tuple[str, ...] = ()
    facts: dict[str, Any] = field(default_factory=dict)
    spec: dict[str, Any] | None = None
    origin: tuple[ReportedTable, ReportedRow] | None = field(default=None, compare=False, repr=False)

    @property
    def id(self) -> str:
        """A stable id for leaderboard.json, distinct from every submitted row's (those never contain '|')."""
        return f"{self.source}|{self.table or ''}|{self.model}"


def reported_rows(tables: Iterable[ReportedTable] | None = None) -> list[ExternalRow]:
    """Every row of the reported tables (`tables`, default every packaged one) that has a value on a
    harness task, as the leaderboard shows it: `bench leaderboard build` adds these unless --no-reported;
    the library's `site.build` shows only the `external` rows it is given."""
    found = all_tables() if tables is None else tables
    rows = (reported_row(table, row) for table in found for row in table.rows)
    return [row for row in rows if row.scores]


def reported_row(table: ReportedTable, row: ReportedRow) -> ExternalRow:
    """One printed row with its table's provenance: the values as printed (×100), the table's label and
    link, and every note that says how the paper's setting differs (the table's, its columns', the row's)."""
    columns = tuple(f"{c.label}: {note}" for c in table.columns for note in c.notes if c.label in row.cells)
    size = _size(row.params)
    return ExternalRow(
        source="reported",
        model=row.label,  # unique in its table: the name, with the paper's size where it prints one name twice
        scores=row.scores(table),
        label=f"reported in {table.label}",
        url=table.url,
        table=table.id,
        notes=tuple(dict.fromkeys((*table.notes, *columns, *row.notes))),
        spec=row.spec,
        facts={"n_parameters": size} if size else {},
        origin=(table, row),
    )


def _size(printed: str | None) -> int | None:
    """A paper's size column as a parameter count ("7B" -> 7_000_000_000, "335M", "1.3B"); None otherwise."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMB])\s*", printed or "", re.IGNORECASE)
    if match is None:
        return None
    return round(float(match[1]) * {"K": 10**3, "M": 10**6, "B": 10**9}[match[2].upper()])
