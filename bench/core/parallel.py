"""Scoring jobs a task hands off, so that scoring does not stall the encoders (issue: keep every rank busy).

A task that encodes many views of one corpus (30 instructions of a robustness set) scores each view
with CPU work (k-means) that takes longer than the view's encode on an accelerator. Run in line, on the
one process that drives the evaluation, it leaves every accelerator idle meanwhile. A task therefore
`submit`s each view's scoring as soon as the view is encoded and `gather`s the scores at the end:

* in a plain run the job runs at once, in line (nothing changes);
* in a launched run (torchrun) the distributed team (`bench/adapters/distributed.py`) registers itself as the
  executor, and each job goes to another rank's scoring thread, which runs beside that rank's
  encoding; a job no rank has taken when the task gathers runs on the caller.

`fn` must be a module-level function (it is sent to another process by reference) and pure: the same
arguments give the same result wherever it runs, so scores equal a plain run's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, Protocol


class Executor(Protocol):
    def submit(self, fn: Callable[..., Any], *args: Any) -> Future: ...

    def gather(self, futures: Sequence[Future]) -> list[Any]: ...


_EXECUTOR: Executor | None = None


def set_executor(executor: Executor | None) -> None:
    """Install (or, with None, remove) the executor of a launched run."""
    global _EXECUTOR
    _EXECUTOR = executor


def submit(fn: Callable[..., Any], *args: Any) -> Future:
    """Run `fn(*args)` now, or hand it to another rank in a launched run (see module docstring)."""
    if _EXECUTOR is not None:
        return _EXECUTOR.submit(fn, *args)
    future: Future = Future()
    try:
        future.set_result(fn(*args))
    except BaseException as e:  # noqa: BLE001 - kept in the future, raised by `gather` where the task waits
        future.set_exception(e)
    return future


def gather(futures: Sequence[Future]) -> list[Any]:
    """The jobs' results in order; the first failure is raised."""
    if _EXECUTOR is not None:
        return _EXECUTOR.gather(futures)
    return [f.result() for f in futures]
