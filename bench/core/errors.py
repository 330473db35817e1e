"""Errors a user can fix, raised anywhere in the harness and caught once by the CLI.

    BenchError                 anything the user can fix; the CLI prints one line, no traceback
    ├── UnknownNameError       a model, task or suite name that is not registered
    ├── DataError              missing data files, malformed rows, empty texts
    ├── ModelLoadError         a model that cannot be loaded (bad path, hub unreachable)
    ├── EncodingError          a model that produced NaN/inf or the wrong shape
    ├── ConfigError            contradictory or invalid options
    └── StorageError           a file or folder the harness cannot write (full disk, read-only, not a folder)

`storage_error` maps an OSError from the file-writing layer (bench/core/fileio.py, the embedding cache) to a
StorageError naming the path and the fix; any other OSError is unexpected and keeps its traceback.

Anything else is a bug in the harness and keeps its traceback.
"""

from __future__ import annotations

import difflib
import errno
from collections.abc import Iterable
from pathlib import Path


class BenchError(Exception):
    """Base class of every error the user can fix."""


class UnknownNameError(BenchError, KeyError):
    """A name that is not in a registry; the message lists close matches."""

    def __init__(self, kind: str, name: str, known: Iterable[str], *, list_command: str | None = None) -> None:
        known = sorted(known)
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        close += [k for k in known if name.lower() in k.lower() and k not in close][:3]
        msg = f"Unknown {kind} '{name}'."
        if close:
            msg += f" Did you mean: {', '.join(close[:3])}?"
        else:
            msg += f" Known {kind}s: {', '.join(known[:15])}{' ...' if len(known) > 15 else ''}"
        msg += f" (`{list_command or f'python -m bench list {kind}s'}` shows all.)"
        super().__init__(msg)
        self.message = msg

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return self.message


def unknown_task(name: str, own: Iterable[str], others: Iterable[str]) -> UnknownNameError:
    """The error for a name that is no task: close matches among the harness's tasks (`own`) when there are
    any, else among those and MTEB's (`others`). One rule, whether the names come from the live registries
    (`bench.tasks`) or from the task catalogue before MTEB is imported (`bench/cli/run_names.py`)."""
    own = list(own)
    close = difflib.get_close_matches(name, own, n=1, cutoff=0.6) or [k for k in own if name.lower() in k.lower()]
    return UnknownNameError("task", name, own if close else list(dict.fromkeys([*own, *others])))


def suite_for(name: str, suites: Iterable[str], benchmarks: dict[str, str]) -> str:
    """The suite `name` means: a suite's own name (`demo`), or its MTEB benchmark name in any case
    (`InstructBench-demo`, the name `mteb.get_benchmark` knows it by: `benchmarks` maps suite -> that name).
    A suite's own name is matched in any case too, so a suite that holds exactly an MTEB benchmark's tasks
    under that benchmark's name in lower case answers to MTEB's name (`FollowIR` -> `followir`).

    Raises:
        UnknownNameError: neither; close matches among both kinds of name.
    """
    suites = list(suites)
    if name in suites:
        return name
    by_benchmark = {suite.lower(): suite for suite in suites}
    by_benchmark |= {benchmark.lower(): suite for suite, benchmark in benchmarks.items() if suite in suites}
    found = by_benchmark.get(name.strip().lower())
    if found is None:
        raise UnknownNameError("suite", name, [*suites, *(benchmarks[s] for s in suites if s in benchmarks)])
    return found


class DataError(BenchError):
    """Task data that is missing or does not follow the published schema."""


class MissingDataError(DataError):
    """A task has no folder in the local data directory: a suite run skips it, a named task fails."""


class ModelLoadError(BenchError):
    """A model that cannot be loaded."""


class EncodingError(BenchError):
    """A model whose output cannot be scored (NaN, inf, wrong shape)."""


class ConfigError(BenchError):
    """Invalid or contradictory options."""


class StorageError(BenchError):
    """A file or folder the harness cannot write: full disk, read-only, no permission, not a folder."""


# errno -> (what went wrong, how to fix it); the message names the path in between.
_STORAGE_FIXES: dict[int, tuple[str, str]] = {
    errno.ENOSPC: ("no space left on the device", "free some space, or point {option} at another disk"),
    errno.EDQUOT: ("disk quota exceeded", "free some space, or point {option} at another disk"),
    errno.EROFS: ("the file system is read-only", "point {option} at a writable folder"),
    errno.EACCES: ("permission denied", "make it writable for this user, or point {option} elsewhere"),
    errno.EPERM: ("operation not permitted", "make it writable for this user, or point {option} elsewhere"),
    errno.ENOTDIR: ("a path component is a file, not a folder", "point {option} at a folder"),
    errno.EEXIST: ("a file is in the way of a folder", "point {option} at a folder"),
    errno.EISDIR: ("a folder is in the way of a file", "remove or rename that folder"),
}


def storage_error(
    error: OSError, path: Path | str, *, what: str = "output", option: str = "--output-dir/--out"
) -> StorageError | None:
    """A StorageError for an OSError whose cause the user can fix, or None (an unexpected error).

    `what` says what was being written; `option` is the flag that chooses where it goes.
    """
    fix = _STORAGE_FIXES.get(error.errno or 0)
    if fix is None:
        return None
    problem, hint = fix
    return StorageError(
        f"Cannot write {what} to {path}: {problem}. Fix: {hint.format(option=option)}; "
        f"results finished earlier are kept."
    )
