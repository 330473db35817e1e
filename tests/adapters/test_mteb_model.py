"""The `mteb` family: MTEB's own implementation of a model, wrapped (cache, dedup) but never changed.

The instruction-tuned registry models are loaded with their real MTEB loaders and loader options,
but with all-MiniLM-L6-v2's weights standing in for theirs (no download): what is compared is what
MTEB's implementation sends the network (prompt + text, as sentence-transformers resolves it) and the
vectors, with and without the harness around it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import ClassVar

import mteb
import numpy as np
import pytest
import sentence_transformers
from mteb.types import PromptType
from sentence_transformers import SentenceTransformer

from bench.adapters.mteb_model import MTEBModel
from bench.adapters.registry import MODELS, load_model
from bench.tasks.mteb_compat import create_query_dataloader

pytestmark = pytest.mark.slow  # MTEB's implementations of registry models, run on MiniLM's weights

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
    from bench import tasks

    intent = tasks.TASKS["DemoIntentEmotion"]().metadata
    sts = mteb.get_task("STSBenchmark").metadata
    queries = create_query_dataloader(TEXTS, INSTRUCTIONS, task_metadata=intent, batch_size=2)
    from datasets import Dataset
    from mteb._create_dataloaders import create_dataloader

    def plain(meta):
        return create_dataloader(
            Dataset.from_dict({"text": TEXTS}),
            task_metadata=meta,
            input_column="text",
            batch_size=2,
        )

    return [(intent, PromptType.query, queries), (intent, PromptType.document, plain(intent)), (sts, None, plain(sts))]


def _direct(name: str, seen) -> list[tuple[list[str], np.ndarray]]:
    meta = mteb.get_model_meta(name)
    impl = meta.loader(meta.name, revision=meta.revision, **meta.loader_kwargs, device="cpu")
    out = []
    for task_meta, prompt_type, loader in _calls():
        seen.texts = []
        emb = np.asarray(
            impl.encode(
                loader,
                task_metadata=task_meta,
                hf_split="test",
                hf_subset="default",
                prompt_type=prompt_type,
                batch_size=2,
                show_progress_bar=False,
            ),
            dtype=np.float32,
        )
        out.append((list(seen.texts), emb))
    return out


def _wrapped(name: str, seen, tmp_path: Path) -> list[tuple[list[str], np.ndarray]]:
    model = load_model(f"mteb:{name}", cache_dir=str(tmp_path / "cache"), device="cpu")
    assert isinstance(model, MTEBModel)
    out = []
    for task_meta, prompt_type, loader in _calls():
        seen.texts = []
        emb = np.asarray(
            model.encode(
                loader,
                task_metadata=task_meta,
                hf_split="test",
                hf_subset="default",
                prompt_type=prompt_type,
                batch_size=2,
                show_progress_bar=False,
            )
        )
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
    from bench.adapters.mteb_zoo import instruction_models

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
    assert stand_in.texts == [
        e5["query"].replace("Instruct: {instruction}\nQuery: ", instruction).replace("{text}", "hello ignored by e5")
    ]
    assert len(rows) >= 10


def test_cached_run_encodes_nothing_and_gives_the_same_vectors(tmp_path):
    intent = _calls()[0][0]

    def run() -> tuple[np.ndarray, MTEBModel]:
        model = load_model("all-MiniLM-L6-v2", cache_dir=str(tmp_path / "cache"), device="cpu")
        loader = create_query_dataloader(TEXTS, INSTRUCTIONS, task_metadata=intent, batch_size=2)
        return np.asarray(
            model.encode(
                loader, task_metadata=intent, hf_split="test", hf_subset="default", prompt_type=PromptType.query
            )
        ), model

    first, m1 = run()
    second, m2 = run()
    assert m1.stats.encoded == 3 and m2.stats.encoded == 0 and m2.stats.cache_hits == 3
    np.testing.assert_array_equal(first, second)
    # MTEB's own wrapper on the same weights gives the same vectors.
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    ref = SentenceTransformerEncoderWrapper(SentenceTransformer(MINILM, device="cpu"))
    loader = create_query_dataloader(TEXTS, INSTRUCTIONS, task_metadata=intent, batch_size=2)
    expected = ref.encode(
        loader, task_metadata=intent, hf_split="test", hf_subset="default", prompt_type=PromptType.query
    )
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


@pytest.mark.parametrize(
    ("options", "family", "experiment"),
    [
        ({}, "mteb", None),
        ({"template": "mteb"}, "mteb", None),
        ({"template": "prefix"}, "sentence-transformers", {"template": "prefix"}),
        ({"template": "none"}, "sentence-transformers", {"template": "none"}),
        ({"max_seq_length": 128}, "sentence-transformers", {"template": "prefix", "max_seq_length": 128}),
        ({"dtype": "bfloat16"}, "mteb", {"dtype": "bfloat16", "device_kind": "cpu"}),
    ],
)
def test_only_mtebs_computation_is_mtebs_key(options, family, experiment, tmp_path):
    model = load_model("all-MiniLM-L6-v2", cache_dir=str(tmp_path / "c"), **options)
    assert model.family == family
    assert model.mteb_model_meta.experiment_kwargs == experiment
    assert model.mteb_model_meta.name == MINILM_ID


def test_st_spec_with_template_mteb_is_mtebs_implementation(tmp_path):
    assert load_model(f"st:{MINILM}", template="mteb", cache_dir=str(tmp_path / "c")).family == "mteb"
    assert load_model(f"st:{MINILM}", cache_dir=str(tmp_path / "c")).mteb_model_meta.experiment_kwargs == {
        "template": "prefix"
    }


def run_cli(*args: str) -> None:
    from bench.cli.main import main

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
    folder = (
        out
        / "instruct-bench"
        / "results"
        / "sentence-transformers__all-MiniLM-L6-v2"
        / "8b3219a92973c328a8e22fadcfa821b5dc75636a"
    )
    result = json.loads((folder / "STSBenchmark.json").read_text())
    assert result["scores"]["test"][0]["main_score"] == pytest.approx(0.8203247283076371, abs=1e-4)
    record = json.loads((folder / "run_records" / "STSBenchmark.json").read_text())
    assert record["model"]["family"] == "mteb" and record["model"]["experiment"] == {}
    run_cli("run", "-t", "STSBenchmark", "--data-dir", str(data), "--output-dir", str(out), "--template", "prefix")
    prefixed = json.loads((folder / "experiments" / "template_prefix" / "STSBenchmark.json").read_text())
    assert prefixed["scores"]["test"][0]["main_score"] != result["scores"]["test"][0]["main_score"]
    assert json.loads((folder / "STSBenchmark.json").read_text()) == result  # MTEB's key untouched


# ------------------------------------------------------------------ an implementation without a SentenceTransformer
class RowEncoder:
    """An MTEB implementation that holds no SentenceTransformer (as an API client): it reads each batch's
    `text` and the task's prompt, and records what it was sent."""

    sent: ClassVar[list[str]] = []

    def __init__(self, model_name: str, revision: str | None = None, **kwargs):
        self.model_name = model_name

    def encode(self, inputs, *, task_metadata, hf_split, hf_subset, prompt_type=None, **kwargs):
        out = []
        for batch in inputs:
            for text in batch["text"]:
                RowEncoder.sent.append(text)
                seed = int(hashlib.sha256(f"{task_metadata.prompt}|{text}".encode()).hexdigest()[:8], 16)
                out.append(np.random.default_rng(seed).standard_normal(8))
        return np.asarray(out, dtype=np.float32)

    def similarity(self, a, b):
        return a @ b.T


def _row_model(tmp_path: Path) -> MTEBModel:
    model = load_model("all-MiniLM-L6-v2", cache_dir=str(tmp_path / "cache"), device="cpu")
    model.registry_meta = mteb.get_model_meta(MINILM_ID).model_copy(update={"loader": RowEncoder, "loader_kwargs": {}})
    return model


def _row_run(model, task_meta, prompt_type=PromptType.query) -> np.ndarray:
    loader = create_query_dataloader(TEXTS, INSTRUCTIONS, task_metadata=task_meta, batch_size=2)
    return np.asarray(
        model.encode(loader, task_metadata=task_meta, hf_split="test", hf_subset="default", prompt_type=prompt_type)
    )


def test_an_implementation_without_a_sentence_transformer_is_cached_a_row_at_a_time(tmp_path):
    intent = _calls()[0][0]
    loader = create_query_dataloader(TEXTS, INSTRUCTIONS, task_metadata=intent, batch_size=2)
    RowEncoder.sent = []
    direct = RowEncoder("m").encode(
        loader, task_metadata=intent, hf_split="test", hf_subset="default", prompt_type=PromptType.query
    )
    mtebs_texts = list(RowEncoder.sent)
    assert mtebs_texts[0] == "The cat sat on the mat. Represent the emotion"  # MTEB's query + " " + instruction

    RowEncoder.sent = []
    first_model = _row_model(tmp_path)
    first = _row_run(first_model, intent)
    np.testing.assert_array_equal(first, direct)  # the same vectors as MTEB's call
    assert sorted(RowEncoder.sent) == sorted(set(mtebs_texts))  # each distinct row once, prepared once
    assert first_model.stats.encoded == 3 and first_model.stats.requested == 4

    RowEncoder.sent = []
    second_model = _row_model(tmp_path)  # a new run on the same cache
    np.testing.assert_array_equal(_row_run(second_model, intent), direct)
    assert RowEncoder.sent == [] and second_model.stats.cache_hits == 3 and second_model.stats.encoded == 0

    # What the implementation reads besides the row is in the key: another prompt (an instruction
    # variant of the task) or another prompt type is encoded anew, never served another call's vectors.
    variant = intent.model_copy(update={"prompt": "Represent the topic of the review"})
    assert not np.allclose(_row_run(second_model, variant), direct)
    assert len(RowEncoder.sent) == 3
    RowEncoder.sent = []
    _row_run(second_model, intent, PromptType.document)
    assert len(RowEncoder.sent) == 3
    RowEncoder.sent = []  # an encode option that may change vectors (MTEB's `precision`) is in the key too
    loader = create_query_dataloader(TEXTS, INSTRUCTIONS, task_metadata=intent, batch_size=2)
    second_model.encode(
        loader,
        task_metadata=intent,
        hf_split="test",
        hf_subset="default",
        prompt_type=PromptType.query,
        precision="int8",
    )
    assert len(RowEncoder.sent) == 3


def test_rows_of_mtebs_own_loader_are_cached_and_equal_mtebs_call(tmp_path):
    for task_meta, prompt_type, loader in _calls()[1:]:  # documents and a plain STS task, MTEB's create_dataloader
        direct = RowEncoder("m").encode(
            loader, task_metadata=task_meta, hf_split="test", hf_subset="default", prompt_type=prompt_type
        )
        model = _row_model(tmp_path)
        RowEncoder.sent = []
        out = model.encode(
            loader, task_metadata=task_meta, hf_split="test", hf_subset="default", prompt_type=prompt_type
        )
        np.testing.assert_array_equal(out, direct)
        assert len(RowEncoder.sent) == 3 and model.stats.encoded == 3 and model.stats.requested == 4


def test_rows_that_are_not_json_run_uncached_as_mteb_runs_them(tmp_path, caplog):
    from torch.utils.data import DataLoader

    intent = _calls()[0][0]
    model = _row_model(tmp_path)
    loader = DataLoader([{"text": t} for t in TEXTS], batch_size=2)  # not a datasets.Dataset
    RowEncoder.sent = []
    out = model.encode(loader, task_metadata=intent, hf_split="test", hf_subset="default", prompt_type=None)
    assert out.shape == (4, 8) and RowEncoder.sent == TEXTS
    assert model.stats.encoded == 4 and "without the embedding cache" in caplog.text


# ------------------------------------------------------------------ MTEB's id of the packaged model
@pytest.mark.parametrize("spec", [MINILM_ID, f"mteb:{MINILM_ID}", f"st:{MINILM_ID}"])
def test_mtebs_id_of_the_packaged_model_is_the_packaged_files(spec, tmp_path):
    model = load_model(spec, cache_dir=str(tmp_path / "c"))
    default = load_model(
        "all-MiniLM-L6-v2", cache_dir=str(tmp_path / "c"), **({"template": "prefix"} if spec.startswith("st:") else {})
    )
    assert model.model_path == MINILM  # offline, nothing downloaded
    assert (
        (model.name, model.revision)
        == (default.name, default.revision)
        == (MINILM_ID, mteb.get_model_meta(MINILM_ID).revision)
    )
    assert model.fingerprint == default.fingerprint  # one model, one cache


def test_another_revision_of_mtebs_id_stays_the_hub_model(tmp_path):
    model = load_model(MINILM_ID, model_revision="0" * 40, cache_dir=str(tmp_path / "c"))
    assert model.model_path == MINILM_ID and model.revision == "0" * 40
    same = load_model(MINILM_ID, model_revision=mteb.get_model_meta(MINILM_ID).revision, cache_dir=str(tmp_path / "c"))
    assert same.model_path == MINILM
    served = load_model(f"openai:{MINILM_ID}", base_url="http://127.0.0.1:9/v1", cache_dir=str(tmp_path / "c"))
    assert served.model_id == MINILM_ID  # an API's model name is a name, never swapped for files


def test_mtebs_id_runs_offline_through_mtebs_implementation(tmp_path):
    model = load_model(MINILM_ID, cache_dir=str(tmp_path / "c"), device="cpu")
    intent = _calls()[0][0]
    loader = create_query_dataloader(TEXTS, INSTRUCTIONS, task_metadata=intent, batch_size=2)
    out = model.encode(loader, task_metadata=intent, hf_split="test", hf_subset="default", prompt_type=PromptType.query)
    assert out.shape == (4, 384) and type(model.impl).__name__ == "SentenceTransformerEncoderWrapper"
