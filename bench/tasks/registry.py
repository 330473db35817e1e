"""Where task classes and suites are found by name; every concrete task registers itself.

A task class registers when its class body defines `metadata` (MTEB's own convention: the registry is
the set of imported task classes, `mteb/get_tasks.py`). `bench/tasks/__init__.py` imports every module of
the package, so adding a task is one new file: its class, its `metadata`, and the suites it joins
(`suites = ("awareness", "inbedder")`). A second class with a registered name fails at import with
both class paths in the message, as MTEB's registry does.

A task may carry an MTEB task's name only when it *is* that task: a subclass of MTEB's registered class
of the same name (the generic tasks add a task instruction and a local layout, nothing else). Every
other harness task is added to MTEB's registry (`bench.tasks.mteb_compat`), so `mteb.get_task("IntentEmotion")`,
`mteb.get_tasks(task_types=["Reranking"])` and `ResultCache.load_results(validate_and_filter=True)` find it.
Each suite is also an `mteb.Benchmark` (`bench/tasks/benchmarks.py`: `mteb.get_benchmark("InBedder")`).

A plugin's task (bench/core/plugins.py) joins only the suites it names, never `all` by default: installing
a plugin must not change the average of a built-in suite.

Suite order: by module name, then by definition order within the module (stable whatever the import order).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench.core import plugins
from bench.core.errors import ConfigError

if TYPE_CHECKING:
    from mteb.abstasks import AbsTask

TASKS: dict[str, type[AbsTask]] = {}
SUITES: dict[str, tuple[str, ...]] = {}
SUITE_DESCRIPTIONS: dict[str, str] = {
    "demo": "small offline demo data shipped with the package (default)",
    "awareness": "InBedder instruction-awareness tests (paper §3.2, Table 1)",
    "robustness": "InBedder instruction-robustness tests: 6 clustering sets x 30 instructions (paper §3.3, Fig. 4)",
    "gstransform": "GSTransform's 9 datasets: clustering, STS and triplets sampled from labels (paper §4.2, Table 1)",
    "generic": "MTEB's own tasks with a task instruction: InBedder's generic controls + MetaEOL's STS set",
    "generic-sts": "MTEB's STS set (STS12-16, STSBenchmark, SICK-R) with INSTRUCTOR's instructions; runs from local data",
    "metaeol-sts": "MetaEOL's STS evaluation (SentEval): STS12-16, STSBenchmark and SICK-R's 4,927 test pairs",
    "inbedder": "every InBedder evaluation: awareness, robustness and the generic controls",
    "followir": "MTEB's FollowIR tasks (Core17, News21, Robust04): does the ranking follow a changed instruction (p-MRR)",
    "instruction-retrieval": "MTEB's instruction-retrieval tasks: FollowIR's three (p-MRR) and InstructIR (robustness@10)",
    "all": "every task of every suite except the demo",
}
# Suites no task names itself: "all" is every registered task outside these.
_NOT_IN_ALL = ("demo",)


class DuplicateTaskError(ConfigError):
    """Two task classes claim one name."""


def _path(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def register_task(cls: type[AbsTask]) -> None:
    """Add `cls` under `cls.metadata.name` and to each suite it names; refuse a second owner of a name."""
    from bench.tasks.mteb_compat import register_with_mteb

    name = cls.metadata.name
    earlier = TASKS.get(name)
    if earlier is not None and _path(earlier) != _path(cls):
        raise DuplicateTaskError(
            f"Duplicate task name {name!r}: {_path(cls)} and {_path(earlier)}. Task names must be unique; "
            f"rename one (metadata.name)."
        )
    suites = tuple(getattr(cls, "suites", ()))
    unknown = [s for s in suites if s not in SUITE_DESCRIPTIONS]
    if unknown:
        raise ConfigError(
            f"Task {name} ({_path(cls)}) names unknown suite(s) {unknown}; declare them first with "
            f"bench.tasks.registry.declare_suite(name, description)."
        )
    register_with_mteb(cls)
    TASKS[name] = cls
    _ORDER.setdefault(name, len(_ORDER))
    implied = () if set(suites) & set(_NOT_IN_ALL) or plugins.is_plugin_module(cls.__module__) else ("all",)
    for suite in (*suites, *implied):
        SUITES[suite] = tuple(sorted({*SUITES.get(suite, ()), name}, key=_position))


_ORDER: dict[str, int] = {}


def _position(name: str) -> tuple[str, int]:
    return TASKS[name].__module__, _ORDER[name]


def declare_suite(name: str, description: str) -> None:
    """A new suite a task can join (declared once, in the file of its first task)."""
    if SUITE_DESCRIPTIONS.get(name, description) != description:
        raise ConfigError(f"Suite {name!r} is declared twice with different descriptions.")
    SUITE_DESCRIPTIONS[name] = description


def ordered_suites() -> dict[str, tuple[str, ...]]:
    """Suites in the order of SUITE_DESCRIPTIONS (for listings and the leaderboard)."""
    return {s: SUITES[s] for s in SUITE_DESCRIPTIONS if s in SUITES}
