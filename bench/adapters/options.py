"""A family's options, declared once: the keyword parameters of its constructor.

Every keyword parameter of a family class's `__init__` (and of the base `__init__`s it forwards
`**kwargs` to) is an option. An option changes vectors unless the family lists it in `runtime_options`
(batch size, device, endpoint retries ...). From that single declaration come

* the cache fingerprint: family, model, revision and every vector option's value, so a subclass that
  adds an option changing vectors cannot be served another setting's cached vectors;
* the MTEB experiment (the result folder): the family (unless MTEB itself would load the model with it)
  and every vector option that differs from its default, as short filesystem-safe labels;
* `bench list models`, the conversion of every option value against its annotation, whichever source
  gave it (`bench/adapters/option_values.py`), and the family's CLI flags (`cli_flags`).

Nothing here imports torch or mteb.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args, get_origin

if TYPE_CHECKING:
    from bench.core.json_types import JSON, JSONObject

# Constructor parameters the registry or runner fills in itself; never user options.
INTERNAL_PARAMS = frozenset({"self", "name", "source", "experiment_defaults"})
_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,39}")
# MTEB names an experiment folder `key_value` joined by `__`, and past 200 characters gives up on
# readability: `exp_<sha256>` (mteb.models.model_meta._serialize_experiment_kwargs_to_name).
MTEB_EXPERIMENT_NAME_LIMIT = 200
_SHORT_LABEL = 16


@dataclass(frozen=True)
class OptionInfo:
    """One constructor option of a family: its default and its annotation (as written)."""

    name: str
    default: Any
    annotation: str


@cache
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
            elif (
                p.kind is p.VAR_POSITIONAL
                or p.name in INTERNAL_PARAMS
                or (i == 1 and p.kind is p.POSITIONAL_OR_KEYWORD)
            ):
                continue
            elif p.name not in options:
                default = None if p.default is p.empty else p.default
                # as written: a string under `from __future__ import annotations`, else the object's own text
                annotation = p.annotation if isinstance(p.annotation, str) else inspect.formatannotation(p.annotation)
                annotation = spelled_out(annotation, getattr(init, "__globals__", {}))
                options[p.name] = OptionInfo(p.name, default, "" if p.annotation is p.empty else annotation)
        if not forwards:
            break
    return options


def spelled_out(annotation: str, namespace: Mapping[str, object]) -> str:
    """`Pooling | None` as `Literal['1st-gen', ...] | None`: each union member that names a `Literal` alias of
    the constructor's module spelled out, so that the option parser (bench/adapters/option_values.py, which
    reads an annotation as written) checks the value against the alias's values; other members stay as written."""
    members = [m.strip() for m in annotation.split("|")]
    spelled = []
    for member in members:
        alias = namespace.get(member) if member.isidentifier() else None
        if get_origin(alias) is Literal:
            member = f"Literal[{', '.join(repr(v) for v in get_args(alias))}]"
        spelled.append(member)
    return " | ".join(spelled) if spelled != members else annotation


def option_defaults(cls: type) -> dict[str, Any]:
    return {n: o.default for n, o in family_options(cls).items()}


def runtime_options(cls: type) -> frozenset[str]:
    """Options that never change which vector a text gets: the union over the class hierarchy."""
    names: set[str] = set()
    for klass in cls.__mro__:
        names |= set(klass.__dict__.get("runtime_options", ()))
    return frozenset(names)


def vector_options(cls: type, values: Mapping[str, JSON]) -> JSONObject:
    """The options in `values` that change vectors (every option not declared runtime)."""
    runtime = runtime_options(cls)
    return {k: v for k, v in values.items() if k not in runtime}


def public_value(value: Any) -> Any:
    """`value` as it may be written to results: a local path becomes its last component."""
    if isinstance(value, str) and ("/" in value or "\\" in value) and Path(value).expanduser().exists():
        return Path(value).expanduser().resolve().name
    if isinstance(value, dict):
        return {k: public_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [public_value(v) for v in value]
    return value


def experiment_label(value: object) -> str | int | float | bool | None:
    """A short, filesystem-safe, readable label for an option value in an experiment folder name.

    Scalars that are already safe stay as they are (`none`, `float16`, `1st-gen`, 256); anything else
    (a custom template, a list, a path) becomes a slug of it plus 8 hex of its sha256, so two values
    never share a label: `query-instruction-text-3fa2c1d0`.
    """
    if isinstance(value, bool | int | float) or value is None:
        return value
    if isinstance(value, str) and _SAFE.fullmatch(value):
        return value
    shown = public_value(value)
    text = shown if isinstance(shown, str) else json.dumps(shown, sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:8]
    slug = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:32].strip("-")
    return f"{slug}-{digest}" if slug else digest


def fit_experiment(experiment: Mapping[str, JSON]) -> JSONObject:
    """`experiment` with its longest labels shortened until MTEB's folder name fits its 200 characters.

    A setting with many long options (a re-encoder's hub id, filter words, a custom template) would
    otherwise be filed by MTEB as `exp_<hash>`, which no one can read. A shortened label keeps its first
    characters and 8 hex of its sha256 (`sentenc-1f2e3d4c`), so different values stay apart.
    """
    out = dict(experiment)

    def name_length() -> int:
        return len("__".join(f"{k}_{v}" for k, v in sorted(out.items())))

    while name_length() > MTEB_EXPERIMENT_NAME_LIMIT:
        longest = max(
            (k for k, v in out.items() if isinstance(v, str) and len(v) > _SHORT_LABEL),
            key=lambda k: len(str(out[k])),  # a str (the filter above)
            default=None,
        )
        if longest is None:
            break
        label = str(out[longest])
        out[longest] = f"{label[: _SHORT_LABEL - 9].rstrip('-.')}-{hashlib.sha256(label.encode()).hexdigest()[:8]}"
    return out
