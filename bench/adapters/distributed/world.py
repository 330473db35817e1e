"""Which rank this process is, from the variables torchrun and accelerate set, and how long a rank may be silent.

Read by `bench --help` (`is_worker`): nothing here imports torch or numpy.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from bench.core import errors

TIMEOUT_ENV = "INSTRUCT_BENCH_DIST_TIMEOUT"
DEFAULT_TIMEOUT_S = 24 * 3600.0  # gloo's own bound (setup, the final barrier); liveness is the heartbeat's job
HEARTBEAT_ENV = "INSTRUCT_BENCH_HEARTBEAT_S"
DEFAULT_HEARTBEAT_S = 300.0


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
