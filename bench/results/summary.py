"""The tables printed after `bench run`, and the suite averages every table shows.

`run_table`: the scores (one row per task, then the suite averages, then footnotes), the run's diagnostics
(status, encoding, time) and, with instruction variants, their summary per task. `bench results`' tables
are elsewhere: bench/results/comparison.py (the comparison of folders), bench/results/variant_tables.py
(instruction sensitivity), both rendered by bench/results/tables.py, which also holds the one number
format of the CLI (`format_score`).

Averages follow the leaderboard's suites (`bench/results/suites.py`: which tasks each paper averages, and
what the column is called). An average is marked partial ("2 of 3 tasks, partial") when the run lacks
some of its tasks, since it is then not comparable with the paper's; a suite whose tasks mix score kinds
(Δci, a difference of V-measures, next to absolute scores: `inbedder`, `all`) gets no average at all.
Marks come from `bench.results.marks`: a task on stand-in data ‡, on a local copy †, a `--limit` run's
task and the averages over it ⊂; each mark used is explained once under the table.
"""

from __future__ import annotations

import textwrap
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tabulate import tabulate

from bench.core.metric_specs import resolve
from bench.core.run_record import VariantBlock
from bench.results.marks import STAND_IN, SUBSET, Mark, data_marks, limit_of, stand_in, subset_words, texts_of
from bench.results.outcome import TaskOutcome
from bench.results.tables import format_count, format_score, marks_footnote
from bench.results.variant_tables import STAT_HEADERS, stat_cells

_HIDDEN = {"main_score", "evaluation_time", "kg_co2_emissions"}
DETAILS_WIDTH = 60  # the longest Details cell of `bench run`'s table; the rest is printed in full below it


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
    from bench.results.suites import is_gap, partial_average
    from bench.results.suites import suite_averages as average_columns
    from bench.results.task_catalog import main_scores, suites

    out: list[SuiteAverage] = []
    seen: set[tuple[str, ...]] = set()
    main_score_names = main_scores()
    for suite, members in suites().items():
        mains = {t: main_score_names[t] for t in members if t in main_score_names}
        if len({is_gap(m) for m in mains.values()}) > 1:
            continue
        for avg in average_columns(suite, mains):
            over = tuple(avg.tasks or members)
            found = partial_average(scores, over)
            if found is None or tuple(sorted(over)) in seen:
                continue
            seen.add(tuple(sorted(over)))
            out.append(SuiteAverage(suite, avg.label, over, found[1], found[0]))
    return out


# ---------------------------------------------------------------------------------------- bench run
def _details(outcome: TaskOutcome) -> list[str]:
    """Per-criterion / per-aspect sub-scores, which show what the main score hides (`label score` each)."""
    return [
        f"{label} {format_score(value)}"
        for _, label, value in detail_values(outcome.task, outcome.scores, outcome.main_score_name)
    ]


def shorten_list(parts: Sequence[str], width: int = DETAILS_WIDTH, prefix: str = "") -> str:
    """`prefix` and the parts joined by commas, cut after the last part that fits `width` with a `…`."""
    text = prefix + ", ".join(parts)
    if len(text) <= width:
        return text
    shown: list[str] = []
    for part in parts:
        if len(prefix + ", ".join([*shown, part, "…"])) > width:
            break
        shown.append(part)
    return prefix + ", ".join([*shown, "…"]) if shown else textwrap.shorten(text, width, placeholder=" …")


def detail_values(task_name: str, scores: Mapping[str, object], main_score_name: str) -> list[tuple[str, str, float]]:
    """(score key, label, raw value) of a task's sub-scores; also the leaderboard's per-aspect plot.

    Which scores are details is the metrics' declaration (bench/core/metric_specs.py, `detail`): a task
    that declares detail scores by name (robustness, GSTransform) shows those, in its order; otherwise each
    score other than the main score whose metric is a detail family (`intent_success_rate`,
    `v_measure_topic`), in the scores' order. A task the harness does not know is read against every
    declared family.
    """
    from bench.results.task_catalog import all_metrics, metrics

    declared = metrics(task_name)
    named = [m for m in declared or () if m.detail and m.place == "exact"]
    if named:
        found = [(m, _nested(scores, m.name)) for m in named]
        return [(m.name, m.label_of(m.name), v) for m, v in found if isinstance(v, float)]
    known = declared if declared is not None else tuple(m for m in all_metrics() if m.place != "exact")
    parts = []
    for key, value in scores.items():
        if key in _HIDDEN or key == main_score_name or not isinstance(value, float):
            continue
        metric = resolve(key, known)
        if metric is not None and metric.detail:
            parts.append((key, metric.label_of(key), value))
    return parts


def _nested(scores: Mapping[str, object], key: str) -> object:
    """The score `key` names: a key of `scores`, or a dotted path into MTEB's nested scores (FollowIR's
    `og.ndcg_at_5` is scores["og"]["ndcg_at_5"])."""
    if key in scores:
        return scores[key]
    value: object = scores
    for part in key.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def run_table(outcomes: list[TaskOutcome]) -> str:
    """What `bench run` prints: the scores (one row per task, then the suite averages, then footnotes),
    the run's diagnostics (status, encoding, time), and with instruction variants their summary per task
    (`variant_run_table`)."""
    variants = [o for o in outcomes if o.variant]
    defaults = [o for o in outcomes if not o.variant]
    tables = [scores_run_table(defaults), diagnostics_run_table(defaults)] if defaults else []
    if variants:
        tables.append(variant_run_table(variants, defaults))
    return "\n\n".join(tables)


def variant_run_table(outcomes: list[TaskOutcome], defaults: Sequence[TaskOutcome] = ()) -> str:
    """Per task, over its variants: the columns of `bench results`' sensitivity table (`stat_cells`),
    plus what encoding the variants took beyond the default run."""
    from bench.results.sensitivity import VariantScore, summarize

    def variant(o: TaskOutcome) -> VariantBlock:
        assert o.variant is not None  # `run_tables` passes the variants' outcomes only
        return o.variant

    default_score = {(o.task, o.main_score_name): o.main_score for o in defaults}
    by_task: dict[str, list[TaskOutcome]] = defaultdict(list)
    for o in outcomes:
        by_task[o.task].append(o)
    summaries = []
    for task, group in by_task.items():
        order = variant(group[0]).get("sets") or tuple(dict.fromkeys(s for o in group if (s := variant(o).get("set"))))
        scores = [VariantScore(variant(o)["label"], variant(o).get("set"), o.main_score) for o in group]
        summaries.append((task, group, summarize(scores, order)))
    differences = list(dict.fromkeys(d for *_, s in summaries for d in s.get("set_differences", {})))
    rows = []
    for task, group, stats in summaries:
        computed = [o.record.get("encode", {}) for o in group if o.status == "computed"]
        rows.append(
            [
                task,
                group[0].main_score_name,
                *stat_cells(stats, differences, default_score.get((task, group[0].main_score_name))),
                format_count(sum(e.get("texts_encoded", 0) for e in computed)),
                format_count(sum(e.get("cache_hits", 0) for e in computed)),
            ]
        )
    headers = ["Task", "Metric", *STAT_HEADERS, *differences, "Encoded", "Cache hits"]
    return "Instruction variants\n" + tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)


def scores_run_table(outcomes: list[TaskOutcome]) -> str:
    """Task, Metric, Score, Details; then the suite averages; then the marks' legend and, for a Details
    cell cut to DETAILS_WIDTH, the whole of it."""
    rows: list[list[str]] = []
    notes: dict[str, dict[str, str]] = defaultdict(dict)
    used: set[Mark] = set()
    cut: dict[str, str] = {}
    limited: set[str] = set()
    for o in outcomes:
        marks = data_marks(o.record)
        if (note := stand_in(o.record)) is not None:  # STAND_IN in marks
            notes[STAND_IN.key][o.task] = note
        if (limit := limit_of(o.record)) is not None:  # a subset: marked, as in `bench results`
            marks += (SUBSET,)
            notes[SUBSET.key][o.task] = subset_words(limit, texts_of(o.record))
            limited.add(o.task)
        used.update(marks)
        details = _details(o)
        cell = shorten_list(details)
        if cell != ", ".join(details):
            cut[o.task] = ", ".join(details)
        rows.append([o.task + "".join(m.symbol for m in marks), o.main_score_name, format_score(o.main_score), cell])
    for avg in suite_averages({o.task: o.main_score for o in outcomes}):
        missing = shorten_list(avg.missing, prefix="missing: ") if avg.missing else ""
        if missing and missing != "missing: " + ", ".join(avg.missing):
            cut[avg.name] = "missing: " + ", ".join(avg.missing)
        mark = SUBSET.symbol if limited & set(avg.present) else ""
        rows.append([avg.title + mark, f"mean of {len(avg.present)} tasks", format_score(avg.value), missing])
    table = tabulate(rows, headers=["Task", "Metric", "Score", "Details"], tablefmt="github", disable_numparse=True)
    lines = marks_footnote(used, notes)
    if cut:
        lines.append("Details in full:")
        lines += [
            textwrap.fill(
                f"{task}: {text}", width=110, initial_indent="  ", subsequent_indent="    ", break_on_hyphens=False
            )
            for task, text in cut.items()
        ]
    return "\n\n".join([table, "\n".join(lines)]) if lines else table


def diagnostics_run_table(outcomes: list[TaskOutcome]) -> str:
    """Task, Status, Encoded, Cache hits, Seconds: what the run did for each task (a reused task: nothing)."""
    rows = []
    for o in outcomes:
        computed = o.status == "computed"
        enc = o.record.get("encode", {}) if computed else {}
        rows.append(
            [
                o.task,
                o.status,
                format_count(enc.get("texts_encoded")) if computed else "0",
                format_count(enc.get("cache_hits")) if computed else "-",
                f"{o.record.get('evaluation_seconds', 0):,.1f}" if computed else "-",
            ]
        )
    return tabulate(
        rows, headers=["Task", "Status", "Encoded", "Cache hits", "Seconds"], tablefmt="github", disable_numparse=True
    )
