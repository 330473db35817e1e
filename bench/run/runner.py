"""`bench run` as a function: resolve tasks and model, evaluate each task with MTEB, record how.

Tasks run one at a time through `mteb.evaluate`, so a task's score is exactly what MTEB computes for
the same task object and model. A finished task is reused only when its run record matches this run
(model settings, dataset revision, limit, seed, task version, instruction set); anything else is
recomputed, cheaply, because the embedding cache already holds the vectors.

An encoder may expose `usage(since=None) -> dict` (running totals such as API requests, retries, tokens
and cost; with `since`, what was used after that snapshot); the runner records each task's share in
the run record's `encode.usage`. `bench.run.dry_run` calls no model and writes nothing: it counts what each
task would send to the model (after the cache), and an encoder with `estimate_usage(inputs) -> dict` adds
its token/cost estimate.

Launched with `torchrun`/`accelerate launch`, every rank calls `run`: rank 0 evaluates as above and
shares encoding with the others, which only `serve` it (`bench/adapters/distributed/`) and return no
outcomes; results, run records and the table come from rank 0 alone.
"""

from __future__ import annotations

import logging
import platform
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from bench.adapters.options import public_value
from bench.core.errors import ConfigError, DataError, MissingDataError
from bench.core.fileio import atomic_write_json
from bench.core.json_types import JSONObject
from bench.core.redact import redact_value
from bench.core.run_record import EncodeBlock, ModelBlock, RankBusy, ResumeKey, RunRecord, TaskBlock
from bench.core.versions import package_versions
from bench.results import model_catalog
from bench.results.comparability import catalogue_version
from bench.results.deltas import public_spec
from bench.results.outcome import TaskOutcome
from bench.results.store import (
    RESULTS,
    predictions_folder,
    read_json,
    result_path,
    result_problem,
    results_root,
    run_record_path,
)
from bench.results.tables import format_score
from bench.run import predictions, reuse
from bench.run.instruction_style import instruction_style_for
from bench.run.run_options import RunOptions

if TYPE_CHECKING:  # they import MTEB: imported where a result is stored (`result_store`), or never
    from bench.adapters.base import EncodeStats
    from bench.core.variants import Variant, VariantFile
    from bench.results.result_cache import AtomicResultCache
    from bench.run.protocols import RunModel, RunTask

logger = logging.getLogger("bench")

RECORD_VERSION = 1


def run(options: RunOptions) -> list[TaskOutcome]:
    """Evaluate the model on the tasks; return one outcome per task, in order (none on ranks but 0)."""
    from bench.adapters.distributed import world_from_env

    world = world_from_env()
    if world is None:
        reused = reuse.reused_run(options)  # every task finished with these settings: no MTEB, no model
        return reused if reused is not None else _evaluate(options)
    from bench.adapters.distributed import serve, session

    with session(world):
        if not world.is_main:
            serve(build_model(options))
            return []
        return _evaluate(options)


def _evaluate(options: RunOptions) -> list[TaskOutcome]:
    digest = reuse.request_digest(options) if reuse.eligible(options) else None
    variants = load_run_variants(options)
    jobs = task_jobs(build_tasks(options, variants), variants)
    model = build_model(options)
    if build_model.__module__ != __name__ or not reuse.from_package(model):  # not the options' model: no plan
        digest = None
    stores: dict[Path, AtomicResultCache] = {}
    outcomes = []
    for i, (task, variant) in enumerate(jobs, start=1):
        store = result_store(stores, options.output_dir, task)
        with variant_experiment(model, variant):
            outcomes.append(_evaluate_one(model, task, options, store, f"[{i}/{len(jobs)}]", variant, variants))
    model_catalog.registry_facts()  # MTEB is imported now: cache its model facts, so a leaderboard build needs no MTEB
    reuse.remember(options, digest, outcomes)  # so that a rerun of it decides "reused" without MTEB
    return outcomes


def rank_usage() -> list[dict[str, float]] | None:
    """Each rank's seconds of encoding and scoring so far, in a launched run (rank 0's view)."""
    from bench.adapters.distributed import usage

    return usage()


def rank_busy(before: list[dict[str, float]], after: list[dict[str, float]] | None, wall: float) -> list[RankBusy]:
    """Per rank, what one task took of it: seconds encoding (the accelerator's work) and scoring, and the
    share of the task's wall time spent encoding (how busy the harness kept that accelerator)."""
    rows: list[RankBusy] = []
    for old, new in zip(before, after or before, strict=True):
        encode, score = new["encode_s"] - old["encode_s"], new["score_s"] - old["score_s"]
        rows.append(
            {
                "rank": int(new["rank"]),
                "encode_seconds": round(encode, 3),
                "score_seconds": round(score, 3),
                "encode_busy": round(encode / wall, 4) if wall > 0 else 0.0,
            }
        )
    return rows


def result_store(stores: dict[Path, AtomicResultCache], output_dir: str, task: RunTask) -> AtomicResultCache:
    """The result cache a task's result goes to (bench/results/store.py `results_root`): MTEB's tasks on MTEB's
    data in OUTPUT, where `mteb submit-results` looks; anything else under OUTPUT/instruct-bench."""
    from bench.results.result_cache import AtomicResultCache
    from bench.tasks.mteb_compat import is_mtebs_task

    root = results_root(output_dir, mtebs=is_mtebs_task(task))
    if not stores:  # the folder the user named first: a file in its way is named as such
        stores[Path(output_dir)] = AtomicResultCache(output_dir)
    if root not in stores:
        stores[root] = AtomicResultCache(root)
    return stores[root]


def _evaluate_one(
    model: RunModel,
    task: RunTask,
    options: RunOptions,
    store: AtomicResultCache,
    step: str,
    variant: Variant | None = None,
    variants: VariantFile | None = None,
) -> TaskOutcome:
    """One task (or one instruction variant of it) through `mteb.evaluate`, or its earlier result reused."""
    import mteb

    from bench.run import shift

    name = task.metadata.name
    shown = f"{name} [{variant.label}]" if variant is not None else name
    key = _resume_key(model, task, options)
    record_path = run_record_path(store, model.mteb_model_meta, name)
    saving = predictions_folder(store, model.mteb_model_meta, name) if options.save_predictions else None
    previous = None if options.overwrite else _reusable(store, model, name, key, saving)
    if previous is not None:
        logger.info("%s %s: finished earlier with the same settings, reused", step, shown)
        return _outcome(task, *previous, "reused", result_path(store, model.mteb_model_meta, name))
    logger.info("%s %s: evaluating %s", step, shown, model.name)
    # The old record stays until the new result is written: a failed rerun loses nothing.
    # mteb.evaluate imports sentence-transformers first thing (~3 s): before the clock, not inside the first
    # task's time (a rerun that reuses every task never gets here, and imports no model stack).
    import sentence_transformers  # noqa: F401

    before, usage_before = model.stats.copy(), model_usage(model)
    ranks_before = rank_usage()
    started, tick = datetime.now(UTC), time.perf_counter()
    if hasattr(task, "run_items"):  # the harness's own tasks keep their per-item outcomes (bench/core/bootstrap.py)
        task.run_items = None
    scratch = predictions.scratch_folder(saving, name) if saving is not None else None
    with shift.collecting(model, options.shift_sample) as instructed:
        mteb.evaluate(
            model,
            task,
            cache=store,
            overwrite_strategy="always",
            encode_kwargs={"batch_size": model.batch_size},
            show_progress_bar=False,
            co2_tracker=False,
            prediction_folder=scratch,
        )
    instruction_shift = shift.measure(model, task.metadata, instructed, options.shift_sample)  # its encodes: in `stats`
    seconds = time.perf_counter() - tick
    usage = model_usage(model, since=usage_before) if usage_before is not None else None
    record = _run_record(model, task, options, key, model.stats.minus(before), started, seconds, usage)
    if ranks_before is not None:
        record["encode"]["ranks"] = rank_busy(ranks_before, rank_usage(), seconds)
    if instruction_shift is not None:
        record["instruction_shift"] = instruction_shift
    if variant is not None and variants is not None:
        record["variant"] = variant.record(variants)
    if (items := getattr(task, "run_items", None)) is not None:
        from bench.core.bootstrap import bounded_items

        record["items"] = bounded_items(items)
    if saving is not None and scratch is not None:  # MTEB's file from `scratch`, or the harness task's items
        where = {"hf_subset": task.hf_subsets[0], "hf_split": task.metadata.eval_splits[0]}
        # None: the task type saves none (then a rerun under the flag reuses the task all the same)
        record["predictions"] = predictions.keep_predictions(
            scratch, saving, name, model.mteb_model_meta, items, **where
        )
    try:
        atomic_write_json(record_path, record, **RESULTS)
    except BaseException:  # the new result is written: the old record no longer describes it
        record_path.unlink(missing_ok=True)
        raise
    path = result_path(store, model.mteb_model_meta, name)
    data = read_json(path)
    if data is None:
        raise DataError(f"{path}: mteb.evaluate wrote no readable result for {name}.")
    outcome = _outcome(task, data, record, "computed", path)
    logger.info(
        "%s %s: %s = %s (%.1fs)", step, shown, outcome.main_score_name, format_score(outcome.main_score), seconds
    )
    return outcome


# ---------------------------------------------------------------------------------------- instruction variants
def load_run_variants(options: RunOptions) -> VariantFile | None:
    """The run's variants file (bench/core/variants.py), or None; task names in it are checked here."""
    if not options.instruction_variants:
        return None
    from bench.core.variants import VariantFile, load_variants
    from bench.tasks import TASKS
    from bench.tasks.mteb_compat import mteb_registry

    if isinstance(options.instruction_variants, VariantFile):  # built in code (leaderboard verify)
        return options.instruction_variants
    return load_variants(options.instruction_variants, known_tasks={**mteb_registry(), **TASKS})


def task_jobs(tasks: list[RunTask], variants: VariantFile | None) -> list[tuple[RunTask, Variant | None]]:
    """(task, None) for each task, each followed by (its copy under a variant, variant) per variant.

    The copies are made before anything is evaluated (bench/tasks/variants.py says why); the variants of a
    task run right after it, so the encoder's in-memory store of the task's vectors serves them.
    """
    from bench.tasks.variants import variant_task

    jobs: list[tuple[RunTask, Variant | None]] = []
    for task in tasks:
        own = variants.for_task(task.metadata.name) if variants is not None else []
        # a copy is of the task's own class (`variant_task` subclasses it), so a RunTask too
        copies: list[tuple[RunTask, Variant | None]] = [
            (cast("RunTask", variant_task(task, v.instruction)), v) for v in own
        ]
        jobs += [(task, None), *copies]
    if variants is None:
        return jobs
    if len(jobs) == len(tasks):
        raise ConfigError(
            f"--instruction-variants {variants.name}: none of this run's tasks is in the file "
            f"(it has {', '.join(variants.variants)}); name them with --tasks."
        )
    unused = sorted(set(variants.variants) - {t.metadata.name for t in tasks})
    if unused:
        logger.warning(
            "--instruction-variants %s: not in this run, so not varied: %s", variants.name, ", ".join(unused)
        )
    return jobs


@contextmanager
def variant_experiment(model: RunModel, variant: Variant | None) -> Iterator[None]:
    """Within the block, the model's MTEB experiment also names the variant (its results folder)."""
    if variant is None:
        yield
        return
    from bench.adapters.options import fit_experiment
    from bench.core.variants import EXPERIMENT_KEY

    meta = model.mteb_model_meta
    experiment = fit_experiment({**(meta.experiment_kwargs or {}), EXPERIMENT_KEY: variant.label})
    model.mteb_model_meta = meta.model_copy(update={"experiment_kwargs": experiment})
    try:
        yield
    finally:
        model.mteb_model_meta = meta


def build_tasks(options: RunOptions, variants: VariantFile | None = None) -> list[RunTask]:
    """The run's task objects (unknown names fail here, before any model is built).

    A named task without local data is an error; a suite run skips such tasks with a warning, so that
    `--suite gstransform --data-dir D` runs every task whose data was built instead of none.
    """
    from bench.tasks import get_tasks, task_names
    from bench.tasks.data import default_data_dir

    if variants is not None and not options.tasks and not options.suite:  # the file's tasks
        options = replace(options, tasks=list(variants.variants))
    names = task_names(tasks=options.tasks, suite=options.suite)
    source, style = prompt_source(options), instruction_style_for(options.model, options.instruction_style)

    def tasks_of(some: list[str]) -> list[RunTask]:
        return get_tasks(
            some,
            data_dir=options.data_dir,
            limit=options.limit,
            seed=options.seed,
            prompt_source=source,
            instruction_style=style,
        )

    if options.tasks or not (options.data_dir or default_data_dir()):
        return tasks_of(names)
    tasks: list[RunTask] = []
    for name in names:
        try:
            tasks += tasks_of([name])
        except MissingDataError as e:
            logger.warning("skipped %s: %s", name, e)
    if not tasks:
        raise MissingDataError(
            f"No task of suite {options.suite!r} has data in the data directory; "
            "build some with `bench build-data`, or name tasks with --tasks."
        )
    return tasks


def prompt_source(options: RunOptions) -> Literal["mteb", "harness"]:
    """Which instruction a task under an MTEB name gives the model: MTEB's own (`metadata.prompt`, for
    MTEB's implementation of the model, so the result is MTEB's computation of MTEB's task) or the
    harness's (INSTRUCTOR's / InBedder's, for the harness's families: always an experiment)."""
    from bench.adapters.registry import MTEB_FAMILY, spec_family

    try:
        family = spec_family(options.model, given_model_options(options))
    except Exception:  # noqa: BLE001 - an unresolvable spec fails where the model loads, with its own message
        return "harness"
    return "mteb" if family == MTEB_FAMILY else "harness"


def build_model(options: RunOptions) -> RunModel:
    """The encoder a run uses: its model options plus run-level settings (cache, progress bar)."""
    from bench.adapters.registry import load_model

    model: RunModel = load_model(
        options.model,
        model_name=options.model_name,
        model_revision=options.model_revision,
        **given_model_options(options),
        cache_dir=options.cache_dir,
        use_cache=options.use_cache,
        show_progress_bar=options.show_progress_bar,
    )
    return model


def given_model_options(options: RunOptions) -> dict[str, object]:
    """`model_options` overridden by the shorthands that are set (template, batch_size, device, dtype)."""
    shorthands = {
        "template": options.template,
        "batch_size": options.batch_size,
        "device": options.device,
        "dtype": options.dtype,
    }
    return {**options.model_options, **{k: v for k, v in shorthands.items() if v is not None}}


def model_usage(model: RunModel, since: JSONObject | None = None) -> JSONObject | None:
    """The encoder's usage ledger (API families): running totals, or what was used after `since`.

    A family that keeps one implements `usage(since=None) -> dict`; others get None.
    """
    getter = getattr(model, "usage", None)
    return dict(getter(since=since)) if callable(getter) else None


def _reusable(
    store: AtomicResultCache, model: RunModel, task_name: str, key: ResumeKey, saving: Path | None = None
) -> tuple[dict[str, Any], JSONObject] | None:
    """(result, run record) of a finished task whose record matches this run, else None; with `saving`
    (`--save-predictions`), only one run with the flag whose prediction file is there (else it is evaluated again,
    from the embedding cache)."""
    data = read_json(result_path(store, model.mteb_model_meta, task_name))
    record = read_json(run_record_path(store, model.mteb_model_meta, task_name))
    if not isinstance(data, dict) or not isinstance(record, dict) or record.get("resume_key") != key:
        return None
    kept = record.get("predictions", "")
    if saving is not None and not (
        kept is None or (isinstance(kept, str) and kept and (saving.parent / kept).is_file())
    ):
        return None
    if result_problem(data) or not isinstance(data["scores"].get("test"), list):  # damaged: recomputed
        return None
    return data, record


def _outcome(
    task: RunTask,
    data: dict[str, Any],
    record: Mapping[str, object],
    status: Literal["computed", "reused"],
    path: Path | None = None,
) -> TaskOutcome:
    """`data` is MTEB's result file, its shape checked (`result_problem`) before it gets here."""
    scores = {k: v for k, v in data["scores"]["test"][0].items() if k not in ("hf_subset", "languages", "mteb_version")}
    return TaskOutcome(
        task=task.metadata.name,
        main_score_name=task.metadata.main_score,
        main_score=float(scores["main_score"]),
        scores=scores,
        status=status,
        record=dict(record),
        result_path=str(path) if path is not None else None,
    )


def _resume_key(model: RunModel, task: RunTask, options: RunOptions) -> ResumeKey:
    """What must match for a finished task to be reused."""
    return {
        "record_version": RECORD_VERSION,
        "model": model.name,
        "model_revision": model.revision,
        "model_fingerprint": model.fingerprint,
        "settings": {k: v for k, v in model.settings().items() if k not in ("batch_size", "max_concurrency")},
        "task_version": task.task_version,
        "dataset_revision": task.metadata.revision,
        "instructions_sha256": task.instruction_set_sha256(),
        "limit": options.limit,
        "seed": options.seed,
    }


def _run_record(
    model: RunModel,
    task: RunTask,
    options: RunOptions,
    key: ResumeKey,
    stats: EncodeStats,
    started: datetime,
    seconds: float,
    usage: JSONObject | None = None,
) -> RunRecord:
    from bench.adapters.distributed import all_encoders, current_world
    from bench.tasks.data import stand_in_of

    meta = task.metadata
    stand_in = stand_in_of(getattr(task, "local_files", None))
    task_block: TaskBlock = {
        "name": meta.name,
        "version": task.task_version,
        "type": meta.type,
        "main_score": meta.main_score,
        "dataset": {
            "path": meta.dataset["path"],
            "revision": meta.revision,
            "source": task.data_source,
            "stand_in": stand_in["stand_in"],
            "stand_in_note": stand_in["stand_in_note"],
        },
        "instructions": task.instruction_set(),
        "instructions_sha256": task.instruction_set_sha256(),
        "limit": options.limit,
        "seed": options.seed,
    }
    # the declared version of the main score's metric (bench/core/metric_specs.py): a rule change is another metric
    if (version := catalogue_version(meta.name)) is not None:
        task_block["metric_version"] = version
    # Keys that only some records have are added in the order the file has always listed them.
    model_block: ModelBlock = {
        "spec": public_spec(options.model),
        "name": model.name,
        "revision": model.revision,
        "content": model.content_id(),
        "family": model.family,
        "experiment": dict(model.mteb_model_meta.experiment_kwargs or {}),
        "settings": model.settings(),
        "identity_check": model.identity_check,
        "device": model.device,
        "instruction_use": model.instruction_use(meta),
    }
    if facts := model.record_facts():
        model_block["facts"] = facts
    encode: EncodeBlock = {
        "texts_requested": stats.requested,
        "unique_inputs": stats.unique,
        "cache_hits": stats.cache_hits,
        "texts_encoded": stats.encoded,
    }
    if (world := current_world()) is not None:
        encode["processes"] = world.size
        encode["texts_encoded_by_other_ranks"] = stats.encoded_by_other_ranks
    encode["encode_seconds"] = round(stats.encode_seconds, 4)
    if stats.oom_splits:
        encode["oom_splits"] = stats.oom_splits
    # the batches an LM family sized for the GPU (bench/adapters/device_budget.py), when it did
    batches = next((b for e in all_encoders(model) if (b := getattr(e, "device_batches", None))), None)
    if batches:
        encode["device_batches"] = batches
    # where a local GGUF file's weights came from (bench/adapters/lm.py GGUFWeights), when it was loaded
    gguf = next((u for e in all_encoders(model) if (u := getattr(e, "gguf_cache", None))), None)
    if gguf:
        encode["gguf_cache"] = gguf
    encode["cache"] = model.cache.path.name if model.cache is not None else None
    if usage is not None:
        encode["usage"] = usage
    return {
        "record_version": RECORD_VERSION,
        "task": task_block,
        "model": model_block,
        "encode": encode,
        "evaluation_seconds": round(seconds, 4),
        "started_at": started.isoformat(),
        "versions": package_versions(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "command": [redact_value(public_value(arg)) for arg in sys.argv],
        "resume_key": key,
    }


__all__ = ["RunOptions", "TaskOutcome", "build_model", "build_tasks", "model_usage", "run"]
