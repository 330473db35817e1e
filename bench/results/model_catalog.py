"""What MTEB's model registry says about each model the leaderboard may show, readable without MTEB.

A leaderboard row whose submission lacks a model fact (size, embedding width, licence ...) takes it from
MTEB's registry by the model's name (bench/leaderboard/facts.py `registry_facts`). Importing MTEB for that
costs seconds and ~300 MB on every build, so the facts of every registered model are read once and
cached (`$INSTRUCT_BENCH_CACHE/catalog/mteb-models-<hash of MTEB's version and FORMAT>.json`): the
registry ships with MTEB, so its version is the whole key. With the facts, each model's training datasets as
MTEB's leaderboard reads them for its zero-shot column (`ModelMeta.get_training_datasets()`, similar tasks
included: `training_datasets`), so a row's zero-shot facts need no MTEB either (bench/leaderboard/zero_shot.py); they
add ~8 s to the one build per MTEB version. Values are kept as MTEB gives them, except
that what JSON cannot hold (infinity, a date object) is stored as None; the leaderboard keeps only
positive, finite, short values anyway, and reads None as unknown.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import warnings
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, get_type_hints

from bench.core.fileio import read_cached, write_cached
from bench.core.paths import cache_root

if TYPE_CHECKING:
    from mteb.models import ModelMeta

logger = logging.getLogger(__name__)

Plain = str | int | float | None  # a value JSON holds exactly (`_plain`): anything else is None


class ModelFacts(TypedDict):
    """The ModelMeta fields the leaderboard shows, for one model of MTEB's registry; None where unknown."""

    n_parameters: Plain
    embed_dim: Plain
    max_tokens: Plain
    license: Plain
    release_date: Plain  # "YYYY-MM-DD" as MTEB holds it
    memory_usage_mb: Plain
    # the model's training datasets with their similar tasks (`ModelMeta.get_training_datasets()`, sorted; None
    # when the registry names none): what MTEB's leaderboard reads for its zero-shot column (bench/leaderboard/
    # zero_shot.py)
    training_datasets: list[str] | None


# The ModelMeta fields the leaderboard shows: ModelFacts' keys, in its order.
FIELDS = tuple(get_type_hints(ModelFacts))
# The layout of a cached file; a file of another (or none) is rebuilt, never misread.
FORMAT = 2


def catalog_path() -> Path:
    version = "none"
    with contextlib.suppress(metadata.PackageNotFoundError):
        version = metadata.version("mteb")
    key = hashlib.sha256(f"mteb {version}\0format {FORMAT}".encode()).hexdigest()[:16]
    return cache_root() / "catalog" / f"mteb-models-{key}.json"


@cache
def registry_facts() -> dict[str, ModelFacts]:
    """Model name -> {field: value} for every model MTEB's registry holds; empty when it cannot be read
    (then nothing is cached, and the next process asks again)."""
    path = catalog_path()
    found = read_cached(path, FORMAT)
    if found is not None:
        models: dict[str, ModelFacts] = found["models"]
        return models
    built = build()
    if built is None:
        return {}
    write_cached(path, {"format": FORMAT, "models": built}, what="MTEB model facts")
    return built


def build() -> dict[str, ModelFacts] | None:
    """The facts from MTEB's registry itself (imports MTEB); None when the registry cannot be listed.

    A name is looked up with `mteb.get_model_meta`, as a single lookup would; one it fails for is left out
    (unknown), as is a model without a name.
    """
    import mteb

    try:
        names = [m.name for m in mteb.get_model_metas() if m.name]
    except Exception:  # any registry failure means "unknown", never a build failure
        logger.debug("MTEB's model registry cannot be listed", exc_info=True)
        return None
    models: dict[str, ModelFacts] = {}
    for name in names:
        try:
            with warnings.catch_warnings():  # a renamed model's warning is MTEB's, not the reader's
                warnings.simplefilter("ignore")
                meta = mteb.get_model_meta(name)
        except Exception:  # noqa: BLE001 - as above
            continue
        models[name] = ModelFacts(
            n_parameters=_plain(meta.n_parameters),
            embed_dim=_plain(meta.embed_dim),
            max_tokens=_plain(meta.max_tokens),
            license=_plain(meta.license),
            release_date=_plain(meta.release_date),
            memory_usage_mb=_plain(meta.memory_usage_mb),
            training_datasets=_training(meta),
        )
    plain: dict[str, ModelFacts] = json.loads(json.dumps(models))  # what the cached copy reads back
    return plain


def _training(meta: ModelMeta) -> list[str] | None:
    """MTEB's `get_training_datasets()` of a registry entry, sorted (None: the registry names none, or MTEB
    fails on it: unknown, never a build failure)."""
    try:
        found = meta.get_training_datasets()
    except Exception:  # as in `build`: unknown (its cause logged, shown under -v)
        logger.debug("MTEB cannot list the training datasets of %s", meta.name, exc_info=True)
        return None
    return sorted(str(d) for d in found) if found is not None else None


def _plain(value: object) -> Plain:
    """`value` when JSON holds it exactly (a string, a bool, an int or a finite float), else None (a string
    subclass, such as an enum's value, becomes a plain string on the way through JSON)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return value if value is None or isinstance(value, str | int) else None
