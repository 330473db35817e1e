"""What a metric is, declared once: its name, direction, range, description and whether it is a detail.

Every reader of a score asks this module, never a name pattern of its own: the leaderboard's range check
(`bench.leaderboard.reference.metric_range`), the ×100 formatting of the site and of `bench leaderboard
verify`, the descriptions under each suite table (`bench.results.suites.metric_note`), which sub-scores
`bench run` prints beside a main score (`bench.results.summary.detail_values`) and which main scores are
gaps never averaged with absolute ones (`bench.results.suites.is_gap`).

Where a metric is declared:

* a harness task type declares the metrics its `_evaluate_subset` writes, as `metrics` on its abstract
  class (bench/tasks/abstasks/); the task catalogue carries them, so the leaderboard reads them without
  importing the tasks (bench/results/task_catalog.py);
* MTEB's task types the harness shows (STS, clustering, reranking, retrieval, classification, pair
  classification) are declared here, in `MTEB_TYPE_METRICS`, as are the numbers every result holds
  (counts, seconds: `GENERAL`).

This module sits in the core, not in `bench.tasks`, for the reason the variants file format does:
results and the leaderboard read it, and importing `bench.tasks` costs MTEB's import.

A score key names its metric in one of two ways: exactly (`cosine_spearman`) or as one of a family of
keys that hold the metric's words (`place`): per-aspect scores (`intent_success_rate`, place "last"),
per-instruction ones (`v_measure_correct_3`, place "first"), or MTEB's many variants of one measure
(`ndcg_at_10`, `nAUC_map_max`, place "anywhere"). Words are the key's `_`-separated parts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

from bench.core.json_types import JSONObject

Direction = Literal["higher", "lower"]
# score: a measure of quality; gap: a difference of two scores (Δci), never averaged with scores;
# count and seconds: numbers shown as they are, not ×100.
Kind = Literal["score", "gap", "count", "seconds"]
# Where the metric's words sit in a score key: the whole key, or its first, last or any words.
Place = Literal["exact", "first", "last", "anywhere"]

UNIT = (0.0, 1.0)
SIGNED = (-1.0, 1.0)
UNBOUNDED = (0.0, math.inf)
ANY = (-math.inf, math.inf)  # only checked to be a finite number, printed as it is
KIND_ORDER: dict[str, int] = {"count": 0, "gap": 1, "score": 2, "seconds": 3}  # which wins when two match a key


@dataclass(frozen=True)
class Metric:
    """One metric, as every table, check and description of the harness reads it.

    Attributes:
        name: the score key, or for a family (`place` other than "exact") the words its keys hold.
        description: how it is computed, shown under a suite table whose main score it is.
        direction: whether a higher or a lower value is better.
        range: the values it can take; a submitted score outside is rejected.
        kind: score, gap (a difference of two scores), count or seconds.
        place: where `name` sits in the keys it names (see the module docstring).
        detail: a sub-score `bench run` prints beside the main score (other than the main score itself).
        label: the detail's short label; for a family, by default the key less the metric's words.
        mteb_type: for a main score, the MTEB task type a task scored by it declares, so MTEB's per-type
            mean puts it beside scores of its kind (tests/tasks/test_mteb_discovery.py checks every task).
        version: bumped when the computation changes, so numbers of two versions are never compared.
    """

    name: str
    description: str = ""
    direction: Direction = "higher"
    range: tuple[float, float] = UNIT
    kind: Kind = "score"
    place: Place = "exact"
    detail: bool = False
    label: str | None = None
    mteb_type: str | None = None
    version: str = "1"

    def matches(self, key: str) -> bool:
        """Whether score key `key` is this metric (exactly, or one of its family)."""
        return self.rest(key) is not None

    def rest(self, key: str) -> str | None:
        """The words of `key` other than the metric's (`intent` for `intent_success_rate`), '' for an exact
        match, None when `key` is not this metric."""
        if key == self.name:
            return ""
        if self.place == "exact":
            return None
        words, mine = key.split("_"), self.name.split("_")
        n = len(mine)
        starts = {"first": [0], "last": [len(words) - n], "anywhere": range(len(words) - n + 1)}[self.place]
        for i in starts:
            if i >= 0 and words[i : i + n] == mine:
                return "_".join(words[:i] + words[i + n :])
        return None

    def label_of(self, key: str) -> str:
        """The detail's label for score key `key` (which this metric matches)."""
        return self.label or self.rest(key) or key

    @property
    def percent(self) -> bool:
        """True for a metric tables print ×100 (its values lie within [-1, 1])."""
        return self.range[1] <= 1

    def to_json(self) -> JSONObject:
        """A JSON-ready copy (the task catalogue's): an infinite bound is written as None."""
        found: JSONObject = asdict(self)
        found["range"] = [None if math.isinf(b) else b for b in self.range]
        return found

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Metric:
        low, high = data["range"]
        bounds = (-math.inf if low is None else float(low), math.inf if high is None else float(high))
        return cls(**{**data, "range": bounds})


def resolve(key: str, metrics: Iterable[Metric]) -> Metric | None:
    """The metric score key `key` names among `metrics`: an exact declaration first, then a family's by
    KIND_ORDER (a count of triplets is a count, a gap of V-measures a gap), then in declaration order."""
    found = [(m.place != "exact", KIND_ORDER[m.kind], i, m) for i, m in enumerate(metrics) if m.matches(key)]
    return min(found, key=lambda f: f[:3])[3] if found else None


class MetricIndex:
    """`resolve` over one set of metrics, each key resolved once: a site build asks for every score of every
    model page, thousands of keys against a hundred declarations."""

    def __init__(self, metrics: Iterable[Metric]) -> None:
        self.metrics = tuple(metrics)
        self._found: dict[str, Metric | None] = {}

    def resolve(self, key: str) -> Metric | None:
        if key not in self._found:
            self._found[key] = resolve(key, self.metrics)
        return self._found[key]


def correlation(
    name: str,
    description: str = "",
    place: Place = "exact",
    *,
    detail: bool = False,
    label: str | None = None,
    mteb_type: str | None = None,
    version: str = "1",
) -> Metric:
    """A correlation coefficient: in [-1, 1], higher is better."""
    return Metric(
        name, description, range=SIGNED, place=place, detail=detail, label=label, mteb_type=mteb_type, version=version
    )


# The numbers every result holds beside its scores.
GENERAL: tuple[Metric, ...] = (
    Metric("num", "a count (texts, pairs, triplets, clusters)", range=UNBOUNDED, kind="count", place="anywhere"),
    Metric("count", "a count", range=UNBOUNDED, kind="count", place="last"),
    Metric("delta", "a difference of two scores in [0, 1]", range=SIGNED, kind="gap", place="first"),
    Metric("delta", "a difference of two scores in [0, 1]", range=SIGNED, kind="gap", place="last"),
    Metric("evaluation_time", "seconds MTEB took to evaluate", "lower", UNBOUNDED, "seconds"),
    Metric("seconds", "seconds", "lower", UNBOUNDED, "seconds", place="last"),
)

_RERANKING_MAP = "mean average precision of the candidates ranked by cosine similarity (MTEB's reranking evaluator)"
_RANKING: tuple[Metric, ...] = (
    Metric("map", _RERANKING_MAP),
    Metric("map_at_1000", _RERANKING_MAP),
    Metric("map", "mean average precision", place="anywhere"),
    Metric("mrr", "mean reciprocal rank", place="anywhere"),
    Metric("ndcg", "normalised discounted cumulative gain", place="anywhere"),
    Metric("precision", "precision", place="anywhere"),
    Metric("recall", "recall", place="anywhere"),
    Metric("accuracy", "accuracy", place="anywhere"),
)
_CLASSIFICATION: tuple[Metric, ...] = (
    Metric("accuracy", "accuracy", place="anywhere"),
    Metric("f1", "F1 score", place="anywhere"),
    Metric("precision", "precision", place="anywhere"),
    Metric("recall", "recall", place="anywhere"),
    Metric("ap", "average precision", place="last"),
)
_STS: tuple[Metric, ...] = (
    correlation(
        "cosine_spearman",
        "Spearman correlation between the cosine similarity of each pair's two embeddings and the gold similarity",
        mteb_type="STS",
    ),
    correlation("spearman", "Spearman correlation", place="anywhere"),
    correlation("pearson", "Pearson correlation", place="anywhere"),
    correlation("kendall", "Kendall correlation", place="anywhere"),
)
_CLUSTERING: tuple[Metric, ...] = (
    Metric(
        "v_measure",
        "V-measure of mini-batch k-means clusters against the gold labels (MTEB's clustering evaluator)",
        mteb_type="Clustering",
    ),
    # MTEB's `v_measure_std` and the harness's per-aspect `v_measure_<aspect>`: details of the main score.
    Metric("v_measure", "V-measure of clusters against the gold labels", place="first", detail=True),
    Metric("v_measure", "V-measure of clusters against the gold labels", place="anywhere"),
    Metric("ari", "adjusted Rand index", place="last"),
    Metric("nmi", "normalised mutual information", place="last"),
)

# FollowIR (MTEB's Core17/News21/Robust04InstructionRetrieval, `evaluate_p_mrr_change`): p-MRR, and beside it
# the nDCG@5 and MAP@1000 MTEB computes again on the original ("og") and the changed instructions' queries
# alone (nested score keys: `og.ndcg_at_5` is scores["og"]["ndcg_at_5"]).
_P_MRR = (
    "p-MRR (FollowIR, Weller et al. 2024; MTEB's evaluate_p_mrr_change): for each document whose relevance the "
    "changed instruction removes, its rank under the original (R_og) and the changed instruction (R_new) give "
    "MRR_og/MRR_new - 1 if R_og > R_new (the document rose: negative), else 1 - MRR_new/MRR_og (it fell: "
    "positive); averaged per query, then over queries. In [-1, 1]: 0 = the ranking ignores the instruction change"
)
_INSTRUCTION_RERANKING: tuple[Metric, ...] = (
    Metric("p-MRR", _P_MRR, range=SIGNED, mteb_type="InstructionReranking"),
    Metric("og.ndcg_at_5", "nDCG@5 with the original instructions", detail=True, label="nDCG@5 og"),
    Metric("changed.ndcg_at_5", "nDCG@5 with the changed instructions", detail=True, label="nDCG@5 changed"),
    Metric("og.map_at_1000", "MAP@1000 with the original instructions", detail=True, label="MAP@1000 og"),
    Metric("changed.map_at_1000", "MAP@1000 with the changed instructions", detail=True, label="MAP@1000 changed"),
)
# InstructIR (Oh et al. 2024; MTEB's `robustness_at_10`): never averaged with p-MRR (bench/results/suites.py).
_INSTRUCTION_RETRIEVAL: tuple[Metric, ...] = (
    Metric(
        "robustness_at_10",
        "Robustness@10 (InstructIR, Oh et al. 2024; MTEB's robustness_at_10): per query, the lowest nDCG@10 over "
        "its instructions (user personas), averaged over queries",
        mteb_type="InstructionRetrieval",
    ),
)

# MTEB task type -> the metrics of its evaluator the harness shows and checks.
MTEB_TYPE_METRICS: dict[str, tuple[Metric, ...]] = {
    "STS": _STS,
    "Clustering": _CLUSTERING,
    "Reranking": _RANKING,
    "Retrieval": _RANKING,
    "InstructionRetrieval": (*_INSTRUCTION_RETRIEVAL, *_RANKING),
    "InstructionReranking": (*_INSTRUCTION_RERANKING, *_RANKING),
    "Classification": _CLASSIFICATION,
    "MultilabelClassification": _CLASSIFICATION,
    "PairClassification": (*_CLASSIFICATION, *_STS),
}


def core_metrics() -> tuple[Metric, ...]:
    """Every metric declared here (MTEB's types' and GENERAL), each once."""
    return tuple(dict.fromkeys([*GENERAL, *(m for ms in MTEB_TYPE_METRICS.values() for m in ms)]))
