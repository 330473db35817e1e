"""The harness's MTEB tasks and the suites that group them.

Each task is an MTEB task class: pass instances to `mteb.evaluate(model, tasks=[IntentEmotion()])`, or,
after `import bench.tasks`, find them with MTEB's own `mteb.get_task("IntentEmotion")`. Every module of this
package is imported here and each concrete task class registers itself (`bench/tasks/registry.py`), so a new
task is one new file. `get_tasks` resolves names (with close-match suggestions) and passes `data_dir`,
`limit` and `seed`. Tasks of the user's own packages and `--include-path` folders (bench/core/plugins.py)
are imported after the package's own modules and register the same way.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import TYPE_CHECKING

from bench.core import plugins
from bench.core.errors import UnknownNameError, suite_for
from bench.core.errors import unknown_task as unknown_task_among
from bench.tasks.registry import SUITE_DESCRIPTIONS, SUITES, TASKS

if TYPE_CHECKING:
    from collections.abc import Iterable

    from bench.tasks.abstasks import InstructionTask

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.ispkg and not m.name.startswith("_")):
    importlib.import_module(f"{__name__}.{_module}")


def load_plugins() -> None:
    """Import the task plugins not imported yet (entry points `instruct_bench.tasks`, `--include-path` files):
    each registers its tasks as a file of this package does. Called on import, and again wherever tasks
    are looked up, so include paths set after the import count too."""
    plugins.load("tasks")


# The task classes by their Python names: `from tasks import IntentEmotion` (the package's own: a plugin's
# class name must not shadow a name of this module).
globals().update({cls.__name__: cls for cls in TASKS.values()})
load_plugins()

DEFAULT_SUITE = "demo"


def task_names(*, tasks: Iterable[str] | None = None, suite: str | None = None) -> list[str]:
    """Resolve `--tasks` / `--suite` to task names, failing on the first unknown one.

    A name in `--tasks` may be any task of MTEB's registry too (run by MTEB's own class, see
    `bench.tasks.generic.mteb_task_class`); suites hold the harness's tasks. A suite is named by its own name
    or by its MTEB benchmark name (`InstructBench-demo`: bench/tasks/benchmarks.py).
    """
    load_plugins()
    if tasks:
        names = list(dict.fromkeys(tasks))
        for name in names:
            if not is_known_task(name):
                raise unknown_task(name)
        return names
    return list(SUITES[suite_named(suite or DEFAULT_SUITE)])


def suite_named(name: str) -> str:
    """The suite `name` means: its own name, or its MTEB benchmark name in any case (`InstructBench-demo`).

    Raises:
        UnknownNameError: neither, with the closest names of both kinds.
    """
    from bench.tasks.benchmarks import benchmark_name

    return suite_for(name, SUITES, {s: benchmark_name(s) for s in SUITES})


def get_tasks(
    names: Iterable[str],
    *,
    data_dir: str | Path | None = None,
    limit: int | None = None,
    seed: int = 42,
    instruction_style: str | None = None,
    prompt_source: str | None = None,
) -> list[InstructionTask]:
    """Task instances ready for `mteb.evaluate`; local files are located (and checked) here.

    `instruction_style` goes only to tasks that offer several instruction styles (`instruction_styles`,
    e.g. the GSTransform tasks); None means each task's default. Likewise `prompt_source` goes only to
    tasks that declare `prompt_sources` (the MTEB-named tasks, bench.tasks.generic): "mteb" keeps MTEB's own
    `TaskMetadata.prompt`, "harness" puts the harness's instruction there; None means each task's default.
    """
    load_plugins()
    out = []
    for name in names:
        if not is_known_task(name):
            raise unknown_task(name)
        cls = TASKS.get(name) or _mteb_task_class(name)
        options = {"instruction_style": instruction_style} if getattr(cls, "instruction_styles", None) else {}
        if prompt_source is not None and getattr(cls, "prompt_sources", None):
            options["prompt_source"] = prompt_source
        out.append(cls(data_dir=data_dir, limit=limit, seed=seed, **options))
    return out


def is_known_task(name: str) -> bool:
    """A harness task, or a task of MTEB's registry."""
    from bench.tasks.mteb_compat import mteb_registry

    return name in TASKS or name in mteb_registry()


def unknown_task(name: str) -> UnknownNameError:
    """The error for a name that is no task: close matches among the harness's tasks, else among MTEB's."""
    from bench.tasks.mteb_compat import mteb_registry

    return unknown_task_among(name, TASKS, mteb_registry())


def _mteb_task_class(name: str) -> type:
    from bench.tasks.generic import mteb_task_class

    return mteb_task_class(name)


__all__ = [
    "SUITES",
    "SUITE_DESCRIPTIONS",
    "TASKS",
    "get_tasks",
    "load_plugins",
    "task_names",
    *(c.__name__ for c in TASKS.values() if c.__module__.startswith(f"{__name__}.")),
]
