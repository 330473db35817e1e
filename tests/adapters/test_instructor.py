"""INSTRUCTOR: the instruction is attended to but left out of the mean pooling."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bench.adapters.instructor import InstructorEncoder
from bench.core.errors import ConfigError

PAIRS = [
    ["Represent the emotion: ", "I love this card!"],
    ["Represent the intent of the customer message: ", "Refund please"],
    ["", "No instruction at all"],
]


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory, minilm_path):
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(0)
    out = tmp_path_factory.mktemp("tiny-bert")
    config = BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64
    )
    BertModel(config).save_pretrained(out)
    AutoTokenizer.from_pretrained(minilm_path).save_pretrained(out)
    return str(out)


def test_pooled_tokens_are_the_text_tokens(tiny_bert):
    enc = InstructorEncoder(tiny_bert, use_cache=False)
    enc.ensure_loaded()
    tok = enc._transformer.tokenizer
    features = enc.features(PAIRS)
    for row, (instruction, text) in enumerate(PAIRS):
        pooled = features["input_ids"][row][
            (features["attention_mask"][row] * features["instruction_mask"][row]).bool()
        ]
        # INSTRUCTOR joins without a separator; what is pooled is the text's tokens and the end token
        n_instruction = len(tok(instruction.strip())["input_ids"]) - 1  # [CLS] + instruction tokens
        joined = tok(instruction.strip() + text.strip())["input_ids"]
        assert pooled.tolist() == joined[n_instruction:]
        assert tok.decode(pooled.tolist()[:-1]) == tok.decode(tok(text)["input_ids"][1:-1])


def test_embedding_is_the_mean_over_the_text_tokens_of_a_direct_forward(tiny_bert):
    from transformers import AutoModel, AutoTokenizer

    enc = InstructorEncoder(tiny_bert, use_cache=False)
    got = enc.encode_inputs([enc.render(t, i or None, None) for i, t in PAIRS])
    tok, model = AutoTokenizer.from_pretrained(tiny_bert), AutoModel.from_pretrained(tiny_bert)
    for row, (instruction, text) in enumerate(PAIRS):
        ids = tok(instruction.strip() + text.strip(), return_tensors="pt")
        with torch.no_grad():
            states = model(**ids).last_hidden_state[0]
        start = len(tok(instruction.strip())["input_ids"]) - 1
        np.testing.assert_allclose(got[row], states[start:].mean(0).numpy(), atol=1e-5)


@pytest.mark.slow
def test_checkpoint_modules_after_pooling_apply(minilm_path):
    """all-MiniLM-L6-v2 has Pooling + Normalize: the output is the normalised mean over the text tokens."""
    from transformers import AutoModel, AutoTokenizer

    enc = InstructorEncoder(minilm_path, use_cache=False)
    instruction = "Represent the emotion: "
    got = enc.encode_inputs([enc.render("I love this card!", instruction, None)])
    tok, model = AutoTokenizer.from_pretrained(minilm_path), AutoModel.from_pretrained(minilm_path)
    with torch.no_grad():
        states = model(**tok(instruction.strip() + "I love this card!", return_tensors="pt")).last_hidden_state[0]
    mean = states[len(tok(instruction.strip())["input_ids"]) - 1 :].mean(0).numpy()
    np.testing.assert_allclose(got[0], mean / np.linalg.norm(mean), atol=1e-5)


def test_instruction_format_option():
    enc = InstructorEncoder("unused", revision="x", instruction_format="Represent the {instruction}: ")
    assert enc.render("t", "emotion", None) == ["Represent the emotion: ", "t"]
    with pytest.raises(ConfigError, match="instruction"):
        InstructorEncoder("unused", revision="x", instruction_format="Represent: ")


def test_pattern_is_one_string_pooled_whole(tiny_bert):
    """`pattern` (InBedder's INSTRUCTOR baseline): one string, every token pooled, the instruction's included."""
    from transformers import AutoModel, AutoTokenizer

    enc = InstructorEncoder(tiny_bert, use_cache=False, pattern="{instruction}: {input}")
    enc.ensure_loaded()
    model_input = enc.render("Refund please", "What does the customer need?", None)
    assert model_input == ["", "What does the customer need?: Refund please"]
    features = enc.features([model_input])
    assert features["instruction_mask"][0][features["attention_mask"][0].bool()].tolist() == [1] * int(
        features["attention_mask"][0].sum()
    )
    tok, model = AutoTokenizer.from_pretrained(tiny_bert), AutoModel.from_pretrained(tiny_bert)
    with torch.no_grad():
        states = model(**tok(model_input[1], return_tensors="pt")).last_hidden_state[0]
    np.testing.assert_allclose(enc.encode_inputs([model_input])[0], states.mean(0).numpy(), atol=1e-5)


def test_pattern_writes_no_second_separator():
    enc = InstructorEncoder("unused", revision="x", pattern="{instruction}: {input}")
    assert enc.render("t", "Represent the Ubuntu question for reranking: ", None) == [
        "",
        "Represent the Ubuntu question for reranking: t",
    ]
    assert enc.render("t", "What does the user want?", None) == ["", "What does the user want?: t"]
    assert enc.render("t", None, None) == ["", "t"]  # no instruction: the text alone


def test_pattern_needs_both_placeholders_and_excludes_instruction_format():
    with pytest.raises(ConfigError, match="needs both"):
        InstructorEncoder("unused", revision="x", pattern="{instruction}: ")
    with pytest.raises(ConfigError, match="both given"):
        InstructorEncoder(
            "unused", revision="x", pattern="{instruction}: {input}", instruction_format="{instruction}: "
        )
