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
"""

from __future__ import annotations

from dataclasses import dataclass, field


DEFAULT_NOTE = "arithmetic mean of the tasks' main scores (×100), shown when every task has a result"


@dataclass(frozen=True)
class Average:
    """One average column: its header, how it is computed, and over which tasks (None = all columns)."""

    label: str = "Avg"
    note: str = DEFAULT_NOTE
    tasks: tuple[str, ...] | None = None


@dataclass(frozen=True)
class SuiteStyle:
    """Presentation of one suite.

    Attributes:
        labels: task name -> column header (the paper's abbreviation); others keep the task name.
        order: column order when it differs from the suite's task order (unlisted tasks follow).
        averages: the average columns, the first one ranks the table.
        source: the paper table or figure the columns follow.
    """

    labels: dict[str, str] = field(default_factory=dict)
    order: tuple[str, ...] = ()
    averages: tuple[Average, ...] = (Average(),)
    source: str = ""


_INBEDDER_T1 = {"IntentEmotion": "IntEmo", "InstructSTSB": "I.STSB", "NYTClustering": "NYT"}

_INBEDDER_T2 = {
    "AskUbuntuDupQuestions": "AskU.", "SciDocsRR": "SciD.", "StackOverflowDupQuestions": "StackO.",
    "TwentyNewsgroupsClustering": "20news",
}
_METAEOL_T1 = {
    "STS12": "STS12", "STS13": "STS13", "STS14": "STS14", "STS15": "STS15", "STS16": "STS16",
    "STSBenchmark": "STS-B", "SICK-R": "SICK-R",
}

SUITE_STYLES: dict[str, SuiteStyle] = {
    "awareness": SuiteStyle(
        labels=_INBEDDER_T1,
        order=("InstructSTSB", "IntentEmotion", "NYTClustering"),
        averages=(Average("Avg", "InBedder Table 1 'Avg': arithmetic mean of I.STSB, IntEmo and NYT (×100), shown when all three have results"),),
        source="InBedder (Peng et al., 2024), Table 1",
    ),
    "demo": SuiteStyle(
        labels={"DemoInstructSTS": "I.STSB (demo)", "DemoIntentEmotion": "IntEmo (demo)", "DemoNYTClustering": "NYT (demo)"},
        order=("DemoInstructSTS", "DemoIntentEmotion", "DemoNYTClustering"),
        averages=(Average("Avg", "as InBedder Table 1 'Avg' (arithmetic mean of the three), on the small demo data: not comparable with the paper"),),
        source="InBedder Table 1 (layout only; demo data)",
    ),
    "robustness": SuiteStyle(
        labels={
            "NYTTopicClustering": "NYTTopic", "FeedbacksClustering": "Feedbacks", "RateMyProfClustering": "RateMyProf",
            "FewRelClustering": "FewRel", "FewEventClustering": "FewEvent", "FewNerdClustering": "FewNerd",
        },
        averages=(Average("Mean Δci", (
            "each column is Δci = mean V-measure under correct minus under incorrect instructions (InBedder §3.3, Fig. 4); "
            "the paper gives no cross-task average, 'Mean Δci' is ours: the arithmetic mean over the six sets"
        )),),
        source="InBedder (Peng et al., 2024), Figure 4 and Figure 7",
    ),
    "gstransform": SuiteStyle(
        labels={
            "GSTNYTClust": "NYTClust", "GSTAmzCF": "AmzCF", "GSTMNews": "MNews", "GSTPaperCode": "PaperCode",
            "GSTMultiHate": "MultiHate", "GSTBigPatent": "Big Patent", "GSTIntEmo": "IntEmo", "GSTToxic": "Toxic",
            "GSTAGNews": "AG-News",
        },
        order=(
            "GSTNYTClust", "GSTAmzCF", "GSTMNews", "GSTPaperCode", "GSTMultiHate", "GSTBigPatent", "GSTIntEmo",
            "GSTToxic", "GSTAGNews",
        ),
        averages=(Average("Mean", "GSTransform Table 1 'Mean': arithmetic mean over the nine datasets (×100), shown when all nine have results"),),
        source="GSTransform (Feng et al., 2025), Table 1",
    ),
    "generic": SuiteStyle(
        labels={**_INBEDDER_T2, **_METAEOL_T1},
        order=(*_INBEDDER_T2, *_METAEOL_T1),
        averages=(
            Average("Avg (InBedder)", "InBedder Table 2 'Avg': arithmetic mean of AskU., SciD., StackO. and 20news (×100)",
                    tuple(_INBEDDER_T2)),
            Average("STS Avg. (MetaEOL)", "MetaEOL Table 1 'Avg.': arithmetic mean of the seven STS Spearman scores (×100)",
                    tuple(_METAEOL_T1)),
        ),
        source="InBedder (Peng et al., 2024), Table 2, and MetaEOL (Lei et al., 2024), Table 1",
    ),
    "generic-sts": SuiteStyle(
        labels=_METAEOL_T1,
        order=tuple(_METAEOL_T1),
        averages=(Average("Avg.", "MetaEOL Table 1 'Avg.': arithmetic mean of the seven STS Spearman scores (×100)"),),
        source="MetaEOL (Lei et al., 2024), Table 1",
    ),
}


def style(suite: str) -> SuiteStyle:
    return SUITE_STYLES.get(suite, SuiteStyle())


def columns(suite: str, tasks: tuple[str, ...]) -> list[tuple[str, str]]:
    """(task, header) in display order."""
    st = style(suite)
    ordered = [t for t in st.order if t in tasks] + [t for t in tasks if t not in st.order]
    return [(t, st.labels.get(t, t)) for t in ordered]


def averages(suite: str, scores: dict[str, float | None]) -> dict[str, float | None]:
    """Each average column's value for one model's ×100 scores (task -> score or None)."""
    return {a.label: average([scores.get(t) for t in (a.tasks or tuple(scores))]) for a in style(suite).averages}


def average(values: list[float | None]) -> float | None:
    """The suite average: arithmetic mean, or None unless every task has a score."""
    if not values or any(v is None for v in values):
        return None
    return sum(values) / len(values)  # type: ignore[arg-type]
