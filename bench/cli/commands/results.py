"""`bench results DIR [DIR ...]`: the summary table of one or more results directories (merged; a file reached
twice counts once), then (when they hold instruction-variant results) the instruction-sensitivity and
rank-stability tables (bench/results/summary.py), as markdown, CSV or LaTeX (`--format`)."""

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
    res.set_defaults(func=_cmd_results)


def _cmd_results(args: argparse.Namespace) -> int:
    from bench.results.summary import results_table

    for directory in args.directory:
        if not os.path.isdir(directory):
            raise BenchError(f"No such results directory: {directory}")
    print(results_table(args.directory, fmt=args.format, full_revisions=args.full_revisions))
    return 0
