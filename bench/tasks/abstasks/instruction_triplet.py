"""Instruction triplets: per criterion, is the anchor closer to the positive than to the negative?"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np

from bench.core.json_types import JSON, JSONObject
from bench.core.metric_specs import Metric
from bench.tasks.abstasks.base import InstructionTask, MetadataUpdate, Prompt, VariantAttributes, encode_pairs, limited
from bench.tasks.data import Schema
from bench.tasks.metrics import harmonic_mean, triplet_successes
from bench.tasks.rows import TripletItem, TripletRow

if TYPE_CHECKING:
    from mteb.types import ScoresDict

# Declared once for both triplet task types (this one and label_sampled.AbsTaskLabelTriplet).
TRIPLET_METRICS: tuple[Metric, ...] = (
    Metric(
        "hmean_success_rate",
        "triplet success rate per aspect (share of triplets whose anchor is closer, by cosine, to the positive than to "
        "the negative), harmonic mean over the aspects",
        mteb_type="Reranking",  # rank two candidates for an instructed query (NevIR, ColDeRReranking): see below
    ),
    Metric(
        "success_rate",
        "share of one criterion's triplets whose anchor is closer, by cosine, to the positive than to the negative",
        place="last",
        detail=True,
    ),
)


class AbsTaskInstructionTriplet(InstructionTask[TripletRow]):
    """Triplet task with one instruction per criterion (InBedder paper §3.2, IntentEmotion).

    Each criterion's instruction is applied to anchor, positive and negative. The success rate of a
    criterion is the share of its triplets with cosdist(a, p) < cosdist(a, n) (strict); the main score
    is the harmonic mean of the per-criterion rates, so a model must follow every instruction.
    An instruction-blind model is capped: when two criteria rank the same texts in opposite orders
    its two rates sum to at most 1.

    MTEB task type: concrete triplet tasks declare `type="Reranking"` (`TaskMetadata.type` is a closed
    Literal; there is no triplet type). A triplet is a query (the anchor under the instruction) with two
    candidates to rank, and the success rate is the share of queries whose relevant candidate is ranked
    first, i.e. the pairwise ranking accuracy that MTEB's own two-candidate reranking tasks report
    (`ColDeRReranking`: accuracy; `NevIR`: paired accuracy over two queries that flip which passage is
    relevant, like our criteria). MTEB averages main scores per type (`Mean (TaskType)` and the per-type
    columns: `mteb/benchmarks/_benchmark_metrics.py::_compute_task_types`, `_create_table.py`), so under
    Reranking a triplet success rate joins other query-candidate ranking scores in [0, 1] (MAP, nDCG,
    accuracy), where under the earlier `PairClassification` it was averaged with the average precision
    of thresholding pair similarities globally, a classification score. The type also picks prompts:
    MTEB model implementations key `model_prompts`/`prompts_dict` by type (`Reranking`,
    `Reranking-query`; every text here is encoded with `prompt_type=query`) and some route by
    `simplified_task_type` ("retrieval" now; e.g. Jina's retrieval adapter, not text-matching), so an
    MTEB implementation may give these texts another prompt than before. `AbsTask.abstask_prompt` is set
    per abstract class, not per type: this class defines none, so a model with no prompt for the type
    gets an empty one. Under "Reranking" MTEB's sparse-encoder wrapper still returns dense embeddings
    (it keeps sparse tensors only for the non-reranking retrieval types), which `encode_pairs` needs.

    Attributes:
        criteria: criterion name (also the dataset config) -> instruction.
    """

    criteria: dict[str, str]
    schema = Schema(TripletRow, {"anchor": "text", "positive": "text", "negative": "text"})
    metrics: ClassVar[tuple[Metric, ...]] = TRIPLET_METRICS

    @property
    def hub_configs(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(self.criteria)

    def instruction_set(self) -> JSONObject:
        return {"criteria": dict(self.criteria)}

    def instruction_update(self, instruction: Prompt) -> tuple[MetadataUpdate, VariantAttributes]:
        from bench.tasks.variants import mapping_update

        return {}, {"criteria": mapping_update(self, "criteria", instruction)}

    def _assemble(self, rows_by_part: dict[str, list[TripletRow]]) -> list[TripletItem]:
        out: list[TripletItem] = []
        for criterion, rows in rows_by_part.items():
            rows = limited(rows, [criterion] * len(rows), self.limit, self.seed)
            out += [{**r, "criterion": criterion, "instruction": self.criteria[criterion]} for r in rows]
        return out

    def _evaluate_subset(self, model, data_split, *, hf_split, hf_subset, encode_kwargs, **kwargs) -> ScoresDict:
        n = len(data_split)
        texts = list(data_split["anchor"]) + list(data_split["positive"]) + list(data_split["negative"])
        emb = encode_pairs(
            model,
            texts,
            list(data_split["instruction"]) * 3,
            task=self,
            hf_split=hf_split,
            hf_subset=hf_subset,
            encode_kwargs=encode_kwargs,
        )
        success = triplet_successes(emb[:n], emb[n : 2 * n], emb[2 * n :])
        criterion = np.asarray(list(data_split["criterion"]))
        scores: dict[str, float] = {}
        kept: dict[str, dict[str, list[JSON]]] = {}
        for name in self.criteria:
            mask = criterion == name
            scores[f"{name}_success_rate"] = float(success[mask].mean())
            scores[f"{name}_num_triplets"] = int(mask.sum())
            kept[name] = {"success": success[mask].astype(int).tolist()}
        self.run_items = {"kind": "triplet", "groups": kept}
        scores["hmean_success_rate"] = harmonic_mean([scores[f"{c}_success_rate"] for c in self.criteria])
        return scores
