"""Result files: MTEB's TaskResult layout, written atomically, plus one run record per (model, task).

    OUTPUT/<org>__<model>/<revision>/[experiments/<name>/]<Task>.json        MTEB TaskResult
    OUTPUT/<org>__<model>/<revision>/[experiments/<name>/]run_records/<Task>.json
    OUTPUT/<org>__<model>/<revision>/[experiments/<name>/]model_meta.json     MTEB ModelMeta.to_dict()
    OUTPUT/<org>__<model>/<revision>/[experiments/<name>/]run_settings.jsonl  MTEB run settings, merged
    OUTPUT/<org>__<model>/<revision>/[experiments/<name>/]predictions/<Task>_predictions.json  `--save-predictions`

MTEB's own loaders (`mteb.ResultCache(OUTPUT).load_results()`) read the TaskResult files; the run
record says how the number was made (versions, revisions, instructions and their hashes, seed, encode
counts and time) and is what `bench run` checks before reusing a finished task.

The three MTEB files are written (bench/results/result_cache.py `AtomicResultCache`) by MTEB's own
`ResultCache.save_to_cache`, byte for byte as it writes
them (run_settings.jsonl merged with the one already there, as MTEB merges it; the results repository's
CI refuses a result without it), but into a scratch cache inside OUTPUT; each file then replaces its
destination atomically (bench.core.fileio.atomic_write), the result last. A crash leaves the old files or the new ones,
never half a file; a leftover scratch folder (`OUTPUT/.saving-*`) is never read as a result.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, cast

from bench.core.bounded import brief, load_json_bounded
from bench.core.errors import DataError, EncodingError
from bench.core.json_types import JSON, JSONObject, object_at
from bench.core.run_record import RunRecord

if TYPE_CHECKING:
    from mteb import ResultCache
    from mteb.models import ModelMeta

logger = logging.getLogger(__name__)

RUN_RECORDS = "run_records"
# `bench run --save-predictions`: MTEB's per-sample files (its `prediction_folder`, `<Task>_predictions.json`), one
# folder below the result so that neither MTEB's loader (`*/*/*.json`) nor the tables read them as results.
PREDICTIONS = "predictions"
# OUTPUT/results/... holds only what MTEB's results repository can take (MTEB's tasks on MTEB's data);
# everything else (the harness's tasks, local copies, variants) is filed in the same layout under
# OUTPUT/instruct-bench/results/..., so `mteb submit-results --output-folder OUTPUT` never sends it.
HARNESS_RESULTS = "instruct-bench"
MODEL_META = "model_meta.json"  # MTEB's names for the files beside a result
RUN_SETTINGS = "run_settings.jsonl"
SCRATCH_PREFIX = ".saving-"  # MTEB's save_to_cache writes here first (inside OUTPUT: same file system)
RESULTS = {"what": "results", "option": "--output-dir"}  # how a storage error names what `bench run` writes
MAX_RESULT_BYTES = 64 * 2**20  # a TaskResult is a few KB; MTEB's largest multilingual ones a few MB
DAMAGED_FIX = (
    "Rerun its task with `bench run` (a damaged result is recomputed), or move the file out of the results folder."
)


class TaskResultFile(TypedDict):
    """MTEB's TaskResult file as `find_results` gives it: `result_problem` has checked `task_name` and that
    `scores` maps each split to a non-empty list of subsets, each with a finite `main_score`."""

    task_name: str
    scores: dict[str, list[JSONObject]]  # split -> one entry per subset (`hf_subset`, `main_score`, the metrics)
    dataset_revision: NotRequired[str]
    mteb_version: NotRequired[str]
    evaluation_time: NotRequired[float | None]
    kg_co2_emissions: NotRequired[float | None]


# (the TaskResult file, its JSON, its run record or None when MTEB alone wrote the result)
Found = tuple[Path, TaskResultFile, RunRecord | None]


def results_root(output_dir: str | Path, *, mtebs: bool) -> Path:
    """Where a result is filed: OUTPUT for MTEB's tasks on MTEB's data, else OUTPUT/instruct-bench."""
    return Path(output_dir) if mtebs else Path(output_dir) / HARNESS_RESULTS


def result_path(cache: ResultCache, meta: ModelMeta, task_name: str) -> Path:
    return cache.get_task_result_path(task_name, meta)


def run_record_path(cache: ResultCache, meta: ModelMeta, task_name: str) -> Path:
    return result_path(cache, meta, task_name).parent / RUN_RECORDS / f"{task_name}.json"


def predictions_folder(cache: ResultCache, meta: ModelMeta, task_name: str) -> Path:
    """Where `--save-predictions` puts a task's `<Task>_predictions.json` (the `prediction_folder` MTEB is given)."""
    return result_path(cache, meta, task_name).parent / PREDICTIONS


def load_result_json(path: Path, fix: str = DAMAGED_FIX) -> JSON:
    """A result file's or run record's JSON; a DataError naming the file and `fix` when it is not JSON,
    not UTF-8, too large, nested too deep for the recursive parser, or holds an integer Python will not
    read (or a lone surrogate, which no table could print)."""
    with path.open("rb") as f:
        raw = f.read(MAX_RESULT_BYTES + 1)
    return load_json_bounded(raw, str(path), error=DataError, max_bytes=MAX_RESULT_BYTES, unique_keys=False, fix=fix)


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON file's object, or None when it is missing, unreadable or not an object (to be recomputed)."""
    try:
        data = load_result_json(path, fix="It will be recomputed.")
        return data if isinstance(data, dict) else None  # not a JSON object: nothing a reader could use
    except FileNotFoundError:
        return None
    except DataError as e:
        logger.warning("%s", e)
        return None


def result_problem(data: Mapping[str, object]) -> str | None:
    """What keeps a TaskResult's main scores from being read, or None: `scores` must map each split to
    a list of subsets, each with a finite number as `main_score` (MTEB writes nothing else)."""
    if not isinstance(data.get("task_name"), str):
        return f"task_name is {brief(data.get('task_name'))}, not a task name"
    scores = data.get("scores")
    if not isinstance(scores, dict) or not scores:
        return f"'scores' is {brief(scores)}, not a mapping of split -> list of subsets"
    for split, entries in scores.items():
        if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
            return f"scores[{brief(split)}] is {brief(entries)}, not a list of subsets"
        for entry in entries:
            value = entry.get("main_score")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                return f"a main_score in scores[{brief(split)}] is {brief(value)}, not a number"
    return None


def refuse_undefined_main_score(task_name: str, scores: Mapping[str, Sequence[Mapping[str, object]]]) -> None:
    """An EncodingError naming the task when a main score MTEB computed is NaN or infinite.

    Such a score is no result: Spearman's correlation of identical similarities is NaN (a model or API that
    gives every text the same vector), and a NaN sorts and averages as nothing else does. Checked where
    results are saved, so neither the result file nor its run record is written, and a result an earlier
    run wrote stays as it was.
    """
    for split, entries in scores.items():
        for entry in entries:
            value = entry.get("main_score")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                subset = entry.get("hf_subset")
                where = f"split {brief(split)}" + (
                    f", subset {brief(subset)}" if subset not in (None, "default") else ""
                )
                raise EncodingError(
                    f"{task_name}: the main score came out {brief(value)} ({where}), so no result was written: the "
                    "model's vectors leave the metric undefined, as when every text gets the same vector. Check "
                    "the model's output (its pooling, or an API that answers every text with one vector)."
                )


def record_problem(record: JSON) -> str | None:
    """What keeps a run record from being read by the tables, or None (the fields `bench results` uses)."""
    if not isinstance(record, dict):
        return "it is not a JSON object"
    if not record:
        return None
    model = record.get("model")
    if not isinstance(model, dict) or not all(isinstance(model.get(k), str) for k in ("name", "revision")):
        return "'model' does not hold the model's name and revision as texts"
    if not isinstance(model.get("experiment") or {}, dict):
        return "'model.experiment' is not a mapping"
    for key in ("task", "variant"):
        if not isinstance(record.get(key) or {}, dict):
            return f"{key!r} is {brief(record.get(key))}, not a mapping"
    if not isinstance(object_at(record.get("task")).get("dataset") or {}, dict):
        return "'task.dataset' is not a mapping"
    variant = object_at(record.get("variant"))
    sets = variant.get("sets") or []
    if variant and not (
        isinstance(variant.get("label"), str)
        and isinstance(variant.get("set"), (str, type(None)))
        and isinstance(sets, list)
        and all(isinstance(s, str) for s in sets)
    ):
        return "'variant' does not hold label, set and sets as `bench run --instruction-variants` writes them"
    return None


def run_settings(record: dict[str, Any]) -> dict[str, Any]:
    """What one `bench run` fixed for a run record's result: results with equal settings were, or can be, computed together."""
    model, task = record["model"], record["task"]
    instructions = task.get("instructions")
    style = instructions.get("style") if isinstance(instructions, dict) else None
    return {
        "spec": model["spec"],
        "name": model["name"],
        "revision": model["revision"],
        "family": model.get("family"),
        "settings": model.get("settings") or {},
        "limit": task["limit"],
        "seed": task["seed"],
        "instruction_style": style,
    }


def main_score(result: Mapping[str, object], split: str = "test") -> float:
    """Mean main score over a TaskResult's subsets (one subset for the harness's tasks); a task MTEB
    evaluates on another split (dev, validation) gives that split's. `result` is a TaskResult
    `result_problem` passes (a `TaskResultFile`, or the leaderboard's JSON of one)."""
    scores = result["scores"]
    assert isinstance(scores, dict), "a TaskResult's scores map split -> subsets (result_problem)"
    entries = scores.get(split) or next(iter(scores.values()))
    return sum(e["main_score"] for e in entries) / len(entries)


def find_results(root: Path) -> list[Found]:
    """(path, TaskResult JSON, run record or None) for every result under `root`.

    A JSON file that is not a TaskResult is passed over; a damaged one (unreadable, or its scores or its
    run record not in the layout the tables read) is a DataError naming it: a table silently short of
    a result would look complete.
    """
    found: list[Found] = []
    root = Path(root)
    for path in sorted(root.rglob("*.json")):
        hidden = any(part.startswith(".") for part in path.relative_to(root).parts)  # a temp file, a scratch cache
        if path.name == MODEL_META or path.parent.name in (RUN_RECORDS, PREDICTIONS) or hidden:
            continue
        data = load_result_json(path)
        if not isinstance(data, dict) or "task_name" not in data or "scores" not in data:
            continue
        _refuse(path, result_problem(data))
        record_path = path.parent / RUN_RECORDS / path.name
        record = load_result_json(record_path) if record_path.is_file() else None
        _refuse(record_path, record_problem(record) if record is not None else None)
        # checked above: what the tables read of each is in the layout the types say
        found.append((path, cast(TaskResultFile, data), cast("RunRecord | None", record)))
    return found


def _refuse(path: Path, problem: str | None) -> None:
    if problem:
        raise DataError(f"{path}: {problem}. {DAMAGED_FIX}")
