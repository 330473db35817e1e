"""Borda ranking of a comparison table's task columns (MTEB's "Rank (Borda)"), the site's second way to rank.

Which rows get a rank by their average, and why the others do not, is bench/results/comparability.py
(`decide`, `RULE`): the one comparability rule of the site, `bench results` and `bench reproduce`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


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
