"""Turning labelled texts into the pairs and triplets the GSTransform paper scores (§4.2).

STS: "we sample 50,000 sentence pairs per instruction from annotated datasets. Each pair is then
assigned a binary label (1 if they share the same class, 0 otherwise)". Pairs are drawn uniformly,
so the share of label-1 pairs follows the class distribution; it is reported next to the score.

Triplet alignment: "we randomly sample 50,000 triplets, where the anchor and positive share the same
label, and the negative has a different label". The anchor is a uniformly drawn row of a class with
at least two distinct texts, the positive a uniformly drawn other text of its class, the negative a
uniformly drawn row of any other class.

Both are pure functions of (texts, labels, n, seed, aspect), so a rerun samples the same items.
A text never meets an identical copy of itself: pairs of equal strings and triplets whose positive
equals the anchor are never drawn.
"""

from __future__ import annotations

import zlib
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from bench.core.errors import DataError

DEFAULT_SAMPLE_SIZE = 50_000  # the paper's number of pairs / triplets per instruction
_MAX_ROUNDS = 64


def aspect_rng(seed: int, aspect: str) -> np.random.Generator:
    """One independent, reproducible stream per (seed, aspect): adding an aspect changes no other."""
    return np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(aspect.encode("utf-8"))]))


@dataclass(frozen=True)
class PairSample:
    """Index pairs into the texts and their binary labels (1 = same class)."""

    first: np.ndarray
    second: np.ndarray
    score: np.ndarray

    @property
    def positives(self) -> int:
        return int(self.score.sum())

    def balance(self) -> dict[str, float | int]:
        n = len(self.score)
        return {"num_pairs": n, "positive_pairs": self.positives, "positive_rate": self.positives / n if n else 0.0}


@dataclass(frozen=True)
class TripletSample:
    """Index triplets into the texts: anchor and positive share a label, the negative does not."""

    anchor: np.ndarray
    positive: np.ndarray
    negative: np.ndarray


def _label_ids(labels: Sequence[Hashable]) -> np.ndarray:
    ids: dict[Hashable, int] = {}
    return np.asarray([ids.setdefault(lab, len(ids)) for lab in labels], dtype=np.int64)


def sample_pairs(
    texts: Sequence[str], labels: Sequence[Hashable], n: int, *, seed: int, aspect: str = ""
) -> PairSample:
    """`n` distinct unordered pairs of different texts, uniformly at random (all of them when fewer exist).

    Raises DataError when there are fewer than two distinct texts or only one class.
    """
    _check_inputs(texts, labels, n, aspect)
    if len(set(labels)) < 2:
        raise DataError(f"aspect '{aspect}': pairs need at least two classes, found only {set(labels)!r}.")
    size = len(texts)
    rng = aspect_rng(seed, aspect)
    total = size * (size - 1) // 2
    if n >= total // 2:  # small pools: enumerate every pair and choose among them
        i_all, j_all = np.triu_indices(size, k=1)
        keep = np.fromiter(
            (texts[i] != texts[j] for i, j in zip(i_all.tolist(), j_all.tolist(), strict=True)),
            dtype=np.bool_,
            count=len(i_all),
        )
        i_all, j_all = i_all[keep], j_all[keep]
        chosen = rng.permutation(len(i_all))[:n]
        first, second = i_all[chosen], j_all[chosen]
        flip = rng.integers(0, 2, size=len(chosen)).astype(bool)
        first, second = np.where(flip, second, first), np.where(flip, first, second)
    else:  # large pools: draw index pairs and reject repeats and equal texts
        seen: set[tuple[int, int]] = set()
        out_i: list[int] = []
        out_j: list[int] = []
        for _ in range(_MAX_ROUNDS):
            if len(out_i) == n:
                break
            draw = rng.integers(0, size, size=(2 * (n - len(out_i)) + 16, 2))
            for i, j in draw.tolist():
                key = (i, j) if i < j else (j, i)
                if i == j or key in seen or texts[i] == texts[j]:
                    continue
                seen.add(key)
                out_i.append(i)
                out_j.append(j)
                if len(out_i) == n:
                    break
        if len(out_i) < n:
            raise DataError(f"aspect '{aspect}': could not find {n} distinct pairs of different texts; lower the size.")
        first, second = np.asarray(out_i, dtype=np.int64), np.asarray(out_j, dtype=np.int64)
    if len(first) == 0:
        raise DataError(f"aspect '{aspect}': no pair of different texts to sample.")
    ids = _label_ids(labels)
    return PairSample(first=first, second=second, score=(ids[first] == ids[second]).astype(np.int64))


def sample_triplets(
    texts: Sequence[str], labels: Sequence[Hashable], n: int, *, seed: int, aspect: str = ""
) -> TripletSample:
    """`n` (anchor, positive, negative) index triplets; positive != anchor as text, negative of another class."""
    _check_inputs(texts, labels, n, aspect)
    ids = _label_ids(labels)
    n_classes = int(ids.max()) + 1
    if n_classes < 2:
        raise DataError(f"aspect '{aspect}': triplets need at least two classes, found one.")
    members = [np.flatnonzero(ids == c) for c in range(n_classes)]
    eligible = [c for c in range(n_classes) if len({texts[i] for i in members[c].tolist()}) >= 2]
    if not eligible:
        raise DataError(f"aspect '{aspect}': no class has two different texts, so no anchor has a positive.")
    others = {c: np.flatnonzero(ids != c) for c in eligible}
    rng = aspect_rng(seed, aspect)
    anchor_pool = np.concatenate([members[c] for c in eligible])
    anchors = anchor_pool[rng.integers(0, len(anchor_pool), size=n)]
    positives = np.empty(n, dtype=np.int64)
    negatives = np.empty(n, dtype=np.int64)
    for k, a in enumerate(anchors.tolist()):
        c = ids[a]
        group = members[c]
        p = a
        while texts[p] == texts[a]:
            p = int(group[rng.integers(0, len(group))])
        positives[k] = p
        pool = others[c]
        negatives[k] = pool[rng.integers(0, len(pool))]
    return TripletSample(anchor=anchors.astype(np.int64), positive=positives, negative=negatives)


def _check_inputs(texts: Sequence[str], labels: Sequence[Hashable], n: int, aspect: str) -> None:
    if n <= 0:
        raise DataError(f"sample size must be a positive number, got {n}.")
    if len(texts) != len(labels):
        raise DataError(f"aspect '{aspect}': {len(texts)} texts but {len(labels)} labels.")
    if len(set(texts)) < 2:
        raise DataError(f"aspect '{aspect}': need at least two different texts, found {len(set(texts))}.")
