"""Command line: `python -m bench run|list|results`. It parses, wires tasks to a model, and prints.

All user errors surface here as one line (`error: ...`) with exit code 2; a Ctrl-C says how to resume.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from bench.errors import BenchError

EPILOG = """examples:
  python -m bench run                                   demo suite, default model, offline
  python -m bench run --model all-MiniLM-L6-v2 --template none --suite demo
  python -m bench run --tasks IntentEmotion InstructSTSB --data-dir ./data --limit 200
  python -m bench list tasks
  python -m bench results results/
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bench",
        description="Benchmark instruction-following text embeddings on MTEB tasks.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details")
    parser.add_argument("-q", "--quiet", action="store_true", help="only print the final table")
    sub = parser.add_subparsers(dest="command", required=True)

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

    ls = sub.add_parser("list", help="list tasks, models or suites")
    ls.add_argument("what", choices=["tasks", "models", "suites"])
    ls.set_defaults(func=_cmd_list)

    res = sub.add_parser("results", help="print the summary table of a results directory")
    res.add_argument("directory")
    res.set_defaults(func=_cmd_results)
    return parser


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


def _cmd_list(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    if args.what == "tasks":
        from tasks import TASKS

        rows = [[n, c.metadata.type, c.metadata.main_score, c.metadata.dataset["path"]] for n, c in TASKS.items()]
        print(tabulate(rows, headers=["Task", "Type", "Main score", "Dataset"], tablefmt="github"))
    elif args.what == "suites":
        from tasks import SUITE_DESCRIPTIONS, SUITES

        rows = [[n, ", ".join(t), SUITE_DESCRIPTIONS[n]] for n, t in SUITES.items()]
        print(tabulate(rows, headers=["Suite", "Tasks", "About"], tablefmt="github"))
    else:
        from adapters.registry import FAMILIES, FAMILY_ALIASES, FAMILY_OPTIONS, MODELS

        rows = [[n, e.family, e.description] for n, e in MODELS.items()]
        print(tabulate(rows, headers=["Model", "Family", "About"], tablefmt="github"))
        print()
        aliases = {f: [a for a, t in FAMILY_ALIASES.items() if t == f] for f in FAMILIES}
        rows = [[f, ", ".join(aliases[f]), FAMILY_OPTIONS.get(f, "")] for f in FAMILIES]
        print(tabulate(rows, headers=["Family (spec prefix)", "Aliases", "Options"], tablefmt="github"))
    return 0


def _cmd_results(args: argparse.Namespace) -> int:
    from bench.summary import results_table

    if not os.path.isdir(args.directory):
        raise BenchError(f"No such results directory: {args.directory}")
    print(results_table(args.directory))
    return 0


def _configure_logging(verbose: bool, quiet: bool) -> None:
    level = logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO
    logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stderr)
    for name in ("bench", "tasks", "adapters"):
        logging.getLogger(name).setLevel(level)
    # Libraries stay at WARNING: their INFO lines would drown the harness's progress.
    for name in ("mteb", "sentence_transformers", "transformers", "datasets"):
        logging.getLogger(name).setLevel(logging.DEBUG if verbose else logging.ERROR)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    _configure_logging(args.verbose, args.quiet)
    try:
        return args.func(args)
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: finished tasks and encoded texts are saved; rerun the same command to resume.", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
