"""The one comparability rule of every comparison table (bench/results/comparability.py), against ranks
worked out by hand."""

from __future__ import annotations

import itertools

import pytest

from bench.results.comparability import RowFacts, TableFacts, decide, decisions, ranks

ALL = frozenset({"a", "b", "c"})
AB = frozenset({"a", "b"})
BC = frozenset({"b", "c"})


def row(key, tasks, value, **kw):
    """A row whose ranking average is complete only when it covers ALL."""
    return RowFacts(key, value if tasks == ALL else None, tasks, **kw)


def table(*rows, versions=None):
    return TableFacts("Avg", ALL, tuple(rows), versions or {})


def test_complete_rows_are_ranked_and_partial_ones_are_not():
    t = table(row("full-1", ALL, 0.50), row("full-2", ALL, 0.40), row("partial", AB, 0.90))
    assert ranks(t) == {"full-1": 1, "full-2": 2}
    assert decide(t.rows[2], t).reason == "partial: 2 of the 3 tasks of Avg; only a complete average is ranked"


def test_when_no_row_is_complete_no_row_is_ranked():
    # Changed with the comparability rule (issue 42): a partial average never decides a rank, not even when
    # every row lacks the same tasks (before, the largest task set most rows shared was ranked).
    t = table(row("x", AB, 0.30), row("y", AB, 0.35), row("z", BC, 0.99))
    assert ranks(t) == {}
    assert {d.kind for d in decisions(t).values()} == {"partial"}


def test_ties_share_a_rank_on_the_printed_value():
    # 0.123449 and 0.12341 both print as 12.34 (×100, two decimals): a tie; the next row is 3rd.
    t = table(row("p", ALL, 0.123449), row("q", ALL, 0.12341), row("r", ALL, 0.1))
    assert ranks(t) == {"p": 1, "q": 1, "r": 3}


def test_values_already_on_the_x100_scale():
    t = table(row("p", ALL, 55.31, scale=1.0), row("q", ALL, 66.01, scale=1.0))
    assert ranks(t) == {"q": 1, "p": 2}


def test_the_result_does_not_depend_on_row_order():
    rows = [row("x", ALL, 0.3), row("z", ALL, 0.4, stand_in=frozenset({"a"})), row("y", AB, 0.5)]
    outcomes = {tuple(sorted(ranks(table(*order)).items())) for order in itertools.permutations(rows)}
    assert outcomes == {(("x", 1),)}


def test_no_row_no_rank():
    assert ranks(table()) == {}


def test_a_stand_in_row_is_never_ranked_against_published_numbers():
    # The stand-in row has the best average; it stays unranked, with its reason, and the ranks of the others
    # are what they would be without it.
    stand_in = row("stand-in", ALL, 0.59, stand_in=frozenset({"a"}))
    paper = row("paper", ALL, 0.58, published=True)
    local = row("local", ALL, 0.70, local_copy=frozenset({"b"}))
    t = table(stand_in, paper, local, row("ours", ALL, 0.50))
    assert ranks(t) == {"paper": 1, "ours": 2}
    assert decide(stand_in, t).reason == (
        "not the same data: stand-in data (‡) on a (never ranked against published numbers)"
    )
    assert decide(local, t).kind == "data" and "a local copy (†) of another set on b" in str(decide(local, t).reason)


def test_rows_all_on_the_same_stand_in_are_ranked_among_themselves():
    # No row on the published data and no published number: the stand-in rows are on the same data.
    on = frozenset({"a"})
    t = table(row("p", ALL, 0.3, stand_in=on), row("q", ALL, 0.4, stand_in=on), row("r", ALL, 0.9))
    assert ranks(t) == {"r": 1}  # one row on the published data: the published data is the reference
    t = table(row("p", ALL, 0.3, stand_in=on), row("q", ALL, 0.4, stand_in=on))
    assert ranks(t) == {"q": 1, "p": 2}


def test_another_metric_version_is_not_ranked():
    t = table(row("old", ALL, 0.9, versions={"b": "1"}), row("new", ALL, 0.5, versions={"b": "2"}), versions={"b": "2"})
    assert ranks(t) == {"new": 1}
    assert decide(t.rows[0], t).reason == "another metric version: b v1 (this table: v2)"


def test_baselines_and_limited_runs_are_never_ranked_nor_comparable():
    t = table(row("blind", ALL, 0.9, baseline=True), row("limited", ALL, 0.9, limited=True), row("ok", ALL, 0.1))
    decided = decisions(t)
    assert ranks(t) == {"ok": 1}
    assert [decided[k].kind for k in ("blind", "limited", "ok")] == ["baseline", "subset", None]
    assert not decided["blind"].comparable and decided["ok"].comparable


def test_a_paper_s_own_split_built_locally_is_not_a_local_copy():
    from bench.results import marks

    record = {"task": {"name": "STSBenchmark-SentEval", "dataset": {"source": "local:/data", "revision": "local-1"}}}
    assert marks.paper_split("STSBenchmark-SentEval") and not marks.local_copy(record)
    record["task"]["name"] = "STSBenchmark"
    assert not marks.paper_split("STSBenchmark") and marks.local_copy(record)


def test_a_partial_average_needs_two_tasks_and_says_which():
    """The one partial-average rule of `bench results` and the site (bench.results.suites.partial_average)."""
    from bench.results.suites import partial_average

    assert partial_average({"a": 0.2, "b": None, "c": 0.4}, ("a", "b", "c")) == (pytest.approx(0.3), ("a", "c"))
    assert partial_average({"a": 0.2, "b": None}, ("a", "b", "c")) is None  # one score is no average
