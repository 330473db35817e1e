"""When are two submitted results the same result? A re-run of one setting is (issue 32).

Two `bench run`s of one setting never write the same files: MTEB's TaskResult records the date and the
evaluation time, the run record the start time, the timings, the cache hits, the package versions and
the command line, and MTEB writes model_meta.json's training datasets (a set) in a hash-seeded order. So
the leaderboard compares a *view* of each result (`same_result_view`) instead of its bytes: everything the
result file, its run record and model_meta.json say, except what only says how a run went
(`VOLATILE_RESULT`, `VOLATILE_RECORD`, `VOLATILE_MODEL`, `RUNTIME_SETTINGS`), with model_meta.json's lists
of names compared as sets. What it keeps:

* the scores, every one exactly as submitted (not within a tolerance: a different last digit differs);
* the task (version, main metric, dataset path, revision and source, stand-in, instructions and their
  hash, limit, seed) and an instruction variant's block;
* the model: name, revision, content hash, family, experiment, every setting that is not a runtime one
  (dtype, template, readout ...), the identity check, the measured instruction use, the weights' facts,
  and the run's `resume_key` (its model fingerprint holds every vector option's value) but for runtime
  settings;
* model_meta.json whole (size, card, licence ... : what the row shows).

Left out, as how a run went rather than what it measured: dates, timings (`evaluation_time`,
`evaluation_phases`, `evaluation_seconds`, `started_at`), `kg_co2_emissions`, `encode` (counts, cache
hits, cache file, memory), the package versions, Python, platform, command line (it holds output
paths), the `--model` spelling (`spec`: name, revision and content say what the model is), the device
it ran on, and the runtime settings (batch size, device, API concurrency, retries, timeout, price).
A package version or device that changed a score shows in the scores, which must be equal.
Runtime-declared options that may change what a model sees or which model answers (`max_tokens`,
`base_url`, `trust_remote_code`, `revision`) are kept: a difference there is a conflict, the safe side.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from bench.core.fileio import sha256_json
from bench.core.json_types import JSON, JSONObject

VOLATILE_RESULT = frozenset({"date", "evaluation_time", "evaluation_phases", "kg_co2_emissions", "mteb_version"})
VOLATILE_RECORD = frozenset({"encode", "evaluation_seconds", "started_at", "versions", "python", "platform", "command"})
VOLATILE_MODEL = frozenset({"spec", "device"})
# Runtime options (bench/adapters/options.py `runtime_options`) about speed and place only; a test checks
# that each is declared runtime by some family, so this list can never leave out a vector option.
RUNTIME_SETTINGS = frozenset(
    {
        "batch_size",
        "device",
        "cache_dir",
        "use_cache",
        "show_progress_bar",
        "max_concurrency",
        "max_retries",
        "timeout",
        "price",
        "max_tokens_per_request",
        "tokens_per_s",
        "batch_latency_s",
    }
)


def same_result_view(result: dict[str, Any], record: dict[str, Any], model_meta: object) -> dict[str, Any]:
    """What must be equal for two results to be one: scores first, then the identity (module docstring)."""
    scores = {
        split: [_without(s, {"mteb_version"}) if isinstance(s, dict) else s for s in subsets]
        for split, subsets in result["scores"].items()
    }
    model = _without(record["model"], VOLATILE_MODEL)
    model["settings"] = _without(model.get("settings") or {}, RUNTIME_SETTINGS)
    kept = _without(record, VOLATILE_RECORD | {"model"})
    if isinstance(kept.get("resume_key"), dict) and isinstance(kept["resume_key"].get("settings"), dict):
        kept["resume_key"] = {
            **kept["resume_key"],
            "settings": _without(kept["resume_key"]["settings"], RUNTIME_SETTINGS),
        }
    return {
        "scores": scores,
        "result": _without(result, VOLATILE_RESULT | {"scores"}),
        "record": {**kept, "model": model},
        "model_meta": _names_as_sets(model_meta),
    }


def result_identity(result: dict[str, Any], record: dict[str, Any], model_meta: object) -> str:
    """sha256 of `same_result_view`: equal for a re-run of a result, different for any other result."""
    return sha256_json(same_result_view(result, record, model_meta))


def first_difference(views: Sequence[JSONObject]) -> tuple[str, list[JSON], int] | None:
    """(field, each view's value there, how many fields differ in all) for the first field (scores first)
    where `views` disagree; None when they are all the same. A field one view lacks has the value None."""
    flat = [dict(_leaves(v)) for v in views]
    fields = list(dict.fromkeys(k for f in flat for k in f))
    differ = [k for k in fields if len({sha256_json(f.get(k)) for f in flat}) > 1]
    if not differ:
        return None
    return differ[0], [f.get(differ[0]) for f in flat], len(differ)


def _without(value: dict[str, Any], keys: frozenset[str] | set[str]) -> dict[str, Any]:
    return {k: v for k, v in value.items() if k not in keys}


def _names_as_sets(value: object) -> object:
    """model_meta.json with every list of strings sorted: MTEB writes sets (training datasets, languages,
    frameworks) as lists in an order that differs from one process to the next."""
    if isinstance(value, dict):
        return {k: _names_as_sets(v) for k, v in value.items()}
    if isinstance(value, list):
        return sorted(value) if all(isinstance(v, str) for v in value) else [_names_as_sets(v) for v in value]
    return value


def _leaves(value: JSON, path: str = "") -> Iterator[tuple[str, JSON]]:
    """(path, value) of each leaf of a parsed JSON value (`scores.test[0].main_score`); an empty dict or
    list is a leaf. Depth is bounded before a submission's files are parsed (MAX_JSON_DEPTH)."""
    if isinstance(value, dict) and value:
        for k, v in value.items():
            yield from _leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list) and value:
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, value
