"""The shared encoder: dedup, cache (hits, damage, atomic groups), sorting, NaN guard, templates."""

from __future__ import annotations

import numpy as np
import pytest

from bench.adapters.cache import EmbeddingCache
from bench.adapters.sentence_transformers import SentenceTransformerEncoder, template_string
from bench.core.errors import ConfigError, EncodingError
from cache_entries import entries, flip_byte
from toy_encoders import HashEncoder

INPUTS = [["q", "short"], ["q", "a much longer text here"], ["q", "short"], ["r", "short"], ["q", "mid text"]]


def test_dedup_and_second_call_is_all_cache_hits(tmp_path):
    enc = HashEncoder(cache_dir=tmp_path)
    first = enc.encode_inputs(INPUTS)
    assert enc.stats.requested == 5 and enc.stats.unique == 4 and enc.stats.encoded == 4
    np.testing.assert_array_equal(first[0], first[2])
    again = HashEncoder(cache_dir=tmp_path)  # a new run, same model fingerprint
    second = again.encode_inputs(INPUTS)
    assert again.stats.encoded == 0 and again.stats.cache_hits == 4 and again.groups == []
    np.testing.assert_array_equal(first, second)


def test_inputs_are_encoded_longest_first(tmp_path):
    enc = HashEncoder(cache_dir=tmp_path, batch_size=1)
    enc.encode_inputs([["", "a"], ["", "aaaa"], ["", "aa"], ["", "aaa"]])
    encoded = [text for group in enc.groups for _, text in group]
    assert encoded == ["aaaa", "aaa", "aa", "a"]


def test_blind_template_encodes_each_text_once_across_instructions(tmp_path):
    enc = HashEncoder(blind=True, cache_dir=tmp_path)
    enc.encode_inputs([enc.render("same text", f"instruction {k}", None) for k in range(30)])
    assert enc.stats.encoded == 1 and enc.stats.requested == 30


def test_cache_is_keyed_by_model_fingerprint(tmp_path):
    HashEncoder(cache_dir=tmp_path).encode_inputs(INPUTS)
    other = HashEncoder(cache_dir=tmp_path, revision="v2")
    other.encode_inputs(INPUTS)
    assert other.stats.cache_hits == 0
    dtype_change = HashEncoder(cache_dir=tmp_path, dtype="float16")
    dtype_change.encode_inputs(INPUTS)
    assert dtype_change.stats.cache_hits == 0


def test_damaged_entry_is_detected_and_recomputed(tmp_path, caplog):
    enc = HashEncoder(cache_dir=tmp_path)
    expected = enc.encode_inputs(INPUTS)
    enc.cache.close()
    (key, *_), *_ = entries(enc.cache.path)
    flip_byte(enc.cache.path, key)  # inside the block that holds the other three
    fresh = HashEncoder(cache_dir=tmp_path)
    got = fresh.encode_inputs(INPUTS)
    assert fresh.stats.encoded == 1 and fresh.stats.cache_hits == 3
    assert "damaged" in caplog.text
    np.testing.assert_array_equal(got, expected)


def test_unreadable_cache_file_is_moved_aside(tmp_path):
    enc = HashEncoder(cache_dir=tmp_path)
    cache = EmbeddingCache(tmp_path, enc.fingerprint)
    cache.close()
    cache.path.write_bytes(b"this is not a database" * 100)
    path = cache.path
    fresh = HashEncoder(cache_dir=tmp_path)
    fresh.encode_inputs(INPUTS)
    assert fresh.stats.encoded == 4 and path.with_suffix(".corrupt").exists()


def test_finished_groups_survive_a_crash(tmp_path):
    enc = HashEncoder(cache_dir=tmp_path, batch_size=1)  # one group = 8 inputs
    inputs = [["", f"text {k}"] for k in range(20)]
    original = enc._encode_group
    calls = []

    def crash_on_second_group(group, batch_size):
        calls.append(len(group))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original(group, batch_size)

    enc._encode_group = crash_on_second_group
    with pytest.raises(KeyboardInterrupt):
        enc.encode_inputs(inputs)
    rerun = HashEncoder(cache_dir=tmp_path, batch_size=1)
    rerun.encode_inputs(inputs)
    assert rerun.stats.cache_hits == 8 and rerun.stats.encoded == 12


def test_nan_output_is_an_error_naming_the_input(tmp_path):
    enc = HashEncoder(cache_dir=tmp_path, nan_for="poison")
    with pytest.raises(EncodingError, match=r"NaN or inf embeddings for 1 of 2 inputs \(first: .*poison"):
        enc.encode_inputs([["", "fine"], ["", "poison pill"]])
    assert EmbeddingCache(tmp_path, enc.fingerprint).count() == 0  # nothing bad was cached


def test_bad_options(tmp_path):
    with pytest.raises(ConfigError, match="dtype"):
        HashEncoder(cache_dir=tmp_path, dtype="float8")
    with pytest.raises(ConfigError, match="batch-size"):
        HashEncoder(cache_dir=tmp_path, batch_size=0)
    with pytest.raises(ConfigError, match=r"no '\{text\}' placeholder"):
        template_string("{instruction} only")


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("none", ["", "the text"]),
        ("prefix", ["Why? ", "the text"]),
        ("Instruct: {instruction}\nQuery: {text}", ["Instruct: Why?\nQuery: ", "the text"]),
        ("{text} ({instruction})", ["", "the text (Why?)"]),
    ],
)
def test_sentence_transformer_templates(template, expected, minilm_path, tmp_path):
    enc = SentenceTransformerEncoder(minilm_path, template=template, cache_dir=tmp_path)
    assert enc.render("the text", "Why?", None) == expected
    assert enc.render("the text", None, None) == ["", "the text"]
    assert enc.settings()["instruction_template_sha256"] != ""


@pytest.mark.slow
def test_sentence_transformer_matches_bare_encode(minilm_path, tmp_path):
    from sentence_transformers import SentenceTransformer

    texts = ["How do I reset my PIN?", "My card has not arrived.", "Where is my money?"]
    enc = SentenceTransformerEncoder(minilm_path, template="prefix", cache_dir=tmp_path)
    got = enc.encode_inputs([enc.render(t, "What does the customer need?", None) for t in texts])
    bare = SentenceTransformer(minilm_path, device="cpu").encode(texts, prompt="What does the customer need? ")
    np.testing.assert_allclose(got, bare, atol=1e-5)


def test_memo_serves_repeats_of_a_task_without_cache_and_is_bounded(monkeypatch):
    import bench.adapters.memo

    enc = HashEncoder(blind=True, use_cache=False)
    for k in range(3):  # one call per instruction, as the robustness task sends them
        enc.encode_inputs([enc.render(t, f"instruction {k}", None) for t in ("a b", "c d")], desc="Task")
    assert enc.stats.encoded == 2 and enc.stats.requested == 6 and enc.stats.unique == 2
    enc.encode_inputs([enc.render("a b", None, None)], desc="OtherTask")  # a new task starts a new memo
    assert enc.stats.encoded == 3
    monkeypatch.setattr(bench.adapters.memo, "MEMO_BYTES", 0)  # a full memo keeps nothing more, results unchanged
    small = HashEncoder(blind=True, use_cache=False)
    first = small.encode_inputs([["", "a b"]], desc="Task")
    again = small.encode_inputs([["", "a b"]], desc="Task")
    assert small.stats.encoded == 2
    np.testing.assert_array_equal(first, again)


def test_the_base_constructor_calls_no_family_hook(tmp_path):
    """A family may set what its hooks read after `super().__init__()`: the experiment and ModelMeta are built
    once its whole constructor has returned (docs/guides/add-a-model-family.md, "When the base constructor runs")."""

    class Late(HashEncoder):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.ignored, self.params = {"nan_for"}, 7

        def inert_options(self):
            return self.ignored

        def model_facts(self):
            return {"n_parameters": self.params}

    enc = Late(nan_for="x", cache_dir=tmp_path)
    assert "nan_for" not in enc.fingerprint and enc.mteb_model_meta.experiment_kwargs == {"family": "toy"}
    assert enc.mteb_model_meta.n_parameters == 7
    assert HashEncoder(nan_for="x", cache_dir=tmp_path).mteb_model_meta.experiment_kwargs["nan_for"] == "x"
