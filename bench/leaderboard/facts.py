"""Model facts as the leaderboard shows them (size, dimension, licence, release date, links), whoever
claims them: a submission's model_meta.json, MTEB's model registry, a paper's table, MTEB's published
ModelMeta.

Why one module: a submitted row (bench/leaderboard/rows.py) and a reported or published one
(bench/leaderboard/external.py) fill the same columns and filters, so each fact is checked once, the same
way, for both: a value of the wrong type, out of range or too long is None (shown as "—"), never shown as
given; a link is an http(s) address or nothing, so no source's text becomes a `javascript:` link.
"""

from __future__ import annotations

import math
import re
from typing import TypedDict

from bench.results import model_catalog

SIZE_BUCKETS = (("<100M", 10**8), ("100M–1B", 10**9), ("1B–10B", 10**10), (">10B", None))  # label, below
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
MAX_LINK = 500  # characters of a link a source gives


def positive_int(value: object) -> int | None:
    """A positive integer (a parameter count, a dimension), else None; a bool is no number."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def positive_number(value: object) -> int | float | None:
    """A positive finite number (JSON has no infinity), else None; a whole float as an int (MTEB's 256.0 -> 256)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        return None
    return int(value) if isinstance(value, float) and value.is_integer() else value


def short_text(value: object, limit: int = 100) -> str | None:
    """A non-empty string of at most `limit` characters (a licence, a family), else None."""
    return value if isinstance(value, str) and 0 < len(value) <= limit else None


def iso_date(value: object) -> str | None:
    """A YYYY-MM-DD date as text, else None."""
    return value if isinstance(value, str) and DATE.match(value) else None


def web_link(value: object) -> str | None:
    """An http(s) address to link, else None: a source's text never becomes a `javascript:` link."""
    return (
        value
        if isinstance(value, str) and value.startswith(("https://", "http://")) and len(value) <= MAX_LINK
        else None
    )


class RegistryFacts(TypedDict, total=False):
    """What MTEB's registry says of a model, each fact checked (None where it gives none that passes)."""

    n_parameters: int | None
    embed_dim: int | None
    max_tokens: int | float | None
    license: str | None
    release_date: str | None  # YYYY-MM-DD
    memory_usage_mb: int | float | None


def registry_facts(name: str) -> RegistryFacts:
    """The facts MTEB's registry gives for a model of this name (empty when it has none).

    Read from a cache of the whole registry (bench/results/model_catalog.py), so a build imports MTEB only
    once per MTEB version, and a name the registry lacks costs a dict lookup, not MTEB's search for close
    matches (`mteb.get_model_meta`: ~10 ms a name; 1,000 rows took 19 s)."""
    known = model_catalog.registry_facts().get(name)
    if known is None:
        return {}
    return {
        "n_parameters": positive_int(known["n_parameters"]),
        "embed_dim": positive_int(known["embed_dim"]),
        "max_tokens": positive_number(known["max_tokens"]),
        "license": short_text(known["license"]),
        "release_date": iso_date(known["release_date"]),
        "memory_usage_mb": positive_number(known["memory_usage_mb"]),
    }


def registry_training(name: str) -> frozenset[str] | None:
    """The datasets MTEB's registry says the model `name` was trained on, similar tasks included
    (`ModelMeta.get_training_datasets`, cached with its facts: bench/results/model_catalog.py); None when the
    registry does not know the name or names no training data. A row's zero-shot facts read it
    (bench/leaderboard/zero_shot.py)."""
    known = model_catalog.registry_facts().get(name) if HUB_ID.match(name) else None
    found = known["training_datasets"] if known is not None else None
    return frozenset(str(d) for d in found) if isinstance(found, list) else None


def size_bucket(n_parameters: int | None) -> str | None:
    """The size class the site filters by: "<100M", "100M–1B", "1B–10B", ">10B"; None when unknown."""
    if not n_parameters:
        return None
    return next(label for label, below in SIZE_BUCKETS if below is None or n_parameters < below)
