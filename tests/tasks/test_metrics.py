"""Every metric against a value computed by hand or by an independent implementation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import hmean as scipy_hmean
from sklearn.metrics import v_measure_score

from bench.tasks import InstructSTSB, IntentEmotion, NYTClustering
from bench.tasks.demo import DemoInstructSTS, DemoIntentEmotion
from bench.tasks.metrics import cluster_v_measure, harmonic_mean, triplet_successes
from helpers import scores_of, write_csv, write_jsonl
from toy_encoders import HashEncoder, LookupEncoder


# ------------------------------------------------------------------ harmonic mean
@pytest.mark.parametrize("values", [[0.25, 0.75], [0.5, 1.0], [0.1, 0.2, 0.9], [1.0, 1.0]])
def test_harmonic_mean_matches_scipy(values):
    assert harmonic_mean(values) == pytest.approx(float(scipy_hmean(values)), abs=1e-12)


def test_harmonic_mean_by_hand_and_zero():
    assert harmonic_mean([0.5, 1.0]) == pytest.approx(2 / 3)
    assert harmonic_mean([0.0, 0.9]) == 0.0
    with pytest.raises(ValueError, match="finite non-negative"):
        harmonic_mean([-0.1, 0.5])


# ------------------------------------------------------------------ triplets
def test_triplet_success_is_strict_and_uses_cosine_distance():
    a = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    p = np.array([[2.0, 0.2], [0.0, 1.0], [0.0, 3.0]])  # scale must not matter (cosine)
    n = np.array([[0.0, 1.0], [1.0, 0.1], [0.0, 1.0]])  # third: tie -> failure
    assert triplet_successes(a, p, n).tolist() == [True, False, False]


def _triplet_rows(prefix: str, outcomes: list[str]) -> tuple[list[list[str]], dict]:
    """Rows and vectors: 'win' puts the positive closer, 'lose' the negative, 'tie' both equal."""
    rows, table = [], {}
    for k, outcome in enumerate(outcomes):
        a, p, n = (f"{prefix} {role} {k}" for role in ("anchor", "positive", "negative"))
        rows.append([a, p, n])
        near, far = [1.0, 0.1], [0.0, 1.0]
        table[(None, a)] = [1.0, 0.0]
        table[(None, p)] = near if outcome == "win" else far
        table[(None, n)] = far if outcome in ("win", "tie") else near
    return rows, table


def test_triplet_task_when_criteria_disagree_hmean_differs_from_mean(tmp_path):
    emo_rows, emo = _triplet_rows("emo", ["win", "lose", "tie", "lose"])  # 1/4
    int_rows, intent = _triplet_rows("int", ["win", "win", "win", "lose"])  # 3/4
    write_csv(tmp_path / "IntentEmotion" / "emotion.csv", ["anchor", "positive", "negative"], emo_rows)
    write_csv(tmp_path / "IntentEmotion" / "intent.csv", ["anchor", "positive", "negative"], int_rows)
    scores = scores_of(LookupEncoder({**emo, **intent}), IntentEmotion(data_dir=tmp_path))
    assert scores["emotion_success_rate"] == 0.25
    assert scores["intent_success_rate"] == 0.75
    assert scores["main_score"] == pytest.approx(0.375)  # 2*0.25*0.75/(0.25+0.75); arithmetic mean is 0.5
    assert scores["hmean_success_rate"] == scores["main_score"]


def test_instruction_blind_model_is_capped_on_opposed_triplets():
    scores = scores_of(HashEncoder(blind=True, use_cache=False), DemoIntentEmotion())
    # Both criteria rank the same utterances in opposite orders: the two rates sum to at most 1.
    assert scores["emotion_success_rate"] + scores["intent_success_rate"] <= 1.0
    assert scores["main_score"] <= 0.5


# ------------------------------------------------------------------ instruction STS
def _sts_rows(cosines: list[float], gold: list[int]) -> tuple[list[dict], dict]:
    rows, table = [], {}
    for k, (c, g) in enumerate(zip(cosines, gold, strict=True)):
        s1, s2 = f"left {k}", f"right {k}"
        rows.append({"sentence1": s1, "sentence2": s2, "score": g, "instruction": "Same what?"})
        table[("Same what?", s1)] = [1.0, 0.0]
        table[("Same what?", s2)] = [c, math.sqrt(1 - c * c)]
    return rows, table


def test_instruct_sts_spearman_with_ties_by_hand(tmp_path):
    # gold ranks (average for ties): 1.5 1.5 3.5 3.5; cosine ranks: 1 2.5 2.5 4.
    # Pearson of the ranks: cov = 3, var = 4 and 4.5  ->  3 / sqrt(18) = 1/sqrt(2).
    rows, table = _sts_rows([0.1, 0.5, 0.5, 0.9], [0, 0, 1, 1])
    write_jsonl(tmp_path / "InstructSTSB" / "test.jsonl", rows)
    scores = scores_of(LookupEncoder(table), InstructSTSB(data_dir=tmp_path))
    assert scores["cosine_spearman"] == pytest.approx(1 / math.sqrt(2), abs=1e-6)
    assert scores["main_score"] == scores["cosine_spearman"]


def test_instruct_sts_instruction_reaches_both_sentences(tmp_path):
    rows, table = _sts_rows([0.2, 0.8], [0, 1])
    write_jsonl(tmp_path / "InstructSTSB" / "test.jsonl", rows)
    # A table keyed on the row instruction only: if either side lost its instruction, lookup would fail.
    assert scores_of(LookupEncoder(table), InstructSTSB(data_dir=tmp_path))["cosine_spearman"] == pytest.approx(1.0)


def test_instruction_blind_model_scores_exactly_zero_when_pairs_repeat_with_both_labels():
    scores = scores_of(HashEncoder(blind=True, use_cache=False), DemoInstructSTS())
    assert scores["cosine_spearman"] == pytest.approx(0.0, abs=1e-12)


# ------------------------------------------------------------------ clustering
def _entropy(counts: list[int]) -> float:
    n = sum(counts)
    return -sum(c / n * math.log(c / n) for c in counts if c)


def test_v_measure_by_hand():
    labels, pred = ["a", "a", "b", "b"], [0, 0, 0, 1]
    h = 1 - (3 / 4 * _entropy([2, 1])) / _entropy([2, 2])  # H(C|K) / H(C)
    c = 1 - (2 / 4 * _entropy([1, 1])) / _entropy([3, 1])  # H(K|C) / H(K)
    assert v_measure_score(labels, pred) == pytest.approx(2 * h * c / (h + c))


def test_cluster_v_measure_separable_and_seeded():
    rng = np.random.default_rng(0)
    centers = np.eye(4) * 10
    emb = np.concatenate([centers[k] + rng.normal(size=(10, 4)) for k in range(4)])
    labels = [k for k in range(4) for _ in range(10)]
    assert cluster_v_measure(emb, labels, seed=42) == pytest.approx(1.0)
    noisy = rng.normal(size=(40, 4))
    assert cluster_v_measure(noisy, labels, seed=7) == cluster_v_measure(noisy, labels, seed=7)


def test_multi_aspect_clustering_hmean(tmp_path):
    texts = [f"story {k}" for k in range(8)]
    topics = ["sports", "politics"] * 4
    places = ["japan"] * 4 + ["brazil"] * 4  # orthogonal to topic
    write_csv(tmp_path / "NYTClustering" / "topic.csv", ["text", "cluster"], list(zip(texts, topics, strict=True)))
    write_csv(tmp_path / "NYTClustering" / "location.csv", ["text", "cluster"], list(zip(texts, places, strict=True)))
    topic_q, place_q = NYTClustering.aspects["topic"], NYTClustering.aspects["location"]
    by_topic = {
        (q, t): ([10.0, 0.0] if s == "sports" else [0.0, 10.0])
        for t, s in zip(texts, topics, strict=True)
        for q in (topic_q, place_q)
    }
    follows = {
        **by_topic,
        **{(place_q, t): ([10.0, 0.0] if p == "japan" else [0.0, 10.0]) for t, p in zip(texts, places, strict=True)},
    }
    good = scores_of(LookupEncoder(follows), NYTClustering(data_dir=tmp_path))
    assert good["v_measure_topic"] == pytest.approx(1.0) and good["v_measure_location"] == pytest.approx(1.0)
    blind = scores_of(LookupEncoder(by_topic), NYTClustering(data_dir=tmp_path))
    assert blind["v_measure_topic"] == pytest.approx(1.0)
    assert blind["v_measure_location"] == pytest.approx(0.0, abs=1e-12)
    assert blind["main_score"] == 0.0  # the arithmetic mean would say 0.5
