"""What the leaderboard accepts from a submission: one result (`Entry`) under its row (`ModelKey`), and the
verdict on a submission (`Report`), with how a result is keyed and identified.

`result_key` is what one result is of (model, revision, setting, task): at most one per key is shown.
`identity` (`entry_sha256`) is what a verification file names: the result file, run record and
model_meta.json as submitted. `same_result` (`result_identity`, bench/leaderboard/rerun.py) is equal for
re-runs of one result, which merge, and differs for a conflict (bench/leaderboard/trust.py). The checks
that make an Entry are bench/leaderboard/validate.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bench.core.bounded import printable
from bench.core.fileio import sha256_json
from bench.core.json_types import JSONObject
from bench.leaderboard.rerun import result_identity, same_result_view
from bench.leaderboard.schema import Problem
from bench.results.sensitivity import base_experiment


@dataclass(frozen=True, order=True)
class ModelKey:
    """One leaderboard row: a model at a revision under one setting (MTEB experiment)."""

    name: str
    revision: str
    experiment: str  # "default", or the options that differ from the family's defaults

    @property
    def label(self) -> str:
        return self.name if self.experiment == "default" else f"{self.name} [{self.experiment}]"


@dataclass
class Entry:
    """One accepted result: a model's scores on one task, with the run record that says how."""

    submission: str
    file: str
    task: str
    model: ModelKey
    result: dict[str, Any]
    record: dict[str, Any]
    model_meta: JSONObject | None = None  # model_meta.json beside the result, as submitted (parsed JSON)
    digest: str | None = field(default=None, repr=False, compare=False)  # its entry_sha256, once computed: `identity`
    same: str | None = field(default=None, repr=False, compare=False)  # its `result_identity`, once computed
    # Every copy of this result that submissions gave (itself included; the one shown first) when re-runs merged.
    seen_in: list[Entry] = field(default_factory=list, repr=False, compare=False)


@dataclass
class Report:
    """The verdict on one submission."""

    submission: str
    entries: list[Entry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    merged: list[Entry] = field(default_factory=list)  # re-runs of a result another submission gave, not shown
    held: list[Entry] = field(default_factory=list)  # results held back in a conflict (`settle_conflicts`)

    @property
    def valid(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        if self.valid:
            variants = sum(1 for e in self.entries if e.record.get("variant"))
            models = sorted({printable(base_key(e).label) for e in self.entries})  # no terminal escapes from a setting
            extra = f" ({variants} of them under instruction variants)" if variants else ""
            if self.merged:
                extra += (
                    f"; {len(self.merged)} re-run(s) of results another submission gave (same identity and scores: "
                    "merged, not added twice)"
                )
            if self.held:
                extra += f"; {len(self.held)} held back: they conflict with another submission's (listed below)"
            given = f"{len(self.entries)} results of {', '.join(models)}" if self.entries else "no new results"
            return f"accepted {self.submission}: {given}{extra}"
        lines = [f"REJECTED {self.submission}: {len(self.problems)} problem(s)"]
        lines += [f"  - {p}" for p in self.problems]
        return "\n".join(lines)


def experiment_label(experiment: Mapping[str, object] | None) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted((experiment or {}).items())) or "default"


def model_key(record: dict[str, Any]) -> ModelKey:
    m = record["model"]
    return ModelKey(str(m["name"]), str(m["revision"]), experiment_label(m.get("experiment")))


def base_key(entry: Entry) -> ModelKey:
    """The model row an entry belongs to; for an instruction-variant result, the row of its siblings
    (its experiment without the `instruction` key)."""
    if not entry.record.get("variant"):
        return entry.model
    return ModelKey(entry.model.name, entry.model.revision, base_experiment(entry.record["model"].get("experiment")))


def result_key(entry: Entry) -> tuple[str, str, str, str]:
    """What one result is of: (model, revision, setting, task); at most one per key is shown."""
    return (entry.model.name, entry.model.revision, entry.model.experiment, entry.task)


def entry_sha256(entry: Entry) -> str:
    """The identity of a result as submitted: its result file, run record and model_meta.json (key order
    ignored). The model's facts are in it, so editing the size or card link after verification unverifies."""
    return sha256_json({"result": entry.result, "record": entry.record, "model_meta": entry.model_meta})


def identity(entry: Entry) -> str:
    """What a verification file names: `entry_sha256` (result file, run record, model_meta.json as canonical
    JSON), computed once per entry (a build asks ~6 times)."""
    if entry.digest is None:
        entry.digest = entry_sha256(entry)
    return entry.digest


def view(entry: Entry) -> dict[str, Any]:
    """What two results of one key must agree in to be one result (bench/leaderboard/rerun.py)."""
    return same_result_view(entry.result, entry.record, entry.model_meta)


def same_result(entry: Entry) -> str:
    """`result_identity` of an entry, computed once: equal for re-runs of one result (same scores, same
    identity), which merge; different for a conflict."""
    if entry.same is None:
        entry.same = result_identity(entry.result, entry.record, entry.model_meta)
    return entry.same
