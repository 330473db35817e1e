"""What each spawned rank of tests/adapters/test_distributed.py runs (a module, so `spawn` can import it)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def rank_main(
    rank: int, world: int, port: int, builders: list[Callable[[], Any]], texts: list[str], instruction: str, out: str
) -> None:
    """Rank 0 encodes `texts` under `instruction` with each built model; the other ranks serve."""
    os.environ.update(
        RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port)
    )
    import torch

    torch.set_num_threads(1)
    from bench.adapters import distributed

    models = [build() for build in builders]
    with distributed.session(distributed.world_from_env()):
        if rank != 0:
            distributed.serve(*models)
            return
        stats = []
        for i, model in enumerate(models):
            given = None if model.family == "mteb" else instruction  # MTEB's implementation: generic texts
            vectors = model.encode_inputs([model.render(t, given, None) for t in texts], show=False)
            np.save(Path(out) / f"{i}.npy", vectors)
            stats.append({e.family: vars(e.stats) for e in distributed.all_encoders(model)})
        (Path(out) / "stats.json").write_text(json.dumps(stats))


class Unrebuildable:
    """Pickles on rank 0; unpickling it on another rank raises (a class that rank cannot rebuild)."""

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return _refuse, ("this object cannot be rebuilt here",)


def _refuse(why: str) -> None:
    raise ValueError(why)


def size(items: Any) -> int:
    return len(items)


def job_failures_main(rank: int, world: int, port: int, out: str) -> None:
    """Rank 0 submits scoring jobs that cannot travel (an unpicklable argument, one that cannot be unpickled
    on rank 1, an unpicklable result) and then one that works; each outcome goes to `out`/rank0.json."""
    import threading

    os.environ.update(
        RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port)
    )
    from bench.adapters import distributed
    from bench.core import parallel

    with distributed.session(distributed.world_from_env()):
        if rank != 0:
            distributed.serve()
            return
        outcomes = {}
        jobs = {
            "unpicklable argument": (size, [threading.Lock()]),
            "argument rank 1 cannot unpickle": (size, [Unrebuildable()]),
            "unpicklable result": (threading.Lock,),
            "a job that works": (size, [1, 2, 3]),
        }
        for name, (fn, *args) in jobs.items():
            try:
                # on rank 1: `gather` would run a job no rank has taken yet here
                outcomes[name] = ["result", parallel.submit(fn, *args).result(timeout=120)]
            except Exception as e:  # noqa: BLE001 - recorded for the test
                outcomes[name] = [type(e).__name__, str(e)]
        (Path(out) / "rank0.json").write_text(json.dumps(outcomes))
