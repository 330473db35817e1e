"""`bench list models` shows what MTEB's wrapper sends each model, captured independently here.

MTEB's own loader for the model is built with this file's recorder standing in for the
SentenceTransformer inside the wrapper (no weights), a text is encoded through the wrapper for a real
MTEB task, and the text that reaches the model (the prompt the wrapper passes, then the text) must equal
the listed format filled with that task's instruction and that text. Qwen3-Embedding keeps its template
inside its loader function (`q3e_instruct_loader`) and gives documents none; GritLM gives a document
`<|embed|>\\n` alone when the task has no document prompt.
"""

from __future__ import annotations

import logging
import warnings

import mteb
import pytest
import sentence_transformers
from mteb.types import PromptType

from bench.adapters.mteb_zoo import WITH_DOCUMENT_PROMPT, WeightlessST, instruction_models, probe_formats
from bench.cli.commands.listing import zoo_table

MODELS = ("Qwen/Qwen3-Embedding-0.6B", "GritLM/GritLM-7B")
TEXT = "A cat sits on the mat."


class Recorder:
    """A SentenceTransformer that records the text each encode call would feed the model."""

    sent: list[str] = []

    def __init__(self, *args, **kwargs):
        self.prompts, self.default_prompt_name, self.max_seq_length = {}, None, None

    def _first_module(self):  # Qwen3's loader reads the attention implementation
        from types import SimpleNamespace

        return SimpleNamespace(auto_model=SimpleNamespace(config=SimpleNamespace(_attn_implementation="sdpa")))

    def set_pooling_include_prompt(self, include_prompt):
        pass

    def encode(self, sentences, prompt=None, **kwargs):
        assert kwargs.get("prompt_name") is None  # these wrappers pass the prompt itself
        Recorder.sent.extend((prompt or "") + s for s in sentences)
        return [[1.0]] * len(sentences)

    encode_query = encode_document = encode


def sent_by_mteb(name: str, task_name: str, prompt_type: PromptType) -> tuple[str, str]:
    """(what MTEB's wrapper for `name` feeds the model for TEXT, the task's instruction it used)."""
    from datasets import Dataset
    from mteb._create_dataloaders import create_dataloader

    meta = mteb.get_model_meta(name)
    task = mteb.get_task(task_name).metadata
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mp.setattr(sentence_transformers, "SentenceTransformer", Recorder)
        impl = meta.loader(meta.name, revision=meta.revision, **meta.loader_kwargs, device="cpu")
        loader = create_dataloader(Dataset.from_dict({"text": [TEXT]}), task_metadata=task, input_column="text")
        Recorder.sent = []
        impl.encode(loader, task_metadata=task, hf_split="test", hf_subset="default", prompt_type=prompt_type)
        instruction = impl.get_instruction(task, prompt_type)
    [sent] = Recorder.sent
    return sent, instruction


def filled(listed: str, instruction: str) -> str:
    return listed.replace("{instruction}", instruction).replace("{text}", TEXT)


@pytest.mark.parametrize("name", MODELS)
def test_listed_formats_are_what_mtebs_wrapper_sends(name):
    query, document, reason = probe_formats(mteb.get_model_meta(name))
    assert reason is None
    plain, _, prompted = document.partition(WITH_DOCUMENT_PROMPT)
    prompted = prompted or plain  # one format when a document prompt changes nothing
    # NFCorpus prompts queries only; Banking77Classification's one prompt is for queries and documents alike
    sent, instruction = sent_by_mteb(name, "NFCorpus", PromptType.query)
    assert instruction and sent == filled(query, instruction)
    sent, instruction = sent_by_mteb(name, "NFCorpus", PromptType.document)
    assert instruction == "" and sent == filled(plain, "")
    sent, instruction = sent_by_mteb(name, "Banking77Classification", PromptType.document)
    assert instruction and sent == filled(prompted, instruction)


def test_the_listing_shows_the_probed_formats(monkeypatch):
    metas = [mteb.get_model_meta(n) for n in MODELS]
    monkeypatch.setattr(mteb, "get_model_metas", lambda: metas)
    monkeypatch.setenv("COLUMNS", "300")
    rows = {r["model"]: r for r in instruction_models()}
    assert rows["Qwen/Qwen3-Embedding-0.6B"]["query"] == "Instruct: {instruction}\nQuery:{text}"
    assert rows["Qwen/Qwen3-Embedding-0.6B"]["document"] == "{text}"
    assert rows["GritLM/GritLM-7B"]["document"].startswith("<|embed|>\n{text}" + WITH_DOCUMENT_PROMPT)
    table = zoo_table()
    for row in rows.values():
        line = next(x for x in table.splitlines() if x.startswith(f"| {row['model']} "))
        assert row["query"].replace("\n", "\\n") in line and row["document"].replace("\n", "\\n") in line


def test_a_format_that_cannot_be_probed_offline_says_why():
    query, document, reason = probe_formats(mteb.get_model_meta("mongodb/voyage-3"))
    assert query == f"format: not probed offline ({reason})" and document == ""
    assert "VoyageModel" in reason


def test_a_probe_puts_back_the_process_logging_level():
    """The probe hides MTEB's log lines while it runs, then puts back whatever `logging.disable` level the
    process had (a caller's, another test's), instead of turning every log line back on."""
    logging.disable(logging.ERROR)
    try:
        probe_formats(mteb.get_model_meta("Qwen/Qwen3-Embedding-0.6B"))
        assert logging.root.manager.disable == logging.ERROR
    finally:
        logging.disable(logging.NOTSET)
    probe_formats(mteb.get_model_meta("Qwen/Qwen3-Embedding-0.6B"))
    assert logging.root.manager.disable == logging.NOTSET


@pytest.mark.parametrize(
    "config",
    ['{"prompts": ' + "[" * 100_000 + "]" * 100_000 + "}", '{"prompts": {"query": "q: "}', "\xff"],
    ids=["deep", "cut", "not-utf8"],
)
def test_a_local_config_that_cannot_be_read_is_as_if_absent(tmp_path, config):
    """The stand-in reads a model's config_sentence_transformers.json within bounds: a damaged or hostile one
    (nested 100,000 deep, cut short, not UTF-8) is an unknown config, never a crash of the probe or dry run."""
    (tmp_path / "config_sentence_transformers.json").write_bytes(config.encode("latin-1"))
    st = WeightlessST(str(tmp_path))
    assert not st.config_known and st.prompts == {}


def test_a_local_folder_without_a_config_has_none(tmp_path):
    """A local model folder without config_sentence_transformers.json or sentence_bert_config.json (a plain
    transformers folder) has no prompts and no sequence length: its path is never asked of the hub cache,
    which refuses a path as a repository id."""
    st = WeightlessST(str(tmp_path))
    assert st.config_known and st.prompts == {} and st.max_seq_length is None
