"""Open weights on the board (bench/leaderboard/open_weights.py): the site's "open weights only" filter reads it."""

from __future__ import annotations

from bench.leaderboard.open_weights import external_open_weights, submitted_open_weights


def test_a_hub_model_is_open_an_api_closed_a_local_one_unknown():
    assert submitted_open_weights({"family": "sentence-transformers", "model_card": "https://huggingface.co/a/b"})
    assert submitted_open_weights({"family": "openai", "model_card": None}) is False
    assert submitted_open_weights({"family": "openai", "model_card": "https://huggingface.co/a/b"}) is False
    assert submitted_open_weights({"family": "instructor", "model_card": None}) is None


def test_an_external_row_says_what_its_source_says():
    assert external_open_weights({"open_weights": True}) is True
    assert external_open_weights({"open_weights": False}) is False
    assert external_open_weights({"open_weights": "yes"}) is None  # not MTEB's boolean: unknown
    assert external_open_weights({}) is None
