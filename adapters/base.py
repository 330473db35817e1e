"""The encoder every adapter family shares.

`BaseEncoder.encode` is MTEB's `EncoderProtocol.encode`: it reads texts and per-row instructions from
MTEB's batches, asks the family to build the exact model input for each (`render`), and then
1. drops repeated inputs (a text under the same instruction is embedded once),
2. takes what it can from the on-disk cache,
3. embeds the rest longest-first in groups (similar lengths share a batch, so little padding),
   writing each group to the cache as soon as it is done, so a killed run loses at most one group,
4. refuses NaN/inf output with an error naming the inputs.

A family implements `_load`, `render`, `_encode_group` and `settings`; it never knows which task calls it.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from mteb.models import ModelMeta
from mteb.models.abs_encoder import AbsEncoder
from mteb.models.model_meta import ScoringFunction
from tqdm.auto import tqdm

from adapters.cache import EmbeddingCache, input_key
from bench.errors import ConfigError, EncodingError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mteb import TaskMetadata
    from mteb.types import PromptType
    from torch.utils.data import DataLoader

logger = logging.getLogger(__name__)

CACHE_DIR_ENV = "INSTRUCT_BENCH_CACHE"
DTYPES = ("float32", "float16", "bfloat16", "auto")
GROUP_BATCHES = 8  # batches per cache write / progress step


def default_cache_dir() -> Path:
    root = os.environ.get(CACHE_DIR_ENV) or os.path.join(os.path.expanduser("~"), ".cache", "instruct-bench")
    return Path(root) / "embeddings"


def resolve_device(device: str | None) -> str:
    """'auto'/None picks CUDA, then Apple MPS, then CPU."""
    if device not in (None, "auto"):
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def resolve_dtype(dtype: str, device: str) -> str:
    """'auto' is bfloat16 on a GPU that supports it, float16 on other GPUs, float32 on CPU."""
    if dtype not in DTYPES:
        raise ConfigError(f"Unknown dtype '{dtype}'; choose one of {', '.join(DTYPES)}.")
    if dtype != "auto":
        return dtype
    if device.startswith("cuda"):
        import torch

        return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    return "float32"


@dataclass
class EncodeStats:
    """Counts for the run record: what tasks asked for, what the cache served, what the model did."""

    requested: int = 0
    unique: int = 0
    cache_hits: int = 0
    encoded: int = 0
    encode_seconds: float = 0.0

    def minus(self, before: EncodeStats) -> EncodeStats:
        return EncodeStats(**{k: v - getattr(before, k) for k, v in asdict(self).items()})

    def copy(self) -> EncodeStats:
        return EncodeStats(**asdict(self))


class BaseEncoder(AbsEncoder):
    """Shared machinery of every adapter family (see module docstring).

    Attributes:
        family: registry name of the family.
        stats: running totals since construction.
    """

    family: ClassVar[str]

    def __init__(
        self,
        *,
        name: str,
        revision: str,
        device: str | None = None,
        dtype: str = "float32",
        batch_size: int = 32,
        cache_dir: str | Path | None = None,
        use_cache: bool = True,
        show_progress_bar: bool | None = None,
        experiment: dict[str, Any] | None = None,
    ) -> None:
        if dtype not in DTYPES:
            raise ConfigError(f"Unknown dtype '{dtype}'; choose one of {', '.join(DTYPES)}.")
        if batch_size <= 0:
            raise ConfigError(f"--batch-size must be positive, got {batch_size}.")
        self.name = name
        self.revision = revision
        self.device_option = device
        self.dtype_option = dtype
        self.batch_size = batch_size
        self.show_progress_bar = show_progress_bar
        self.stats = EncodeStats()
        self._cache_root = Path(cache_dir) if cache_dir else default_cache_dir()
        self._use_cache = use_cache
        self._cache: EmbeddingCache | None = None
        self._loaded = False
        self.mteb_model_meta = ModelMeta.create_empty(
            overwrites=dict(
                name=name,
                revision=revision,
                loader=None,
                similarity_fn_name=ScoringFunction.COSINE,
                use_instructions=True,
                framework=["PyTorch"],
                experiment_kwargs=experiment or None,
            )
        )

    # ------------------------------------------------------------------ family hooks
    def _load(self) -> None:
        """Load weights; called on the first input the cache cannot serve."""
        raise NotImplementedError

    def render(self, text: str, instruction: str | None, prompt_type: PromptType | None) -> Any:
        """The exact, JSON-serialisable input the model sees for one text (the cache key's content)."""
        raise NotImplementedError

    def _encode_group(self, inputs: list[Any], batch_size: int) -> np.ndarray:
        """Embeddings (n, dim) for rendered inputs, already sorted longest first."""
        raise NotImplementedError

    def settings(self) -> dict[str, Any]:
        """Adapter settings recorded in results; those that change vectors are also in `fingerprint`."""
        return {"dtype": self.dtype_option, "batch_size": self.batch_size}

    def vector_settings(self) -> dict[str, Any]:
        """Settings that change a vector (part of the cache fingerprint)."""
        return {"dtype": self.dtype_option}

    @staticmethod
    def input_length(model_input: Any) -> int:
        """Proxy for token count, used to sort inputs so that batches need little padding."""
        return len(model_input) if isinstance(model_input, str) else sum(len(str(p)) for p in model_input)

    # ------------------------------------------------------------------ shared machinery
    @property
    def fingerprint(self) -> dict[str, Any]:
        return {"family": self.family, "model": self.name, "revision": self.revision, **self.vector_settings()}

    @property
    def device(self) -> str:
        return resolve_device(self.device_option)

    @property
    def dtype(self) -> str:
        return resolve_dtype(self.dtype_option, self.device)

    @property
    def cache(self) -> EmbeddingCache | None:
        if self._use_cache and self._cache is None:
            self._cache = EmbeddingCache(self._cache_root, self.fingerprint)
        return self._cache if self._use_cache else None

    def ensure_loaded(self) -> None:
        if not self._loaded:
            self._load()
            self._loaded = True

    def encode(
        self,
        inputs: DataLoader,
        *,
        task_metadata: TaskMetadata,
        hf_split: str,
        hf_subset: str,
        prompt_type: PromptType | None = None,
        **kwargs: Any,
    ) -> np.ndarray:
        texts, instructions = _texts_and_instructions(inputs)
        task_instruction = _task_instruction(task_metadata, prompt_type)
        model_inputs = [self.render(t, i or task_instruction, prompt_type) for t, i in zip(texts, instructions)]
        show = kwargs.get("show_progress_bar", self.show_progress_bar)
        return self.encode_inputs(
            model_inputs, batch_size=kwargs.get("batch_size") or self.batch_size, desc=task_metadata.name, show=show
        )

    def encode_inputs(
        self, model_inputs: Sequence[Any], *, batch_size: int | None = None, desc: str = "Encoding", show: bool | None = None
    ) -> np.ndarray:
        """Embed rendered inputs: dedup, cache, length-sorted groups, NaN check (see module docstring)."""
        batch_size = batch_size or self.batch_size
        keys = [input_key(x) for x in model_inputs]
        first: dict[str, int] = {}
        for i, key in enumerate(keys):
            first.setdefault(key, i)
        cache = self.cache
        vectors = cache.get_many(list(first)) if cache is not None else {}
        missing = sorted((k for k in first if k not in vectors), key=lambda k: -self.input_length(model_inputs[first[k]]))
        self.stats.requested += len(keys)
        self.stats.unique += len(first)
        self.stats.cache_hits += len(first) - len(missing)
        if missing:
            self._encode_missing(missing, [model_inputs[first[k]] for k in missing], vectors, batch_size, desc, show)
        return np.stack([vectors[k] for k in keys]).astype(np.float32, copy=False)

    def _encode_missing(
        self, keys: list[str], inputs: list[Any], out: dict[str, np.ndarray], batch_size: int, desc: str, show: bool | None
    ) -> None:
        self.ensure_loaded()
        group = batch_size * GROUP_BATCHES
        disable = None if show is None else not show  # None: bar only on a terminal
        with tqdm(total=len(inputs), desc=desc, unit="text", disable=disable, leave=False) as bar:
            for start in range(0, len(inputs), group):
                part_keys, part = keys[start : start + group], inputs[start : start + group]
                tick = time.perf_counter()
                emb = np.asarray(self._encode_group(part, batch_size), dtype=np.float32)
                self.stats.encode_seconds += time.perf_counter() - tick
                self._check(emb, part)
                if self.cache is not None:
                    self.cache.put_many(part_keys, emb)
                out.update(zip(part_keys, emb))
                self.stats.encoded += len(part)
                bar.update(len(part))

    def _check(self, emb: np.ndarray, inputs: list[Any]) -> None:
        if emb.ndim != 2 or emb.shape[0] != len(inputs):
            raise EncodingError(f"{self.name} returned shape {emb.shape} for {len(inputs)} inputs.")
        bad = np.flatnonzero(~np.isfinite(emb).all(axis=1))
        if bad.size:
            example = str(inputs[bad[0]])[:80]
            raise EncodingError(
                f"{self.name} produced NaN or inf embeddings for {bad.size} of {len(inputs)} inputs "
                f"(first: {example!r}). With float16/bfloat16 try --dtype float32."
            )


def _texts_and_instructions(inputs: DataLoader) -> tuple[list[str], list[str | None]]:
    """Per-row texts and instructions from MTEB batches (query batches carry `query` and `instruction`)."""
    texts: list[str] = []
    instructions: list[str | None] = []
    for batch in inputs:
        if "instruction" in batch and "query" in batch:
            texts += list(batch["query"])
            instructions += [i or None for i in batch["instruction"]]
        else:
            texts += list(batch["text"])
            instructions += [None] * len(batch["text"])
    return texts, instructions


def _task_instruction(task_metadata: TaskMetadata, prompt_type: PromptType | None) -> str | None:
    """A task-level instruction (TaskMetadata.prompt), used where rows carry none."""
    prompt = task_metadata.prompt
    if isinstance(prompt, dict):
        return prompt.get(prompt_type.value) if prompt_type is not None else None
    return prompt or None
