"""Scoring jobs a task hands off, so that scoring does not stall the encoders (issue: keep every rank busy).

A task that encodes many views of one corpus (30 instructions of a robustness set) scores each view
with CPU work (a k-means fit: 1-2 s a view, far more on a busy machine). Run in line, on the one
process that drives the evaluation, it leaves every accelerator idle meanwhile. A task therefore
`submit`s each view's scoring as soon as the view is encoded and `gather`s the scores at the end:

* in a plain run (one process) this module's scoring thread (`LocalWorker`) runs the jobs beside the
  encoding of the next view;
* in a launched run (torchrun) the distributed team (`bench/adapters/distributed/`) registers itself as the
  executor, and each job goes to another rank's scoring thread, which runs beside that rank's
  encoding; a job no rank has taken when the task gathers runs on the caller.

Both bound memory: a plain run's caller waits while `BACKLOG` jobs are queued (a caller that encodes
faster than the thread scores is paced by it), a launched run's runs the oldest itself. A job's
exception is raised by `gather`, as itself; a task that fails before it gathers calls `discard`, so no
queued job outlives it.

Why a thread and not a process: a job's input is one view's vectors (4,480 x 4,096 float32 for FewRel
under a 7B readout, 73 MB); a thread takes the array as it is, a process would need a copy or shared
memory per view, and a second interpreter that imports scikit-learn. The GIL is no obstacle:
scikit-learn's k-means runs its loops in Cython without the GIL and its distances in BLAS, numpy
releases it in its kernels, and the caller spends a view's encode in the accelerator's forward pass
(torch releases the GIL there; the stand-in accelerator sleeps), so the two threads rarely want it at
once. The thread keeps the process's CPU priority: at a lower one (as a launched run's scoring ranks
take), other users of a shared CPU starved it, and the caller spent two thirds of a 1-rank stand-in run
waiting for room in the backlog (2 cores at load 13). A k-means fit
bounds its own thread pools to one thread (`bench.tasks.metrics`), so the thread takes one core, not
all of them.

Why the caller waits instead of scoring beside the thread: OpenBLAS has one thread pool per process,
and threadpoolctl lets one thread at a time limit it; two fits at once would run one of them with
every BLAS thread, and the one that ends last would restore the limit the first had set, for the rest
of the run. One scoring thread keeps fits one at a time. It keeps up: a fit of a FewRel view takes
1.2-1.4 CPU s, the view's encode at 20,000 tokens/s about 11 s.

The thread starts with the first job and ends as soon as no job is queued, so nothing lingers between
tasks or after a failure; it is a daemon, so a job still running after Ctrl-C never holds the process.

`fn` must be a module-level function (it is sent to another process by reference) and pure: the same
arguments give the same result wherever it runs, so scores equal a run in line.
"""

from __future__ import annotations

import atexit
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from typing import Any, Protocol

BACKLOG = 2  # jobs queued for a plain run's scoring thread before the caller waits for room


class Executor(Protocol):
    def submit(self, fn: Callable[..., object], *args: object) -> Future: ...

    def gather(self, futures: Sequence[Future]) -> list[Any]: ...


_Job = tuple[Future, Callable[..., object], tuple[object, ...]]


class InLine:
    """Each job runs at once, on the caller: the behaviour before the scoring thread (tests compare to it)."""

    def submit(self, fn: Callable[..., object], *args: object) -> Future:
        future: Future = Future()
        _run(future, fn, args)
        return future

    def gather(self, futures: Sequence[Future]) -> list[Any]:
        return [f.result() for f in futures]


class LocalWorker:
    """A plain run's executor: one scoring thread beside the caller, with a bounded backlog (module docstring)."""

    def __init__(self, backlog: int = BACKLOG) -> None:
        self.backlog = backlog
        self.cv = threading.Condition()
        self.queued: deque[_Job] = deque()
        self.thread: threading.Thread | None = None

    def submit(self, fn: Callable[..., object], *args: object) -> Future:
        """Queue `fn(*args)` for the scoring thread; with `backlog` jobs queued already, wait for room."""
        future: Future = Future()
        with self.cv:
            while len(self.queued) >= self.backlog and self.thread is not None:
                self.cv.wait(0.5)  # woken when the thread takes a job; the timeout keeps Ctrl-C prompt
            self.queued.append((future, fn, args))
            if self.thread is None:
                self.thread = threading.Thread(target=self._work, name="bench-scoring", daemon=True)
                self.thread.start()
        return future

    def gather(self, futures: Sequence[Future]) -> list[Any]:
        """Results in order; the first failure is raised."""
        return [f.result() for f in futures]

    def discard(self, futures: Iterable[Future]) -> None:
        """Drop (cancel) the jobs of `futures` that have not started; a running one finishes on its own."""
        drop = set(map(id, futures))
        with self.cv:
            dropped = [job for job in self.queued if id(job[0]) in drop]
            self.queued = deque(job for job in self.queued if id(job[0]) not in drop)
            self.cv.notify_all()
        for future, _fn, _args in dropped:
            future.cancel()

    def _work(self) -> None:
        while True:
            with self.cv:
                if not self.queued:
                    self.thread = None  # the next submit starts a fresh thread
                    self.cv.notify_all()
                    return
                job = self.queued.popleft()
                self.cv.notify_all()
            _run(*job)
            del job  # the view's vectors go as soon as they are scored


def _run(future: Future, fn: Callable[..., object], args: tuple[object, ...]) -> None:
    """Run a job into its future. On the caller's thread, Ctrl-C (or SystemExit) also propagates at once."""
    if not future.set_running_or_notify_cancel():
        return
    try:
        future.set_result(fn(*args))
    except Exception as e:  # noqa: BLE001 - kept in the future, raised by `gather` where the task waits
        future.set_exception(e)
    except BaseException as e:
        future.set_exception(e)  # a waiter must not hang on a job that never ends
        if threading.current_thread() is threading.main_thread():
            raise


_LOCAL = LocalWorker()
_EXECUTOR: Executor | None = None
atexit.register(lambda: _LOCAL.discard([job[0] for job in list(_LOCAL.queued)]))


def set_executor(executor: Executor | None) -> None:
    """Install an executor (a launched run's team, or `InLine()`); None goes back to the scoring thread."""
    global _EXECUTOR
    _EXECUTOR = executor


def submit(fn: Callable[..., object], *args: object) -> Future:
    """Hand `fn(*args)` to the scoring thread, or to another rank in a launched run (see module docstring)."""
    return (_LOCAL if _EXECUTOR is None else _EXECUTOR).submit(fn, *args)


def gather(futures: Sequence[Future]) -> list[Any]:
    """The jobs' results in order; the first failure is raised."""
    return (_LOCAL if _EXECUTOR is None else _EXECUTOR).gather(futures)


def discard(futures: Iterable[Future]) -> None:
    """Drop the jobs of `futures` not yet started (a task that fails before it gathers); an executor
    without `discard` (a launched run's team) lets them run."""
    drop = getattr(_LOCAL if _EXECUTOR is None else _EXECUTOR, "discard", None)
    if drop is not None:
        drop(list(futures))
