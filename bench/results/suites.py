"""How each suite's table looks: the papers' column names and how each paper averages.

Suites and their tasks come from `tasks.SUITES`; this module only adds presentation. A suite with no
entry in SUITE_STYLES still gets a table (task names as headers, the arithmetic mean of the main
scores as its average), so a suite added to `tasks.SUITES` appears on the leaderboard unchanged.

Averages (all on the ×100 scores; shown only for a model with every task of the suite, as the papers
and MTEB do, because a partial average is not comparable):

* awareness: InBedder Table 1 "Avg", the arithmetic mean of I.STSB (Spearman of cosine), IntEmo
  (harmonic mean of the two triplet success rates) and NYT (harmonic mean of the two V-measures);
  columns in the paper's order.
* demo: the same rule on the demo data (not comparable with the paper).
* robustness: InBedder Figure 4 has no cross-task average; the table shows each task's main score,
  Δci = mean V-measure under correct minus under incorrect instructions, and "Mean Δci" is our
  arithmetic mean of it over the six sets (labelled as ours). The per-instruction V-measures are
  plotted, as in the figure.
* gstransform: GSTransform Table 1 "Mean", the arithmetic mean over the nine datasets (each already
  the harmonic mean, or for STS the arithmetic mean, over its aspects); the paper's column names.
* generic: two averages, one per paper: InBedder Table 2 "Avg" over AskU., SciD., StackO. and 20news
  (MAP / V-measure), and MetaEOL Table 1 "STS Avg." over STS12-16, STS-B and SICK-R (Spearman).
  generic-sts: the MetaEOL one alone.
* a suite with no style (inbedder, all, a new one): the arithmetic mean of its columns, except that
  gaps (Δci, main scores named `delta_*`) are never averaged with absolute scores: a suite holding
  both gets "Avg" over the absolute scores and "Mean Δci" over the gaps (`suite_averages`).

Each suite also says what it measures, links its papers (arXiv ids checked against the papers' text:
GSTransform's abstract in the seed text is arXiv 2505.24754's), and explains each main score (`metric_note`:
the description its metric declares, bench/core/metric_specs.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from bench.core.metric_specs import Metric

DEFAULT_NOTE = "arithmetic mean of the tasks' main scores (×100), shown when every task has a result"


@dataclass(frozen=True)
class Average:
    """One average column: its header, how it is computed, and over which tasks (None = all columns)."""

    label: str = "Avg"
    note: str = DEFAULT_NOTE
    tasks: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Paper:
    """A paper a suite follows, linked on the site (ids checked against the papers' own text)."""

    label: str
    url: str


INBEDDER = Paper("InBedder (Peng et al., ACL 2024)", "https://arxiv.org/abs/2402.09642")
METAEOL = Paper("MetaEOL (Lei et al., ACL 2024)", "https://arxiv.org/abs/2402.18458")
GSTRANSFORM = Paper("GSTransform (Feng et al., ACL 2025)", "https://arxiv.org/abs/2505.24754")
INSTRUCTOR = Paper("INSTRUCTOR (Su et al., Findings of ACL 2023)", "https://arxiv.org/abs/2212.09741")
FOLLOWIR = Paper("FollowIR (Weller et al., 2024)", "https://arxiv.org/abs/2403.15246")
INSTRUCTIR = Paper("InstructIR (Oh et al., 2024)", "https://arxiv.org/abs/2402.14334")


def metric_note(main_score: str) -> str:
    """How a main score is computed, shown under each suite for the metrics of its columns: its declaration's
    description (bench/core/metric_specs.py)."""
    metric = _declared(main_score)
    return metric.description if metric is not None and metric.place == "exact" else f"MTEB's main score '{main_score}'"


def is_gap(main_score: str) -> bool:
    """True for a score that is a difference of two scores (Δci, a metric of kind "gap"): never averaged with
    absolute scores."""
    metric = _declared(main_score)
    return metric is not None and metric.kind == "gap"


def _declared(key: str) -> Metric | None:
    from bench.results.task_catalog import metric_index

    return metric_index().resolve(key)


@dataclass(frozen=True)
class SuiteStyle:
    """Presentation of one suite.

    Attributes:
        labels: task name -> column header (the paper's abbreviation); others keep the task name.
        order: column order when it differs from the suite's task order (unlisted tasks follow).
        averages: the average columns, the first one ranks the table.
        source: the paper table or figure the columns follow.
        measures: one or two sentences on what the suite measures, for a reader new to it.
        papers: the papers to link.
    """

    labels: dict[str, str] = field(default_factory=dict)
    order: tuple[str, ...] = ()
    averages: tuple[Average, ...] = (Average(),)
    source: str = ""
    measures: str = ""
    papers: tuple[Paper, ...] = ()


_INBEDDER_T1 = {"IntentEmotion": "IntEmo", "InstructSTSB": "I.STSB", "NYTClustering": "NYT"}

_INBEDDER_T2 = {
    "AskUbuntuDupQuestions": "AskU.",
    "SciDocsRR": "SciD.",
    "StackOverflowDupQuestions": "StackO.",
    "TwentyNewsgroupsClustering": "20news",
}
_METAEOL_T1 = {
    "STS12": "STS12",
    "STS13": "STS13",
    "STS14": "STS14",
    "STS15": "STS15",
    "STS16": "STS16",
    "STSBenchmark": "STS-B",
    "SICK-R": "SICK-R",
}

_FOLLOWIR = {
    "Core17InstructionRetrieval": "Core17",
    "News21InstructionRetrieval": "News21",
    "Robust04InstructionRetrieval": "Robust04",
}
_P_MRR_AVERAGE = Average(
    "p-MRR",
    "FollowIR's 'p-MRR' average: arithmetic mean of the three tasks' p-MRR (×100, in [-100, 100]; 0 = the ranking "
    "ignores the changed instruction), shown when all three have results",
    tuple(_FOLLOWIR),
)
_FOLLOWIR_MEASURES = (
    "Instruction following in retrieval: each TREC query is ranked under its original narrative and under a "
    "changed one that makes some relevant documents non-relevant; p-MRR says whether those documents drop "
    "(positive) or rise (negative) when the instruction changes."
)

SUITE_STYLES: dict[str, SuiteStyle] = {
    "awareness": SuiteStyle(
        labels=_INBEDDER_T1,
        order=("InstructSTSB", "IntentEmotion", "NYTClustering"),
        averages=(
            Average(
                "Avg",
                "InBedder Table 1 'Avg': arithmetic mean of I.STSB, IntEmo and NYT (×100), shown when all three have results",
            ),
        ),
        source="InBedder (Peng et al., 2024), Table 1",
        measures=(
            "Instruction awareness: whether the same texts are embedded differently, and correctly, when the "
            "instruction asks about a different aspect (similarity under an instruction, intent vs emotion "
            "triplets, news topic vs location clusters)."
        ),
        papers=(INBEDDER,),
    ),
    "demo": SuiteStyle(
        labels={
            "DemoInstructSTS": "I.STSB (demo)",
            "DemoIntentEmotion": "IntEmo (demo)",
            "DemoNYTClustering": "NYT (demo)",
        },
        order=("DemoInstructSTS", "DemoIntentEmotion", "DemoNYTClustering"),
        averages=(
            Average(
                "Avg",
                "as InBedder Table 1 'Avg' (arithmetic mean of the three), on the small demo data: not comparable with the paper",
            ),
        ),
        source="InBedder Table 1 (layout only; demo data)",
        measures=(
            "The awareness tests on a few hundred texts shipped with the package: a smoke test that runs "
            "offline in seconds, not a benchmark."
        ),
        papers=(INBEDDER,),
    ),
    "robustness": SuiteStyle(
        labels={
            "NYTTopicClustering": "NYTTopic",
            "FeedbacksClustering": "Feedbacks",
            "RateMyProfClustering": "RateMyProf",
            "FewRelClustering": "FewRel",
            "FewEventClustering": "FewEvent",
            "FewNerdClustering": "FewNerd",
        },
        averages=(
            Average(
                "Mean Δci",
                (
                    "each column is Δci = mean V-measure under correct minus under incorrect instructions (InBedder §3.3, Fig. 4); "
                    "the paper gives no cross-task average, 'Mean Δci' is ours: the arithmetic mean over the six sets"
                ),
            ),
        ),
        source="InBedder (Peng et al., 2024), Figure 4 and Figure 7",
        measures=(
            "Instruction robustness: each set is clustered under 10 correct, 10 implicit and 10 incorrect "
            "instructions; a model that follows instructions clusters better under the correct ones."
        ),
        papers=(INBEDDER,),
    ),
    "gstransform": SuiteStyle(
        labels={
            "GSTNYTClust": "NYTClust",
            "GSTAmzCF": "AmzCF",
            "GSTMNews": "MNews",
            "GSTPaperCode": "PaperCode",
            "GSTMultiHate": "MultiHate",
            "GSTBigPatent": "Big Patent",
            "GSTIntEmo": "IntEmo",
            "GSTToxic": "Toxic",
            "GSTAGNews": "AG-News",
        },
        order=(
            "GSTNYTClust",
            "GSTAmzCF",
            "GSTMNews",
            "GSTPaperCode",
            "GSTMultiHate",
            "GSTBigPatent",
            "GSTIntEmo",
            "GSTToxic",
            "GSTAGNews",
        ),
        averages=(
            Average(
                "Mean",
                "GSTransform Table 1 'Mean': arithmetic mean over the nine datasets (×100), shown when all nine have results",
            ),
        ),
        source="GSTransform (Feng et al., 2025), Table 1",
        measures=(
            "Instruction following on nine labelled datasets, each with two or more aspects (e.g. topic and "
            "location): clustering, STS and triplets built from the labels of the aspect the instruction names."
        ),
        papers=(GSTRANSFORM,),
    ),
    "generic": SuiteStyle(
        labels={**_INBEDDER_T2, **_METAEOL_T1},
        order=(*_INBEDDER_T2, *_METAEOL_T1),
        averages=(
            Average(
                "Avg (InBedder)",
                "InBedder Table 2 'Avg': arithmetic mean of AskU., SciD., StackO. and 20news (×100)",
                tuple(_INBEDDER_T2),
            ),
            Average(
                "STS Avg. (MetaEOL)",
                "MetaEOL Table 1 'Avg.': arithmetic mean of the seven STS Spearman scores (×100)",
                tuple(_METAEOL_T1),
            ),
            # last, so that it never becomes the ranking average: the papers' averages rank the table
            Average(
                "Mean (Task)",
                "MTEB's leaderboard's 'Mean (Task)': arithmetic mean of all eleven tasks (×100), "
                "shown when all have results, else partial (n of 11)",
                (*_INBEDDER_T2, *_METAEOL_T1),
            ),
        ),
        source="InBedder (Peng et al., 2024), Table 2, and MetaEOL (Lei et al., 2024), Table 1",
        measures=(
            "Generic embedding quality under a task instruction: MTEB reranking and clustering (InBedder's "
            "controls) and the STS set (MetaEOL), to check that following instructions costs no general quality."
        ),
        papers=(INBEDDER, METAEOL, INSTRUCTOR),
    ),
    "generic-sts": SuiteStyle(
        labels=_METAEOL_T1,
        order=tuple(_METAEOL_T1),
        averages=(Average("Avg.", "MetaEOL Table 1 'Avg.': arithmetic mean of the seven STS Spearman scores (×100)"),),
        source="MetaEOL (Lei et al., 2024), Table 1",
        measures="Semantic textual similarity on MTEB's STS set, with INSTRUCTOR's task instructions.",
        papers=(METAEOL, INSTRUCTOR),
    ),
    "followir": SuiteStyle(
        labels=_FOLLOWIR,
        order=tuple(_FOLLOWIR),
        averages=(_P_MRR_AVERAGE,),
        source="FollowIR (Weller et al., 2024), Table 2; MTEB's FollowIR benchmark",
        measures=_FOLLOWIR_MEASURES,
        papers=(FOLLOWIR,),
    ),
    "instruction-retrieval": SuiteStyle(
        labels={**_FOLLOWIR, "InstructIR": "InstructIR"},
        order=(*_FOLLOWIR, "InstructIR"),
        # p-MRR (a change of ranks, in [-1, 1]) and robustness@10 (an nDCG) are never averaged together.
        averages=(
            _P_MRR_AVERAGE,
            Average(
                "Robustness@10",
                "InstructIR's robustness@10 (×100): per query the lowest nDCG@10 over its instructions; not "
                "averaged with p-MRR",
                ("InstructIR",),
            ),
        ),
        source="FollowIR (Weller et al., 2024), Table 2, and InstructIR (Oh et al., 2024); MTEB's tasks",
        measures=_FOLLOWIR_MEASURES + " InstructIR: retrieval under many user-persona instructions, scored by "
        "the worst of them.",
        papers=(FOLLOWIR, INSTRUCTIR),
    ),
}

# Main scores a suite without a style (all) averages only among themselves, each in a column of its own:
# measures on their own scale, never mixed with the other absolute scores or with one another.
OWN_AVERAGES: dict[str, tuple[str, str]] = {
    "p-MRR": ("Mean p-MRR", "arithmetic mean of the p-MRR columns (×100); shown when all have results"),
    "robustness_at_10": (
        "Mean robustness@10",
        "arithmetic mean of the robustness@10 columns (×100); shown when all have results",
    ),
}


def style(suite: str) -> SuiteStyle:
    return SUITE_STYLES.get(suite, SuiteStyle())


def columns(suite: str, tasks: tuple[str, ...]) -> list[tuple[str, str]]:
    """(task, header) in display order."""
    st = style(suite)
    ordered = [t for t in st.order if t in tasks] + [t for t in tasks if t not in st.order]
    return [(t, st.labels.get(t, t)) for t in ordered]


def suite_averages(suite: str, main_scores: dict[str, str]) -> tuple[Average, ...]:
    """The suite's average columns: the paper's, or for a suite without a style one mean per kind of score.

    `main_scores` maps each task of the suite to its main score name. Gaps (Δci) and absolute scores are
    never averaged together: a suite holding both (inbedder, all) gets "Avg" over the absolute scores
    and "Mean Δci" over the gaps.
    """
    st = SUITE_STYLES.get(suite)
    if st is not None:
        return st.averages
    own = {m: tuple(t for t, s in main_scores.items() if s == m) for m in OWN_AVERAGES}
    own = {m: tasks for m, tasks in own.items() if tasks}
    apart = {t for tasks in own.values() for t in tasks}
    gaps = tuple(t for t, m in main_scores.items() if is_gap(m) and t not in apart)
    absolute = tuple(t for t in main_scores if t not in gaps and t not in apart)
    separate = tuple(Average(*OWN_AVERAGES[m], tasks) for m, tasks in own.items())
    if not separate and (not gaps or not absolute):
        return (Average(),)
    left_out = ", ".join([*(["Δci"] if gaps else []), *(OWN_AVERAGES[m][0].removeprefix("Mean ") for m in own)])
    return (
        *(
            [
                Average(
                    "Avg",
                    f"arithmetic mean of the absolute scores (×100), {left_out} columns left out; shown when all have results",
                    absolute,
                )
            ]
            if absolute
            else []
        ),
        *(
            [Average("Mean Δci", "arithmetic mean of the Δci columns (×100); shown when all have results", gaps)]
            if gaps
            else []
        ),
        *separate,
    )


def averages(
    suite: str, scores: dict[str, float | None], which: Sequence[Average] | None = None
) -> dict[str, float | None]:
    """Each average column's value for one model's ×100 scores (task -> score or None)."""
    return {
        a.label: average([scores.get(t) for t in (a.tasks or tuple(scores))]) for a in (which or style(suite).averages)
    }


PARTIAL_MIN = 2  # tasks a partial average needs (a mean of one score is only that score)


def partial_average(scores: Mapping[str, float | None], over: Sequence[str]) -> tuple[float, tuple[str, ...]] | None:
    """The mean over the tasks of `over` that have a score, with those tasks, when PARTIAL_MIN or more do.

    The one rule for a partial average, shown as "47.89 (5 of 9)" by `bench results` and the site alike; it
    is ranked only by the rule of `bench.results.ranking`."""
    present = tuple(t for t in over if scores.get(t) is not None)
    if len(present) < PARTIAL_MIN:
        return None
    return sum(scores[t] or 0.0 for t in present) / len(present), present


def average(values: list[float | None]) -> float | None:
    """The suite average: arithmetic mean, or None unless every task has a score."""
    if not values or any(v is None for v in values):
        return None
    return sum(values) / len(values)  # type: ignore[arg-type]
