"""What the summary table and the leaderboard need to know about tasks, readable without importing them
(or MTEB).

`bench results DIR` prints suite averages and per-task sub-scores, and `bench leaderboard build` checks
every result against the harness's own facts about its task (version, main score, instruction hashes,
revisions, splits and subsets: bench/results/task_facts.py); importing `bench.tasks` for that costs
MTEB's import (seconds, ~300 MB). So the catalogue is derived from the task classes once and kept in the
cache (`$INSTRUCT_BENCH_CACHE/catalog/tasks-<fingerprint>.json`), keyed by a fingerprint of every file
under `bench/tasks/` (sources, packaged demo data, instruction-variant files: the facts depend on all
of them), the task plugins and `--include-path` files (`bench.core.plugins.fingerprint`), the installed MTEB
and the catalogue's FORMAT: a new task file, an edited one, another MTEB
or another layout makes another key, so the catalogue is never stale and nothing is stored in the
repository (a task is one file, with no second edit). When `bench.tasks` is already imported
(`bench run`), the live registry is used and written to the cache, so `bench results` and the
leaderboard build after a run start without MTEB. A cache that cannot be written costs only speed.
"""

from __future__ import annotations

import logging
import sys
from functools import cache
from pathlib import Path
from typing import TypedDict, cast

from bench.core import plugins
from bench.core.fileio import read_cached, tree_fingerprint, write_cached
from bench.core.metric_specs import GENERAL, MTEB_TYPE_METRICS, Metric, MetricIndex, core_metrics
from bench.core.paths import cache_root
from bench.results.task_facts import TaskFacts, derive

logger = logging.getLogger(__name__)

TASKS_DIR = Path(__file__).resolve().parents[1] / "tasks"
# The layout of a catalogue file; a file of another (or none) is rebuilt, never misread.
# 3: each task's declared `metrics` (bench/core/metric_specs.py).
# 4: `benchmarks` (suite -> MTEB benchmark name) and `mteb_tasks` (MTEB's own task names), so `bench run`
# checks the names it is given before MTEB is imported (bench/cli/run_names.py).
# 5: `local_only` (a paper's own split built locally: its local copy is the paper's data, bench/results/marks.py).
FORMAT = 5


class Catalog(TypedDict):
    """The task catalogue (`build`, `catalog`), as its cached file holds it."""

    format: int  # FORMAT
    suites: dict[str, list[str]]  # suite -> its tasks, in the suite's order
    suite_descriptions: dict[str, str]  # suite -> what it is for, in the order suites are listed
    benchmarks: dict[str, str]  # suite -> its MTEB benchmark name (bench/tasks/benchmarks.py)
    tasks: dict[str, TaskFacts]  # task -> its facts (bench/results/task_facts.py `derive`)
    mteb_tasks: list[str]  # MTEB's own task names (not the harness's), sorted


def build(*, own_only: bool = False) -> Catalog:
    """The catalog from the task classes themselves (imports `bench.tasks`, hence MTEB).

    `own_only` keeps the classes defined in `bench/tasks/` and in plugins (what the fingerprint covers),
    leaving out tasks a script or a test registered in this process.
    """
    from bench.tasks import SUITE_DESCRIPTIONS, SUITES, TASKS, load_plugins
    from bench.tasks.mteb_compat import mteb_registry

    load_plugins()
    tasks = {n: c for n, c in TASKS.items() if not own_only or _own(c)}
    return {
        "format": FORMAT,
        "suites": {suite: [t for t in members if t in tasks] for suite, members in SUITES.items()},
        "suite_descriptions": dict(SUITE_DESCRIPTIONS),
        "benchmarks": _benchmarks(SUITES),
        "tasks": {name: derive(cls) for name, cls in tasks.items()},
        "mteb_tasks": sorted(n for n in mteb_registry() if n not in TASKS),
    }


def _own(cls: type) -> bool:
    """A task of `bench/tasks/` or of a plugin in use: what the fingerprint covers."""
    return cls.__module__.startswith("bench.tasks.") or plugins.is_plugin_module(cls.__module__)


def _benchmarks(suites: dict[str, tuple[str, ...]]) -> dict[str, str]:
    from bench.tasks.benchmarks import benchmark_name

    return {suite: benchmark_name(suite) for suite in suites}


def fingerprint() -> str:
    """sha256 of every file under bench/tasks (by relative path; `__pycache__` left out), MTEB's version and
    FORMAT, and the plugins in use: everything the catalogue's facts depend on."""
    return tree_fingerprint(TASKS_DIR, f"format {FORMAT}{plugins.fingerprint()}")


def catalog_path() -> Path:
    return cache_root() / "catalog" / f"tasks-{fingerprint()[:16]}.json"


def catalog() -> Catalog:
    """The cached file; when `bench.tasks` is imported, with the live registry's suites and the tasks a script or
    a test registered in this process (derived here), so the harness's own tasks are derived (61 task objects
    built) at most once per version of their files, never again per table (`bench run` reads it three times)."""
    if "bench.tasks" not in sys.modules:
        return _cached(plugins.include_paths())
    from bench.tasks import SUITE_DESCRIPTIONS, SUITES, TASKS, load_plugins

    load_plugins()
    own = _cached(plugins.include_paths())["tasks"]
    tasks = {name: own[name] if name in own and _own(cls) else derive(cls) for name, cls in TASKS.items()}
    return {
        "format": FORMAT,
        "suites": {suite: [t for t in members if t in tasks] for suite, members in SUITES.items()},
        "suite_descriptions": dict(SUITE_DESCRIPTIONS),
        "benchmarks": _benchmarks(SUITES),
        "tasks": tasks,
        "mteb_tasks": _cached(plugins.include_paths())["mteb_tasks"],
    }


def facts(task_name: str) -> TaskFacts | None:
    """One task's entry (bench/results/task_facts.py `derive`), or None when the harness has no such task.

    Live, only that task is derived (a build asks once per result, so not the whole registry each time).
    """
    if "bench.tasks" not in sys.modules:
        return _cached(plugins.include_paths())["tasks"].get(task_name)
    _cache_once(plugins.include_paths())
    from bench.tasks import TASKS

    cls = TASKS.get(task_name)
    return derive(cls) if cls is not None else None


@cache
def _cache_once(include: tuple[Path, ...] = ()) -> None:
    """Write the catalogue of the files in use (`include`: the include paths, part of its key) if missing."""
    path = catalog_path()
    if read_cached(path, FORMAT) is None:
        _write(path, build(own_only=True))


@cache
def _cached(include: tuple[Path, ...] = ()) -> Catalog:
    """The catalogue of the files in use (`include`: the include paths, part of its key), read or built once."""
    path = catalog_path()
    found = read_cached(path, FORMAT)
    if found is not None:
        return cast(Catalog, found)  # a file of layout FORMAT is what `build` wrote (read_cached checked the layout)
    logger.debug("no task catalogue at %s: importing the tasks", path)
    built = build(own_only=True)
    _write(path, built)
    return built


def _write(path: Path, built: Catalog) -> None:
    write_cached(path, built, what="task catalogue")


def suites() -> dict[str, tuple[str, ...]]:
    return {suite: tuple(members) for suite, members in catalog()["suites"].items()}


def ordered_suites() -> dict[str, tuple[str, ...]]:
    """Suites in the order of their descriptions (`bench.tasks.registry.ordered_suites`, from the catalogue)."""
    found = catalog()
    return {s: tuple(found["suites"][s]) for s in found["suite_descriptions"] if s in found["suites"]}


def suite_descriptions() -> dict[str, str]:
    return dict(catalog()["suite_descriptions"])


def benchmark_names() -> dict[str, str]:
    """suite -> its MTEB benchmark name (`bench.tasks.benchmarks.benchmark_name`)."""
    return dict(catalog()["benchmarks"])


def mteb_task_names() -> list[str]:
    """MTEB's own tasks (a `bench run -t` name may be one of them), by name, without importing MTEB."""
    return list(catalog()["mteb_tasks"])


def task_names() -> list[str]:
    return list(catalog()["tasks"])


def main_scores() -> dict[str, str]:
    return {name: entry["main_score"] for name, entry in catalog()["tasks"].items()}


def metrics(task_name: str) -> tuple[Metric, ...] | None:
    """Every metric a task's scores may name: its own declarations (its abstract task's `metrics`), then its
    MTEB type's and the general ones (bench/core/metric_specs.py); None when the harness has no such task."""
    entry = facts(task_name)
    if entry is None:
        return None
    own = tuple(Metric.from_json(m) for m in entry["metrics"])
    return (*own, *MTEB_TYPE_METRICS.get(entry["type"], ()), *GENERAL)


def all_metrics() -> tuple[Metric, ...]:
    """Every declared metric, each once: every task's own, then the core's (what a score key of any task,
    or of none, is looked up in)."""
    return metric_index().metrics


def metric_index() -> MetricIndex:
    """Every declared metric (`all_metrics`), indexed by score key: built once from the cached catalogue; from
    the live registry anew each time (a script or a test may register a task)."""
    if "bench.tasks" in sys.modules:
        from bench.tasks import TASKS

        return _index([m for cls in TASKS.values() for m in getattr(cls, "metrics", ())])
    return _cached_index(plugins.include_paths())


@cache
def _cached_index(include: tuple[Path, ...] = ()) -> MetricIndex:
    return _index([Metric.from_json(m) for entry in _cached(include)["tasks"].values() for m in entry["metrics"]])


def _index(own: list[Metric]) -> MetricIndex:
    return MetricIndex(dict.fromkeys([*own, *core_metrics()]))
