"""How inputs are cut into batches, and what happens when one does not fit.

`plan_batches` is shared by the encoder and the distributed pipeline (which must form exactly the batches a
one-process run forms, and may not import the encoder base: a circle). `Batching` is the encoder's part that
runs a family's batches (`run_batches`): on a CUDA/MPS out-of-memory error it splits the failed batch in halves
(again if a half fails), for that batch only; later batches have the full size again. It also holds the hooks a
family overrides to size and order its batches (`input_length`, `batch_group`, `token_lengths`,
`device_batch_size`, `group_batches`).

numpy and torch are imported where used: the distributed pipeline imports this module for `bench --help`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from bench.core.errors import EncodingError

if TYPE_CHECKING:
    import numpy as np

    from bench.adapters.model_input import ModelInput

logger = logging.getLogger(__name__)

GROUP_BATCHES = 8  # batches per cache write / progress step


def plan_batches(lengths: Sequence[int], batch_size: int, max_tokens: int | None = None) -> list[int]:
    """Sizes of consecutive batches: at most `batch_size` rows and, with a budget, at most
    `max_tokens` padded tokens (rows x longest row; a row longer than the budget goes alone)."""
    sizes: list[int] = []
    start = 0
    while start < len(lengths):
        stop, longest = start, 0
        while stop < len(lengths) and stop - start < batch_size:
            longest_if_added = max(longest, lengths[stop])
            if max_tokens is not None and stop > start and (stop - start + 1) * longest_if_added > max_tokens:
                break
            longest = longest_if_added
            stop += 1
        sizes.append(stop - start)
        start = stop
    return sizes


def is_out_of_memory(error: BaseException) -> bool:
    """CUDA, MPS or XPU out-of-memory, whichever exception type the backend raised."""
    import torch

    if isinstance(error, torch.cuda.OutOfMemoryError):
        return True
    return isinstance(error, RuntimeError) and "out of memory" in str(error).lower()


def free_accelerator_memory() -> None:
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


class _Counts(Protocol):
    oom_splits: int


class _Progress(Protocol):
    def batch_done(self, rows: int, call_size: int) -> None: ...


class Batching:
    """The batching part of an encoder: out-of-memory halving and the hooks that size and order batches."""

    name: str
    batch_size: int
    max_tokens: int | None
    stats: _Counts
    _progress: _Progress | None

    def run_batches(
        self,
        inputs: Sequence[ModelInput],
        fn: Callable[[list[Any]], np.ndarray],
        *,
        batch_size: int | None = None,
        lengths: Sequence[int] | None = None,
    ) -> np.ndarray:
        """Concatenated `fn(batch)` over batches planned by `plan_batches`, splitting a batch on out-of-memory.

        A batch that runs out of memory is split in halves, and a half that does too is split again: that
        batch only. Batches already done are kept and the next batch has the full size again, so a rank of a
        launched run cuts the batches a one-process run cuts. Each split is counted (`stats.oom_splits`).
        """
        import numpy as np

        if not inputs:
            return np.zeros((0, 0), dtype=np.float32)
        if lengths is None:  # lengths matter only under a token budget
            lengths = self.token_lengths(inputs) if self.max_tokens else [0] * len(inputs)
        lengths = list(lengths)
        pending: list[tuple[int, int]] = []  # (start, stop) still to run, the next one last
        stop = len(inputs)
        for size in reversed(plan_batches(lengths, batch_size or self.batch_size, self.max_tokens)):
            pending.append((stop - size, stop))
            stop -= size
        done: list[np.ndarray] = []
        while pending:
            start, stop = pending.pop()
            try:
                done.append(np.asarray(fn(list(inputs[start:stop])), dtype=np.float32))
                if (progress := getattr(self, "_progress", None)) is not None:
                    progress.batch_done(stop - start, len(inputs))
            except Exception as e:
                if not is_out_of_memory(e):
                    raise
                if stop - start == 1:
                    raise EncodingError(
                        f"{self.name}: out of memory on a single input"
                        f"{f' of {lengths[start]} tokens' if lengths[start] else ''}. Use a "
                        f"smaller max input length, --dtype bfloat16, or a device with more memory."
                    ) from e
                free_accelerator_memory()
                middle = start + (stop - start) // 2  # the longer rows (sorted first) in the smaller half
                pending += [(middle, stop), (start, middle)]
                self.stats.oom_splits += 1
                logger.warning(
                    "%s: out of memory on a batch of %d; running it as %d + %d rows (this batch only).",
                    self.name,
                    stop - start,
                    middle - start,
                    stop - middle,
                )
        return np.concatenate(done, axis=0)

    def device_batch_size(self, batch_size: int) -> int:
        """The rows per batch for inputs the cache lacks, asked for `batch_size`: decided where batches are
        planned (one process, or rank 0 for every rank) and only once something is to be embedded. Families
        that size batches for the device override it (`bench.adapters.device_budget.DeviceBatches`)."""
        return batch_size

    def group_batches(self) -> int:
        """Batches per group (one cache commit, one progress step); a family that sends a group's batches
        concurrently (API requests) widens it so that a group holds enough work for all of them."""
        return GROUP_BATCHES

    @staticmethod
    def input_length(model_input: ModelInput) -> int:
        """Proxy for token count, used to sort inputs so that batches need little padding."""
        return len(model_input) if isinstance(model_input, str) else sum(len(str(p)) for p in model_input)

    @staticmethod
    def batch_group(model_input: ModelInput) -> str:
        """Inputs of one group are batched together before length is considered (families whose
        batches must share something, such as a prompt prefix, override it)."""
        return ""

    def token_lengths(self, inputs: Sequence[ModelInput]) -> list[int]:
        """Sequence length of each input for the token budget; families with a tokenizer count tokens."""
        return [self.input_length(x) for x in inputs]
