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
ranked, never bold); each mark used is explained once under the table.

Results run under instruction variants (`bench run --instruction-variants`) are not model rows: one
model with 30 variants would add 30 rows. `bench results` summarizes them after the main table instead
(`sensitivity_tables`, statistics from `bench.results.sensitivity`): spread of the main score per task and
model, and per task how stable the models' ranking is across the variants.

`bench results --format markdown|csv|latex` renders the same `Table`s: markdown (GitHub style, the
default), CSV (the main table only: one header row, scores ×100 with two decimals, marks in a `marks`
column) or a booktabs LaTeX table per table (`render_latex`).
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

from bench.core.errors import DataError
from bench.results.marks import BASELINE, LOCAL_COPY, MARKS, STAND_IN, Mark, is_baseline, legend
from bench.results.outcome import TaskOutcome
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


def marks_footnote(used: Iterable[Mark | str], notes: dict[str, str] | None = None) -> list[str]:
    """Lines under a table: one per mark used (`bench.results.marks.legend`), the stand-in line followed by
    each task's stand-in note."""
    keys = {u.key if isinstance(u, Mark) else u for u in used}
    lines: list[str] = []
    for mark in MARKS:
        if mark.key in keys:
            lines += [
                textwrap.fill(line, width=110, subsequent_indent="  ", break_on_hyphens=False)
                for line in legend([mark])
            ]
            if mark is STAND_IN:
                lines += [
                    "  - " + textwrap.shorten(f"{task}: {note}", width=154, placeholder=" ...")
                    for task, note in sorted((notes or {}).items())
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
    notes: dict[str, str] = {}
    used: set[Mark] = set()
    cut: dict[str, str] = {}
    for o in outcomes:
        marks = data_marks(o.record)
        used.update(marks)
        if (note := stand_in(o.record)) is not None:  # STAND_IN in marks
            notes[o.task] = note
        details = _details(o)
        cell = shorten_list(details)
        if cell != ", ".join(details):
            cut[o.task] = ", ".join(details)
        rows.append([o.task + "".join(m.symbol for m in marks), o.main_score_name, format_score(o.main_score), cell])
    for avg in suite_averages({o.task: o.main_score for o in outcomes}):
        missing = shorten_list(avg.missing, prefix="missing: ") if avg.missing else ""
        if missing and missing != "missing: " + ", ".join(avg.missing):
            cut[avg.name] = "missing: " + ", ".join(avg.missing)
        rows.append([avg.title, f"mean of {len(avg.present)} tasks", format_score(avg.value), missing])
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
    """A score cell: its text (no marks), the raw 0-1 value, its marks, whether it is a partial average
    (present, total) and whether it is its column's best (bold in LaTeX)."""

    text: str
    value: float | None = None
    marks: tuple[Mark, ...] = ()
    partial: tuple[int, int] | None = None
    best: bool = False


@dataclass
class Table:
    """One table as every format renders it: a title (markdown) or caption (LaTeX), headers, rows of
    `Cell`s or plain strings, one alignment letter per column (`l` text, `r` numbers), the marks used
    (explained once under it), the stand-in notes per task, and any further plain notes."""

    title: str | None
    headers: list[str]
    rows: list[list[Cell | str]]
    align: str
    caption: str = ""
    used: set[str] = field(default_factory=set)
    stand_in_notes: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


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
    notes = marks_footnote(table.used, table.stand_in_notes) + [
        textwrap.fill(n, width=110, break_on_hyphens=False) for n in table.notes
    ]
    return "\n\n".join(p for p in (table.title, body, "\n".join(notes)) if p)


def render_csv(table: Table) -> str:
    """One header row (`#` is `rank`), scores ×100 with two decimals, '' where there is none, and a `marks`
    column: `;`-separated mark keys (`baseline` for the row, `stand_in:<column>` for a cell, and
    `partial:<column>` for a partial average)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([("rank" if h == "#" else h) for h in table.headers] + ["marks"])
    for row in table.rows:
        marks = []
        for header, cell, align in zip(table.headers, row, table.align, strict=True):
            if isinstance(cell, Cell):
                marks += [m.key if align == "l" else f"{m.key}:{header}" for m in cell.marks]
                marks += [f"partial:{header}"] if cell.partial else []
        writer.writerow(
            [
                ("" if (c.text if isinstance(c, Cell) else c) == "-" else c.text if isinstance(c, Cell) else c)
                for c in row
            ]
            + [";".join(marks)]
        )
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
    **{m.symbol: m.latex for m in MARKS},
}


def latex_escape(text: str) -> str:
    """Plain text as LaTeX: the special characters escaped, `--` kept two hyphens, the marks and Δ, τ, …
    as LaTeX symbols."""
    if isinstance(text, Latex):
        return text
    return re.sub(r"-(?=-)", "-{}", "".join(_LATEX_SPECIAL.get(c, c) for c in str(text)))


def _latex_cell(cell: Cell | str) -> str:
    if not isinstance(cell, Cell):
        return "--" if cell == "-" else latex_escape(cell)
    if cell.text == "-":
        return "--"
    text = latex_escape(cell.text)
    if cell.value is not None and text.startswith("-"):
        text = "$-$" + text[1:]  # a minus sign, not a hyphen
    text = rf"\textbf{{{text}}}" if cell.best else text
    partial = f" ({cell.partial[0]} of {cell.partial[1]})" if cell.partial else ""
    return text + "".join(m.latex for m in cell.marks) + partial


def _latex_notes(table: Table) -> list[str]:
    lines = []
    for mark in MARKS:
        if mark.key in table.used:
            lines.append(f"{mark.latex} {latex_escape(f'{mark.label}: {mark.meaning}.')}")
            if mark is STAND_IN:
                lines += [
                    r"\quad " + latex_escape(textwrap.shorten(f"{task}: {note}", width=158, placeholder=" ..."))
                    for task, note in sorted(table.stand_in_notes.items())
                ]
    if any(isinstance(c, Cell) and c.partial for row in table.rows for c in row):
        lines.append(
            latex_escape("(k of n): an average over k of its n tasks (partial): not comparable with the paper's.")
        )
    return lines + [latex_escape(n) for n in table.notes]


def render_latex(table: Table) -> str:
    """A booktabs table a paper can paste: `table` float, `tabular` with toprule / midrule / bottomrule,
    the marks' legend and notes in footnote size under it, then the caption."""
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\begin{{tabular}}{{{table.align}}}",
        r"\toprule",
        " & ".join(latex_escape(h) for h in table.headers) + r" \\",
        r"\midrule",
    ]
    lines += [" & ".join(_latex_cell(c) for c in row) + r" \\" for row in table.rows]
    lines += [r"\bottomrule", r"\end{tabular}"]
    notes = _latex_notes(table)
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
    amssymb = (
        " and \\usepackage{amssymb} (for $\\checkmark$ / $\\varnothing$)" if used & {"verified", "baseline"} else ""
    )
    head = f"% bench results: needs \\usepackage{{booktabs}}{amssymb} in the preamble."
    return "\n\n".join([head, *(render_latex(t) for t in tables)])


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
    roots: Path | str | Iterable[Path | str], *, fmt: str = "markdown", full_revisions: bool = False
) -> str:
    """`bench results DIR [DIR ...]`: the main table (`main_table`), then the instruction-variant tables
    (markdown and LaTeX only; CSV holds the main table alone), in `fmt`."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    roots = [roots] if isinstance(roots, str | Path) else list(roots)
    found = find_all(roots)
    if not found:
        return f"No result files under {', '.join(str(r) for r in roots)}."
    main = main_table(found, full_revisions=full_revisions)
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


def main_table(
    found: list[tuple[Path, dict[str, Any], dict[str, Any] | None]], *, full_revisions: bool = False
) -> Table | None:
    """One row per model, revision and experiment; one column per task, then one per suite average.

    Rows are sorted by the first suite-average column, best first (complete averages, then partial ones,
    then rows without it). `#` ranks the rows that follow instructions and whose average covers the same
    tasks: the most tasks any covers (all of them when any row's average is complete), and of such task
    sets the one most rows share; competition ranking on the printed value (1, 2, 2, 4). A baseline (∅) keeps its place but gets no rank, and no bold in LaTeX; neither does
    an average over other tasks. None when every result is an instruction variant.
    """
    from bench.results.task_catalog import suites

    by_model: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    cell_marks: dict[tuple[str, str, str], dict[str, tuple[Mark, ...]]] = defaultdict(dict)
    blind: dict[tuple[str, str, str], list[bool]] = defaultdict(list)
    shown_experiment: dict[tuple[str, str, str], str] = {}
    notes: dict[str, str] = {}
    repeated: list[str] = []
    for path, data, record in found:
        if is_variant(record):
            continue  # summarized by sensitivity_tables below
        key, task = model_of(path, record), data["task_name"]
        if task in by_model[key]:
            repeated.append(f"{key[0]} {task}")
        by_model[key][task] = main_score(data)
        cell_marks[key][task] = data_marks(record)
        if (note := stand_in(record)) is not None:  # STAND_IN in cell_marks[key][task]
            notes[task] = note
        blind[key].append(is_baseline(record))
        shown_experiment[key] = experiment_name(path, record)
    if not by_model:
        return None
    baseline = {key: all(flags) for key, flags in blind.items()}
    # Two settings whose readable names agree (values cut short) show their full experiment text.
    clash = defaultdict(list)
    for key, name in shown_experiment.items():
        clash[(key[0], key[1], name)].append(key)
    for keys in clash.values():
        if len(keys) > 1:
            shown_experiment.update({k: k[2] for k in keys})

    task_names = sorted({t for scores in by_model.values() for t in scores})
    averages = {key: {a.name: a for a in suite_averages(scores)} for key, scores in by_model.items()}
    suite_order = {name: i for i, name in enumerate(suites())}
    position: dict[str, tuple[int, int]] = {}
    for per_model in averages.values():
        for i, average in enumerate(per_model.values()):
            position.setdefault(average.name, (suite_order.get(average.suite, len(suite_order)), i))
    avg_columns = sorted(position, key=position.__getitem__)
    first = avg_columns[0] if avg_columns else None

    def order(key: tuple[str, str, str]) -> tuple[int, float, tuple[str, str, str]]:
        avg = averages[key].get(first) if first else None
        return (2 if avg is None else 0 if avg.complete else 1, -(avg.value if avg else 0.0), key)

    keys = sorted(by_model, key=order)
    # Ranked: the rows that follow instructions and whose first average covers the same tasks, the most any
    # covers (the complete average when any row has it), and of those task sets the one most rows share.
    candidates = {k: averages[k][first] for k in keys if first and not baseline[k] and first in averages[k]}
    coverages = [avg.present for avg in candidates.values()]
    cover = max(dict.fromkeys(coverages), key=lambda c: (len(c), coverages.count(c))) if coverages else None
    rounded = {k: round(100 * avg.value, 2) for k, avg in candidates.items() if avg.present == cover}

    def comparable(key: tuple[str, str, str], column: str) -> bool:
        """A score that may be its column's best: not a baseline's; an average complete, or ranked."""
        avg = averages[key].get(column)
        return not baseline[key] and (avg is None or avg.complete or (column == first and key in rounded))

    best: dict[str, float] = {}
    for key in keys:
        values = {t: by_model[key][t] for t in task_names if t in by_model[key]}
        values |= {c: averages[key][c].value for c in avg_columns if c in averages[key]}
        for column, value in values.items():
            if comparable(key, column):
                best[column] = max(best.get(column, -float("inf")), round(100 * value, 2))

    def score(
        key: tuple[str, str, str],
        column: str,
        value: float,
        marks: tuple[Mark, ...] = (),
        partial: tuple[int, int] | None = None,
    ) -> Cell:
        top = comparable(key, column) and round(100 * value, 2) == best.get(column)
        return Cell(format_score(value), value, marks, partial, top)

    rows: list[list[Cell | str]] = []
    used: set[str] = set()
    for key in keys:
        model, revision, _ = key
        rank = str(1 + sum(v > rounded[key] for v in rounded.values())) if key in rounded else "-"
        row: list[Cell | str] = [
            rank,
            Cell(model, marks=(BASELINE,) if baseline[key] else ()),
            revision if full_revisions else revision[:SHORT_REVISION],
            shown_experiment[key],
        ]
        for t in task_names:
            marks = cell_marks[key].get(t, ())
            used.update(m.key for m in marks)
            row.append(score(key, t, by_model[key][t], marks) if t in by_model[key] else Cell("-"))
        for column in avg_columns:
            avg = averages[key].get(column)
            row.append(
                Cell("-")
                if avg is None
                else score(key, column, avg.value)
                if avg.complete
                else score(key, column, avg.value, partial=(len(avg.present), len(avg.tasks)))
            )
        used.update([BASELINE.key] if baseline[key] else [])
        rows.append(row)
    extra = []
    if repeated:
        extra.append(
            f"Note: {len(repeated)} result(s) repeat a model, revision, experiment and task read from another "
            f"file (first: {repeated[0]}); the table shows the one read last (folders in the order given)."
        )
    sorted_by = (
        (
            f" Rows sorted by {first}; # ranks them by it, baselines and averages over other tasks "
            "excluded (ties share a rank)."
        )
        if first
        else ""
    )
    caption = (
        f"Main score of each task (×100){'; averages as each suite defines them' if avg_columns else ''}."
        f"{sorted_by} Bold: the best score of each column, baselines excluded."
    )
    return Table(
        None,
        ["#", "Model", "Revision", "Experiment", *task_names, *avg_columns],
        rows,
        "rlll" + "r" * (len(task_names) + len(avg_columns)),
        caption,
        used,
        notes,
        extra,
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
    "instruction-blind settings) are left out, as they are never ranked."
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
    for _path, _data, record in found:
        if record is not None and is_variant(record) and "model" in record:
            m = record["model"]
            if is_baseline(record):
                blind.add((str(m.get("name")), str(m.get("revision")), base_experiment(m.get("experiment"))))
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
        shown = label(g.model) + (f" {BASELINE.symbol}" if g.model in blind else "")
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
            notes=[SENSITIVITY_NOTE],
        )
    ]
    stability = stability_by_task(g for g in groups if g.model not in blind)
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


def readable_experiment(experiment: dict[str, Any] | None, settings: dict[str, Any] | None = None) -> str:
    """The Experiment column: `key=value` per experiment key, where a hash-bearing label (`query-3fa2c1d0`,
    a custom template; `sentenc-1f2e3d4c`, one cut to fit MTEB's folder name) shows the run's setting
    instead when that is short (`template=Q: {text}`), else the label without its hash; each value at most
    _VALUE_WIDTH characters. "default" for a family's default setting."""
    parts = []
    for key, label in sorted((experiment or {}).items()):
        shown = str(label)
        if isinstance(label, str) and _DIGEST.search(label):
            value = (settings or {}).get(key)
            if isinstance(value, str) and 0 < len(value) <= _VALUE_WIDTH and value.isprintable():
                shown = value
            else:
                shown = _DIGEST.sub("", label) or "custom"
        parts.append(f"{key}={shown if len(shown) <= _VALUE_WIDTH else shown[: _VALUE_WIDTH - 1] + '…'}")
    return ", ".join(parts) or "default"


def experiment_name(path: Path, record: dict[str, Any] | None) -> str:
    """`readable_experiment` of a result: from its run record, else MTEB's `model_meta.json`, else the
    experiment folder's name."""
    if record:
        model = record["model"]
        return readable_experiment(model.get("experiment"), model.get("settings"))
    meta = _model_meta(path.parent / "model_meta.json")
    kwargs = meta.get("experiment_kwargs")
    if meta.get("name") and kwargs and isinstance(kwargs, dict):
        return readable_experiment(kwargs)
    return model_of(path, record)[2]


def _model_meta(path: Path) -> dict[str, Any]:
    """MTEB's `model_meta.json`, or {} when it is missing or damaged (the folder names then say)."""
    try:
        data = load_result_json(path)
    except (FileNotFoundError, DataError):
        return {}
    return data if isinstance(data, dict) else {}
