"""bench/results/merged_rows.py: one model's rows of several tables of one paper and suite (issue 42)."""

from __future__ import annotations

from dataclasses import replace

from bench.results.literature import load_table
from bench.results.merged_rows import conflict, merge


def test_rows_of_one_table_or_of_two_suites_are_never_merged():
    table1 = load_table("metaeol-2024-table1")
    merged = merge([table1])
    assert len(merged.rows) == len(table1.rows) and not merged.notes  # Echo-LLAMA2 7B and 13B stay two rows
    other_suite = replace(load_table("metaeol-2024-table4"), suite="generic")
    assert len(merge([table1, other_suite]).rows) == len(table1.rows) + 4


def test_a_printed_average_that_differs_is_a_conflict():
    table1, table4 = load_table("metaeol-2024-table1"), load_table("metaeol-2024-table4")
    row1, row4 = table1.row("MetaEOL-LLAMA2 (Ours) (7B)"), table4.row("TC+SA+PI+IE")
    assert conflict((table1, row1), (table4, row4)) is None
    changed = replace(row4, cells={**row4.cells, "Avg.": 75.90})
    assert conflict((table1, row1), (table4, changed)) == (
        "the printed average is 75.96 in Table 1 and 75.90 in Table 4"
    )
