"""The encoder every adapter family shares.

`BaseEncoder.encode` is MTEB's `EncoderProtocol.encode`: it reads texts and per-row instructions from
MTEB's batches, asks the family to build the exact model input for each (`render`), and then
1. drops repeated inputs (a text under the same instruction is embedded once),
2. takes what it can from the on-disk cache,
3. embeds the rest longest-first in groups (similar lengths share a batch, so little padding),
   handing each group to the cache's writer thread as soon as it is done (an error flushes it first),
4. refuses NaN/inf output with an error naming the inputs.

Inside a group, `run_batches` cuts batches by count (`batch_size`) and, optionally, by a token budget
(`max_tokens`: batch rows x longest row), so long inputs get small batches and short ones large. On a
CUDA/MPS out-of-memory error it splits the failed batch in halves (again if a half fails), for that
batch only; later batches have the full size again. Under `torchrun`/`accelerate launch`,
the inputs the cache lacks are shared among the ranks, each on its own device, and each rank commits what
it encodes to its own shard of the cache (`bench/adapters/distributed.py`).

A family implements `_load`, `render` and `_encode_group`; it never knows which task calls it. A class
that sets `family` registers itself (`bench.adapters.registry`); its options are its constructor's keyword
parameters, and the ones that change vectors (all but `runtime_options`) make the cache fingerprint and
the MTEB experiment (`bench/adapters/options.py`): one declaration, nothing to keep in step by hand.

Whether a setting follows instructions at all is measured, not guessed from its name
(`instruction_use`): one text is rendered under two different instructions through the setting's own
input path; the same model input both times means the vectors cannot depend on the instruction (a
`--template none` run, a PromptEOL prompt without an instruction template, `template=model` on a model
without prompts). The run record keeps the verdict; tables and the leaderboard show such a setting as an
unranked baseline.
"""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from mteb.models import ModelMeta
from mteb.models.abs_encoder import AbsEncoder
from mteb.models.model_meta import ScoringFunction

from bench.adapters import distributed
from bench.adapters.batching import plan_batches
from bench.adapters.cache import EmbeddingCache, default_cache_dir, input_key
from bench.adapters.options import (
    experiment_label,
    family_options,
    fit_experiment,
    option_defaults,
    public_value,
    vector_options,
)
from bench.core.errors import ConfigError, EncodingError
from bench.core.progress import EncodeProgress
from bench.core.redact import redact_value

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from mteb import TaskMetadata
    from mteb.types import PromptType
    from torch.utils.data import DataLoader

logger = logging.getLogger(__name__)

DTYPES = ("float32", "float16", "bfloat16", "auto")
PROBE_TEXT = "The hotel room was clean, but the staff at the front desk were rude."
PROBE_INSTRUCTIONS = ("What is the sentiment of this review?", "Which topic does this review discuss?")
GROUP_BATCHES = 8  # batches per cache write / progress step


def resolve_device(device: str | None) -> str:
    """'auto'/None picks CUDA, then Apple MPS, then CPU; a device that is not there is a ConfigError.
    In a launched run (torchrun), auto and "cuda" mean this rank's own GPU, `cuda:LOCAL_RANK`."""
    if device in (None, "auto", "cuda") and (own := distributed.local_device()) is not None:
        return own
    if device not in (None, "auto"):
        check_device(device)
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def check_device(device: str) -> None:
    """Fail before loading when `--device` names an accelerator this machine lacks (not a model error)."""
    import torch

    kind, _, index = device.partition(":")
    if kind == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0 or (index.isdigit() and int(index) >= count):
            raise ConfigError(
                f"--device {device}: this machine has {count} CUDA device(s) visible to torch "
                f"{torch.__version__}. Use --device cpu (or auto), or install a CUDA build of torch."
            )
    elif kind == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise ConfigError(f"--device {device}: Apple MPS is not available here. Use --device cpu (or auto).")


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
    encoded: int = 0  # by every rank of a launched run
    encoded_by_other_ranks: int = 0
    encode_seconds: float = 0.0
    oom_splits: int = 0  # batches split in halves after an out-of-memory error

    def minus(self, before: EncodeStats) -> EncodeStats:
        return EncodeStats(**{k: v - getattr(before, k) for k, v in asdict(self).items()})

    def copy(self) -> EncodeStats:
        return EncodeStats(**asdict(self))


class BaseEncoder(AbsEncoder):
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
    results_name_family: ClassVar[bool] = True
    experiment_always: ClassVar[tuple[str, ...]] = ()
    distributes: ClassVar[bool] = True
    local_weights: ClassVar[bool] = True  # False for a remote model: no --device or --dtype means anything to it
    mteb_model_meta: ModelMeta  # set by __init__ (AbsEncoder allows None, which no encoder here has)
    _given_options: dict[str, Any]  # set by __new__

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "family" in cls.__dict__:
            from bench.adapters.registry import register_family

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
        if dtype not in DTYPES:
            raise ConfigError(f"Unknown dtype '{dtype}'; choose one of {', '.join(DTYPES)}.")
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
        self._progress: Any = None  # the encode call's progress, while one runs
        self._cache_root = Path(cache_dir) if cache_dir else default_cache_dir()
        self._use_cache = use_cache
        self._cache: EmbeddingCache | None = None
        self.cache_rank = 0  # another rank of a launched run writes its own shard of the cache (`serve`)
        self._loaded = False
        self._experiment_defaults = dict(experiment_defaults or {})
        if {**option_defaults(type(self)), **self._experiment_defaults}.get("dtype") == "auto":
            # `auto` names no setting: a run is named by the dtype it resolves to, and float32 (a CPU's auto, and
            # what every GPU run was before `auto` became the default) is the unnamed setting
            self._experiment_defaults["dtype"] = "float32"
        self.registry_meta = self._registry_meta()
        if self.registry_meta is not None:  # MTEB's fields are MTEB's (model_meta.json); ours go in the run record
            self.mteb_model_meta = self.registry_meta.model_copy(
                update={"revision": revision, "experiment_kwargs": self.experiment() or None}
            )
        else:
            self.mteb_model_meta = ModelMeta.create_empty(
                overwrites=dict(
                    name=name,
                    revision=revision,
                    loader=None,
                    similarity_fn_name=ScoringFunction.COSINE,
                    use_instructions=True,
                    framework=["PyTorch"],
                    experiment_kwargs=self.experiment() or None,
                    **self.model_facts(),
                )
            )

    # ------------------------------------------------------------------ identity (one declaration)
    def options(self) -> dict[str, Any]:
        """Every option's value: the constructor's defaults overridden by what was given."""
        given = getattr(self, "_given_options", {})
        return {**option_defaults(type(self)), **{k: v for k, v in given.items() if k in family_options(type(self))}}

    def vector_options(self) -> dict[str, Any]:
        """The options that change vectors: all but the family's `runtime_options` and `inert_options()`,
        with the dtype as it resolves on this device (`precision`)."""
        inert = self.inert_options()
        out = {k: v for k, v in vector_options(type(self), self.options()).items() if k not in inert}
        return {**out, **self.precision()} if "dtype" in out else out

    def precision(self) -> dict[str, Any]:
        """The dtype the weights really run in, and for half precision the device kind: both change vectors.

        `--dtype auto` is bfloat16 on one GPU, float16 on another and float32 on a CPU, so the literal
        `auto` never names a setting. Half-precision kernels differ between CPUs and GPUs (a bf16 matmul
        on a CPU is not a GPU's), so bf16/fp16 vectors also carry the device kind; float32 ones agree
        across devices to float rounding and do not.
        """
        dtype = self.dtype
        if dtype == "float32" or (device := self.device) == "api":  # float32 asks for no device (no torch import)
            return {"dtype": dtype}
        return {"dtype": dtype, "device_kind": device.split(":")[0]}

    def content_id(self) -> str | None:
        """What the model is, as content: a local model's files' sha256, or a hub id at its revision
        (bench/adapters/identity.py). A family whose vectors come from elsewhere says so in `identity_extras`."""
        return self._content

    def inert_options(self) -> set[str]:
        """Options this configuration does not use (generation settings of a one-pass readout). Leaving
        one out only makes two identical settings count as different, never the reverse."""
        return set()

    def experiment(self) -> dict[str, Any]:
        """MTEB experiment kwargs: the family (see `results_name_family`) and every vector option that
        differs from its default, as filesystem-safe labels. Empty for a family's default setting."""
        defaults = {**option_defaults(type(self)), **self._experiment_defaults}
        out: dict[str, Any] = {"family": self.family} if self.results_name_family else {}
        for key, value in sorted(self.vector_options().items()):
            if value != defaults.get(key) or key in self.experiment_always:
                out[key] = experiment_label(value)
        return fit_experiment(out)

    def identity_extras(self) -> dict[str, Any]:
        """What else decides a vector besides the options (a re-encoder's weights, an endpoint)."""
        return {}

    def group_batches(self) -> int:
        """Batches per group (one cache commit, one progress step); a family that sends a group's batches
        concurrently (API requests) widens it so that a group holds enough work for all of them."""
        return GROUP_BATCHES

    def sub_encoders(self) -> list[BaseEncoder]:
        """Encoders this one calls for its vectors (GSTransform's base); a launched run can share their work."""
        return []

    def model_facts(self) -> dict[str, Any]:
        """ModelMeta fields known before loading (n_parameters, embed_dim, max_tokens, license, ...)."""
        if self._source is None:
            return {}
        from bench.adapters.model_card import model_facts

        return model_facts(self._source, self.name)

    def record_facts(self) -> dict[str, Any]:
        """Facts about the weights that MTEB's ModelMeta has no field for (a GGUF file's quantisation and the
        model it derives from), for the run record's `model.facts`; {} when there are none."""
        if self._source is None:
            return {}
        from bench.adapters.gguf_file import gguf_record_facts
        from bench.adapters.identity import is_local

        return gguf_record_facts(self._source) if is_local(self._source) else {}

    def _registry_meta(self) -> ModelMeta | None:
        """MTEB's registered ModelMeta when the model is the one MTEB registers under its name (a hub id,
        or a local copy whose files matched the published ones); None for anything else."""
        if self._source is None:
            return None
        from bench.adapters.identity import is_local, mteb_meta

        if is_local(self._source) and not (self.identity_check and self.identity_check.get("matches") == self.name):
            return None
        meta = mteb_meta(self.name)
        return meta if meta is not None and meta.name == self.name else None

    def update_model_facts(self, **facts: Any) -> None:
        """Fill ModelMeta fields the loaded model knows (parameters, dimension), keeping known ones;
        a registered model's meta is MTEB's and is never filled over."""
        if getattr(self, "registry_meta", None) is not None:
            return
        meta = self.mteb_model_meta
        update = {k: v for k, v in facts.items() if v is not None and getattr(meta, k, None) is None}
        if update:
            self.mteb_model_meta = meta.model_copy(update=update)

    def settings(self) -> dict[str, Any]:
        """Options recorded in results (local paths shortened to their last component; `dtype` as resolved)."""
        hidden = ("cache_dir", "use_cache", "show_progress_bar")
        options = self.options()
        if "dtype" in options:
            options["dtype"] = self.dtype
        return {k: redact_value(public_value(v)) for k, v in options.items() if k not in hidden}

    # ------------------------------------------------------------------ instruction use (measured)
    def instruction_use(self, task_metadata: TaskMetadata | None = None) -> dict[str, Any]:
        """Whether this setting's model input changes with the instruction: PROBE_TEXT rendered under
        the two PROBE_INSTRUCTIONS (as a task's query, `probe_input`); equal inputs mean blind."""
        first, second = (input_key(self.probe_input(PROBE_TEXT, i, task_metadata)) for i in PROBE_INSTRUCTIONS)
        return {
            "follows_instructions": first != second,
            "method": "render",
            "probe": {"text": PROBE_TEXT, "instructions": list(PROBE_INSTRUCTIONS)},
        }

    def probe_input(self, text: str, instruction: str, task_metadata: TaskMetadata | None) -> Any:
        """The model input for `text` under `instruction`, as a task's query row renders it."""
        from mteb.types import PromptType

        return self.render(text, instruction, PromptType.query)

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

    @staticmethod
    def input_length(model_input: Any) -> int:
        """Proxy for token count, used to sort inputs so that batches need little padding."""
        return len(model_input) if isinstance(model_input, str) else sum(len(str(p)) for p in model_input)

    @staticmethod
    def batch_group(model_input: Any) -> str:
        """Inputs of one group are batched together before length is considered (families whose
        batches must share something, such as a prompt prefix, override it)."""
        return ""

    def token_lengths(self, inputs: Sequence[Any]) -> list[int]:
        """Sequence length of each input for the token budget; families with a tokenizer count tokens."""
        return [self.input_length(x) for x in inputs]

    # ------------------------------------------------------------------ batching helpers for families
    def run_batches(
        self,
        inputs: Sequence[Any],
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

    # ------------------------------------------------------------------ shared machinery
    @property
    def fingerprint(self) -> dict[str, Any]:
        """The cache's identity of this setting: the model's content (never only its name), family, every
        vector option (dtype as resolved) and what else decides a vector (`identity_extras`)."""
        options = {k: public_value(v) for k, v in sorted(self.vector_options().items())}
        content = self.content_id()
        return {
            "family": self.family,
            "model": self.name,
            "revision": self.revision,
            **({"content": content} if content else {}),
            **options,
            **self.identity_extras(),
        }

    @property
    def device(self) -> str:
        return resolve_device(self.device_option)

    @property
    def dtype(self) -> str:
        """The dtype the weights run in; only `auto` asks which device this is (importing torch)."""
        return self.dtype_option if self.dtype_option != "auto" else resolve_dtype("auto", self.device)

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
        model_inputs = [
            self.render(t, i or task_instruction, prompt_type) for t, i in zip(texts, instructions, strict=True)
        ]
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
        refs = [_memo_key(x) for x in model_inputs]
        first: dict[Any, int] = {}
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

    def device_batch_size(self, batch_size: int) -> int:
        """The rows per batch for inputs the cache lacks, asked for `batch_size`: decided where batches are
        planned (one process, or rank 0 for every rank) and only once something is to be embedded. Families
        that size batches for the device override it (`bench.adapters.device_budget.DeviceBatches`)."""
        return batch_size

    def _memo_for(self, scope: str) -> _Memo:
        """The memo of `scope` (a task's name); a new scope starts an empty one (see `_Memo`)."""
        memo = getattr(self, "_memo", None)
        if memo is None or memo.scope != scope:
            memo = self._memo = _Memo(scope)
        return memo

    def _encode_missing(
        self,
        keys: list[str],
        inputs: list[Any],
        out: dict[str, np.ndarray],
        batch_size: int,
        label: str,
        show: bool | None,
    ) -> None:
        """Encode `inputs` (sorted longest first) a group at a time, each group checked and handed to the
        cache's writer thread as soon as it is done (committed beside the encoding); the call returns once
        all are committed, and an error flushes the writer before it is raised, so nothing encoded is lost. In a
        launched run the batches go to every rank (`bench.adapters.distributed`, rank 0 only): another rank's
        batch arrives checked (`encode_for_team`), and, where that rank commits it to its shard of the cache,
        this process only holds it until the shard confirms the commit (`EmbeddingCache.hold`)."""
        team = distributed.coordinator_for(self)
        if team is None:
            self.ensure_loaded()
        cache = self.cache

        def keep(start: int, stop: int, emb: np.ndarray, landing: distributed.Landing | None = None) -> None:
            if landing is None:  # encoded here; another rank's batch was checked there
                self._check(emb, inputs[start:stop])
            if cache is not None:
                if landing is not None and landing.committed:
                    landing.hold(cache, keys[start:stop], emb)
                else:
                    cache.put_many_later(keys[start:stop], emb)
            out.update(zip(keys[start:stop], emb, strict=True))
            self.stats.encoded += stop - start
            self._progress.update(stop - start)

        with EncodeProgress(len(inputs), label, show) as self._progress:  # bar on a terminal, else log lines
            tick = time.perf_counter()
            try:
                if team is not None:
                    self.stats.encoded_by_other_ranks += team.encode(self, inputs, batch_size, keep)
                else:
                    span = batch_size * self.group_batches()
                    for start in range(0, len(inputs), span):
                        part = inputs[start : start + span]
                        self._progress.start_group(len(part))
                        keep(start, start + len(part), self.encode_share(part, batch_size))
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

    def encode_share(self, inputs: list[Any], batch_size: int) -> np.ndarray:
        """Vectors for rendered, length-sorted inputs, straight from the model: no dedup, no cache
        (a rank's share of a round, or one group of a single process)."""
        self.ensure_loaded()
        return np.asarray(self._encode_group(inputs, batch_size), dtype=np.float32)

    def encode_for_team(self, inputs: list[Any], batch_size: int, tag: int) -> tuple[np.ndarray, EmbeddingCache | None]:
        """Another rank's side of a batch of a launched run: encode, check, and hand the vectors to this rank's
        shard of the cache under `tag` (the job id); returns the vectors and the shard if it took them."""
        vectors = self.encode_share(inputs, batch_size)
        self._check(vectors, inputs)
        cache = self.cache
        if cache is not None and cache.put_many_later([input_key(x) for x in inputs], vectors, tag):
            return vectors, cache
        return vectors, None

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


MEMO_BYTES = 256 * 2**20


class _Memo:
    """Vectors already embedded in this process for one scope (a task), keyed by the rendered input.

    Why: a robustness task encodes its corpus once per instruction (30 calls, so peak memory holds
    one instruction's vectors, not 30 x texts); an instruction-blind model renders every instruction
    to the same inputs, and the memo makes calls 2..30 free (no render-to-key hashing, no cache
    read, no model call) even with the disk cache off. Bounded: it stops taking vectors at
    `MEMO_BYTES` and is dropped when the next task starts, so memory grows with the distinct vectors
    of one task (an instruction-aware model fills it once and then reads the disk cache as before).
    """

    def __init__(self, scope: str) -> None:
        self.scope = scope
        self.vectors: dict[Any, np.ndarray] = {}
        self.nbytes = 0
        self.passes: dict[tuple[str | None, str | None], int] = {}  # encode calls of the scope, per (subset, part)

    def pass_label(self, part: str | None, subset: str | None) -> str:
        """The next call's progress label (`pass_label`), counting the calls of the scope per subset and part."""
        n = self.passes[subset, part] = self.passes.get((subset, part), 0) + 1
        return pass_label(self.scope, part, n, subset)

    def add(self, found: dict[Any, np.ndarray]) -> None:
        for ref, vec in found.items():
            if self.nbytes + vec.nbytes > MEMO_BYTES:
                return
            self.vectors[ref] = vec
            self.nbytes += vec.nbytes


# MTEB task types whose evaluator encodes two sides, sentence 1 then sentence 2 (AnySTSEvaluator,
# PairClassificationEvaluator), and those that encode queries and a corpus.
_PAIRED_TYPES = frozenset({"STS", "PairClassification"})
_RETRIEVAL_TYPES = frozenset({"Retrieval", "Reranking", "InstructionRetrieval", "InstructionReranking"})


def encode_part(
    task_metadata: TaskMetadata, prompt_type: PromptType | None, instructions: Sequence[str | None]
) -> str | None:
    """What one `encode` call of a task encodes, as far as the call itself tells: `sentence` (one side of an
    MTEB STS or pair-classification set, whose evaluator encodes sentence 1 then sentence 2), `corpus`
    (documents), `queries` (a retrieval task's plain queries), `instruction` (every row under one
    instruction: a robustness or per-aspect pass), else None (a numbered pass)."""
    from mteb.types import PromptType

    per_row = any(i is not None for i in instructions)
    if not per_row and task_metadata.type in _PAIRED_TYPES and prompt_type != PromptType.document:
        return "sentence"
    if prompt_type == PromptType.document:
        return "corpus"
    if not per_row and prompt_type == PromptType.query and task_metadata.type in _RETRIEVAL_TYPES:
        return "queries"
    if per_row and len(set(instructions)) == 1:
        return "instruction"
    return None


def pass_label(task: str, part: str | None, n: int, subset: str | None = None) -> str:
    """`STS12 (sentence 2)`, `SciFact (corpus, pass 2)`, `NYTClustering (instruction 3)`, `X (pass 2)`: the
    task and which of its encode calls this is, the `n`-th call of its `part` (see `encode_part`)."""
    if part is None and n == 1 and subset is None:  # a task's one pass, or a call outside a task: its name says it
        return task
    if part == "sentence":
        what = f"sentence {2 - n % 2}"  # the evaluator's calls alternate: 1, 2 (and again for the next split)
    elif part in ("queries", "corpus"):
        what = part if n == 1 else f"{part}, pass {n:,}"
    elif part is not None:
        what = f"{part} {n:,}"
    else:
        what = f"pass {n:,}"
    return f"{task} ({subset}, {what})" if subset else f"{task} ({what})"


def _memo_key(model_input: Any) -> Any:
    """A cheap, hashable stand-in for a rendered input (the string itself, or its parts as a tuple);
    anything else falls back to its sha256 cache key."""
    if type(model_input) is str:
        return model_input
    if type(model_input) in (list, tuple) and all(type(p) is str for p in model_input):
        return tuple(model_input)
    return ("key", input_key(model_input))
