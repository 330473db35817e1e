"""PromptEOL / MetaEOL: exact prompts, the paper's clean-up and layer rule, last-token readout."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from bench.adapters.prompteol import METAEOL, PROMPTEOL, PromptEOLEncoder, clean_sentence, proportional_layer
from bench.core.errors import ConfigError


def test_prompts_are_metaeols(raw_dir):
    derived = json.loads((raw_dir / "MetaEOL/derived/prompts.json").read_text(encoding="utf-8"))
    flat = json.dumps(derived)
    assert len(METAEOL) == 8 and all(json.dumps(p)[1:-1] in flat for p in METAEOL + PROMPTEOL)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("a cat sits", "a cat sits."),
        ("is it raining?", "is it raining."),
        ('he said "hi"', "he said 'hi'"),  # ends in a quote: no period; quotes become single
        ("done.", "done."),
        ("", ""),
    ],
)
def test_clean_sentence(raw, clean):
    assert clean_sentence(raw) == clean


def test_proportional_layer_rule():
    assert [proportional_layer(n) for n in (32, 40, 80, 30, 6)] == [-3, -4, -8, -3, -1]


def test_render_and_options():
    enc = PromptEOLEncoder("unused", revision="x", use_cache=False)
    assert enc.render('A "quoted" word?', "ignored", None) == [
        'This sentence : "A \'quoted\' word." means in one word:"'
    ]
    meta = PromptEOLEncoder("unused", revision="x", prompts="metaeol", instruction_template="{instruction}\n")
    assert len(meta.render("x", "Why?", None)) == 8 and meta.render("x", "Why?", None)[0].startswith(
        "Why?\nIn this task"
    )
    for bad in ({"prompts": "eol"}, {"prompts": ["no slot"]}, {"layer": "middle"}, {"instruction_template": "x"}):
        with pytest.raises(ConfigError):
            PromptEOLEncoder("unused", revision="x", **bad)


@pytest.mark.slow
def test_metaeol_is_the_mean_of_last_token_states(smollm2_path):
    texts = ["A man is playing a guitar.", "Is the bank open on Sunday?"]
    meta = PromptEOLEncoder(smollm2_path, prompts="metaeol", use_cache=False, batch_size=5)
    got = meta.encode_inputs([meta.render(t, None, None) for t in texts])
    facts = meta.mteb_model_meta  # filled at load for model_meta.json: SmolLM2-135M, 576-d hidden states
    assert facts.embed_dim == 576 == got.shape[1] and 130e6 < facts.n_parameters < 140e6
    prop = PromptEOLEncoder(smollm2_path, layer="proportional", use_cache=False)
    prop.model, prop.tokenizer, prop._loaded = meta.model, meta.tokenizer, True
    eol = prop.encode_inputs([prop.render(t, None, None) for t in texts])
    for i, text in enumerate(texts):
        states = []
        for prompt in meta.render(text, None, None):
            with torch.no_grad():
                out = meta.model(**meta.tokenizer([prompt], return_tensors="pt"), output_hidden_states=True)
            states.append(out.hidden_states[-1][0, -1])
        np.testing.assert_allclose(got[i], torch.stack(states).mean(0).numpy(), atol=2e-4)
        with torch.no_grad():
            out = meta.model(
                **meta.tokenizer(prop.render(text, None, None), return_tensors="pt"), output_hidden_states=True
            )
        assert len(out.hidden_states) == 31  # 30 layers: the rule picks index -3
        np.testing.assert_allclose(eol[i], out.hidden_states[-3][0, -1].numpy(), atol=2e-4)
