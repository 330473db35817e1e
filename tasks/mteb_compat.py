"""The two places the harness reaches into MTEB 2.26 internals; nothing else in the project does.

1. MTEB has no public hook to add a task to its registry: `mteb.get_task(s)` look names up in the
   module-level dict `mteb.get_tasks._TASKS_REGISTRY`, built once at import from `mteb.tasks`. Harness
   tasks are added to that dict (never replacing an MTEB task), so `mteb.get_task("IntentEmotion")`,
   `TaskResult.task` and `ResultCache.load_results(validate_and_filter=True)` work after `import tasks`.
2. MTEB builds the query dataloader (batches with `text`, `query`, `instruction`) in the private
   `mteb._create_dataloaders.create_dataloader`; there is no public equivalent.

`tests/test_mteb_compat.py` fails loudly when either changes in a new MTEB release.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bench.errors import ConfigError

if TYPE_CHECKING:
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


def create_query_dataloader(dataset: Any, *, task_metadata: Any, **encode_kwargs: Any) -> Any:
    """MTEB's query dataloader for a dataset with `text` and `instruction` columns."""
    from mteb._create_dataloaders import create_dataloader
    from mteb.types import PromptType

    return create_dataloader(dataset, task_metadata=task_metadata, prompt_type=PromptType.query, **encode_kwargs)
