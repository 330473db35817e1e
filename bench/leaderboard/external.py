"""Rows the leaderboard shows beside the submitted ones without having computed them: numbers a paper
reported (`bench.results.literature`) and MTEB's published results (`bench.leaderboard.mteb_published`).

Why a type of their own: a submitted row is a set of result files with run records, identities and a
verification state; an external row is a claim with a source. Keeping them apart means no external row
can ever be taken for verified, counted in a conflict, or reach a rule written for run records; the
table code reads both through the few fields they share (model name, scores per task).

This module also holds what leaderboard.json says of them (bench/leaderboard/table.py `leaderboard_data`
calls it): `external_json`, the row in `external` beside `models`, with the model facts the site's columns
and filters read (bench/leaderboard/facts.py, as for a submitted row), its `source`, the mark's words and
link, and its notes; `joins`, the suites it is shown in; `suite_sources`, the tables and notes that feed a
suite; and `reproductions`, the reported rows a submitted row's run records reproduce, with Δ.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Literal

from bench.core.json_types import JSONObject
from bench.leaderboard.facts import (
    HUB_ID,
    iso_date,
    positive_int,
    positive_number,
    registry_facts,
    short_text,
    size_bucket,
    web_link,
)
from bench.leaderboard.row_types import (
    CellMark,
    CellMarkJson,
    ExcludedJson,
    ExternalJson,
    PrintedAverageJson,
    PublishedCells,
    Reproduction,
    SuiteRow,
    SuiteSource,
    SuiteTable,
)
from bench.results import comparability, deltas, merged_rows
from bench.results.literature import PrintedAverage, ReportedRow, ReportedTable, all_tables
from bench.results.store import main_score

if TYPE_CHECKING:
    from bench.leaderboard.entries import Entry, ModelKey

Source = Literal["reported", "mteb"]
# A published cell not comparable with the harness's own runs of its task (bench/leaderboard/mteb_published.py
# `cell_marks`): scored with an older MTEB's main score, or on another (or an unrecorded) dataset revision.
CELL_MARKS: dict[CellMark, tuple[str, str]] = {  # key -> (symbol, words)
    "older_metric": ("ᴹ", "older metric"),
    "older_revision": ("ᴿ", "older dataset revision"),
}
Excluded = ExcludedJson  # a model a source has results for that the board shows no row of, with why


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
        unregistered: an MTEB row of a model MTEB's registry does not know (the user's own run in a
            `ResultCache` folder): its name, revision and facts are its files', marked `marks.UNREGISTERED`.
        unscored: task -> why the source gives no score for it although the model has a file of it (an MTEB
            file without the main score MTEB reads now): missing for that task only, so the row joins a
            suite it has every file of as a partial row (`joins`).
        cell_marks: task -> the marks of its cell (`CellMark` -> words): not comparable with the harness's
            own runs of the task.
        revisions: the model revisions the scores come from, most tasks first (MTEB's join may take
            tasks from several revision folders).
        training: the datasets the model was trained on as MTEB's registry says (similar tasks included),
            None when unknown: the row's zero-shot facts per suite (bench/leaderboard/zero_shot.py).
    """

    source: Source
    model: str
    scores: dict[str, float]
    label: str
    url: str
    table: str | None = None
    notes: tuple[str, ...] = ()
    facts: JSONObject = field(default_factory=dict)
    spec: JSONObject | None = None
    origin: tuple[ReportedTable, ReportedRow] | None = field(default=None, compare=False, repr=False)
    unregistered: bool = False
    unscored: dict[str, str] = field(default_factory=dict)
    cell_marks: dict[str, dict[CellMark, str]] = field(default_factory=dict)
    revisions: tuple[str, ...] = ()
    training: frozenset[str] | None = None

    @property
    def id(self) -> str:
        """A stable id for leaderboard.json, distinct from every submitted row's (those never contain '|')."""
        return f"{self.source}|{self.table or ''}|{self.model}"


def reported_rows(tables: Iterable[ReportedTable] | None = None) -> list[ExternalRow]:
    """Every row of the reported tables (`tables`, default every packaged one) that has a value on a
    harness task, as the leaderboard shows it: `bench leaderboard build` adds these unless --no-reported;
    the library's `site.build` shows only the `external` rows it is given."""
    found = all_tables() if tables is None else list(tables)
    return [reported_row(m.table, m.row, m) for m in merged_rows.merge(found).rows]


def reported_row(table: ReportedTable, row: ReportedRow, merged: merged_rows.MergedRow | None = None) -> ExternalRow:
    """One printed row with its table's provenance: the values as printed (×100), the table's label and
    link, and every note that says how the paper's setting differs (the table's, its columns', the row's).
    `merged`: the row with the same model's rows of other tables of its paper and suite (bench/results/
    merged_rows.py): their cells and notes join it, and a note names every table's row."""
    parts = merged.parts if merged is not None else ((table, row),)
    columns = tuple(f"{c.label}: {note}" for t, r in parts for c in t.columns for note in c.notes if c.label in r.cells)
    size = _size(row.params)
    notes = (*(n for t, _ in parts for n in t.notes), *columns, *(n for _, r in parts for n in r.notes))
    return ExternalRow(
        source="reported",
        model=row.label,  # unique in its table: the name, with the paper's size where it prints one name twice
        scores={t: v for t, (_, v) in merged.scores().items()} if merged is not None else row.scores(table),
        label=f"reported in {table.label}",  # the site lists its sources by table: the first table's
        url=table.url,
        table=table.id,
        notes=tuple(dict.fromkeys((*notes, *(merged.notes if merged is not None else ())))),
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


# ---------------------------------------------------------------------------------------- on the board
def joins(row: ExternalRow, tasks: Collection[str]) -> bool:
    """Whether `row` is shown in a suite table of `tasks`: a paper's row joins every suite holding one of
    its tasks; an MTEB row only the suites it has in full (mteb_published.py publishes a model for a suite
    only with all of its tasks, so a partial copy of it in a wider suite would be a number MTEB never
    published for that suite), or has a file of every task of with some MTEB cannot score (`unscored`:
    shown partial, "10 of 11", as MTEB's leaderboard shows a model with a missing task)."""
    if row.source == "mteb":
        return all(t in row.scores or t in row.unscored for t in tasks)
    return any(t in row.scores for t in tasks)


def published_cells(row: ExternalRow | None, tasks: Collection[str]) -> PublishedCells:
    """A suite-table row's cell facts for the suite's `tasks` (`row` None: a submitted row, whose cells are
    the harness's own runs): each marked cell (`CellMark`), each task the source gives no score for, whether
    every cell is comparable with the harness's runs (the site's "comparable with harness runs only"
    switch keeps the rows where it is), and the revisions the row's scores come from."""
    if row is None:
        return {"cell_marks": {}, "unscored": {}, "comparable_with_runs": True, "revisions": []}
    marked: dict[str, list[CellMarkJson]] = {
        t: [
            CellMarkJson(key=k, symbol=CELL_MARKS[k][0], label=CELL_MARKS[k][1], note=note)
            for k, note in sorted(row.cell_marks[t].items())
        ]
        for t in sorted(tasks)
        if row.cell_marks.get(t)
    }
    unscored = {t: why for t, why in sorted(row.unscored.items()) if t in tasks}
    return {
        "cell_marks": marked,
        "unscored": unscored,
        "comparable_with_runs": not marked,
        "revisions": list(row.revisions),
    }


def spec_hub_id(row: ExternalRow) -> str:
    """The hub id of the row's `bench run` spec ("st:intfloat/e5-large-v2" -> "intfloat/e5-large-v2"; "" without
    one): how a paper's row finds its model in MTEB's registry."""
    return str((row.spec or {}).get("model") or "").rpartition(":")[2]


def external_json(row: ExternalRow) -> ExternalJson:
    """An external row for leaderboard.json and the site: the model-facts keys a model has (None where
    the source gives none), the source's words, link, table and notes, and the scores (task -> ×100).

    A fact the source lacks is taken from MTEB's registry by the hub id of the row's spec (a paper's
    "st:intfloat/e5-large-v2"), as a submitted row's is by its name; no family (a spec's prefix may be an
    alias, and resolving it would import every adapter)."""
    hub = spec_hub_id(row)
    known = registry_facts(hub) if HUB_ID.match(hub) else {}
    facts = {**known, **{k: v for k, v in row.facts.items() if v is not None}}
    n_parameters = positive_int(facts.get("n_parameters"))
    use = facts.get("use_instructions")
    own_size = positive_int(row.facts.get("n_parameters"))
    return {
        "id": row.id,
        "source": row.source,
        "name": row.model,
        "label": row.model,
        "revision": short_text(facts.get("revision"), 200),
        "setting": "",
        "source_label": row.label,
        "url": web_link(row.url),
        "table": row.table,
        "notes": list(row.notes),
        "spec": row.spec,
        "family": short_text(facts.get("family")),
        "baseline": False,  # marks.BASELINE.key
        "unregistered": row.unregistered,  # marks.UNREGISTERED.key
        "instruction_aware": use if isinstance(use, bool) else None,
        "n_parameters": n_parameters,
        "size_source": (row.label if own_size else "MTEB's model registry, by the spec's hub id")
        if n_parameters
        else None,
        "size_bucket": size_bucket(n_parameters),
        "embed_dim": positive_int(facts.get("embed_dim")),
        "readout": None,
        "template": None,
        "max_tokens": positive_number(facts.get("max_tokens")),
        "license": short_text(facts.get("license")),
        "release_date": iso_date(facts.get("release_date")),
        "memory_usage_mb": positive_number(facts.get("memory_usage_mb")),
        "quantisation": None,
        "reference": web_link(facts.get("reference")),
        "verification": None,
        "flags": [],
        "scores": dict(sorted(row.scores.items())),
        "unscored": dict(sorted(row.unscored.items())),
        "revisions": list(row.revisions),
    }


def as_printed(table_row: SuiteRow, row: ExternalRow, averages: Mapping[str, Collection[str]]) -> SuiteRow:
    """A suite-table row of a paper's row with each average that covers the tasks the paper's own average
    covers (`averages`: label -> its tasks) as printed (`ReportedTable.printed_average`), and
    `printed_averages`: label -> {"printed", "recomputed"}, the mean of the same printed cells where it
    differs beyond print precision, else None (empty for an MTEB row, as for a submitted one).

    Why: the site said "stored as printed, not recomputed" beside PromptBERT's 78.52, which MetaEOL
    prints as 78.54; the paper's number is the one a reader checks."""
    found: dict[str, PrintedAverage] = {}
    if row.origin is not None:
        table, printed = row.origin
        for label, tasks in averages.items():
            if table_row["averages"].get(label) is not None and (p := table.printed_average(printed, tasks)):
                found[label] = p
    printed_json: dict[str, PrintedAverageJson] = {
        label: {"printed": p.value, "recomputed": p.recomputed} for label, p in found.items()
    }
    shown = table_row.copy()  # a new row, as `table_row | {...}` gives: the caller's is not changed
    shown["averages"] = table_row["averages"] | {label: p.value for label, p in found.items()}
    shown["printed_averages"] = printed_json
    return shown


def suite_sources(suite: SuiteTable, external: Mapping[str, ExternalJson]) -> list[SuiteSource]:
    """The reported tables and published results that feed a suite table (`external`: id -> `external_json`),
    each once, with every note of their rows in the table (a table's own notes first: they are on each of
    its rows)."""
    found: dict[tuple[str, str], SuiteSource] = {}
    for r in suite["rows"]:
        x = external.get(r["model_id"])
        if x is None:
            continue
        key = (x["source"], x["table"] or x["source_label"])
        entry = found.setdefault(
            key,
            {
                "source": x["source"],
                "table": x["table"],
                "url": x["url"],
                "label": x["source_label"],
                "rows": 0,
                "notes": [],
            },
        )
        entry["rows"] += 1
        entry["notes"] += [n for n in x["notes"] if n not in entry["notes"]]
    return list(found.values())


def reproductions(
    rows: Mapping[ModelKey, Mapping[str, Entry]], external: Sequence[ExternalRow]
) -> dict[ModelKey, list[Reproduction]]:
    """Per submitted row (its key -> its accepted results by task), the reported rows its results
    reproduce: those whose spec its run records match (`bench.results.deltas.matches`: the same spec and
    options, a whole run), each with every printed cell beside ours, Δ, and the mean |Δ|
    (`deltas.reproduction`, the figure `bench reproduce` prints). Indexed by spec first, so a build
    compares each result with the few rows of its own spec only."""
    by_spec: dict[str, list[tuple[ExternalRow, ReportedTable, ReportedRow, JSONObject]]] = {}
    for x in external:
        if x.origin is not None and x.spec is not None:
            by_spec.setdefault(deltas.public_spec(str(x.spec["model"])), []).append((x, *x.origin, x.spec))
    found: dict[ModelKey, list[Reproduction]] = {}
    for key, results in rows.items() if by_spec else ():
        candidates = {c[0].id: c for e in results.values() for c in by_spec.get(e.record["model"].get("spec"), [])}
        for x, table, printed, spec in candidates.values():
            matched = {t: e for t, e in results.items() if deltas.matches(spec, e.record)}
            scores = {t: 100 * main_score(e.result) for t, e in matched.items()}
            stand_in, local = comparability.split_issues({t: e.record for t, e in matched.items()})
            done = deltas.reproduction(table, printed, scores, stand_in, local) if scores else None
            if done is not None and done.compared:
                found.setdefault(key, []).append(_reproduction_json(x, table, done))
    return found


def _reproduction_json(x: ExternalRow, table: ReportedTable, done: deltas.Reproduction) -> Reproduction:
    return {
        "reported_id": x.id,
        "table": x.table,
        "label": table.label,
        "url": web_link(x.url),
        "row": x.model,
        "mean_abs_delta": done.mean_abs_delta,
        "missing": list(done.missing),
        "on_stand_in": list(done.on_stand_in),
        "on_local_copy": list(done.on_local_copy),
        "cells": [asdict(c) for c in done.cells],
    }
