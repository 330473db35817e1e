"""IntentEmotion (InBedder paper §3.2, appendix A): BANKING77 utterances rewritten by GPT-4."""

from __future__ import annotations

from mteb import TaskMetadata

from bench.tasks._common import common_metadata
from bench.tasks.abstasks import AbsTaskInstructionTriplet


class IntentEmotion(AbsTaskInstructionTriplet):
    """Per criterion (emotion, intent), is the anchor closer to the positive than to the negative?

    MTEB type `Reranking`: each triplet ranks two candidates for one query (the anchor under the
    criterion's instruction), and the two criteria flip which candidate is relevant, as MTEB's own
    `NevIR` reranking task does with its paired queries; MTEB's per-type means (`Mean (TaskType)`)
    then average this success rate with other query-candidate ranking scores, not with pair
    classification's average precision. MTEB model implementations also pick their prompt by this
    type (see `AbsTaskInstructionTriplet`).
    """

    suites = ("awareness", "inbedder")
    criteria = {
        "emotion": "How does the customer feel?",
        "intent": "What does the customer need?",
    }
    metadata = TaskMetadata(
        name="IntentEmotion",
        description=(
            "Triplets of customer utterances that share either the intent or the emotion; the same texts "
            "are ranked in opposite orders by the two criteria. Main score: harmonic mean of the "
            "emotion and intent triplet success rates."
        ),
        dataset={"path": "BrandonZYW/IntentEmotion", "revision": "d0101c15083166b77371cf542c4045decc0a6e92"},
        type="Reranking",  # a query ranking two candidates, like MTEB's NevIR (see the class docstring)
        main_score="hmean_success_rate",
        domains=["Financial", "Spoken"],
        license="mit",
        annotations_creators="LM-generated",
        sample_creation="LM-generated and verified",
        **common_metadata(),
    )
