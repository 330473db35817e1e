"""Loading Hugging Face language models and reading their hidden states, shared by the LM families.

The families (generative InBedder-style readouts, PromptEOL/MetaEOL) differ in prompts and in which
states they average; the plumbing is the same: a tokenizer with the right padding side, a model in the
run's dtype on the run's device, left-padded batches whose position ids ignore the padding (as
`generate` computes them, so a padded batch gives what each input gives alone), and a layer index
that accepts negative values like Python lists. A path ending in `.gguf` is loaded through transformers'
GGUF support (`from_pretrained(folder, gguf_file=name)`; needs the `gguf` package, extra `[generative]`),
so `--model inbedder:SmolLM2-135M-Instruct.Q4_1.gguf` needs no conversion by hand. What a local GGUF file
loads to (config, tokenizer, de-quantised weights in the run's dtype) is kept on disk after the first load
(bench/adapters/gguf_cache.py), so later runs neither parse nor de-quantise the file again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_args

from bench.core.errors import ConfigError, ModelLoadError

if TYPE_CHECKING:
    import torch

    from bench.adapters.gguf_cache import CacheUse, GGUFCache

T = TypeVar("T")

# A Literal, so that the option parser checks `architecture` (bench/adapters/options.py `spelled_out`).
Architecture = Literal["auto", "causal", "masked", "seq2seq"]
ARCHITECTURES: tuple[Architecture, ...] = get_args(Architecture)


class GGUFWeights:
    """An LM family's record of where a local GGUF file's weights came from, for the run record's
    `encode.gguf_cache` (bench/run/runner.py): "hit" (the de-quantised copy in the GGUF cache, which is
    checked for damage, not for tampering: bench/adapters/gguf_cache.py), "built" (de-quantised now and kept)
    or "off" (de-quantised now, nothing kept). None: not a local GGUF file, or not loaded in this process."""

    gguf_cache: CacheUse | None = None

    def note_gguf_cache(self, use: CacheUse) -> None:
        self.gguf_cache = use


def _source(path: str, revision: str | None) -> tuple[str, dict[str, Any]]:
    """(folder or hub id, from_pretrained kwargs) for a model path, hub id or GGUF file."""
    from bench.adapters.gguf_file import split_gguf

    folder, gguf = split_gguf(path)
    kwargs: dict[str, Any] = {"revision": _hub_revision(path, revision)}
    if gguf:
        kwargs["gguf_file"] = gguf
    return folder, kwargs


def _gguf_cache(path: str) -> GGUFCache | None:
    """The on-disk cache of a local GGUF file's loads, or None (not a GGUF file, or not a local one)."""
    from bench.adapters.gguf_cache import gguf_cache
    from bench.adapters.gguf_file import split_gguf

    folder, gguf = split_gguf(path)
    return gguf_cache(Path(folder) / gguf) if gguf else None


def _load(
    path: str,
    part: str,
    *,
    fresh: Callable[[], T],
    from_folder: Callable[[Path], T],
    save: Callable[[T, Path], object],
    what: str,
    keep: Callable[[T], bool] = lambda _: True,
    on_cache: Callable[[CacheUse], object] | None = None,
) -> T:
    """`fresh()`, or for a local GGUF file its `part` from the GGUF cache (bench/adapters/gguf_cache.py): read
    with `from_folder` and named by the file's folder, as `fresh()` names it; else built and kept there.
    `on_cache` is told where a GGUF file's part came from (not called for any other model)."""
    cache = _gguf_cache(path)
    if cache is None:
        return fresh()
    folder = str(cache.file.parent)

    def cached(saved: Path) -> T:
        obj = from_folder(saved)
        config = getattr(obj, "config", obj)
        if hasattr(config, "_name_or_path"):
            config._name_or_path = folder
        if hasattr(obj, "name_or_path") and not hasattr(obj, "config"):  # a tokenizer
            setattr(obj, "name_or_path", folder)  # noqa: B010 (any loaded object: no attribute to name)
        return obj

    loaded, use = cache.load(part, fresh=fresh, from_folder=cached, save=save, what=what, keep=keep)
    if on_cache is not None:
        on_cache(use)
    return loaded


def load_tokenizer(path: str, *, revision: str | None, padding_side: str, truncation_side: str) -> Any:
    from transformers import AutoTokenizer

    folder, kwargs = _source(path, revision)
    sides = {"padding_side": padding_side, "truncation_side": truncation_side}
    try:
        tokenizer = _load(
            path,
            "tokenizer",
            fresh=lambda: AutoTokenizer.from_pretrained(folder, **sides, **kwargs),
            from_folder=lambda saved: AutoTokenizer.from_pretrained(saved, **sides),
            save=lambda tok, out: tok.save_pretrained(out),
            what="reading the tokenizer",
        )
    except Exception as e:
        raise ModelLoadError(_load_message("tokenizer", path, e)) from e
    tokenizer.padding_side, tokenizer.truncation_side = padding_side, truncation_side
    if tokenizer.pad_token_id is None:  # as InBedder and most LM embedders do
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def detect_architecture(path: str, revision: str | None) -> str:
    """causal, masked or seq2seq from the model config (`architectures`, `is_encoder_decoder`)."""
    from transformers import AutoConfig

    folder, kwargs = _source(path, revision)
    try:
        config = _load(
            path,
            "config",
            fresh=lambda: AutoConfig.from_pretrained(folder, **kwargs),
            from_folder=AutoConfig.from_pretrained,
            save=lambda cfg, out: cfg.save_pretrained(out),
            what="reading the config",
        )
    except Exception as e:
        raise ModelLoadError(_load_message("config", path, e)) from e
    if getattr(config, "is_encoder_decoder", False):
        return "seq2seq"
    names = " ".join(getattr(config, "architectures", None) or [])
    if "MaskedLM" in names or (not names and config.model_type in ("bert", "roberta", "deberta-v2", "electra")):
        return "masked"
    return "causal"


def load_lm(
    path: str,
    *,
    architecture: str,
    revision: str | None,
    dtype: str,
    device: str,
    on_gguf_cache: Callable[[CacheUse], object] | None = None,
) -> Any:
    """The LM head model for `architecture`, in eval mode on `device`; for a local GGUF file, `on_gguf_cache`
    is told whether its weights came from the GGUF cache (the run record's `encode.gguf_cache`)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoModelForSeq2SeqLM

    classes = {"causal": AutoModelForCausalLM, "masked": AutoModelForMaskedLM, "seq2seq": AutoModelForSeq2SeqLM}
    if architecture not in classes:
        raise ConfigError(f"Unknown architecture '{architecture}'; choose one of {', '.join(ARCHITECTURES)}.")
    folder, kwargs = _source(path, revision)
    cls, torch_dtype = classes[architecture], getattr(torch, dtype)
    from bench.adapters import gguf_cache

    try:
        model = _load(
            path,
            f"model-{architecture}-{dtype}",
            fresh=lambda: cls.from_pretrained(folder, dtype=torch_dtype, **kwargs),
            from_folder=lambda saved: cls.from_pretrained(saved, dtype=torch_dtype),
            save=lambda built, out: gguf_cache.save_dense(built, out),
            keep=gguf_cache.is_dense,
            what=f"de-quantising the weights to {dtype}",
            on_cache=on_gguf_cache,
        )
    except Exception as e:
        raise ModelLoadError(_load_message(f"{architecture} LM", path, e)) from e
    return model.to(device).eval()


def lm_facts(model: torch.nn.Module) -> dict[str, int | None]:
    """Size and hidden size of a loaded LM, for model_meta.json (a GGUF file or local folder has no registry entry)."""
    config = getattr(model, "config", None)
    hidden = getattr(config, "hidden_size", None) or getattr(config, "d_model", None)
    return {"n_parameters": sum(p.numel() for p in model.parameters()), "embed_dim": hidden}


def causal_position_ids(attention_mask: torch.Tensor) -> torch.Tensor:
    """Positions counted over real tokens only (left padding gets position 1, as in `generate`)."""
    positions = attention_mask.long().cumsum(-1) - 1
    return positions.masked_fill(attention_mask == 0, 1)


def layer_index(layer: int, n_states: int) -> int:
    """`layer` into `hidden_states` (0 = embeddings, n-1 = last layer; negative counts from the end)."""
    index = layer if layer >= 0 else n_states + layer
    if not 0 <= index < n_states:
        raise ConfigError(
            f"layer {layer} does not exist: this model has {n_states} hidden states "
            f"(0 = embeddings .. {n_states - 1} = last layer; -1 = last)."
        )
    return index


def _hub_revision(path: str, revision: str | None) -> str | None:
    return None if Path(path).exists() or (revision or "").startswith("local-") else revision


def _load_message(what: str, path: str, error: Exception) -> str:
    return (
        f"Could not load the {what} from '{path}' ({type(error).__name__}: {str(error).splitlines()[0][:200]}). "
        f"Check the path or hub id; offline, use a local directory."
    )
