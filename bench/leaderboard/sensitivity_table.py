"""The leaderboard's instruction sensitivity: results run under instruction variants, per task.

Results run under instruction variants (`bench run --instruction-variants`) are never model rows: they go
to `sensitivity` (`sensitivity_data`), per task: each model's score under every variant, their spread
(`bench.results.sensitivity.summarize`, the same statistics `bench results` prints) and how stable the
ranking of the models is across variants (`rank_stability`; baselines are left out of it, as they are
never ranked). Its scores are ×100 like the suite tables'; each variant carries its own verification.
"""

from __future__ import annotations

from collections.abc import Container
from pathlib import Path
from typing import Any

from bench.core.json_types import JSONObject
from bench.leaderboard.entries import Entry, ModelKey, base_key
from bench.leaderboard.row_types import SensitivityTask, VariantJson
from bench.leaderboard.rows import ModelRow, all_verified, verification_of
from bench.results.marks import is_baseline
from bench.results.sensitivity import collect, is_variant, stability_by_task


def sensitivity_data(
    entries: list[Entry], rows: list[ModelRow], verified: Container[str] | None = None
) -> list[SensitivityTask]:
    """Per task with variant results: every model's variants, their spread, and the rank stability.

    Models within a task are ordered by mean score (best first); `model_id` links a model's row (its
    run under the task's own instructions) where the leaderboard has one.
    """
    variant_entries = {(e.task, base_key(e), e.record["variant"]["label"]): e for e in entries if is_variant(e.record)}
    if not variant_entries:
        return []
    groups = collect((Path(e.file), e.result, e.record) for e in entries)
    ids = {r.key: r.id for r in rows}
    baseline: dict[tuple[str, ModelKey], bool] = {}  # instruction-blind under every variant (marks.is_baseline)
    for (task, key, _), e in variant_entries.items():
        baseline[(task, key)] = baseline.get((task, key), True) and is_baseline(e.record)
    stability = stability_by_task(g for g in groups if not baseline[(g.task, ModelKey(*g.model))])
    out: dict[str, SensitivityTask] = {}
    for g in groups:
        key = ModelKey(*g.model)
        summary = g.summary()
        variants: list[VariantJson] = []
        for v in g.scores:
            e = variant_entries[(g.task, key, v.label)]
            variants.append(
                {
                    "label": v.label,
                    "set": v.set,
                    "index": e.record["variant"].get("index"),
                    "instruction": v.instruction,
                    "score": 100 * v.score,
                    "file": e.file,
                    "submission": e.submission,
                    "verification": verification_of(e, verified),
                }
            )
        block = out.setdefault(g.task, {"task": g.task, "main_score_name": g.main_score_name, "models": []})
        block["models"].append(
            {
                "name": key.name,
                "revision": key.revision,
                "setting": key.experiment,
                "label": key.label,
                "model_id": ids.get(key),
                "baseline": baseline[(g.task, key)],  # marks.BASELINE.key
                "default": None if g.default is None else 100 * g.default,
                "mean": 100 * summary["mean"],  # `summarize`: mean, min and max of one or more scores
                "std": None if summary["std"] is None else 100 * summary["std"],  # None for one score
                "min": 100 * summary["min"],
                "max": 100 * summary["max"],
                "n": summary["n"],
                "set_means": {k: 100 * v for k, v in summary.get("set_means", {}).items()},
                "set_differences": {k: 100 * v for k, v in summary.get("set_differences", {}).items()},
                "verification": all_verified([variant_entries[(g.task, key, v.label)] for v in g.scores], verified),
                "variants": variants,
            }
        )
    result = []
    for name in sorted(out):
        block = out[name]
        block["models"].sort(key=lambda m: (m["baseline"], -m["mean"]))
        block["set_differences"] = list(dict.fromkeys(d for m in block["models"] for d in m["set_differences"]))
        block["stability"] = _stability_json(stability.get(name), ids)
        result.append(block)
    return result


def _stability_json(found: dict[str, Any] | None, ids: dict[ModelKey, str]) -> JSONObject | None:
    """`rank_stability`'s result with model labels (and row ids) in place of key tuples."""
    if found is None:
        return None
    top = ModelKey(*found["top_by_mean"])
    return {
        **found,
        "top_by_mean": top.label,
        "top_model_id": ids.get(top),
        "other_top": len(found["variants_with_other_top"]),
    }
