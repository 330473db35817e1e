"""The sampling layer that turns labelled texts into GSTransform pairs and triplets (bench/tasks/sampling.py)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from bench.core.errors import DataError
from bench.tasks.sampling import sample_pairs, sample_triplets

TEXTS = [f"text {i}" for i in range(60)]
LABELS = ["a"] * 30 + ["b"] * 20 + ["c"] * 10


def _pairs(sample) -> list[tuple[int, int]]:
    return list(zip(sample.first.tolist(), sample.second.tolist(), strict=True))


def test_pairs_are_deterministic_per_seed_and_change_with_it() -> None:
    one = sample_pairs(TEXTS, LABELS, 200, seed=3, aspect="x")
    assert _pairs(one) == _pairs(sample_pairs(TEXTS, LABELS, 200, seed=3, aspect="x"))
    assert _pairs(one) != _pairs(sample_pairs(TEXTS, LABELS, 200, seed=4, aspect="x"))
    assert _pairs(one) != _pairs(sample_pairs(TEXTS, LABELS, 200, seed=3, aspect="y"))  # one stream per aspect


@pytest.mark.parametrize("n", [200, 1500])  # rejection sampling, and enumeration of all 1,770 pairs
def test_pairs_are_distinct_different_texts_labelled_by_class(n: int) -> None:
    sample = sample_pairs(TEXTS, LABELS, n, seed=0)
    pairs = _pairs(sample)
    assert len(pairs) == n
    assert len({frozenset(p) for p in pairs}) == n
    assert all(i != j for i, j in pairs)
    assert sample.score.tolist() == [int(LABELS[i] == LABELS[j]) for i, j in pairs]


def test_pair_class_balance_follows_the_class_distribution() -> None:
    sample = sample_pairs(TEXTS, LABELS, 1770, seed=0)  # every pair once
    same = sum(k * (k - 1) // 2 for k in (30, 20, 10))
    assert sample.balance() == {"num_pairs": 1770, "positive_pairs": same, "positive_rate": same / 1770}


def test_pairs_never_join_equal_texts_and_cap_at_what_exists() -> None:
    texts = ["same", "same", "other", "third"]
    sample = sample_pairs(texts, ["a", "b", "a", "b"], 100, seed=0)
    assert sorted(tuple(sorted(p)) for p in _pairs(sample)) == [(0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]


def test_triplets_respect_labels_and_never_repeat_the_anchor() -> None:
    texts = [*TEXTS, "text 0", "text 0"]  # duplicates of an anchor text in its own class
    labels = [*LABELS, "a", "a"]
    t = sample_triplets(texts, labels, 3000, seed=5, aspect="topic")
    for a, p, n in zip(t.anchor.tolist(), t.positive.tolist(), t.negative.tolist(), strict=True):
        assert texts[a] != texts[p]
        assert labels[a] == labels[p] != labels[n]
    again = sample_triplets(texts, labels, 3000, seed=5, aspect="topic")
    assert np.array_equal(t.anchor, again.anchor) and np.array_equal(t.negative, again.negative)
    other = sample_triplets(texts, labels, 3000, seed=6, aspect="topic")
    assert not np.array_equal(t.anchor, other.anchor)
    anchors = Counter(labels[a] for a in t.anchor.tolist())  # rows drawn uniformly: about 32:20:10
    assert anchors["a"] > anchors["b"] > anchors["c"] > 0


def test_triplets_skip_classes_without_a_positive() -> None:
    t = sample_triplets(["x1", "x2", "lonely"], ["x", "x", "y"], 50, seed=0)
    assert set(t.anchor.tolist()) <= {0, 1} and set(t.negative.tolist()) == {2}


@pytest.mark.parametrize(
    ("texts", "labels", "n", "message"),
    [
        (["a", "b"], ["x", "x"], 5, "at least two classes"),
        (["a", "a"], ["x", "y"], 5, "two different texts"),
        (["a", "b"], ["x"], 5, "2 texts but 1 labels"),
        (["a", "b"], ["x", "y"], 0, "positive number"),
    ],
)
def test_bad_inputs_are_data_errors(texts, labels, n, message) -> None:
    with pytest.raises(DataError, match=message):
        sample_pairs(texts, labels, n, seed=0)


def test_triplets_need_a_class_with_two_texts() -> None:
    with pytest.raises(DataError, match="no class has two different texts"):
        sample_triplets(["a", "b"], ["x", "y"], 5, seed=0)
