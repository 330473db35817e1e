"""Command line: `python -m bench COMMAND`. Each command lives in `bench/commands/`; this module only
parses, configures logging and turns errors into one line.

All user errors surface here as one line (`error: ...`) with exit code 2; a Ctrl-C says how to resume.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from bench.errors import BenchError


def _parser() -> argparse.ArgumentParser:
    from bench.commands import COMMANDS
    from bench.commands.run import EPILOG

    parser = argparse.ArgumentParser(
        prog="bench",
        description="Benchmark instruction-following text embeddings on MTEB tasks.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details")
    parser.add_argument("-q", "--quiet", action="store_true", help="only print the final table")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        importlib.import_module(f"bench.commands.{name}").register(sub)
    return parser


def _configure_logging(verbose: bool, quiet: bool) -> None:
    level = logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO
    logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stderr)
    for name in ("bench", "tasks", "adapters", "dataset_builders", "leaderboard"):
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
