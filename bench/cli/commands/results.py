"""`bench results DIR [DIR ...]`: the comparison table of one or more results directories (merged; a file
reached twice counts once; bench/results/comparison.py), then (when they hold instruction-variant results) the
instruction-sensitivity and rank-stability tables (bench/results/variant_tables.py), as markdown, CSV or LaTeX
(`--format`); `--columns` chooses the score columns and `--reported TABLE` adds a paper's printed rows
(bench/results/literature.py)."""

from __future__ import annotations

import argparse
import os

from bench.core.errors import BenchError


def register(sub: argparse._SubParsersAction) -> None:
    res = sub.add_parser(
        "results", help="print the summary table of results directories (and instruction sensitivity, if any)"
    )
    res.add_argument(
        "directory",
        nargs="+",
        help="results folders (a bench run --output-dir, an mteb.ResultCache folder, "
        "or any folder below one); the results of all are merged",
    )
    res.add_argument(
        "--format",
        choices=("markdown", "csv", "latex"),
        default="markdown",
        help="markdown (GitHub table, the default), csv (the main table only, one header row, a marks "
        "column) or latex (booktabs tables, bold best score, the marks' legend under each)",
    )
    res.add_argument(
        "--full-revisions",
        action="store_true",
        help="print model revisions in full (default: their first 12 characters)",
    )
    res.add_argument(
        "--columns",
        metavar="COL[,COL...]",
        help="the score columns to show, in this order, each by its header, task name or short label "
        "(e.g. 'DemoInstructSTS,Avg'); rows are ranked by the first average shown. Default: every task, "
        "then every suite average",
    )
    res.add_argument(
        "--reported",
        action="append",
        default=[],
        metavar="TABLE",
        help="add the rows of a paper's reported table (an id from `python -m bench list reported`, or a "
        "YAML file of that format), marked § and ranked by the same rule; repeatable",
    )
    res.add_argument(
        "--intervals",
        action="store_true",
        help="add a '95%% CI' column: the percentile bootstrap interval (B = 1,000, seeded) of the column rows "
        "are sorted by, re-scored from the per-item outcomes a bench run keeps in its run records; '–' for "
        "rows without them (docs/reference/metrics.md)",
    )
    res.add_argument(
        "--caption",
        metavar="TEXT",
        help="with --format latex: the main table's caption (default: what its scores are and what bold means)",
    )
    res.add_argument(
        "--label",
        metavar="KEY",
        help="with --format latex: the main table's \\label (letters, digits and : . _ / -; default "
        "tab:results-<suite>); the instruction-variant tables get KEY-<their title>",
    )
    res.set_defaults(func=_cmd_results)


def _cmd_results(args: argparse.Namespace) -> int:
    from bench.results.comparison import results_table
    from bench.results.tables import LABEL_KEY

    for directory in args.directory:
        if not os.path.isdir(directory):
            raise BenchError(f"No such results directory: {directory}")
    columns = [c.strip() for c in args.columns.split(",") if c.strip()] if args.columns is not None else None
    if columns == []:
        raise BenchError("--columns names no column; give one or more, separated by commas.")
    latex_only = [flag for flag, value in (("--caption", args.caption), ("--label", args.label)) if value is not None]
    if latex_only and args.format != "latex":
        verb = "are" if len(latex_only) > 1 else "is"
        raise BenchError(f"{' and '.join(latex_only)} {verb} for LaTeX tables only; add --format latex.")
    if args.label is not None and not LABEL_KEY.fullmatch(args.label):
        raise BenchError(
            f"--label {args.label!r}: a LaTeX label key holds only letters, digits and : . _ / - (e.g. tab:results)."
        )
    print(
        results_table(
            args.directory,
            fmt=args.format,
            full_revisions=args.full_revisions,
            columns=columns,
            reported=args.reported,
            intervals=args.intervals,
            caption=args.caption,
            label=args.label,
        )
    )
    return 0
