"""Rows with the same scores: flagged on the leaderboard, never rejected.

Two model rows (different name, revision or setting) whose scores are identical on every task both
have (at least one; every score of every split compared exactly, as submitted) are flagged (`same_scores`):
each carries one note in `flags` ("same scores as <other row> ..." for a pair, "same scores as N other
rows ...: A, B, C …" for more), `same_scores_as` (the ids of the rows it names, at most SHOWN_TWINS),
`same_scores_count` and `same_scores_group`, and the site marks it. Rows with one set of scores are
grouped by hash, so 1,000 copies cost 1,000 short notes, not 999,000. A submission copied under another
name shows up so; a setting that ignores instructions can honestly score like another, so readers judge.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from bench.leaderboard.entries import Entry, ModelKey

SHOWN_TWINS = 3  # rows named in a "same scores" note; the rest are counted


class Row(Protocol):
    """What a same-scores note needs of a model row (bench/leaderboard/rows.py `ModelRow`)."""

    @property
    def key(self) -> ModelKey: ...

    @property
    def id(self) -> str: ...

    @property
    def results(self) -> Mapping[str, Entry]: ...


@dataclass(frozen=True)
class Twins:
    """The rows whose scores equal one row's: how many, and the first few (named on the site)."""

    group: str  # the hash of the row's scores, task by task: rows with one group have the very same scores
    count: int
    shown: tuple[tuple[Row, int], ...]  # (row, tasks shared), at most SHOWN_TWINS

    def note(self) -> str:
        """One note per row: the one other row with its revision and the tasks shared, or a count and a few names."""
        if self.count == 1:
            ((other, shared),) = self.shown
            return f"same scores as {other.key.label} @ {other.key.revision} on every task both have ({shared})"
        named = ", ".join(f"{other.key.label} @ {other.key.revision}" for other, _ in self.shown)
        more = " …" if self.count > len(self.shown) else ""
        return f"same scores as {self.count:,} other rows on every task both have: {named}{more}"


def same_scores(rows: Sequence[Row]) -> dict[ModelKey, Twins]:
    """For each row with twins, the other rows with the same scores on every task both have (at least one).

    Every score of every split must be equal as submitted (MTEB rounds to 1e-6, so equal floats are no
    accident). Rows with the very same scores on the very same tasks are one group, found by hash; only
    groups that share a result are compared with each other, so 1,000 copies of one row cost one group,
    not 499,500 pairs, and each row's note names SHOWN_TWINS others and counts the rest (O(rows) notes).
    """
    groups: dict[str, list[Row]] = {}
    prints: dict[str, dict[str, str]] = {}
    for r in rows:
        tasks = {task: json.dumps(e.result["scores"], sort_keys=True) for task, e in r.results.items()}
        digest = hashlib.sha256(json.dumps(tasks, sort_keys=True).encode()).hexdigest()
        groups.setdefault(digest, []).append(r)
        prints[digest] = tasks
    partners = _partner_groups(prints)
    twins: dict[ModelKey, Twins] = {}
    for digest, members in groups.items():
        pool = [(m, len(prints[digest])) for m in members[: SHOWN_TWINS + 1]]
        pool += [(m, shared) for other, shared in partners.get(digest, []) for m in groups[other][: SHOWN_TWINS + 1]]
        count = len(members) - 1 + sum(len(groups[other]) for other, _ in partners.get(digest, []))
        for m in members if count else ():
            twins[m.key] = Twins(digest[:12], count, tuple(t for t in pool if t[0] is not m)[:SHOWN_TWINS])
    return twins


def _partner_groups(prints: dict[str, dict[str, str]]) -> dict[str, list[tuple[str, int]]]:
    """Groups (by their score-set hash) that share a result and agree on every task both have: (group, tasks shared)."""
    by_result: dict[tuple[str, str], list[str]] = {}
    for digest, tasks in prints.items():
        for task, scores in tasks.items():
            by_result.setdefault((task, scores), []).append(digest)
    pairs = {pair for found in by_result.values() for pair in itertools.combinations(sorted(found), 2)}
    partners: dict[str, list[tuple[str, int]]] = {}
    for a, b in sorted(pairs):
        shared = prints[a].keys() & prints[b].keys()
        if all(prints[a][t] == prints[b][t] for t in shared):
            partners.setdefault(a, []).append((b, len(shared)))
            partners.setdefault(b, []).append((a, len(shared)))
    return partners
