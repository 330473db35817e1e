"""The leaderboard's suite tables: one per suite, its rows ×100, its averages, ranks and best scores.

Scores in suite tables are ×100, as in the papers. Suite tables rank two ways, as MTEB's leaderboard
reads: `rank` (the default on the site) by the suite's first average that some row has, under the one
comparability rule of `bench results` and `bench reproduce` (bench/results/comparability.py `RULE`, given as
the table's `rank_rule`): only rows with that average complete, on the same data and metric version, by the
value as printed; every other row keeps `rank` None and says why in `unranked_reason` (the site's "—" rank
cell shows it as a title). `averages` holds complete averages only (None otherwise); `partial` the rest
({"value", "present", "of"}: "47.89 (5 of 9)"), for rows with two or more of an average's tasks. And
`borda_rank` by Borda count over the task columns (bench/results/ranking.py `borda`). With two or more
MTEB task types in a suite, `task_types` lists them and each row has `type_means` (mean ×100 per type,
None unless the row has every task of that type). Columns no row of a table fills (task columns,
averages, type means) are left out of it. Unranked rows (baselines, limited runs, other data, partial
averages) are never shaded `best`. Each row's 95% bootstrap intervals (its tasks' and its ranking average's,
from the per-item outcomes its run records keep) and its tied rank band are bench/leaderboard/intervals.py's.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence

from bench.leaderboard.entries import ModelKey
from bench.leaderboard.external import SUBMITTED, ExternalRow, as_printed, joins, published_cells, spec_hub_id
from bench.leaderboard.facts import HUB_ID, registry_training
from bench.leaderboard.intervals import Replicates, annotate
from bench.leaderboard.reference import TaskReference, task_reference
from bench.leaderboard.row_types import (
    Column,
    DatasetPage,
    MetricJson,
    PublishedCells,
    SuiteRow,
    SuiteTable,
    TaskTypeJson,
)
from bench.leaderboard.rows import ModelRow, all_verified, local_copy, main_score
from bench.leaderboard.same_scores import Twins
from bench.leaderboard.zero_shot import ZeroShotFacts, zero_shot
from bench.results import comparability, marks, task_catalog
from bench.results import suites as suite_styles
from bench.results.comparability import RULE
from bench.results.ranking import borda

OTHER_SUITE = "other"
TYPE_LABELS = {  # MTEB task type -> a short column header
    "BitextMining": "Bitext",
    "Classification": "Class.",
    "Clustering": "Clust.",
    "InstructionReranking": "Instr. rerank.",
    "InstructionRetrieval": "Instr. retr.",
    "MultilabelClassification": "Multilabel",
    "PairClassification": "Pair class.",
    "Reranking": "Rerank.",
    "Retrieval": "Retr.",
    "STS": "STS",
    "Summarization": "Summ.",
}


def suite_tables(
    rows: list[ModelRow],
    verified: Container[str] | None = None,
    twins: dict[ModelKey, Twins] | None = None,
    external: Sequence[ExternalRow] = (),
) -> list[SuiteTable]:
    """One table per suite in tasks.SUITES (plus 'other' for tasks in no suite), only where results exist;
    `twins` (from `same_scores`) flags rows. `external` rows (reported, MTEB) join the suites
    `external.joins` names (a paper's row every suite holding one of its tasks, an MTEB row only the suites
    it has in full) and are ranked with the submitted ones."""
    all_suites = task_catalog.suites()  # the task classes' own, without importing them
    suites: dict[str, tuple[str, ...]] = {**task_catalog.ordered_suites(), **all_suites}
    descriptions = task_catalog.suite_descriptions()
    in_suites = {t for tasks in all_suites.values() for t in tasks}
    other = tuple(sorted({t for r in rows for t in r.results if t not in in_suites}))
    if other:
        suites[OTHER_SUITE] = other
    tables: list[SuiteTable] = []
    items_of = {r.id: {t: e.record.get("items") for t, e in r.results.items()} for r in rows}
    drawn = Replicates()  # a task's replicates, drawn once however many suites hold it
    for name, tasks in suites.items():
        style = suite_styles.style(name)
        columns = suite_styles.columns(name, tasks)
        refs = {t: task_reference(t) for t, _ in columns}
        avgs = suite_styles.suite_averages(name, {t: r.main_score if r else "" for t, r in refs.items()})
        types = task_types(columns, refs)
        table_rows = [
            _with(
                _suite_row(name, row, columns, avgs, verified, (twins or {}).get(row.key), types),
                published_cells(None, tasks),
                zero_shot(registry_training(row.key.name), tasks),
            )
            for row in rows
            if any(t in row.results for t, _ in columns)
        ]
        covers = {a.label: a.tasks or tuple(t for t, _ in columns) for a in avgs}
        table_rows += [
            _with(
                as_printed(
                    _table_row(x.id, x.source, name, {t: x.scores.get(t) for t, _ in columns}, avgs, types), x, covers
                ),
                published_cells(x, tasks),
                zero_shot(x.training if x.source == "mteb" else registry_training(spec_hub_id(x)), tasks),
            )
            for x in external
            if joins(x, [t for t, _ in columns])
        ]
        if not table_rows:
            continue
        filled = _partial_averages(table_rows, avgs)
        # the ranking average: the first one some row has complete, as in `bench results` (a partial average never
        # ranks: bench/results/comparability.py); else the first some row has; `average` is its complete value
        first = next(
            (a for a in filled if any(r["averages"][a.label] is not None for r in table_rows)),
            filled[0] if filled else avgs[0],
        )
        for r in table_rows:
            r["average"] = r["averages"][first.label]
        table_rows.sort(key=lambda r: _order(r, first.label))
        decided = _rank(table_rows, first.label, first.tasks or tuple(t for t, _ in columns))
        _borda(table_rows, decided)
        annotate(table_rows, first.label, first.tasks or tuple(t for t, _ in columns), items_of, drawn)
        # columns no row of this table can fill are not shown: task columns, averages, task-type means
        shown = [(t, label) for t, label in columns if any(r["scores"][t] is not None for r in table_rows)]
        types = [t for t in types if any(r["type_means"][t["type"]] is not None for r in table_rows)]
        labels = dict(columns)
        tables.append(
            {
                "name": name,
                "description": descriptions.get(name, "tasks that belong to no suite"),
                "measures": style.measures,
                "papers": [{"label": p.label, "url": p.url} for p in style.papers],
                "metrics": _metrics(shown, refs),
                "source": style.source,
                "averages": [
                    {
                        "label": a.label,
                        "note": a.note,
                        "tasks": list(a.tasks) if a.tasks else None,
                        "covers": [labels[t] for t in (a.tasks or tuple(labels))],
                    }
                    for a in filled
                ],
                "average_label": first.label,
                "rank_rule": RULE if any(r["rank"] is not None or r["unranked_reason"] for r in table_rows) else None,
                "task_types": types,
                "columns": [_column(t, label) for t, label in shown],
                "missing": [label for t, label in columns if (t, label) not in shown],
                "rows": table_rows,
                "best": _best(table_rows),
            }
        )
    return tables


def _with(row: SuiteRow, cells: PublishedCells, zero: ZeroShotFacts) -> SuiteRow:
    """`row` with its cell facts (external.py `published_cells`) and zero-shot facts (zero_shot.py) added."""
    row.update(cells)
    row.update(zero)
    return row


def task_types(columns: list[tuple[str, str]], refs: Mapping[str, TaskReference | None]) -> list[TaskTypeJson]:
    """The suite's MTEB task types ({"type", "label", "tasks", "columns"}, in column order) when it holds
    two or more; else [] (one type's mean is the suite's average)."""
    found: dict[str, list[tuple[str, str]]] = {}
    for task, label in columns:
        ref = refs.get(task)
        if ref is not None and ref.type:
            found.setdefault(ref.type, []).append((task, label))
    if len(found) < 2:
        return []
    return [
        {
            "type": kind,
            "label": TYPE_LABELS.get(kind, kind),
            "tasks": [t for t, _ in cols],
            "columns": [label for _, label in cols],
        }
        for kind, cols in found.items()
    ]


def _table_row(
    model_id: str,
    source: str,
    suite: str,
    scores: dict[str, float | None],
    avgs: tuple[suite_styles.Average, ...],
    types: Sequence[TaskTypeJson] = (),
) -> SuiteRow:
    """A row of a suite table as every row starts, submitted or external: its scores (×100, None where
    missing), the suite's averages and task-type means of them, no rank and no mark. An external row
    (bench/leaderboard/external.py) stays so: never a baseline, never verified, no mark of a run record."""
    averages = suite_styles.averages(suite, scores, avgs)
    return {
        "model_id": model_id,
        "source": source,
        "scores": scores,
        "averages": averages,
        "average": next(iter(averages.values())),
        "printed_averages": {},  # a paper's own averages as it prints them: external.as_printed
        "type_means": {t["type"]: suite_styles.average([scores[task] for task in t["tasks"]]) for t in types},
        "baseline": False,  # marks.BASELINE.key
        "rank": None,
        "unranked_reason": None,  # why the row has no rank (bench/results/comparability.py), None when ranked
        "borda_rank": None,
        "borda": None,
        "local_copy": [],  # marks.LOCAL_COPY.key
        "stand_in": [],  # marks.STAND_IN.key
        "subset": [],  # marks.SUBSET.key
        "verification": None,
        "flags": [],
        "metric_versions": {},  # task -> the metric version its run record names, where it names one
        "coverage": f"{sum(v is not None for v in scores.values())} of {len(scores)}",  # tasks with a score, MTEB's way
    }


def _suite_row(
    suite: str,
    row: ModelRow,
    columns: list[tuple[str, str]],
    avgs: tuple[suite_styles.Average, ...],
    verified: Container[str] | None = None,
    twins: Twins | None = None,
    types: Sequence[TaskTypeJson] = (),
) -> SuiteRow:
    """A submitted row of a suite table: `_table_row` with what its run records say (baseline, marks,
    verification, same-scores flag)."""
    scores: dict[str, float | None] = {
        t: 100 * main_score(row.results[t]) if t in row.results else None for t, _ in columns
    }
    results = {t: row.results[t] for t, _ in columns if t in row.results}
    row_json = _table_row(row.id, SUBMITTED, suite, scores, avgs, types)
    row_json["baseline"] = row.baseline
    row_json["local_copy"] = sorted(t for t, e in results.items() if local_copy(e))
    row_json["stand_in"] = sorted(t for t, e in results.items() if marks.stand_in(e.record))
    row_json["subset"] = sorted(t for t, e in results.items() if marks.limit_of(e.record) is not None)
    row_json["verification"] = all_verified(list(results.values()), verified)
    row_json["flags"] = [twins.note()] if twins else []
    row_json["metric_versions"] = {
        t: v for t, e in results.items() if (v := comparability.metric_version(e.record)) is not None
    }
    return row_json


def _partial_averages(rows: list[SuiteRow], avgs: Sequence[suite_styles.Average]) -> list[suite_styles.Average]:
    """Give each row `partial` (average label -> {"value", "present", "of"}) for every average it has only some
    tasks of (suites.PARTIAL_MIN or more, as `bench results` prints them: "47.89 (5 of 9)"); return the averages some
    row has a value of, complete or partial (a column no row fills is not shown)."""
    for r in rows:
        r["partial"] = {}
        for a in avgs:
            over = a.tasks or tuple(r["scores"])
            found = suite_styles.partial_average(r["scores"], over)
            if r["averages"][a.label] is None and found is not None:
                r["partial"][a.label] = {"value": found[0], "present": len(found[1]), "of": len(over)}
    return [a for a in avgs if any(r["averages"][a.label] is not None or a.label in r["partial"] for r in rows)]


def _order(row: SuiteRow, label: str) -> tuple[int, float]:
    """The served order, as `bench results` sorts: complete averages best first, then partial ones, then rows without."""
    complete, partial = row["averages"].get(label), row["partial"].get(label)
    if complete is not None:
        return 0, -complete
    return (1, -partial["value"]) if partial else (2, 0.0)


def _rank(rows: list[SuiteRow], label: str, tasks: Sequence[str]) -> dict[int, comparability.Comparability]:
    """`rank` by the complete average `label` over `tasks`, and `unranked_reason` for every other row, by the
    one comparability rule of every table (bench/results/comparability.py `decide`)."""
    table = _facts(rows, label, tasks)
    decided = comparability.decisions(table)
    for i, rank in comparability.ranks(table, decided).items():
        rows[i]["rank"] = rank
    for i, r in enumerate(rows):
        r["unranked_reason"] = decided[i].reason
    return decided


def _facts(rows: list[SuiteRow], label: str | None, tasks: Sequence[str]) -> comparability.TableFacts[int]:
    """The suite table as the comparability rule reads it (`comparability.TableFacts`), keyed by row index (label
    None: no ranking average, the data and metric parts of the rule only)."""
    return comparability.TableFacts(
        label,
        frozenset(tasks),
        tuple(
            comparability.RowFacts(
                i,
                r["averages"].get(label) if label is not None else None,
                frozenset(t for t in tasks if r["scores"].get(t) is not None),
                scale=1.0,
                stand_in=frozenset(r.get("stand_in", ())),
                local_copy=frozenset(r.get("local_copy", ())),
                baseline=bool(r["baseline"]),
                limited=bool(r.get("subset")),
                published=r.get("source", SUBMITTED) != SUBMITTED,
                versions=r.get("metric_versions", {}),
            )
            for i, r in enumerate(rows)
        ),
        {t: v for t in tasks if (v := comparability.catalogue_version(t)) is not None},
    )


def _borda(rows: list[SuiteRow], decided: dict[int, comparability.Comparability] | None = None) -> None:
    """`borda` and `borda_rank` of the rows the comparability rule keeps off no comparison but a partial average's
    (bench/results/ranking.py `borda`: MTEB's "Rank (Borda)" over the task columns, a missing task costing no
    other row a point): never a baseline, a limited run, or a row on other data or another metric version."""
    decided = comparability.decisions(_facts(rows, None, ())) if decided is None else decided
    ranked = [r for i, r in enumerate(rows) if decided[i].comparable or decided[i].kind == "partial"]
    for r, (points, rank) in zip(ranked, borda([r["scores"] for r in ranked]), strict=True):
        r["borda"] = points
        r["borda_rank"] = rank


def _metrics(columns: list[tuple[str, str]], refs: Mapping[str, TaskReference | None]) -> list[MetricJson]:
    """How each main score of the shown columns is computed, once per metric, with the columns that use it."""
    found: dict[str, list[str]] = {}
    for task, label in columns:
        ref = refs.get(task)
        if ref is not None:
            found.setdefault(ref.main_score, []).append(label)
    return [{"main_score": m, "columns": labels, "note": suite_styles.metric_note(m)} for m, labels in found.items()]


def _best(rows: list[SuiteRow]) -> dict[str, float]:
    """The highest score of each column among the rows the comparability rule lets be compared (highlighted on
    the site): never a baseline's, nor any row shown unranked with a reason."""
    best: dict[str, float] = {}
    for row in rows:
        if row["baseline"] or row.get("unranked_reason") is not None:
            continue
        for task, value in row["scores"].items():
            if value is not None and (task not in best or value > best[task]):
                best[task] = value
    return best


def _column(task: str, label: str) -> Column:
    ref = task_reference(task)
    return {
        "task": task,
        "label": label,
        "main_score": ref.main_score if ref else "",
        "type": ref.type if ref else "",
        "dataset": dataset_page(task),
    }


def dataset_page(task: str) -> DatasetPage | None:
    """The task's dataset on the hub ({"path", "url"}, from its metadata); None for packaged demo data."""
    facts = task_catalog.facts(task)
    if facts is None or facts["packaged"]:
        return None
    path = facts["dataset_path"]
    return {"path": path, "url": f"https://huggingface.co/datasets/{path}"} if HUB_ID.match(path) else None
