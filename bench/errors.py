"""Errors a user can fix, raised anywhere in the harness and caught once by the CLI.

    BenchError                 anything the user can fix; the CLI prints one line, no traceback
    ├── UnknownNameError       a model, task or suite name that is not registered
    ├── DataError              missing data files, malformed rows, empty texts
    ├── ModelLoadError         a model that cannot be loaded (bad path, hub unreachable)
    ├── EncodingError          a model that produced NaN/inf or the wrong shape
    └── ConfigError            contradictory or invalid options

Anything else is a bug in the harness and keeps its traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class BenchError(Exception):
    """Base class of every error the user can fix."""


class UnknownNameError(BenchError, KeyError):
    """A name that is not in a registry; the message lists close matches."""

    def __init__(self, kind: str, name: str, known: Iterable[str]) -> None:
        known = sorted(known)
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        close += [k for k in known if name.lower() in k.lower() and k not in close][:3]
        msg = f"Unknown {kind} '{name}'."
        if close:
            msg += f" Did you mean: {', '.join(close[:3])}?"
        else:
            msg += f" Known {kind}s: {', '.join(known[:15])}{' ...' if len(known) > 15 else ''}"
        msg += f" (`python -m bench list {kind}s` shows all.)"
        super().__init__(msg)
        self.message = msg

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return self.message


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
