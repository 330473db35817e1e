"""NYTClustering (InBedder paper §3.2): New York Times articles annotated with topic and location."""

from __future__ import annotations

from mteb import TaskMetadata

from bench.tasks._common import common_metadata
from bench.tasks.abstasks import AbsTaskMultiAspectClustering


class NYTClustering(AbsTaskMultiAspectClustering):
    suites = ("awareness", "inbedder")
    aspects = {
        "topic": "What is the topic of news?",
        "location": "Where did the news happen?",
    }
    metadata = TaskMetadata(
        name="NYTClustering",
        description=(
            "NYT articles clustered by topic and by location. Main score: harmonic mean of the two V-measures."
        ),
        dataset={"path": "BrandonZYW/NYTClustering", "revision": "462fb544c8993a0421fd969a7a0f19f1fbd975bf"},
        type="Clustering",
        main_score="hmean_v_measure",
        domains=["News", "Written"],
        license="not specified",
        annotations_creators="derived",
        sample_creation="found",
        **common_metadata(),
    )
