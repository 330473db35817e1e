"""The note `bench run` prints under its table when an MTEB task's result was computed on local data."""

from __future__ import annotations

from collections.abc import Sequence

from bench.results.outcome import TaskOutcome
from bench.results.store import HARNESS_RESULTS


def local_data_note(outcomes: Sequence[TaskOutcome]) -> str | None:
    """One line when an MTEB task's result was computed on local data (a `local-…` dataset revision):
    it is filed under OUTPUT/instruct-bench, not where `mteb submit-results` looks (bench/results/store.py)."""
    from bench.results.marks import local_copy

    copies = [o for o in outcomes if local_copy(o.record)]
    if not copies:  # MTEB's registry is imported only when there is something to look up (a reused rerun has none)
        return None
    from bench.tasks.mteb_compat import mteb_registry

    registry = mteb_registry()
    local = list(
        dict.fromkeys(
            o.task
            for o in copies
            if o.task in registry and not str(registry[o.task].__module__).startswith("bench.tasks.")
        )
    )
    if not local:
        return None
    named = ", ".join(local[:4]) + (f", +{len(local) - 4} more" if len(local) > 4 else "")
    return (
        f"Note: {named} ran on local data and carries a local-… dataset revision, so it is filed under "
        f"{HARNESS_RESULTS}/: MTEB's results repository will not take them (the revision is what says a number "
        "was computed on the published data, and these are not), and `mteb submit-results` does not look there."
    )
