"""`bench results DIR [DIR ...]`: the comparison table of one or more results folders (`main_table`), then
the instruction-variant tables (bench/results/variant_tables.py), in markdown, CSV or LaTeX
(bench/results/tables.py).

One row per model, revision and experiment; one column per task, then one per suite average
(bench/results/summary.py `suite_averages`: which tasks each paper averages; an average over only some
of its tasks is marked partial). Marks come from `bench.results.marks`: a score on stand-in data ‡, on a
local copy of the data (`--data-dir`) †, an instruction-blind setting's row ∅ (a baseline: never ranked,
never bold), a `--limit` run's row ⊂ ("subset: N of M texts": never ranked, never bold), a row a paper
printed (`--reported`, bench/results/literature.py) §; each mark used is explained once under the table.
Which rows get a rank is `bench.results.ranking` (the same rule as the site's), said once under the table
(`RULE`). `--columns` chooses and orders the score columns.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from bench.core.bootstrap import REPLICATES, Items, has_items
from bench.core.errors import UnknownNameError
from bench.results import comparability
from bench.results.comparability import RULE
from bench.results.literature import RECOMPUTED, ReportedTable, load_table
from bench.results.marks import (
    BASELINE,
    LOCAL_COPY,
    REPORTED,
    STAND_IN,
    SUBSET,
    Mark,
    data_marks,
    is_baseline,
    limit_of,
    stand_in,
    subset_words,
    texts_of,
)
from bench.results.merged_rows import Part, merge
from bench.results.naming import SHORT_REVISION, result_name
from bench.results.sensitivity import is_variant
from bench.results.store import Found, find_results, main_score
from bench.results.summary import SuiteAverage, suite_averages
from bench.results.tables import FORMATS, Cell, Table, format_score, label_slug, latex_key, render
from bench.results.variant_tables import sensitivity_table_list, sensitivity_tables


def find_all(roots: Iterable[Path | str]) -> list[Found]:
    """`find_results` of every folder, in the order given; a file reached from two folders, or a copy of a
    result already read (the same result and run record, as a run reusing a copied folder leaves them),
    counts once, as the leaderboard merges byte-identical results."""
    from bench.core.fileio import sha256_json

    seen: set[Path | str] = set()
    found: list[Found] = []
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
    intervals: bool = False,
    caption: str | None = None,
    label: str | None = None,
) -> str:
    """`bench results DIR [DIR ...]`: the main table (`main_table`), then the instruction-variant tables
    (markdown and LaTeX only; CSV holds the main table alone), in `fmt`. `columns` chooses the main table's
    score columns; `reported` adds the rows of papers' tables (`bench.results.literature`); `intervals`
    adds a `95% CI` column (bench/core/bootstrap.py). LaTeX: `caption` replaces the main table's caption, and
    `label` is its `\\label` (the other tables' are `label` and their title's slug), else `tab:results-<suite>`."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    roots = [roots] if isinstance(roots, str | Path) else list(roots)
    papers = [load_table(name) for name in reported]
    found = find_all(roots)
    if not found and not papers:
        return f"No result files under {', '.join(str(r) for r in roots)}."
    main = main_table(found, full_revisions=full_revisions, columns=columns, reported=papers, intervals=intervals)
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
    if main is not None and caption is not None:
        main.caption = caption
    if label is not None:
        for table in tables:
            table.key = label if table is main else f"{label}-{latex_key(table).removeprefix('tab:')}"
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
    shifts: list[float] = field(default_factory=list)  # tasks' instruction shifts (`bench run --shift-sample`)
    revisions: dict[str, str] = field(default_factory=dict)  # task -> dataset revision
    versions: dict[str, str] = field(default_factory=dict)  # task -> metric version, where its run record says
    reported: ReportedTable | None = None  # the (first) table a paper's row comes from
    parts: tuple[Part, ...] = ()  # each table and row as printed (several: one model's merged rows)
    recomputed: dict[str, str] = field(
        default_factory=dict
    )  # average -> the mean of its printed cells, where it differs
    items: dict[str, Items] = field(default_factory=dict)  # task -> its run record's per-item outcomes

    @property
    def baseline(self) -> bool:
        return bool(self.blind) and all(self.blind)

    @property
    def marks(self) -> tuple[Mark, ...]:
        flags = ((BASELINE, self.baseline), (SUBSET, self.limit is not None), (REPORTED, self.reported is not None))
        return tuple(m for m, on in flags if on)


def _collect(
    found: list[Found],
) -> tuple[dict[RowKey, _Row], list[str], dict[str, str]]:
    """The rows of the results (instruction variants left out), the results that repeat one, and the
    stand-in notes per task. A `--limit` run is a row of its own, whose experiment says which subset."""
    rows: dict[RowKey, _Row] = {}
    repeated: list[str] = []
    notes: dict[str, str] = {}
    full: dict[tuple[str, str], int] = {}  # (task, dataset revision) -> texts a full run sent, where a record says
    for path, data, record in found:
        if is_variant(record):
            continue  # summarized by the variant tables (bench/results/variant_tables.py)
        name, task, limit = result_name(path, record), data["task_name"], limit_of(record)
        key = name.key if limit is None else (name.model, name.revision, f"{name.experiment}, limit={limit}")
        row = rows.setdefault(key, _Row(limit=limit))
        if task in row.scores:
            repeated.append(f"{key[0]} {task}")
        row.scores[task] = main_score(data)
        if has_items(items := (record or {}).get("items")):
            row.items[task] = items
        else:
            row.items.pop(task, None)
        row.cell_marks[task] = data_marks(record)
        row.revisions[task] = str(data.get("dataset_revision"))
        if (version := comparability.metric_version(record)) is not None:
            row.versions[task] = version
        if (note := stand_in(record)) is not None:  # STAND_IN in cell_marks
            notes[task] = note
        row.blind.append(is_baseline(record))
        if isinstance(shift := (record or {}).get("instruction_shift"), dict) and isinstance(
            distance := shift.get("mean_cosine_distance"), (int, float)
        ):
            row.shifts.append(float(distance))
        row.experiment, row.whole_experiment = name.shown, name.whole
        if limit is not None:
            row.texts[task] = texts_of(record)
        elif (texts := texts_of(record)) is not None:  # a full result without a count never hides another's
            full.setdefault((task, row.revisions[task]), texts)
    for row in rows.values():
        if row.limit is not None:
            words = subset_words(
                row.limit,
                _total(row.texts[t] for t in row.scores),
                _total(full.get((t, row.revisions[t])) for t in row.scores),
            )
            row.experiment, row.whole_experiment = f"{row.experiment}; {words}", f"{row.whole_experiment}; {words}"
    return rows, repeated, notes


def _total(counts: Iterable[int | None]) -> int | None:
    """The sum of the counts, or None when any is unknown (a part of a total is no total)."""
    known = list(counts)
    return None if None in known else sum(c for c in known if c is not None)


def _reported_rows(papers: Sequence[ReportedTable]) -> tuple[dict[RowKey, _Row], dict[str, str], list[str]]:
    """The rows of papers' tables on the harness's tasks (one model's rows of several tables of one paper
    and suite as one row where no cell conflicts, bench/results/merged_rows.py), per table its label's
    note (the link and what differs from the harness's tasks), and a note per merge and per conflict."""
    rows: dict[RowKey, _Row] = {}
    merged = merge(papers)
    for m in merged.rows:
        printed = m.scores()
        rows[(m.label, "-", m.key)] = _Row(  # label: one name at two sizes is two rows
            scores={task: value / 100 for task, (_, value) in printed.items()},
            printed={task: paper.printed(value) for task, (paper, value) in printed.items()},
            experiment=m.source,
            whole_experiment=m.source,
            reported=m.table,
            parts=m.parts,
        )
    notes = {paper.label: " ".join([paper.url + ".", *paper.notes, AVERAGES_NOTE]) for paper in papers}
    return rows, notes, list(merged.notes)


AVERAGES_NOTE = (
    "An average over the tasks the paper's own average covers is shown as printed, with the mean of the "
    f'printed cells beside it where the two differ ("78.54 (78.52 {RECOMPUTED})"); other averages here are '
    "computed from the printed values."
)


def _as_printed(row: _Row, averages: dict[str, SuiteAverage]) -> None:
    """Give a paper's row its own printed average wherever a complete suite average covers the same
    tasks (`ReportedTable.printed_average`): the value ranks and is shown as printed, and a differing
    mean of the printed cells goes beside it."""
    for name, average in averages.items():
        for paper, paper_row in row.parts if average.complete else ():
            found = paper.printed_average(paper_row, average.tasks)
            if found is not None:
                averages[name] = replace(average, value=found.value / 100)
                row.printed[name] = paper.printed(found.value)
                if found.recomputed is not None:
                    row.recomputed[name] = paper.printed(found.recomputed)
                break


def _facts(
    rows: dict[RowKey, _Row], averages: dict[RowKey, dict[str, SuiteAverage]], first: str | None
) -> comparability.TableFacts[RowKey]:
    """The main table as the comparability rule reads it: each row's complete ranking average `first`, its
    tasks, the tasks its scores are on stand-in or local-copy data for, and the catalogue's metric versions."""
    tasks = next((a.tasks for per in averages.values() if first in per for a in (per[first],)), ())
    facts = []
    for key, row in rows.items():
        avg = averages[key].get(first) if first else None
        on = {m: frozenset(t for t, found in row.cell_marks.items() if m in found) for m in (STAND_IN, LOCAL_COPY)}
        facts.append(
            comparability.RowFacts(
                key,
                avg.value if avg is not None and avg.complete else None,
                frozenset(avg.present) if avg is not None else frozenset(),
                stand_in=on[STAND_IN],
                local_copy=on[LOCAL_COPY],
                baseline=row.baseline,
                limited=row.limit is not None,
                published=row.reported is not None,
                versions=row.versions,
            )
        )
    versions = {t: v for t in tasks if (v := comparability.catalogue_version(t)) is not None}
    return comparability.TableFacts(first, frozenset(tasks), tuple(facts), versions)


def _own_averages(papers: Sequence[ReportedTable], columns: Sequence[str], shown: dict[str, SuiteAverage]) -> list[str]:
    """The average columns that are a reported table's own, by table in the order given: the one over
    exactly the table's tasks (its printed average's), then those over some of them. Why: `--reported T`
    places rows against T, so T ranks by its own average, not by another suite's that comes first (issue 42:
    MetaEOL's table sorted by generic's STS average, 5 of its 7 tasks)."""
    own: list[str] = []
    for paper in papers:
        tasks = {c.task for c in paper.task_columns() if c.task}
        exact = [c for c in columns if set(shown[c].tasks) == tasks]
        some = [c for c in columns if set(shown[c].tasks) < tasks]
        own += [c for c in [*exact, *some] if c not in own]
    return own


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
    found: list[Found],
    *,
    full_revisions: bool = False,
    columns: Sequence[str] | None = None,
    reported: Sequence[ReportedTable] = (),
    intervals: bool = False,
) -> Table | None:
    """One row per model, revision and experiment (a `--limit` run apart, and each paper's row); one column
    per task, then one per suite average; `columns` chooses and orders the score columns.

    Rows are sorted by the ranking average, best first (complete averages, then partial ones, then rows
    without it): with `reported`, the first table's own average (`_own_averages`), else the first suite-average
    column shown that some row has complete. `#` ranks them by `bench.results.ranking` (the site's rule, said under
    the table): a baseline (∅) or a limited run (⊂) keeps its place but gets no rank, and no bold;
    neither does an average over other tasks. None when every result is an instruction variant.
    `intervals` adds a last column, `95% CI`: the bootstrap interval (`interval_cell`) of the column rows
    are sorted by (the first task shown when there is no average column).
    """
    from bench.results.task_catalog import suites

    rows, repeated, stand_ins = _collect(found)
    paper_rows, paper_notes, merge_notes = _reported_rows(reported)
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
    for key, row in rows.items():
        _as_printed(row, averages[key])
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
    # the ranking average: a reported table's own (`_own_averages`), else the first shown, that some row has
    # complete (a partial average never ranks)
    first = next(
        (
            c
            for c in [*_own_averages(reported, avg_columns, shown_averages), *avg_columns]
            if any(c in per and per[c].complete for per in averages.values())
        ),
        avg_columns[0] if avg_columns else None,
    )

    def order(key: RowKey) -> tuple[int, float, RowKey]:
        avg = averages[key].get(first) if first else None
        return (2 if avg is None else 0 if avg.complete else 1, -(avg.value if avg else 0.0), key)

    keys = sorted(rows, key=order)
    table = _facts(rows, averages, first)
    decided = comparability.decisions(table)
    rank = comparability.ranks(table, decided)

    def comparable(key: RowKey, column: str) -> bool:
        """A score that may be its column's best: a comparable row's (`comparability.decide`); an average complete."""
        avg = averages[key].get(column)
        return decided[key].comparable and (avg is None or avg.complete)

    best: dict[str, float] = {}
    rivals: Counter[str] = Counter()
    for key in keys:
        values = {t: rows[key].scores[t] for t in task_names if t in rows[key].scores}
        values |= {c: averages[key][c].value for c in avg_columns if c in averages[key]}
        for column, value in values.items():
            if comparable(key, column):
                rivals[column] += 1
                best[column] = max(best.get(column, -float("inf")), round(100 * value, 2))
    best = {column: value for column, value in best.items() if rivals[column] > 1}  # one row alone is no one's best

    def score(
        key: RowKey, column: str, value: float, *, marks: tuple[Mark, ...] = (), partial: tuple[int, int] | None = None
    ) -> Cell:
        top = comparable(key, column) and round(100 * value, 2) == best.get(column)
        text = rows[key].printed.get(column, format_score(value))
        return Cell(text, value, marks, partial, best=top, recomputed=rows[key].recomputed.get(column))

    table_rows: list[list[Cell | str]] = []
    used: set[str] = set()
    shift_column = ["Shift"] if any(row.shifts for row in rows.values()) else []  # only where a run measured it
    for key in keys:
        model, revision, _ = key
        row = rows[key]
        # why it is not ranked, where no mark of the row says it already (∅ baseline, ⊂ subset)
        reason = None if decided[key].kind in ("baseline", "subset") else decided[key].reason
        cells: list[Cell | str] = [
            str(rank[key]) if key in rank else Cell("-", unranked=reason),
            # LaTeX shows a hub id without its org (whole in the row legend); a paper's row name as printed
            Cell(model, marks=row.marks, short=model.rsplit("/", 1)[-1] if "/" in model and not row.parts else None),
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
        if shift_column:
            cells.append(Cell(f"{sum(row.shifts) / len(row.shifts):.4f}") if row.shifts else Cell("-"))
        if intervals:
            cells.append(interval_cell(row.items, averages[key].get(first) if first else None, task_names))
        used.update(m.key for m in row.marks)
        table_rows.append(cells)
    notes = []
    if shift_column:
        notes.append(
            "Shift: the mean over a row's tasks of the cosine distance between a text's embedding with the task's "
            "instruction and without it (bench run --shift-sample); 0 for an instruction-blind setting."
        )
    if repeated:
        notes.append(
            f"Note: {len(repeated)} result(s) repeat a model, revision, experiment and task read from another "
            f"file (first: {repeated[0]}); the table shows the one read last (folders in the order given)."
        )
    notes += merge_notes
    notes.append(f"Rows sorted by {first}, best first. {RULE}" if first else "No average column: no row is ranked.")
    unranked = [
        (k, d.reason) for k in keys if (d := decided[k]).reason is not None and d.kind not in ("baseline", "subset")
    ]
    notes += [f"Not ranked: {k[0]} ({rows[k].experiment}): {reason}." for k, reason in unranked]
    caption = f"Main score of each task (×100){'; averages as each suite defines them' if avg_columns else ''}." + (
        " Bold: the best score of each column among the rows that may be ranked (where two or more may)."
        if best
        else ""
    )
    mark_notes = {STAND_IN.key: {t: stand_ins[t] for t in task_names if t in stand_ins}, REPORTED.key: paper_notes}
    ci = [CI_HEADER] if intervals else []
    if intervals:
        notes.append(
            f"{CI_HEADER}: percentile bootstrap interval (B = {REPLICATES:,}) of {first or task_names[0]}, from the "
            "per-item outcomes in the run records; – where a row's records hold none (published or reported rows, "
            "older runs)."
        )
    headers = ["#", "Model", "Revision", "Experiment", *task_names, *avg_columns, *shift_column, *ci]
    return Table(
        None,
        headers,
        table_rows,
        "rlll" + "r" * (len(task_names) + len(avg_columns) + len(shift_column) + len(ci)),
        caption,
        used,
        {k: v for k, v in mark_notes.items() if v},
        notes,
        latex_headers=[*headers[:4], *(short[c] for c in [*task_names, *avg_columns]), *shift_column, *ci],
        settings=(2, 3),
        key=f"tab:results-{label_slug(shown_averages[first].suite or first)}" if first else "tab:results",
    )


CI_HEADER = "95% CI"
NO_INTERVAL = "–"


def interval_cell(items: dict[str, Items], average: SuiteAverage | None, task_names: Sequence[str]) -> Cell:
    """The 95% interval of a row's average (its present tasks resampled together, bench/core/bootstrap.py),
    or with no average of the first task shown; "–" unless every task it needs kept its items."""
    from bench.core.bootstrap import average_interval

    over = list(average.present) if average is not None else task_names[:1]
    if not over or any(t not in items for t in over):
        return Cell(NO_INTERVAL)
    lo, hi = average_interval({t: items[t] for t in over})
    return Cell(f"{format_score(lo)}–{format_score(hi)}")
