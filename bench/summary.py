"""Tables printed after `bench run` and by `bench results DIR`. Scores are shown x100, as in the papers."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tabulate import tabulate

from bench.results import find_results, main_score

if TYPE_CHECKING:
    from bench.runner import TaskOutcome

_HIDDEN = {"main_score", "evaluation_time", "kg_co2_emissions"}


def _details(outcome: TaskOutcome) -> str:
    """Per-criterion / per-aspect sub-scores, which show what the main score hides."""
    return ", ".join(f"{label} {100 * value:.2f}" for _, label, value in detail_values(outcome.task, outcome.scores, outcome.main_score_name))


def detail_values(task_name: str, scores: dict[str, Any], main_score_name: str) -> list[tuple[str, str, float]]:
    """(score key, label, raw value) of a task's sub-scores; also the leaderboard's per-aspect plot.

    A task type may name its own (`detail_scores`: score key -> label, in print order); otherwise
    success rates and V-measures other than the main score are shown.
    """
    declared = _declared_details(task_name)
    if declared:
        return [(key, label, scores[key]) for key, label in declared.items() if isinstance(scores.get(key), float)]
    parts = []
    for key, value in scores.items():
        if key in _HIDDEN or key == main_score_name or not isinstance(value, float):
            continue
        if key.endswith("success_rate") or key.startswith("v_measure_"):
            parts.append((key, key.removesuffix("_success_rate").removeprefix("v_measure_"), value))
    return parts


def _declared_details(task_name: str) -> dict[str, str] | None:
    from tasks import TASKS

    return getattr(TASKS.get(task_name), "detail_scores", None)


def run_table(outcomes: list[TaskOutcome]) -> str:
    rows = []
    for o in outcomes:
        enc = o.record.get("encode", {})
        rows.append([
            o.task,
            o.main_score_name,
            f"{100 * o.main_score:.2f}",
            _details(o),
            enc.get("texts_encoded", "-") if o.status == "computed" else 0,
            enc.get("cache_hits", "-") if o.status == "computed" else "-",
            f"{o.record.get('evaluation_seconds', 0):.1f}" if o.status == "computed" else "-",
            o.status,
        ])
    if outcomes:
        avg = sum(o.main_score for o in outcomes) / len(outcomes)
        rows.append(["Average", "", f"{100 * avg:.2f}", "", "", "", "", ""])
    headers = ["Task", "Metric", "Score", "Details", "Encoded", "Cache hits", "Seconds", "Status"]
    return tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)


def results_table(root: Path) -> str:
    """One row per model (and experiment), one column per task, plus the average."""
    found = find_results(root)
    if not found:
        return f"No result files under {root}."
    by_model: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    for path, data, record in found:
        model, revision, experiment = _model_of(path, Path(root), record)
        by_model[(model, revision, experiment)][data["task_name"]] = main_score(data)
    task_names = sorted({t for scores in by_model.values() for t in scores})
    rows = []
    for (model, revision, experiment), scores in sorted(by_model.items()):
        cells = [f"{100 * scores[t]:.2f}" if t in scores else "-" for t in task_names]
        avg = f"{100 * sum(scores.values()) / len(scores):.2f}"
        rows.append([model, revision[:18], experiment, *cells, avg])
    return tabulate(rows, headers=["Model", "Revision", "Experiment", *task_names, "Average"], tablefmt="github", disable_numparse=True)


def _model_of(path: Path, root: Path, record: dict[str, Any] | None) -> tuple[str, str, str]:
    if record:
        m = record["model"]
        experiment = ", ".join(f"{k}={v}" for k, v in sorted(m.get("experiment", {}).items())) or "default"
        return m["name"], m["revision"], experiment
    parts = path.relative_to(root).parts
    experiment = parts[-2] if "experiments" in parts else "default"
    return parts[0].replace("__", "/"), parts[1] if len(parts) > 2 else "", experiment
