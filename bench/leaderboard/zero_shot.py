"""Zero-shot facts of a leaderboard row on a suite: was the model trained on any of the suite's tasks?

Why: a model trained on a benchmark's own datasets is not scored zero-shot on it; MTEB's leaderboard
shows a "Zero-shot" column and filter for this, and 39 of the 184 MTEB rows on `generic` were trained on
at least one of its tasks (the row ranked first on three) with nothing on the board saying so.

Computed exactly as MTEB computes it (mteb/benchmarks/_create_table.py `_is_zero_shot_cached` and
`_zero_shot_pct_cached`, the same as `ModelMeta.is_zero_shot_on` and `ModelMeta.zero_shot_percentage`):
the model's training datasets, similar tasks included (`ModelMeta.get_training_datasets` of MTEB's
registry entry of the model, as MTEB's leaderboard reads it: for an MTEB row by bench/leaderboard/
mteb_published.py `training_datasets`; for a submitted row by its model's name and for a paper's row by
its spec's hub id, from the cached catalogue of the registry, bench/leaderboard/facts.py
`registry_training`), against the names of all of the suite's tasks, whichever the row has:

* `zero_shot`: "yes" when the model was trained on none of them, "no" when on one or more, "unknown" when
  the registry names no training data (MTEB's "⚠️ NA"), or the row's model is not in the registry;
* `zero_shot_pct`: MTEB's percentage, `int(100 - 100 * trained / tasks)`; None when unknown;
* `trained_on`: the suite's tasks it was trained on, sorted.

No MTEB import here: the training datasets are given.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TypedDict

from bench.leaderboard.row_types import ZeroShot

ZERO_SHOT_VALUES: tuple[ZeroShot, ...] = ("yes", "no", "unknown")


class ZeroShotFacts(TypedDict):
    """A suite row's zero-shot fields in leaderboard.json."""

    zero_shot: ZeroShot
    zero_shot_pct: int | None
    trained_on: list[str]


def zero_shot(training: Collection[str] | None, tasks: Collection[str]) -> ZeroShotFacts:
    """The zero-shot facts of a model trained on `training` (None: unknown) on a suite of `tasks`.

    As MTEB: no tasks is zero-shot (`is_zero_shot_on` returns True) with no percentage; unknown training
    data is "unknown" whatever the tasks."""
    names = set(tasks)
    if not names:
        return {"zero_shot": "yes", "zero_shot_pct": None, "trained_on": []}
    if training is None:
        return {"zero_shot": "unknown", "zero_shot_pct": None, "trained_on": []}
    overlap = sorted(names & set(training))
    return {
        "zero_shot": "no" if overlap else "yes",
        "zero_shot_pct": int(100 - 100 * (len(overlap) / len(names))),
        "trained_on": overlap,
    }
