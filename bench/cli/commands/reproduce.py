"""`bench reproduce TABLE`: run a paper's reported table's rows and print reported vs ours, with Δ per cell.

The rows run through the run layer (bench/run/reproduce_table.py), the Δ comes from the results layer
(bench/results/deltas.py, which the leaderboard's model page also uses); this module parses and prints.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from bench.cli.commands.run import add_run_options, run_option_values

if TYPE_CHECKING:
    from bench.results.literature import ReportedTable
    from bench.run.reproduce_table import RowPlan, RowRun

EPILOG = """examples:
  python -m bench reproduce inbedder-2024-table1 --dry-run              the plan: rows, specs, texts to encode
  python -m bench reproduce inbedder-2024-table1 --rows 4 6 --data-dir ./data --device cuda
  python -m bench reproduce my_table.yaml --rows "all-MiniLM-L6-v2"     a table file of the same format

Each row with a spec runs like `bench run` (results in --output-dir, reused on a rerun); a row that cannot
run here (no spec, no hub, no GPU, no API key, no data) is one line saying why, and the others still run.
Exit status 0 when every row with a spec ran, 1 when some did not; a folder that cannot be written (a
full disk) stops the table after printing the rows that ran (exit 2). `python -m bench list reported`
lists the packaged tables.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "reproduce",
        help="re-run a paper table's rows and print reported vs ours with Δ",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("table", metavar="TABLE", help="a packaged table id (`bench list reported`) or a YAML file path")
    p.add_argument(
        "--rows",
        nargs="+",
        metavar="ROW",
        help="rows to run: names as printed or 1-based positions (default: every row; rows without a spec "
        "say why they do not run)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the plan (each row's spec, tasks and texts to encode); load no model, write nothing",
    )
    add_run_options(p)
    p.add_argument("--device", help="device for every row's model: cpu, cuda, cuda:1, mps or auto")
    p.add_argument(
        "--batch-size",
        type=batch_size_arg,
        metavar="N",
        help="encoding batch size for every row's model, or auto (each family's default; on a CUDA GPU the LM "
        "families size their batches for the device)",
    )
    p.set_defaults(func=_cmd_reproduce)


def batch_size_arg(text: str) -> int | None:
    """`--batch-size N` or `auto` (None: each row's family decides), read by the one option conversion."""
    from bench.adapters.option_values import OptionSource, coerce_option
    from bench.core.errors import ConfigError

    try:
        value: int | None = coerce_option("batch_size", text, "int", OptionSource("flag", "--batch-size"))
    except ConfigError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return value


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from bench.core.errors import StorageError
    from bench.results.literature import load_table
    from bench.run.reproduce_table import plan, reproduce, select_rows
    from bench.run.runner import RunOptions

    table = load_table(args.table)
    rows = select_rows(table, args.rows)
    base = RunOptions(device=args.device, batch_size=args.batch_size, **run_option_values(args))
    print(f"{table.label} ({table.id}), {table.url}")
    if args.dry_run:
        print(plan_text(plan(table, rows, base), len(table.rows)))
        return 0
    runs: list[RowRun] = []
    try:
        for row_run in reproduce(table, rows, base):
            runs.append(row_run)
    except StorageError:  # nothing more can be written: report the rows that ran, then the error line
        print(report_text(table, runs, limited=args.limit is not None))
        raise
    print(report_text(table, runs, limited=args.limit is not None))
    print(f"\nResults: {args.output_dir} (`python -m bench results {args.output_dir}`)")
    failed = [r for r in runs if r.failed]
    if failed:
        ran = sum(1 for r in runs if r.reproduction is not None)
        print(
            f"{len(failed)} of {len(failed) + ran} row(s) with a spec did not run: "
            + "; ".join(f"{r.selected.label}: {r.failed}" for r in failed),
            file=sys.stderr,
        )
        return 1
    return 0


# ---------------------------------------------------------------------------------------- printing
def plan_text(plans: list[RowPlan], n_rows: int) -> str:
    """One line per row: `[4/12] NAME: SPEC on TASKS: N texts to encode` (or why it would not run)."""
    from bench.results.tables import format_count
    from bench.run.reproduce_table import spec_text

    lines = [f"Dry run of {len(plans)} row(s): no model was loaded, nothing was written."]
    for p in plans:
        head = f"[{p.selected.index}/{n_rows}] {p.selected.row.label}"
        if p.skipped is not None:
            lines.append(f"{head}: not run: {p.skipped}")
            continue
        count = p.unavailable or f"{format_count(p.texts)} texts to encode" + (
            f", ~{format_count(p.tokens)} tokens" if p.tokens else ""
        )
        lines.append(f"{head}: {spec_text(p.selected.row)} on {', '.join(p.tasks)}: {count}")
    lines += [f"Data not local: {detail}" for detail in dict.fromkeys(d for p in plans for d in p.details)]
    lines += list(dict.fromkeys(fact for p in plans for fact in p.facts))
    return "\n".join(lines)


def report_text(table: ReportedTable, runs: list[RowRun], *, limited: bool = False) -> str:
    """Reported vs ours per cell, mean |Δ| per row and overall, the rows that did not run, the table's notes."""
    from tabulate import tabulate

    from bench.results.deltas import mean_abs_delta
    from bench.results.marks import LOCAL_COPY, STAND_IN

    done = [(r.selected, r.reproduction) for r in runs if r.reproduction is not None]
    rows = [
        [
            selected.index,
            selected.row.label,
            c.column,
            table.printed(c.reported),
            _num(c.ours) + (STAND_IN.symbol if c.stand_in else LOCAL_COPY.symbol if c.local_copy else ""),
            _delta(c.delta),
        ]
        for selected, reproduction in done
        for c in reproduction.cells
    ]
    parts = []
    if rows:
        parts.append(
            tabulate(
                rows,
                headers=["#", "Row", "Column", "Reported", "Ours", "Δ"],
                tablefmt="github",
                disable_numparse=True,
            )
        )
        means = [
            f"  {selected.index} {selected.row.label}: {_num(reproduction.mean_abs_delta)} over "
            f"{len(reproduction.compared)} cell(s)"
            for selected, reproduction in done
        ]
        cells = sum(len(reproduction.compared) for _, reproduction in done)
        overall = mean_abs_delta(reproduction for _, reproduction in done)
        total = f"Overall mean |Δ|: {_num(overall)} over {cells} cell(s) of {len(done)} row(s)"
        parts.append("\n".join(["Mean |Δ| per row (Δ = ours − reported, both ×100 as printed):", *means, total]))
        if any(reproduction.on_stand_in for _, reproduction in done):
            parts.append(f"{STAND_IN.symbol} {STAND_IN.label}: {STAND_IN.meaning}; its Δ is not in the mean |Δ|.")
        if any(reproduction.on_local_copy for _, reproduction in done):
            parts.append(f"{LOCAL_COPY.symbol} {LOCAL_COPY.label}: {LOCAL_COPY.meaning}; its Δ is not in the mean |Δ|.")
    else:
        parts.append("No row ran, so there is nothing to compare.")
    if limited:
        parts.append("--limit: ours are computed on a subset of each task, so Δ is not a reproduction.")
    not_run = [
        f"  {r.selected.index} {r.selected.row.label}: "
        + (f"not run: {r.skipped}" if r.skipped is not None else f"could not run: {r.failed}")
        for r in runs
        if r.reproduction is None
    ]
    if not_run:
        parts.append("\n".join(["Not run here:", *not_run]))
    if table.notes:
        parts.append("\n".join(["How comparable (the table's notes):", *(f"  - {n}" for n in table.notes)]))
    return "\n\n".join(parts)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _delta(value: float | None) -> str:
    """Δ with its sign (`+0.42`, `-1.30`); an exact reproduction reads `0.00`."""
    return "-" if value is None else ("0.00" if value == 0 else f"{value:+.2f}")
