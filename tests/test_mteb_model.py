"""The `mteb` family: MTEB's own implementation of a model, wrapped (cache, dedup) but never changed.

The instruction-tuned registry models are loaded with their real MTEB loaders and loader options,
but with all-MiniLM-L6-v2's weights standing in for theirs (no download): what is compared is what
MTEB's implementation sends the network (prompt + text, as sentence-transformers resolves it) and the
vectors, with and without the harness around it.
"""

from __future__ import annotations

import json
from pathlib import Path

import mteb
import numpy as np
import pytest
import sentence_transformers
from mteb.types import PromptType
from sentence_transformers import SentenceTransformer

from adapters.mteb_model import MTEBModel
from adapters.registry import MODELS, load_model
from tasks.mteb_compat import create_query_dataloader

MINILM = MODELS["all-MiniLM-L6-v2"].path()
MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"
# Instruction-tuned models of MTEB's registry, of every instruction convention its loaders know:
# "Instruct: ...\nQuery: " templates, template functions, instructions on documents too, prompts
# excluded from pooling (GritLM), EOS tokens, and ST prompts by query/document and task type.
INSTRUCTION_MODELS = (
    "intfloat/e5-mistral-7b-instruct",
    "intfloat/multilingual-e5-large-instruct",
    "Qwen/Qwen3-Embedding-0.6B",
    "Alibaba-NLP/gte-Qwen2-7B-instruct",
    "GritLM/GritLM-7B",
    "Salesforce/SFR-Embedding-Mistral",
    "Linq-AI-Research/Linq-Embed-Mistral",
    "ai-sage/Giga-Embeddings-instruct-3B-0826",
    "BeastyZ/e5-R-mistral-7b",
    "nvidia/NV-Embed-v2",
    "intfloat/e5-large-v2",
    "BAAI/bge-large-en-v1.5",
)
TEXTS = ["The cat sat on the mat.", "A dog barks.", "The cat sat on the mat.", "Stocks fell sharply today."]
INSTRUCTIONS = ["Represent the emotion", "Represent the intent", "Represent the emotion", "Represent the topic"]


class _Seen:
    texts: list[str] = []


class StandIn(SentenceTransformer):
    """Any registry model's SentenceTransformer, with MiniLM's weights; records the text reaching it."""

    def __init__(self, *args, **kwargs):
        super().__init__(MINILM, device="cpu")

    def preprocess(self, inputs, prompt=None, **kwargs):
        _Seen.texts.extend((prompt or "") + x for x in inputs)
        return super().preprocess(inputs, prompt=prompt, **kwargs)


@pytest.fixture
def stand_in(monkeypatch):
    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", StandIn)
    _Seen.texts = []
    return _Seen


def _calls():
    """(task metadata, prompt type, dataloader) of three encode calls: instructed queries, documents,
    and a plain task (MTEB's STSBenchmark)."""
    import tasks

    intent = tasks.TASKS["DemoIntentEmotion"]().metadata
    sts = mteb.get_task("STSBenchmark").metadata
    queries = create_query_dataloader(TEXTS, INSTRUCTIONS, task_metadata=intent, batch_size=2)
    from datasets import Dataset
    from mteb._create_dataloaders import create_dataloader

    plain = lambda meta: create_dataloader(Dataset.from_dict({"text": TEXTS}), task_metadata=meta,  # noqa: E731
                                           input_column="text", batch_size=2)
    return [(intent, PromptType.query, queries), (intent, PromptType.document, plain(intent)), (sts, None, plain(sts))]


def _direct(name: str, seen) -> list[tuple[list[str], np.ndarray]]:
    meta = mteb.get_model_meta(name)
    impl = meta.loader(meta.name, revision=meta.revision, **meta.loader_kwargs, device="cpu")
    out = []
    for task_meta, prompt_type, loader in _calls():
        seen.texts = []
        emb = np.asarray(impl.encode(loader, task_metadata=task_meta, hf_split="test", hf_subset="default",
                                     prompt_type=prompt_type, batch_size=2, show_progress_bar=False), dtype=np.float32)
        out.append((list(seen.texts), emb))
    return out


def _wrapped(name: str, seen, tmp_path: Path) -> list[tuple[list[str], np.ndarray]]:
    model = load_model(f"mteb:{name}", cache_dir=str(tmp_path / "cache"), device="cpu")
    assert isinstance(model, MTEBModel)
    out = []
    for task_meta, prompt_type, loader in _calls():
        seen.texts = []
        emb = np.asarray(model.encode(loader, task_metadata=task_meta, hf_split="test", hf_subset="default",
                                      prompt_type=prompt_type, batch_size=2, show_progress_bar=False))
        out.append((list(seen.texts), emb))
    return out


@pytest.mark.parametrize("name", INSTRUCTION_MODELS)
def test_text_reaching_the_model_is_what_mtebs_implementation_sends(name, stand_in, tmp_path):
    assert mteb.get_model_meta(name).use_instructions, name
    direct = _direct(name, stand_in)
    wrapped = _wrapped(name, stand_in, tmp_path)
    for (texts_d, emb_d), (texts_w, emb_w) in zip(direct, wrapped, strict=True):
        assert set(texts_w) <= set(texts_d)  # nothing reaches the network that MTEB would not send
        np.testing.assert_allclose(emb_w, emb_d, atol=1e-5)
    # Everything MTEB sends reaches it, each distinct text once (a repeat is served by the cache).
    sent_d = [t for texts, _ in direct for t in texts]
    sent_w = [t for texts, _ in wrapped for t in texts]
    assert sorted(sent_w) == sorted(set(sent_d))
    # An instruction model must have put the instruction somewhere in the instructed queries.
    queries = direct[0][0]
    if name not in ("intfloat/e5-large-v2", "BAAI/bge-large-en-v1.5"):
        assert any("Represent the emotion" in t for t in queries), queries


def test_listed_format_is_what_the_model_receives(stand_in, tmp_path):
    from adapters.mteb_zoo import instruction_models

    rows = {r["model"]: r for r in instruction_models()}
    e5 = rows["intfloat/e5-mistral-7b-instruct"]
    assert e5["query"] == "Instruct: {instruction}\nQuery: {text}"
    assert e5["document"] == "{text}"
    # MTEB's e5 implementation gives a query the task's instruction in that format.
    intent = _calls()[0][0]
    model = load_model("mteb:intfloat/e5-mistral-7b-instruct", cache_dir=str(tmp_path / "c"), device="cpu")
    loader = create_query_dataloader(["hello"], ["ignored by e5"], task_metadata=intent, batch_size=1)
    stand_in.texts = []
    model.encode(loader, task_metadata=intent, hf_split="test", hf_subset="default", prompt_type=PromptType.query)
    instruction = model.impl.get_task_instruction(intent, PromptType.query)
    assert stand_in.texts == [e5["query"].replace("Instruct: {instruction}\nQuery: ", instruction)
                              .replace("{text}", "hello ignored by e5")]
    assert len(rows) >= 10


def test_cached_run_encodes_nothing_and_gives_the_same_vectors(tmp_path):
    intent = _calls()[0][0]

    def run() -> tuple[np.ndarray, MTEBModel]:
        model = load_model("all-MiniLM-L6-v2", cache_dir=str(tmp_path / "cache"), device="cpu")
        loader = create_query_dataloader(TEXTS, INSTRUCTIONS, task_metadata=intent, batch_size=2)
        return np.asarray(model.encode(loader, task_metadata=intent, hf_split="test", hf_subset="default",
                                       prompt_type=PromptType.query)), model

    first, m1 = run()
    second, m2 = run()
    assert m1.stats.encoded == 3 and m2.stats.encoded == 0 and m2.stats.cache_hits == 3
    np.testing.assert_array_equal(first, second)
    # MTEB's own wrapper on the same weights gives the same vectors.
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    ref = SentenceTransformerEncoderWrapper(SentenceTransformer(MINILM, device="cpu"))
    loader = create_query_dataloader(TEXTS, INSTRUCTIONS, task_metadata=intent, batch_size=2)
    expected = ref.encode(loader, task_metadata=intent, hf_split="test", hf_subset="default", prompt_type=PromptType.query)
    np.testing.assert_allclose(first, expected, atol=1e-5)


def test_packaged_minilm_is_mtebs_model_at_mtebs_key(tmp_path):
    model = load_model("all-MiniLM-L6-v2", cache_dir=str(tmp_path / "cache"))
    meta = mteb.get_model_meta(MINILM_ID)
    assert model.family == "mteb"
    assert (model.name, model.revision) == (meta.name, meta.revision)
    assert model.mteb_model_meta.experiment_kwargs is None
    assert model.mteb_model_meta.to_dict() == meta.to_dict()  # MTEB's fields, none filled over
    model.ensure_loaded()  # offline, through the hub-cache layout of the packaged files
    assert type(model.impl).__name__ == "SentenceTransformerEncoderWrapper"


@pytest.mark.parametrize(("options", "family", "experiment"), [
    ({}, "mteb", None),
    ({"template": "mteb"}, "mteb", None),
    ({"template": "prefix"}, "sentence-transformers", {"template": "prefix"}),
    ({"template": "none"}, "sentence-transformers", {"template": "none"}),
    ({"max_seq_length": 128}, "sentence-transformers", {"template": "prefix", "max_seq_length": 128}),
    ({"dtype": "bfloat16"}, "mteb", {"dtype": "bfloat16", "device_kind": "cpu"}),
])
def test_only_mtebs_computation_is_mtebs_key(options, family, experiment, tmp_path):
    model = load_model("all-MiniLM-L6-v2", cache_dir=str(tmp_path / "c"), **options)
    assert model.family == family
    assert model.mteb_model_meta.experiment_kwargs == experiment
    assert model.mteb_model_meta.name == MINILM_ID


def test_st_spec_with_template_mteb_is_mtebs_implementation(tmp_path):
    assert load_model(f"st:{MINILM}", template="mteb", cache_dir=str(tmp_path / "c")).family == "mteb"
    assert load_model(f"st:{MINILM}", cache_dir=str(tmp_path / "c")).mteb_model_meta.experiment_kwargs == {
        "template": "prefix"}


def run_cli(*args: str) -> None:
    from bench.cli import main

    assert main(["-q", *args]) == 0


def test_stsbenchmark_default_run_reproduces_mtebs_published_figure(tmp_path, raw_dir):
    """MTEB's published STSBenchmark for all-MiniLM-L6-v2 is 0.8203247 (embeddings-benchmark/results,
    results/sentence-transformers__all-MiniLM-L6-v2/8b3219a.../STSBenchmark.json)."""
    data = tmp_path / "data"
    run_cli("build-data", "sts-senteval", "--source-dir", str(raw_dir), "--out", str(data))
    out = tmp_path / "out"
    run_cli("run", "-t", "STSBenchmark", "--data-dir", str(data), "--output-dir", str(out))
    # MTEB's key, in the results folder MTEB's repository is not sent (local data: a local-... revision)
    assert not (out / "results").exists()
    folder = (out / "instruct-bench" / "results" / "sentence-transformers__all-MiniLM-L6-v2"
              / "8b3219a92973c328a8e22fadcfa821b5dc75636a")
    result = json.loads((folder / "STSBenchmark.json").read_text())
    assert result["scores"]["test"][0]["main_score"] == pytest.approx(0.8203247283076371, abs=1e-4)
    record = json.loads((folder / "run_records" / "STSBenchmark.json").read_text())
    assert record["model"]["family"] == "mteb" and record["model"]["experiment"] == {}
    run_cli("run", "-t", "STSBenchmark", "--data-dir", str(data), "--output-dir", str(out), "--template", "prefix")
    prefixed = json.loads((folder / "experiments" / "template_prefix" / "STSBenchmark.json").read_text())
    assert prefixed["scores"]["test"][0]["main_score"] != result["scores"]["test"][0]["main_score"]
    assert json.loads((folder / "STSBenchmark.json").read_text()) == result  # MTEB's key untouched
