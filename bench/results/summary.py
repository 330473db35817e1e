"""Tables printed after `bench run` and by `bench results DIR`.

One number format everywhere in the CLI (tables and progress lines): scores ×100 with two decimals, as
the papers and the leaderboard print them (`format_score`).

Averages follow the leaderboard's suites (`bench/results/suites.py`: which tasks each paper averages, and
what the column is called). An average is marked partial ("2 of 3 tasks, partial") when the run lacks
some of its tasks, since it is then not comparable with the paper's; a suite whose tasks mix score kinds
(Δci, a difference of V-measures, next to absolute scores: `inbedder`, `all`) gets no average at all.
A score computed on stand-in data (the folder's manifest says `proxy`, see `tasks.data.stand_in_of`) is
marked with a dagger and explained under the table.

Results run under instruction variants (`bench run --instruction-variants`) are not model rows: one
model with 30 variants would add 30 rows. `bench results` summarizes them after the main table instead
(`sensitivity_tables`, statistics from `bench.results.sensitivity`): spread of the main score per task and
model, and per task how stable the models' ranking is across the variants.
"""

from __future__ import annotations

import textwrap
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tabulate import tabulate

from bench.core.errors import DataError
from bench.results.store import find_results, load_result_json, main_score
from bench.results.sensitivity import collect, is_variant, stability_by_task

from bench.results.outcome import TaskOutcome

_HIDDEN = {"main_score", "evaluation_time", "kg_co2_emissions"}
STAND_IN_MARK = "†"
EXPERIMENTS = "experiments"  # MTEB's folder of experiment results under a model revision (mteb.cache)


def format_score(value: float) -> str:
    """A score as every table and log line of the CLI shows it: ×100, two decimals."""
    return f"{100 * value:.2f}"


# ---------------------------------------------------------------------------------------- averages
@dataclass(frozen=True)
class SuiteAverage:
    """One average of one suite over the tasks that have a score."""

    suite: str
    label: str  # the paper's name of the average ("Avg", "Mean", "Mean Δci")
    tasks: tuple[str, ...]  # every task the average is defined over
    present: tuple[str, ...]  # those with a score
    value: float  # mean of the present tasks' main scores (0-1 scale)

    @property
    def complete(self) -> bool:
        return len(self.present) == len(self.tasks)

    @property
    def name(self) -> str:
        """`Average (awareness)`, `Mean Δci (robustness)`, `Avg (InBedder; generic)`."""
        return self._named(self.suite)

    @property
    def title(self) -> str:
        """The name, and for a partial average how partial: `Average (gstransform, 6 of 9 tasks, partial)`."""
        if self.complete:
            return self.name
        return self._named(f"{self.suite}, {len(self.present)} of {len(self.tasks)} tasks, partial")

    def _named(self, inner: str) -> str:
        name = "Average" if self.label in ("Avg", "Avg.", "Mean") else self.label
        return f"{name[:-1]}; {inner})" if name.endswith(")") else f"{name} ({inner})"

    @property
    def missing(self) -> list[str]:
        return [t for t in self.tasks if t not in self.present]


def suite_averages(scores: dict[str, float]) -> list[SuiteAverage]:
    """Every suite average that two or more of the scored tasks take part in (task -> main score, 0-1).

    Suites come from `tasks.SUITES` (through `bench.results.task_catalog`) and their averages from `bench.results.suites`; an average defined over
    the same tasks as one already listed is not repeated (generic's STS average is generic-sts's), and
    suites that mix gaps (Δci) with absolute scores (inbedder, all) are left out: the site splits those
    into two averages, which on a CLI run would only repeat partial copies of the other suites' rows.
    """
    from bench.results.task_catalog import main_scores, suites
    from bench.results.suites import is_gap, suite_averages as average_columns

    out: list[SuiteAverage] = []
    seen: set[tuple[str, ...]] = set()
    main_score_names = main_scores()
    for suite, members in suites().items():
        mains = {t: main_score_names[t] for t in members if t in main_score_names}
        if len({is_gap(m) for m in mains.values()}) > 1:
            continue
        for avg in average_columns(suite, mains):
            over = tuple(avg.tasks or members)
            present = tuple(t for t in over if t in scores)
            if len(present) < 2 or tuple(sorted(over)) in seen:
                continue
            seen.add(tuple(sorted(over)))
            out.append(SuiteAverage(suite, avg.label, over, present, sum(scores[t] for t in present) / len(present)))
    return out


# ---------------------------------------------------------------------------------------- bench run
def _details(outcome: TaskOutcome) -> str:
    """Per-criterion / per-aspect sub-scores, which show what the main score hides."""
    return ", ".join(f"{label} {format_score(value)}"
                     for _, label, value in detail_values(outcome.task, outcome.scores, outcome.main_score_name))


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
    from bench.results.task_catalog import detail_scores

    return detail_scores(task_name)


def stand_in(record: dict[str, Any] | None) -> str | None:
    """The stand-in note of a run record's data, or None when the data is the task's published set."""
    dataset = ((record or {}).get("task") or {}).get("dataset") or {}
    return (dataset.get("stand_in_note") or "stand-in data") if dataset.get("stand_in") else None


def stand_in_footnote(notes: dict[str, str]) -> str:
    """Lines under a table explaining the dagger, one per task on stand-in data."""
    if not notes:
        return ""
    lines = [f"{STAND_IN_MARK} stand-in data, not the task's published set; scores are not comparable with published ones:"]
    lines += ["  " + textwrap.shorten(f"{task}: {note}", width=158, placeholder=" ...") for task, note in sorted(notes.items())]
    return "\n".join(lines)


def run_table(outcomes: list[TaskOutcome]) -> str:
    """The table `bench run` prints: one row per task, then the suite averages, then footnotes; with
    instruction variants, their summary per task below (`variant_run_table`)."""
    variants = [o for o in outcomes if o.variant]
    defaults = [o for o in outcomes if not o.variant]
    table = _default_run_table(defaults)
    return f"{table}\n\n{variant_run_table(variants, defaults)}" if variants else table


def variant_run_table(outcomes: list[TaskOutcome], defaults: list[TaskOutcome] = ()) -> str:
    """Per task, over its variants: the columns of `bench results`' sensitivity table (`stat_cells`),
    plus what encoding the variants took beyond the default run."""
    from bench.results.sensitivity import VariantScore, summarize

    default_score = {(o.task, o.main_score_name): o.main_score for o in defaults}
    by_task: dict[str, list[TaskOutcome]] = defaultdict(list)
    for o in outcomes:
        by_task[o.task].append(o)
    summaries = []
    for task, group in by_task.items():
        order = group[0].variant.get("sets") or tuple(dict.fromkeys(o.variant["set"] for o in group if o.variant.get("set")))
        scores = [VariantScore(o.variant["label"], o.variant.get("set"), o.main_score) for o in group]
        summaries.append((task, group, summarize(scores, order)))
    differences = list(dict.fromkeys(d for *_, s in summaries for d in s.get("set_differences", {})))
    rows = []
    for task, group, stats in summaries:
        computed = [o.record.get("encode", {}) for o in group if o.status == "computed"]
        rows.append([task, group[0].main_score_name, *stat_cells(stats, differences, default_score.get((task, group[0].main_score_name))),
                     sum(e.get("texts_encoded", 0) for e in computed), sum(e.get("cache_hits", 0) for e in computed)])
    headers = ["Task", "Metric", *STAT_HEADERS, *differences, "Encoded", "Cache hits"]
    return "Instruction variants\n" + tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)


STAT_HEADERS = ["Variants", "Own", "Mean", "Std", "Min", "Max"]


def stat_cells(stats: dict[str, Any], differences: list[str], default: float | None = None) -> list[str]:
    """One row's STAT_HEADERS cells, then one per set difference, from a `bench.results.sensitivity.summarize` result."""
    diffs = stats.get("set_differences", {})
    return [str(stats["n"]), "-" if default is None else format_score(default), format_score(stats["mean"]),
            "-" if stats["std"] is None else format_score(stats["std"]), format_score(stats["min"]),
            format_score(stats["max"]), *(format_score(diffs[d]) if d in diffs else "-" for d in differences)]


def _default_run_table(outcomes: list[TaskOutcome]) -> str:
    rows, notes = [], {}
    for o in outcomes:
        enc = o.record.get("encode", {})
        note = stand_in(o.record)
        if note:
            notes[o.task] = note
        rows.append([
            f"{o.task}{STAND_IN_MARK if note else ''}",
            o.main_score_name,
            format_score(o.main_score),
            _details(o),
            enc.get("texts_encoded", "-") if o.status == "computed" else 0,
            enc.get("cache_hits", "-") if o.status == "computed" else "-",
            f"{o.record.get('evaluation_seconds', 0):.1f}" if o.status == "computed" else "-",
            o.status,
        ])
    for avg in suite_averages({o.task: o.main_score for o in outcomes}):
        missing = f"missing: {', '.join(avg.missing)}" if avg.missing else ""
        rows.append([avg.title, f"mean of {len(avg.present)} tasks", format_score(avg.value), missing, "", "", "", ""])
    headers = ["Task", "Metric", "Score", "Details", "Encoded", "Cache hits", "Seconds", "Status"]
    table = tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)
    footnote = stand_in_footnote(notes)
    return f"{table}\n\n{footnote}" if footnote else table


# ---------------------------------------------------------------------------------------- bench results
def results_table(root: Path | str) -> str:
    """One row per model (and experiment), one column per task, then one column per suite average."""
    root = Path(root)
    found = find_results(root)
    if not found:
        return f"No result files under {root}."
    by_model: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    marked: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    notes: dict[str, str] = {}
    for path, data, record in found:
        if is_variant(record):
            continue  # summarized by sensitivity_tables below
        key = model_of(path, record)
        by_model[key][data["task_name"]] = main_score(data)
        note = stand_in(record)
        if note:
            marked[key].add(data["task_name"])
            notes[data["task_name"]] = note
    task_names = sorted({t for scores in by_model.values() for t in scores})
    averages = {key: {a.name: a for a in suite_averages(scores)} for key, scores in by_model.items()}
    avg_columns = list(dict.fromkeys(title for per_model in averages.values() for title in per_model))
    rows = []
    for key, scores in sorted(by_model.items()):
        model, revision, experiment = key
        cells = [f"{format_score(scores[t])}{STAND_IN_MARK if t in marked[key] else ''}" if t in scores else "-"
                 for t in task_names]
        for title in avg_columns:
            avg = averages[key].get(title)
            cells.append("-" if avg is None else format_score(avg.value) if avg.complete
                         else f"{format_score(avg.value)} ({len(avg.present)} of {len(avg.tasks)}, partial)")
        rows.append([model, revision[:18], experiment, *cells])
    headers = ["Model", "Revision", "Experiment", *task_names, *avg_columns]
    table = tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True) if rows else (
        "No results under the tasks' own instructions (only instruction variants).")
    footnote = stand_in_footnote(notes)
    parts = [table, footnote, sensitivity_tables(found)]
    return "\n\n".join(p for p in parts if p)


# ---------------------------------------------------------------------------------------- instruction variants
SENSITIVITY_NOTE = (
    "Scores ×100 over the instruction variants of each task: Std is the sample standard deviation (n-1); "
    "a-b columns are the mean of set a minus the mean of set b (correct-incorrect is InBedder's Δci); "
    "Own is the run under the task's own instruction."
)
STABILITY_NOTE = (
    "Kendall τ-b between the models' rankings under every two variants that all of the task's models ran "
    "(1: same order, -1: reversed); Other top: variants under which the best model by mean is not first."
)


def sensitivity_tables(found: list[tuple[Path, dict[str, Any], dict[str, Any] | None]]) -> str:
    """The "Instruction sensitivity" and "Rank stability" tables; "" when no result is a variant."""
    groups = collect(found)
    if not groups:
        return ""
    summaries = [(g, g.summary()) for g in groups]
    differences = list(dict.fromkeys(d for _, s in summaries for d in s.get("set_differences", {})))
    experiments = any(g.model[2] != "default" for g in groups)
    revisions = _ambiguous_revisions(g.model for g in groups)
    rows = []
    for g, s in summaries:
        name, revision, experiment = g.model
        rows.append([g.task, _model_label(g.model, revisions), *([experiment] if experiments else []),
                     g.main_score_name or "-", *stat_cells(s, differences, g.default)])
    headers = ["Task", "Model", *(["Experiment"] if experiments else []), "Metric", *STAT_HEADERS, *differences]
    out = ["Instruction sensitivity", tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True),
           textwrap.fill(SENSITIVITY_NOTE, width=110)]
    stability = stability_by_task(groups)
    if stability:
        stable_rows = [[task, str(r["models"]), str(r["variants"]), _tau(r["mean_tau"]), _tau(r["min_tau"]),
                        _model_label(r["top_by_mean"], revisions, with_experiment=True),
                        f"{len(r['variants_with_other_top'])} of {r['variants']} ({100 * r['top_change_share']:.0f}%)"]
                       for task, r in sorted(stability.items())]
        headers = ["Task", "Models", "Shared variants", "Mean τ", "Min τ", "Top by mean", "Other top"]
        out += ["Rank stability", tabulate(stable_rows, headers=headers, tablefmt="github", disable_numparse=True),
                textwrap.fill(STABILITY_NOTE, width=110)]
    return "\n\n".join(out)


def _tau(value: float | None) -> str:
    """Kendall τ is a correlation in [-1, 1], not a score: two decimals, not ×100; '-' where undefined."""
    return "-" if value is None else f"{value:.2f}"


def _ambiguous_revisions(models: Any) -> set[str]:
    """Model names seen at more than one revision: only those get their revision in the tables."""
    seen: dict[str, set[str]] = defaultdict(set)
    for name, revision, _ in models:
        seen[name].add(revision)
    return {name for name, revs in seen.items() if len(revs) > 1}


def _model_label(model: tuple[str, str, str], revisions: set[str], *, with_experiment: bool = False) -> str:
    name, revision, experiment = model
    label = f"{name}@{revision[:12]}" if name in revisions else name
    return f"{label} [{experiment}]" if with_experiment and experiment != "default" else label


def model_of(path: Path, record: dict[str, Any] | None) -> tuple[str, str, str]:
    """(model, revision, experiment) of a TaskResult file, wherever the folder given to `bench results` is.

    From the run record when there is one; else from `model_meta.json` beside the file (what
    `mteb.evaluate(..., cache=ResultCache(DIR))` writes); else from MTEB's layout
    `<org>__<model>/<revision>/[experiments/<name>/]<Task>.json`, read upwards from the file, so the
    folder passed may be DIR, DIR/results or a model's folder.
    """
    if record:
        m = record["model"]
        return m["name"], m["revision"], _experiment_text(m.get("experiment"))
    folder = path.parent
    experiment = "default"
    if folder.parent.name == EXPERIMENTS:
        experiment, folder = folder.name, folder.parent.parent
    meta = _model_meta(path.parent / "model_meta.json")
    if meta.get("name"):
        kwargs = meta.get("experiment_kwargs")
        return (str(meta["name"]), str(meta.get("revision") or folder.name),
                _experiment_text(kwargs) if kwargs and isinstance(kwargs, dict) else experiment)
    return folder.parent.name.replace("__", "/"), folder.name, experiment


def _experiment_text(experiment: dict[str, Any] | None) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted((experiment or {}).items())) or "default"


def _model_meta(path: Path) -> dict[str, Any]:
    """MTEB's `model_meta.json`, or {} when it is missing or damaged (the folder names then say)."""
    try:
        data = load_result_json(path)
    except (FileNotFoundError, DataError):
        return {}
    return data if isinstance(data, dict) else {}
