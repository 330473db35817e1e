"""The LM readouts keep one layer's states (`LayerTap`), never every layer's: their vectors are exactly
those read from `output_hidden_states=True` (the stack asked for all its hidden states, one kept), for
every pooling, architecture and layer. Tiny random models built from configs: a second or two."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import bench.adapters.generative
from bench.adapters.generative import GenerativeEncoder, LayerTap, find_layers
from bench.adapters.prompteol import PromptEOLEncoder

TEXTS = ["I am so happy my card finally arrived!", "Why was I charged twice?", "Hello", "the bank is closed today"]
INSTRUCTION = "How does the customer feel?"

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # 32-wide models: one thread is faster


@pytest.fixture(scope="module")
def tokenizer_path(minilm_path):
    return minilm_path  # a BERT word-piece tokenizer (30522 tokens; [PAD] 0, [CLS] 101, [SEP] 102)


def _save(model, tokenizer_path, out):
    from transformers import AutoTokenizer

    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(tokenizer_path).save_pretrained(out)
    return str(out)


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory, tokenizer_path):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=30522,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=3,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=512,
        pad_token_id=0,
        bos_token_id=101,
        eos_token_id=102,
    )
    return _save(LlamaForCausalLM(config), tokenizer_path, tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory, tokenizer_path):
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=3, num_attention_heads=2, intermediate_size=64
    )
    return _save(BertForMaskedLM(config), tokenizer_path, tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="module")
def tiny_t5(tmp_path_factory, tokenizer_path):
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(0)
    config = T5Config(
        vocab_size=30522,
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=3,
        num_decoder_layers=2,
        num_heads=2,
        pad_token_id=0,
        eos_token_id=102,
        decoder_start_token_id=0,
    )
    return _save(T5ForConditionalGeneration(config), tokenizer_path, tmp_path_factory.mktemp("tiny-t5"))


@pytest.fixture(scope="module", autouse=True)
def loaded_once():
    """Each tiny model and tokenizer is read from its folder once for the module, not twice a case: what is
    compared is the readout of one set of weights, with taps or with every hidden state (loading is not
    this module's subject; the spy's hooks are removed after each encode, so no case sees another's)."""
    import bench.adapters.prompteol

    memo: dict = {}

    def once(load):
        def loaded(path, **options):
            key = (load.__name__, path, *sorted((k, v) for k, v in options.items() if not callable(v)))
            if key not in memo:
                memo[key] = load(path, **options)
            return memo[key]

        return loaded

    with pytest.MonkeyPatch.context() as patch:
        for module in (bench.adapters.generative, bench.adapters.prompteol):
            patch.setattr(module, "load_lm", once(module.load_lm))
            patch.setattr(module, "load_tokenizer", once(module.load_tokenizer))
        yield


def _all_states_asked(model):
    """Counts forward calls of any module asked for every hidden state (a spy on the whole model); the spy's
    hooks, to remove once read."""
    calls = []
    hooks = [
        module.register_forward_pre_hook(
            lambda m, args, kwargs: calls.append(m) if kwargs.get("output_hidden_states") else None, with_kwargs=True
        )
        for module in model.modules()
    ]
    return calls, hooks


def _vectors(cls, path, monkeypatch, *, reference, **options):
    """Vectors of `cls(path, **options)`: with the one-layer taps, or (reference) with the stack asked for all
    its hidden states (`output_hidden_states=True`), as when no layer list is found."""
    with monkeypatch.context() as patch:
        if reference:
            patch.setattr(bench.adapters.generative, "find_layers", lambda stack: None)
        enc = cls(path, use_cache=False, batch_size=3, **options)
        enc.ensure_loaded()
        asked, hooks = _all_states_asked(enc.model)
        inputs = [enc.render(t, INSTRUCTION, None) for t in TEXTS]
        try:
            out = enc.encode_inputs(inputs)
        finally:
            for hook in hooks:
                hook.remove()
    assert bool(asked) == reference  # the taps never ask the model for every layer
    return out


CAUSAL = ["1st-gen", "avg-ppt", "avg-gen", "filtered-avg-gen", "last-gen", "avg-all"]


@pytest.mark.parametrize("layer", [-1, 0, 1, -2])
@pytest.mark.parametrize(
    ("arch", "pooling", "extra"),
    [
        *[("causal", p, {}) for p in CAUSAL],
        ("causal", "avg-gen", {"readout_formula": "paper"}),
        ("causal", "avg-gen", {"do_sample": True, "max_new_tokens": 4}),
        *[("masked", p, {}) for p in ("avg-gen", "avg-ppt", "avg-all")],
        *[("seq2seq", p, {}) for p in ("1st-gen", "avg-ppt", "avg-gen", "last-gen")],
    ],
)
def test_generative_readouts_equal_the_all_hidden_states_reference(arch, pooling, extra, layer, request, monkeypatch):
    path = request.getfixturevalue({"causal": "tiny_llama", "masked": "tiny_bert", "seq2seq": "tiny_t5"}[arch])
    options = {"pooling": pooling, "layer": layer, **extra}
    got = _vectors(GenerativeEncoder, path, monkeypatch, reference=False, **options)
    want = _vectors(GenerativeEncoder, path, monkeypatch, reference=True, **options)
    assert got.shape == want.shape and np.isfinite(got).all()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("layer", ["last", "proportional", 0, 1, -2])
def test_prompteol_equals_the_all_hidden_states_reference(tiny_llama, layer, monkeypatch):
    got = _vectors(PromptEOLEncoder, tiny_llama, monkeypatch, reference=False, layer=layer, prompts="metaeol")
    want = _vectors(PromptEOLEncoder, tiny_llama, monkeypatch, reference=True, layer=layer, prompts="metaeol")
    np.testing.assert_array_equal(got, want)


def test_taps_read_hugging_faces_hidden_state_indices(tiny_llama, tiny_bert, tiny_t5):
    """Index 0 is the embedding output, i the output of layer i - 1, the last the normed final state; a
    layer that does not exist is refused before the model runs."""
    from transformers import (
        AutoModelForCausalLM,
        AutoModelForMaskedLM,
        AutoModelForSeq2SeqLM,
    )

    from bench.core.errors import ConfigError

    ids = torch.tensor([[101, 2023, 2003, 1037, 3231, 102]])
    llama = AutoModelForCausalLM.from_pretrained(tiny_llama).eval()
    bert = AutoModelForMaskedLM.from_pretrained(tiny_bert).eval()
    t5 = AutoModelForSeq2SeqLM.from_pretrained(tiny_t5).eval()
    runs = [
        (
            llama.base_model,
            lambda: llama.base_model(input_ids=ids, output_hidden_states=True).hidden_states,
            lambda: llama(input_ids=ids),
        ),
        (
            bert.base_model,
            lambda: bert.base_model(input_ids=ids, output_hidden_states=True).hidden_states,
            lambda: bert(input_ids=ids),
        ),
        (
            t5.get_decoder(),
            lambda: t5(input_ids=ids, decoder_input_ids=ids[:, :2], output_hidden_states=True).decoder_hidden_states,
            lambda: t5(input_ids=ids, decoder_input_ids=ids[:, :2]),
        ),
    ]
    with torch.no_grad():
        for stack, reference, run in runs:
            want = reference()
            assert len(find_layers(stack)) + 1 == len(want)
            for index in range(-len(want), len(want)):
                tap = LayerTap(stack, lambda n, i=index: i % n)
                with tap.capture() as states:
                    run()
                assert len(states) == 1
                torch.testing.assert_close(states[0], want[index], rtol=0, atol=0)
            with pytest.raises(ConfigError, match="does not exist"):
                GenerativeEncoder("unused", revision="x", layer=len(want))._tap(stack)
