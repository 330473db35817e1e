"""How a failure crosses ranks: what a rank sends for a failed job or for itself (`failure_of`), what it
becomes on rank 0 (`failure_error`: a harness error as its own kind, a bug as its traceback), and gloo's
message for a lost peer in a few words (`gloo_reason`)."""

from __future__ import annotations

import traceback

from bench.core import errors


def failure_of(error: BaseException) -> tuple[str, str]:
    """What a rank sends back for a failed job: a harness error's kind and message, else the traceback."""
    if isinstance(error, errors.BenchError):
        return type(error).__name__, str(error)
    return "", "".join(traceback.format_exception(error)).strip()


def failure_error(rank: int, what: str, failure: tuple[str, str]) -> Exception:
    """The exception a failure another rank reported becomes here: a harness error as its own kind (one error
    line), anything else a RuntimeError holding that rank's traceback (a bug: exit 1, not an error line)."""
    kind, message = failure
    cls = getattr(errors, kind, None) if kind else None
    if isinstance(cls, type) and issubclass(cls, errors.BenchError):
        return cls(f"rank {rank}: {message}")
    return RuntimeError(f"rank {rank} failed while {what}:\n{message}")


def gloo_reason(error: BaseException) -> str:
    """gloo's message without its source location and advice: 'Connection reset by peer'."""
    text = (str(error).splitlines() or [type(error).__name__])[0]
    text = text.rsplit("] ", 1)[-1].split(". This is typically")[0]
    return text[:160] or type(error).__name__
