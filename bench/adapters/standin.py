"""An accelerator stand-in, for tests and benchmarks of the distributed pipeline (not a model).

A rank of a launched run spends its time in the accelerator's forward passes; on a CPU-only machine N
real models on N ranks would fight over the cores instead. This family's forward pass *sleeps* for as
long as a GPU would take on the batch (a fixed launch latency plus the padded batch's tokens at
`tokens_per_s`), which releases the CPU, so N CPU ranks behave like N GPUs and `benchmarks/scaling.py`
can measure how busy the harness keeps them. Its vectors are deterministic (seeded by a hash of the
rendered input), `dim` wide (4,096 by default, a 7B readout's width), and depend on the instruction,
so every task scores and reruns agree; they mean nothing.

    python -m bench run --model standin:7b --model-args tokens_per_s=20000 -t FewRelClustering --data-dir DIR

Tokens are counted as whitespace-separated words of the rendered input, close enough for timing.
With `INSTRUCT_BENCH_STANDIN_LOG=DIR`, each process writes `DIR/rank<RANK>.json` at exit with the
seconds its forward passes took: the accelerator's busy time, measured the same way whatever the harness's
design around it (`benchmarks/scaling.py --only e`). The vectors are built inside that time, as a GPU's
forward pass makes them (until issue 34 they were built after it, and that CPU time counted as idle).
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from bench.adapters.base import BaseEncoder

if TYPE_CHECKING:
    from mteb.types import PromptType

    from bench.adapters.model_input import ModelInput


class StandInAccelerator(BaseEncoder):
    """Sleeps like a GPU's forward pass, returns seeded random vectors (see module docstring)."""

    family = "standin"
    notes = "test/benchmark stand-in for an accelerator: dim, tokens_per_s, batch_latency_s"
    runtime_options: ClassVar[tuple[str, ...]] = ("tokens_per_s", "batch_latency_s")

    def __init__(
        self,
        model_path: str,
        *,
        name: str | None = None,
        revision: str | None = None,
        dim: int = 4096,
        tokens_per_s: float = 20000.0,
        batch_latency_s: float = 0.002,
        **kwargs: Any,
    ) -> None:
        """A stand-in named `model_path`.

        Args:
            dim: width of the vectors.
            tokens_per_s: simulated throughput of one rank, padded tokens per second (a 7B model in bf16 on one
                H100 prefills roughly 10,000-20,000).
            batch_latency_s: simulated fixed cost of one forward pass (kernel launches, transfers).
        """
        self.dim, self.tokens_per_s, self.batch_latency_s = dim, tokens_per_s, batch_latency_s
        super().__init__(name=name or f"standin/{model_path}", revision=revision or "v1", **kwargs)

    def _load(self) -> None:
        pass

    def render(self, text: str, instruction: str | None, prompt_type: PromptType | None) -> str:
        return f"{instruction}\n{text}" if instruction else text

    @staticmethod
    def input_length(model_input: ModelInput) -> int:
        return len(str(model_input).split())

    def _encode_group(self, inputs: list[ModelInput], batch_size: int) -> np.ndarray:
        return self.run_batches(inputs, self._forward, batch_size=batch_size)

    def _forward(self, batch: list[ModelInput]) -> np.ndarray:
        """A forward pass of `seconds`: the vectors are built inside it (on a GPU the forward pass makes them),
        so the stand-in's own table lookups are not counted as the harness's time."""
        start = time.perf_counter()
        longest = max(self.input_length(x) for x in batch)
        seconds = self.batch_latency_s + len(batch) * longest / self.tokens_per_s
        vectors = np.stack([_vector(str(x), self.dim) for x in batch])
        time.sleep(max(0.0, seconds - (time.perf_counter() - start)))
        _BUSY["forward_s"] += seconds
        _BUSY["batches"] += 1
        return vectors


_BUSY = {"forward_s": 0.0, "batches": 0}
LOG_ENV = "INSTRUCT_BENCH_STANDIN_LOG"


@atexit.register
def _write_busy() -> None:
    folder = os.environ.get(LOG_ENV)
    if folder and _BUSY["batches"]:
        rank = os.environ.get("RANK", "0")
        Path(folder, f"rank{rank}.json").write_text(json.dumps({"rank": int(rank), **_BUSY}), encoding="utf-8")


def _vector(model_input: str, dim: int) -> np.ndarray:
    """Three rows of a fixed random table picked by the input's hash, weighted 1, 1/2, 1/4: a function of
    the input alone (not of its batch), and cheap, so the stand-in's own CPU time stays small."""
    a, b, c = hashlib.blake2b(model_input.encode("utf-8"), digest_size=3).digest()
    table = _table(dim)
    return table[a] + 0.5 * table[b] + 0.25 * table[c]


@functools.cache
def _table(dim: int) -> np.ndarray:
    return np.random.default_rng(0).standard_normal((256, dim), dtype=np.float32)
