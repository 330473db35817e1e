"""InstructSTSB (InBedder paper §3.2, appendix A): STS-B test pairs with GPT-4 questions, labels 0/1."""

from __future__ import annotations

from mteb import TaskMetadata

from bench.tasks._common import common_metadata
from bench.tasks.abstasks import AbsTaskInstructionSTS


class InstructSTSB(AbsTaskInstructionSTS):
    suites = ("awareness", "inbedder")
    metadata = TaskMetadata(
        name="InstructSTSB",
        description=(
            "STS Benchmark test pairs, each with a question that discriminates the two sentences (score 0) "
            "and one that does not (score 1). Main score: Spearman of cosine similarity."
        ),
        dataset={"path": "BrandonZYW/InstructSTSB", "revision": "34dda81eca082ba6b3a259899fe9ae435b6ea1ae"},
        type="STS",
        main_score="cosine_spearman",
        domains=["News", "Written"],
        license="mit",
        annotations_creators="LM-generated",
        sample_creation="LM-generated and verified",
        **common_metadata(),
    )
