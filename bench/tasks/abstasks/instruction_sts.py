"""Instruction-conditioned STS: each row's instruction is applied to both sentences."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mteb.abstasks import AbsTaskSTS
from mteb.similarity_functions import compute_pairwise_similarity
from sklearn.metrics.pairwise import paired_cosine_distances, paired_euclidean_distances, paired_manhattan_distances

from bench.core.errors import DataError
from bench.core.json_types import JSON, JSONObject
from bench.tasks.abstasks.base import InstructionTask, encode_pairs, limited
from bench.tasks.data import Schema
from bench.tasks.rows import InstructedSTSRow

if TYPE_CHECKING:
    from mteb._evaluators.any_sts_evaluator import STSEvaluatorScores
    from mteb.abstasks.sts import STSMetrics


class AbsTaskInstructionSTS(InstructionTask[InstructedSTSRow], AbsTaskSTS):  # type: ignore[misc]  # statistics: InstructionTask's row count
    """STS whose gold similarity depends on a per-row instruction (InBedder paper §3.2, InstructSTSB).

    Scoring is MTEB's own `AbsTaskSTS._calculate_scores` (Pearson/Spearman of cosine, Manhattan,
    Euclidean and the model's similarity against the gold scores; scipy's spearmanr gives tied values
    their average rank). Only the encoding differs: both sentences carry the row's instruction.
    """

    schema = Schema(
        InstructedSTSRow, {"sentence1": "text", "sentence2": "text", "score": "score", "instruction": "text"}
    )
    min_score = 0
    max_score = 1

    no_variants_reason = (
        "its instructions belong to the rows and the gold scores depend on them; vary the "
        "instructions of a task with a task-level instruction instead."
    )

    def instruction_set(self) -> JSONObject:
        return {"per_row": True, "column": "instruction"}

    def _assemble(self, rows_by_part: dict[str, list[InstructedSTSRow]]) -> list[InstructedSTSRow]:
        (rows,) = rows_by_part.values()
        for i, row in enumerate(rows, start=1):
            if not self.min_score <= row["score"] <= self.max_score:
                raise DataError(
                    f"{self.metadata.name} row {i}: score {row['score']} outside [{self.min_score}, {self.max_score}]."
                )
        return limited(rows, [r["score"] for r in rows], self.limit, self.seed)

    def _evaluate_subset(self, model, data_split, *, hf_split, hf_subset, encode_kwargs, **kwargs) -> STSMetrics:
        n = len(data_split)
        emb = encode_pairs(
            model,
            list(data_split["sentence1"]) + list(data_split["sentence2"]),
            list(data_split["instruction"]) * 2,
            task=self,
            hf_split=hf_split,
            hf_subset=hf_subset,
            encode_kwargs=encode_kwargs,
        )
        e1, e2 = emb[:n], emb[n:]
        scores: STSEvaluatorScores = dict(  # the fields of MTEB's STSEvaluatorScores
            cosine_scores=(1 - paired_cosine_distances(e1, e2)).tolist(),
            manhattan_distances=(-paired_manhattan_distances(e1, e2)).tolist(),
            euclidean_distances=(-paired_euclidean_distances(e1, e2)).tolist(),
            similarity_scores=compute_pairwise_similarity(model, e1, e2).tolist(),
        )
        gold = [self._normalize(s) for s in list(data_split["score"])]
        similarity: list[JSON] = list(scores["cosine_scores"])
        self.run_items = {"kind": "sts", "groups": {"default": {"similarity": similarity, "gold": list(gold)}}}
        return self._calculate_scores(scores, gold)
