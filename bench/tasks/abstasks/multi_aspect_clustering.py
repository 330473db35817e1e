"""Multi-aspect clustering: the same kind of texts clustered once per aspect, each under its instruction."""

from __future__ import annotations

import functools
from concurrent.futures import Future
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from sklearn.metrics import v_measure_score

from bench.core import parallel
from bench.core.json_types import JSON, JSONObject
from bench.core.metric_specs import Metric
from bench.tasks.abstasks.base import InstructionTask, MetadataUpdate, Prompt, VariantAttributes, encode_pairs, limited
from bench.tasks.data import Schema, check_clusters
from bench.tasks.metrics import cluster_assignment, harmonic_mean
from bench.tasks.rows import AspectClusterItem, ClusterRow

if TYPE_CHECKING:
    from mteb.types import ScoresDict


class AbsTaskMultiAspectClustering(InstructionTask[ClusterRow]):
    """Clustering by several aspects (InBedder paper §3.2, NYTClustering: topic and location).

    Per aspect: embed its texts under the aspect's instruction, MiniBatchKMeans with k = number of gold
    clusters (batch 500, seeded), V-measure. Main score: harmonic mean of the aspects' V-measures.

    Attributes:
        aspects: aspect name (also the dataset config) -> instruction.
    """

    aspects: dict[str, str]
    schema = Schema(ClusterRow, {"text": "text", "cluster": "label"})
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric(
            "hmean_v_measure",
            "V-measure of k-means clusters against the gold labels per aspect, harmonic mean over the aspects",
            mteb_type="Clustering",
        ),
        Metric("v_measure", "V-measure of one aspect's k-means clusters", place="first", detail=True),
    )

    @property
    def hub_configs(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(self.aspects)

    def instruction_set(self) -> JSONObject:
        return {"aspects": dict(self.aspects)}

    def instruction_update(self, instruction: Prompt) -> tuple[MetadataUpdate, VariantAttributes]:
        from bench.tasks.variants import mapping_update

        return {}, {"aspects": mapping_update(self, "aspects", instruction)}

    def _assemble(self, rows_by_part: dict[str, list[ClusterRow]]) -> list[AspectClusterItem]:
        out: list[AspectClusterItem] = []
        for aspect, rows in rows_by_part.items():
            check_clusters(self.metadata.name, aspect, [r["cluster"] for r in rows])
            rows = limited(rows, [r["cluster"] for r in rows], self.limit, self.seed)
            # Labels become strings so that aspects with int and str labels fit one Arrow column.
            out += [
                {"text": r["text"], "cluster": str(r["cluster"]), "aspect": aspect, "instruction": self.aspects[aspect]}
                for r in rows
            ]
        return out

    def _evaluate_subset(self, model, data_split, *, hf_split, hf_subset, encode_kwargs, **kwargs) -> ScoresDict:
        emb = encode_pairs(
            model,
            list(data_split["text"]),
            list(data_split["instruction"]),
            task=self,
            hf_split=hf_split,
            hf_subset=hf_subset,
            encode_kwargs=encode_kwargs,
        )
        aspect = np.asarray(list(data_split["aspect"]))
        labels = np.asarray(list(data_split["cluster"]))
        scores: dict[str, float] = {}
        masks = {name: aspect == name for name in self.aspects}
        jobs: list[Future[np.ndarray]] = []
        try:  # over the ranks in a launched run, on the scoring thread in a plain one
            for mask in masks.values():
                jobs.append(
                    parallel.submit(
                        functools.partial(cluster_assignment, seed=self.seed),
                        np.ascontiguousarray(emb[mask]),
                        labels[mask].tolist(),
                    )
                )
            found = parallel.gather(jobs)
        finally:
            parallel.discard(jobs)
        kept: dict[str, dict[str, list[JSON]]] = {}
        for (name, mask), assignment in zip(masks.items(), found, strict=True):
            gold = labels[mask].tolist()
            scores[f"v_measure_{name}"] = float(v_measure_score(gold, assignment))  # as cluster_v_measure
            kept[name] = {"labels": gold, "assignments": np.asarray(assignment).tolist()}
            scores[f"{name}_num_texts"] = int(mask.sum())
        scores["hmean_v_measure"] = harmonic_mean([scores[f"v_measure_{a}"] for a in self.aspects])
        self.run_items = {"kind": "clustering", "groups": kept}
        return scores
