"""A rerun whose every task is finished, decided without importing MTEB or building the model.

`bench run` reuses a finished task only when its run record's resume key equals this run's
(`runner._resume_key`: the model's name, revision, fingerprint and settings, the task's version, dataset
revision and instruction hash, limit, seed). Those facts come from the encoder and the task objects, which
are MTEB's classes: importing them costs seconds and ~300 MB, even when nothing is to be computed. So
after a run the runner keeps its *plan* (`remember`): per job, its task, main score name, result file
(relative to the output folder) and resume key, in the cache
(`$INSTRUCT_BENCH_CACHE/catalog/run-plan-<request>.json`). The file's key (`request_digest`) covers all
the keys depend on: the run's options (the output folder aside: the plan's paths are relative to it),
every file of the package (families, tasks and their packaged data, the runner; so also the task
catalogue's fingerprint), the installed MTEB and Python, the files of every local path the spec and options
name (size and mtime of each, so a changed model makes another key), the hub cache's refs of every hub id
they name, the environment variables the harness, the hub and the devices read, and which GPUs this machine
shows (`--device auto` / `--dtype auto` resolve by them). The same request on the same code, files and
machine therefore computes the plan's keys again.

A rerun with a plan (`reused_run`) reads each job's run record and result: when every record's resume key
equals the plan's and every result is readable, the run's outcomes are those results, "reused", and
neither MTEB nor the model is touched. Anything else (no plan, a record missing or with another key, a
damaged result, a data directory, instruction variants, `--overwrite`, a launched run) goes through the full
run, which decides each task as before; a plan only ever skips work the full run would also skip.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import platform
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from bench.core.fileio import read_cached, sha256_json, tree_fingerprint, write_cached
from bench.core.json_types import JSON
from bench.core.paths import cache_root
from bench.results.outcome import TaskOutcome
from bench.results.store import read_json, result_problem

if TYPE_CHECKING:
    from bench.run.run_options import RunOptions

logger = logging.getLogger("bench")

# The layout of a plan file; a file of another (or none) is never read as a plan.
FORMAT = 1
PACKAGE_DIR = Path(__file__).resolve().parents[1]
DATA_DIR_ENV = "INSTRUCT_BENCH_DATA_DIR"  # bench.tasks.data.DATA_DIR_ENV (importing that module imports MTEB)
# Environment variables that can change what a run computes or where it finds a model: the harness's, the
# hub's, the accelerators' (which device `auto` is). Secrets never change a vector and are left out.
ENV_PREFIXES = ("INSTRUCT_BENCH_", "HF_", "HUGGINGFACE_", "TRANSFORMERS_", "SENTENCE_TRANSFORMERS_", "OPENAI_BASE")
ENV_DEVICES = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "PYTORCH_ENABLE_MPS_FALLBACK")
SECRET_MARKS = ("TOKEN", "KEY", "SECRET", "PASSWORD")
MAX_FILES = 10_000  # a named folder larger than this is not signed (the run is then always done in full)


def plan_path(digest: str) -> Path:
    return cache_root() / "catalog" / f"run-plan-{digest[:24]}.json"


def eligible(options: RunOptions) -> bool:
    """Whether a plan can stand for this run: no forced recompute, no instruction variants, no data directory
    (a local copy's revision is its files' hash), one process (a launched run shares encoding among ranks)."""
    return not (
        options.overwrite
        or options.save_predictions  # a finished task is reused only with its prediction file (runner `_reusable`)
        or options.instruction_variants
        or options.data_dir
        or os.environ.get(DATA_DIR_ENV)
        or os.environ.get("WORLD_SIZE", "1") not in ("", "0", "1")
    )


def request_digest(options: RunOptions) -> str | None:
    """The plan's key for this run (see module docstring); None when a named folder is too large to sign."""
    request = {k: v for k, v in asdict(options).items() if k != "output_dir"}
    try:
        named = _named_files(options)
    except _TooLarge:
        return None
    env = {
        k: v
        for k, v in sorted(os.environ.items())
        if (k.startswith(ENV_PREFIXES) or k in ENV_DEVICES) and not any(m in k for m in SECRET_MARKS)
    }
    return sha256_json(
        {
            "format": FORMAT,
            "request": json.loads(json.dumps(request, default=str)),
            "package": tree_fingerprint(PACKAGE_DIR, f"run plan {FORMAT}\0python {sys.version_info[:2]}"),
            "files": named,
            "env": env,
            "devices": _devices(),
            "cwd": os.getcwd(),  # relative paths in the spec and options resolve against it
        }
    )


def reused_run(options: RunOptions) -> list[TaskOutcome] | None:
    """Every job's outcome, "reused", when the plan for this run holds and every result matches it; else None.

    Only in a process that has not imported the tasks: where it has (a script, a test, a second run in one
    process), the live classes, which that process may have changed, decide, and importing costs nothing more.
    """
    if "bench.tasks" in sys.modules:
        return None
    return plan_outcomes(options)


def plan_outcomes(options: RunOptions) -> list[TaskOutcome] | None:
    """`reused_run` in any process: the plan's outcomes when every job's record and result match it, else None."""
    if not eligible(options):
        return None
    digest = request_digest(options)
    plan = read_cached(plan_path(digest), FORMAT) if digest is not None else None
    jobs = plan.get("jobs") if plan is not None else None
    if not isinstance(jobs, list) or not jobs:
        return None
    outcomes = []
    for job in jobs:
        outcome = _reused(options, job)
        if outcome is None:
            return None
        outcomes.append(outcome)
    for i, outcome in enumerate(outcomes, start=1):
        logger.info("[%d/%d] %s: finished earlier with the same settings, reused", i, len(outcomes), outcome.task)
    return outcomes


def from_package(model: object) -> bool:
    """Whether the model's classes (its own and those of the encoders it calls) are this package's, whose files
    the plan's key covers; a family a script or a test registered is not, and its runs keep no plan."""
    encoders = [model, *getattr(model, "sub_encoders", list)()]
    return all(type(e).__module__.startswith(f"{PACKAGE_DIR.name}.") for e in encoders)


def remember(options: RunOptions, digest: str | None, outcomes: list[TaskOutcome]) -> None:
    """Keep this finished run's plan under `digest` (taken before the run), when nothing it covers changed
    during the run (a model downloaded into the hub cache makes the next run's key; that run keeps it)."""
    if digest is None or not eligible(options) or request_digest(options) != digest:
        return
    jobs = []
    for o in outcomes:
        if o.result_path is None or o.variant or not isinstance(o.record.get("resume_key"), dict):
            return
        relative = os.path.relpath(o.result_path, options.output_dir)
        jobs.append(
            {"task": o.task, "main_score": o.main_score_name, "result": relative, "resume_key": o.record["resume_key"]}
        )
    write_cached(plan_path(digest), {"format": FORMAT, "jobs": jobs}, what="run plan")


def _reused(options: RunOptions, job: JSON) -> TaskOutcome | None:
    """One job's outcome when its record's resume key is the plan's and its result is readable (as the runner's
    `_reusable` decides), else None."""
    if not isinstance(job, dict):
        return None
    task, main_score, result = job.get("task"), job.get("main_score"), job.get("result")
    if not (isinstance(task, str) and isinstance(main_score, str) and isinstance(result, str)):
        return None
    path = Path(options.output_dir) / result
    data = read_json(path)
    record = read_json(path.parent / "run_records" / f"{task}.json")
    if not isinstance(data, dict) or not isinstance(record, dict) or record.get("resume_key") != job["resume_key"]:
        return None
    if result_problem(data) or not isinstance(data["scores"].get("test"), list):
        return None
    scores = {k: v for k, v in data["scores"]["test"][0].items() if k not in ("hf_subset", "languages", "mteb_version")}
    return TaskOutcome(
        task=task,
        main_score_name=main_score,
        main_score=float(scores["main_score"]),
        scores=scores,
        status="reused",
        record=record,
        result_path=str(path),
    )


class _TooLarge(Exception):
    pass


def _named_files(options: RunOptions) -> dict[str, object]:
    """What the spec and options name on disk or on the hub: per local path its files' sizes and mtimes, per hub
    id its refs in the local hub cache (a branch's commit)."""
    from bench.adapters.registry import MODELS
    from bench.core.errors import ModelLoadError

    names = [options.model, *_strings(options.model_options), *_strings(options.model_name or "")]
    if options.model in MODELS:
        with contextlib.suppress(ModelLoadError):  # no packaged model: the full run says so
            names.append(MODELS[options.model].path())
    found: dict[str, object] = {}
    for name in names:
        for candidate in (name, name.partition(":")[2]):
            if candidate and candidate not in found:
                signed = _sign(candidate)
                if signed is not None:
                    found[candidate] = signed
    return found


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def _sign(name: str) -> object:
    path = Path(name).expanduser()
    try:
        if path.exists():
            return [str(path.resolve()), *_stat_rows(path)]
    except OSError:
        return None
    parts = name.split("/")
    if len(parts) == 2 and all(parts):
        refs = _hub_cache() / f"models--{name.replace('/', '--')}" / "refs"
        try:
            return {
                "refs": sorted((p.relative_to(refs).as_posix(), p.read_text()) for p in refs.rglob("*") if p.is_file())
            }
        except OSError:
            return None
    return None


def _stat_rows(path: Path) -> list[list[str | int]]:
    if path.is_file():
        stat = path.stat()
        return [[path.name, stat.st_size, stat.st_mtime_ns]]
    rows: list[list[str | int]] = []
    for i, file in enumerate(sorted(path.rglob("*"))):
        if i >= MAX_FILES:
            raise _TooLarge(str(path))
        if file.is_file():
            stat = file.stat()
            rows.append([file.relative_to(path).as_posix(), stat.st_size, stat.st_mtime_ns])
    return rows


def _hub_cache() -> Path:
    try:
        from huggingface_hub.constants import HF_HUB_CACHE
    except ImportError:
        return Path(os.environ.get("HF_HUB_CACHE", "~/.cache/huggingface/hub")).expanduser()
    return Path(HF_HUB_CACHE)


def _devices() -> list[str]:
    """What `--device auto` sees, without importing torch: the platform and the accelerator device files."""
    dev = Path("/dev")
    try:
        files = sorted(p.name for p in dev.iterdir() if p.name.startswith(("nvidia", "kfd")))
    except OSError:
        files = []
    return [sys.platform, platform.machine(), *files]
