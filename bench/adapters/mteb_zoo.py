"""MTEB's model zoo as `bench list models` shows it, and MTEB's wrappers run with no weights.

Read from MTEB's registry (`mteb.get_model_metas()`), never from the hub. A model's query and document
formats are probed, not read from its loader options (a template may live inside a loader function, as
Qwen3-Embedding's does): the registered loader builds MTEB's own wrapper with `WeightlessST` standing in
for the SentenceTransformer inside it (nothing loaded, nothing downloaded), a probe row `{text}` is
encoded through the wrapper for a probe task whose prompt is `{instruction}`, and what the wrapper hands
the SentenceTransformer (texts and prompt, resolved as sentence-transformers resolves them:
`rendered_input`, the harness's cache key) is the format shown. This is how `instruction_use` measures a
loaded model (bench/adapters/mteb_model.py `probe_input`): the SentenceTransformer inside MTEB's wrapper
is stood in for and nothing is encoded. A model whose format cannot be captured so says why: an
implementation of its own (an API client, a custom encoder) holds no SentenceTransformer to stand in
for, and a format that the model's own config decides (its `prompts`) is known only when that config is
in the local hub cache.

`weightless_sentence_transformers` lends the same stand-in to `bench run --dry-run`: MTEB's wrapper then
renders and counts every input without building the model (tokens by the model's tokenizer when its
files are local, else estimated from characters: `dry_run_tokens`).

Probing all ~370 models costs seconds and imports sentence-transformers and torch, so each model's result
is cached (`$INSTRUCT_BENCH_CACHE/catalog/mteb-zoo-formats-<key>.json`), as MTEB's model facts are
(bench/results/model_catalog.py). The file's key covers what runs a probe: the installed mteb,
sentence-transformers, transformers and huggingface-hub, the harness's probe code (`PROBE_CODE`) and the
file's layout (`PROBE_CACHE_FORMAT`). Each model's entry also names the repositories its probe opened (a
loader may build its SentenceTransformer from another repository than the model's name) and a stamp of
their local files (each file's path, size and mtime in the hub cache folder, or in a local folder of
that name); an entry whose stamp no longer matches is probed again. A cache that cannot be read or
written costs only speed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, NoReturn, TypedDict, cast

from bench.adapters.mteb_model import loader_name, rendered_input
from bench.core.bounded import MAX_CONFIG_BYTES, load_json_bounded, read_at_most
from bench.core.errors import BenchError
from bench.core.fileio import read_cached, write_cached
from bench.core.paths import cache_root

if TYPE_CHECKING:
    import torch
    from mteb import TaskMetadata
    from mteb.models import ModelMeta
    from mteb.types import Array, BatchedInput
    from torch.utils.data import DataLoader

    from bench.adapters.model_input import ModelInput

logger = logging.getLogger(__name__)

SAMPLE_INSTRUCTION = "{instruction}"
SAMPLE_TEXT = "{text}"
PROBE_TASK = "InstructBenchFormatProbe"  # a name no registry model keys a prompt by
NOT_PROBED = "format: not probed offline"
WITH_DOCUMENT_PROMPT = "; with a document prompt: "  # between a document format without and with one
_ST_CONFIG = "config_sentence_transformers.json"
_PROMPTED_BY_NAME = ("encode_query", "encode_document")  # with no prompt, sentence-transformers picks one by name
# The layout of a cached probe file; a file of another (or none) is probed again, never misread.
PROBE_CACHE_FORMAT = 1
# The harness code a probe runs (the stand-in and the probe here, `rendered_input` there): an edit re-probes.
PROBE_CODE = (Path(__file__), Path(__file__).with_name("mteb_model.py"))
_PROBE_PACKAGES = ("mteb", "sentence-transformers", "transformers", "huggingface-hub")
# (repository or path, cache folder) of each SentenceTransformer built while a probe records them.
_opened: ContextVar[list[tuple[str, str | None]] | None] = ContextVar("_opened", default=None)


class ZooModel(TypedDict):
    """One row of `instruction_models` (`bench list models --zoo`)."""

    model: str
    revision: str
    implementation: str
    query: str
    document: str
    reason: str | None


class ProbeEntry(TypedDict):
    """One model's cached probe: its formats, and the repositories it opened with their stamp (`_fresh`)."""

    query: str
    document: str
    reason: str | None
    opened: list[list[str | None]]  # [repository or path, cache folder]
    stamp: str


def instruction_models() -> list[ZooModel]:
    """One row per instruction-aware registry text model (`use_instructions`): name, revision, loader,
    and the query and document formats its MTEB wrapper sends (or why they were not probed: `reason`)."""
    import mteb

    path = probe_cache_path()
    cached = _read_probe_cache(path)
    entries: dict[str, ProbeEntry] = {}
    rows: list[ZooModel] = []
    for meta in mteb.get_model_metas():
        if not meta.use_instructions or meta.loader is None or "text" not in (meta.modalities or ["text"]):
            continue
        entry = _fresh(cached.get(str(meta.name))) or _probe_entry(meta)
        entries[str(meta.name)] = entry
        rows.append(
            {
                "model": str(meta.name),
                "revision": (meta.revision or "")[:12],
                "implementation": loader_name(meta.loader),
                "query": entry["query"],
                "document": entry["document"],
                "reason": entry["reason"],
            }
        )
    if entries != cached:
        _write_probe_cache(path, entries)
    return sorted(rows, key=lambda r: r["model"].lower())


# ------------------------------------------------------------------------------------------- the probe cache
def probe_cache_path() -> Path:
    """The cache file for this install: keyed by the packages and harness code a probe runs, and its layout."""
    digest = hashlib.sha256(f"format {PROBE_CACHE_FORMAT}\0".encode())
    for package in _PROBE_PACKAGES:
        version = "none"
        with contextlib.suppress(metadata.PackageNotFoundError):
            version = metadata.version(package)
        digest.update(f"{package} {version}\0".encode())
    for code in PROBE_CODE:
        digest.update(code.read_bytes() + b"\0")
    return cache_root() / "catalog" / f"mteb-zoo-formats-{digest.hexdigest()[:16]}.json"


def _read_probe_cache(path: Path) -> dict[str, Any]:
    """Model name -> cached entry; empty when the file is missing, unreadable, damaged or of another layout."""
    found = read_cached(path, PROBE_CACHE_FORMAT) or {}
    return found["models"] if isinstance(found.get("models"), dict) else {}


def _write_probe_cache(path: Path, entries: dict[str, ProbeEntry]) -> None:
    """Written atomically; a read-only or full cache costs only speed (the next listing probes again)."""
    write_cached(path, {"format": PROBE_CACHE_FORMAT, "models": entries}, what="MTEB zoo formats")


def _fresh(entry: Any) -> ProbeEntry | None:
    """A cached entry that is well formed and whose repositories' local files are as they were when probed."""
    try:
        opened = [(source, folder) for source, folder in entry["opened"]]
        texts = [entry["query"], entry["document"], *(source for source, _ in opened)]
        valid = all(isinstance(t, str) for t in texts) and isinstance(entry["reason"], str | None)
        valid = valid and all(isinstance(folder, str | None) for _, folder in opened)
    except (TypeError, KeyError, ValueError):  # not a dict, a key missing, not pairs: damaged
        return None
    return entry if valid and entry.get("stamp") == local_stamp(opened) else None


def _probe_entry(meta: ModelMeta) -> ProbeEntry:
    """`probe_formats(meta)` with the repositories it opened (the model's own name at least) and their stamp."""
    token = _opened.set([(str(meta.name), None)])
    try:
        query, document, reason = probe_formats(meta)
        opened = sorted(set(_opened.get() or []), key=lambda o: (o[0], o[1] or ""))
    finally:
        _opened.reset(token)
    pairs: list[list[str | None]] = [[source, folder] for source, folder in opened]
    return {"query": query, "document": document, "reason": reason, "opened": pairs, "stamp": local_stamp(opened)}


def local_stamp(opened: Sequence[tuple[str, str | None]]) -> str:
    """A hash of every local file a probe of these repositories can read: each file's path, size and mtime
    under the repository's hub cache folder (`refs`, `snapshots`, `.no_exist`; `blobs` are reached through
    the snapshots' links) and under a local folder of that name. No file is read."""
    from huggingface_hub import constants

    digest = hashlib.sha256()
    for source, folder in opened:
        hub = Path(folder or constants.HF_HUB_CACHE) / f"models--{source.replace('/', '--')}"
        for root in (hub, Path(source)):
            digest.update(f"{root.resolve()}\0{json.dumps(_listing(root))}\0".encode())
    return digest.hexdigest()[:32]


def _listing(root: Path) -> list[list[str | int | None]] | None:
    """[relative path, size, mtime_ns] of each file below `root` (its `blobs` left out), or None if no folder."""
    if not root.is_dir():
        return None
    found: list[list[str | int | None]] = []
    for here, dirs, files in os.walk(root):
        if Path(here) == root:
            dirs[:] = [d for d in dirs if d != "blobs"]
        for name in files:
            path = Path(here) / name
            try:
                st = path.stat()  # through a snapshot's link: the blob's size and time
                found.append([path.relative_to(root).as_posix(), st.st_size, st.st_mtime_ns])
            except OSError:  # a dangling link: a file that is not there
                found.append([path.relative_to(root).as_posix(), None, None])
    return sorted(found)


def probe_formats(meta: Any) -> tuple[str, str, str | None]:
    """(query, document, None) as MTEB's wrapper sends `{text}` under a task's `{instruction}`, or
    (`NOT_PROBED (reason)`, "", reason) when that cannot be captured offline.

    A document format that differs for a task with a document prompt (GritLM, templates applied to
    passages) shows both: the task without one first, as most retrieval tasks are."""
    cls = _loader_class(meta.loader)
    if cls is None:
        reason = f"its own implementation, {loader_name(meta.loader)}, holds no SentenceTransformer to probe"
        return f"{NOT_PROBED} ({reason})", "", reason
    try:
        with weightless_sentence_transformers(offline=True), warnings.catch_warnings(), _quiet():
            warnings.simplefilter("ignore")  # MTEB warns of a task without a document prompt: the probe's point
            impl = meta.loader(meta.name, revision=meta.revision, **(meta.loader_kwargs or {}), device="cpu")
            if (meta.loader_kwargs or {}).get("model_prompts") and isinstance(
                getattr(impl, "model", None), WeightlessST
            ):
                impl.model.prompts = dict(meta.loader_kwargs["model_prompts"])  # as MTEB's wrapper replaces the model's
            query = _sent(impl, _probe_task({"query": SAMPLE_INSTRUCTION}), "query")
            plain = _sent(impl, _probe_task({"query": SAMPLE_INSTRUCTION}), "document")
            prompted = _sent(
                impl, _probe_task({"query": SAMPLE_INSTRUCTION, "document": SAMPLE_INSTRUCTION}), "document"
            )
    except _Unprobed as e:
        return f"{NOT_PROBED} ({e})", "", str(e)
    except Exception as e:  # any loader failure is a reason shown, never a listing failure
        logger.debug("%s not probed", meta.name, exc_info=True)  # the traceback under -v
        reason = f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else 'no message'}"
        return f"{NOT_PROBED} ({reason})", "", reason
    document = plain if prompted == plain else f"{plain}{WITH_DOCUMENT_PROMPT}{prompted}"
    typed = sorted(k for k in (meta.loader_kwargs or {}).get("model_prompts") or {} if k not in ("query", "document"))
    note = f" (+ {len(typed)} task prompts)" if typed else ""
    return query + note, document, None


@contextmanager
def _quiet() -> Iterator[None]:
    """MTEB's and the loaders' log lines about the probe's own task (no document prompt, no template) hidden;
    the process's own `logging.disable` level (a caller's, a test's) is put back, not reset to NOTSET."""
    previous = logging.root.manager.disable
    logging.disable(max(previous, logging.WARNING))
    try:
        yield
    finally:
        logging.disable(previous)


class _Unprobed(Exception):
    """A format MTEB's wrapper leaves to something not known offline."""


def _sent(impl: Any, task_metadata: TaskMetadata, prompt_type: str) -> str:
    """The one text MTEB's wrapper sends its SentenceTransformer for the probe row."""
    from mteb.types import PromptType

    st = impl.model
    if not isinstance(st, WeightlessST):
        raise _Unprobed(f"its wrapper, {type(impl).__name__}, holds no SentenceTransformer")
    kind = PromptType(prompt_type)
    st.calls.clear()
    impl.encode(_probe_rows(), task_metadata=task_metadata, hf_split="test", hf_subset="default", prompt_type=kind)
    [(method, texts, prompt_name, prompt, options)] = st.calls
    if prompt is None and (prompt_name is not None or method in _PROMPTED_BY_NAME) and not st.config_known:
        raise _Unprobed(f"prompts from the model's own {_ST_CONFIG}, which is not in the local hub cache")
    p, text, _, _ = rendered_input(st, method, prompt_name, prompt, options, texts[0])
    return p + text


@cache
def _probe_rows() -> DataLoader[BatchedInput]:
    """MTEB's loader of one plain text row, `{text}` (a wrapper reads its features and its `text` batches)."""
    from datasets import Dataset
    from mteb._create_dataloaders import create_dataloader

    rows = Dataset.from_dict({"text": [SAMPLE_TEXT]})
    return create_dataloader(rows, task_metadata=_probe_task_base(), input_column="text", batch_size=1)


@cache
def _probe_task_base() -> TaskMetadata:
    import mteb

    return mteb.get_task("NFCorpus").metadata  # a plain English text retrieval task: queries and documents


def _probe_task(prompt: dict[str, str]) -> TaskMetadata:
    return _probe_task_base().model_copy(update={"name": PROBE_TASK, "prompt": prompt})


def _loader_class(loader: object) -> type | None:
    """MTEB's SentenceTransformer wrapper a loader builds (the loader itself, or the wrapper class a loader
    function constructs); None for any other implementation, which is never built by a probe."""
    from mteb.models.instruct_wrapper import InstructSentenceTransformerModel
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    wrappers = (InstructSentenceTransformerModel, SentenceTransformerEncoderWrapper)
    if isinstance(loader, type):
        return loader if issubclass(loader, wrappers) else None
    names = getattr(getattr(loader, "__code__", None), "co_names", ())
    return next((w for w in wrappers if w.__name__ in names), None)


# ------------------------------------------------------------------------------------------- the stand-in
class WeightlessST:
    """A SentenceTransformer as MTEB's wrappers use one, with no weights: it records each encode call and
    returns ones. Its prompts, default prompt name, sequence length and tokenizer are the model's when its
    files are local (a directory, or the hub cache at the revision; the tokenizer only on first use), so
    what sentence-transformers would prepend is resolved as for the real model; `config_known` says so."""

    def __init__(self, model_name_or_path: str, *, revision: str | None = None, **kwargs: Any) -> None:
        self.source, self.revision = model_name_or_path, revision
        self._cache_folder = kwargs.get("cache_folder")
        opened = _opened.get()
        if opened is not None:  # a listing's probe: its cached result depends on this repository's local files
            opened.append((str(model_name_or_path), None if self._cache_folder is None else str(self._cache_folder)))
        self._tokenizer_kwargs = dict(kwargs.get("tokenizer_kwargs") or {})
        config = self._local_json(_ST_CONFIG)
        self.config_known = config is not None
        config = config or {}
        self.prompts: dict[str, str] = {**(config.get("prompts") or {}), **(kwargs.get("prompts") or {})}
        self.default_prompt_name = kwargs.get("default_prompt_name") or config.get("default_prompt_name")
        self.max_seq_length = (self._local_json("sentence_bert_config.json") or {}).get("max_seq_length")
        self.truncate_dim = kwargs.get("truncate_dim")
        self.calls: list[tuple[str, list[Any], str | None, str | None, dict[str, Any]]] = []
        self._modules: dict[str, object] = {}
        self._tokenizer: Any = False  # False: not looked for yet
        self._blank = SimpleNamespace()

    def __setattr__(self, name: str, value: object) -> None:
        if name == "prompts" and "prompts" in self.__dict__:
            self.__dict__["config_known"] = True  # MTEB's wrapper replaced the model's prompts with its own
        super().__setattr__(name, value)

    # ---------------------------------------------------------------- what MTEB's wrappers call
    def encode(self, inputs: Any, prompt_name: str | None = None, prompt: str | None = None, **options: Any) -> Any:
        return self._record("encode", inputs, prompt_name, prompt, options)

    def encode_query(self, inputs: Any, prompt_name: str | None = None, prompt: str | None = None, **kw: Any) -> Any:
        return self._record("encode_query", inputs, prompt_name, prompt, kw)

    def encode_document(self, inputs: Any, prompt_name: str | None = None, prompt: str | None = None, **kw: Any) -> Any:
        return self._record("encode_document", inputs, prompt_name, prompt, kw)

    def _record(self, method: str, inputs: Any, prompt_name: str | None, prompt: str | None, options: Any) -> Any:
        import numpy as np

        texts = [inputs] if isinstance(inputs, str) else list(inputs)
        self.calls.append((method, texts, prompt_name, prompt, options))
        return np.ones((len(texts), self.get_sentence_embedding_dimension()), dtype=np.float32)

    def get_sentence_embedding_dimension(self) -> int:
        return int(self.truncate_dim or 8)

    get_embedding_dimension = get_sentence_embedding_dimension

    def parameters(self) -> Iterator[torch.nn.Parameter]:
        return iter(())

    def set_pooling_include_prompt(self, include_prompt: bool) -> None:
        """Pooling changes vectors, never which text is sent."""

    def _first_module(self) -> SimpleNamespace:
        config = SimpleNamespace(_attn_implementation=None)
        return SimpleNamespace(auto_model=SimpleNamespace(config=config), tokenizer=SimpleNamespace())

    def similarity(self, a: Array, b: Array) -> Array:
        from sentence_transformers.util import cos_sim

        return cos_sim(a, b)

    # ---------------------------------------------------------------- the model's local files
    @property
    def tokenizer(self) -> Any:
        """The local tokenizer, else a blank that takes the settings wrappers give it (padding side, EOS)."""
        return self.local_tokenizer if self.local_tokenizer is not None else self._blank

    @property
    def local_tokenizer(self) -> Any:
        """The model's tokenizer from local files only (no weights), or None when they are not local."""
        if self._tokenizer is False:
            self._tokenizer = None
            try:
                from transformers import AutoTokenizer

                self._tokenizer = AutoTokenizer.from_pretrained(
                    self.source,
                    revision=self.revision,
                    cache_dir=self._cache_folder,
                    local_files_only=True,
                    **self._tokenizer_kwargs,
                )
            except Exception:  # not local (or not loadable): tokens are estimated instead
                logger.debug("no local tokenizer for %s: tokens estimated", self.source, exc_info=True)
                self._tokenizer = None
        return self._tokenizer

    def _local_json(self, name: str) -> dict[str, Any] | None:
        """A small JSON file of the model's, read only from a local directory or the hub cache, within the
        bounds of bench/core/bounded.py (a downloaded repository's file is anyone's: one nested 100,000 deep
        would end a dry run with a RecursionError); one that cannot be read is as if absent."""
        path: Any = Path(self.source) / name
        if Path(self.source).is_dir() and not path.is_file():
            return {}  # a local model folder is all there is: a file it lacks, it has none of (never a hub id)
        if not path.is_file():
            from huggingface_hub import try_to_load_from_cache

            path = try_to_load_from_cache(self.source, name, cache_dir=self._cache_folder, revision=self.revision)
            if not isinstance(path, str):
                return {} if path is not None else None  # cached as absent: the model has none
        try:
            found = load_json_bounded(read_at_most(Path(path), MAX_CONFIG_BYTES), str(path))
        except (OSError, BenchError):
            return None
        return found if isinstance(found, dict) else None


@contextmanager
def weightless_sentence_transformers(*, offline: bool = False) -> Iterator[None]:
    """Within the block, every `SentenceTransformer` MTEB's wrappers build is a `WeightlessST`, and any
    other model a wrapper would load itself (a sentence-transformers `Transformer` module; with
    `offline` False, any transformers model's `from_pretrained`) is refused. `offline` (the listing's
    probes) also keeps the hub from being asked for anything, and spares importing transformers'
    modelling code, which nothing can then load weights through: the hub is not asked and the only
    local files a wrapper is given are reached through the stand-ins."""
    from contextlib import ExitStack
    from unittest import mock

    import huggingface_hub.constants

    def refuse(*args: object, **kwargs: object) -> NoReturn:
        raise _Unprobed("its wrapper loads model weights itself")

    with ExitStack() as stack:
        stack.enter_context(mock.patch("sentence_transformers.SentenceTransformer", WeightlessST))
        with warnings.catch_warnings():  # sentence-transformers 6 deprecates the old module path MTEB imports
            warnings.simplefilter("ignore", DeprecationWarning)
            stack.enter_context(mock.patch("sentence_transformers.models.Transformer", refuse))
        if offline:
            stack.enter_context(mock.patch.object(huggingface_hub.constants, "HF_HUB_OFFLINE", True))
        else:
            from transformers import PreTrainedModel

            stack.enter_context(mock.patch.object(PreTrainedModel, "from_pretrained", classmethod(refuse)))
        yield


def dry_run_tokens(model: Any, inputs: Sequence[object]) -> dict[str, Any]:
    """Tokens the inputs would give the model: by its tokenizer when local, else characters / 4."""
    st = getattr(model, "st", None)
    if isinstance(st, WeightlessST) and st.local_tokenizer is not None:
        return {
            "tokens": sum(model.token_lengths(cast("Sequence[ModelInput]", inputs))),
            "tokens_method": "the model's tokenizer",
        }
    texts = [_text_of(x) for x in inputs]
    return {
        "tokens": sum(math.ceil(len(t) / 4) for t in texts),
        "tokens_method": "an estimate of 4 characters a token (the model's tokenizer is not local)",
    }


def _text_of(model_input: object) -> str:
    """The text an input sends: a string, or MTEB's [prompt, text, task, options] (rows: their JSON)."""
    if isinstance(model_input, str):
        return model_input
    if isinstance(model_input, list) and len(model_input) == 4:
        return str(model_input[0]) + str(model_input[1])
    if isinstance(model_input, list) and len(model_input) == 3:  # a row an implementation of its own gets
        row = json.loads(model_input[2])
        return " ".join(str(v) for k, v in sorted(row.items()) if k in ("text", "title") and isinstance(v, str))
    return json.dumps(model_input, default=str)


@contextmanager
def weightless(model: Any) -> Iterator[None]:
    """Within the block `model` loads no weights: MTEB's SentenceTransformer wrappers are built around a
    `WeightlessST`, and an MTEB implementation of its own (no SentenceTransformer inside) is not built at
    all: its rows are counted as `MTEBModel` counts such rows, a row at a time, and compared by cosine."""
    from bench.adapters.mteb_model import MTEBModel

    meta = getattr(model, "registry_meta", None)
    own = isinstance(model, MTEBModel) and meta is not None and _loader_class(meta.loader) is None
    with weightless_sentence_transformers():
        if own:
            model._load = lambda: setattr(model, "impl", _Unbuilt())
        try:
            yield
        finally:
            if own:
                del model._load


class _Unbuilt:
    """An implementation that was not built: cosine similarity for the placeholder vectors of a dry run."""

    mteb_model_meta: ModelMeta | None = None

    def similarity(self, a: Array, b: Array) -> Array:
        from sentence_transformers.util import cos_sim

        return cos_sim(a, b)

    def similarity_pairwise(self, a: Array, b: Array) -> Array:
        from sentence_transformers.util import pairwise_cos_sim

        return pairwise_cos_sim(a, b)
