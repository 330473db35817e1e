"""Which rows of a table may be ranked against each other: the one comparability rule of the site,
`leaderboard.json`, `bench results` (markdown, CSV, LaTeX) and `bench reproduce`.

Why one rule in one place: a stand-in run must never outrank the paper it stands in for, a partial
average must never decide a rank, and a paper that pastes `bench results` must see the same winner as a
reader of the site. Before this module each surface had its own test (the site and the CLI ranked the
largest task set most rows shared, partial averages included, and neither looked at the data), so a
MiniLM run on stand-in data came first on a board of published numbers.

The rule (`RULE`, printed once under every table that ranks), applied by `decide`:

* rows are ranked together only when they cover the same tasks completely: the table's own ranking
  average, complete (a partial average is shown, "(5 of 7)", and never ranked);
* on the same data: no stand-in data (‡) and no local copy of another set (†; a task whose only data is
  a paper's own split built locally, `local_only` in the task catalogue, is the paper's data). A row on
  other data is ranked only in a table where no row is on the published data and no row is a paper's or
  MTEB's published number, and then only with rows on that same data;
* with the same metric version (bench/core/metric_specs.py `Metric.version`, carried by the task
  catalogue), where a row says which version it was scored with;
* and never a baseline (∅, instruction-blind) or a limited run (⊂, `--limit`).

Every other row is shown, marked, unranked and never bold, with its reason (`Comparability.reason`):
the site's "—" rank cell carries it as a title and leaderboard.json as `unranked_reason`; `bench
results` lists it under the table and in the CSV's `marks` column. Ranks among the comparable rows are
competition ranks (1, 2, 2, 4) on the value as printed (×100, two decimals).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from bench.core.json_types import object_at
from bench.core.run_record import RecordView
from bench.results import marks

K = TypeVar("K", bound=Hashable)

RULE = (
    "Ranked: rows whose ranking average is complete (every one of its tasks), on the same data (no "
    "stand-in ‡, no local copy † of another set) and the same metric version, by that average as printed; "
    "ties share a rank. Every other row is shown unranked (—) with its reason, and never bold."
)

Kind = Literal["baseline", "subset", "data", "metric", "partial"]


@dataclass(frozen=True)
class Comparability:
    """Whether a row gets a rank and, when it may not, why (None: comparable; a table without a ranking
    average ranks no row yet its comparable rows may still be bold). `kind` names the reason's class."""

    ranked: bool
    reason: str | None = None
    kind: Kind | None = None

    @property
    def comparable(self) -> bool:
        """A row whose scores may be a column's best (bold): ranked, or unranked only for want of an average."""
        return self.reason is None


@dataclass(frozen=True)
class RowFacts(Generic[K]):
    """What the rule reads of one row: its ranking average (None when it has no complete one) and the
    tasks of that average it has a score for, the tasks its scores are on stand-in or local-copy data
    for, whether it is a baseline, a limited run or a published number (a paper's, MTEB's), and the
    metric version of each task where its record says."""

    key: K
    value: float | None
    tasks: frozenset[str]
    scale: float = 100.0  # `value` × scale is the printed number (1.0 when already ×100)
    stand_in: frozenset[str] = frozenset()
    local_copy: frozenset[str] = frozenset()
    baseline: bool = False
    limited: bool = False
    published: bool = False
    versions: Mapping[str, str] = field(default_factory=dict)

    @property
    def data(self) -> tuple[frozenset[str], frozenset[str]]:
        """The row's data, as far as the rule tells sets apart: which tasks are on a stand-in, which on a local copy."""
        return self.stand_in, self.local_copy


@dataclass(frozen=True)
class TableFacts(Generic[K]):
    """A table as the rule reads it: its ranking average's label and tasks (label None: the table ranks
    nothing), its rows, and the metric version of each task (the task catalogue's)."""

    label: str | None
    tasks: frozenset[str]
    rows: tuple[RowFacts[K], ...]
    versions: Mapping[str, str] = field(default_factory=dict)

    def reference_data(self) -> tuple[frozenset[str], frozenset[str]]:
        """The data rows are ranked on: the published sets whenever a row is on them or is a published number;
        else the data most rows share (ties by the sorted task names, so row order never matters)."""
        eligible = [r for r in self.rows if not r.baseline and not r.limited]
        published = (frozenset[str](), frozenset[str]())
        if not eligible or any(r.published or r.data == published for r in eligible):
            return published
        counts = Counter(r.data for r in eligible)
        return min(counts, key=lambda d: (-counts[d], sorted(d[0]), sorted(d[1])))


def _tasks(names: Iterable[str]) -> str:
    return ", ".join(sorted(names))


def decide(row: RowFacts[K], table: TableFacts[K]) -> Comparability:
    """Whether `row` is ranked in `table` (the module docstring's rule), and why not."""
    if row.baseline:
        return Comparability(False, "baseline (∅): instruction-blind, shown for comparison", "baseline")
    if row.limited:
        return Comparability(False, "limited run (⊂): scored on a subset of the texts", "subset")
    scope = table.tasks if table.label is not None else frozenset(row.versions) | row.stand_in | row.local_copy
    stand_in, local = row.stand_in & scope, row.local_copy & scope
    reference = table.reference_data()
    if (stand_in, local) != tuple(d & scope for d in reference):
        against = "published numbers" if any(r.published for r in table.rows) else "rows on the published data"
        against = against if reference == (frozenset(), frozenset()) else "rows on other data"
        words = [f"stand-in data (‡) on {_tasks(stand_in)}"] if stand_in else []
        words += [f"a local copy (†) of another set on {_tasks(local)}"] if local else []
        if not words:
            return Comparability(
                False, "not the same data: the published data, while the rows ranked here share other data", "data"
            )
        reason = f"not the same data: {' and '.join(words)} (never ranked against {against})"
        return Comparability(False, reason, "data")
    other = sorted(
        t for t in scope if t in row.versions and t in table.versions and row.versions[t] != table.versions[t]
    )
    if other:
        versions = ", ".join(f"{t} v{row.versions[t]} (this table: v{table.versions[t]})" for t in other)
        return Comparability(False, f"another metric version: {versions}", "metric")
    if table.label is None:
        return Comparability(False)
    if row.value is None or row.tasks != table.tasks:
        have = len(row.tasks & table.tasks)
        reason = f"partial: {have} of the {len(table.tasks)} tasks of {table.label}; only a complete average is ranked"
        return Comparability(False, reason, "partial")
    return Comparability(True)


def decisions(table: TableFacts[K]) -> dict[K, Comparability]:
    """`decide` for every row of `table`, by key."""
    return {r.key: decide(r, table) for r in table.rows}


def printed(row: RowFacts[K]) -> float:
    """The ranking average as a table prints it: ×100, two decimals."""
    assert row.value is not None
    return round(row.value * row.scale, 2)


def ranks(table: TableFacts[K], decided: Mapping[K, Comparability] | None = None) -> dict[K, int]:
    """Competition ranks (1, 2, 2, 4) of the ranked rows by their printed average; other keys are absent."""
    decided = decisions(table) if decided is None else decided
    values = {r.key: printed(r) for r in table.rows if decided[r.key].ranked}
    return {key: 1 + sum(other > value for other in values.values()) for key, value in values.items()}


# ---------------------------------------------------------------------------------------- what a run record says
def metric_version(record: RecordView | None) -> str | None:
    """The metric version a run record says its main score was computed with (`task.metric_version`), or None
    when it does not say (a record from before it was written: compared as the catalogue's)."""
    version = object_at((record or {}).get("task")).get("metric_version")
    return str(version) if version is not None else None


def catalogue_version(task: str) -> str | None:
    """The version of `task`'s main-score metric as the harness declares it now (the task catalogue's metrics,
    bench/core/metric_specs.py `Metric.version`); None for a task the harness does not know."""
    from bench.results import task_catalog

    facts = task_catalog.facts(task)
    found = task_catalog.metrics(task) if facts is not None else None
    if facts is None or found is None:
        return None
    main = facts["main_score"]
    return next((m.version for m in found if m.matches(main)), "1")


def cell_issue(record: RecordView | None) -> marks.Mark | None:
    """The mark that keeps one score off a comparison with published numbers: stand-in data (‡) or a local copy
    of another set (†); None when it is on the task's own data (a paper's own split built locally included)."""
    found = marks.data_marks(record)
    return marks.STAND_IN if marks.STAND_IN in found else next(iter(found), None)


def split_issues(records: Mapping[str, RecordView | None]) -> tuple[set[str], set[str]]:
    """The tasks (of task -> run record) whose score is on stand-in data, and those on a local copy of another
    set (`cell_issue`): the cells `bench reproduce` and the site's reproductions leave out of the mean |Δ|."""
    issues = {task: cell_issue(record) for task, record in records.items()}
    return (
        {t for t, m in issues.items() if m is marks.STAND_IN},
        {t for t, m in issues.items() if m is marks.LOCAL_COPY},
    )
