"""Tasks whose pairs or triplets are sampled from labelled texts (GSTransform paper §4.2).

The published data is a classification set (text + class). Per aspect, the task reads the labelled
rows, samples pairs or triplets with `bench.tasks.sampling` (seeded, `size` per aspect, capped by
`--limit`), embeds each text once under the aspect's instruction, and scores:

* STS: per aspect MTEB's own `AbsTaskSTS._calculate_scores` on (cosine, 0/1 label); main score the
  arithmetic mean of the aspects' cosine Spearman ("Since the Spearman correlation can be negative,
  we report the arithmetic mean for datasets with multiple aspects").
* Triplets: per aspect the share of triplets with cosdist(a, p) < cosdist(a, n); main score the
  harmonic mean over aspects.

Local layout: `DATA_DIR/<Task>/<aspect>.{csv,jsonl,...}` with columns `text,label`, one file per aspect.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Unpack, cast

import numpy as np
from mteb.abstasks import AbsTaskSTS
from mteb.similarity_functions import compute_pairwise_similarity
from sklearn.metrics.pairwise import paired_cosine_distances, paired_euclidean_distances, paired_manhattan_distances

from bench.core.errors import DataError
from bench.core.json_types import JSON, JSONObject
from bench.core.metric_specs import ANY, Metric, correlation
from bench.tasks.abstasks.base import (
    InstructionTask,
    MetadataUpdate,
    Prompt,
    SampleCount,
    TaskOptions,
    VariantAttributes,
    encode_pairs,
)
from bench.tasks.abstasks.instruction_triplet import TRIPLET_METRICS
from bench.tasks.data import Schema, load_hub_rows, validate_rows
from bench.tasks.metrics import harmonic_mean, triplet_successes
from bench.tasks.rows import LabelledRow, PairIndexItem, RawRow, RowT, TripletIndexItem
from bench.tasks.sampling import DEFAULT_SAMPLE_SIZE, sample_pairs, sample_triplets

if TYPE_CHECKING:
    from collections.abc import Mapping

    from datasets import Dataset, DatasetDict
    from mteb._evaluators.any_sts_evaluator import STSEvaluatorScores
    from mteb.models.models_protocols import EncoderProtocol
    from mteb.types import EncodeKwargs, ScoresDict


@dataclass(frozen=True)
class HubLabels:
    """Where one aspect's labelled texts live in a published dataset.

    Attributes:
        text: column holding the text.
        label: column holding the class; None means the config name is the class (e.g. the
            language of a multilingual set whose configs are languages).
        configs: dataset configs to read and concatenate (None: the default config).
        split: split to read.
    """

    text: str = "text"
    label: str | None = "label"
    configs: tuple[str, ...] | None = None
    split: str = "test"

    def rows(self, path: str, revision: str, *, label_column: str) -> list[RawRow]:
        out: list[RawRow] = []
        for config in self.configs or (None,):
            for row in load_hub_rows(path, revision=revision, config=config, split=self.split):
                out.append({"text": row[self.text], label_column: row[self.label] if self.label else config})
        return out


class LabelledSource(InstructionTask[RowT]):
    """Reads one labelled file per aspect: local `<aspect>.*` files, or the hub columns in `hub_labels`.

    Attributes:
        aspects: aspect name (also the local file name) -> instruction.
        hub_labels: aspect -> columns of the published dataset; None when no published copy loads.
        label_column: name of the class column in the local files.
    """

    aspects: dict[str, str]
    hub_labels: ClassVar[dict[str, HubLabels] | None] = None
    label_column: ClassVar[str] = "label"

    @property
    def hub_configs(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(self.aspects)

    def _read_part(self, part: str) -> list[RowT]:
        if self.local_files:
            return super()._read_part(part)
        if self.hub_labels is None:
            raise DataError(
                f"{self.metadata.name} has no published copy that loads with `datasets` "
                f"({self.metadata.dataset['path']}). Build the local files and pass --data-dir "
                f"(expected {self.metadata.name}/<aspect>.jsonl with columns text,{self.label_column})."
            )
        meta = self.metadata.dataset
        rows = self.hub_labels[part].rows(meta["path"], meta["revision"], label_column=self.label_column)
        return validate_rows(rows, self.schema, f"{meta['path']}[{part}]")

    def instruction_set(self) -> JSONObject:
        return {"aspects": dict(self.aspects)}

    def instruction_update(self, instruction: Prompt) -> tuple[MetadataUpdate, VariantAttributes]:
        from bench.tasks.variants import mapping_update

        return {}, {"aspects": mapping_update(self, "aspects", instruction)}


class _SampledTask(LabelledSource[LabelledRow]):
    """Shared by the sampled task types: the pools of texts per aspect and the sample size."""

    schema = Schema(LabelledRow, {"text": "text", "label": "label"})
    default_size: ClassVar[int] = DEFAULT_SAMPLE_SIZE
    sampling_method: ClassVar[str]

    def __init__(self, *, size: int | None = None, **kwargs: Unpack[TaskOptions]) -> None:
        size = self.default_size if size is None else size
        if size <= 0:
            raise DataError(f"sample size must be a positive number, got {size}.")
        self.size = size
        self.pools: dict[str, list[str]] = {}
        super().__init__(**kwargs)

    def unload_data(self) -> None:
        super().unload_data()
        self.pools = {}

    @property
    def n_per_aspect(self) -> int:
        """Pairs or triplets per aspect: `size`, or fewer under `--limit`."""
        return min(self.size, self.limit) if self.limit else self.size

    def instruction_set(self) -> JSONObject:
        # Sampling decides which items are scored, so it belongs to what a result must match.
        return {**super().instruction_set(), "sampling": {"method": self.sampling_method, "size": self.size}}

    def _pool(self, aspect: str, rows: list[LabelledRow]) -> tuple[list[str], list[str]]:
        texts = [r["text"] for r in rows]
        self.pools[aspect] = texts
        return texts, [str(r["label"]) for r in rows]

    def _encode_used(
        self,
        model: EncoderProtocol,
        used: dict[str, np.ndarray],
        *,
        hf_split: str,
        hf_subset: str,
        encode_kwargs: EncodeKwargs,
    ) -> dict[str, np.ndarray]:
        """Embed each aspect's used texts once under its instruction; one `encode` call for all aspects."""
        texts: list[str] = []
        instructions: list[str] = []
        for aspect, idx in used.items():
            texts += [self.pools[aspect][k] for k in idx.tolist()]
            instructions += [self.aspects[aspect]] * len(idx)
        emb = encode_pairs(
            model, texts, instructions, task=self, hf_split=hf_split, hf_subset=hf_subset, encode_kwargs=encode_kwargs
        )
        out, start = {}, 0
        for aspect, idx in used.items():
            out[aspect] = emb[start : start + len(idx)]
            start += len(idx)
        return out

    def _calculate_descriptive_statistics_from_split(self, split: str, **kwargs: object) -> SampleCount:
        data = cast("DatasetDict", self.dataset)[split]  # the harness's tasks are monolingual: {split: Dataset}
        aspect = np.asarray(data["aspect"])
        counts = {f"{a}_num_items": int((aspect == a).sum()) for a in self.aspects}
        return cast("SampleCount", {"num_samples": len(data), **counts})  # per-aspect keys: no TypedDict field


def _rows_by_aspect(
    data_split: Dataset, aspects: dict[str, str], columns: tuple[str, ...]
) -> dict[str, dict[str, np.ndarray]]:
    aspect = np.asarray(data_split["aspect"])
    cols = {c: np.asarray(data_split[c]) for c in columns}
    return {a: {c: v[aspect == a] for c, v in cols.items()} for a in aspects}


class AbsTaskLabelPairSTS(_SampledTask, AbsTaskSTS):
    """Binary STS from labelled texts: a pair scores 1 when both texts share the aspect's class, else 0."""

    sampling_method = "uniform distinct pairs of different texts; score 1 iff same class"
    metrics: ClassVar[tuple[Metric, ...]] = (
        correlation(
            "mean_cosine_spearman",
            "Spearman correlation of cosine similarity with the gold label per aspect, arithmetic mean over the aspects",
            mteb_type="STS",
        ),
        # A share printed as it is (0.48), not ×100 as scores are: no range beyond a finite number.
        Metric("positive_rate", "share of an aspect's pairs whose two texts share a class", range=ANY, place="last"),
    )
    min_score = 0
    max_score = 1

    def _assemble(self, rows_by_part: dict[str, list[LabelledRow]]) -> list[PairIndexItem]:
        out: list[PairIndexItem] = []
        for aspect, rows in rows_by_part.items():
            texts, labels = self._pool(aspect, rows)
            sample = sample_pairs(texts, labels, self.n_per_aspect, seed=self.seed, aspect=aspect)
            out += [
                {"aspect": aspect, "first": int(i), "second": int(j), "score": int(s)}
                for i, j, s in zip(sample.first, sample.second, sample.score, strict=True)
            ]
        return out

    # Per-aspect scores (and their mean), not MTEB's STSMetrics: AbsTaskSTS gives only `_calculate_scores`.
    def _evaluate_subset(self, model, data_split, *, hf_split, hf_subset, encode_kwargs, **kwargs) -> ScoresDict:  # type: ignore[override]
        parts = _rows_by_aspect(data_split, self.aspects, ("first", "second", "score"))
        used = {a: np.unique(np.concatenate([p["first"], p["second"]])) for a, p in parts.items()}
        emb = self._encode_used(model, used, hf_split=hf_split, hf_subset=hf_subset, encode_kwargs=encode_kwargs)
        scores: dict[str, float] = {}
        kept: dict[str, dict[str, list[JSON]]] = {}
        for aspect, p in parts.items():
            e1 = emb[aspect][np.searchsorted(used[aspect], p["first"])]
            e2 = emb[aspect][np.searchsorted(used[aspect], p["second"])]
            sts: STSEvaluatorScores = dict(  # the fields of MTEB's STSEvaluatorScores
                cosine_scores=(1 - paired_cosine_distances(e1, e2)).tolist(),
                manhattan_distances=(-paired_manhattan_distances(e1, e2)).tolist(),
                euclidean_distances=(-paired_euclidean_distances(e1, e2)).tolist(),
                similarity_scores=compute_pairwise_similarity(model, e1, e2).tolist(),
            )
            gold = [self._normalize(s) for s in p["score"].tolist()]
            metrics = cast("Mapping[str, float]", self._calculate_scores(sts, gold))  # STSMetrics: every field a float
            scores.update({f"{aspect}_{k}": v for k, v in metrics.items()})
            kept[aspect] = {"similarity": list(sts["cosine_scores"]), "gold": list(gold)}
            n, pos = len(gold), int(p["score"].sum())
            scores.update(
                {f"{aspect}_num_pairs": n, f"{aspect}_positive_pairs": pos, f"{aspect}_positive_rate": pos / n}
            )
        scores["mean_cosine_spearman"] = float(np.mean([scores[f"{a}_cosine_spearman"] for a in self.aspects]))
        self.run_items = {"kind": "sts", "groups": kept}
        return scores

    # Per-aspect counts and positive rates, not MTEB's AnySTSDescriptiveStatistics.
    def _calculate_descriptive_statistics_from_split(self, split: str, **kwargs: object) -> SampleCount:  # type: ignore[override]
        stats = super()._calculate_descriptive_statistics_from_split(split, **kwargs)
        parts = _rows_by_aspect(cast("DatasetDict", self.dataset)[split], self.aspects, ("score",))
        rates = {f"{a}_positive_rate": float(p["score"].mean()) for a, p in parts.items()}
        return cast("SampleCount", {**stats, **rates})  # per-aspect keys: no TypedDict field


class AbsTaskLabelTriplet(_SampledTask):
    """Triplet alignment from labelled texts (anchor and positive share the class, the negative does not)."""

    sampling_method = (
        "uniform anchor of a class with >=2 texts; positive: other text of its class; negative: other class"
    )
    metrics: ClassVar[tuple[Metric, ...]] = TRIPLET_METRICS

    def _assemble(self, rows_by_part: dict[str, list[LabelledRow]]) -> list[TripletIndexItem]:
        out: list[TripletIndexItem] = []
        for aspect, rows in rows_by_part.items():
            texts, labels = self._pool(aspect, rows)
            t = sample_triplets(texts, labels, self.n_per_aspect, seed=self.seed, aspect=aspect)
            out += [
                {"aspect": aspect, "anchor": int(a), "positive": int(p), "negative": int(n)}
                for a, p, n in zip(t.anchor, t.positive, t.negative, strict=True)
            ]
        return out

    def _evaluate_subset(self, model, data_split, *, hf_split, hf_subset, encode_kwargs, **kwargs) -> ScoresDict:
        parts = _rows_by_aspect(data_split, self.aspects, ("anchor", "positive", "negative"))
        used = {a: np.unique(np.concatenate(list(p.values()))) for a, p in parts.items()}
        emb = self._encode_used(model, used, hf_split=hf_split, hf_subset=hf_subset, encode_kwargs=encode_kwargs)
        scores: dict[str, float] = {}
        kept: dict[str, dict[str, list[JSON]]] = {}
        for aspect, p in parts.items():
            vec = {role: emb[aspect][np.searchsorted(used[aspect], idx)] for role, idx in p.items()}
            success = triplet_successes(vec["anchor"], vec["positive"], vec["negative"])
            scores[f"{aspect}_success_rate"] = float(success.mean())
            scores[f"{aspect}_num_triplets"] = len(success)
            kept[aspect] = {"success": success.astype(int).tolist()}
        scores["hmean_success_rate"] = harmonic_mean([scores[f"{a}_success_rate"] for a in self.aspects])
        self.run_items = {"kind": "triplet", "groups": kept}
        return scores
