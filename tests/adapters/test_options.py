"""Experiment folder names stay readable however many long options a setting has (MTEB falls back to
`exp_<hash>` past 200 characters)."""

from __future__ import annotations

import re

from bench.adapters.options import MTEB_EXPERIMENT_NAME_LIMIT, fit_experiment
from toy_encoders import HashEncoder


class ManyOptions(HashEncoder):
    """HashEncoder with five long string options (inherits family "toy"; registers nothing)."""

    def __init__(
        self,
        *,
        reencoder: str = "",
        filter_words: str = "",
        template: str = "",
        pattern: str = "",
        suffix: str = "",
        **kwargs,
    ):
        super().__init__(**kwargs)


LONG = dict(
    reencoder="sentence-transformers/all-mpnet-base-v2",
    filter_words="Sure! , Well, Based on the text",
    template="Represent the {instruction} for retrieval: {text}",
    pattern="chat-template-with-system-prompt",
    suffix="The answer in one word is:",
)


def test_long_settings_get_a_readable_folder_name(tmp_path):
    model = ManyOptions(cache_dir=tmp_path, **LONG)
    name = model.mteb_model_meta.experiment_name
    assert not name.startswith("exp_") and len(name) <= MTEB_EXPERIMENT_NAME_LIMIT
    assert re.fullmatch(r"[A-Za-z0-9._+\-]+", name), name  # no spaces, braces, slashes
    assert "family_toy" in name and "filter_words_" in name and "template_" in name
    other = ManyOptions(cache_dir=tmp_path, **{**LONG, "reencoder": "sentence-transformers/all-mpnet-base-v1"})
    assert other.mteb_model_meta.experiment_name != name  # shortened labels keep values apart


def test_short_settings_are_unchanged():
    experiment = {"family": "inbedder", "pooling": "1st-gen", "template": "none"}
    assert fit_experiment(experiment) == experiment
