"""Percentile-bootstrap 95% intervals of the harness's own main scores, from the per-item outcomes a run keeps.

Why: the demo's tasks have 60-192 items, so a 1-point gap between two rows may be noise; an interval says
how far a score moves when its items are redrawn. Only the scores the harness computes itself carry items
(published and reported rows have none, and get no interval).

What a run keeps (`items` in the task's run record, bench/run/runner.py; `Items` below):

* ``triplet``: per criterion/aspect the success bit (0/1) of each triplet; score = harmonic mean over the
  groups of each group's success rate (`hmean_success_rate`).
* ``sts``: per aspect (one group, ``default``, for InstructSTS) each pair's cosine similarity and its
  normalised gold score; score = `scipy.stats.spearmanr(gold, similarity)` (MTEB's `cosine_spearman`),
  one group as is, several by their arithmetic mean (`mean_cosine_spearman`).
* ``clustering``: per aspect each text's gold label and its k-means cluster; score = harmonic mean over the
  aspects of `sklearn.metrics.v_measure_score(labels, assignments)` (one group: its V-measure).
* ``robustness``: the corpus's gold labels and, per instruction set (correct, implicit, incorrect), the
  k-means clusters under each of its 10 instructions; score = mean V-measure under the correct
  instructions minus under the incorrect ones (`delta_ci_mean`).

The bootstrap: B = 1,000 replicates. The generator is NumPy's `default_rng` seeded by the first 8 bytes
of SHA-256 of the task name, so a rerun (and anyone recomputing) draws the same indices. Each replicate
draws, group by group in the stored order, n_g indices with replacement from the group's n_g items
(stratified: every criterion or aspect keeps its size, as in the task), and RE-SCORES the drawn items
exactly as the task scores them. Clustering is not re-run: the stored clusters of the drawn texts are
scored again (k-means is the model's answer; the items are what is sampled). The interval is the 2.5th
and 97.5th percentiles of the replicates (`numpy.percentile`, linear); a replicate whose score is
undefined (a Spearman correlation of a constant draw) is left out (`numpy.nanpercentile`).

A suite average's interval: each task's replicates are drawn independently (its own seed), replicate b
of the average is the mean of replicate b of its tasks, and the percentiles are taken of those means.

A task keeps at most `MAX_ITEM_NUMBERS` numbers (labels count as numbers) and `MAX_ITEM_BYTES` of JSON; a
larger one keeps none, its record says why (`bounded_items`) and its row gets no interval.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TypeGuard

import numpy as np

from bench.core.run_record import Items

REPLICATES = 1000
LEVEL = 0.95
MAX_ITEM_NUMBERS = 200_000
# As the run record writes them (indented JSON, bench/core/fileio.py): half a submission's per-file limit
# (bench/leaderboard/limits.py MAX_FILE_BYTES, 4 MiB), so a record with items can still be submitted.
MAX_ITEM_BYTES = 2 * 2**20


def seed_of(task_name: str) -> int:
    """The bootstrap's seed: the first 8 bytes of SHA-256 of the task name."""
    return int.from_bytes(hashlib.sha256(task_name.encode()).digest()[:8], "big")


def group_sizes(items: Items) -> list[int]:
    """The number of items of each resampled group, in the stored order."""
    if items["kind"] == "robustness":
        return [len(items["labels"])]
    return [len(next(iter(g.values()))) for g in items["groups"].values()]


def bootstrap_indices(task_name: str, sizes: Sequence[int], replicates: int = REPLICATES) -> Iterator[list[np.ndarray]]:
    """Per replicate, one array of drawn indices per group (with replacement, each group within itself)."""
    rng = np.random.default_rng(seed_of(task_name))
    for _ in range(replicates):
        yield [rng.integers(0, n, n) for n in sizes]


def _hmean(values: Sequence[float]) -> float:
    """The harmonic mean as the tasks take it (bench/tasks/metrics.py `harmonic_mean`): 0 when one is 0."""
    vals = np.asarray(values, dtype=np.float64)
    return 0.0 if np.any(vals == 0) else float(vals.size / np.sum(1.0 / vals))


def _codes(values: Sequence[object]) -> tuple[np.ndarray, int]:
    """Values as 0..k-1 codes, and k."""
    uniques, codes = np.unique(np.asarray(values), return_inverse=True)
    return codes.ravel(), uniques.size


def _entropy(counts: np.ndarray) -> float:
    """Entropy of a labelling from its class counts, as sklearn's `_entropy` takes it."""
    pi = counts[counts > 0]
    total = pi.sum()
    return float(-np.sum((pi / total) * (np.log(pi) - np.log(total))))


def v_measure_counts(labels: np.ndarray, clusters: np.ndarray, k: tuple[int, int], weights: np.ndarray) -> float:
    """`sklearn.metrics.v_measure_score` of the texts counted `weights` times each (a bootstrap draw),
    from codes (`_codes`) and their class counts `k`: sklearn's formulas (`homogeneity_completeness_v_measure`,
    `mutual_info_score`) on the weighted contingency table, without building a resampled copy; the robustness
    task re-scores 30 clusterings per replicate, which through sklearn takes minutes."""
    table = np.bincount(labels * k[1] + clusters, weights=weights, minlength=k[0] * k[1]).reshape(k)
    pi, pj = table.sum(axis=1), table.sum(axis=0)
    h_c, h_k = _entropy(pi), _entropy(pj)
    if np.count_nonzero(pi) == 1 or np.count_nonzero(pj) == 1:
        mi = 0.0
    else:
        nzx, nzy = np.nonzero(table)
        nz = table[nzx, nzy]
        total = table.sum()
        share = nz / total
        log_outer = -np.log(pi[nzx] * pj[nzy]) + np.log(pi.sum()) + np.log(pj.sum())
        terms = share * (np.log(nz) - np.log(total)) + share * log_outer
        terms = np.where(np.abs(terms) < np.finfo(terms.dtype).eps, 0.0, terms)
        mi = float(np.clip(terms.sum(), 0.0, None))
    homogeneity = mi / h_c if h_c else 1.0
    completeness = mi / h_k if h_k else 1.0
    if homogeneity + completeness == 0.0:
        return 0.0
    return float(2 * homogeneity * completeness / (homogeneity + completeness))


def _weights(idx: np.ndarray | None, n: int) -> np.ndarray:
    """How often each item is drawn (all once without a draw)."""
    return np.ones(n) if idx is None else np.bincount(idx, minlength=n).astype(np.float64)


class _Clusters:
    """A labelling and its clusters as codes, prepared once for all replicates."""

    def __init__(self, labels: Sequence[object], clusters: Sequence[object]) -> None:
        (self.labels, kl), (self.clusters, kc) = _codes(labels), _codes(clusters)
        self.k = (kl, kc)

    def v_measure(self, idx: np.ndarray | None) -> float:
        return v_measure_counts(self.labels, self.clusters, self.k, _weights(idx, self.labels.size))


def _scorer(items: Items) -> Callable[[Sequence[np.ndarray] | None], float]:
    """The task's main score as a function of a draw (one index array per group; None: every item once)."""
    from scipy.stats import spearmanr

    kind = items["kind"]
    if kind == "robustness":
        runs = {name: [_Clusters(items["labels"], a) for a in found] for name, found in items["assignments"].items()}

        def gap(draw: Sequence[np.ndarray] | None) -> float:
            idx = draw[0] if draw is not None else None
            means = {name: float(np.mean([c.v_measure(idx) for c in cs])) for name, cs in runs.items()}
            return means["correct"] - means["incorrect"]

        return gap
    groups = list(items["groups"].values())
    clusters = [_Clusters(g["labels"], g["assignments"]) for g in groups] if kind == "clustering" else []
    arrays = [{k: np.asarray(v, dtype=np.float64) for k, v in g.items()} for g in groups] if not clusters else []

    def score(draw: Sequence[np.ndarray] | None) -> float:
        picks: list[np.ndarray | None] = list(draw) if draw is not None else [None] * len(groups)
        values = []
        for g, idx in enumerate(picks):
            if kind == "clustering":
                values.append(clusters[g].v_measure(idx))
                continue
            a = arrays[g] if idx is None else {k: v[idx] for k, v in arrays[g].items()}
            if kind == "triplet":
                values.append(float(a["success"].mean()))
            else:
                values.append(float(spearmanr(a["gold"], a["similarity"])[0]))
        if len(values) == 1:
            return values[0]
        return float(np.mean(values)) if kind == "sts" else _hmean(values)

    return score


def score_items(items: Items, draw: Sequence[np.ndarray] | None = None) -> float:
    """The task's main score of its items, or of the items `draw` picks (one index array per group)."""
    return _scorer(items)(draw)


def replicates(task_name: str, items: Items, b: int = REPLICATES) -> np.ndarray:
    """The B bootstrap replicates of a task's main score (seeded by its name)."""
    score = _scorer(items)
    return np.array([score(draw) for draw in bootstrap_indices(task_name, group_sizes(items), b)])


def percentile_interval(values: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The percentile interval of bootstrap replicates (undefined replicates left out)."""
    tail = 100 * (1 - level) / 2
    lo, hi = np.nanpercentile(values, [tail, 100 - tail])
    return float(lo), float(hi)


def task_interval(task_name: str, items: Items, b: int = REPLICATES) -> tuple[float, float]:
    """The 95% interval of one task's main score."""
    return percentile_interval(replicates(task_name, items, b))


def average_interval(per_task: Mapping[str, Items], b: int = REPLICATES) -> tuple[float, float]:
    """The 95% interval of the mean of several tasks' main scores: replicate b is the mean of the tasks'
    replicates b, each task resampled independently."""
    return mean_interval([replicates(name, items, b) for name, items in per_task.items()])


def mean_interval(per_task_replicates: Sequence[np.ndarray]) -> tuple[float, float]:
    """The percentile interval of the tasks' mean, from each task's replicates (replicate b of the mean is the
    mean of the tasks' replicates b): `average_interval`'s rule, for callers that keep replicates to reuse."""
    return percentile_interval(np.vstack(per_task_replicates).mean(axis=0))


def count_numbers(items: object) -> int:
    """How many numbers (and labels) a nested structure of lists and dicts holds."""
    if isinstance(items, Mapping):
        return sum(count_numbers(v) for v in items.values())
    if isinstance(items, list | tuple):
        return sum(count_numbers(v) for v in items)
    return 1


def bounded_items(items: Items, limit: int = MAX_ITEM_NUMBERS, max_bytes: int = MAX_ITEM_BYTES) -> Items:
    """The items as a run record keeps them: as they are, or (over `limit` numbers, or over `max_bytes` as
    indented JSON) only a note why not."""
    import json

    n = count_numbers({k: v for k, v in items.items() if k != "kind"})
    if n > limit:
        return {"kind": items["kind"], "omitted": f"{n:,} numbers, over the {limit:,} a run record keeps"}
    size = len(json.dumps(items, indent=2, ensure_ascii=False).encode())
    if size > max_bytes:
        return {"kind": items["kind"], "omitted": f"{size:,} bytes of JSON, over the {max_bytes:,} a run record keeps"}
    return items


def has_items(items: object) -> TypeGuard[Items]:
    """Whether a run record's `items` can be scored (present and not omitted)."""
    return isinstance(items, dict) and "kind" in items and "omitted" not in items
