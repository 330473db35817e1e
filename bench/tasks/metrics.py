"""Metric code shared by every task of a type. Each function matches the source papers' code.

InBedder (zhang-yu-wei/InBedder) scores triplets with sklearn's `paired_cosine_distances` and a strict
`d(a, p) < d(a, n)`, clusters with `MiniBatchKMeans(k = #gold labels, batch_size=500, n_init="auto")` on
raw (unnormalised) embeddings and scores with `v_measure_score`, and combines criteria or aspects with a
harmonic mean. The original left k-means unseeded; here the seed is fixed so reruns agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from sklearn.cluster import MiniBatchKMeans
from sklearn.metrics import v_measure_score
from sklearn.metrics.pairwise import paired_cosine_distances
from threadpoolctl import threadpool_limits

KMEANS_BATCH_SIZE = 500


def harmonic_mean(values: Sequence[float]) -> float:
    """Harmonic mean of non-negative scores; 0 as soon as one score is 0.

    The papers' code adds 1e-8 to each term, which moves the result by less than 1e-7; the exact
    form is kept here so that a criterion a model fails completely gives exactly 0.
    """
    vals = np.asarray(values, dtype=np.float64)
    if vals.size == 0:
        raise ValueError("harmonic_mean of no values")
    if np.any(vals < 0) or not np.all(np.isfinite(vals)):
        raise ValueError(f"harmonic_mean needs finite non-negative values, got {vals.tolist()}")
    if np.any(vals == 0):
        return 0.0
    return float(vals.size / np.sum(1.0 / vals))


def triplet_successes(anchor: np.ndarray, positive: np.ndarray, negative: np.ndarray) -> np.ndarray:
    """Per triplet: is the anchor strictly closer (cosine distance) to the positive than to the negative?

    Ties count as failures, so a model that maps everything to one vector scores 0.
    """
    d_ap = paired_cosine_distances(anchor, positive)
    d_an = paired_cosine_distances(anchor, negative)
    return d_ap < d_an


def cluster_v_measure(embeddings: np.ndarray, labels: Sequence, *, seed: int) -> float:
    """V-measure of MiniBatchKMeans clusters (k = number of gold labels) against the gold labels."""
    return float(v_measure_score(list(labels), cluster_assignment(embeddings, labels, seed=seed)))


def cluster_assignment(embeddings: np.ndarray, labels: Sequence, *, seed: int) -> np.ndarray:
    """Each text's MiniBatchKMeans cluster (k = number of gold labels): what `cluster_v_measure` scores, kept
    per item for bootstrap intervals (bench/core/bootstrap.py)."""
    k = len(set(labels))
    if k < 2:
        raise ValueError("clustering needs at least two gold clusters")
    kmeans = MiniBatchKMeans(n_clusters=k, batch_size=KMEANS_BATCH_SIZE, n_init="auto", random_state=seed)
    # One thread for every pool, OpenMP and BLAS: the assignment is identical, and on a busy machine
    # sklearn's spin-waiting OpenMP threads made one fit 2-16x slower, OpenBLAS's (k-means++ seeding runs
    # outside sklearn's own BLAS limit) 11-23 CPU s instead of 1.2-1.4 s; a robustness task runs 30 fits
    # per corpus. OpenMP's limit holds for this thread only; OpenBLAS's pool is the process's, and
    # threadpoolctl lets one thread at a time change it, so fits run one at a time in a plain run
    # (bench.core.parallel's one scoring thread).
    with threadpool_limits(limits=1):
        return kmeans.fit_predict(np.asarray(embeddings))


def robustness_gaps(
    correct: Sequence[float], implicit: Sequence[float], incorrect: Sequence[float]
) -> dict[str, float]:
    """Both readings of InBedder's robustness gaps (paper §3.3 vs `MTEB.robustness_test`).

    The paper's text and Figure 4 define Δci / Δii as differences of MEANS over the 10 instructions of
    each set; the released code computes worst-case MARGINS, min(correct) − max(incorrect) and
    min(implicit) − max(incorrect). The two can differ even in sign, so both are reported, under
    names that say which is which.
    """
    sets: Mapping[str, np.ndarray] = {
        name: np.asarray(values, dtype=np.float64)
        for name, values in (("correct", correct), ("implicit", implicit), ("incorrect", incorrect))
    }
    for name, values in sets.items():
        if values.size == 0 or not np.all(np.isfinite(values)):
            raise ValueError(f"robustness_gaps needs finite {name} scores, got {values.tolist()}")
    c, i, w = sets["correct"], sets["implicit"], sets["incorrect"]
    return {
        "delta_ci_mean": float(c.mean() - w.mean()),
        "delta_ii_mean": float(i.mean() - w.mean()),
        "delta_ci_worst_case": float(c.min() - w.max()),
        "delta_ii_worst_case": float(i.min() - w.max()),
    }
