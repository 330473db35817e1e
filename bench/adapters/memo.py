"""Vectors already embedded in this process for one task, so that a task's repeated inputs cost nothing.

Why: a robustness task encodes its corpus once per instruction (30 calls, so peak memory holds one
instruction's vectors, not 30 x texts); an instruction-blind model renders every instruction to the same
inputs, and the memo makes calls 2..30 free (no render-to-key hashing, no cache read, no model call) even with
the disk cache off. Bounded: it stops taking vectors at `MEMO_BYTES` and is dropped when the next task starts,
so memory grows with the distinct vectors of one task (an instruction-aware model fills it once and then reads
the disk cache as before). The memo also counts the task's encode calls for their progress labels.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

from bench.adapters.cache import input_key
from bench.core.progress import PassLabels

if TYPE_CHECKING:
    import numpy as np

MEMO_BYTES = 256 * 2**20


class Memo:
    """The vectors of one scope (a task), keyed by `memo_key` of the rendered input (see module docstring)."""

    def __init__(self, scope: str) -> None:
        self.scope = scope
        self.vectors: dict[Hashable, np.ndarray] = {}
        self.nbytes = 0
        self.labels = PassLabels(scope)  # encode calls of the scope, per (subset, part)

    def pass_label(self, part: str | None, subset: str | None) -> str:
        """The next call's progress label (`bench.core.progress.pass_label`)."""
        return self.labels.next(part, subset)

    def add(self, found: dict[Hashable, np.ndarray]) -> None:
        for ref, vec in found.items():
            if self.nbytes + vec.nbytes > MEMO_BYTES:
                return
            self.vectors[ref] = vec
            self.nbytes += vec.nbytes


def memo_key(model_input: object) -> Hashable:
    """A cheap, hashable stand-in for a rendered input (the string itself, or its parts as a tuple);
    anything else falls back to its sha256 cache key."""
    if type(model_input) is str:
        return model_input
    if (
        isinstance(model_input, list | tuple)
        and type(model_input) in (list, tuple)
        and all(type(p) is str for p in model_input)
    ):
        return tuple(model_input)
    return ("key", input_key(model_input))
