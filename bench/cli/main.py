"""Command line: `python -m bench COMMAND`. Each command lives in `bench/cli/commands/`; this module only
parses, configures logging and turns errors into one line.

All user errors surface here as one line (`error: ...`) with exit code 2; a Ctrl-C says how to resume
(exit 130), and so does a SIGTERM (`kill`, a scheduler's stop, a container's shutdown: exit 143), which
stops the run where a Ctrl-C would, through the same cleanup.
Every error line and log line passes through `bench.core.redact`, so no URL credential is ever printed.
Anything else is a bug: it keeps its traceback (credentials redacted there too) and exits 1.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import logging
import os
import signal
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from bench.core import plugins
from bench.core.errors import BenchError
from bench.core.redact import install_log_redaction, redact

# Commands that read the tasks or families, so take `--include-path` (bench/core/plugins.py).
PLUGIN_COMMANDS = ("run", "list", "results")


def build_parser(*, full_run: bool = False) -> argparse.ArgumentParser:
    """The CLI's parser; `run`'s model-option flags need every model family imported, so only a `run`
    command gets them (`full_run`, a second parse), and `bench --help` or `bench list` stay light.
    The docs' CLI reference is generated from it (docs/hooks/reference.py), so the two cannot drift."""
    from bench.cli.commands import COMMANDS
    from bench.cli.commands.run import EPILOG

    parser = argparse.ArgumentParser(
        prog="bench",
        description="Benchmark instruction-following text embeddings on MTEB tasks.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details")
    parser.add_argument("-q", "--quiet", action="store_true", help="only print the final table")
    parser.add_argument("--version", action="version", version=_version_text())
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        module = importlib.import_module(f"bench.cli.commands.{name}")
        module.register(sub, full=full_run) if name == "run" else module.register(sub)
    for command in sub.choices.values():  # -q/-v also after the subcommand, as MTEB's and lm-eval's CLIs take them
        command.add_argument(
            "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="log debug details"
        )
        command.add_argument(
            "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="only print the final table"
        )
    for name in PLUGIN_COMMANDS:
        sub.choices[name].add_argument(
            "--include-path",
            action="append",
            metavar="DIR",
            help="import the .py files of DIR, which define tasks or model families of your own, as plugins "
            "(repeatable; installed plugins are found through entry points: docs/guides/plugins.md)",
        )
    return parser


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever `sys.stderr` is when a line is logged, not when the handler was made: an embedding
    program (a notebook, pytest's capture) may swap stderr between calls of `main`, and a handler holding
    the old, closed stream would fail on every line."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        pass


def _version_text() -> str:
    """`bench 0.1.0 (mteb 2.26.24, Python 3.11.9)`, from installed metadata: nothing heavy is imported."""
    from importlib import metadata

    from bench import __version__

    try:
        mteb = f"mteb {metadata.version('mteb')}, "
    except metadata.PackageNotFoundError:
        mteb = ""
    return f"bench {__version__} ({mteb}Python {sys.version.split()[0]})"


def _configure_logging(verbose: bool, quiet: bool) -> None:
    level = logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO
    logging.basicConfig(level=logging.WARNING, format="%(message)s", handlers=[_StderrHandler()])
    for name in ("bench",):
        logging.getLogger(name).setLevel(level)
    # Libraries stay at WARNING: their INFO lines would drown the harness's progress.
    for name in ("mteb", "sentence_transformers", "transformers", "datasets"):
        logging.getLogger(name).setLevel(logging.DEBUG if verbose else logging.ERROR)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    install_log_redaction()
    from bench.core.progress import stderr_is_terminal

    if not stderr_is_terminal():  # a log file, a pipe, or a terminal of 0 columns
        _quiet_library_bars()


def _quiet_library_bars() -> None:
    """Libraries' bars (transformers' "Loading weights", its GGUF de-quantisation, downloads) are noise in a
    log file: a bar's redraws (carriage returns) become one line of kilobytes. The environment variables reach libraries
    imported later; those already imported (the `run` parser imports them to learn the families' flags, when its cached flag table is stale)
    read theirs at import, so they are switched off directly. Plain tqdm bars: `disable_library_bars`."""
    from bench.core.progress import disable_library_bars

    for name in ("HF_HUB_DISABLE_PROGRESS_BARS", "HF_DATASETS_DISABLE_PROGRESS_BARS"):
        os.environ.setdefault(name, "1")
    disable_library_bars()
    if "huggingface_hub" in sys.modules:
        sys.modules["huggingface_hub"].utils.disable_progress_bars()
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    if "datasets" in sys.modules:
        sys.modules["datasets"].disable_progress_bars()


class Terminated(KeyboardInterrupt):
    """A SIGTERM, raised where a Ctrl-C raises KeyboardInterrupt: everything that cleans up after a Ctrl-C
    (caches committed, requests in flight dropped, temporary files removed) cleans up after it too."""


def _terminate_like_ctrl_c() -> Callable[[], None]:
    """Turn SIGTERM into `Terminated` while a command runs; returns what puts the handler it replaced back.
    Ranks other than 0 of a launched run keep the default: the launcher stops them, and rank 0 reports."""

    def terminated(signum: int, frame: Any) -> None:
        raise Terminated

    try:
        previous = signal.signal(signal.SIGTERM, terminated)
    except ValueError:  # not the main thread (an embedding program's worker): leave signals alone
        return lambda: None

    def restore() -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)

    return restore


def _other_rank() -> bool:
    """A rank other than 0 of a `torchrun`/`accelerate launch` run (read from the launcher's variables)."""
    from bench.adapters.distributed import is_worker

    return is_worker()


def unrecognized(parser: argparse.ArgumentParser, command: str | None, extra: Sequence[str]) -> NoReturn:
    """argparse's error for arguments no option takes, from the subcommand's parser (its usage, not the
    top-level one), naming the closest option to each mistyped one (`--tempalte`: did you mean --template?).

    Python 3.12's `suggest_on_error` does this for choices only, and the project supports 3.11: so here, once,
    for every subcommand, by difflib over the options that subcommand (and the top level) takes."""
    commands = next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {})
    target: argparse.ArgumentParser = commands.get(command, parser) if command else parser
    known = [s for p in (target, parser) for a in p._actions for s in a.option_strings if s.startswith("--")]
    hints = []
    for arg in extra:
        if arg.startswith("--"):
            close = difflib.get_close_matches(arg.partition("=")[0], known, n=1, cutoff=0.6)
            hints += [f"{arg.partition('=')[0]}: did you mean {close[0]}?"] if close else []
    target.error(f"unrecognized arguments: {' '.join(extra)}" + (f" ({'; '.join(hints)})" if hints else ""))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    try:  # before the full parser: a plugin's family may add `bench run` flags
        plugins.set_include_paths(getattr(args, "include_path", None) or [])
        if getattr(args, "needs_full_parser", False):
            parser = build_parser(full_run=True)
            args, extra = parser.parse_known_args(argv)
    except BenchError as e:
        return _error(e, getattr(args, "verbose", False))
    if extra:
        unrecognized(parser, args.command, extra)
    if _other_rank():
        if args.command != "run" or getattr(args, "dry_run", False):
            return 0  # launched under torchrun: rank 0 alone runs a command that is not a shared evaluation
        args.quiet = True  # rank 0 reports; the others print warnings and errors only
    _configure_logging(args.verbose, args.quiet)
    restore = (lambda: None) if _other_rank() else _terminate_like_ctrl_c()
    try:
        return args.func(args)
    except BenchError as e:
        return _error(e, getattr(args, "verbose", False))
    except KeyboardInterrupt as e:
        stopped = "terminated (SIGTERM)" if isinstance(e, Terminated) else "interrupted"
        print(
            f"{stopped}: finished tasks and encoded texts are saved; rerun the same command to resume.",
            file=sys.stderr,
        )
        return 143 if isinstance(e, Terminated) else 130
    except Exception as e:  # noqa: BLE001 - a bug: its full traceback, credentials redacted, exit 1
        print(redact("".join(traceback.format_exception(e))), end="", file=sys.stderr)
        return 1
    finally:
        restore()


def _error(e: BenchError, verbose: bool = False) -> int:
    """A user's error as one line (`error: ...`, credentials redacted), exit 2. With `-v`, an error caused by
    code outside the harness (a plugin's import, a library's exception) first prints that cause's traceback."""
    if verbose and e.__cause__ is not None and not isinstance(e.__cause__, BenchError):
        print(redact("".join(traceback.format_exception(e.__cause__))), end="", file=sys.stderr)
    print(f"error: {redact(' '.join(str(e).split()))}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
