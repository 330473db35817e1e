"""Rank 0's side of the pipeline (`Team`): the queue of batches, a sender and a receiver thread per other
rank, the scoring jobs it hands out (bench.core.parallel's executor), and the hand-off of another rank's
vectors to rank 0's cache (`Landing`: held in memory until that rank's shard has committed them).
See bench/adapters/distributed/__init__.py for the whole design."""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bench.adapters.distributed.faults import failure_error, gloo_reason
from bench.adapters.distributed.planning import Encoder, encoder_key, plan_jobs
from bench.adapters.distributed.wire import FAILURE, HEARTBEAT, JOB, OBJECT, STOP, VECTORS, Message, Unsendable, Wire
from bench.adapters.distributed.world import HEARTBEAT_ENV, World
from bench.core.errors import EncodingError

if TYPE_CHECKING:
    from bench.adapters.cache import EmbeddingCache
    from bench.adapters.model_input import ModelInput

if TYPE_CHECKING:  # numpy and torch load with the model, not with `bench --help` (which asks `is_worker`)
    import numpy as np

DEPTH = 2  # batches held by each other rank: one encoding, the next one already there
BACKLOG = 4  # scoring jobs queued per other rank before the caller runs one itself


@dataclass
class _Job:
    id: int
    kind: str  # "encode" or "call"
    payload: Any  # encode: (encoder key, inputs, batch size); call: (fn, args)
    span: tuple[int, int] = (0, 0)
    done: queue.Queue | None = None  # encode: where the vectors go
    future: Future | None = None  # call: where the result goes


@dataclass
class _Peer:
    """Rank 0's view of another rank."""

    rank: int
    wire: Wire
    jobs: dict[int, _Job] = field(default_factory=dict)  # sent, not yet answered
    calls: int = 0  # of which scoring calls
    encode_s: float = 0.0
    score_s: float = 0.0
    stopped: bool = False
    committed: int = 0  # its shard has committed its batches up to this job id
    held: list[tuple[int, EmbeddingCache, int]] = field(
        default_factory=list
    )  # (job id, cache, token) not yet committed


class Landing:
    """How a batch another rank encoded reaches rank 0's encoder (`keep`): checked there; `committed` when that
    rank commits it to its shard, and then `hold` keeps the vectors served here until the shard says so."""

    def __init__(self, team: Team, peer: _Peer, job_id: int, committed: bool) -> None:
        self.team, self.peer, self.job_id, self.committed = team, peer, job_id, committed

    def hold(self, cache: EmbeddingCache, keys: list[str], vectors: np.ndarray) -> None:
        with self.team.cv:
            if self.job_id > self.peer.committed:
                self.peer.held.append((self.job_id, cache, cache.hold(keys, vectors)))


class Team:
    """Rank 0's side (see module docstring): the queues, a sender and a receiver thread per other rank."""

    def __init__(self, world: World, heartbeat: float, depth: int = DEPTH) -> None:
        self.world, self.heartbeat, self.depth = world, heartbeat, depth
        self.busy = False
        self.released = False
        self.failure: Exception | None = None
        self.cv = threading.Condition()
        self.encodes: deque[_Job] = deque()
        self.calls: deque[_Job] = deque()
        self.own = {"encode_s": 0.0, "score_s": 0.0}
        self._ids = iter(range(1, 1 << 62))
        self.peers = {r: _Peer(r, Wire(r)) for r in range(1, world.size)}
        self.threads = []
        for peer in self.peers.values():
            for target in (self._feed, self._listen):
                thread = threading.Thread(
                    target=target, args=(peer,), name=f"bench-rank{peer.rank}-{target.__name__}", daemon=True
                )
                thread.start()
                self.threads.append(thread)

    # ---------------------------------------------------------------- encoding
    def encode(
        self,
        encoder: Encoder,
        inputs: Sequence[ModelInput],
        batch_size: int,
        keep: Callable[[int, int, np.ndarray, Landing | None], None],
    ) -> int:
        """Encode length-sorted `inputs` over every rank; `keep(start, stop, vectors, landing)` gets each batch on
        this thread as it arrives (in any order): landing None for a batch encoded here, else how another rank's
        batch came (`Landing`). Returns how many inputs other ranks encoded."""
        key = encoder_key(encoder)
        done: queue.Queue = queue.Queue()
        jobs = [
            _Job(next(self._ids), "encode", (key, list(inputs[a:b]), batch_size), (a, b), done)
            for a, b in plan_jobs(encoder, inputs, batch_size)
        ]
        with self.cv:
            self._check()
            self.encodes.extend(jobs)
            self.cv.notify_all()
        remaining, elsewhere = len(jobs), 0

        def take(job: _Job, rank: int, message: Message) -> None:
            nonlocal remaining, elsewhere
            if message.error is not None:  # the job never left (it could not be pickled here)
                raise message.error
            if message.kind == FAILURE:
                raise failure_error(rank, "encoding its share", message.obj)
            keep(*job.span, message.vectors, Landing(self, self.peers[rank], job.id, message.in_shard))
            remaining -= 1
            elsewhere += job.span[1] - job.span[0]

        try:
            while remaining:
                while not done.empty():  # hand over what arrived (checks, cache writer) before the next batch
                    take(*done.get_nowait())
                if not remaining:
                    break
                with self.cv:
                    self._check()
                    job = self.encodes.popleft() if self.encodes and self.encodes[0].done is done else None
                if job is not None:
                    keep(*job.span, self._encode_own(encoder, job), None)
                    remaining -= 1
                    continue
                with contextlib.suppress(queue.Empty):
                    take(*done.get(timeout=0.5))
        except BaseException:
            self.rescue()  # what other ranks sent and have not committed goes to the main file before the error
            raise
        finally:
            with self.cv:  # a failed call takes its unsent batches with it
                self.encodes = deque(j for j in self.encodes if j.done is not done)
        return elsewhere

    def _encode_own(self, encoder: Encoder, job: _Job) -> np.ndarray:
        progress, self.busy = encoder._progress, True
        encoder._progress = None  # the caller counts whole batches
        tick = time.perf_counter()
        try:
            return encoder.encode_share(job.payload[1], job.payload[2])
        finally:
            self.own["encode_s"] += time.perf_counter() - tick
            encoder._progress, self.busy = progress, False

    def _check(self) -> None:
        if self.failure is not None:
            raise self.failure

    def _settle(self, peer: _Peer, committed: int) -> None:
        """`peer`'s shard has committed its batches up to job `committed`: stop holding them (under `cv`)."""
        if committed <= peer.committed:
            return
        peer.committed = committed
        still = []
        for job_id, cache, token in peer.held:
            if job_id <= committed:
                cache.settle(token)
            else:
                still.append((job_id, cache, token))
        peer.held = still

    def rescue(self) -> None:
        """Commit to the main file every vector another rank sent and has not committed (it failed, or the run
        stops): each cache's writer takes them, and the encoder's flush or the process's exit commits them."""
        with self.cv:
            caches = {id(c): c for p in self.peers.values() for _, c, _ in p.held}
            for peer in self.peers.values():
                peer.held = []
        for cache in caches.values():
            with contextlib.suppress(Exception):  # a full disk here must not hide the failure being reported
                cache.keep_held()

    # ---------------------------------------------------------------- scoring (bench.core.parallel)
    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        """Queue a scoring job for the other ranks; past `BACKLOG` queued jobs per rank, run the oldest here
        (which bounds memory and paces the caller)."""
        future: Future = Future()
        job = _Job(next(self._ids), "call", (fn, args), future=future)
        with self.cv:
            self._check()
            self.calls.append(job)
            self.cv.notify_all()
            backlog = self.calls.popleft() if len(self.calls) > BACKLOG * len(self.peers) else None
        if backlog is not None:
            self._run_here(backlog)
        return future

    def gather(self, futures: Sequence[Future]) -> list[Any]:
        """Results in order; a job still queued runs here rather than wait for a rank."""
        for future in futures:
            with self.cv:
                queued = next((j for j in self.calls if j.future is future), None)
                if queued is not None:
                    self.calls.remove(queued)
            if queued is not None:
                self._run_here(queued)
            while not future.done():
                with self.cv:
                    self._check()
                    self.cv.wait(0.5)
        return [f.result() for f in futures]

    def discard(self, futures: Sequence[Future]) -> None:
        """Drop (cancel) the jobs of `futures` no rank has taken (a task that failed before it gathers), so
        no other rank scores for a task that is gone; a job a rank holds finishes there, unread."""
        drop = {id(f) for f in futures}
        with self.cv:
            dropped = [j for j in self.calls if id(j.future) in drop]
            self.calls = deque(j for j in self.calls if id(j.future) not in drop)
        for job in dropped:
            assert job.future is not None
            job.future.cancel()

    def _run_here(self, job: _Job) -> None:
        fn, args = job.payload
        assert job.future is not None  # a "call" job, which carries its future
        tick = time.perf_counter()
        try:
            job.future.set_result(fn(*args))
        except Exception as e:  # noqa: BLE001 - kept in the future; `gather` raises it
            job.future.set_exception(e)
        finally:
            self.own["score_s"] += time.perf_counter() - tick

    # ---------------------------------------------------------------- threads, one pair per other rank
    def _next_for(self, peer: _Peer) -> _Job | None:
        if peer.calls == 0 and self.calls:
            return self.calls.popleft()
        if len(peer.jobs) - peer.calls < self.depth and self.encodes:
            return self.encodes.popleft()
        return None

    def _feed(self, peer: _Peer) -> None:
        """Keep `peer` supplied: up to `depth` batches and one scoring job in its hands; else a heartbeat."""
        interval = self.heartbeat / 10
        while True:
            with self.cv:
                deadline = time.monotonic() + interval
                job = None
                while self.failure is None and not self.released:
                    job = self._next_for(peer)
                    if job is not None or time.monotonic() >= deadline:
                        break
                    self.cv.wait(max(0.0, deadline - time.monotonic()))
                if self.failure is not None:
                    return
                if job is not None:
                    peer.jobs[job.id] = job
                    peer.calls += job.kind == "call"
                stop = self.released and job is None
            try:
                if stop:
                    peer.wire.send(STOP)
                    return
                if job is None:
                    peer.wire.send(HEARTBEAT)
                else:
                    peer.wire.send(JOB, job.id, obj=(job.kind, *job.payload))
            except Unsendable as e:  # the job's own fault (an unpicklable argument): that job fails, as itself
                if job is not None:
                    self._fail_job(peer, job, e.__cause__ or e)
            except Exception as e:  # noqa: BLE001 - gloo reports a lost peer as RuntimeError
                self._lost(peer, e)
                return

    def _fail_job(self, peer: _Peer, job: _Job, error: BaseException) -> None:
        """`job` will get no answer from `peer`: raise `error` where the job is waited for."""
        with self.cv:
            peer.jobs.pop(job.id, None)
            peer.calls -= job.kind == "call"
            self.cv.notify_all()
        if job.future is not None:
            job.future.set_exception(error)
        elif job.done is not None:
            job.done.put((job, peer.rank, Message(FAILURE, job.id, error=error)))

    def _listen(self, peer: _Peer) -> None:
        """Take what `peer` sends: vectors and results to their job, heartbeats as signs of life."""
        while True:
            try:
                message = peer.wire.recv(self.heartbeat)
            except Exception as e:  # noqa: BLE001 - gloo reports a lost or silent peer as RuntimeError
                if not peer.stopped:
                    self._lost(peer, e)
                return
            with self.cv:
                peer.encode_s, peer.score_s = message.encode_s, message.score_s
                self._settle(peer, message.committed)
                job = peer.jobs.pop(message.job_id, None) if message.kind in (VECTORS, OBJECT, FAILURE) else None
                if job is not None and job.kind == "call":
                    peer.calls -= 1
                if message.kind == STOP:
                    peer.stopped = True
                rank_failed = message.kind == FAILURE and message.job_id == 0  # the rank itself, not a job
                if rank_failed and self.failure is None:
                    self.failure = failure_error(peer.rank, "running", message.obj or ("", "(no details)"))
                self.cv.notify_all()
            if rank_failed:  # heard: it may exit now (the launcher's SIGTERM then raises this failure here)
                with contextlib.suppress(Exception):
                    peer.wire.send(STOP)
                continue
            if message.kind == STOP:
                return
            if job is None:
                continue
            if job.kind == "encode":
                assert job.done is not None  # an "encode" job carries its queue, a "call" job its future
                job.done.put((job, peer.rank, message))
                continue
            assert job.future is not None
            if message.error is not None:  # a result this process cannot unpickle
                job.future.set_exception(message.error)
            elif message.kind == FAILURE:
                job.future.set_exception(failure_error(peer.rank, "scoring", message.obj))
            else:
                job.future.set_result(message.obj)

    def _lost(self, peer: _Peer, error: BaseException) -> None:
        silent = "Timed out" in str(error) or "timeout" in str(error).lower()
        why = (
            f"rank {peer.rank} sent nothing for {self.heartbeat:.0f} s (no heartbeat): it is hung"
            if silent
            else f"rank {peer.rank} stopped ({gloo_reason(error)})"
        )
        with self.cv:
            if self.failure is None and not self.released:
                self.failure = EncodingError(
                    f"{why}. Every batch encoded before is in the embedding cache: rerun the same command to "
                    f"resume (set {HEARTBEAT_ENV} to change how long a silent rank is waited for)."
                )
            self.cv.notify_all()

    def usage(self) -> list[dict[str, float]]:
        """Per rank, cumulative seconds encoding and scoring (other ranks: as of their last message)."""
        with self.cv:
            rows = [{"rank": 0, **self.own}]
            rows += [{"rank": p.rank, "encode_s": p.encode_s, "score_s": p.score_s} for p in self.peers.values()]
        return [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()} for row in rows]

    def release(self) -> bool:
        """Tell every other rank to stop (once) and wait for them to say so; True if they all did."""
        with self.cv:
            if self.released:
                return True
            self.released = True
            failed = self.failure is not None
            self.cv.notify_all()
        if failed:
            return False
        deadline = time.monotonic() + min(60.0, self.heartbeat)
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        self.rescue()  # a rank flushes its shard before it says STOP, so normally nothing is left held
        return all(p.stopped for p in self.peers.values())
