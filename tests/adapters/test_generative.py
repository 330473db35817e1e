"""InBedder-style readouts checked against direct transformers forward passes on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bench.adapters.generative import PATTERNS, GenerativeEncoder
from bench.core.errors import ConfigError
from conftest import GGUF_PROBE

TEXTS = ["I am so happy my card finally arrived!", "Why was I charged twice?", "Hello"]
INSTRUCTION = "How does the customer feel?"
ATOL = 2e-4  # a left-padded batch differs from a lone input by float rounding only


@pytest.fixture(scope="module")
def smol(smollm2_path):
    """One loaded SmolLM2 shared by the encoders of this module (they differ in readout only)."""
    enc = GenerativeEncoder(smollm2_path, use_cache=False)
    enc.ensure_loaded()
    return enc


def _like(base, **options):
    enc = GenerativeEncoder(base.model_path, use_cache=False, **options)
    enc.model, enc.tokenizer, enc.architecture, enc._loaded = base.model, base.tokenizer, "causal", True
    return enc


def _states(model, ids, layer=-1):
    with torch.no_grad():
        return model(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states[layer][0]


def _greedy(model, tokenizer, prompt, n):
    """Greedy continuation by repeated full forward passes (no KV cache, no generate)."""
    ids = tokenizer(prompt)["input_ids"]
    gen = []
    for _ in range(n):
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids + gen])).logits[0, -1]
        gen.append(int(logits.argmax()))
        if gen[-1] == tokenizer.eos_token_id:
            break
    return ids, gen


def _reference_states(smol, prompt, n):
    """(states of prompt + greedy answer, prompt length, answer ids, the generated states InBedder's code
    keeps): the state of generated token j (position t+j) is kept when token j+1 is not special."""
    ids, gen = _greedy(smol.model, smol.tokenizer, prompt, n)
    states = _states(smol.model, ids + gen)
    t, special = len(ids), set(smol.tokenizer.all_special_ids)
    kept = [states[t + j] for j in range(len(gen) - 1) if gen[j + 1] not in special] or [states[t]]
    return states, t, gen, kept


def test_qa_pattern_is_inbedders():
    enc = GenerativeEncoder("unused", use_cache=False, revision="x")
    assert enc.render("the text", "Why?", None) == "### Input:\nthe text\n\n### Instruction:\nWhy?\n\n### Response:"
    assert PATTERNS["llama2-chat"].startswith("[INST] Your task is to give an answer")


@pytest.mark.slow
def test_first_gen_and_avg_ppt_match_a_direct_forward(smol):
    prompts = [smol.render(t, INSTRUCTION, None) for t in TEXTS]
    first = smol.encode_inputs(prompts)
    ppt = _like(smol, pooling="avg-ppt").encode_inputs(prompts)
    mid = _like(smol, pooling="1st-gen", layer=10).encode_inputs(prompts)
    for i, p in enumerate(prompts):
        ids = smol.tokenizer(p)["input_ids"]
        states = _states(smol.model, ids)
        np.testing.assert_allclose(first[i], states[-1].numpy(), atol=ATOL)
        np.testing.assert_allclose(ppt[i], states[:-1].mean(0).numpy(), atol=ATOL)
        np.testing.assert_allclose(mid[i], _states(smol.model, ids, layer=10)[-1].numpy(), atol=ATOL)


@pytest.mark.slow
def test_generation_readouts_match_a_manual_greedy_decode(smol):
    n = 6
    prompts = [smol.render(t, INSTRUCTION, None) for t in TEXTS]
    got = {
        p: _like(smol, pooling=p, max_new_tokens=n).encode_inputs(prompts) for p in ("avg-gen", "last-gen", "avg-all")
    }
    for i, prompt in enumerate(prompts):
        states, t, _, kept = _reference_states(smol, prompt, n)
        np.testing.assert_allclose(got["avg-gen"][i], torch.stack([states[t - 1], *kept]).mean(0).numpy(), atol=ATOL)
        np.testing.assert_allclose(got["last-gen"][i], kept[-1].numpy(), atol=ATOL)
        np.testing.assert_allclose(
            got["avg-all"][i], torch.cat([states[:t], torch.stack(kept)]).mean(0).numpy(), atol=ATOL
        )


@pytest.mark.slow
def test_paper_formula_adds_the_last_generated_tokens_state(smol):
    """readout_formula=paper: N_g + 1 states, the last one from one extra forward step (InBedder §4.1)."""
    n = 5
    prompts = [smol.render(t, INSTRUCTION, None) for t in TEXTS]
    code = _like(smol, pooling="avg-gen", max_new_tokens=n)
    paper = _like(smol, pooling="avg-gen", max_new_tokens=n, readout_formula="paper")
    got, got_code = paper.encode_inputs(prompts), code.encode_inputs(prompts)
    special = set(smol.tokenizer.all_special_ids)
    for i, prompt in enumerate(prompts):
        states, t, gen, kept = _reference_states(smol, prompt, n)
        if len(gen) == n and gen[-1] not in special:  # the extra state: the last generated token's own
            kept.append(states[t + n - 1])
        np.testing.assert_allclose(got[i], torch.stack([states[t - 1], *kept]).mean(0).numpy(), atol=ATOL)
    assert not np.allclose(got, got_code)  # the two formulas differ
    assert paper.fingerprint != code.fingerprint and paper.experiment()["readout_formula"] == "paper"
    assert "readout_formula" not in _like(smol, pooling="1st-gen", readout_formula="paper").vector_options()


@pytest.mark.slow
def test_a_gguf_file_loads_directly(smollm2_gguf, tmp_path):
    """`inbedder:FILE.gguf` loads through transformers' GGUF support, with no conversion by hand (the
    session's one load: `smollm2_gguf` encoded GGUF_PROBE as its first input)."""
    from bench.adapters.registry import load_model

    gguf, enc, vec = smollm2_gguf
    assert enc.name == "local/SmolLM2-135M-Instruct.Q4_1" and enc.revision.startswith("local-")
    assert vec.shape == (1, 576) and np.isfinite(vec).all()
    meta = enc.mteb_model_meta  # a GGUF file has no registry entry: size from its header, dimension from the vectors
    assert meta.embed_dim == 576 and 130e6 < meta.n_parameters < 140e6
    again = load_model(f"inbedder:{gguf}", cache_dir=enc._cache_root)  # known before loading: the header's facts
    fresh = again.mteb_model_meta
    assert fresh.n_parameters == sum(p.numel() for p in enc.model.parameters())
    assert (fresh.max_tokens, fresh.license, fresh.languages) == (8192, "apache-2.0", ["eng-Latn"])
    assert fresh.embed_dim is None  # the hidden size is not the vector size of a re-encoding readout
    again.encode_inputs([again.render(*GGUF_PROBE, None)])  # all cached
    assert not again._loaded and again.mteb_model_meta.embed_dim == 576
    assert again.identity_check == {
        "gguf": {"file_type": "Q4_1", "quantization_version": 2, "tensor_types": {"F32": 61, "Q4_1": 210, "Q8_0": 1}}
    }
    assert load_model(f"prompteol:{gguf}", cache_dir=tmp_path).name == enc.name


@pytest.mark.slow
def test_a_re_encoding_gguf_readout_files_the_re_encoders_dimension(smollm2_gguf, tmp_path, minilm_path, monkeypatch):
    """The GGUF's hidden size (576) is not the vector size when the readout re-encodes with MiniLM (384):
    the real load path runs, with the GGUF's weights and tokenizer taken from the session's one load."""
    import bench.adapters.generative as generative
    from bench.adapters.registry import load_model

    gguf, loaded, _ = smollm2_gguf
    monkeypatch.setattr(generative, "load_lm", lambda *a, **k: loaded.model)
    monkeypatch.setattr(generative, "load_tokenizer", lambda *a, **k: loaded.tokenizer)
    enc = load_model(
        f"inbedder:{gguf}", pooling="re-encode", max_new_tokens=2, reencoder=minilm_path, cache_dir=tmp_path
    )
    assert enc.mteb_model_meta.embed_dim is None and enc.mteb_model_meta.max_tokens == 8192
    vec = enc.encode_inputs([enc.render(*GGUF_PROBE, None)])
    assert vec.shape == (1, 384) and enc.mteb_model_meta.embed_dim == 384
    assert enc.identity_check["gguf"]["file_type"] == "Q4_1"


@pytest.mark.slow
def test_one_new_token_avg_gen_is_first_gen(smol):
    prompts = [smol.render(t, INSTRUCTION, None) for t in TEXTS]
    np.testing.assert_allclose(
        _like(smol, pooling="avg-gen", max_new_tokens=1).encode_inputs(prompts), smol.encode_inputs(prompts), atol=ATOL
    )


@pytest.mark.slow
def test_sampling_is_seeded_per_input_not_per_batch(smol):
    enc = _like(smol, pooling="avg-gen", do_sample=True, temperature=0.8, top_p=0.9, max_new_tokens=8, seed=7)
    prompts = [enc.render(t, INSTRUCTION, None) for t in TEXTS]
    batch = enc.generations(prompts)
    assert batch == [enc.generations([p])[0] for p in prompts]  # alone or batched: same draw
    assert batch == enc.generations(list(reversed(prompts)))[::-1]
    other = [enc.generations(prompts, sample=k) for k in range(1, 4)]
    assert any(o != batch for o in other)  # a different sample number draws differently
    assert enc.settings()["generation"] == {
        "max_new_tokens": 8,
        "do_sample": True,
        "temperature": 0.8,
        "top_p": 0.9,
        "seed": 7,
        "num_samples": 1,
    }
    assert "max_new_tokens" not in smol.vector_options()  # 1st-gen does not depend on generation
    assert "max_new_tokens" in enc.vector_options() and "max_new_tokens" in enc.fingerprint


@pytest.mark.slow
def test_reencode_embeds_the_answers_with_the_sentence_transformer(smol, minilm_path):
    from sentence_transformers import SentenceTransformer

    enc = _like(smol, pooling="re-encode", max_new_tokens=8, reencoder=minilm_path)
    enc._reencoder = SentenceTransformer(minilm_path, device="cpu")
    prompts = [enc.render(t, INSTRUCTION, None) for t in TEXTS]
    got = enc.encode_inputs(prompts)
    answers = enc.generations(prompts)
    np.testing.assert_allclose(got, enc._reencoder.encode(answers), atol=1e-5)
    sampled = _like(smol, pooling="re-encode", max_new_tokens=8, do_sample=True, num_samples=3, reencoder=minilm_path)
    sampled._reencoder = enc._reencoder
    mean = np.mean([enc._reencoder.encode(sampled.generations(prompts, sample=k)) for k in range(3)], axis=0)
    np.testing.assert_allclose(sampled.encode_inputs(prompts), mean, atol=1e-5)


@pytest.mark.slow
def test_filter_drops_states_predicting_instruction_words_and_stopwords(smol):
    enc = _like(smol, pooling="filtered-avg-gen", max_new_tokens=6)
    x = enc.render(TEXTS[0], INSTRUCTION, None)
    assert x[1] == INSTRUCTION and enc.filter_words == ["Based on ", "Sure! "] and enc.filter_stopwords
    tok = smol.tokenizer
    customer = tok.encode(" customer")[0]  # in the instruction
    the, happy = tok.encode("the")[0], tok.encode(" happy")[0]  # a stopword; neither
    assert customer in tok.encode(INSTRUCTION) and happy not in tok.encode(INSTRUCTION)
    dropped = enc._dropped(torch.tensor([[customer, the, happy, tok.eos_token_id]]), [x])
    assert dropped.tolist() == [[True, True, False, True]]
    plain = _like(smol, pooling="avg-gen")
    assert plain._dropped(
        torch.tensor([[customer, the, happy, tok.eos_token_id]]), [plain.render("t", INSTRUCTION, None)]
    ).tolist() == [[False, False, False, True]]


def test_bad_options():
    for bad in ({"pooling": "mean"}, {"pattern": "no slots"}, {"architecture": "rnn"}, {"temperature": 0}):
        with pytest.raises(ConfigError):
            GenerativeEncoder("unused", revision="x", **bad)
    with pytest.raises(ConfigError, match="does not exist for masked"):
        GenerativeEncoder("unused", revision="x", architecture="masked", pooling="1st-gen")


# ---------------------------------------------------------------------- masked and encoder-decoder LMs
@pytest.fixture(scope="module")
def tiny_bert_mlm(tmp_path_factory, minilm_path):
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    out = tmp_path_factory.mktemp("tiny-bert-mlm")
    config = BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64
    )
    BertForMaskedLM(config).save_pretrained(out)
    AutoTokenizer.from_pretrained(minilm_path).save_pretrained(out)
    return str(out)


@pytest.fixture(scope="module")
def tiny_t5(tmp_path_factory, minilm_path):
    from transformers import AutoTokenizer, T5Config, T5ForConditionalGeneration

    torch.manual_seed(0)
    out = tmp_path_factory.mktemp("tiny-t5")
    tok = AutoTokenizer.from_pretrained(minilm_path)
    config = T5Config(
        vocab_size=30522,
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_heads=2,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.sep_token_id,
        decoder_start_token_id=tok.pad_token_id,
    )
    T5ForConditionalGeneration(config).save_pretrained(out)
    tok.save_pretrained(out)
    return str(out)


def test_masked_lm_reads_the_mask_states(tiny_bert_mlm):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    gen = GenerativeEncoder(tiny_bert_mlm, pooling="avg-gen", use_cache=False)
    prompts = [gen.render(t, INSTRUCTION, None) for t in TEXTS]
    got = gen.encode_inputs(prompts)
    ppt = GenerativeEncoder(tiny_bert_mlm, pooling="avg-ppt", use_cache=False).encode_inputs(prompts)
    assert gen.architecture == "masked"
    tok, model = AutoTokenizer.from_pretrained(tiny_bert_mlm), AutoModelForMaskedLM.from_pretrained(tiny_bert_mlm)
    for i, p in enumerate(prompts):
        ids = tok(p + "[MASK]" * 3)["input_ids"]
        states = _states(model, ids)
        assert ids[-4:-1] == [tok.mask_token_id] * 3 and ids[-1] == tok.sep_token_id
        np.testing.assert_allclose(got[i], states[-4:-1].mean(0).numpy(), atol=1e-5)
        np.testing.assert_allclose(ppt[i], states[:-4].mean(0).numpy(), atol=1e-5)  # [CLS] + prompt


def test_encoder_decoder_readouts(tiny_t5):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    first = GenerativeEncoder(tiny_t5, pooling="1st-gen", use_cache=False)
    prompts = [first.render(t, INSTRUCTION, None) for t in TEXTS]
    got = first.encode_inputs(prompts)
    ppt = GenerativeEncoder(tiny_t5, pooling="avg-ppt", use_cache=False).encode_inputs(prompts)
    avg = GenerativeEncoder(tiny_t5, pooling="avg-gen", max_new_tokens=4, use_cache=False).encode_inputs(prompts)
    assert first.architecture == "seq2seq" and np.isfinite(avg).all()
    tok, model = AutoTokenizer.from_pretrained(tiny_t5), AutoModelForSeq2SeqLM.from_pretrained(tiny_t5)
    for i, p in enumerate(prompts):
        ids = torch.tensor([tok(p)["input_ids"]])
        with torch.no_grad():
            out = model(input_ids=ids, decoder_input_ids=torch.tensor([[0]]), output_hidden_states=True)
        np.testing.assert_allclose(got[i], out.decoder_hidden_states[-1][0, 0].numpy(), atol=1e-5)
        np.testing.assert_allclose(ppt[i], out.encoder_hidden_states[-1][0].mean(0).numpy(), atol=1e-5)
    with pytest.raises(ConfigError, match="avg-all"):
        GenerativeEncoder(tiny_t5, pooling="avg-all", use_cache=False).encode_inputs(prompts)


def test_registry_specs_reach_the_constructors():
    from bench.adapters.instructor import InstructorEncoder
    from bench.adapters.prompteol import METAEOL, PROMPTEOL
    from bench.adapters.registry import load_model

    lm = load_model(
        "inbedder:org/lm", pooling="avg-gen", max_new_tokens="5", do_sample="true", filter_words="Sure! |Well"
    )
    assert isinstance(lm, GenerativeEncoder) and lm.generation["max_new_tokens"] == 5 and lm.generation["do_sample"]
    assert lm.filter_words == ["Sure! ", "Well"] and lm.mteb_model_meta.experiment_kwargs["pooling"] == "avg-gen"
    assert load_model("generative:org/lm").pooling == "1st-gen"
    assert load_model("metaeol:org/lm").prompts == METAEOL
    assert load_model("prompteol:org/lm", layer="proportional").prompts == PROMPTEOL
    assert load_model("prompteol:org/lm", layer="-3").layer == -3
    assert isinstance(load_model("instructor:org/enc"), InstructorEncoder)
