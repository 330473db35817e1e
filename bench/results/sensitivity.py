"""Instruction sensitivity: how far a score moves when only the instruction's wording changes.

Per task and model (`summarize`): over the variants of a variants file (`bench/core/variants.py`), the
number of variants, mean, standard deviation (sample, ddof=1: the variants are a sample of the ways
one could word the instruction; None for a single variant), min and max of the main score, the mean
of each named set, and the difference of means between every two sets in file order
(`correct-incorrect` is InBedder's Δci, `implicit-incorrect` its Δii).

Across models (`rank_stability`), over the variants every model was run under: Kendall's τ-b between
the model rankings under each pair of variants (scipy; undefined for a pair with a variant under which
every model ties, counted in `pairs_undefined` and left out of the mean and min), and the share of
variants under which the top model is not the top model by mean score (Kostiuk & Enevoldsen 2026 show a prompt choice can put any
model first; this is how often it does here).

`collect(find_results(DIR))` groups result files into these: a result belongs to a variant when its
run record has a `variant` block; its siblings share model, revision, task and the experiment minus
the `instruction` key. Nothing here imports MTEB or torch.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, NotRequired, TypedDict, TypeVar

from bench.core.json_types import object_at
from bench.core.run_record import RecordView
from bench.core.variants import EXPERIMENT_KEY

ModelKey = tuple[str, str, str]  # (model name, revision, experiment without the instruction key)
K = TypeVar("K", bound=Hashable)  # what names a model in `rank_stability` (a ModelKey in `stability_by_task`)
# A result as a reader holds it: (its file, the TaskResult's JSON, its run record or None); what
# bench/results/store.py `find_results` gives (typed there), or the leaderboard's entries as read.
FoundView = tuple[Path, Mapping[str, object], RecordView | None]


@dataclass(frozen=True)
class VariantScore:
    label: str
    set: str | None
    score: float
    # As the run record's `variant.instruction` holds it: a text, or one per prompt type (VariantBlock). Any,
    # not `str | dict[str, str] | None`, while bench/leaderboard/row_types.py `VariantJson.instruction` says `str`.
    instruction: Any = None


class SensitivitySummary(TypedDict):
    """`summarize`'s statistics of one model's variants of one task (scores 0-1, as the results hold them)."""

    n: int  # variants
    mean: float
    std: float | None  # sample standard deviation (n-1); None for a single variant
    min: float
    max: float
    set_means: NotRequired[dict[str, float]]  # named set -> mean of its variants; only when a variant names a set
    set_differences: NotRequired[dict[str, float]]  # "a-b" -> mean of set a minus mean of set b, in file order


class RankStability(TypedDict, Generic[K]):
    """`rank_stability`'s comparison of the models' rankings under every two shared variants."""

    models: int
    variants: int  # the variants every model ran
    kendall_tau: dict[str, float | None]  # "a|b" -> τ-b of the rankings under variants a and b; None: undefined
    mean_tau: float | None  # over the defined pairs; None when none is
    min_tau: float | None
    pairs: int
    pairs_compared: int  # pairs with a τ
    pairs_undefined: int  # pairs with a variant under which every model ties
    top_by_mean: K  # the model with the best mean score over the shared variants (the first of a tie)
    top_change_share: float  # share of the variants under which `top_by_mean` is not first
    variants_with_other_top: list[str]


def summarize(scores: Sequence[VariantScore], set_order: Sequence[str] = ()) -> SensitivitySummary:
    """n, mean, std, min, max over the variants; per named set its mean, and differences of set means."""
    if not scores:
        raise ValueError("summarize needs at least one variant score")
    values = [s.score for s in scores]
    n = len(values)
    # `statistics` computes in exact fractions: equal scores give a std of exactly 0, not 3e-17.
    mean = statistics.fmean(values)
    std = statistics.stdev(values) if n > 1 else None
    out: SensitivitySummary = {"n": n, "mean": mean, "std": std, "min": min(values), "max": max(values)}
    named = [s.set for s in scores if s.set is not None]
    if named:
        order = [s for s in set_order if s in named] + [s for s in dict.fromkeys(named) if s not in set_order]
        means = {name: statistics.fmean(v.score for v in scores if v.set == name) for name in order}
        out["set_means"] = means
        out["set_differences"] = {f"{a}-{b}": means[a] - means[b] for a, b in itertools.combinations(order, 2)}
    return out


def rank_stability(by_model: Mapping[K, Mapping[str, float]]) -> RankStability[K] | None:
    """Kendall τ between model rankings under each pair of shared variants, and how often the top model changes.

    None when fewer than two models or two shared variants (nothing to compare).
    """
    models = list(by_model)
    shared = [label for label in next(iter(by_model.values()), {}) if all(label in by_model[m] for m in models)]
    if len(models) < 2 or len(shared) < 2:
        return None
    from scipy.stats import kendalltau

    columns = {label: [by_model[m][label] for m in models] for label in shared}
    taus: dict[str, float | None] = {}
    for a, b in itertools.combinations(shared, 2):
        tau = kendalltau(columns[a], columns[b]).statistic
        taus[f"{a}|{b}"] = None if tau is None or math.isnan(tau) else float(tau)
    means = {m: math.fsum(by_model[m][label] for label in shared) / len(shared) for m in models}
    best = max(means.values())
    reference = next(m for m in models if means[m] == best)
    leaders = {label: [m for m, v in zip(models, col, strict=True) if v == max(col)] for label, col in columns.items()}
    changed = [label for label, top in leaders.items() if reference not in top]
    defined = [t for t in taus.values() if t is not None]
    return {
        "models": len(models),
        "variants": len(shared),
        "kendall_tau": taus,
        "mean_tau": math.fsum(defined) / len(defined) if defined else None,
        "min_tau": min(defined) if defined else None,
        # τ is undefined (None) for a pair where a variant ties every model: mean and min are over the rest
        "pairs": len(taus),
        "pairs_compared": len(defined),
        "pairs_undefined": len(taus) - len(defined),
        "top_by_mean": reference,
        "top_change_share": len(changed) / len(shared),
        "variants_with_other_top": changed,
    }


@dataclass
class TaskSensitivity:
    """One model's variants of one task, read from result files."""

    task: str
    model: ModelKey
    main_score_name: str | None
    scores: list[VariantScore] = field(default_factory=list)
    set_order: tuple[str, ...] = ()
    default: float | None = None  # the run under the task's own instruction, when present

    def summary(self) -> dict[str, Any]:
        """`summarize` as a plain mapping: the leaderboard reads its statistics by a key it loops over."""
        return dict(summarize(self.scores, self.set_order))

    def by_label(self) -> dict[str, float]:
        return {s.label: s.score for s in self.scores}


def is_variant(record: RecordView | None) -> bool:
    """True for a result run under an instruction variant (its run record has a `variant` block)."""
    return bool(record and record.get("variant"))


def base_experiment(experiment: object) -> str:
    """The experiment text of a variant's siblings: its experiment (the run record's `model.experiment`)
    without the instruction key."""
    rest = {k: v for k, v in object_at(experiment).items() if k != EXPERIMENT_KEY}
    return ", ".join(f"{k}={v}" for k, v in sorted(rest.items())) or "default"


def collect(found: Iterable[FoundView]) -> list[TaskSensitivity]:
    """Variant results grouped per (task, model), in task then model order; defaults attached."""
    from bench.results.store import main_score

    groups: dict[tuple[str, ModelKey], TaskSensitivity] = {}
    defaults: dict[tuple[str, ModelKey], tuple[float, str | None]] = {}
    for _path, data, record in found:
        if not record or "model" not in record:
            continue
        model = object_at(record["model"])
        key = (
            str(data["task_name"]),
            (str(model.get("name")), str(model.get("revision")), base_experiment(model.get("experiment"))),
        )
        metric = object_at(record.get("task")).get("main_score")
        metric_name = metric if isinstance(metric, str) else None
        variant = object_at(record.get("variant"))
        if not variant:  # not is_variant(record): the run under the task's own instruction
            defaults[key] = (main_score(data), metric_name)
            continue
        group = groups.setdefault(key, TaskSensitivity(key[0], key[1], metric_name))
        named = variant.get("set")  # store.record_problem: a text or None, and `sets` a list of texts
        variant_set = named if isinstance(named, str) else None
        group.scores.append(
            VariantScore(str(variant["label"]), variant_set, main_score(data), variant.get("instruction"))
        )
        sets = variant.get("sets")
        if sets and isinstance(sets, list) and not group.set_order:
            group.set_order = tuple(str(s) for s in sets)
        if variant_set and variant_set not in group.set_order:
            group.set_order += (variant_set,)
    for key, group in groups.items():
        score, metric_name = defaults.get(key, (None, None))
        # A robustness task's own run reports Δci; its variants, V-measures: no common column.
        group.default = score if metric_name == group.main_score_name else None
        group.scores.sort(key=lambda s: (group.set_order.index(s.set) if s.set in group.set_order else -1, s.label))
    return [groups[k] for k in sorted(groups)]


def rank_stability_by_task(groups: Iterable[TaskSensitivity]) -> dict[str, RankStability[ModelKey]]:
    """Per task with two or more models: `rank_stability` over the models' shared variants."""
    per_task: dict[str, dict[ModelKey, dict[str, float]]] = {}
    for g in groups:
        per_task.setdefault(g.task, {})[g.model] = g.by_label()
    out: dict[str, RankStability[ModelKey]] = {}
    for task, by_model in per_task.items():
        result = rank_stability(by_model)
        if result is not None:
            out[task] = result
    return out


def stability_by_task(groups: Iterable[TaskSensitivity]) -> dict[str, dict[str, Any]]:
    """`rank_stability_by_task` as plain mappings: the leaderboard's JSON spreads each into its own."""
    return {task: dict(result) for task, result in rank_stability_by_task(groups).items()}


__all__ = [
    "FoundView",
    "RankStability",
    "SensitivitySummary",
    "TaskSensitivity",
    "VariantScore",
    "base_experiment",
    "collect",
    "is_variant",
    "rank_stability",
    "rank_stability_by_task",
    "stability_by_task",
    "summarize",
]
