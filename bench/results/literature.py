"""The source papers' reported tables, as data: one YAML file per table in `bench/results/reported/`.

Why data: a reader places a new model against the field only if the papers' rows sit beside it, and a
number copied into code by hand cannot be checked. Each file holds the paper's facts, the table's
number and caption verbatim, its columns mapped to the harness's tasks and main scores, and per row
the model as printed, every value exactly as printed (×100, as in the paper), and the `bench run` spec
that would reproduce it (or why none can). tests/results/test_literature.py checks every number against
the paper's own text in `../shared/seeds`.

Where: the issue (31) suggested `bench/leaderboard/reported/`; the files live under the results layer
instead, because `bench reproduce` (run layer) and `bench results --reported` read them too, and a
layer imports only downward (bench/results sits below both bench.run and bench.leaderboard).

File format (docs/reference/reported.md): top-level keys `paper`, `number`, `caption`, `suite`,
`notes`, `columns`, `rows`; every mapping is closed (an unknown key is refused, naming it), every value
finite, every cell names a declared column, every column's task is a registered harness task whose main
score is the column's metric (from `bench.results.task_catalog`, so MTEB is not imported). A problem is
one ConfigError naming the file and the field; an unknown table id is an UnknownNameError.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.core.bounded import brief
from bench.core.config_files import read_yaml_or_json
from bench.core.errors import ConfigError, UnknownNameError
from bench.results import task_catalog

REPORTED_DIR = Path(__file__).resolve().parent / "reported"
LIST_COMMAND = "python -m bench list reported"


@dataclass(frozen=True)
class PaperRef:
    """A paper a table comes from; ids checked against the paper's own text."""

    key: str  # "inbedder-2024": the paper's prefix of its tables' ids
    name: str  # the method's short name, "InBedder"
    title: str
    authors: str  # as printed, comma-separated
    venue: str  # "ACL", "Findings of ACL"
    year: int
    arxiv: str | None  # "2402.09642"
    acl: str | None  # ACL Anthology id ("2024.acl-long.27") when the paper's text prints one
    bibtex_key: str
    url: str
    seed: str  # the file-name prefix of the paper's text in ../shared/seeds ("000")

    @property
    def label(self) -> str:
        """ "InBedder (Peng et al., ACL 2024)": the method, the first author's surname, venue and year."""
        first = self.authors.split(",")[0].split()
        return f"{self.name} ({first[-1] if first else '?'} et al., {self.venue} {self.year})"


@dataclass(frozen=True)
class ReportedColumn:
    """One printed column: its header, and the harness task and main score it maps to."""

    label: str  # the paper's header as printed ("I.STSB")
    task: str | None  # the harness task (None: no such task, a paper-only column, or an average)
    metric: str | None  # the task's main score name ("cosine_spearman"); None when task is None
    average: bool = False  # the paper's own average column ("Avg"): stored, never recomputed
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReportedRow:
    """One printed row: the model as the paper names it, its values, and how the harness would run it."""

    name: str  # verbatim, e.g. "opt-1.3b-INBEDDER (1st-gen)"
    cells: dict[str, float]  # column label -> value as printed (×100); a blank cell is absent
    spec: dict[str, Any] | None  # {"model": SPEC, "model_args": {...}}, the keys of a --model-config file
    why_not: str | None  # when spec is None: why the harness cannot run it
    notes: tuple[str, ...] = ()
    params: str | None = None  # the paper's size column when it prints one ("7B"): MetaEOL prints a name twice

    @property
    def label(self) -> str:
        """The row's name, unique in its table: "Echo-LLAMA2 (13B)" where the paper's size column tells two
        rows of one name apart, else the name as printed."""
        return f"{self.name} ({self.params})" if self.params else self.name

    def scores(self, table: ReportedTable) -> dict[str, float]:
        """Harness task name -> the printed value, for this row's cells in task columns (averages left out)."""
        return {c.task: self.cells[c.label] for c in table.task_columns() if c.task and c.label in self.cells}


@dataclass(frozen=True)
class ReportedTable:
    """One table of a paper: its columns mapped to harness tasks, its rows, and the notes a reader of the
    rows needs (shown wherever they are)."""

    id: str  # the file's stem, "inbedder-2024-table1"
    paper: PaperRef
    number: int
    caption: str | None  # verbatim; None where the paper's text (an HTML rendering) lost it, said in notes
    suite: str | None  # the harness suite whose table it feeds
    columns: tuple[ReportedColumn, ...]
    rows: tuple[ReportedRow, ...]
    notes: tuple[str, ...]  # what differs from the harness's tasks; shown wherever the rows are
    omitted_rows: tuple[str, ...] = ()  # printed rows left out on purpose (not models: "Relative Gain")
    decimals: int = 2  # the decimals the paper prints: YAML reads "30.10" as 30.1, `printed` writes it back

    @property
    def label(self) -> str:
        """ "InBedder (Peng et al., ACL 2024), Table 1"."""
        return f"{self.paper.label}, Table {self.number}"

    @property
    def url(self) -> str:
        return self.paper.url

    def printed(self, value: float) -> str:
        """A value as the paper printed it ("30.10"), from the number its file stores (30.1)."""
        return f"{value:.{self.decimals}f}"

    def task_columns(self) -> list[ReportedColumn]:
        """The columns that map to a harness task (not the paper's averages), in the paper's order."""
        return [c for c in self.columns if c.task is not None and not c.average]

    def printed_average(self, row: ReportedRow, tasks: Collection[str]) -> PrintedAverage | None:
        """`row`'s value in the paper's own average column when that column averages exactly `tasks`, as
        printed, with the mean of the same printed cells beside it where the two differ beyond print
        precision; None when no average column of the table covers `tasks` or the row leaves it blank.

        Why: an average a paper prints is a fact about the paper, and a reader compares it with the paper;
        recomputing it silently shows PromptBERT's printed 78.54 (MetaEOL Table 1) as 78.52. An average
        column covers every other column of its table (the papers' Avg. and Mean do), so a table with a
        paper-only column has no average over harness tasks alone."""
        covered = [c for c in self.columns if not c.average]
        if any(c.task is None for c in covered) or {c.task for c in covered} != set(tasks):
            return None
        for column in self.columns:
            if column.average and column.label in row.cells:
                value, cells = row.cells[column.label], [row.cells.get(c.label) for c in covered]
                mean = None if None in cells else sum(c or 0.0 for c in cells) / len(cells)
                # the cells and the average are each rounded: a difference within one unit of the last
                # printed place is print precision, not a disagreement
                differs = mean is not None and abs(value - mean) > 10**-self.decimals + 1e-9
                return PrintedAverage(value, round(mean, self.decimals) if differs and mean is not None else None)
        return None

    def row(self, label: str) -> ReportedRow:
        """The row whose `label` (or, when it is the only one of that name, `name`) is `label`."""
        found = [r for r in self.rows if r.label == label] or [r for r in self.rows if r.name == label]
        if len(found) == 1:
            return found[0]
        raise UnknownNameError(f"row of {self.id}", label, [r.label for r in self.rows], list_command=LIST_COMMAND)


@dataclass(frozen=True)
class PrintedAverage:
    """A paper's own average of one row, as printed (×100), and the mean of the same printed cells where
    it differs beyond print precision (`ReportedTable.printed_average`)."""

    value: float
    recomputed: float | None  # rounded to the table's decimals


RECOMPUTED = "recomputed"  # the word beside a printed average that is not the mean: "78.54 (78.52 recomputed)"


# ---------------------------------------------------------------------------------------- finding tables
def table_ids() -> list[str]:
    """The packaged tables' ids, sorted."""
    return sorted(p.stem for p in REPORTED_DIR.glob("*.yaml"))


def load_table(name_or_path: str | Path) -> ReportedTable:
    """A packaged table by id, or a YAML file of the same format by path (a path names a file: it has a
    separator or ends in .yaml/.yml)."""
    text = str(name_or_path)
    if isinstance(name_or_path, Path) or "/" in text or text.endswith((".yaml", ".yml")):
        return _parse(Path(name_or_path))
    if text not in table_ids():
        raise UnknownNameError("reported table", text, table_ids(), list_command=LIST_COMMAND)
    return _parse(REPORTED_DIR / f"{text}.yaml")


def all_tables() -> list[ReportedTable]:
    return [load_table(i) for i in table_ids()]


def tables_for_tasks(tasks: Iterable[str]) -> list[ReportedTable]:
    """The packaged tables with at least one task column on `tasks`."""
    wanted = set(tasks)
    return [t for t in all_tables() if any(c.task in wanted for c in t.task_columns())]


# ---------------------------------------------------------------------------------------- parsing
_TOP = {"paper", "number", "caption", "suite", "notes", "columns", "rows", "omitted_rows", "decimals"}
_PAPER = {"key", "name", "title", "authors", "venue", "year", "arxiv", "acl", "bibtex_key", "url", "seed"}
_PAPER_OPTIONAL = {"arxiv", "acl"}
_COLUMN = {"label", "task", "metric", "average", "notes"}
_ROW = {"name", "params", "cells", "spec", "why_not", "notes"}
_SPEC = {"model", "model_args"}


class _Reader:
    """Field-by-field checks of one file's parsed YAML, each failure naming the file and the field."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, field: str, problem: str) -> ConfigError:
        return ConfigError(f"reported table {self.path}: {field} {problem}.")

    def mapping(self, value: object, field: str, keys: set[str], optional: Collection[str] = ()) -> dict[str, object]:
        if not isinstance(value, dict):
            raise self.fail(field, f"must be a mapping, not {brief(value)}")
        unknown = sorted(str(k) for k in value if k not in keys)
        if unknown:
            raise self.fail(field, f"has unknown key(s) {', '.join(unknown)}; the keys are {', '.join(sorted(keys))}")
        missing = sorted(keys - set(optional) - set(value))
        if missing:
            raise self.fail(field, f"lacks {', '.join(missing)}")
        return value

    def text(self, value: object, field: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(field, f"must be a non-empty string, not {brief(value)}")
        return value

    def optional_text(self, value: object, field: str) -> str | None:
        """`text`, or None where the field is absent or null."""
        return None if value is None else self.text(value, field)

    def integer(self, value: object, field: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(field, f"must be an integer, not {brief(value)}")
        return value

    def number(self, value: object, field: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.fail(field, f"must be a finite number, not {brief(value)}")
        return float(value)

    def strings(self, value: object, field: str) -> tuple[str, ...]:
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.fail(field, f"must be a list of strings, not {brief(value)}")
        return tuple(self.text(v, f"{field}[{i}]") for i, v in enumerate(value))

    def items(self, value: object, field: str) -> list[object]:
        if not isinstance(value, list) or not value:
            raise self.fail(field, f"must be a non-empty list, not {brief(value)}")
        return value


def _parse(path: Path) -> ReportedTable:
    data, _ = read_yaml_or_json(path, "reported table")
    r = _Reader(path)
    top = r.mapping(
        data, "the file", _TOP, {"notes", "omitted_rows", "decimals"}
    )  # caption and suite present, null when there is none
    columns = tuple(_column(r, c, f"columns[{i}]") for i, c in enumerate(r.items(top["columns"], "columns")))
    _check_columns(r, columns)
    decimals = r.integer(top.get("decimals", 2), "decimals")
    if not 0 <= decimals <= 6:
        raise r.fail("decimals", f"must be between 0 and 6 (the decimals the paper prints), not {decimals}")
    rows = tuple(_row(r, x, f"rows[{i}]", columns, decimals) for i, x in enumerate(r.items(top["rows"], "rows")))
    labels = [x.label for x in rows]
    twice = sorted({n for n in labels if labels.count(n) > 1})
    if twice:
        raise r.fail("rows", f"hold {twice[0]!r} more than once; each printed row once (params tells two sizes apart)")
    suite = r.optional_text(top["suite"], "suite")
    if suite is not None and suite not in task_catalog.suites():
        raise UnknownNameError("suite", suite, task_catalog.suites(), list_command="python -m bench list suites")
    return ReportedTable(
        id=path.stem,
        paper=_paper(r, top["paper"]),
        number=r.integer(top["number"], "number"),
        caption=r.optional_text(top["caption"], "caption"),
        suite=suite,
        columns=columns,
        rows=rows,
        notes=r.strings(top.get("notes"), "notes"),
        omitted_rows=r.strings(top.get("omitted_rows"), "omitted_rows"),
        decimals=decimals,
    )


def _paper(r: _Reader, value: object) -> PaperRef:
    p = r.mapping(value, "paper", _PAPER, _PAPER_OPTIONAL)
    # checked in sorted order: a file with several bad fields names the same one first every time
    text = {k: r.text(p[k], f"paper.{k}") for k in sorted(_PAPER - _PAPER_OPTIONAL - {"year"})}
    optional = {k: r.optional_text(p.get(k), f"paper.{k}") for k in sorted(_PAPER_OPTIONAL)}
    return PaperRef(
        key=text["key"],
        name=text["name"],
        title=text["title"],
        authors=text["authors"],
        venue=text["venue"],
        year=r.integer(p["year"], "paper.year"),
        arxiv=optional["arxiv"],
        acl=optional["acl"],
        bibtex_key=text["bibtex_key"],
        url=text["url"],
        seed=text["seed"],
    )


def _column(r: _Reader, value: object, field: str) -> ReportedColumn:
    c = r.mapping(value, field, _COLUMN, {"task", "metric", "average", "notes"})
    average = c.get("average", False)
    if not isinstance(average, bool):
        raise r.fail(f"{field}.average", f"must be true or false, not {brief(average)}")
    return ReportedColumn(
        label=r.text(c["label"], f"{field}.label"),
        task=r.optional_text(c.get("task"), f"{field}.task"),
        metric=r.optional_text(c.get("metric"), f"{field}.metric"),
        average=average,
        notes=r.strings(c.get("notes"), f"{field}.notes"),
    )


def _check_columns(r: _Reader, columns: tuple[ReportedColumn, ...]) -> None:
    """Unique labels; a task column names a registered task and its main score; an average names none."""
    labels = [c.label for c in columns]
    main_scores = task_catalog.main_scores()
    for i, c in enumerate(columns):
        field = f"columns[{i}] ({c.label})"
        if labels.count(c.label) > 1:
            raise r.fail(field, "repeats a label; each column once")
        if c.average and (c.task or c.metric):
            raise r.fail(field, "is an average: it takes neither task nor metric")
        if c.task is None:
            if c.metric is not None:
                raise r.fail(field, "has a metric but no task; give the task, or drop the metric")
            continue
        if c.task not in main_scores:
            raise UnknownNameError("task", c.task, main_scores)
        if c.metric != main_scores[c.task]:
            raise r.fail(
                f"{field}.metric",
                f"is {c.metric!r}, but {c.task}'s main score is {main_scores[c.task]!r}; a column maps to the main score",
            )


def _row(r: _Reader, value: object, field: str, columns: tuple[ReportedColumn, ...], decimals: int) -> ReportedRow:
    x = r.mapping(value, field, _ROW, {"spec", "why_not", "notes", "params"})
    name = r.text(x["name"], f"{field}.name")
    field = f"{field} ({name})"
    cells_in = x["cells"]
    if not isinstance(cells_in, Mapping) or not cells_in:
        raise r.fail(f"{field}.cells", f"must be a mapping of column label: value, not {brief(cells_in)}")
    labels = [c.label for c in columns]
    cells: dict[str, float] = {}
    for label, cell in cells_in.items():
        if label not in labels:
            raise r.fail(f"{field}.cells", f"names {brief(label)}, not a column; the columns are {', '.join(labels)}")
        cells[label] = r.number(cell, f"{field}.cells.{label}")
        if round(cells[label], decimals) != cells[label]:
            raise r.fail(
                f"{field}.cells.{label}", f"is {cell!r}, more decimals than the table's {decimals} (decimals:)"
            )
    spec, why_not = _spec(r, x.get("spec"), field), r.optional_text(x.get("why_not"), f"{field}.why_not")
    if (spec is None) == (why_not is None):
        raise r.fail(field, "needs exactly one of spec (how the harness runs it) and why_not (why it cannot)")
    notes, params = r.strings(x.get("notes"), f"{field}.notes"), r.optional_text(x.get("params"), f"{field}.params")
    return ReportedRow(name, cells, spec, why_not, notes, params)


def _spec(r: _Reader, value: object, field: str) -> dict[str, Any] | None:
    if value is None:
        return None
    s = r.mapping(value, f"{field}.spec", _SPEC, {"model_args"})
    args = s.get("model_args") or {}
    if not isinstance(args, dict) or not all(isinstance(k, str) for k in args):
        raise r.fail(f"{field}.spec.model_args", f"must be a mapping of option: value, not {brief(args)}")
    return {"model": r.text(s["model"], f"{field}.spec.model"), "model_args": dict(args)}
