"""Small deterministic encoders for unit tests (no weights, no torch model)."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from bench.adapters.base import BaseEncoder


class HashEncoder(BaseEncoder):
    """Bag of hashed words; `blind=True` ignores instructions. Records every group it encodes."""

    family = "toy"

    def __init__(self, *, blind: bool = False, dim: int = 64, nan_for: str | None = None, **kwargs: Any) -> None:
        self.blind, self.dim, self.nan_for = blind, dim, nan_for
        self.groups: list[list[Any]] = []
        kwargs.setdefault("name", "toy/hash-blind" if blind else "toy/hash")
        kwargs.setdefault("revision", "v1")
        super().__init__(**kwargs)

    def _load(self) -> None:
        pass

    def render(self, text, instruction, prompt_type):
        return ["" if self.blind or instruction is None else instruction, text]

    def _encode_group(self, inputs, batch_size):
        self.groups.append(list(inputs))
        out = np.zeros((len(inputs), self.dim), dtype=np.float32)
        for row, (instruction, text) in enumerate(inputs):
            for word in f"{instruction} {text}".lower().split():
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
            if self.nan_for and self.nan_for in text:
                out[row, 0] = np.nan
        return out


class ScaledHashEncoder(HashEncoder):
    """Bag of words scaled per dimension by weights drawn from the instruction: k-means sees each
    instruction differently (a shared additive offset, as in HashEncoder, would not change k-means)."""

    def _encode_group(self, inputs, batch_size):
        out = super()._encode_group(inputs, batch_size)
        for row, (instruction, _) in enumerate(inputs):
            seed = int(hashlib.md5(instruction.encode()).hexdigest()[:8], 16)
            out[row] *= np.random.default_rng(seed).uniform(0.05, 3.0, size=self.dim).astype(np.float32)
        return out


class LookupEncoder(BaseEncoder):
    """Returns hand-set vectors for (instruction, text) pairs, so metrics can be checked by hand."""

    family = "lookup"

    def __init__(self, table: dict[tuple[str | None, str], list[float]], **kwargs: Any) -> None:
        self.table = {k: np.asarray(v, dtype=np.float32) for k, v in table.items()}
        kwargs.setdefault("name", "toy/lookup")
        kwargs.setdefault("revision", "v1")
        kwargs.setdefault("use_cache", False)
        super().__init__(**kwargs)

    def _load(self) -> None:
        pass

    def render(self, text, instruction, prompt_type):
        return [instruction, text]

    def _encode_group(self, inputs, batch_size):
        return np.stack([self.table.get((i, t), self.table.get((None, t))) for i, t in inputs])
