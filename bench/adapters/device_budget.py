"""Batches sized for the device: the default token budget of the LM families on a CUDA GPU.

Why: at 32 rows a small LM leaves most of a large GPU idle. On an H200, a 1.1B causal LM's 1st-gen
readout (prompts of 40-80 tokens) runs at 22% MFU at batch 32 and 38% at batch 128; a 6.7B model at
45-47% at either (`benchmarks/gpu_readouts.py`, model alone; docs/design/distributed.md#on-a-gpu).

What: on CUDA, when neither `batch_size` nor `max_tokens` is given, the first encode call that has
inputs to embed loads the model, reads the free device memory and the model's shape, and fixes a
padded-token budget and a row cap for the rest of the process (`device_budget`, a pure function):

    wanted   = max(compute target, 32 rows x max input length), at most MAX_TOKENS
    compute  = TARGET_FLOPS / (2 x parameters): a smaller model needs more tokens per batch to fill the card
    memory   = (free bytes - RESERVE_BYTES) x MEMORY_SHARE / activation bytes per padded token
    budget   = min(wanted, memory), rounded down to a multiple of STEP tokens
    rows     = budget / ROW_TOKENS, between MIN_ROWS and MAX_ROWS

The budget is decided once, before any batch is planned, and only where batches are planned (a
one-process run, or rank 0 of a launched run, which plans every rank's batches: `plan_jobs`); other
ranks encode the batches they are sent. An out-of-memory error still splits the failed batch in halves
(bench/adapters/base.py `run_batches`). `batch_size` and `max_tokens` are runtime options, so the budget
never enters the cache fingerprint or the experiment; like `--batch-size`, it can change a GPU's
vectors in the last bits (padding). The run record's `encode.device_batches` says what was chosen.
On a CPU (or MPS) nothing changes: batch 32 and no budget, as before.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

from bench.adapters.base import BaseEncoder

if TYPE_CHECKING:
    import torch

logger = logging.getLogger(__name__)

GIB = 2**30
TARGET_FLOPS = 2**45  # ~3.5e13 forward FLOPs per batch: a 6.7B model at 32 x 80 tokens, 45% MFU on the H200
MIN_ROWS = 32  # the old default: never fewer rows than that for inputs up to the max input length
MAX_ROWS = 1024
ROW_TOKENS = 32  # row cap = budget / 32: shorter rows than this get no more rows
MAX_TOKENS = 2**16
STEP = 1024  # budget granularity: a few MB more or less free memory give the same batches
RESERVE_BYTES = GIB  # CUDA context, cuBLAS workspaces, the allocator's fragmentation
MEMORY_SHARE = 0.5  # of the free memory above the reserve that one batch's activations may take
DEFAULT_LENGTH = 512  # the input length assumed when a family truncates at no length
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}


class DeviceBatchesRecord(TypedDict):
    """The run record's `encode.device_batches`: the plan a family sized for its CUDA device (`BatchPlan.record`)."""

    max_tokens: int
    batch_size: int
    limited_by: str
    free_gib: float
    bytes_per_token: int


@dataclass(frozen=True)
class ModelShape:
    """What the budget needs of a model: its size and the widths of one layer.

    Attributes:
        n_params: parameter count (the compute target).
        hidden_size: width of the residual stream.
        num_layers: transformer layers (the key/value cache of a generation has one entry per layer).
        intermediate_size: width of the MLP (default 4 x hidden).
        kv_size: width of one layer's keys (or values): key/value heads x head size; default hidden.
        dtype_bytes: bytes per activation (2 for bf16/fp16, 4 for float32).
    """

    n_params: int
    hidden_size: int
    num_layers: int
    intermediate_size: int | None = None
    kv_size: int | None = None
    dtype_bytes: int = 2

    def token_bytes(self, generates: bool = False) -> int:
        """Device bytes one padded token needs in a forward pass, beyond the weights.

        Inference mode frees each layer's activations before the next layer runs, so one layer's are
        counted: the residual stream and the state read out, attention's q, k, v and output, the layer
        norm (6 x hidden), and the MLP's gate, up and product (3 x intermediate). A generation also keeps
        every layer's keys and values (2 x layers x kv_size). Eager attention's scores (heads x length per
        token) are not counted: SDPA and flash attention keep none; an out-of-memory split covers the rest.
        """
        intermediate = self.intermediate_size or 4 * self.hidden_size
        per_layer = 6 * self.hidden_size + 3 * intermediate
        kv_cache = 2 * self.num_layers * (self.kv_size or self.hidden_size) if generates else 0
        return self.dtype_bytes * (per_layer + kv_cache)


@dataclass(frozen=True)
class BatchPlan:
    """The budget chosen for a device, and why (`limited_by`: rows, compute, cap or memory)."""

    max_tokens: int
    batch_size: int
    limited_by: str
    free_bytes: int
    token_bytes: int

    def record(self) -> DeviceBatchesRecord:
        """The run record's `encode.device_batches`."""
        return {
            "max_tokens": self.max_tokens,
            "batch_size": self.batch_size,
            "limited_by": self.limited_by,
            "free_gib": round(self.free_bytes / GIB, 2),
            "bytes_per_token": self.token_bytes,
        }


def device_budget(free_bytes: int, shape: ModelShape, *, max_length: int, generates: bool = False) -> BatchPlan:
    """The padded-token budget and row cap for a model with `free_bytes` of device memory left after loading.

    The budget is the larger of the compute target (TARGET_FLOPS per batch) and 32 rows of `max_length`
    tokens (the old default's largest batch), at most MAX_TOKENS, and at most what MEMORY_SHARE of the
    free memory above RESERVE_BYTES holds (`ModelShape.token_bytes`); rounded down to a multiple of STEP
    (at least STEP: a longer row goes alone). The row cap is budget / ROW_TOKENS within [MIN_ROWS, MAX_ROWS].
    """
    token_bytes = shape.token_bytes(generates)
    compute = TARGET_FLOPS // (2 * max(shape.n_params, 1))
    floor = MIN_ROWS * max_length
    wanted, why = (compute, "compute") if compute > floor else (floor, "rows")
    if wanted > MAX_TOKENS:
        wanted, why = MAX_TOKENS, "cap"
    memory = int(max(free_bytes - RESERVE_BYTES, 0) * MEMORY_SHARE) // token_bytes
    if memory < wanted:
        wanted, why = memory, "memory"
    tokens = max(STEP, wanted // STEP * STEP)
    rows = min(max(tokens // ROW_TOKENS, MIN_ROWS), MAX_ROWS)
    return BatchPlan(tokens, rows, why, free_bytes, token_bytes)


def model_shape(model: torch.nn.Module, dtype: str) -> ModelShape:
    """The shape of a loaded Hugging Face model from its config (Llama, GPT-2, OPT, T5 and BERT key names)."""
    config = model.config

    def first(*keys: str) -> int | None:
        return next((v for k in keys if isinstance(v := getattr(config, k, None), int) and v > 0), None)

    hidden = first("hidden_size", "d_model", "n_embd") or 0
    heads = first("num_attention_heads", "num_heads", "n_head")
    head_size = first("head_dim", "d_kv") or (hidden // heads if heads else None)
    kv_heads = first("num_key_value_heads") or heads
    return ModelShape(
        n_params=sum(p.numel() for p in model.parameters()),
        hidden_size=hidden,
        num_layers=first("num_hidden_layers", "num_layers", "n_layer") or 1,
        intermediate_size=first("intermediate_size", "ffn_dim", "d_ff", "n_inner"),
        kv_size=kv_heads * head_size if kv_heads and head_size else None,
        dtype_bytes=DTYPE_BYTES.get(dtype, 4),
    )


def free_device_bytes(device: str) -> int:
    """Free memory of a CUDA device: what the driver reports free plus what this process's allocator holds unused."""
    import torch

    free, _total = torch.cuda.mem_get_info(device)
    return int(free + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device))


class DeviceBatches(BaseEncoder):
    """An LM family whose default batches are sized for the CUDA device (see module docstring).

    A family implements `budget_shape` (its loaded model's `ModelShape`) and, where they differ from the
    defaults, `budget_generates` (whether the readout keeps a key/value cache) and `budget_length` (the
    longest input it keeps, in tokens).

    Attributes:
        device_batches: the chosen plan as recorded (`BatchPlan.record`), or None (a CPU, a given
            `batch_size` or `max_tokens`, or no input embedded yet).
    """

    device_batches: DeviceBatchesRecord | None = None
    _device_plan: BatchPlan | None = None
    _device_planned = False

    def budget_shape(self) -> ModelShape:
        return model_shape(self.model, self.dtype)

    def budget_generates(self) -> bool:
        return False

    def budget_length(self) -> int:
        return DEFAULT_LENGTH

    def device_batch_size(self, batch_size: int | None) -> int:
        """The rows per batch for a call asked for `batch_size`, choosing the device's budget on the first call.

        A `batch_size` or `max_tokens` given as an option, a caller's own batch size (other than the
        encoder's), or a device other than CUDA keep today's batches.
        """
        given = getattr(self, "_given_options", {})
        if given.get("batch_size") is not None or given.get("max_tokens") is not None:
            return batch_size or self.batch_size
        if batch_size not in (None, self.batch_size):
            return batch_size
        if not self._device_planned:
            self._device_planned = True
            if self.device.startswith("cuda"):
                self.ensure_loaded()
                plan = device_budget(
                    free_device_bytes(self.device),
                    self.budget_shape(),
                    max_length=self.budget_length(),
                    generates=self.budget_generates(),
                )
                self._device_plan, self.device_batches, self.max_tokens = plan, plan.record(), plan.max_tokens
                logger.info(
                    "%s: batches of up to %d padded tokens and %d rows for %s (%.1f GiB free, limited by %s); "
                    "--batch-size or --model-args max_tokens=N sets them.",
                    self.name,
                    plan.max_tokens,
                    plan.batch_size,
                    self.device,
                    plan.free_bytes / GIB,
                    plan.limited_by,
                )
        return self._device_plan.batch_size if self._device_plan is not None else self.batch_size
