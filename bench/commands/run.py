"""`bench run`: evaluate a model on tasks or a suite."""

from __future__ import annotations

import argparse
import os

EPILOG = """examples:
  python -m bench run                                   demo suite, default model, offline
  python -m bench run --model all-MiniLM-L6-v2 --template none --suite demo
  python -m bench run --tasks IntentEmotion InstructSTSB --data-dir ./data --limit 200
  python -m bench list tasks
  python -m bench results results/
"""


def register(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser("run", help="evaluate a model", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("--model", default="all-MiniLM-L6-v2", help="registered name, st:PATH_OR_ID, path or hub id (default %(default)s)")
    which = run.add_mutually_exclusive_group()
    which.add_argument("--tasks", nargs="+", metavar="TASK", help="task names (see `bench list tasks`)")
    which.add_argument("--suite", help="suite name (default: demo; see `bench list suites`)")
    run.add_argument("--template", help="instruction template: none, prefix, model, or a string with {instruction} and {text}")
    run.add_argument("--batch-size", type=int, default=32, help="texts per forward pass (default %(default)s)")
    run.add_argument("--device", help="cpu, cuda, cuda:1, mps or auto (default auto)")
    run.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16", "auto"])
    run.add_argument("--data-dir", help="local data directory (default $INSTRUCT_BENCH_DATA_DIR, else the hub)")
    run.add_argument("--output-dir", default="results", help="where result files go (default %(default)s)")
    run.add_argument("--cache-dir", help="embedding cache (default $INSTRUCT_BENCH_CACHE or ~/.cache/instruct-bench)")
    run.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    run.add_argument("--limit", type=int, help="at most N examples per criterion/aspect, stratified by label")
    run.add_argument("--overwrite", action="store_true", help="recompute tasks that already have results")
    run.add_argument("--seed", type=int, default=42, help="seed for k-means and --limit sampling (default %(default)s)")
    run.set_defaults(func=_cmd_run)


def _cmd_run(args: argparse.Namespace) -> int:
    from bench.runner import RunOptions, run
    from bench.summary import run_table

    options = RunOptions(
        model=args.model, tasks=args.tasks, suite=args.suite, template=args.template, batch_size=args.batch_size,
        device=args.device, dtype=args.dtype, data_dir=args.data_dir, output_dir=args.output_dir,
        cache_dir=args.cache_dir, use_cache=not args.no_cache, limit=args.limit, overwrite=args.overwrite,
        seed=args.seed, show_progress_bar=False if args.quiet else None,
    )
    outcomes = run(options)
    print(run_table(outcomes))
    print(f"\nResults: {os.path.abspath(args.output_dir)}")
    return 0
