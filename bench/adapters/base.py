"""The encoder every adapter family shares.

`BaseEncoder.encode` is MTEB's `EncoderProtocol.encode`: it reads texts and per-row instructions from
MTEB's batches, asks the family to build the exact model input for each (`render`), and then
1. drops repeated inputs (a text under the same instruction is embedded once, `bench/adapters/memo.py`),
2. takes what it can from the on-disk cache,
3. embeds the rest longest-first in groups (similar lengths share a batch, so little padding),
   handing each group to the cache's writer thread as soon as it is done (an error flushes it first),
4. refuses NaN/inf output with an error naming the inputs.

The base class is assembled from parts, each in a module named for what it holds:

| part | module | holds |
|---|---|---|
| `Setting` | `setting.py` | options, cache fingerprint, MTEB experiment |
| `Placement` | `device.py` | `--device` and `--dtype`, and what they resolve to |
| `Batching` | `batching.py` | batch planning, out-of-memory halving, the hooks that size batches |
| `InstructionProbe` | `probe.py` | whether the setting's input changes with the instruction |
| `ModelFacts` | `meta.py` | MTEB's ModelMeta and the facts about the weights |
| `Memo` | `memo.py` | a task's vectors already embedded in this process |
| `Encoding` | `encoding.py` | here, or shared among the ranks of a launched run (`bench.adapters.distributed`) |
| progress labels | `bench/core/progress.py` | `STS12 (sentence 2)`: which of a task's calls this is |

This module keeps what ties them together: the constructor (the options every family shares), the encode
pipeline and the cache. A family subclasses `BaseEncoder` alone and implements `_load`, `render` and
`_encode_group`; it never knows which task calls it. A class that sets `family` registers itself
(`bench.adapters.registry`); its options are its constructor's keyword parameters (`bench/adapters/options.py`).

The base constructor calls no method a family overrides. What needs the family's own state (the experiment
and MTEB's ModelMeta, which read `inert_options`, `precision`, `identity_extras` and `model_facts`) is settled
once the family's whole constructor has returned (`_Settled`), so a family may set its attributes before or
after `super().__init__()`.
"""

from __future__ import annotations

import contextlib
import time
from abc import ABCMeta
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from mteb.models import ModelMeta
from mteb.models.abs_encoder import AbsEncoder

from bench.adapters import distributed
from bench.adapters.batching import (
    GROUP_BATCHES,
    Batching,
    free_accelerator_memory,
    is_out_of_memory,
    plan_batches,
)
from bench.adapters.cache import EmbeddingCache, default_cache_dir, input_key
from bench.adapters.device import DTYPES, Placement, check_device, check_dtype, resolve_device, resolve_dtype
from bench.adapters.encoding import EncodeStats, encoding_for, task_instruction, texts_and_instructions
from bench.adapters.memo import MEMO_BYTES, Memo, memo_key
from bench.adapters.meta import ModelFacts, build_model_meta, registry_meta
from bench.adapters.probe import PROBE_INSTRUCTIONS, PROBE_TEXT, InstructionProbe
from bench.adapters.setting import Setting, naming_defaults
from bench.core.errors import ConfigError, EncodingError
from bench.core.progress import EncodeProgress, encode_part, pass_label

if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence

    from mteb import TaskMetadata
    from mteb.types import PromptType
    from torch.utils.data import DataLoader

    from bench.adapters.model_input import ModelInput

__all__ = [  # the names families and tests import from here, wherever they live now
    "DTYPES",
    "GROUP_BATCHES",
    "MEMO_BYTES",
    "PROBE_INSTRUCTIONS",
    "PROBE_TEXT",
    "BaseEncoder",
    "EncodeStats",
    "check_device",
    "encode_part",
    "free_accelerator_memory",
    "is_out_of_memory",
    "pass_label",
    "plan_batches",
    "resolve_device",
    "resolve_dtype",
]


class _Settled(ABCMeta):
    """Settles an encoder once its family's whole constructor has run (`BaseEncoder._settle`): the experiment
    and ModelMeta read the family's overrides, which may read attributes the family sets after
    `super().__init__()`."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        encoder = super().__call__(*args, **kwargs)
        if isinstance(encoder, BaseEncoder):
            encoder._settle()
        return encoder


class BaseEncoder(Setting, Placement, Batching, InstructionProbe, ModelFacts, AbsEncoder, metaclass=_Settled):
    """Shared machinery of every adapter family (see module docstring).

    Attributes:
        family: registry name of the family; a class that sets it registers itself.
        aliases: other spec prefixes for the family (`st:` for sentence-transformers).
        notes: free text for `bench list models` (accepted values of options).
        runtime_options: options that never change which vector a text gets (extended by subclasses).
        cli_flags: option -> help text; each becomes a `bench run --option-name` flag.
        results_name_family: whether results name the family as an MTEB experiment; False for the
            `mteb` family (MTEB's own implementation: its default setting is MTEB's key) and for the
            families whose `experiment_always` names the setting instead.
        experiment_always: options named in the experiment even at their default (the template of
            the sentence-transformers and OpenAI families: only MTEB's implementation is MTEB's key).
        local_weights: whether the family runs weights in this process (False for an API model), so that
            `--device` and `--dtype` are its options.
        distributes: whether a launched run shares this family's inputs among ranks; False for a
            family that is remote (API: concurrent requests instead) or only wraps another encoder
            (which is then shared, see `sub_encoders`).
        stats: running totals since construction.
    """

    family: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    notes: ClassVar[str] = ""
    runtime_options: ClassVar[tuple[str, ...]] = (
        "batch_size",
        "max_tokens",
        "device",
        "cache_dir",
        "use_cache",
        "show_progress_bar",
        "revision",
    )
    cli_flags: ClassVar[dict[str, str]] = {
        "batch_size": "texts per forward pass, or per API request (family default); auto: sized for the GPU on CUDA (LM families)",
        "device": "cpu, cuda, cuda:1, mps or auto (default auto)",
        "dtype": "weights' dtype: auto (default: bfloat16 on a CUDA GPU, float16 where it lacks bf16, float32 on "
        "CPU), float32, float16 or bfloat16; the mteb family keeps its loader's unless given",
    }
    distributes: ClassVar[bool] = True
    local_weights: ClassVar[bool] = True  # False for a remote model: no --device or --dtype means anything to it
    stats: EncodeStats
    mteb_model_meta: ModelMeta  # set by _settle (AbsEncoder allows None, which no encoder here has)
    _given_options: dict[str, Any]  # set by __new__

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "family" in cls.__dict__:
            from bench.adapters.families import register_family

            register_family(cls)

    def __new__(cls, *args: Any, **kwargs: Any) -> BaseEncoder:
        # The options as given, whatever the subclass's __init__ does with them: the one source of
        # the fingerprint and the experiment (see bench/adapters/options.py).
        self = super().__new__(cls)
        self._given_options = {k: v for k, v in kwargs.items() if k not in ("name", "experiment_defaults")}
        return self

    def __init__(
        self,
        *,
        name: str | None,
        revision: str | None,
        source: str | None = None,
        device: str | None = None,
        dtype: str = "auto",
        batch_size: int = 32,
        max_tokens: int | None = None,
        cache_dir: str | Path | None = None,
        use_cache: bool = True,
        show_progress_bar: bool | None = None,
        experiment_defaults: dict[str, Any] | None = None,
    ) -> None:
        """The options every family shares (a family documents its own, or another meaning, in its constructor).

        Args:
            revision: hub commit, tag or branch to load (a commit pins the weights) and the revision results are
                filed under; default MTEB's registry revision, else `main`, or `local-<content hash>` for a local
                model (`bench run --model-revision`).
            max_tokens: padded-token budget per batch (rows × longest row) on top of `batch_size`: long inputs get
                smaller batches, so fewer out-of-memory retries; it never truncates an input or changes a vector.
            cache_dir: the embedding cache's folder (default `$INSTRUCT_BENCH_CACHE/embeddings`, else
                `~/.cache/instruct-bench/embeddings`; `bench run --cache-dir`).
            use_cache: read and write the embedding cache; False embeds every input afresh (`bench run --no-cache`),
                e.g. to time a model or to check that cached vectors reproduce.
            show_progress_bar: True: a progress bar; False: none, progress only as INFO log lines (`bench -q` sets
                it); None: a bar when stderr is a terminal, else log lines.
        """
        check_dtype(dtype)
        if batch_size <= 0:
            raise ConfigError(f"--batch-size must be positive, got {batch_size}.")
        if max_tokens is not None and max_tokens <= 0:
            raise ConfigError(f"max_tokens (the token budget per batch) must be positive, got {max_tokens}.")
        self._source = source
        self.identity_check: dict[str, Any] | None = None
        self._content: str | None = None
        if (
            source is not None
        ):  # a model path or hub id: MTEB's name and revision, and its content (bench/adapters/identity.py)
            from bench.adapters.identity import resolve_identity

            identity = resolve_identity(source, name=name, revision=revision)
            name, revision, self.identity_check, self._content = (
                identity.name,
                identity.revision,
                identity.check,
                identity.content,
            )
        if not name or not revision:
            raise ConfigError("An encoder needs a model name and revision (or a model path to derive them from).")
        self.name = name
        self.revision = revision
        self.device_option = device
        self.dtype_option = dtype
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.show_progress_bar = show_progress_bar
        self.stats = EncodeStats()
        self._progress: EncodeProgress | None = None  # the encode call's progress, while one runs
        self._cache_root = Path(cache_dir) if cache_dir else default_cache_dir()
        self._use_cache = use_cache
        self._cache: EmbeddingCache | None = None
        self.cache_rank = 0  # another rank of a launched run writes its own shard of the cache (`serve`)
        self._loaded = False
        self._experiment_defaults = naming_defaults(type(self), experiment_defaults)
        self.registry_meta = registry_meta(source, name, self.identity_check)

    def _settle(self) -> None:
        """MTEB's ModelMeta with this setting's experiment: run once the family's constructor has returned
        (`_Settled`), because the experiment and the facts read what the family set up."""
        self.mteb_model_meta = build_model_meta(
            self.registry_meta,
            name=self.name,
            revision=self.revision,
            experiment=self.experiment(),
            facts=self.model_facts() if self.registry_meta is None else {},
        )

    # ------------------------------------------------------------------ family hooks
    def _load(self) -> None:
        """Load weights; called on the first input the cache cannot serve."""
        raise NotImplementedError

    def render(self, text: str, instruction: str | None, prompt_type: PromptType | None) -> ModelInput:
        """The exact, JSON-serialisable input the model sees for one text (the cache key's content)."""
        raise NotImplementedError

    def _encode_group(self, inputs: list[ModelInput], batch_size: int) -> np.ndarray:
        """Embeddings (n, dim) for rendered inputs, already sorted longest first."""
        raise NotImplementedError

    def sub_encoders(self) -> list[BaseEncoder]:
        """Encoders this one calls for its vectors (GSTransform's base); a launched run can share their work."""
        return []

    # ------------------------------------------------------------------ the cache and the model
    @property
    def cache(self) -> EmbeddingCache | None:
        if self._use_cache and self._cache is None:
            self._cache = EmbeddingCache(self._cache_root, self.fingerprint, rank=self.cache_rank)
        return self._cache if self._use_cache else None

    def use_cache_shard(self, rank: int | None) -> None:
        """On another rank of a launched run: write rank `rank`'s shard of the cache (None: no cache at all)."""
        self._cache = None
        if rank is None:
            self._use_cache = False
        else:
            self.cache_rank = rank

    def ensure_loaded(self) -> None:
        if not self._loaded:
            resolve_device(self.device_option)  # a missing accelerator is a ConfigError, not a load failure
            self._load()
            self._loaded = True

    # ------------------------------------------------------------------ the encode pipeline
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
        texts, instructions = texts_and_instructions(inputs)
        instruction = task_instruction(task_metadata, prompt_type)
        model_inputs = [self.render(t, i or instruction, prompt_type) for t, i in zip(texts, instructions, strict=True)]
        show = kwargs.get("show_progress_bar", self.show_progress_bar)
        return self.encode_inputs(
            model_inputs,
            batch_size=kwargs.get("batch_size") or self.batch_size,
            desc=task_metadata.name,
            show=show,
            part=encode_part(task_metadata, prompt_type, instructions),
            subset=hf_subset,
        )

    def encode_inputs(
        self,
        model_inputs: Sequence[Any],
        *,
        batch_size: int | None = None,
        desc: str = "Encoding",
        show: bool | None = None,
        part: str | None = None,
        subset: str | None = None,
    ) -> np.ndarray:
        """Embed rendered inputs: dedup, memo, cache, length-sorted groups, NaN check (see module docstring).

        Inputs already embedded under the same `desc` (the task) come from the in-memory memo
        (`_memo`), so a task that sends the same texts in several calls (one per instruction) has each
        distinct input embedded, looked up and hashed once per task, with or without the disk cache.
        The progress line names the task and the pass (`pass_label`): `part` is what this call encodes
        (`encode_part`: sentence, queries, corpus, instruction; None: a numbered pass) and `subset` the
        task's subset; neither changes the memo's scope.
        """
        batch_size = batch_size or self.batch_size
        memo = self._memo_for(desc)
        label = memo.pass_label(part, None if subset in (None, "", "default") else subset)
        refs = [memo_key(x) for x in model_inputs]
        first: dict[Hashable, int] = {}
        for i, ref in enumerate(refs):
            first.setdefault(ref, i)
        new = [ref for ref in first if ref not in memo.vectors]
        keys = {ref: input_key(model_inputs[first[ref]]) for ref in new}
        cache = self.cache
        vectors = cache.get_many(list(keys.values())) if cache is not None and keys else {}
        missing = sorted(
            (ref for ref in new if keys[ref] not in vectors),
            key=lambda r: (self.batch_group(model_inputs[first[r]]), -self.input_length(model_inputs[first[r]])),
        )
        self.stats.requested += len(refs)
        self.stats.unique += len(new)
        self.stats.cache_hits += len(new) - len(missing)
        if missing:
            self._encode_missing(
                [keys[r] for r in missing],
                [model_inputs[first[r]] for r in missing],
                vectors,
                self.device_batch_size(batch_size),
                label,
                show,
            )
        found = {ref: vectors[keys[ref]] for ref in new}
        memo.add(found)
        stored = memo.vectors
        out = np.stack([stored[r] if r in stored else found[r] for r in refs]).astype(np.float32, copy=False)
        self.update_model_facts(embed_dim=int(out.shape[1]))  # also when every vector came from the cache
        return out

    def _memo_for(self, scope: str) -> Memo:
        """The memo of `scope` (a task's name); a new scope starts an empty one (see `Memo`)."""
        memo = getattr(self, "_memo", None)
        if memo is None or memo.scope != scope:
            memo = self._memo = Memo(scope)
        return memo

    def _encode_missing(
        self,
        keys: list[str],
        inputs: list[ModelInput],
        out: dict[str, np.ndarray],
        batch_size: int,
        label: str,
        show: bool | None,
    ) -> None:
        """Encode `inputs` (sorted longest first) a group at a time (`encoding_for`: here, or over the ranks of a
        launched run), each group checked and handed to the cache's writer thread as soon as it is done
        (committed beside the encoding); the call returns once all are committed, and an error flushes the
        writer before it is raised, so nothing encoded is lost. Another rank's batch arrives checked
        (`encode_for_team`), and, where that rank commits it to its shard of the cache, this process only holds
        it until the shard confirms the commit (`EmbeddingCache.hold`)."""
        strategy = encoding_for(self)
        strategy.prepare(self)
        cache = self.cache

        def keep(start: int, stop: int, emb: np.ndarray, landing: distributed.Landing | None) -> None:
            if landing is None:  # encoded here; another rank's batch was checked there
                self._check(emb, inputs[start:stop])
            if cache is not None:
                if landing is not None and landing.committed:
                    landing.hold(cache, keys[start:stop], emb)
                else:
                    cache.put_many_later(keys[start:stop], emb)
            out.update(zip(keys[start:stop], emb, strict=True))
            self.stats.encoded += stop - start
            assert self._progress is not None  # `keep` runs inside the progress block below
            self._progress.update(stop - start)

        with EncodeProgress(len(inputs), label, show) as self._progress:  # bar on a terminal, else log lines
            tick = time.perf_counter()
            try:
                self.stats.encoded_by_other_ranks += strategy.run(self, inputs, batch_size, self._progress, keep)
            except BaseException:
                if cache is not None:  # everything encoded before the failure goes in before it is reported
                    with contextlib.suppress(Exception):
                        cache.flush()
                raise
            finally:
                self.stats.encode_seconds += time.perf_counter() - tick
            if cache is not None:  # the call's last groups: what a call returns is in the file for anyone who reads it
                cache.flush()
        self._progress = None  # a finished bar or log thread is not part of the model

    def encode_share(self, inputs: list[ModelInput], batch_size: int) -> np.ndarray:
        """Vectors for rendered, length-sorted inputs, straight from the model: no dedup, no cache
        (a rank's share of a round, or one group of a single process)."""
        self.ensure_loaded()
        return np.asarray(self._encode_group(inputs, batch_size), dtype=np.float32)

    def encode_for_team(
        self, inputs: list[ModelInput], batch_size: int, tag: int
    ) -> tuple[np.ndarray, EmbeddingCache | None]:
        """Another rank's side of a batch of a launched run: encode, check, and hand the vectors to this rank's
        shard of the cache under `tag` (the job id); returns the vectors and the shard if it took them."""
        vectors = self.encode_share(inputs, batch_size)
        self._check(vectors, inputs)
        cache = self.cache
        if cache is not None and cache.put_many_later([input_key(x) for x in inputs], vectors, tag):
            return vectors, cache
        return vectors, None

    def _check(self, emb: np.ndarray, inputs: list[ModelInput]) -> None:
        if emb.ndim != 2 or emb.shape[0] != len(inputs):
            raise EncodingError(f"{self.name} returned shape {emb.shape} for {len(inputs)} inputs.")
        bad = np.flatnonzero(~np.isfinite(emb).all(axis=1))
        if bad.size:
            example = str(inputs[bad[0]])[:80]
            raise EncodingError(
                f"{self.name} produced NaN or inf embeddings for {bad.size} of {len(inputs)} inputs "
                f"(first: {example!r}). With float16/bfloat16 try --dtype float32."
            )
