"""An other rank's side of the pipeline (`Link`): a receiver thread (jobs from rank 0), a heartbeat thread and
a scoring thread; `bench.adapters.distributed.session.serve` encodes on the main thread."""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from typing import TYPE_CHECKING, Any

from bench.adapters.distributed.faults import failure_of
from bench.adapters.distributed.wire import FAILURE, HEARTBEAT, JOB, OBJECT, STOP, Unsendable, Wire

if TYPE_CHECKING:
    from bench.adapters.cache import EmbeddingCache


class Link:
    """An other rank's side: a receiver thread (jobs from rank 0), a heartbeat thread and a scoring thread;
    `serve` encodes on the main thread. Every message says up to which job this rank's shards have committed
    its batches (`committed`), so rank 0 can stop holding them."""

    def __init__(self, heartbeat: float, shares_disk: bool = True) -> None:
        self.heartbeat = heartbeat
        self.shares_disk = shares_disk  # on rank 0's machine: commit to a shard beside rank 0's cache
        self.wire = Wire(0)
        self.shards: tuple[
            EmbeddingCache, ...
        ] = ()  # the caches this rank writes (replaced whole: read by other threads)
        self.last_job = 0  # the last encode job whose vectors were handed to a shard (or needed none)
        self.gone = False  # rank 0 is gone or silent
        self.encodes: queue.Queue = queue.Queue()
        self.calls: queue.Queue = queue.Queue()
        self.encode_s = 0.0
        self.score_s = 0.0
        self.batch_since: float | None = None  # when the batch under way started
        self.stopped = threading.Event()
        for target in (self._listen, self._beat, self._score):
            threading.Thread(target=target, name=f"bench-{target.__name__}", daemon=True).start()

    def usage(self) -> tuple[float, float]:
        return self.encode_s, self.score_s

    def committed(self) -> int:
        """The job id up to which every batch this rank handed to a shard is committed."""
        last = self.last_job  # read before the writers: a batch handed over after this read is not claimed
        pending = [t for cache in self.shards if (t := cache.oldest_pending()) is not None]
        return min([last, *(t - 1 for t in pending)])

    def send(self, kind: int, job_id: int = 0, **fields: Any) -> None:
        """Send to rank 0 with this rank's usage and commits; an object that cannot travel becomes a FAILURE of
        that job (a bug: its traceback), and a lost rank 0 is left to the listener to report."""
        try:
            try:
                self.wire.send(kind, job_id, usage=self.usage(), committed=self.committed(), **fields)
            except Unsendable as e:
                failure = failure_of(e.__cause__ or e)
                self.wire.send(FAILURE, job_id, obj=failure, usage=self.usage(), committed=self.committed())
        except RuntimeError:  # gloo: rank 0 is gone; the listener reports it
            pass

    def fail(self, error: BaseException) -> None:
        """This rank stops on `error`: tell rank 0 (which reports it as this rank's error) and wait until rank 0
        has heard it (it answers STOP), so that the launcher's SIGTERM, once this rank exits, cannot speak first."""
        if self.gone:
            return
        self.send(FAILURE, 0, obj=failure_of(error))
        deadline = time.monotonic() + 10.0
        while time.monotonic() < deadline:
            with contextlib.suppress(queue.Empty):
                if self.encodes.get(timeout=max(0.0, deadline - time.monotonic()))[0] in ("lost", "stop"):
                    return

    def _listen(self) -> None:
        while True:
            try:
                message = self.wire.recv(self.heartbeat)
            except Exception as e:  # noqa: BLE001 - rank 0 gone or silent: stop this rank
                self.gone = True
                self.encodes.put(("lost", str(e).splitlines()[0] if str(e) else type(e).__name__))
                return
            if message.kind == STOP:
                self.encodes.put(("stop", None))
                return
            if message.kind == JOB and message.error is not None:  # a job this rank cannot unpickle: it fails
                self.send(FAILURE, message.job_id, obj=failure_of(message.error))
            elif message.kind == JOB:
                kind, *payload = message.obj
                (self.encodes if kind == "encode" else self.calls).put((message.job_id, payload))

    def _beat(self) -> None:
        """A sign of life every tenth of the bound, unless one batch has run past the whole bound: a rank
        stuck inside its model (a hung GPU) then falls silent, and rank 0 stops the run."""
        while not self.stopped.wait(self.heartbeat / 10):
            since = self.batch_since
            if since is not None and time.monotonic() - since > self.heartbeat:
                continue
            self.send(HEARTBEAT)

    def _score(self) -> None:
        _lower_priority()  # scoring is off the critical path: feeding the accelerator comes first on a busy CPU
        while True:
            job_id, (fn, args) = self.calls.get()
            tick = time.perf_counter()
            try:
                result, kind = fn(*args), OBJECT
            except Exception as e:  # noqa: BLE001 - sent to rank 0, which raises it where the task gathers
                result, kind = failure_of(e), FAILURE
            self.score_s += time.perf_counter() - tick
            self.send(kind, job_id, obj=result)  # a result that cannot travel is sent as that job's failure


def _lower_priority(niceness: int = 10) -> None:
    """Lower this thread's CPU priority (Linux: a thread id is a process id to setpriority); elsewhere a no-op."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), niceness)
