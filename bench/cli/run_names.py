"""The names `bench run` is given (tasks, a suite, a model's family), checked before MTEB is imported.

Why: the run itself needs MTEB (seconds of CPU, ~300 MB), and a mistyped name used to cost that import
before its "Did you mean" (`bench run -t DemoIntentEmoton`: ~6 CPU s). The task catalogue
(bench/results/task_catalog.py, cached per version of the task files and of MTEB) holds every name a run
may be given, the harness's tasks, MTEB's, the suites and their MTEB benchmark names, and the run-flag
table (bench/adapters/registry.py `family_names`) the families' names and aliases; so a wrong name is
answered from files, with the same message the registries give (`bench.core.errors`), and a right one
costs nothing more. A suite given by its MTEB benchmark name is handed on as the suite's own name.
"""

from __future__ import annotations

from pathlib import Path

from bench.core.errors import UnknownNameError, suite_for, unknown_task


def check_run_names(tasks: list[str] | None, suite: str | None) -> str | None:
    """The suite's own name for `suite` (a suite or its MTEB benchmark name; None stays None), after
    checking every name of `tasks` is the harness's task or MTEB's.

    Raises:
        UnknownNameError: the first unknown task, or an unknown suite, with its closest names.
    """
    from bench.results import task_catalog

    found = task_catalog.catalog()
    for name in tasks or ():
        if name not in found["tasks"] and name not in found["mteb_tasks"]:
            raise unknown_task(name, found["tasks"], found["mteb_tasks"])
    if suite is None:
        return None
    return suite_for(suite, found["suites"], found["benchmarks"])


def check_model_family(spec: str) -> None:
    """A `--model FAMILY:ID` spec's family is a registered family or alias (from the flag table's file, no
    family imported); a registered name, a path or a hub id is left to `load_model`, which needs no MTEB
    to refuse one either.

    Raises:
        UnknownNameError: the family, with its closest names (as `bench.adapters.registry.family_name`).
    """
    from bench.adapters.registry import MODELS, family_names

    prefix, sep, _ = spec.partition(":")
    if spec in MODELS or not sep or len(prefix) <= 1 or Path(spec).exists():  # as `registry.resolve` reads a spec
        return
    names = family_names()
    if prefix not in names:
        raise UnknownNameError("model family", prefix, names, list_command="python -m bench list models")
