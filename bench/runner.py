"""`bench run` as a function: resolve tasks and model, evaluate each task with MTEB, record how.

Tasks run one at a time through `mteb.evaluate`, so a task's score is exactly what MTEB computes for
the same task object and model. A finished task is reused only when its run record matches this run
(model settings, dataset revision, limit, seed, task version, instruction set); anything else is
recomputed, cheaply, because the embedding cache already holds the vectors.
"""

from __future__ import annotations

import logging
import platform
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

from bench.fileio import atomic_write_json
from bench.results import AtomicResultCache, read_json, result_path, run_record_path

logger = logging.getLogger("bench")

RECORD_VERSION = 1
VERSIONED_PACKAGES = (
    "instruct-bench", "mteb", "torch", "transformers", "sentence-transformers", "datasets",
    "numpy", "scipy", "scikit-learn",
)


@dataclass
class RunOptions:
    """Everything `bench run` takes; the CLI only fills this in."""

    model: str = "all-MiniLM-L6-v2"
    tasks: list[str] | None = None
    suite: str | None = None
    template: str | None = None
    batch_size: int = 32
    device: str | None = None
    dtype: str = "float32"
    data_dir: str | None = None
    output_dir: str = "results"
    cache_dir: str | None = None
    use_cache: bool = True
    limit: int | None = None
    overwrite: bool = False
    seed: int = 42
    show_progress_bar: bool | None = None


@dataclass
class TaskOutcome:
    """One row of the summary: the task's scores and how they were obtained."""

    task: str
    main_score_name: str
    main_score: float
    scores: dict[str, Any]
    status: str  # "computed" or "reused"
    record: dict[str, Any] = field(default_factory=dict)


def run(options: RunOptions) -> list[TaskOutcome]:
    """Evaluate the model on the tasks; return one outcome per task, in order."""
    import mteb

    from adapters.registry import load_model
    from tasks import get_tasks, task_names

    names = task_names(tasks=options.tasks, suite=options.suite)
    tasks = get_tasks(names, data_dir=options.data_dir, limit=options.limit, seed=options.seed)
    model = load_model(
        options.model,
        template=options.template,
        batch_size=options.batch_size,
        device=options.device,
        dtype=options.dtype,
        cache_dir=options.cache_dir,
        use_cache=options.use_cache,
        show_progress_bar=options.show_progress_bar,
    )
    store = AtomicResultCache(options.output_dir)
    outcomes = []
    for i, task in enumerate(tasks, start=1):
        name = task.metadata.name
        key = _resume_key(model, task, options)
        record_path = run_record_path(store, model.mteb_model_meta, name)
        previous = None if options.overwrite else _reusable(store, model, name, key)
        if previous is not None:
            logger.info("[%d/%d] %s: finished earlier with the same settings, reused", i, len(tasks), name)
            outcomes.append(_outcome(task, *previous, "reused"))
            continue
        logger.info("[%d/%d] %s: evaluating %s", i, len(tasks), name, model.name)
        record_path.unlink(missing_ok=True)
        before, started, tick = model.stats.copy(), datetime.now(UTC), time.perf_counter()
        mteb.evaluate(
            model,
            task,
            cache=store,
            overwrite_strategy="always",
            encode_kwargs={"batch_size": options.batch_size},
            show_progress_bar=False,
            co2_tracker=False,
        )
        seconds = time.perf_counter() - tick
        record = _run_record(model, task, options, key, model.stats.minus(before), started, seconds)
        atomic_write_json(record_path, record)
        data = read_json(result_path(store, model.mteb_model_meta, name))
        outcome = _outcome(task, data, record, "computed")
        logger.info(
            "[%d/%d] %s: %s = %.4f (%.1fs)", i, len(tasks), name, outcome.main_score_name, outcome.main_score, seconds
        )
        outcomes.append(outcome)
    return outcomes


def _reusable(
    store: AtomicResultCache, model: Any, task_name: str, key: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(result, run record) of a finished task whose record matches this run, else None."""
    data = read_json(result_path(store, model.mteb_model_meta, task_name))
    record = read_json(run_record_path(store, model.mteb_model_meta, task_name))
    if not data or not record or record.get("resume_key") != key:
        return None
    try:
        data["scores"]["test"][0]["main_score"]
    except (KeyError, IndexError, TypeError):
        return None
    return data, record


def _outcome(task: Any, data: dict[str, Any], record: dict[str, Any], status: str) -> TaskOutcome:
    scores = {k: v for k, v in data["scores"]["test"][0].items() if k not in ("hf_subset", "languages", "mteb_version")}
    return TaskOutcome(
        task=task.metadata.name,
        main_score_name=task.metadata.main_score,
        main_score=float(scores["main_score"]),
        scores=scores,
        status=status,
        record=record,
    )


def _resume_key(model: Any, task: Any, options: RunOptions) -> dict[str, Any]:
    """What must match for a finished task to be reused."""
    return {
        "record_version": RECORD_VERSION,
        "model": model.name,
        "model_revision": model.revision,
        "model_fingerprint": model.fingerprint,
        "settings": {k: v for k, v in model.settings().items() if k != "batch_size"},
        "task_version": task.task_version,
        "dataset_revision": task.metadata.revision,
        "instructions_sha256": task.instruction_set_sha256(),
        "limit": options.limit,
        "seed": options.seed,
    }


def _run_record(
    model: Any, task: Any, options: RunOptions, key: dict[str, Any], stats: Any, started: datetime, seconds: float
) -> dict[str, Any]:
    meta = task.metadata
    return {
        "record_version": RECORD_VERSION,
        "task": {
            "name": meta.name,
            "version": task.task_version,
            "type": meta.type,
            "main_score": meta.main_score,
            "dataset": {"path": meta.dataset["path"], "revision": meta.revision, "source": task.data_source},
            "instructions": task.instruction_set(),
            "instructions_sha256": task.instruction_set_sha256(),
            "limit": options.limit,
            "seed": options.seed,
        },
        "model": {
            "spec": options.model,
            "name": model.name,
            "revision": model.revision,
            "family": model.family,
            "experiment": model.mteb_model_meta.experiment_kwargs or {},
            "settings": model.settings(),
            "device": model.device,
        },
        "encode": {
            "texts_requested": stats.requested,
            "unique_inputs": stats.unique,
            "cache_hits": stats.cache_hits,
            "texts_encoded": stats.encoded,
            "encode_seconds": round(stats.encode_seconds, 4),
            "cache": str(model.cache.path) if model.cache is not None else None,
        },
        "evaluation_seconds": round(seconds, 4),
        "started_at": started.isoformat(),
        "versions": package_versions(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "command": sys.argv,
        "resume_key": key,
    }


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in VERSIONED_PACKAGES:
        try:
            out[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            out[name] = None
    return out


__all__ = ["RunOptions", "TaskOutcome", "run"]
