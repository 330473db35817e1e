"""The demo suite: small data written for this project, shipped in the package, runs offline.

Same task types and scoring as the InBedder tasks, on data built so that an instruction-blind
embedder is capped (see demo_data/README.md). Scores are not comparable to the papers'.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mteb import TaskMetadata

from bench.tasks._common import CommonFields, common_metadata
from bench.tasks.abstasks import AbsTaskInstructionSTS, AbsTaskInstructionTriplet, AbsTaskMultiAspectClustering
from bench.tasks.intent_emotion import IntentEmotion
from bench.tasks.nyt_clustering import NYTClustering

if TYPE_CHECKING:
    from mteb.abstasks.task_metadata import AnnotatorType, MetadataDatasetDict, SampleCreationMethod
    from mteb.types import Licenses


class _DemoFields(CommonFields):
    license: Licenses
    annotations_creators: AnnotatorType
    sample_creation: SampleCreationMethod


_DEMO = _DemoFields(
    license="cc0-1.0",
    annotations_creators="expert-annotated",
    sample_creation="created",
    **common_metadata(
        reference="https://github.com/instruct-bench/instruct-bench",
        bibtex_citation="",
        date=("2026-11-01", "2026-11-21"),
    ),
)


def _demo_dataset(name: str) -> MetadataDatasetDict:
    return {"path": f"instruct-bench/demo/{name}", "revision": "packaged"}


class DemoIntentEmotion(AbsTaskInstructionTriplet):
    """IntentEmotion's design on demo data; MTEB type `Reranking`, as IntentEmotion (see its docstring)."""

    suites = ("demo",)
    packaged = True
    criteria = IntentEmotion.criteria
    metadata = TaskMetadata(
        name="DemoIntentEmotion",
        description="DEMO data: 24 groups of customer utterances crossing two intents with two emotions.",
        dataset=_demo_dataset("DemoIntentEmotion"),
        type="Reranking",  # triplets rank two candidates per query: see AbsTaskInstructionTriplet
        main_score="hmean_success_rate",
        domains=["Financial", "Constructed"],
        **_DEMO,
    )


class DemoInstructSTS(AbsTaskInstructionSTS):
    suites = ("demo",)
    packaged = True
    metadata = TaskMetadata(
        name="DemoInstructSTS",
        description="DEMO data: 30 sentence pairs, each with a discriminating (0) and a non-discriminating (1) question.",
        dataset=_demo_dataset("DemoInstructSTS"),
        type="STS",
        main_score="cosine_spearman",
        domains=["Constructed"],
        **_DEMO,
    )


class DemoNYTClustering(AbsTaskMultiAspectClustering):
    suites = ("demo",)
    packaged = True
    aspects = NYTClustering.aspects
    metadata = TaskMetadata(
        name="DemoNYTClustering",
        description="DEMO data: 64 short news items crossing 4 topics with 4 locations.",
        dataset=_demo_dataset("DemoNYTClustering"),
        type="Clustering",
        main_score="hmean_v_measure",
        domains=["News", "Constructed"],
        **_DEMO,
    )
