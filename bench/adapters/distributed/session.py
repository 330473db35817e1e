"""One evaluation's place in a launched run: joining the process group (`session`), the state every rank
keeps while it runs (this rank's world, rank 0's `Team`, another rank's `Link`), and the entry points the
encoder and the runner call: `coordinator_for`, `local_device`, `usage`, and `serve` (what a rank other
than 0 does)."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from bench.adapters.distributed.faults import failure_of
from bench.adapters.distributed.link import Link
from bench.adapters.distributed.planning import Encoder, all_encoders, encoder_key
from bench.adapters.distributed.team import Team
from bench.adapters.distributed.wire import FAILURE, STOP, VECTORS
from bench.adapters.distributed.world import DEFAULT_TIMEOUT_S, TIMEOUT_ENV, World, heartbeat_s
from bench.core import parallel
from bench.core.errors import EncodingError

logger = logging.getLogger(__name__)

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
            message, kind = {"obj": failure_of(e)}, FAILURE
        finally:
            link.batch_since = None
            link.encode_s += time.perf_counter() - tick
        link.send(kind, job_id, **message)
