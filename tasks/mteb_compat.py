"""The two places the harness reaches into MTEB 2.26 internals; nothing else in the project does.

1. MTEB has no public hook to add a task to its registry: `mteb.get_task(s)` look names up in the
   module-level dict `mteb.get_tasks._TASKS_REGISTRY`, built once at import from `mteb.tasks`. Harness
   tasks are added to that dict (never replacing an MTEB task), so `mteb.get_task("IntentEmotion")`,
   `TaskResult.task` and `ResultCache.load_results(validate_and_filter=True)` work after `import tasks`.
2. MTEB builds the query dataloader (batches with `text`, `query`, `instruction`) in the private
   `mteb._create_dataloaders.create_dataloader`; there is no public equivalent. That function is slow
   for text (~100 µs a row: Arrow column rewrites, then one Python dict per row and a collate per
   batch), so `create_query_dataloader` builds the same prepared dataset in one Arrow table and hands
   out each batch as one column slice; `mteb_query_dataloader` is MTEB's own, the reference the test
   compares every batch with.

`tests/test_mteb_compat.py` fails loudly when either changes in a new MTEB release.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bench.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from mteb.abstasks import AbsTask


def mteb_registry() -> dict[str, type[AbsTask]]:
    """MTEB's private name -> task class mapping (see module docstring)."""
    import importlib

    module = importlib.import_module("mteb.get_tasks")  # `mteb.get_tasks` the attribute is the function
    registry = getattr(module, "_TASKS_REGISTRY", None)
    if not isinstance(registry, dict):
        raise RuntimeError(
            "mteb.get_tasks._TASKS_REGISTRY is gone or no longer a dict: this MTEB release changed how tasks "
            "are registered; update tasks/mteb_compat.py."
        )
    return registry


def register_with_mteb(cls: type[AbsTask]) -> None:
    """Make `cls` findable by MTEB's `get_task`; an MTEB name may only be reused by a subclass of MTEB's task."""
    registry = mteb_registry()
    name = cls.metadata.name
    existing = registry.get(name)
    if existing is None or existing is cls:
        registry[name] = cls
        return
    if issubclass(cls, existing) or getattr(existing, "__module__", "").startswith("tasks."):
        return  # MTEB's own task (the generic tasks), or a re-registration of ours
    raise ConfigError(
        f"Task {cls.__module__}.{cls.__qualname__} is named {name!r}, which is MTEB's task "
        f"{existing.__module__}.{existing.__qualname__}; a task under an MTEB name must be that task. Rename it."
    )


def mteb_query_dataloader(dataset: Any, *, task_metadata: Any, **encode_kwargs: Any) -> Any:
    """MTEB's own query dataloader for a dataset with `text` and `instruction` columns (the reference)."""
    from mteb._create_dataloaders import create_dataloader
    from mteb.types import PromptType

    return create_dataloader(dataset, task_metadata=task_metadata, prompt_type=PromptType.query, **encode_kwargs)


def create_query_dataloader(
    texts: Sequence[str],
    instructions: Sequence[str],
    *,
    task_metadata: Any,
    batch_size: int = 32,
    num_proc: int | None = None,
    **encode_kwargs: Any,
) -> Any:
    """MTEB's query dataloader for (text, instruction) rows, built cheaply (see module docstring).

    The loader's `dataset` is the HF `Dataset` MTEB's loader would hold after its preparation (columns
    `instruction`, `query` = the text, `text` = text + " " + instruction, in that order), so encoders
    that read `inputs.dataset.features` or iterate and `select` it (MTEB's cache wrapper) see the same
    thing; every batch equals MTEB's batch on the same rows (`tests/test_mteb_compat.py`). Tasks that are
    not text-only get MTEB's own loader.
    """
    from datasets import Dataset
    from mteb.types import PromptType
    from torch.utils.data import DataLoader

    if task_metadata.get_modalities(PromptType.query) != ["text"] or any(i is None for i in instructions):
        ds = Dataset.from_dict({"text": list(texts), "instruction": list(instructions)})
        return mteb_query_dataloader(ds, task_metadata=task_metadata, batch_size=batch_size, num_proc=num_proc,
                                     **encode_kwargs)
    texts = list(texts)
    instructions = list(instructions)
    prepared = Dataset.from_dict({
        "instruction": instructions,
        "query": texts,
        "text": [t + " " + i for t, i in zip(texts, instructions, strict=True)],
    })
    return DataLoader(prepared, batch_size=None, sampler=_SliceSampler(len(texts), batch_size),
                      collate_fn=_as_is, num_workers=0, shuffle=False)


class _SliceSampler:
    """Yields `slice(start, start + batch_size)`: the whole batch is one Arrow slice of the dataset."""

    def __init__(self, n: int, batch_size: int) -> None:
        self.n, self.batch_size = n, batch_size

    def __iter__(self) -> Iterator[slice]:
        return (slice(s, min(s + self.batch_size, self.n)) for s in range(0, self.n, self.batch_size))

    def __len__(self) -> int:
        return -(-self.n // self.batch_size)


def _as_is(batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """A column slice is already MTEB's collated batch (default_collate keeps lists of str as lists)."""
    return batch
