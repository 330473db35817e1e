"""Data-parallel encoding over torch.distributed ranks (`torchrun` / `accelerate launch`).

The lm-evaluation-harness convention: every rank runs the same command and loads the same model; each
encodes a share of the inputs; rank 0 alone scores, writes results and prints. Here the split happens
below MTEB, inside the encoder, where the harness already knows which inputs the cache lacks:

* Rank 0 runs the evaluation. When an encoder must embed inputs the cache lacks, it cuts them (sorted
  longest first) into rounds of one group per rank, deals each round's batches to the ranks
  (`deal`: whole batches, in a snake order, so every rank gets long and short inputs alike and every
  batch holds exactly the inputs it holds in a one-process run), encodes its own share, and gathers
  the others' vectors. Only rank 0 touches the embedding cache: each round is committed to SQLite as
  soon as it is gathered, so no two processes ever write one SQLite file, no shared filesystem is
  needed for the cache, and the vectors arrive where they are scored anyway.
* Every other rank `serve`s: it waits for its share, encodes it, sends the vectors back, until rank 0
  says stop. It never opens a cache, a result file or a task.

A rank that dies takes down the round in flight (one group per rank); every earlier round is in the
cache, so rerunning the same command resumes from there. Families that are cheap or remote opt out
with `distributes = False` (the API family, which gets concurrent requests instead; GSTransform, whose
base encoder is what is distributed, as a `sub_encoders()` job).

The process group is gloo even on GPUs: ranks exchange only Python objects (inputs, and vectors that
are on the CPU anyway), never tensors between devices, so NCCL would add nothing but device pinning.
Each rank encodes on `cuda:LOCAL_RANK` when the device is left to choose.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol

from bench.core import errors
from bench.core.errors import EncodingError

if TYPE_CHECKING:  # numpy and the encoders load with the model, not with `bench --help` (which asks `is_worker`)
    import numpy as np

logger = logging.getLogger(__name__)


class Encoder(Protocol):
    """What a team needs of an encoder (adapters/base.py's BaseEncoder is one): named here, not imported,
    because the encoder base uses this module, and a module pair importing each other is a circle."""

    distributes: bool
    show_progress_bar: bool
    _use_cache: bool
    _progress: Any

    @property
    def fingerprint(self) -> dict[str, Any]: ...

    def sub_encoders(self) -> Sequence[Encoder]: ...

    def encode_share(self, inputs: list[Any], batch_size: int) -> np.ndarray: ...

TIMEOUT_ENV = "INSTRUCT_BENCH_DIST_TIMEOUT"
DEFAULT_TIMEOUT_S = 24 * 3600.0  # rank 0 may score for hours between two encodes while the others wait


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


_WORLD: World | None = None
_TEAM: Team | None = None


def current_world() -> World | None:
    """The world of the running evaluation (set by `session`), None outside one."""
    return _WORLD


@contextlib.contextmanager
def session(world: World) -> Iterator[None]:
    """Join the process group for one evaluation; on rank 0, release the other ranks when it ends."""
    import torch
    import torch.distributed as dist

    global _WORLD, _TEAM
    timeout = timedelta(seconds=float(os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT_S)))
    if not dist.is_initialized():
        dist.init_process_group("gloo", timeout=timeout)
    if torch.cuda.is_available() and torch.cuda.device_count() > world.local_rank:
        torch.cuda.set_device(world.local_rank)
    _WORLD = world
    _TEAM = Team(world) if world.is_main else None
    clean = False
    try:
        yield
        clean = True
    finally:
        if _TEAM is not None:
            _TEAM.release()
        _WORLD, _TEAM = None, None
        with contextlib.suppress(Exception):  # a peer that died must not turn a result into a traceback
            if clean:  # leave together: a rank that tears gloo down while a peer still talks to it can abort the peer
                dist.monitored_barrier(timeout=timedelta(seconds=60))
            dist.destroy_process_group()


def local_device() -> str | None:
    """`cuda:LOCAL_RANK` for a launched run on a machine with CUDA, else None (the usual choice)."""
    if _WORLD is None:
        return None
    import torch

    return f"cuda:{_WORLD.local_rank}" if torch.cuda.is_available() else None


def coordinator_for(encoder: Encoder) -> Team | None:
    """The team that shares `encoder`'s work: only on rank 0, for a family that distributes, and not
    while rank 0 is already encoding its own share of a job (a nested encoder runs locally)."""
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


# ------------------------------------------------------------------------------------------ the split
def deal(n: int, batch_size: int, ranks: int) -> list[list[int]]:
    """Indices of `n` length-sorted inputs for each rank: whole batches of `batch_size`, dealt in a
    snake order (0, 1, ..., r-1, r-1, ..., 0, 0, 1, ...), so shares are disjoint, cover every input,
    and get as many long inputs as short ones; each batch is the one a single process would form."""
    shares: list[list[int]] = [[] for _ in range(ranks)]
    for b, start in enumerate(range(0, n, batch_size)):
        lap, pos = divmod(b, ranks)
        rank = pos if lap % 2 == 0 else ranks - 1 - pos
        shares[rank].extend(range(start, min(n, start + batch_size)))
    return shares


class _ScaledProgress:
    """Rank 0's batches stand for the whole round: each is counted once per rank."""

    def __init__(self, progress: Any, ranks: int) -> None:
        self.progress, self.ranks = progress, ranks

    def batch_done(self, rows: int, call_size: int) -> None:
        self.progress.batch_done(rows * self.ranks, call_size * self.ranks)


class Team:
    """Rank 0's side: send shares, encode its own, gather the rest (see module docstring)."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.busy = False
        self.released = False

    def encode_round(self, encoder: Encoder, inputs: Sequence[Any], batch_size: int) -> tuple[np.ndarray, int]:
        """Vectors of one round's inputs in order, and how many of them other ranks encoded."""
        import torch.distributed as dist

        shares = deal(len(inputs), batch_size, self.world.size)
        key = encoder_key(encoder)
        jobs = [("encode", key, [inputs[i] for i in idx], batch_size) for idx in shares]
        own_error: BaseException | None = None
        own = None
        try:
            dist.scatter_object_list([None], jobs, src=0)
            try:
                own = self._encode_own(encoder, jobs[0][2], batch_size)
            except Exception as e:  # noqa: BLE001 - still collect the round, then raise it
                own_error = e
            gathered: list[Any] = [None] * self.world.size
            dist.gather_object(None, gathered, dst=0)
        except RuntimeError as e:  # gloo: a peer closed the connection (it died or was killed)
            raise _peer_lost(e) from e
        if own_error is not None:
            raise own_error
        return _assemble(len(inputs), shares, [("ok", own), *gathered[1:]]), sum(len(s) for s in shares[1:])

    def _encode_own(self, encoder: Encoder, inputs: list[Any], batch_size: int) -> np.ndarray | None:
        if not inputs:
            return None
        progress = encoder._progress
        self.busy = True
        try:
            if progress is not None:
                encoder._progress = _ScaledProgress(progress, self.world.size)
            return encoder.encode_share(inputs, batch_size)
        finally:
            encoder._progress = progress
            self.busy = False

    def release(self) -> None:
        """Tell every other rank to stop (once); quiet if they are already gone."""
        if self.released:
            return
        self.released = True
        import torch.distributed as dist

        try:
            dist.scatter_object_list([None], [("stop", None, None, None)] * self.world.size, src=0)
        except RuntimeError as e:
            logger.debug("could not release the other ranks: %s", e)


def _assemble(n: int, shares: list[list[int]], results: list[Any]) -> np.ndarray:
    import numpy as np

    out: np.ndarray | None = None
    for rank, (idx, result) in enumerate(zip(shares, results, strict=True)):
        if result[0] == "error":
            _, kind, message = result
            cls = getattr(errors, kind, None)
            if isinstance(cls, type) and issubclass(cls, errors.BenchError):
                raise cls(f"rank {rank}: {message}")
            # Not an expected error: a bug, which keeps the other rank's traceback (exit 1, not an error line).
            raise RuntimeError(f"rank {rank} failed while encoding its share:\n{message}")
        vectors = result[1]
        if not idx:
            continue
        if vectors is None or len(vectors) != len(idx):
            raise EncodingError(f"rank {rank} returned {0 if vectors is None else len(vectors)} vectors for "
                                f"{len(idx)} inputs.")
        if out is None:
            out = np.empty((n, vectors.shape[1]), dtype=np.float32)
        out[idx] = vectors
    assert out is not None
    return out


def _peer_lost(error: Exception) -> EncodingError:
    return EncodingError(
        f"another rank stopped while encoding ({error}). Every round encoded before is in the embedding "
        "cache: rerun the same command to resume."
    )


# ------------------------------------------------------------------------------------------ other ranks
def serve(*models: Encoder) -> int:
    """Encode the shares rank 0 sends for `models` (and the encoders they hold) until it says stop;
    return how many inputs this rank encoded."""
    import torch.distributed as dist

    encoders = {encoder_key(e): e for model in models for e in all_encoders(model)}
    for e in encoders.values():
        e._use_cache = False  # rank 0 is the cache's only writer
        e.show_progress_bar = False
    done = 0
    while True:
        box: list[Any] = [None]
        dist.scatter_object_list(box, None, src=0)
        command, key, inputs, batch_size = box[0]
        if command == "stop":
            return done
        tick = time.perf_counter()
        try:
            vectors = encoders[key].encode_share(inputs, batch_size) if inputs else None
            result: tuple[Any, ...] = ("ok", vectors)
            done += len(inputs)
        except errors.BenchError as e:
            result = ("error", type(e).__name__, str(e))
        except Exception as e:  # noqa: BLE001 - a bug here: its traceback goes to rank 0, which raises it as one
            result = ("error", "", "".join(traceback.format_exception(e)).strip())
        logger.debug("rank share of %d inputs in %.2fs", len(inputs), time.perf_counter() - tick)
        dist.gather_object(result, None, dst=0)
