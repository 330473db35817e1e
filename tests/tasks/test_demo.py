"""The demo suite rewards instruction following: a perfect answerer scores 100, blind models are capped."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from bench.tasks.abstasks.base import PACKAGED_DATA_DIR
from bench.tasks.demo import DemoInstructSTS, DemoIntentEmotion, DemoNYTClustering
from bench.tasks.intent_emotion import IntentEmotion
from bench.tasks.nyt_clustering import NYTClustering
from helpers import scores_of
from toy_encoders import HashEncoder, LookupEncoder


def _csv(path):
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _onehot(key, vocab):
    vec = np.zeros(len(vocab) + 1)
    vec[vocab.setdefault(key, len(vocab))] = 1.0
    return vec


def _answers_intent_emotion():
    """Each utterance's answer to each question, read off the appendix-A grouping of the rows."""
    emotion = _csv(PACKAGED_DATA_DIR / "DemoIntentEmotion" / "emotion.csv")
    answers = {}
    for g in range(0, len(emotion), 2):
        opt1, opt2, fru1 = emotion[g]["anchor"], emotion[g]["positive"], emotion[g]["negative"]
        fru2 = emotion[g + 1]["positive"]
        for text, feel, need in ((opt1, "opt", "A"), (fru1, "fru", "A"), (opt2, "opt", "B"), (fru2, "fru", "B")):
            answers[(IntentEmotion.criteria["emotion"], text)] = feel
            answers[(IntentEmotion.criteria["intent"], text)] = f"{g}{need}"
    return answers


def _oracle(answers):
    vocab: dict = {}
    keys = list(answers)
    vecs = [_onehot(answers[k], vocab) for k in keys]
    width = max(len(v) for v in vecs)
    return LookupEncoder({k: np.pad(v, (0, width - len(v))) for k, v in zip(keys, vecs, strict=True)})


def test_demo_sizes():
    assert len(_csv(PACKAGED_DATA_DIR / "DemoIntentEmotion" / "emotion.csv")) == 48
    sts = [json.loads(line) for line in (PACKAGED_DATA_DIR / "DemoInstructSTS" / "test.jsonl").open()]
    assert len(sts) == 60 and [r["score"] for r in sts] == [0, 1] * 30
    topic = _csv(PACKAGED_DATA_DIR / "DemoNYTClustering" / "topic.csv")
    location = _csv(PACKAGED_DATA_DIR / "DemoNYTClustering" / "location.csv")
    assert [r["text"] for r in topic] == [r["text"] for r in location] and len(topic) == 64
    total = sum(p.stat().st_size for p in PACKAGED_DATA_DIR.rglob("*") if p.is_file())
    assert total < 1_000_000


def test_perfect_answerer_scores_100_on_intent_emotion():
    scores = scores_of(_oracle(_answers_intent_emotion()), DemoIntentEmotion())
    assert scores["main_score"] == 1.0


def test_perfect_answerer_scores_100_on_instruct_sts():
    answers = {}
    for k, line in enumerate((PACKAGED_DATA_DIR / "DemoInstructSTS" / "test.jsonl").open()):
        r = json.loads(line)
        answers[(r["instruction"], r["sentence1"])] = f"{k}-same"
        answers[(r["instruction"], r["sentence2"])] = f"{k}-same" if r["score"] == 1 else f"{k}-other"
    assert scores_of(_oracle(answers), DemoInstructSTS())["main_score"] == pytest.approx(1.0)


def test_perfect_answerer_scores_100_on_nyt():
    answers = {}
    for aspect, question in NYTClustering.aspects.items():
        for r in _csv(PACKAGED_DATA_DIR / "DemoNYTClustering" / f"{aspect}.csv"):
            answers[(question, r["text"])] = r["cluster"]
    assert scores_of(_oracle(answers), DemoNYTClustering())["main_score"] == pytest.approx(1.0)


def test_blind_encoder_cannot_serve_both_aspects():
    scores = scores_of(HashEncoder(blind=True, use_cache=False), DemoNYTClustering())
    assert scores["main_score"] < 0.5
