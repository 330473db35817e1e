"""Data-parallel encoding over torch.distributed ranks (`torchrun` / `accelerate launch`): a pipeline, not rounds.

The lm-evaluation-harness convention: every rank runs the same command and loads the same model; rank 0
alone runs the evaluation, scores, writes results and prints. The split happens below MTEB, inside the
encoder, where the harness already knows which inputs the cache lacks. What keeps every rank busy:

* **A queue of batches, pulled ahead.** When an encoder must embed inputs the cache lacks, rank 0 sorts
  them longest first and cuts them into exactly the batches a one-process run forms (`plan_jobs`), and
  queues them. Rank 0 encodes from the front of the queue itself; a sender thread per other rank keeps
  `DEPTH` batches in that rank's hands, so a rank goes from one batch to the next without a round trip,
  never waits for another rank, for rank 0's checks or for the cache, and a slow rank simply takes
  fewer batches. Every batch is the one a single process would form, so vectors equal its vectors.
* **Vectors travel as tensors** (point-to-point send/recv), in bfloat16 or float16 when every value
  survives the round trip exactly (a model run in bf16: half the bytes, the same numbers), else float32.
* **Each rank checks and commits what it encodes.** A rank checks its batch (NaN/inf) and hands it to the
  writer thread of its own shard of the cache (`<cache>.shards/rank<R>.sqlite`, `bench.adapters.cache`)
  before sending it; rank 0 only receives (the task's scoring needs every vector) and commits its own
  batches to the main file. Rank 0 reads main + shards as one cache. Until a rank's messages say its shard
  has committed a batch (`committed`, in every message), rank 0 holds that batch's vectors in memory
  (`EmbeddingCache.hold`): lookups see them, and if that rank fails, rank 0 commits them to the main file
  before it reports the failure, so everything that arrived is in the cache. Ranks on another machine than
  rank 0 (no shared disk assumed) send their batches uncommitted, and rank 0 commits them as before.
* **Scoring off the critical path.** A task's scoring jobs (`bench.core.parallel`) go to the other
  ranks' scoring threads, which run beside their encoding (`Team.submit`).
* **Failures end the run with one error line**, not a 24-hour wait: every rank hears from rank 0, and
  rank 0 from every rank, at least every `HEARTBEAT_S / 10` seconds; a rank silent for `HEARTBEAT_S`
  (`INSTRUCT_BENCH_HEARTBEAT_S`, default 300) is hung. A rank that dies closes its connection, and
  torchrun then SIGTERMs the rest: rank 0 turns either into an `EncodingError` naming the rank and
  saying that a rerun resumes from the cache. A rank's own exception travels to rank 0 as itself: a job
  that cannot be pickled, unpickled or run fails that job (raised where the task waits for it), and an
  exception that ends a rank (its model load, its loop) is sent to rank 0 before the rank exits.

Families that are cheap or remote opt out with `distributes = False` (the API family, which gets
concurrent requests instead; GSTransform, whose base encoder is what is distributed, as a `sub_encoders()`
job). No two processes of a run write one SQLite file (rank 0 the main file, rank R its shard), and no
shared filesystem is needed. The process group is gloo even on GPUs: vectors are on the CPU after the forward
pass anyway (they go to the cache), so NCCL would add device pinning and nothing else.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import queue
import signal
import socket
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol

from bench.core import errors, parallel
from bench.core.errors import EncodingError

if TYPE_CHECKING:  # numpy and torch load with the model, not with `bench --help` (which asks `is_worker`)
    import numpy as np

logger = logging.getLogger(__name__)


class Encoder(Protocol):
    """What a team needs of an encoder (bench/adapters/base.py's BaseEncoder is one): named here, not imported,
    because the encoder base uses this module, and a module pair importing each other is a circle."""

    show_progress_bar: bool | None
    batch_size: int
    max_tokens: int | None
    _progress: Any

    @property
    def distributes(self) -> bool: ...  # a class variable, or a property where it depends on the model

    @property
    def fingerprint(self) -> dict[str, Any]: ...

    def sub_encoders(self) -> Sequence[Encoder]: ...

    def group_batches(self) -> int: ...

    def token_lengths(self, inputs: Sequence[Any]) -> list[int]: ...

    def encode_share(self, inputs: list[Any], batch_size: int) -> np.ndarray: ...

    def encode_for_team(self, inputs: list[Any], batch_size: int, tag: int) -> tuple[np.ndarray, Any]: ...

    def use_cache_shard(self, rank: int | None) -> None: ...


TIMEOUT_ENV = "INSTRUCT_BENCH_DIST_TIMEOUT"
DEFAULT_TIMEOUT_S = 24 * 3600.0  # gloo's own bound (setup, the final barrier); liveness is the heartbeat's job
HEARTBEAT_ENV = "INSTRUCT_BENCH_HEARTBEAT_S"
DEFAULT_HEARTBEAT_S = 300.0
DEPTH = 2  # batches held by each other rank: one encoding, the next one already there
BACKLOG = 4  # scoring jobs queued per other rank before the caller runs one itself


@dataclass(frozen=True)
class World:
    """This process's place among the ranks, from the variables torchrun and accelerate set."""

    rank: int
    size: int
    local_rank: int

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def world_from_env(environ: dict[str, str] | None = None) -> World | None:
    """The launcher's world, or None for a plain one-process run (no WORLD_SIZE, or a size of 1)."""
    env = os.environ if environ is None else environ
    try:
        size = int(env.get("WORLD_SIZE", "1"))
        rank = int(env.get("RANK", "0"))
        local_rank = int(env.get("LOCAL_RANK", str(rank)))
    except ValueError:
        return None
    return World(rank, size, local_rank) if size > 1 else None


def is_worker() -> bool:
    """True on every rank but 0 of a launched run: such a process prints and writes nothing."""
    world = world_from_env()
    return world is not None and not world.is_main


def heartbeat_s() -> float:
    """Seconds of silence after which a rank counts as hung (`INSTRUCT_BENCH_HEARTBEAT_S`)."""
    value = os.environ.get(HEARTBEAT_ENV, "")
    try:
        return max(1.0, float(value)) if value else DEFAULT_HEARTBEAT_S
    except ValueError:
        raise errors.ConfigError(f"{HEARTBEAT_ENV}={value!r} is not a number of seconds.") from None


_WORLD: World | None = None
_TEAM: Team | None = None
_LINK: Link | None = None


def current_world() -> World | None:
    """The world of the running evaluation (set by `session`), None outside one."""
    return _WORLD


def usage() -> list[dict[str, float]] | None:
    """Per rank, seconds spent encoding and scoring so far (rank 0's view), None outside a launched run."""
    return _TEAM.usage() if _TEAM is not None else None


@contextlib.contextmanager
def session(world: World) -> Iterator[None]:
    """Join the process group and start this rank's side of the pipeline for one evaluation; on rank 0,
    SIGTERM (torchrun stopping the ranks) becomes an error, and leaving releases the other ranks."""
    import torch
    import torch.distributed as dist

    global _WORLD, _TEAM, _LINK
    timeout = timedelta(seconds=float(os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT_S)))
    if not dist.is_initialized():
        dist.init_process_group("gloo", timeout=timeout)
    if torch.cuda.is_available() and torch.cuda.device_count() > world.local_rank:
        torch.cuda.set_device(world.local_rank)
    _WORLD = world
    hosts: list[Any] = [None] * world.size  # a rank on rank 0's machine writes its shard where rank 0 reads it
    dist.all_gather_object(hosts, socket.gethostname())
    beat = heartbeat_s()
    previous = None
    if world.is_main:
        _TEAM = Team(world, beat)
        parallel.set_executor(_TEAM)
        previous = _catch_sigterm()
    else:
        _LINK = Link(beat, shares_disk=hosts[world.rank] == hosts[0])
    clean = False
    try:
        yield
        clean = True
    except BaseException as e:
        if _LINK is not None:  # this rank's own failure: rank 0 reports it as itself, not as "rank N stopped"
            _LINK.fail(e)
        raise
    finally:
        if _TEAM is not None:
            parallel.set_executor(None)
            clean = _TEAM.release() and clean
            if not clean:  # vectors a failed rank had not committed yet go to the main file
                _TEAM.rescue()
            signal.signal(signal.SIGTERM, previous or signal.SIG_DFL)
        _WORLD, _TEAM, _LINK = None, None, None
        if clean:  # leave together: a rank that tears gloo down while a peer still talks to it can abort the peer
            with contextlib.suppress(Exception):
                dist.monitored_barrier(timeout=timedelta(seconds=60))
                dist.destroy_process_group()


def _catch_sigterm() -> Any:
    """On rank 0, turn the launcher's SIGTERM into an error line (torchrun stops every rank when one dies)."""

    def stopped(signum: int, frame: Any) -> None:
        if _TEAM is not None and _TEAM.failure is not None:  # a rank said why it stopped before it exited
            raise _TEAM.failure
        raise EncodingError(
            "the launcher stopped this run (SIGTERM): another rank probably died (see its output above). "
            "Every batch encoded before is in the embedding cache: rerun the same command to resume."
        )

    try:
        return signal.signal(signal.SIGTERM, stopped)
    except ValueError:  # not the main thread (a test's rank): leave signals alone
        return None


def local_device() -> str | None:
    """`cuda:LOCAL_RANK` for a launched run on a machine with CUDA, else None (the usual choice)."""
    if _WORLD is None:
        return None
    import torch

    return f"cuda:{_WORLD.local_rank}" if torch.cuda.is_available() else None


def coordinator_for(encoder: Encoder) -> Team | None:
    """The team that shares `encoder`'s work: only on rank 0, for a family that distributes, and not
    while rank 0 is already encoding a batch of a job (a nested encoder runs locally)."""
    if _TEAM is None or _TEAM.busy or not encoder.distributes:
        return None
    return _TEAM


def encoder_key(encoder: Encoder) -> str:
    """How ranks name one encoder: its cache fingerprint, identical on every rank."""
    from bench.core.fileio import sha256_json

    return sha256_json(encoder.fingerprint)


def all_encoders(encoder: Encoder) -> Iterator[Encoder]:
    """`encoder` and, recursively, the encoders it holds (GSTransform's base)."""
    yield encoder
    for sub in encoder.sub_encoders():
        yield from all_encoders(sub)


def plan_jobs(encoder: Encoder, inputs: Sequence[Any], batch_size: int) -> list[tuple[int, int]]:
    """(start, stop) of each batch of length-sorted `inputs`: the batches a one-process run forms (groups
    of `group_batches` batches, each cut by `plan_batches` under the token budget), one job each."""
    from bench.adapters.batching import plan_batches

    span = batch_size * encoder.group_batches()
    jobs = []
    for group in range(0, len(inputs), span):
        part = inputs[group : group + span]
        lengths = encoder.token_lengths(part) if encoder.max_tokens else [0] * len(part)
        start = group
        for size in plan_batches(lengths, batch_size, encoder.max_tokens):
            jobs.append((start, start + size))
            start += size
    return jobs


# ------------------------------------------------------------------------------------------ the wire
_HEADER = 10  # int64s: kind, job id, rows, dim, dtype code, pickle parts, encode µs, score µs, committed, flags
JOB, VECTORS, OBJECT, FAILURE, HEARTBEAT, STOP = range(1, 7)
_DTYPES = ("float32", "bfloat16", "float16")


@dataclass
class Message:
    kind: int
    job_id: int = 0
    obj: Any = None
    vectors: Any = None
    encode_s: float = 0.0
    score_s: float = 0.0
    committed: int = 0  # the sender's shard has committed every batch of a job id up to this one
    in_shard: bool = False  # these vectors are in the sender's shard, or will be once `committed` says so
    error: BaseException | None = None  # the payload could not be unpickled here (or was never sent)


class Unsendable(Exception):
    """A message could not be made (pickling its object failed): nothing was sent; `__cause__` says why."""


class Wire:
    """Messages to and from one peer: an int64 header, then a tensor payload (vectors, or pickled bytes).
    Sends hold a lock, so a heartbeat never lands between another message's header and payload."""

    def __init__(self, peer: int) -> None:
        self.peer = peer
        self.lock = threading.Lock()

    def send(
        self,
        kind: int,
        job_id: int = 0,
        *,
        obj: Any = None,
        vectors: Any = None,
        usage: tuple[float, float] = (0.0, 0.0),
        committed: int = 0,
        in_shard: bool = False,
    ) -> None:
        """Send one message; `Unsendable` (nothing sent) when its vectors or object cannot be made into bytes."""
        import torch
        import torch.distributed as dist

        header = torch.zeros(_HEADER, dtype=torch.int64)
        header[0], header[1] = kind, job_id
        header[6], header[7] = round(usage[0] * 1e6), round(usage[1] * 1e6)
        header[8], header[9] = committed, int(in_shard)
        payload = None
        parts: list[Any] = []
        try:
            if vectors is not None:
                payload = compact(torch.from_numpy(vectors))
                header[2], header[3] = payload.shape[0], payload.shape[1]
                header[4] = _DTYPES.index(str(payload.dtype)[6:])
            if obj is not None:  # pickled, with arrays out of band: a view's vectors go as they lie, uncopied
                parts = _pickled(obj)
                header[5] = len(parts)
        except Exception as e:
            raise Unsendable(f"{type(e).__name__}: {e}") from e
        with self.lock:
            dist.send(header, self.peer)
            if payload is not None and payload.numel():
                dist.send(payload.contiguous(), self.peer)
            if parts:
                dist.send(torch.tensor([p.numel() for p in parts], dtype=torch.int64), self.peer)
                for part in parts:
                    if part.numel():
                        dist.send(part, self.peer)

    def recv(self, timeout_s: float) -> Message:
        """The next message; RuntimeError when the peer is gone or silent for `timeout_s`."""
        import torch
        import torch.distributed as dist

        limit = timedelta(seconds=timeout_s)

        def receive(tensor: torch.Tensor) -> None:
            work = dist.irecv(tensor, src=self.peer)
            assert work is not None  # None only on a rank outside the group, and the default group holds them all
            work.wait(limit)

        header = torch.empty(_HEADER, dtype=torch.int64)
        receive(header)
        kind, job_id, rows, dim, code, nbytes, enc_us, score_us, committed, flags = (int(v) for v in header)
        message = Message(kind, job_id, encode_s=enc_us / 1e6, score_s=score_us / 1e6, committed=committed)
        message.in_shard = bool(flags & 1)
        if kind == VECTORS:
            tensor = torch.empty((rows, dim), dtype=getattr(torch, _DTYPES[code]))
            if tensor.numel():
                receive(tensor)
            message.vectors = tensor.float().numpy()
        elif nbytes:  # parts of a pickle: the stream, then its out-of-band buffers
            sizes = torch.empty(nbytes, dtype=torch.int64)
            receive(sizes)
            parts = [torch.empty(int(n), dtype=torch.uint8) for n in sizes]
            for part in parts:
                if part.numel():
                    receive(part)
            try:  # from a rank of this run, running this code; what fails here fails that job, not the link
                message.obj = pickle.loads(parts[0].numpy().tobytes(), buffers=[p.numpy() for p in parts[1:]])
            except Exception as e:  # noqa: BLE001 - e.g. a class this process cannot import
                message.error = e
        return message


def _pickled(obj: Any) -> list[Any]:
    """`obj` as uint8 tensors: the pickle stream, then each out-of-band buffer (protocol 5), zero-copy."""
    import warnings

    import torch

    buffers: list[pickle.PickleBuffer] = []
    stream = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    with warnings.catch_warnings():  # a read-only buffer is only read (sent)
        warnings.simplefilter("ignore", UserWarning)
        return [
            torch.frombuffer(bytearray(stream), dtype=torch.uint8),
            *(
                torch.frombuffer(b.raw(), dtype=torch.uint8) if b.raw().nbytes else torch.empty(0, dtype=torch.uint8)
                for b in buffers
            ),
        ]


def compact(tensor: Any) -> Any:
    """`tensor` as bfloat16 or float16 if that holds every value exactly (a model run in half precision),
    else as it is: the receiver's float32 copy is then bit-identical, at half the bytes."""
    import torch

    if tensor.dtype != torch.float32 or tensor.numel() == 0:
        return tensor
    for half in (torch.bfloat16, torch.float16):
        narrow = tensor.to(half)
        if torch.equal(narrow.float(), tensor):
            return narrow
    return tensor


def _failure_of(error: BaseException) -> tuple[str, str]:
    """What a rank sends back for a failed job: a harness error's kind and message, else the traceback."""
    if isinstance(error, errors.BenchError):
        return type(error).__name__, str(error)
    return "", "".join(traceback.format_exception(error)).strip()


def _failure_error(rank: int, what: str, failure: tuple[str, str]) -> Exception:
    """The exception a failure another rank reported becomes here: a harness error as its own kind (one error
    line), anything else a RuntimeError holding that rank's traceback (a bug: exit 1, not an error line)."""
    kind, message = failure
    cls = getattr(errors, kind, None) if kind else None
    if isinstance(cls, type) and issubclass(cls, errors.BenchError):
        return cls(f"rank {rank}: {message}")
    return RuntimeError(f"rank {rank} failed while {what}:\n{message}")


# ------------------------------------------------------------------------------------------ rank 0
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
    held: list[tuple[int, Any, int]] = field(default_factory=list)  # (job id, cache, token) not yet committed


class Landing:
    """How a batch another rank encoded reaches rank 0's encoder (`keep`): checked there; `committed` when that
    rank commits it to its shard, and then `hold` keeps the vectors served here until the shard says so."""

    def __init__(self, team: Team, peer: _Peer, job_id: int, committed: bool) -> None:
        self.team, self.peer, self.job_id, self.committed = team, peer, job_id, committed

    def hold(self, cache: Any, keys: list[str], vectors: np.ndarray) -> None:
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
        inputs: Sequence[Any],
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
                raise _failure_error(rank, "encoding its share", message.obj)
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
                    self.failure = _failure_error(peer.rank, "running", message.obj or ("", "(no details)"))
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
                job.future.set_exception(_failure_error(peer.rank, "scoring", message.obj))
            else:
                job.future.set_result(message.obj)

    def _lost(self, peer: _Peer, error: BaseException) -> None:
        silent = "Timed out" in str(error) or "timeout" in str(error).lower()
        why = (
            f"rank {peer.rank} sent nothing for {self.heartbeat:.0f} s (no heartbeat): it is hung"
            if silent
            else f"rank {peer.rank} stopped ({_reason(error)})"
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


def _reason(error: BaseException) -> str:
    """gloo's message without its source location and advice: 'Connection reset by peer'."""
    text = (str(error).splitlines() or [type(error).__name__])[0]
    text = text.rsplit("] ", 1)[-1].split(". This is typically")[0]
    return text[:160] or type(error).__name__


# ------------------------------------------------------------------------------------------ other ranks
class Link:
    """An other rank's side: a receiver thread (jobs from rank 0), a heartbeat thread and a scoring thread;
    `serve` encodes on the main thread. Every message says up to which job this rank's shards have committed
    its batches (`committed`), so rank 0 can stop holding them."""

    def __init__(self, heartbeat: float, shares_disk: bool = True) -> None:
        self.heartbeat = heartbeat
        self.shares_disk = shares_disk  # on rank 0's machine: commit to a shard beside rank 0's cache
        self.wire = Wire(0)
        self.shards: tuple[Any, ...] = ()  # the caches this rank writes (replaced whole: read by other threads)
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
                failure = _failure_of(e.__cause__ or e)
                self.wire.send(FAILURE, job_id, obj=failure, usage=self.usage(), committed=self.committed())
        except RuntimeError:  # gloo: rank 0 is gone; the listener reports it
            pass

    def fail(self, error: BaseException) -> None:
        """This rank stops on `error`: tell rank 0 (which reports it as this rank's error) and wait until rank 0
        has heard it (it answers STOP), so that the launcher's SIGTERM, once this rank exits, cannot speak first."""
        if self.gone:
            return
        self.send(FAILURE, 0, obj=_failure_of(error))
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
                self.send(FAILURE, message.job_id, obj=_failure_of(message.error))
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
                result, kind = _failure_of(e), FAILURE
            self.score_s += time.perf_counter() - tick
            self.send(kind, job_id, obj=result)  # a result that cannot travel is sent as that job's failure


def _lower_priority(niceness: int = 10) -> None:
    """Lower this thread's CPU priority (Linux: a thread id is a process id to setpriority); elsewhere a no-op."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), niceness)


def serve(*models: Encoder) -> int:
    """Encode the batches rank 0 sends for `models` (and the encoders they hold) until it says stop, committing
    them to this rank's shard of each cache (on rank 0's machine, with the cache on); return how many inputs
    this rank encoded."""
    link, world = _LINK, _WORLD
    assert link is not None and world is not None, "serve() runs inside session() on a rank other than 0"
    encoders = {encoder_key(e): e for model in models for e in all_encoders(model)}
    for e in encoders.values():
        e.use_cache_shard(world.rank if link.shares_disk else None)
        e.show_progress_bar = False
    done = 0
    while True:
        job_id, payload = link.encodes.get()
        if job_id == "stop":
            link.stopped.set()
            for cache in link.shards:  # every batch in the shard before STOP says so (`committed`)
                try:
                    cache.flush()
                except Exception as e:  # noqa: BLE001 - rank 0 commits what the shard lacks
                    logger.warning("Embedding cache shard %s: the last vectors were not stored (%s).", cache.path, e)
            link.send(STOP)
            return done
        if job_id == "lost":
            raise EncodingError(f"rank 0 stopped or went silent ({payload}); this rank stops too.")
        tick = time.perf_counter()
        link.batch_since = time.monotonic()
        try:
            key, inputs, batch_size = payload
            vectors, shard = encoders[key].encode_for_team(inputs, batch_size, job_id)
            if shard is not None and shard not in link.shards:
                link.shards = (*link.shards, shard)
            link.last_job = job_id
            message: dict[str, Any] = {"vectors": vectors, "in_shard": shard is not None}
            kind, done = VECTORS, done + len(inputs)
        except Exception as e:  # noqa: BLE001 - rank 0 raises it: a harness error as itself, a bug with its traceback
            message, kind = {"obj": _failure_of(e)}, FAILURE
        finally:
            link.batch_since = None
            link.encode_s += time.perf_counter() - tick
        link.send(kind, job_id, **message)
