"""Tables printed after `bench run` and by `bench results DIR`.

One number format everywhere in the CLI (tables and progress lines): scores ×100 with two decimals, as
the papers and the leaderboard print them (`format_score`).

Averages follow the leaderboard's suites (`bench/results/suites.py`: which tasks each paper averages, and
what the column is called). An average is marked partial ("2 of 3 tasks, partial") when the run lacks
some of its tasks, since it is then not comparable with the paper's; a suite whose tasks mix score kinds
(Δci, a difference of V-measures, next to absolute scores: `inbedder`, `all`) gets no average at all.
Marks come from `bench.results.marks` (one set for the CLI, the site and LaTeX): a score computed on
stand-in data (the folder's manifest says `proxy`, see `bench.tasks.data.stand_in_of`) carries ‡, one computed on
a local copy of the data (`--data-dir`) †, an instruction-blind setting's row ∅ (a baseline: never
ranked, never bold), a `--limit` run's row ⊂ ("subset: N of M texts": never ranked, never bold), a row a
paper printed (`--reported`) §; each mark used is explained once under the table. Which rows get a rank
is `bench.results.ranking` (the same rule as the site's), said once under the table (`RULE`).

Results run under instruction variants (`bench run --instruction-variants`) are not model rows: one
model with 30 variants would add 30 rows. `bench results` summarizes them after the main table instead
(`sensitivity_tables`, statistics from `bench.results.sensitivity`): spread of the main score per task and
model, and per task how stable the models' ranking is across the variants.

`bench results --format markdown|csv|latex` renders the same `Table`s: markdown (GitHub style, the
default), CSV (the main table only: one header row, scores ×100 with two decimals, marks in a `marks`
column, every value whole) or a booktabs LaTeX table per table (`render_latex`) that fits an article's
text width: the site's short column labels, each row's settings (model id, revision, experiment) in a
legend under it instead of columns, footnotes whole.
"""

from __future__ import annotations

import csv
import io
import re
import textwrap
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tabulate import tabulate

from bench.core.bounded import printable
from bench.core.errors import DataError, UnknownNameError
from bench.results.marks import (
    BASELINE,
    LOCAL_COPY,
    MARKS,
    REPORTED,
    STAND_IN,
    SUBSET,
    Mark,
    is_baseline,
    legend,
)
from bench.results.outcome import TaskOutcome
from bench.results.ranking import RULE, Candidate, ranks
from bench.results.sensitivity import collect, is_variant, stability_by_task
from bench.results.store import find_results, load_result_json, main_score

_HIDDEN = {"main_score", "evaluation_time", "kg_co2_emissions"}
EXPERIMENTS = "experiments"  # MTEB's folder of experiment results under a model revision (mteb.cache)
FORMATS = ("markdown", "csv", "latex")
DETAILS_WIDTH = 60  # the longest Details cell of `bench run`'s table; the rest is printed in full below it
SHORT_REVISION = 12  # revision characters shown unless --full-revisions
_VALUE_WIDTH = 20  # an experiment setting's value in the Experiment column


def format_score(value: float) -> str:
    """A score as every table and log line of the CLI shows it: ×100, two decimals."""
    return f"{100 * value:.2f}"


def format_count(value: Any) -> str:
    """A count as every CLI table shows it: thousands separated (`1,106`); '-' when unknown."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return "-" if value is None or value == "" else str(value)


# ---------------------------------------------------------------------------------------- averages
@dataclass(frozen=True)
class SuiteAverage:
    """One average of one suite over the tasks that have a score."""

    suite: str
    label: str  # the paper's name of the average ("Avg", "Mean", "Mean Δci")
    tasks: tuple[str, ...]  # every task the average is defined over
    present: tuple[str, ...]  # those with a score
    value: float  # mean of the present tasks' main scores (0-1 scale)

    @property
    def complete(self) -> bool:
        return len(self.present) == len(self.tasks)

    @property
    def name(self) -> str:
        """`Average (awareness)`, `Mean Δci (robustness)`, `Avg (InBedder; generic)`."""
        return self._named(self.suite)

    @property
    def title(self) -> str:
        """The name, and for a partial average how partial: `Average (gstransform, 6 of 9 tasks, partial)`."""
        if self.complete:
            return self.name
        return self._named(f"{self.suite}, {len(self.present)} of {len(self.tasks)} tasks, partial")

    def _named(self, inner: str) -> str:
        name = "Average" if self.label in ("Avg", "Avg.", "Mean") else self.label
        return f"{name[:-1]}; {inner})" if name.endswith(")") else f"{name} ({inner})"

    @property
    def missing(self) -> list[str]:
        return [t for t in self.tasks if t not in self.present]


def suite_averages(scores: dict[str, float]) -> list[SuiteAverage]:
    """Every suite average that two or more of the scored tasks take part in (task -> main score, 0-1).

    Suites come from `tasks.SUITES` (through `bench.results.task_catalog`) and their averages from `bench.results.suites`; an average defined over
    the same tasks as one already listed is not repeated (generic's STS average is generic-sts's), and
    suites that mix gaps (Δci) with absolute scores (inbedder, all) are left out: the site splits those
    into two averages, which on a CLI run would only repeat partial copies of the other suites' rows.
    """
    from bench.results.suites import is_gap
    from bench.results.suites import suite_averages as average_columns
    from bench.results.task_catalog import main_scores, suites

    out: list[SuiteAverage] = []
    seen: set[tuple[str, ...]] = set()
    main_score_names = main_scores()
    for suite, members in suites().items():
        mains = {t: main_score_names[t] for t in members if t in main_score_names}
        if len({is_gap(m) for m in mains.values()}) > 1:
            continue
        for avg in average_columns(suite, mains):
            over = tuple(avg.tasks or members)
            present = tuple(t for t in over if t in scores)
            if len(present) < 2 or tuple(sorted(over)) in seen:
                continue
            seen.add(tuple(sorted(over)))
            out.append(SuiteAverage(suite, avg.label, over, present, sum(scores[t] for t in present) / len(present)))
    return out


# ---------------------------------------------------------------------------------------- bench run
def _details(outcome: TaskOutcome) -> list[str]:
    """Per-criterion / per-aspect sub-scores, which show what the main score hides (`label score` each)."""
    return [
        f"{label} {format_score(value)}"
        for _, label, value in detail_values(outcome.task, outcome.scores, outcome.main_score_name)
    ]


def shorten_list(parts: Sequence[str], width: int = DETAILS_WIDTH, prefix: str = "") -> str:
    """`prefix` and the parts joined by commas, cut after the last part that fits `width` with a `…`."""
    text = prefix + ", ".join(parts)
    if len(text) <= width:
        return text
    shown: list[str] = []
    for part in parts:
        if len(prefix + ", ".join([*shown, part, "…"])) > width:
            break
        shown.append(part)
    return prefix + ", ".join([*shown, "…"]) if shown else textwrap.shorten(text, width, placeholder=" …")


def detail_values(task_name: str, scores: dict[str, Any], main_score_name: str) -> list[tuple[str, str, float]]:
    """(score key, label, raw value) of a task's sub-scores; also the leaderboard's per-aspect plot.

    A task type may name its own (`detail_scores`: score key -> label, in print order); otherwise
    success rates and V-measures other than the main score are shown.
    """
    declared = _declared_details(task_name)
    if declared:
        return [(key, label, scores[key]) for key, label in declared.items() if isinstance(scores.get(key), float)]
    parts = []
    for key, value in scores.items():
        if key in _HIDDEN or key == main_score_name or not isinstance(value, float):
            continue
        if key.endswith("success_rate") or key.startswith("v_measure_"):
            parts.append((key, key.removesuffix("_success_rate").removeprefix("v_measure_"), value))
    return parts


def _declared_details(task_name: str) -> dict[str, str] | None:
    from bench.results.task_catalog import detail_scores

    return detail_scores(task_name)


def stand_in(record: dict[str, Any] | None) -> str | None:
    """The stand-in note of a run record's data, or None when the data is the task's published set."""
    dataset = ((record or {}).get("task") or {}).get("dataset") or {}
    return (dataset.get("stand_in_note") or "stand-in data") if dataset.get("stand_in") else None


def local_copy(record: dict[str, Any] | None) -> bool:
    """True when a run record's data was a local copy (`--data-dir`): its source is `local:<folder>`, or its
    revision a `local-<hash>` not shipped in the package. A result without a record is not marked."""
    dataset = ((record or {}).get("task") or {}).get("dataset") or {}
    source, revision = str(dataset.get("source") or ""), str(dataset.get("revision") or "")
    return source.startswith("local:") or (revision.startswith("local-") and source != "package")


def data_marks(record: dict[str, Any] | None) -> tuple[Mark, ...]:
    """The marks a score carries for the data it was computed on (local copy †, stand-in ‡)."""
    return tuple(m for m, on in ((LOCAL_COPY, local_copy(record)), (STAND_IN, stand_in(record) is not None)) if on)


def limit_of(record: dict[str, Any] | None) -> int | None:
    """The `--limit` a result was run with (the run record's `task.limit`); None for a full run."""
    limit = ((record or {}).get("task") or {}).get("limit")
    return limit if isinstance(limit, int) and not isinstance(limit, bool) else None


def texts_of(record: dict[str, Any] | None) -> int | None:
    """How many texts the run sent to the model (`encode.texts_requested`), None when the record says not."""
    texts = ((record or {}).get("encode") or {}).get("texts_requested")
    return texts if isinstance(texts, int) and not isinstance(texts, bool) and texts > 0 else None


def subset_words(limit: int, texts: int | None = None, total: int | None = None) -> str:
    """What a `--limit` result was scored on: "subset: 76 of 486 texts (--limit 8)" when the full run's count
    is known (a full run of the same tasks in the same table), else "subset of the texts (76, --limit 8)"."""
    if texts and total:
        return f"subset: {texts:,} of {total:,} texts (--limit {limit})"
    return f"subset of the texts ({f'{texts:,}, ' if texts else ''}--limit {limit})"


def marks_footnote(used: Iterable[Mark | str], notes: dict[str, dict[str, str]] | None = None) -> list[str]:
    """Lines under a table: one per mark used (`bench.results.marks.legend`), each followed by its notes
    (mark key -> what -> note: each stand-in task's note, each limited row's subset, each reported table),
    whole."""
    keys = {u.key if isinstance(u, Mark) else u for u in used}
    lines: list[str] = []
    for mark in MARKS:
        if mark.key in keys:
            lines += [
                textwrap.fill(line, width=110, subsequent_indent="  ", break_on_hyphens=False)
                for line in legend([mark])
            ]
            lines += [
                textwrap.fill(
                    f"{what}: {note}",
                    width=110,
                    initial_indent="  - ",
                    subsequent_indent="    ",
                    break_on_hyphens=False,
                )
                for what, note in sorted((notes or {}).get(mark.key, {}).items())
            ]
    return lines


def run_table(outcomes: list[TaskOutcome]) -> str:
    """What `bench run` prints: the scores (one row per task, then the suite averages, then footnotes),
    the run's diagnostics (status, encoding, time), and with instruction variants their summary per task
    (`variant_run_table`)."""
    variants = [o for o in outcomes if o.variant]
    defaults = [o for o in outcomes if not o.variant]
    tables = [scores_run_table(defaults), diagnostics_run_table(defaults)] if defaults else []
    if variants:
        tables.append(variant_run_table(variants, defaults))
    return "\n\n".join(tables)


def variant_run_table(outcomes: list[TaskOutcome], defaults: Sequence[TaskOutcome] = ()) -> str:
    """Per task, over its variants: the columns of `bench results`' sensitivity table (`stat_cells`),
    plus what encoding the variants took beyond the default run."""
    from bench.results.sensitivity import VariantScore, summarize

    def variant(o: TaskOutcome) -> dict[str, Any]:
        assert o.variant is not None  # `run_tables` passes the variants' outcomes only
        return o.variant

    default_score = {(o.task, o.main_score_name): o.main_score for o in defaults}
    by_task: dict[str, list[TaskOutcome]] = defaultdict(list)
    for o in outcomes:
        by_task[o.task].append(o)
    summaries = []
    for task, group in by_task.items():
        order = variant(group[0]).get("sets") or tuple(
            dict.fromkeys(variant(o)["set"] for o in group if variant(o).get("set"))
        )
        scores = [VariantScore(variant(o)["label"], variant(o).get("set"), o.main_score) for o in group]
        summaries.append((task, group, summarize(scores, order)))
    differences = list(dict.fromkeys(d for *_, s in summaries for d in s.get("set_differences", {})))
    rows = []
    for task, group, stats in summaries:
        computed = [o.record.get("encode", {}) for o in group if o.status == "computed"]
        rows.append(
            [
                task,
                group[0].main_score_name,
                *stat_cells(stats, differences, default_score.get((task, group[0].main_score_name))),
                format_count(sum(e.get("texts_encoded", 0) for e in computed)),
                format_count(sum(e.get("cache_hits", 0) for e in computed)),
            ]
        )
    headers = ["Task", "Metric", *STAT_HEADERS, *differences, "Encoded", "Cache hits"]
    return "Instruction variants\n" + tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)


STAT_HEADERS = ["Variants", "Own", "Mean", "Std", "Min", "Max"]


def stat_cells(stats: dict[str, Any], differences: list[str], default: float | None = None) -> list[str]:
    """One row's STAT_HEADERS cells, then one per set difference, from a `bench.results.sensitivity.summarize` result."""
    diffs = stats.get("set_differences", {})
    return [
        format_count(stats["n"]),
        "-" if default is None else format_score(default),
        format_score(stats["mean"]),
        "-" if stats["std"] is None else format_score(stats["std"]),
        format_score(stats["min"]),
        format_score(stats["max"]),
        *(format_score(diffs[d]) if d in diffs else "-" for d in differences),
    ]


def scores_run_table(outcomes: list[TaskOutcome]) -> str:
    """Task, Metric, Score, Details; then the suite averages; then the marks' legend and, for a Details
    cell cut to DETAILS_WIDTH, the whole of it."""
    rows: list[list[str]] = []
    notes: dict[str, dict[str, str]] = defaultdict(dict)
    used: set[Mark] = set()
    cut: dict[str, str] = {}
    limited: set[str] = set()
    for o in outcomes:
        marks = data_marks(o.record)
        if (note := stand_in(o.record)) is not None:  # STAND_IN in marks
            notes[STAND_IN.key][o.task] = note
        if (limit := limit_of(o.record)) is not None:  # a subset: marked, as in `bench results`
            marks += (SUBSET,)
            notes[SUBSET.key][o.task] = subset_words(limit, texts_of(o.record))
            limited.add(o.task)
        used.update(marks)
        details = _details(o)
        cell = shorten_list(details)
        if cell != ", ".join(details):
            cut[o.task] = ", ".join(details)
        rows.append([o.task + "".join(m.symbol for m in marks), o.main_score_name, format_score(o.main_score), cell])
    for avg in suite_averages({o.task: o.main_score for o in outcomes}):
        missing = shorten_list(avg.missing, prefix="missing: ") if avg.missing else ""
        if missing and missing != "missing: " + ", ".join(avg.missing):
            cut[avg.name] = "missing: " + ", ".join(avg.missing)
        mark = SUBSET.symbol if limited & set(avg.present) else ""
        rows.append([avg.title + mark, f"mean of {len(avg.present)} tasks", format_score(avg.value), missing])
    table = tabulate(rows, headers=["Task", "Metric", "Score", "Details"], tablefmt="github", disable_numparse=True)
    lines = marks_footnote(used, notes)
    if cut:
        lines.append("Details in full:")
        lines += [
            textwrap.fill(
                f"{task}: {text}", width=110, initial_indent="  ", subsequent_indent="    ", break_on_hyphens=False
            )
            for task, text in cut.items()
        ]
    return "\n\n".join([table, "\n".join(lines)]) if lines else table


def diagnostics_run_table(outcomes: list[TaskOutcome]) -> str:
    """Task, Status, Encoded, Cache hits, Seconds: what the run did for each task (a reused task: nothing)."""
    rows = []
    for o in outcomes:
        computed = o.status == "computed"
        enc = o.record.get("encode", {}) if computed else {}
        rows.append(
            [
                o.task,
                o.status,
                format_count(enc.get("texts_encoded")) if computed else "0",
                format_count(enc.get("cache_hits")) if computed else "-",
                f"{o.record.get('evaluation_seconds', 0):,.1f}" if computed else "-",
            ]
        )
    return tabulate(
        rows, headers=["Task", "Status", "Encoded", "Cache hits", "Seconds"], tablefmt="github", disable_numparse=True
    )


# ---------------------------------------------------------------------------------------- tables in three formats
class Latex(str):
    """A cell or note already written in LaTeX: `render_latex` does not escape it again."""


@dataclass
class Cell:
    """A cell: its text (no marks), the raw 0-1 value of a score, its marks, whether it is a partial average
    (present, total), whether it is its column's best (bold in LaTeX), its whole text where `text` is
    shortened for the screen (CSV and LaTeX's row legend write `full`), and a row label's LaTeX text."""

    text: str
    value: float | None = None
    marks: tuple[Mark, ...] = ()
    partial: tuple[int, int] | None = None
    best: bool = False
    full: str | None = None
    short: str | None = None

    @property
    def whole(self) -> str:
        return self.full if self.full is not None else self.text


@dataclass
class Table:
    """One table as every format renders it: a title (markdown) or caption (LaTeX), headers, rows of
    `Cell`s or plain strings, one alignment letter per column (`l` text, `r` numbers), the marks used
    (explained once under it) with their notes (mark key -> what -> note), and any further plain notes.

    For LaTeX: `latex_headers` (the site's short labels) and `settings`, the columns that LaTeX writes
    into one legend line per row (tagged a, b, ... on the row's `label` cell) instead of the table, so
    that a wide setting never widens a paper's table."""

    title: str | None
    headers: list[str]
    rows: list[list[Cell | str]]
    align: str
    caption: str = ""
    used: set[str] = field(default_factory=set)
    mark_notes: dict[str, dict[str, str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    latex_headers: list[str] | None = None
    settings: tuple[int, ...] = ()
    label: int = 1


def _text(cell: Cell | str) -> str:
    return cell.text if isinstance(cell, Cell) else cell


def _plain(cell: Cell | str) -> str:
    if not isinstance(cell, Cell):
        return cell
    partial = f" ({cell.partial[0]} of {cell.partial[1]}, partial)" if cell.partial else ""
    gap = " " if cell.marks and cell.value is None else ""  # `org/model ∅`, but `12.84‡`
    return cell.text + gap + "".join(m.symbol for m in cell.marks) + partial


def render_markdown(table: Table) -> str:
    """GitHub-style: the title, the table, then the marks' legend and the notes."""
    body = tabulate(
        [[_plain(c) for c in row] for row in table.rows],
        headers=table.headers,
        tablefmt="github",
        disable_numparse=True,
    )
    marks = "\n".join(marks_footnote(table.used, table.mark_notes))
    notes = "\n".join(textwrap.fill(n, width=110, break_on_hyphens=False) for n in table.notes)
    return "\n\n".join(p for p in (table.title, body, marks, notes) if p)


def render_csv(table: Table) -> str:
    """One header row (`#` is `rank`), scores ×100 with two decimals, every value whole (never cut for the
    screen), '' where there is none, and a `marks` column: `;`-separated mark keys (`baseline`, `subset`,
    `reported` for the row, `stand_in:<column>` for a cell, and `partial:<column>` for a partial average)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([("rank" if h == "#" else h) for h in table.headers] + ["marks"])
    for row in table.rows:
        marks = []
        for header, cell, align in zip(table.headers, row, table.align, strict=True):
            if isinstance(cell, Cell):
                marks += [m.key if align == "l" else f"{m.key}:{header}" for m in cell.marks]
                marks += [f"partial:{header}"] if cell.partial else []
        texts = [c.whole if isinstance(c, Cell) else c for c in row]
        writer.writerow([("" if t == "-" else t) for t in texts] + [";".join(marks)])
    return out.getvalue().rstrip("\n")


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "Δ": r"$\Delta$",
    "τ": r"$\tau$",
    "…": r"\ldots{}",
    "×": r"$\times$",
    "−": "-",
    "\n": r"\textbackslash{}n",
    "\t": r"\textbackslash{}t",
    **{m.symbol: m.latex for m in MARKS},
}


def latex_escape(text: str) -> str:
    """Plain text as LaTeX: the special characters escaped, `--` kept two hyphens, the marks and Δ, τ, …
    as LaTeX symbols."""
    if isinstance(text, Latex):
        return text
    return re.sub(r"-(?=-)", "-{}", "".join(_LATEX_SPECIAL.get(c, c) for c in str(text)))


def _latex_cell(cell: Cell | str, tag: str = "") -> str:
    if not isinstance(cell, Cell):
        return "--" if cell == "-" else latex_escape(cell)
    if cell.text == "-":
        return "--"
    text = latex_escape(cell.short if cell.short is not None else cell.text)
    if cell.value is not None and text.startswith("-"):
        text = "$-$" + text[1:]  # a minus sign, not a hyphen
    text = rf"\textbf{{{text}}}" if cell.best else text
    partial = f" ({cell.partial[0]}/{cell.partial[1]})" if cell.partial else ""
    return text + "".join(m.latex for m in cell.marks) + (rf"$^{{\mathrm{{{tag}}}}}$" if tag else "") + partial


def row_tags(n: int) -> list[str]:
    """a, b, ..., z, aa, ab, ...: the tags of LaTeX's row legend."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [letters[i] if i < 26 else letters[i // 26 - 1] + letters[i % 26] for i in range(n)]


def _row_legend(table: Table) -> list[str]:
    """One line per row: its label in full, then each settings column (`revision 0123...`), whole."""
    lines = []
    for row in table.rows:
        parts = [f"{table.headers[i].lower()} {_whole(row[i])}" for i in table.settings if _whole(row[i]) != "-"]
        lines.append(f" {', '.join([_whole(row[table.label]), *parts])}.")
    return lines


def _whole(cell: Cell | str) -> str:
    return cell.whole if isinstance(cell, Cell) else cell


def _latex_plain(cell: Cell | str, tagged: bool) -> str:
    """What a LaTeX cell prints, as plain text (for `text_width`): a row label's short text, a tag."""
    if isinstance(cell, Cell) and cell.short is not None:
        cell = Cell(cell.short, cell.value, cell.marks, cell.partial)
    text = _plain(cell).replace(", partial)", ")").replace(" of ", "/")
    return text + ("a" if tagged else "")


def _latex_notes(table: Table, tags: list[str]) -> list[str]:
    legend = _row_legend(table) if tags else []
    lines = [rf"$^{{\mathrm{{{tag}}}}}${latex_escape(line)}" for tag, line in zip(tags, legend, strict=True)]
    for mark in MARKS:
        if mark.key in table.used:
            lines.append(f"{mark.latex} {latex_escape(f'{mark.label}: {mark.meaning}.')}")
            lines += [
                r"\quad " + latex_escape(f"{what}: {note}")
                for what, note in sorted(table.mark_notes.get(mark.key, {}).items())
            ]
    if any(isinstance(c, Cell) and c.partial for row in table.rows for c in row):
        lines.append(
            latex_escape("(k/n): an average over k of its n tasks (partial): not comparable with the paper's.")
        )
    return lines + [latex_escape(n) for n in table.notes]


# ---------------------------------------------------------------------------------------- LaTeX width
TEXT_WIDTH_PT = 345.0  # \textwidth of a standard `article` at 10pt: the width a pasted table must fit
_SIZES = (  # font command, its width relative to 10pt (small sizes are cut wider), \tabcolsep: tried in order
    ("", 1.0, 6.0),
    (r"\small", 0.93, 4.0),
    (r"\footnotesize", 0.86, 3.0),
    (r"\scriptsize", 0.78, 2.0),
)
RESIZE = r"\resizebox{\textwidth}{!}{%"  # past every size: the one layout that scales (needs graphicx)


def text_width(text: str) -> float:
    """A plain text's width in points in Computer Modern 10pt, estimated per character class (lower case
    5pt, digits 5.75pt as in bold, capitals 7.2pt, narrow signs 3pt, a mark's superscript 4pt): a little
    over pdflatex's own measure, so a layout chosen by it fits (the tests compile it)."""
    width = 0.0
    for c in text:
        if c in "ijlt.,:;'!|()[]/ -":
            width += 3.0
        elif c in "mwMW%":
            width += 8.5
        elif c in {m.symbol for m in MARKS}:
            width += 4.0
        elif c.isupper():
            width += 7.2
        elif c.isdigit():
            width += 5.75
        else:
            width += 5.0
    return width


def split_header(header: str) -> list[str]:
    """A header as two lines for a narrow column: at the space, hyphen or case change nearest its middle
    ("Big Patent", "AG-News", "PaperCode" -> "Paper" / "Code"); a header with none stays one line."""
    cuts = [m.end() for m in re.finditer(r" |-|(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", header)]
    if not cuts:
        return [header]
    cut = min(cuts, key=lambda i: abs(len(header) / 2 - i))
    return [header[:cut].strip(), header[cut:].strip()]


def _column_widths(headers: list[list[str]], body: list[list[str]]) -> list[float]:
    return [max(text_width(t) for t in [*head, *(row[i] for row in body)]) for i, head in enumerate(headers)]


def latex_layout(headers: list[str], body: list[list[str]]) -> tuple[list[list[str]], str, float, bool]:
    """The header lines of each column, the font command, the \\tabcolsep (pt) and whether to scale, so
    that the table fits TEXT_WIDTH_PT: one-line headers at the text's size when they fit; else headers on
    two lines; else smaller type (\\small, \\footnotesize, \\scriptsize); only a table too wide for
    all of them (a dozen columns of long model names) is scaled to the text width, the last resort. The
    estimated width is that of the plain texts (`text_width`)."""
    single = [[h] for h in headers]
    split = [split_header(h) for h in headers]
    for font, scale, sep in _SIZES:
        for heads in (single, split):
            width = scale * sum(_column_widths(heads, body)) + 2 * sep * len(headers)
            if width <= 0.95 * TEXT_WIDTH_PT:  # a margin for the estimate
                return heads, font, sep, False
    return split, *_SIZES[0][::2], True  # scaled down from the text's own size


def _latex_header(lines: list[str], align: str) -> str:
    if len(lines) == 1:
        return latex_escape(lines[0])
    stacked = r"\\".join(latex_escape(x) for x in lines)
    return rf"\shortstack[{align}]{{{stacked}}}"


def render_latex(table: Table) -> str:
    """A booktabs table a paper can paste: `table` float, `tabular` with toprule / midrule / bottomrule,
    sized to fit an article's text width (`latex_layout`), the settings of each row, the marks' legend
    and notes whole in footnote size under it, then the caption."""
    keep = [i for i in range(len(table.headers)) if i not in table.settings]
    tags = row_tags(len(table.rows)) if table.settings else []
    headers = [(table.latex_headers or table.headers)[i] for i in keep]
    body = [
        [_latex_cell(row[i], tags[r] if tags and i == table.label else "") for i in keep]
        for r, row in enumerate(table.rows)
    ]
    plain = [[_latex_plain(row[i], bool(tags) and i == table.label) for i in keep] for row in table.rows]
    heads, font, sep, scale = latex_layout(headers, plain)
    align = "".join(table.align[i] for i in keep)
    lines = [r"\begin{table}[t]", r"\centering"]
    if font:
        lines.append(rf"{font}\setlength{{\tabcolsep}}{{{sep:g}pt}}")
    lines += [
        *([RESIZE] if scale else []),
        rf"\begin{{tabular}}{{{align}}}",
        r"\toprule",
        " & ".join(_latex_header(h, a) for h, a in zip(heads, align, strict=True)) + r" \\",
        r"\midrule",
    ]
    lines += [" & ".join(row) + r" \\" for row in body]
    lines += [r"\bottomrule", r"\end{tabular}", *(["}"] if scale else [])]
    notes = _latex_notes(table, tags)
    if notes:
        lines += [r"{\par\smallskip\raggedright\footnotesize", *(f"{n}\\par" for n in notes), "}"]
    lines += [rf"\caption{{{latex_escape(table.caption or table.title or '')}}}", r"\end{table}"]
    return "\n".join(lines)


def render(tables: Sequence[Table], fmt: str = "markdown") -> str:
    """The tables in one format; LaTeX starts with a comment naming the packages it needs."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    if fmt == "csv":
        return "\n\n".join(render_csv(t) for t in tables)
    if fmt == "markdown":
        return "\n\n".join(render_markdown(t) for t in tables)
    used = set().union(*(t.used for t in tables)) if tables else set()
    rendered = [render_latex(t) for t in tables]
    amssymb = (
        " and \\usepackage{amssymb} (for $\\checkmark$ / $\\varnothing$)" if used & {"verified", "baseline"} else ""
    )
    graphicx = " and \\usepackage{graphicx} (for \\resizebox)" if any(RESIZE in t for t in rendered) else ""
    head = f"% bench results: needs \\usepackage{{booktabs}}{amssymb}{graphicx} in the preamble."
    return "\n\n".join([head, *rendered])


# ---------------------------------------------------------------------------------------- bench results
def find_all(roots: Iterable[Path | str]) -> list[tuple[Path, dict[str, Any], dict[str, Any] | None]]:
    """`find_results` of every folder, in the order given; a file reached from two folders, or a copy of a
    result already read (the same result and run record, as a run reusing a copied folder leaves them),
    counts once, as the leaderboard merges byte-identical results."""
    from bench.core.fileio import sha256_json

    seen: set[Path | str] = set()
    found = []
    for root in roots:
        for item in find_results(Path(root)):
            real, content = item[0].resolve(), sha256_json([item[1], item[2]])
            if real not in seen and content not in seen:
                seen.update((real, content))
                found.append(item)
    return found


def results_table(
    roots: Path | str | Iterable[Path | str],
    *,
    fmt: str = "markdown",
    full_revisions: bool = False,
    columns: Sequence[str] | None = None,
    reported: Sequence[str | Path] = (),
) -> str:
    """`bench results DIR [DIR ...]`: the main table (`main_table`), then the instruction-variant tables
    (markdown and LaTeX only; CSV holds the main table alone), in `fmt`. `columns` chooses the main table's
    score columns; `reported` adds the rows of papers' tables (`bench.results.literature`)."""
    from bench.results.literature import load_table

    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    roots = [roots] if isinstance(roots, str | Path) else list(roots)
    papers = [load_table(name) for name in reported]
    found = find_all(roots)
    if not found and not papers:
        return f"No result files under {', '.join(str(r) for r in roots)}."
    main = main_table(found, full_revisions=full_revisions, columns=columns, reported=papers)
    if main is None and fmt != "latex":
        none = "No results under the tasks' own instructions (only instruction variants)."
        return (
            none
            if fmt == "csv"
            else "\n\n".join(p for p in (none, sensitivity_tables(found, fmt, full_revisions)) if p)
        )
    tables = [main] if main else []
    if fmt != "csv":
        tables += sensitivity_table_list(found, full_revisions=full_revisions)
    return render(tables, fmt)


RowKey = tuple[str, str, str]  # (model, revision, experiment); a limited run's experiment ends in its limit


@dataclass
class _Row:
    """One row of the main table before it is laid out: its scores (task -> 0-1) and what marks them."""

    scores: dict[str, float] = field(default_factory=dict)
    cell_marks: dict[str, tuple[Mark, ...]] = field(default_factory=dict)
    printed: dict[str, str] = field(default_factory=dict)  # a reported row's values as the paper printed them
    blind: list[bool] = field(default_factory=list)
    experiment: str = "default"  # as shown on screen (`readable_experiment`)
    whole_experiment: str = "default"  # in full (CSV, LaTeX's row legend)
    limit: int | None = None
    texts: dict[str, int | None] = field(default_factory=dict)  # task -> texts sent (a limited run)
    revisions: dict[str, str] = field(default_factory=dict)  # task -> dataset revision
    reported: Any = None  # the `ReportedTable` a paper's row comes from

    @property
    def baseline(self) -> bool:
        return bool(self.blind) and all(self.blind)

    @property
    def rankable(self) -> bool:
        """Neither a baseline nor a limited run (`bench.results.ranking`)."""
        return not self.baseline and self.limit is None

    @property
    def marks(self) -> tuple[Mark, ...]:
        flags = ((BASELINE, self.baseline), (SUBSET, self.limit is not None), (REPORTED, self.reported is not None))
        return tuple(m for m, on in flags if on)


def _collect(
    found: list[tuple[Path, dict[str, Any], dict[str, Any] | None]],
) -> tuple[dict[RowKey, _Row], list[str], dict[str, str]]:
    """The rows of the results (instruction variants left out), the results that repeat one, and the
    stand-in notes per task. A `--limit` run is a row of its own, whose experiment says which subset."""
    rows: dict[RowKey, _Row] = {}
    repeated: list[str] = []
    notes: dict[str, str] = {}
    full: dict[tuple[str, str], int | None] = {}  # (task, dataset revision) -> texts of a full run
    for path, data, record in found:
        if is_variant(record):
            continue  # summarized by sensitivity_tables below
        key, task, limit = model_of(path, record), data["task_name"], limit_of(record)
        if limit is not None:
            key = (key[0], key[1], f"{key[2]}, limit={limit}")
        row = rows.setdefault(key, _Row(limit=limit))
        if task in row.scores:
            repeated.append(f"{key[0]} {task}")
        row.scores[task] = main_score(data)
        row.cell_marks[task] = data_marks(record)
        row.revisions[task] = str(data.get("dataset_revision"))
        if (note := stand_in(record)) is not None:  # STAND_IN in cell_marks
            notes[task] = note
        row.blind.append(is_baseline(record))
        row.experiment = experiment_name(path, record)
        row.whole_experiment = experiment_name(path, record, whole=True)
        if limit is None:
            full.setdefault((task, row.revisions[task]), texts_of(record))
        else:
            row.texts[task] = texts_of(record)
    for row in rows.values():
        if row.limit is not None:
            texts = [row.texts[t] for t in row.scores]
            totals = [full.get((t, row.revisions[t])) for t in row.scores]
            words = subset_words(
                row.limit,
                sum(texts) if all(texts) else None,  # type: ignore[arg-type]
                sum(totals) if all(totals) else None,  # type: ignore[arg-type]
            )
            row.experiment, row.whole_experiment = f"{row.experiment}; {words}", f"{row.whole_experiment}; {words}"
    return rows, repeated, notes


def printed_value(value: float) -> str:
    """A reported value as the paper printed it (×100), as its file stores it (`47.9`, `62.35`): never
    rounded to two decimals, which would claim a precision the paper did not print."""
    return str(value)


def _reported_rows(papers: Sequence[Any]) -> tuple[dict[RowKey, _Row], dict[str, str]]:
    """The rows of papers' tables (`bench.results.literature.ReportedTable`) on the harness's tasks, and
    per table its label's note: the link and what differs from the harness's tasks."""
    rows: dict[RowKey, _Row] = {}
    notes: dict[str, str] = {}
    for paper in papers:
        for reported in paper.rows:
            printed = reported.scores(paper)
            if not printed:
                continue
            rows[(reported.name, "-", paper.id)] = _Row(
                scores={task: value / 100 for task, value in printed.items()},
                printed={task: printed_value(value) for task, value in printed.items()},
                experiment=paper.label,
                whole_experiment=paper.label,
                reported=paper,
            )
        notes[paper.label] = " ".join(
            [paper.url + ".", *paper.notes, "Averages here are recomputed from the printed values."]
        )
    return rows, notes


def _task_order(tasks: Iterable[str]) -> list[str]:
    """Tasks in their suites' display order (the papers' column order, `bench.results.suites.columns`),
    the rest by name."""
    from bench.results.suites import SUITE_STYLES, columns
    from bench.results.task_catalog import suites

    wanted, ordered = set(tasks), []
    for suite, members in suites().items():
        if suite in SUITE_STYLES:
            ordered += [t for t, _ in columns(suite, tuple(m for m in members if m in wanted)) if t not in ordered]
    return ordered + sorted(wanted - set(ordered))


def short_labels(tasks: Sequence[str]) -> dict[str, str]:
    """Each task's column label as on the site (its first styled suite's, `SuiteStyle.labels`), or its
    name; two tasks whose labels would agree keep their names."""
    from bench.results.suites import SUITE_STYLES
    from bench.results.task_catalog import suites

    labels = {}
    for task in tasks:
        styled = (SUITE_STYLES[s].labels for s, members in suites().items() if s in SUITE_STYLES and task in members)
        labels[task] = next((lab[task] for lab in styled if task in lab), task)
    counts: dict[str, int] = defaultdict(int)
    for label in labels.values():
        counts[label] += 1
    return {t: label if counts[label] == 1 else t for t, label in labels.items()}


def _average_labels(averages: Sequence[SuiteAverage]) -> dict[str, str]:
    """An average column's short label: the paper's ("Avg", "Mean Δci"), with its suite when two agree."""
    counts: dict[str, int] = defaultdict(int)
    for a in averages:
        counts[a.label] += 1
    return {a.name: a.label if counts[a.label] == 1 else f"{a.label} ({a.suite})" for a in averages}


def _choose(names: Sequence[str], headers: dict[str, list[str]]) -> list[str]:
    """The columns `--columns` names, in its order: each by its header, task name or short label."""
    lookup = {alias: column for column, aliases in headers.items() for alias in aliases}
    chosen = []
    for name in names:
        if name not in lookup:
            raise UnknownNameError("column", name, list(lookup), list_command="python -m bench results DIR")
        if lookup[name] not in chosen:
            chosen.append(lookup[name])
    return chosen


def main_table(
    found: list[tuple[Path, dict[str, Any], dict[str, Any] | None]],
    *,
    full_revisions: bool = False,
    columns: Sequence[str] | None = None,
    reported: Sequence[Any] = (),
) -> Table | None:
    """One row per model, revision and experiment (a `--limit` run apart, and each paper's row); one column
    per task, then one per suite average; `columns` chooses and orders the score columns.

    Rows are sorted by the first suite-average column shown, best first (complete averages, then partial
    ones, then rows without it). `#` ranks them by `bench.results.ranking` (the site's rule, said under
    the table): a baseline (∅) or a limited run (⊂) keeps its place but gets no rank, and no bold;
    neither does an average over other tasks. None when every result is an instruction variant.
    """
    from bench.results.task_catalog import suites

    rows, repeated, stand_ins = _collect(found)
    paper_rows, paper_notes = _reported_rows(reported)
    rows |= paper_rows
    if not rows:
        return None
    # Two settings whose readable names agree (values cut short) show their full experiment text.
    clash = defaultdict(list)
    for key, row in rows.items():
        clash[(key[0], key[1], row.experiment)].append(key)
    for keys in clash.values():
        if len(keys) > 1:
            for k in keys:
                rows[k].experiment = rows[k].whole_experiment

    task_names = _task_order({t for row in rows.values() for t in row.scores})
    averages = {key: {a.name: a for a in suite_averages(row.scores)} for key, row in rows.items()}
    suite_order = {name: i for i, name in enumerate(suites())}
    position: dict[str, tuple[int, int]] = {}
    shown_averages: dict[str, SuiteAverage] = {}
    for per_model in averages.values():
        for i, average in enumerate(per_model.values()):
            position.setdefault(average.name, (suite_order.get(average.suite, len(suite_order)), i))
            shown_averages.setdefault(average.name, average)
    avg_columns = sorted(position, key=position.__getitem__)
    short = short_labels(task_names) | _average_labels([shown_averages[c] for c in avg_columns])
    if columns is not None:
        aliases = {c: list(dict.fromkeys([c, short[c]])) for c in [*task_names, *avg_columns]}
        chosen = _choose(columns, aliases)
        task_names = [c for c in chosen if c in task_names]
        avg_columns = [c for c in chosen if c in avg_columns]
    first = avg_columns[0] if avg_columns else None

    def order(key: RowKey) -> tuple[int, float, RowKey]:
        avg = averages[key].get(first) if first else None
        return (2 if avg is None else 0 if avg.complete else 1, -(avg.value if avg else 0.0), key)

    keys = sorted(rows, key=order)
    rank = ranks(
        Candidate(k, frozenset(averages[k][first].present), averages[k][first].value)
        for k in keys
        if first and rows[k].rankable and first in averages[k]
    )

    def comparable(key: RowKey, column: str) -> bool:
        """A score that may be its column's best: a rankable row's; an average complete, or ranked."""
        avg = averages[key].get(column)
        return rows[key].rankable and (avg is None or avg.complete or (column == first and key in rank))

    best: dict[str, float] = {}
    for key in keys:
        values = {t: rows[key].scores[t] for t in task_names if t in rows[key].scores}
        values |= {c: averages[key][c].value for c in avg_columns if c in averages[key]}
        for column, value in values.items():
            if comparable(key, column):
                best[column] = max(best.get(column, -float("inf")), round(100 * value, 2))

    def score(key: RowKey, column: str, value: float, **kw: Any) -> Cell:
        top = comparable(key, column) and round(100 * value, 2) == best.get(column)
        return Cell(rows[key].printed.get(column, format_score(value)), value, best=top, **kw)

    table_rows: list[list[Cell | str]] = []
    used: set[str] = set()
    for key in keys:
        model, revision, _ = key
        row = rows[key]
        cells: list[Cell | str] = [
            str(rank[key]) if key in rank else "-",
            Cell(model, marks=row.marks, short=model.rsplit("/", 1)[-1] if "/" in model else None),
            Cell(revision if full_revisions else revision[:SHORT_REVISION], full=revision),
            Cell(row.experiment, full=row.whole_experiment),
        ]
        for t in task_names:
            marks = row.cell_marks.get(t, ())
            used.update(m.key for m in marks)
            cells.append(score(key, t, row.scores[t], marks=marks) if t in row.scores else Cell("-"))
        for column in avg_columns:
            avg = averages[key].get(column)
            partial = None if avg is None or avg.complete else (len(avg.present), len(avg.tasks))
            cells.append(Cell("-") if avg is None else score(key, column, avg.value, partial=partial))
        used.update(m.key for m in row.marks)
        table_rows.append(cells)
    notes = []
    if repeated:
        notes.append(
            f"Note: {len(repeated)} result(s) repeat a model, revision, experiment and task read from another "
            f"file (first: {repeated[0]}); the table shows the one read last (folders in the order given)."
        )
    notes.append(f"Rows sorted by {first}, best first. {RULE}" if first else "No average column: no row is ranked.")
    caption = (
        f"Main score of each task (×100){'; averages as each suite defines them' if avg_columns else ''}. "
        "Bold: the best score of each column among the rows that may be ranked."
    )
    mark_notes = {STAND_IN.key: stand_ins, REPORTED.key: paper_notes}
    headers = ["#", "Model", "Revision", "Experiment", *task_names, *avg_columns]
    return Table(
        None,
        headers,
        table_rows,
        "rlll" + "r" * (len(task_names) + len(avg_columns)),
        caption,
        used,
        {k: v for k, v in mark_notes.items() if v},
        notes,
        latex_headers=[*headers[:4], *(short[c] for c in [*task_names, *avg_columns])],
        settings=(2, 3),
    )


# ---------------------------------------------------------------------------------------- instruction variants
SENSITIVITY_NOTE = (
    "Scores ×100 over the instruction variants of each task: Std is the sample standard deviation (n-1); "
    "a-b columns are the mean of set a minus the mean of set b (correct-incorrect is InBedder's Δci); "
    "Own is the run under the task's own instruction."
)
STABILITY_NOTE = (
    "Kendall τ-b between the models' rankings under every two variants that all of the task's models ran "
    "(1: same order, -1: reversed); Other top: variants under which the best model by mean is not first. "
    "Under a variant where every model has the same score there is no ranking, so τ is undefined for each "
    "pair with it: Mean and Min τ are over the other pairs, and the cell says how many those are "
    "(\"-1.00 (1 of 3 pairs; 2 undefined: tied scores)\"); '-' when no pair has a τ. Baselines (∅: "
    "instruction-blind settings) and limited runs (⊂: --limit) are left out, as they are never ranked."
)


def sensitivity_table_list(
    found: list[tuple[Path, dict[str, Any], dict[str, Any] | None]], *, full_revisions: bool = False
) -> list[Table]:
    """The "Instruction sensitivity" and "Rank stability" tables; none when no result is a variant."""
    from bench.core.variants import EXPERIMENT_KEY
    from bench.results.sensitivity import base_experiment

    groups = collect(found)
    if not groups:
        return []
    names: dict[tuple[str, str, str], str] = {}
    blind: set[tuple[str, str, str]] = set()  # baselines: shown, but left out of the rank stability (as on the site)
    limited: set[tuple[str, str, str]] = set()  # --limit runs: the same
    for _path, _data, record in found:
        if record is not None and is_variant(record) and "model" in record:
            m = record["model"]
            if is_baseline(record):
                blind.add((str(m.get("name")), str(m.get("revision")), base_experiment(m.get("experiment"))))
            if limit_of(record) is not None:
                limited.add((str(m.get("name")), str(m.get("revision")), base_experiment(m.get("experiment"))))
            rest = {k: v for k, v in (m.get("experiment") or {}).items() if k != EXPERIMENT_KEY}
            names[(str(m.get("name")), str(m.get("revision")), base_experiment(m.get("experiment")))] = (
                readable_experiment(rest, m.get("settings"))
            )
    summaries = [(g, g.summary()) for g in groups]
    differences = list(dict.fromkeys(d for _, s in summaries for d in s.get("set_differences", {})))
    experiments = any(g.model[2] != "default" for g in groups)
    revisions = _ambiguous_revisions(g.model for g in groups)

    def label(model: tuple[str, str, str], with_experiment: bool = False) -> str:
        return _model_label(
            model, revisions, with_experiment=with_experiment, names=names, full_revisions=full_revisions
        )

    rows: list[list[Cell | str]] = []
    for g, s in summaries:
        shown = label(g.model) + "".join(
            f" {m.symbol}" for m, on in ((BASELINE, blind), (SUBSET, limited)) if g.model in on
        )
        rows.append(
            [
                g.task,
                shown,
                *([names.get(g.model, g.model[2])] if experiments else []),
                g.main_score_name or "-",
                *stat_cells(s, differences, g.default),
            ]
        )
    headers = ["Task", "Model", *(["Experiment"] if experiments else []), "Metric", *STAT_HEADERS, *differences]
    tables = [
        Table(
            "Instruction sensitivity",
            headers,
            rows,
            "l" * (len(headers) - len(STAT_HEADERS) - len(differences)) + "r" * (len(STAT_HEADERS) + len(differences)),
            "Instruction sensitivity of the main score (×100).",
            used={SUBSET.key} if limited else set(),
            notes=[SENSITIVITY_NOTE],
        )
    ]
    stability = stability_by_task(g for g in groups if g.model not in blind | limited)
    if stability:
        stable_rows: list[list[Cell | str]] = [
            [
                task,
                format_count(r["models"]),
                format_count(r["variants"]),
                _mean_tau(r),
                _tau(r["min_tau"]),
                label(r["top_by_mean"], with_experiment=True),
                f"{len(r['variants_with_other_top'])} of {r['variants']} ({100 * r['top_change_share']:.0f}%)",
            ]
            for task, r in sorted(stability.items())
        ]
        headers = ["Task", "Models", "Shared variants", "Mean τ", "Min τ", "Top by mean", "Other top"]
        tables.append(
            Table(
                "Rank stability",
                headers,
                stable_rows,
                "lrrrrlr",
                "Rank stability of the models across instruction variants.",
                notes=[STABILITY_NOTE],
            )
        )
    return tables


def sensitivity_tables(
    found: list[tuple[Path, dict[str, Any], dict[str, Any] | None]], fmt: str = "markdown", full_revisions: bool = False
) -> str:
    """The "Instruction sensitivity" and "Rank stability" tables in `fmt`; "" when no result is a variant."""
    tables = sensitivity_table_list(found, full_revisions=full_revisions)
    return render(tables, fmt) if tables else ""


def _tau(value: float | None) -> str:
    """Kendall τ is a correlation in [-1, 1], not a score: two decimals, not ×100; '-' where undefined."""
    return "-" if value is None else f"{value:.2f}"


def _mean_tau(result: dict[str, Any]) -> str:
    """Mean τ, and when some pairs of variants had no τ (tied scores) over how many pairs it is."""
    undefined = result.get("pairs_undefined", 0)
    if not undefined:
        return _tau(result["mean_tau"])
    return (
        f"{_tau(result['mean_tau'])} ({result['pairs_compared']} of {result['pairs']} pairs; "
        f"{undefined} undefined: tied scores)"
    )


def _ambiguous_revisions(models: Any) -> set[str]:
    """Model names seen at more than one revision: only those get their revision in the tables."""
    seen: dict[str, set[str]] = defaultdict(set)
    for name, revision, _ in models:
        seen[name].add(revision)
    return {name for name, revs in seen.items() if len(revs) > 1}


def _model_label(
    model: tuple[str, str, str],
    revisions: set[str],
    *,
    with_experiment: bool = False,
    names: dict[tuple[str, str, str], str] | None = None,
    full_revisions: bool = False,
) -> str:
    name, revision, experiment = model
    label = f"{name}@{revision if full_revisions else revision[:SHORT_REVISION]}" if name in revisions else name
    experiment = (names or {}).get(model, experiment)
    return f"{label} [{experiment}]" if with_experiment and experiment != "default" else label


def model_of(path: Path, record: dict[str, Any] | None) -> tuple[str, str, str]:
    """(model, revision, experiment) of a TaskResult file, wherever the folder given to `bench results` is.

    From the run record when there is one; else from `model_meta.json` beside the file (what
    `mteb.evaluate(..., cache=ResultCache(DIR))` writes); else from MTEB's layout
    `<org>__<model>/<revision>/[experiments/<name>/]<Task>.json`, read upwards from the file, so the
    folder passed may be DIR, DIR/results or a model's folder.
    """
    if record:
        m = record["model"]
        return m["name"], m["revision"], _experiment_text(m.get("experiment"))
    folder = path.parent
    experiment = "default"
    if folder.parent.name == EXPERIMENTS:
        experiment, folder = folder.name, folder.parent.parent
    meta = _model_meta(path.parent / "model_meta.json")
    if meta.get("name"):
        kwargs = meta.get("experiment_kwargs")
        return (
            str(meta["name"]),
            str(meta.get("revision") or folder.name),
            _experiment_text(kwargs) if kwargs and isinstance(kwargs, dict) else experiment,
        )
    return folder.parent.name.replace("__", "/"), folder.name, experiment


def _experiment_text(experiment: dict[str, Any] | None) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted((experiment or {}).items())) or "default"


_DIGEST = re.compile(r"-[0-9a-f]{8}$")  # what bench.adapters.options.experiment_label / fit_experiment append


def readable_experiment(
    experiment: dict[str, Any] | None, settings: dict[str, Any] | None = None, *, whole: bool = False
) -> str:
    """The Experiment column: `key=value` per experiment key, where a hash-bearing label (`query-3fa2c1d0`,
    a custom template; `sentenc-1f2e3d4c`, one cut to fit MTEB's folder name) shows the run's setting
    instead when that is short (`template=Q: {text}`), else the label without its hash; each value at most
    _VALUE_WIDTH characters. "default" for a family's default setting.

    `whole` (CSV, LaTeX's row legend): every value in full, a hash-bearing label as the run's setting
    whatever its length (control characters written as escapes, `\n`), so two custom settings never
    print alike."""
    parts = []
    for key, label in sorted((experiment or {}).items()):
        shown = str(label)
        if isinstance(label, str) and _DIGEST.search(label):
            value = (settings or {}).get(key)
            if isinstance(value, str) and value and whole:
                shown = printable(value, limit=10 * len(value))  # whole: an escape is at most 10 characters
            elif isinstance(value, str) and 0 < len(value) <= _VALUE_WIDTH and value.isprintable():
                shown = value
            else:
                shown = _DIGEST.sub("", label) or "custom"
        cut = not whole and len(shown) > _VALUE_WIDTH
        parts.append(f"{key}={shown[: _VALUE_WIDTH - 1] + '…' if cut else shown}")
    return ", ".join(parts) or "default"


def experiment_name(path: Path, record: dict[str, Any] | None, *, whole: bool = False) -> str:
    """`readable_experiment` of a result: from its run record, else MTEB's `model_meta.json`, else the
    experiment folder's name."""
    if record:
        model = record["model"]
        return readable_experiment(model.get("experiment"), model.get("settings"), whole=whole)
    meta = _model_meta(path.parent / "model_meta.json")
    kwargs = meta.get("experiment_kwargs")
    if meta.get("name") and kwargs and isinstance(kwargs, dict):
        return readable_experiment(kwargs, whole=whole)
    return model_of(path, record)[2]


def _model_meta(path: Path) -> dict[str, Any]:
    """MTEB's `model_meta.json`, or {} when it is missing or damaged (the folder names then say)."""
    try:
        data = load_result_json(path)
    except (FileNotFoundError, DataError):
        return {}
    return data if isinstance(data, dict) else {}
