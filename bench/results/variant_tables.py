"""The instruction-variant tables of `bench results`: "Instruction sensitivity" and "Rank stability".

Results run under instruction variants (`bench run --instruction-variants`) are not model rows: one model
with 30 variants would add 30 rows. `bench results` summarizes them after the main table instead
(statistics from `bench.results.sensitivity`): spread of the main score per task and model, and per task
how stable the models' ranking is across the variants. Baselines (∅) and `--limit` runs (⊂) are shown but
left out of the rank stability, as they are never ranked. `stat_cells` is also the columns of `bench run`'s
variant table (bench/results/summary.py `variant_run_table`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from bench.core.json_types import object_at
from bench.results.marks import BASELINE, SUBSET, is_baseline, limit_of
from bench.results.naming import SHORT_REVISION, readable_experiment
from bench.results.sensitivity import (
    FoundView,
    ModelKey,
    RankStability,
    SensitivitySummary,
    TaskSensitivity,
    collect,
    is_variant,
    rank_stability_by_task,
    summarize,
)
from bench.results.tables import Cell, Table, format_count, format_score, render

STAT_HEADERS = ["Variants", "Own", "Mean", "Std", "Min", "Max"]


def stat_cells(stats: SensitivitySummary, differences: list[str], default: float | None = None) -> list[str]:
    """One row's STAT_HEADERS cells, then one per set difference, from a `bench.results.sensitivity.summarize` result."""
    diffs = stats.get("set_differences", {})
    return [
        format_count(stats["n"]),
        "-" if default is None else format_score(default),
        format_score(stats["mean"]),
        "-" if stats["std"] is None else format_score(stats["std"]),
        format_score(stats["min"]),
        format_score(stats["max"]),
        *(format_score(diffs[d]) if d in diffs else "-" for d in differences),
    ]


SENSITIVITY_NOTE = (
    "Scores ×100 over the instruction variants of each task: Std is the sample standard deviation (n-1); "
    "a-b columns are the mean of set a minus the mean of set b (correct-incorrect is InBedder's Δci); "
    "Own is the run under the task's own instruction."
)
STABILITY_NOTE = (
    "Kendall τ-b between the models' rankings under every two variants that all of the task's models ran "
    "(1: same order, -1: reversed); Other top: variants under which the best model by mean is not first. "
    "Under a variant where every model has the same score there is no ranking, so τ is undefined for each "
    "pair with it: Mean and Min τ are over the other pairs, and the cell says how many those are "
    "(\"-1.00 (1 of 3 pairs; 2 undefined: tied scores)\"); '-' when no pair has a τ. Baselines (∅: "
    "instruction-blind settings) and limited runs (⊂: --limit) are left out, as they are never ranked."
)


def sensitivity_table_list(found: Sequence[FoundView], *, full_revisions: bool = False) -> list[Table]:
    """The "Instruction sensitivity" and "Rank stability" tables; none when no result is a variant."""
    from bench.core.variants import EXPERIMENT_KEY
    from bench.results.sensitivity import base_experiment

    groups = _groups(found)
    if not groups:
        return []
    names: dict[tuple[str, str, str], str] = {}
    blind: set[tuple[str, str, str]] = set()  # baselines: shown, but left out of the rank stability (as on the site)
    for _path, _data, record in found:
        if record is not None and is_variant(record) and "model" in record:
            m = object_at(record["model"])
            if is_baseline(record):
                blind.add((str(m.get("name")), str(m.get("revision")), base_experiment(m.get("experiment"))))
            rest = {k: v for k, v in object_at(m.get("experiment")).items() if k != EXPERIMENT_KEY}
            names[(str(m.get("name")), str(m.get("revision")), base_experiment(m.get("experiment")))] = (
                readable_experiment(rest, object_at(m.get("settings")))
            )
    limited = {id(g) for g, limit in groups if limit is not None}  # --limit runs: shown, never in the rank stability
    summaries = [(g, summarize(g.scores, g.set_order)) for g, _ in groups]
    differences = list(dict.fromkeys(d for _, s in summaries for d in s.get("set_differences", {})))
    experiments = any(g.model[2] != "default" for g, _ in groups)
    revisions = _ambiguous_revisions(g.model for g, _ in groups)

    def label(model: tuple[str, str, str], with_experiment: bool = False) -> str:
        return _model_label(
            model, revisions, with_experiment=with_experiment, names=names, full_revisions=full_revisions
        )

    rows: list[list[Cell | str]] = []
    for g, s in summaries:
        shown = label(g.model) + "".join(
            f" {m.symbol}" for m, on in ((BASELINE, g.model in blind), (SUBSET, id(g) in limited)) if on
        )
        rows.append(
            [
                g.task,
                shown,
                *([names.get(g.model, g.model[2])] if experiments else []),
                g.main_score_name or "-",
                *stat_cells(s, differences, g.default),
            ]
        )
    headers = ["Task", "Model", *(["Experiment"] if experiments else []), "Metric", *STAT_HEADERS, *differences]
    tables = [
        Table(
            "Instruction sensitivity",
            headers,
            rows,
            "l" * (len(headers) - len(STAT_HEADERS) - len(differences)) + "r" * (len(STAT_HEADERS) + len(differences)),
            "Instruction sensitivity of the main score (×100).",
            used={SUBSET.key} if limited else set(),
            notes=[SENSITIVITY_NOTE],
        )
    ]
    stability = rank_stability_by_task(g for g, _ in groups if g.model not in blind and id(g) not in limited)
    if stability:
        stable_rows: list[list[Cell | str]] = [
            [
                task,
                format_count(r["models"]),
                format_count(r["variants"]),
                _mean_tau(r),
                _tau(r["min_tau"]),
                label(r["top_by_mean"], with_experiment=True),
                f"{len(r['variants_with_other_top'])} of {r['variants']} ({100 * r['top_change_share']:.0f}%)",
            ]
            for task, r in sorted(stability.items())
        ]
        headers = ["Task", "Models", "Shared variants", "Mean τ", "Min τ", "Top by mean", "Other top"]
        tables.append(
            Table(
                "Rank stability",
                headers,
                stable_rows,
                "lrrrrlr",
                "Rank stability of the models across instruction variants.",
                notes=[STABILITY_NOTE],
            )
        )
    return tables


def _groups(found: Sequence[FoundView]) -> list[tuple[TaskSensitivity, int | None]]:
    """`collect`'s groups with the `--limit` they ran under (None: a full run), in task then model order.

    Each limit is collected apart: a `--limit` run's variants (and its own default run) are a group of their
    own beside the same model's full run, never mixed into it, and only that group is marked ⊂."""
    parts: dict[int | None, list[FoundView]] = defaultdict(list)
    for item in found:
        parts[limit_of(item[2])].append(item)
    groups = [(g, limit) for limit, part in parts.items() for g in collect(part)]
    return sorted(groups, key=lambda x: (x[0].task, x[0].model, -1 if x[1] is None else x[1]))


def sensitivity_tables(found: Sequence[FoundView], fmt: str = "markdown", full_revisions: bool = False) -> str:
    """The "Instruction sensitivity" and "Rank stability" tables in `fmt`; "" when no result is a variant."""
    tables = sensitivity_table_list(found, full_revisions=full_revisions)
    return render(tables, fmt) if tables else ""


def _tau(value: float | None) -> str:
    """Kendall τ is a correlation in [-1, 1], not a score: two decimals, not ×100; '-' where undefined."""
    return "-" if value is None else f"{value:.2f}"


def _mean_tau(result: RankStability[ModelKey]) -> str:
    """Mean τ, and when some pairs of variants had no τ (tied scores) over how many pairs it is."""
    undefined = result.get("pairs_undefined", 0)
    if not undefined:
        return _tau(result["mean_tau"])
    return (
        f"{_tau(result['mean_tau'])} ({result['pairs_compared']} of {result['pairs']} pairs; "
        f"{undefined} undefined: tied scores)"
    )


def _ambiguous_revisions(models: Iterable[ModelKey]) -> set[str]:
    """Model names seen at more than one revision: only those get their revision in the tables."""
    seen: dict[str, set[str]] = defaultdict(set)
    for name, revision, _ in models:
        seen[name].add(revision)
    return {name for name, revs in seen.items() if len(revs) > 1}


def _model_label(
    model: tuple[str, str, str],
    revisions: set[str],
    *,
    with_experiment: bool = False,
    names: dict[tuple[str, str, str], str] | None = None,
    full_revisions: bool = False,
) -> str:
    name, revision, experiment = model
    label = f"{name}@{revision if full_revisions else revision[:SHORT_REVISION]}" if name in revisions else name
    experiment = (names or {}).get(model, experiment)
    return f"{label} [{experiment}]" if with_experiment and experiment != "default" else label
