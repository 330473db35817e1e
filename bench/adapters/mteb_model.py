"""MTEB's own implementation of a model: what a result at MTEB's key must hold.

`--model ORG/NAME` (also `mteb:ORG/NAME`, and the default `all-MiniLM-L6-v2`) runs the model exactly
as `mteb.get_model(ORG/NAME)` does: its registered `ModelMeta.loader` with its `loader_kwargs` (MTEB's
prompts, instruction template, `apply_instruction_to_passages`, sequence length, ...) at its
registered revision, and MTEB's own `encode` and `similarity`. A model MTEB does not know is loaded as
`mteb.get_model` would load it: sentence-transformers with the model's own prompts. The result is
filed at `<org__name>/<revision>/` with MTEB's `ModelMeta` unchanged, so it joins MTEB's published
results by (model, revision, task). Every other way of giving the model an instruction is another
family (or `--template`) and an MTEB experiment.

Wrap, don't fork: MTEB's implementation decides every text and prompt; the harness only stands in
for the `SentenceTransformer` inside it. Its `encode` / `encode_query` / `encode_document` calls
arrive here with MTEB's prompt and texts and are resolved as sentence-transformers resolves them (the
`query`/`document` prompts, `default_prompt_name`), so the cache key is the text that reaches the
model: `[prompt, text, task, options]`. From there the harness's dedup, embedding cache, length-sorted
batching, out-of-memory halving, progress and torchrun sharing apply, and the real model is called
with the same prompt and options on the inputs the cache lacks. An implementation that holds no
SentenceTransformer (an API client, a custom encoder) is cached a row at a time, as MTEB's own
`CachedEmbeddingWrapper` does: the key is the task's metadata (all of it but where its data lies:
name, type and prompt are what implementations read), the subset, the prompt type, the encode options
that change a vector, and the whole prepared row (text, query, instruction, title, ...); the rows the
cache lacks are sent to the implementation in the loader's own batches and collate function (never
prepared twice, which would append a query's instruction again).
Such a model runs on rank 0 alone under torchrun (its rows carry a task's metadata only in that
process). Rows that are not plain JSON (images, audio) run as MTEB runs them, uncached (logged).
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeGuard

import numpy as np

from bench.adapters.base import BaseEncoder, encode_part
from bench.adapters.remote_code import check_revision, remote_code_line, runs_own_code
from bench.core.errors import ConfigError, ModelLoadError
from bench.core.fileio import sha256_json

if TYPE_CHECKING:
    import torch
    from mteb import TaskMetadata
    from mteb.models import ModelMeta
    from mteb.types import Array, PromptType
    from sentence_transformers import SentenceTransformer
    from torch.utils.data import DataLoader

    from bench.adapters.model_input import ModelInput
    from bench.core.json_types import JSON, JSONObject

logger = logging.getLogger(__name__)

# sentence-transformers `encode` options that never change a vector (how it is computed or returned).
_CALL_OPTIONS = frozenset(
    {"batch_size", "show_progress_bar", "convert_to_numpy", "convert_to_tensor", "device", "pool", "chunk_size"}
)
_TASKS = {"encode_query": "query", "encode_document": "document"}
_ROW = "\x00mteb-row"  # first part of a row input: [_ROW, call scope, row json] (an ST input has 4 parts)
HUB_SNAPSHOTS = "hub-snapshots"  # beside the embedding cache: published local copies laid out as a hub cache


class MTEBModel(BaseEncoder):
    """MTEB's own implementation of the model (its loader, revision, prompts and instruction format)."""

    family = "mteb"
    results_name_family = False  # the default setting is MTEB's computation: MTEB's key
    notes = (
        "the canonical result (MTEB's key): each model as MTEB runs it, in its registry instruction format "
        "(`bench list models` shows the formats)"
    )
    cli_flags: ClassVar[dict[str, str]] = {}
    runtime_options = ("trust_remote_code",)  # whether a revision's code may run, never how a text is embedded

    def __init__(
        self,
        model_path: str,
        *,
        name: str | None = None,
        revision: str | None = None,
        dtype: str | None = None,
        trust_remote_code: bool = False,
        **kwargs: Any,
    ) -> None:
        """`trust_remote_code`: run a model's own hub code where MTEB's registry does not vouch for it: a
        registered remote-code model at another revision than MTEB's, or an unregistered model whose
        repository holds code (bench/adapters/remote_code.py); the registered revision needs no flag."""
        self.model_path = model_path
        self.trust_remote_code = trust_remote_code
        self.impl: Any = None
        self.st: SentenceTransformer | None = (
            None  # the SentenceTransformer inside MTEB's implementation, when there is one
        )
        self._rows_call: dict[str, Any] = {}  # without one: the encode call whose missing rows are being sent
        self._desc, self._show = "Encoding", None
        self._pass: dict[str, str | None] = {}  # what the current encode call encodes, for its progress label
        self._probe: list[ModelInput] | None = None  # while `probe_input` runs: the rendered inputs, nothing encoded
        super().__init__(name=name, revision=revision, source=model_path, dtype=dtype or "float32", **kwargs)
        if self.registry_meta is not None:  # before anything loads: a refused revision costs nothing
            check_revision(self.registry_meta, self.revision, trusted=trust_remote_code)

    # ------------------------------------------------------------------ identity
    def precision(self) -> JSONObject:
        """The loader's dtype unless `--dtype` asks for another (then an experiment)."""
        return {"dtype": None} if self.options().get("dtype") is None else super().precision()

    def identity_extras(self) -> JSONObject:
        """MTEB's implementation and its loader options decide vectors beyond the rendered text
        (sequence length, pooling over the prompt, padding side, EOS token)."""
        meta = self.registry_meta
        if meta is None:
            return {"loader": "SentenceTransformerEncoderWrapper"}
        return {"loader": loader_name(meta.loader), "loader_kwargs_sha256": sha256_json(_jsonable(meta.loader_kwargs))}

    def render(self, text: str, instruction: str | None, prompt_type: PromptType | None) -> ModelInput:
        """The generic (instruction-free) input, as `SentenceTransformer.encode(text)` sends it: what a
        caller outside MTEB's tasks (GSTransform's base vectors) asks for. With a task, MTEB's
        implementation renders its inputs itself (`encode`)."""
        if instruction is not None or prompt_type is not None:
            raise ConfigError(
                f"{self.name}: MTEB's implementation renders a task's inputs itself; only generic "
                "(instruction-free) texts can be rendered outside a task."
            )
        self.ensure_loaded()
        if self.st is None:
            raise ConfigError(
                f"{self.name}: MTEB's implementation ({type(self.impl).__name__}) has no "
                "SentenceTransformer to embed generic texts with."
            )
        return rendered_input(self.st, "encode", None, None, {}, text)

    # ------------------------------------------------------------------ instruction use
    def instruction_use(self, task_metadata: TaskMetadata | None = None) -> JSONObject:
        """Measured through MTEB's own implementation: its loader and wrapper build the inputs, and what
        reaches the SentenceTransformer is compared. An implementation without one (its rows are only
        known as the rows it is handed) falls back to MTEB's registry flag `use_instructions`."""
        self.ensure_loaded()
        if self.st is not None and task_metadata is not None:
            return super().instruction_use(task_metadata)
        meta = self.registry_meta
        return {
            "follows_instructions": meta.use_instructions if meta is not None else None,
            "method": "mteb-model-meta",
            "note": "MTEB's implementation holds no SentenceTransformer whose inputs could be compared",
        }

    def probe_input(self, text: str, instruction: str, task_metadata: TaskMetadata | None) -> list[ModelInput]:
        """What MTEB's implementation sends its SentenceTransformer for one query row with `instruction`."""
        from mteb.types import PromptType

        assert task_metadata is not None  # `instruction_use` probes through MTEB's loader only for a task
        return self._task_inputs(text, instruction, task_metadata, PromptType.query)

    def shift_inputs(
        self,
        text: str,
        instruction: str,
        task_metadata: TaskMetadata,
        prompt_type: PromptType | None,
        *,
        from_row: bool,
    ) -> tuple[ModelInput, ModelInput]:
        """With the instruction: what MTEB's implementation sent for the row (the row's own instruction, or
        none where the task's came from its metadata, as MTEB reads it); without: the generic input,
        `SentenceTransformer.encode(text)`'s (`render`)."""
        found = self._task_inputs(text, instruction if from_row else None, task_metadata, prompt_type)
        if len(found) != 1:
            raise ConfigError(
                f"{self.name}: MTEB's implementation ({type(self.impl).__name__}) sent {len(found)} inputs for one "
                "text, not one the shift could compare."
            )
        return found[0], self.render(text, None, None)

    def _task_inputs(
        self, text: str, instruction: str | None, task_metadata: TaskMetadata, prompt_type: PromptType | None
    ) -> list[ModelInput]:
        """What MTEB's implementation sends its SentenceTransformer for one `prompt_type` row of the task
        (with `instruction` as the row's own, when given); nothing is encoded."""
        self.ensure_loaded()
        if self.st is None:
            raise ConfigError(
                f"{self.name}: MTEB's implementation ({type(self.impl).__name__}) has no SentenceTransformer "
                "whose inputs could be read."
            )
        self._probe = []
        try:
            loader = _one_row_loader(text, instruction, task_metadata, prompt_type)
            call = {"hf_split": "test", "hf_subset": "default", "batch_size": 1, "show_progress_bar": False}
            self.impl.encode(loader, task_metadata=task_metadata, prompt_type=prompt_type, **call)
            return list(self._probe)
        finally:
            self._probe = None

    # ------------------------------------------------------------------ loading
    def _load(self) -> None:
        meta = self.registry_meta
        extra = self._loader_overrides()
        try:
            if meta is not None and meta.loader is not None:
                local = self._hub_snapshot(meta) if Path(self.model_path).exists() else None
                if local is not None:
                    extra |= {"cache_folder": local, "local_files_only": True}
                kwargs = {**meta.loader_kwargs, **extra, "device": self.device}
                if "model_kwargs" in extra:  # a --dtype replaces MTEB's dtype only, keeping its other model options
                    kwargs["model_kwargs"] = {
                        k: v
                        for k, v in (meta.loader_kwargs.get("model_kwargs") or {}).items()
                        if k not in ("dtype", "torch_dtype")
                    } | extra["model_kwargs"]
                if runs_own_code(meta):
                    logger.warning("%s", remote_code_line(self.name, self.revision, "MTEB's loader for it passes"))
                self.impl = meta.loader(meta.name, revision=self.revision, **kwargs)
            else:
                from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

                on_disk = Path(self.model_path).exists()
                if self.trust_remote_code:
                    extra["trust_remote_code"] = True
                    line = remote_code_line(self.name, self.revision, "--trust-remote-code passes", local=on_disk)
                    logger.warning("%s", line)
                self.impl = SentenceTransformerEncoderWrapper(
                    self.model_path, revision=None if on_disk else self.revision, device=self.device, **extra
                )
        except ConfigError:
            raise
        except Exception as e:
            raise ModelLoadError(
                f"Could not load {self.name} through MTEB's implementation "
                f"({type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}). Offline, the model must be "
                f"in the local hub cache at revision {self.revision[:12]}, or give a local directory."
            ) from e
        self.impl.mteb_model_meta = self.mteb_model_meta
        st = getattr(self.impl, "model", None)
        if _is_sentence_transformer(st):
            self.st = st
            self.impl.model = _ModelCall(st, self)
        else:
            logger.info(
                "%s: MTEB's implementation (%s) holds no SentenceTransformer; its rows are cached as "
                "MTEB's CachedEmbeddingWrapper keys them.",
                self.name,
                type(self.impl).__name__,
            )
        if self.st is not None:
            self.update_model_facts(
                n_parameters=sum(p.numel() for p in self.st.parameters()),
                max_tokens=getattr(self.st, "max_seq_length", None),
            )

    def _loader_overrides(self) -> dict[str, Any]:
        if self.options().get("dtype") is None:
            return {}
        import torch

        return {"model_kwargs": {"torch_dtype": getattr(torch, self.dtype)}}

    def _hub_snapshot(self, meta: ModelMeta) -> str | None:
        """A hub-cache layout (`models--org--name/snapshots/<revision>/`) linking a published local copy's
        files, so MTEB's loader finds the model by its hub id at its revision with no network. Only for a
        copy whose every file matched the published ones (bench/adapters/identity.py)."""
        name = meta.name
        if name is None or not (self.identity_check and self.identity_check.get("matches") == name):
            return None  # a meta without a name has no hub id to link
        from bench.adapters.cache import default_cache_dir
        from bench.adapters.identity import model_files
        from bench.core.fileio import ensure_dir

        root = default_cache_dir().parent / HUB_SNAPSHOTS
        repo = root / f"models--{name.replace('/', '--')}"
        snapshot = repo / "snapshots" / self.revision
        ensure_dir(snapshot, what="the hub snapshot of the packaged model", option="--cache-dir")
        for rel, file in model_files(self.model_path):
            link = snapshot / rel
            if link.is_symlink() and link.resolve() == file.resolve():
                continue
            link.parent.mkdir(parents=True, exist_ok=True)
            link.unlink(missing_ok=True)
            link.symlink_to(file.resolve())
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / "main").write_text(self.revision, encoding="utf-8")
        return str(root)

    @property
    def distributes(self) -> bool:  # type: ignore[override]
        """Row inputs name their task's metadata only in rank 0's process: such a model runs there."""
        return not self._loaded or self.st is not None

    # ------------------------------------------------------------------ MTEB's encoder protocol
    def encode(
        self,
        inputs: DataLoader,
        *,
        task_metadata: TaskMetadata,
        hf_split: str,
        hf_subset: str,
        prompt_type: PromptType | None = None,
        **kwargs: Any,
    ) -> Any:
        self.ensure_loaded()
        self._desc, self._show = task_metadata.name, kwargs.get("show_progress_bar", self.show_progress_bar)
        self._pass = {
            "part": encode_part(task_metadata, prompt_type, _loader_instructions(inputs)),
            "subset": hf_subset,
        }
        kwargs["show_progress_bar"] = False  # the harness shows its own progress
        call = {
            "task_metadata": task_metadata,
            "hf_split": hf_split,
            "hf_subset": hf_subset,
            "prompt_type": prompt_type,
            **kwargs,
        }
        rows = _json_rows(inputs) if self.st is None else None
        if rows:
            return self._encode_rows(rows, inputs, call)
        out = self.impl.encode(inputs, **call)
        if self.st is None and rows is None:
            logger.warning(
                "%s: rows of %s are not plain JSON; they run as MTEB runs them, without the embedding cache.",
                self.name,
                task_metadata.name,
            )
            self.stats.requested += len(out)
            self.stats.encoded += len(out)
        return out

    def _encode_rows(self, rows: list[str], inputs: DataLoader, call: dict[str, Any]) -> np.ndarray:
        """An implementation without a SentenceTransformer, through the harness's dedup and cache a row
        at a time; the scope holds everything of the call an implementation may read besides the row."""
        prompt_type = call["prompt_type"]
        options = {
            k: v
            for k, v in call.items()
            if k not in _CALL_OPTIONS and k not in ("task_metadata", "hf_split", "prompt_type")
        }
        scope = sha256_json(
            [
                call["task_metadata"].model_dump(mode="json", exclude={"dataset"}),
                prompt_type.value if prompt_type is not None else None,
                _jsonable(options),
            ]
        )
        self._rows_call = {**call, "collate_fn": inputs.collate_fn, "slices": inputs.batch_size is None}
        try:
            return self.encode_inputs(
                [[_ROW, scope, row] for row in rows],
                batch_size=call.get("batch_size") or self.batch_size,
                desc=self._desc,
                show=self._show,
                **self._pass,
            )
        finally:
            self._rows_call = {}

    def similarity(self, embeddings1: Array, embeddings2: Array) -> Array:
        self.ensure_loaded()
        return self.impl.similarity(embeddings1, embeddings2)

    def similarity_pairwise(self, embeddings1: Array, embeddings2: Array) -> Array:
        self.ensure_loaded()
        return self.impl.similarity_pairwise(embeddings1, embeddings2)

    # ------------------------------------------------------------------ the SentenceTransformer call
    def model_call(
        self, method: str, texts: Any, prompt_name: str | None, prompt: str | None, options: dict[str, Any]
    ) -> Any:
        """MTEB's call of the SentenceTransformer, through the harness's dedup and cache."""
        st = self.st
        assert st is not None  # `_ModelCall` wraps the SentenceTransformer `_load` found
        if isinstance(texts, str):
            return self.model_call(method, [texts], prompt_name, prompt, options)[0]
        if (
            not all(isinstance(t, str) for t in texts)
            or options.get("output_value", "sentence_embedding") != "sentence_embedding"
            or options.get("convert_to_sparse_tensor")
        ):
            return getattr(st, method)(texts, prompt_name=prompt_name, prompt=prompt, **options)  # not text vectors
        p, _, task, kw = rendered_input(st, method, prompt_name, prompt, options, "")
        inputs = [[p, t, task, kw] for t in texts]
        if self._probe is not None:  # instruction_use: record what would be encoded, encode nothing
            self._probe.extend(inputs)
            dim = (getattr(st, "get_embedding_dimension", None) or st.get_sentence_embedding_dimension)()
            out = np.ones((len(inputs), dim or 1), dtype=np.float32)
            return _as_requested(out, options)
        out = self.encode_inputs(
            inputs,
            batch_size=options.get("batch_size") or self.batch_size,
            desc=self._desc,
            show=self._show,
            **self._pass,
        )
        return _as_requested(out, options)

    @staticmethod
    def batch_group(model_input: ModelInput) -> str:
        if model_input[0] == _ROW:
            return model_input[1]
        return "\x00".join((model_input[0], model_input[2], model_input[3]))

    def token_lengths(self, inputs: Sequence[ModelInput]) -> list[int]:
        if self.st is None:
            return super().token_lengths(inputs)
        if not inputs:  # a fast tokenizer fails on an empty batch (a dry run of a task the cache fully holds)
            return []
        texts = [x[0] + x[1] for x in inputs]
        ids = self.st.tokenizer(texts, truncation=True, max_length=self.st.max_seq_length)["input_ids"]
        return [len(i) for i in ids]

    def _encode_group(self, inputs: list[ModelInput], batch_size: int) -> np.ndarray:
        if self.st is None:
            return self.run_batches(inputs, self._encode_row_batch, batch_size=batch_size)
        st: SentenceTransformer = self.st
        rows_of: dict[tuple[str, str, str], list[int]] = defaultdict(list)
        for i, model_input in enumerate(inputs):  # [prompt, text, task, options]
            rows_of[(model_input[0], model_input[2], model_input[3])].append(i)
        out: np.ndarray | None = None
        for (prompt, task, kw), rows in rows_of.items():
            options = {**(json.loads(kw) if kw else {}), **({"task": task} if task else {})}

            def encode(batch: list[ModelInput], prompt: str = prompt, options: dict[str, Any] = options) -> np.ndarray:
                return st.encode(
                    batch,
                    prompt=prompt,
                    batch_size=len(batch),
                    convert_to_numpy=True,
                    show_progress_bar=False,
                    **options,
                )

            vectors = self.run_batches([inputs[i][1] for i in rows], encode, batch_size=batch_size)
            if out is None:
                out = np.empty((len(inputs), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
        assert out is not None
        return out

    def _encode_row_batch(self, batch: list[ModelInput]) -> np.ndarray:
        """One batch of prepared rows through MTEB's implementation, batched and collated as its loader does."""
        from datasets import Dataset
        from torch.utils.data import DataLoader

        call = dict(self._rows_call)
        rows, collate = Dataset.from_list([json.loads(x[2]) for x in batch]), call.pop("collate_fn")
        if call.pop("slices"):  # the loader reads whole Arrow slices (bench/tasks/mteb_compat.py), so does this one
            loader = DataLoader(rows, batch_size=None, sampler=[slice(0, len(batch))], collate_fn=collate)
        else:
            loader = DataLoader(rows, batch_size=len(batch), collate_fn=collate, shuffle=False)
        out = self.impl.encode(loader, **{**call, "batch_size": len(batch)})
        if hasattr(out, "detach"):  # a torch tensor
            out = out.detach().float().cpu().numpy()
        return np.asarray(out, dtype=np.float32)

    def settings(self) -> JSONObject:
        out = super().settings()
        if self.options().get("dtype") is None:
            out["dtype"] = None  # as MTEB's loader sets it
        return {**out, "implementation": identity_extras_public(self.registry_meta)}


class _ModelCall:
    """The SentenceTransformer inside MTEB's implementation, with its encode calls sent to the harness.

    Every other attribute (prompts, tokenizer, similarity, max_seq_length) is the real model's."""

    def __init__(self, st: Any, owner: MTEBModel) -> None:
        object.__setattr__(self, "_st", st)
        object.__setattr__(self, "_owner", owner)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._st, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._st, name, value)

    def _call(
        self, method: str, inputs: Any, prompt_name: str | None = None, prompt: str | None = None, **options: Any
    ) -> Any:
        return self._owner.model_call(method, inputs, prompt_name, prompt, options)

    def encode(self, inputs: Any, prompt_name: str | None = None, prompt: str | None = None, **options: Any) -> Any:
        return self._call("encode", inputs, prompt_name, prompt, **options)

    def encode_query(
        self, inputs: Any, prompt_name: str | None = None, prompt: str | None = None, **options: Any
    ) -> Any:
        return self._call("encode_query", inputs, prompt_name, prompt, **options)

    def encode_document(
        self, inputs: Any, prompt_name: str | None = None, prompt: str | None = None, **options: Any
    ) -> Any:
        return self._call("encode_document", inputs, prompt_name, prompt, **options)


def _one_row_loader(
    text: str, instruction: str | None, task_metadata: TaskMetadata, prompt_type: PromptType | None
) -> DataLoader:
    """MTEB's loader of one row of the task (`instruction`: the row's own, when given)."""
    from datasets import Dataset
    from mteb._create_dataloaders import create_dataloader

    columns = {"text": [text], **({"instruction": [instruction]} if instruction is not None else {})}
    return create_dataloader(
        Dataset.from_dict(columns), task_metadata=task_metadata, prompt_type=prompt_type, batch_size=1
    )


def _loader_instructions(inputs: object) -> list[str | None]:
    """The per-row instructions of a task's loader (its dataset's `instruction` column), for the progress label."""
    dataset: Any = getattr(inputs, "dataset", None)
    names = getattr(dataset, "column_names", None) or ()
    return [i or None for i in dataset["instruction"]] if "instruction" in names else []


def _as_requested(out: np.ndarray, options: dict[str, Any]) -> np.ndarray | torch.Tensor:
    """Vectors as the SentenceTransformer call asked for them (a tensor with `convert_to_tensor`)."""
    if options.get("convert_to_tensor"):
        import torch

        return torch.from_numpy(out)
    return out


def rendered_input(
    st: object, method: str, prompt_name: str | None, prompt: str | None, options: dict[str, Any], text: str
) -> list[str]:
    """What a sentence-transformers call sends the model for one text: [prompt, text, task, options].

    The prompt as sentence-transformers resolves it (`encode_query` takes the `query` prompt,
    `encode_document` the first of `document`/`passage`/`corpus`, `encode` the default prompt), the
    task only where a Router module routes by it, and the call's options that change a vector.
    """
    prompts = getattr(st, "prompts", None) or {}
    if prompt is None and prompt_name is None:
        if method == "encode_query" and "query" in prompts:
            prompt_name = "query"
        elif method == "encode_document":
            prompt_name = next((k for k in ("document", "passage", "corpus") if k in prompts), None)
    if prompt is None:
        if prompt_name is not None:
            prompt = prompts.get(prompt_name)
        elif (default := getattr(st, "default_prompt_name", None)) is not None:
            prompt = prompts.get(default)
    task = _TASKS.get(method, "") if _has_router(st) else ""
    kept = {k: v for k, v in options.items() if k not in _CALL_OPTIONS and k != "task"}
    if "task" in options and _has_router(st):
        task = str(options["task"])
    return [prompt or "", text, task, json.dumps(_jsonable(kept), sort_keys=True) if kept else ""]


def _json_rows(inputs: object) -> list[str] | None:
    """The loader's prepared rows as JSON, in order; None when they are not a `datasets.Dataset` read in
    order (row by row into batches, or as whole slices) or hold anything but JSON values (images,
    audio), which then run uncached."""
    from datasets import Dataset
    from torch.utils.data import SequentialSampler

    dataset = getattr(inputs, "dataset", None)
    if not isinstance(dataset, Dataset):
        return None
    sampler = getattr(inputs, "sampler", None)
    in_order = (
        isinstance(sampler, SequentialSampler)
        if getattr(inputs, "batch_size", None) is not None
        else _slices_in_order(sampler, len(dataset))
    )
    if not in_order:
        return None
    try:
        return [json.dumps(row, sort_keys=True, ensure_ascii=False, allow_nan=False) for row in dataset.to_list()]
    except (TypeError, ValueError):
        return None


def _slices_in_order(sampler: Iterable[object] | None, n: int) -> bool:
    """Whether a sampler of whole batches yields consecutive slices covering rows 0..n-1."""
    start = 0
    for part in sampler or ():
        if not isinstance(part, slice):
            return False
        first, stop, step = part.indices(n)
        if (first, step) != (start, 1):
            return False
        start = stop
    return start == n


def _has_router(st: object) -> bool:
    modules = getattr(st, "_modules", None) or {}
    return any(type(m).__name__ == "Router" for m in modules.values())


def _is_sentence_transformer(obj: object) -> TypeGuard[SentenceTransformer]:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        return False
    return isinstance(obj, SentenceTransformer)


def _jsonable(value: object) -> JSON:
    return json.loads(json.dumps(value, default=str, sort_keys=True))


def loader_name(loader: object) -> str:
    """A registry loader's name as records and `bench list models` show it (a class or a function)."""
    return getattr(loader, "__qualname__", None) or getattr(loader, "__name__", None) or type(loader).__name__


def identity_extras_public(meta: ModelMeta | None) -> JSONObject:
    """The implementation as a run record shows it: MTEB's loader and its options."""
    if meta is None:
        return {"loader": "SentenceTransformerEncoderWrapper", "loader_kwargs": {}}
    return {"loader": loader_name(meta.loader), "loader_kwargs": _jsonable(meta.loader_kwargs)}
