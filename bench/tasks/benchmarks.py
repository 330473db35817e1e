"""Each suite of `bench.tasks.registry` as an `mteb.Benchmark`: after `import bench.tasks`, `mteb.get_benchmark("InBedder")`
returns the `inbedder` suite and `mteb.get_benchmarks()` lists every suite's benchmark after MTEB's own.

Names (`BENCHMARK_NAMES`): readable, after the paper whose evaluation the suite reproduces, and never an MTEB
benchmark's name or alias (`bench.tasks.mteb_compat` refuses one; `tests/tasks/test_mteb_discovery.py` checks). A suite
without an entry (declared later with `declare_suite`) is offered as `InstructBench-<suite>`.

Nothing is built at import: `bench/tasks/__init__.py` imports this module before most task modules, so it only
hands `suite_benchmarks` to MTEB's benchmark lookup (`bench.tasks.mteb_compat.register_benchmarks`). The first
`mteb.get_benchmark(s)` call makes the `Benchmark` objects (one per suite with tasks, then the same object
each time), and a benchmark's tasks are instantiated on first access to them (iterating, indexing, MTEB's
`evaluate`): `SuiteTasks`. They are the suite's own classes built as `mteb.get_task` builds a task, with no
arguments: data from the hub, or from `$INSTRUCT_BENCH_DATA_DIR` when it is set, where every task of the
benchmark then needs its folder (MissingDataError names the missing one; `bench run --suite` instead skips
tasks without data). The generic suites hold the harness's instructed copies of MTEB's tasks, which keep
MTEB's task names (and so MTEB's result-cache keys).

Each benchmark's `reference` and `citation` (MTEB's canonical BibTeX form) come from `bench.tasks.citations`:
the paper whose evaluation the suite reproduces, the harness itself for the demo suite and a suite declared
later, and every paper with the harness for "all".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, overload

from bench.core.errors import UnknownNameError
from bench.tasks.citations import suite_sources
from bench.tasks.mteb_compat import register_benchmarks
from bench.tasks.registry import SUITE_DESCRIPTIONS, SUITES, TASKS, ordered_suites

if TYPE_CHECKING:
    from mteb import Benchmark
    from mteb.abstasks import AbsTask

# suite -> MTEB benchmark name
BENCHMARK_NAMES: dict[str, str] = {
    "demo": "InstructBench-demo",
    "awareness": "InBedder-awareness",
    "robustness": "InBedder-robustness",
    "gstransform": "GSTransform",
    "generic": "InstructBench-generic",
    "generic-sts": "INSTRUCTOR-STS",
    "metaeol-sts": "MetaEOL-STS",
    "inbedder": "InBedder",
    # MTEB's own benchmark "FollowIR" holds the same three tasks: `--suite FollowIR` names the suite too
    # (a suite's name matches in any case, bench.core.errors.suite_for), while `mteb.get_benchmark("FollowIR")`
    # stays MTEB's benchmark.
    "followir": "InstructBench-FollowIR",
    "instruction-retrieval": "InstructBench-InstructionRetrieval",
    "all": "InstructBench",
}


def benchmark_name(suite: str) -> str:
    """The MTEB benchmark name of a suite."""
    return BENCHMARK_NAMES.get(suite, f"InstructBench-{suite}")


class SuiteTasks(Sequence["AbsTask"]):
    """A suite's task instances for `Benchmark.tasks`, made on first access (the names are read then too).

    `len` and `repr` use the names and instantiate nothing.
    """

    def __init__(self, suite: str) -> None:
        self.suite = suite
        self._tasks: tuple[AbsTask, ...] | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return SUITES.get(self.suite, ())

    @property
    def built(self) -> bool:
        return self._tasks is not None

    def _instances(self) -> tuple[AbsTask, ...]:
        if self._tasks is None:
            self._tasks = tuple(TASKS[name]() for name in self.names)
        return self._tasks

    @overload
    def __getitem__(self, index: int) -> AbsTask: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[AbsTask, ...]: ...
    def __getitem__(self, index: int | slice) -> AbsTask | tuple[AbsTask, ...]:
        return self._instances()[index]

    def __len__(self) -> int:
        return len(self._tasks) if self._tasks is not None else len(self.names)

    def __repr__(self) -> str:
        return f"SuiteTasks({self.suite!r}: {', '.join(self.names)})"


_BENCHMARKS: dict[str, Benchmark] = {}


def suite_benchmark(suite: str) -> Benchmark:
    """The suite's `mteb.Benchmark` (made once; its tasks are made on first access)."""
    if suite not in SUITES:
        raise UnknownNameError("suite", suite, SUITES)
    benchmark = _BENCHMARKS.get(suite)
    if benchmark is None:
        from mteb import Benchmark

        reference, citation = suite_sources(suite)
        benchmark = _BENCHMARKS[suite] = Benchmark(
            name=benchmark_name(suite),
            tasks=SuiteTasks(suite),
            description=f"instruct-bench suite '{suite}': {SUITE_DESCRIPTIONS.get(suite, '')}",
            reference=reference,
            citation=citation,
        )
    return benchmark


def suite_benchmarks() -> list[Benchmark]:
    """One benchmark per suite that has tasks, in the order of SUITE_DESCRIPTIONS."""
    return [suite_benchmark(suite) for suite in ordered_suites()]


register_benchmarks(suite_benchmarks)
