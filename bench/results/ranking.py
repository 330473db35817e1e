"""Which rows of a comparison table get a rank: one rule for `bench results` (markdown, CSV, LaTeX),
`bench run`'s table and the leaderboard site.

Why one rule: a paper that pastes `bench results` and a reader of the site must see the same winner.
Before this module the CLI ranked rows by partial averages while the site ranked only complete ones, so
on a suite where every row lacks the same tasks (GSTransform offline: 5 of 9) the two disagreed.

The rule (`RULE`, printed once under every table that ranks):

* A row is a candidate when it has a value for the table's ranking average and is neither a baseline
  (∅, instruction-blind) nor a limited run (`--limit`: a subset of the texts, not comparable with a
  full run). Other rows keep their place and show their scores, with no rank.
* Candidates whose average covers the same tasks are comparable. The ranked set is the task set covered
  by the most tasks (all of the suite's tasks when any row is complete), and among task sets of that
  size the one most candidates share (ties broken by the sorted task names, so the result is the same
  whatever order the rows come in).
* Competition ranking (1, 2, 2, 4) on the value as printed (×100, two decimals).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)

RULE = (
    "Ranked: rows whose average covers the same tasks (the most tasks any row covers; of such task sets, the "
    "one most rows share), by that average as printed; ties share a rank. Baselines (∅) and limited runs "
    "(⊂, subset) are shown but not ranked."
)


@dataclass(frozen=True)
class Candidate(Generic[K]):
    """One row's claim to a rank: its key, the tasks its ranking average covers and the average (0-1 or ×100)."""

    key: K
    tasks: frozenset[str]
    value: float
    scale: float = 100.0  # multiply `value` by this to get the printed number (1.0 when already ×100)


def ranked_cover(candidates: Iterable[Candidate[K]]) -> frozenset[str] | None:
    """The task set whose rows are ranked (see the module docstring); None when there is no candidate."""
    counts: dict[frozenset[str], int] = {}
    for c in candidates:
        counts[c.tasks] = counts.get(c.tasks, 0) + 1
    if not counts:
        return None
    return min(counts, key=lambda tasks: (-len(tasks), -counts[tasks], sorted(tasks)))


def printed(candidate: Candidate[K]) -> float:
    """The value as a table prints it: ×100, two decimals."""
    return round(candidate.value * candidate.scale, 2)


def ranks(candidates: Iterable[Candidate[K]]) -> dict[K, int]:
    """Competition ranks (1, 2, 2, 4) of the ranked candidates by their printed value; other keys are absent."""
    pool = list(candidates)
    cover = ranked_cover(pool)
    values = {c.key: printed(c) for c in pool if c.tasks == cover}
    return {key: 1 + sum(other > value for other in values.values()) for key, value in values.items()}


def rank_labels(candidates: Iterable[Candidate[K]], keys: Iterable[K]) -> Mapping[K, str]:
    """`ranks` as table text: the rank, or '-' for a row that is not ranked."""
    found = ranks(candidates)
    return {key: str(found[key]) if key in found else "-" for key in keys}


def borda(rows: Sequence[Mapping[str, float | None]]) -> list[tuple[float, int]]:
    """Borda count over the task columns (MTEB's "Rank (Borda)"): (points, competition rank) per row.

    Per task, each row with a score gets one point per row with a lower score and half a point per tie;
    the rank is 1 + the rows with more points (1, 2, 2, 4). A row missing a task gets no point for it and
    costs no other row one (MTEB gives n − rank over all n rows, so there a row also beats every row that
    did not run the task). The tasks are the first row's keys; the caller leaves out the rows that are
    never ranked (baselines, limited runs).
    """
    if not rows:
        return []
    points = [0.0] * len(rows)
    for task in rows[0]:
        have = [(i, score) for i, r in enumerate(rows) if (score := r[task]) is not None]
        for i, score in have:
            points[i] += sum(1.0 if score > other else 0.5 if score == other else 0.0 for j, other in have if j != i)
    return [(p, 1 + sum(q > p for q in points)) for p in points]
