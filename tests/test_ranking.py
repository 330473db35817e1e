"""The one ranking rule of every comparison table (bench/results/ranking.py), against ranks worked out by hand."""

from __future__ import annotations

import itertools

import pytest

from bench.results.ranking import Candidate, rank_labels, ranked_cover, ranks

ALL = frozenset({"a", "b", "c"})
AB = frozenset({"a", "b"})
BC = frozenset({"b", "c"})


def test_complete_rows_are_ranked_and_partial_ones_are_not():
    rows = [Candidate("full-1", ALL, 0.50), Candidate("full-2", ALL, 0.40), Candidate("partial", AB, 0.90)]
    assert ranks(rows) == {"full-1": 1, "full-2": 2}
    assert rank_labels(rows, ["partial", "full-2"]) == {"partial": "-", "full-2": "2"}


def test_when_no_row_is_complete_the_largest_shared_task_set_is_ranked():
    # Two rows cover {a, b} and one covers {b, c}: same size, so the set most rows share wins.
    rows = [Candidate("x", AB, 0.30), Candidate("y", AB, 0.35), Candidate("z", BC, 0.99)]
    assert ranked_cover(rows) == AB
    assert ranks(rows) == {"y": 1, "x": 2}


def test_ties_share_a_rank_on_the_printed_value():
    # 0.123449 and 0.12341 both print as 12.34 (×100, two decimals): a tie; the next row is 3rd.
    rows = [Candidate("p", ALL, 0.123449), Candidate("q", ALL, 0.12341), Candidate("r", ALL, 0.1)]
    assert ranks(rows) == {"p": 1, "q": 1, "r": 3}


def test_values_already_on_the_x100_scale():
    rows = [Candidate("p", ALL, 55.31, scale=1.0), Candidate("q", ALL, 66.01, scale=1.0)]
    assert ranks(rows) == {"q": 1, "p": 2}


def test_the_result_does_not_depend_on_row_order():
    # Equal size and equal count: the tie-break is the sorted task names, never the input order.
    rows = [Candidate("x", AB, 0.3), Candidate("z", BC, 0.4)]
    outcomes = {tuple(sorted(ranks(list(order)).items())) for order in itertools.permutations(rows)}
    assert outcomes == {(("x", 1),)}


def test_no_candidate_no_rank():
    assert ranked_cover([]) is None
    assert ranks([]) == {}


def test_a_partial_average_needs_two_tasks_and_says_which():
    """The one partial-average rule of `bench results` and the site (bench.results.suites.partial_average)."""
    from bench.results.suites import partial_average

    assert partial_average({"a": 0.2, "b": None, "c": 0.4}, ("a", "b", "c")) == (pytest.approx(0.3), ("a", "c"))
    assert partial_average({"a": 0.2, "b": None}, ("a", "b", "c")) is None  # one score is no average
