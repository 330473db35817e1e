"""Where the harness reaches into MTEB 2.26 internals to change what MTEB does.

Three other places only read MTEB's private names, never patch them: `bench/adapters/mteb_model.py` and
`bench/adapters/mteb_zoo.py` hand texts to MTEB's own models through
`mteb._create_dataloaders.create_dataloader` (adapters may not import this module: the layers), and two
abstract tasks name MTEB's `STSEvaluatorScores` type for the type checker.

MTEB offers no public hook to add a task or a benchmark, so three private structures are used:

1. Tasks. `mteb.get_task(name)` looks names up in the module-level dict `mteb.get_tasks._TASKS_REGISTRY`;
   `mteb.get_tasks(...)` (the filters: task_types, languages, domains, exclude_superseded, ...) instead
   runs `filter_tasks` over the module-level tuple `mteb.get_tasks.TASK_LIST`. Both are built once, at
   `import mteb`, from the classes in `mteb.tasks`. `register_with_mteb` adds each harness task to the
   dict and appends it to the tuple (rebinding the module global that `get_tasks` reads at call time),
   never replacing an MTEB task, so `mteb.get_task("IntentEmotion")`, `mteb.get_tasks(task_types=[...])`,
   `TaskResult.task` and `ResultCache.load_results(validate_and_filter=True)` find it after `import bench.tasks`.
   Code that copied the tuple before (`from mteb.get_tasks import TASK_LIST`, e.g. `mteb.api.routes`
   imported before `import bench.tasks`) keeps MTEB's own list. MTEB's map of similar tasks (`_SIMILAR_TASKS`,
   zero-shot bookkeeping from `adapted_from`/`superseded_by`) is left alone.
2. Benchmarks. `mteb.get_benchmark(s)` read the lru-cached `mteb.benchmarks.get_benchmark._build_registry()`,
   which collects the `Benchmark` objects of `mteb.benchmarks.benchmarks`. `register_benchmarks` wraps that
   function (the module global both look up at call time) so that its result also holds the harness's
   benchmarks (`bench/tasks/benchmarks.py`); nothing is built until the first lookup, and a harness benchmark
   whose name is an MTEB benchmark's name or alias fails that lookup loudly instead of hiding MTEB's.
3. MTEB builds the query dataloader (batches with `text`, `query`, `instruction`) in the private
   `mteb._create_dataloaders.create_dataloader`; there is no public equivalent. That function is slow
   for text (~100 µs a row: Arrow column rewrites, then one Python dict per row and a collate per
   batch), so `create_query_dataloader` builds the same prepared dataset in one Arrow table and hands
   out each batch as one column slice; `mteb_query_dataloader` is MTEB's own, the reference the test
   compares every batch with.

`tests/tasks/test_mteb_compat.py` and `tests/tasks/test_mteb_discovery.py` fail loudly when any of these changes in
a new MTEB release.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from bench.core.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from types import ModuleType

    from datasets import Dataset
    from mteb import Benchmark, TaskMetadata
    from mteb.abstasks import AbsTask
    from mteb.types import BatchedInput
    from torch.utils.data import DataLoader

_T = TypeVar("_T")


def _get_tasks_module() -> ModuleType:
    import importlib

    return importlib.import_module("mteb.get_tasks")  # `mteb.get_tasks` the attribute is the function


def mteb_registry() -> dict[str, type[AbsTask]]:
    """MTEB's private name -> task class mapping (see module docstring)."""
    return _get_tasks_attribute("_TASKS_REGISTRY", dict, "how tasks are registered")


def mteb_task_list() -> tuple[type[AbsTask], ...]:
    """The task classes `mteb.get_tasks` filters (MTEB's, then the harness's; see module docstring)."""
    return _get_tasks_attribute("TASK_LIST", tuple, "what mteb.get_tasks() filters")


def _get_tasks_attribute(name: str, kind: type[_T], what: str) -> _T:
    """An attribute of `mteb.get_tasks` the harness relies on, failing loudly when a release changed it."""
    value = getattr(_get_tasks_module(), name, None)
    if not isinstance(value, kind):
        raise RuntimeError(
            f"mteb.get_tasks.{name} is gone or no longer a {kind.__name__}: this MTEB release "
            f"changed {what}; update bench/tasks/mteb_compat.py."
        )
    return value


def _add_to_task_list(cls: type[AbsTask]) -> None:
    task_list = mteb_task_list()
    if cls not in task_list:
        setattr(_get_tasks_module(), "TASK_LIST", (*task_list, cls))  # noqa: B010  # a module global MTEB reads


def register_with_mteb(cls: type[AbsTask]) -> None:
    """Make `cls` findable by MTEB's `get_task` and `get_tasks`; an MTEB name may only be reused by a subclass
    of MTEB's task (which stays the class MTEB finds)."""
    registry = mteb_registry()
    name = cls.metadata.name
    existing = registry.get(name)
    if existing is None or existing is cls:
        registry[name] = cls
        _add_to_task_list(cls)
        return
    if issubclass(cls, existing) or getattr(existing, "__module__", "").startswith("bench.tasks."):
        return  # MTEB's own task (the generic tasks), or a re-registration of ours
    raise ConfigError(
        f"Task {cls.__module__}.{cls.__qualname__} is named {name!r}, which is MTEB's task "
        f"{existing.__module__}.{existing.__qualname__}; a task under an MTEB name must be that task. Rename it."
    )


_BENCHMARK_SOURCES: list[Callable[[], Iterable[Benchmark]]] = []


def register_benchmarks(source: Callable[[], Iterable[Benchmark]]) -> None:
    """Offer the benchmarks `source()` returns through `mteb.get_benchmark(s)` (see module docstring).

    `source` is called at each lookup, not now, so it may build its `Benchmark` objects on first use
    (it should return the same objects each time).
    """
    if source not in _BENCHMARK_SOURCES:
        _BENCHMARK_SOURCES.append(source)
    _install_benchmark_registry()


def _get_benchmark_module() -> ModuleType:
    import importlib

    return importlib.import_module("mteb.benchmarks.get_benchmark")


def _install_benchmark_registry() -> None:
    module = _get_benchmark_module()
    mtebs = getattr(module, "_build_registry", None)
    if getattr(mtebs, "_harness_wrapper", False):
        return
    if not callable(mtebs) or not callable(getattr(module, "_build_aliases_registry", None)):
        raise RuntimeError(
            "mteb.benchmarks.get_benchmark._build_registry / _build_aliases_registry are gone: this MTEB release "
            "changed how benchmarks are registered; update bench/tasks/mteb_compat.py."
        )

    def _build_registry() -> dict[str, Benchmark]:
        return {**mtebs(), **harness_benchmarks()}

    _build_registry._harness_wrapper = True  # type: ignore[attr-defined]
    _build_registry.__wrapped__ = mtebs  # type: ignore[attr-defined]
    for attr in ("cache_clear", "cache_info"):  # MTEB's own caching, as callers of the lru_cache expect
        if hasattr(mtebs, attr):
            setattr(_build_registry, attr, getattr(mtebs, attr))
    setattr(module, "_build_registry", _build_registry)  # noqa: B010  # the module global MTEB's lookups call


def mteb_benchmark_registry() -> dict[str, Benchmark]:
    """MTEB's own benchmarks by name, without the harness's."""
    module = _get_benchmark_module()
    build = module._build_registry
    return dict(getattr(build, "__wrapped__", build)())


def harness_benchmarks() -> dict[str, Benchmark]:
    """The registered harness benchmarks by name; a name (or alias) of an MTEB benchmark is refused."""
    module = _get_benchmark_module()
    build = module._build_registry
    taken = {**getattr(build, "__wrapped__", build)(), **module._build_aliases_registry()}
    out: dict[str, Benchmark] = {}
    for source in _BENCHMARK_SOURCES:
        for benchmark in source():
            if benchmark.name in taken:
                raise ConfigError(
                    f"Benchmark name {benchmark.name!r} is already MTEB's benchmark {taken[benchmark.name].name!r} "
                    f"(a name or an alias); rename the harness's benchmark (bench/tasks/benchmarks.py)."
                )
            if out.get(benchmark.name, benchmark) is not benchmark:
                raise ConfigError(f"Two harness benchmarks are named {benchmark.name!r}.")
            out[benchmark.name] = benchmark
    return out


def mteb_query_dataloader(
    dataset: Dataset,
    *,
    task_metadata: TaskMetadata,
    **encode_kwargs: Any,  # MTEB's `create_dataloader(**kwargs: Any)`, passed on as given
) -> DataLoader[BatchedInput]:
    """MTEB's own query dataloader for a dataset with `text` and `instruction` columns (the reference)."""
    from mteb._create_dataloaders import create_dataloader
    from mteb.types import PromptType

    return create_dataloader(dataset, task_metadata=task_metadata, prompt_type=PromptType.query, **encode_kwargs)


def create_query_dataloader(
    texts: Sequence[str],
    instructions: Sequence[str],
    *,
    task_metadata: TaskMetadata,
    batch_size: int = 32,
    num_proc: int | None = None,
    **encode_kwargs: object,
) -> DataLoader[BatchedInput]:
    """MTEB's query dataloader for (text, instruction) rows, built cheaply (see module docstring).

    The loader's `dataset` is the HF `Dataset` MTEB's loader would hold after its preparation (columns
    `instruction`, `query` = the text, `text` = text + " " + instruction, in that order), so encoders
    that read `inputs.dataset.features` or iterate and `select` it (MTEB's cache wrapper) see the same
    thing; every batch equals MTEB's batch on the same rows (`tests/tasks/test_mteb_compat.py`). Tasks that are
    not text-only get MTEB's own loader.
    """
    from datasets import Dataset
    from mteb.types import PromptType
    from torch.utils.data import DataLoader

    if task_metadata.get_modalities(PromptType.query) != ["text"] or any(i is None for i in instructions):
        ds = Dataset.from_dict({"text": list(texts), "instruction": list(instructions)})
        return mteb_query_dataloader(
            ds, task_metadata=task_metadata, batch_size=batch_size, num_proc=num_proc, **encode_kwargs
        )
    texts = list(texts)
    instructions = list(instructions)
    prepared = Dataset.from_dict(
        {
            "instruction": instructions,
            "query": texts,
            "text": [t + " " + i for t, i in zip(texts, instructions, strict=True)],
        }
    )
    return DataLoader(
        prepared,
        batch_size=None,
        sampler=_SliceSampler(len(texts), batch_size),
        collate_fn=_as_is,  # type: ignore[arg-type]  # batch_size=None: it gets one sample (a slice's columns), not a list
        num_workers=0,
        shuffle=False,
    )


class _SliceSampler:
    """Yields `slice(start, start + batch_size)`: the whole batch is one Arrow slice of the dataset."""

    def __init__(self, n: int, batch_size: int) -> None:
        self.n, self.batch_size = n, batch_size

    def __iter__(self) -> Iterator[slice]:
        return (slice(s, min(s + self.batch_size, self.n)) for s in range(0, self.n, self.batch_size))

    def __len__(self) -> int:
        return -(-self.n // self.batch_size)


def _as_is(batch: dict[str, list[str]]) -> dict[str, list[str]]:
    """A column slice is already MTEB's collated batch (default_collate keeps lists of str as lists)."""
    return batch


def is_mtebs_task(task: AbsTask) -> bool:
    """Whether `task` is MTEB's own task exactly as MTEB defines it: MTEB's registered class of that name
    (or a subclass that changed nothing MTEB records), with MTEB's dataset and revision, prompt and
    splits, and all its data (no `--limit`). Only such a result is one MTEB's results repository can
    take; the harness's tasks, local copies (`local-...` revisions), instruction variants and the
    harness's instructions on MTEB's tasks are not."""
    name = task.metadata.name
    mtebs = mteb_registry().get(name)
    if (
        mtebs is None
        or str(getattr(mtebs, "__module__", "")).startswith("bench.tasks.")
        or getattr(task, "limit", None)
    ):
        return False
    mine, theirs = task.metadata, mtebs.metadata
    return (
        mine.dataset == theirs.dataset
        and mine.prompt == theirs.prompt
        and mine.eval_splits == theirs.eval_splits
        and mine.main_score == theirs.main_score
    )
