"""`bench results DIR`: the summary table of a results directory, then (when it holds instruction-variant
results) the instruction-sensitivity and rank-stability tables (bench/results/summary.py)."""

from __future__ import annotations

import argparse
import os

from bench.core.errors import BenchError


def register(sub: argparse._SubParsersAction) -> None:
    res = sub.add_parser("results", help="print the summary table of a results directory (and instruction sensitivity, if any)")
    res.add_argument("directory")
    res.set_defaults(func=_cmd_results)


def _cmd_results(args: argparse.Namespace) -> int:
    from bench.results.summary import results_table

    if not os.path.isdir(args.directory):
        raise BenchError(f"No such results directory: {args.directory}")
    print(results_table(args.directory))
    return 0
