"""`bench list models` probes each MTEB zoo model once, not on every listing: the formats are cached.

The cache (bench/adapters/mteb_zoo.py `instruction_models`) is keyed by what a probe's result depends on:
the packages and harness code that run it (the file's name), and per model the local files the probe
read (the hub cache folder of every repository its wrapper opened). Two registry models stand in for the
~370: Qwen3-Embedding (its template inside its loader) and mongodb/voyage-4-nano, whose loader opens
another repository, voyageai/voyage-4-nano, whose config the probe then reads.
"""

from __future__ import annotations

import json
from importlib import metadata

import huggingface_hub.constants
import mteb
import pytest

from bench.adapters import mteb_zoo
from bench.adapters.mteb_zoo import instruction_models
from bench.cli.commands.listing import FALLBACK_WIDTH, zoo_table

QWEN, VOYAGE = "Qwen/Qwen3-Embedding-0.6B", "mongodb/voyage-4-nano"
OPENED = "voyageai/voyage-4-nano"  # the repository VOYAGE's loader builds its SentenceTransformer from


@pytest.fixture
def two_models(tmp_path, monkeypatch):
    """The registry cut to QWEN and VOYAGE, an empty hub cache and an empty harness cache of this test's own."""
    metas = [mteb.get_model_meta(QWEN), mteb.get_model_meta(VOYAGE)]
    monkeypatch.setattr(mteb, "get_model_metas", lambda *a, **k: list(metas))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("INSTRUCT_BENCH_CACHE", str(tmp_path / "cache"))
    return {m.name: m for m in metas}


@pytest.fixture
def probed(monkeypatch):
    """The names of the models probed, in order (the real probe runs)."""
    names: list[str] = []
    real = mteb_zoo.probe_formats

    def counting(meta):
        names.append(meta.name)
        return real(meta)

    monkeypatch.setattr(mteb_zoo, "probe_formats", counting)
    return names


def _refuse(meta):
    raise AssertionError(f"{meta.name} probed again")


def test_a_warm_listing_reads_the_cache_and_probes_nothing(two_models, probed, monkeypatch):
    first = instruction_models()
    assert sorted(probed) == sorted([QWEN, VOYAGE]) and [r["model"] for r in first] == [VOYAGE, QWEN]
    assert first[1]["query"] == "Instruct: {instruction}\nQuery:{text}" and first[1]["reason"] is None
    monkeypatch.setattr(mteb_zoo, "probe_formats", _refuse)
    assert instruction_models() == first
    # the table wraps to the terminal: at 80 columns (an 80-column terminal, or a pytest-xdist worker, which
    # sets COLUMNS=80) the template breaks across lines; the width the listing falls back to holds it whole
    monkeypatch.setenv("COLUMNS", str(FALLBACK_WIDTH))
    table = zoo_table()  # the listing itself reads the same cache
    assert "Instruct: {instruction}\\nQuery:{text}" in table and VOYAGE in table


def test_a_new_local_file_of_a_repository_the_probe_read_invalidates_that_model_only(two_models, probed, tmp_path):
    before = {r["model"]: r for r in instruction_models()}
    assert "not in the local hub cache" in before[VOYAGE]["reason"]
    probed.clear()
    snapshot = tmp_path / "hub" / f"models--{OPENED.replace('/', '--')}" / "snapshots" / two_models[VOYAGE].revision
    snapshot.mkdir(parents=True)
    prompts = {"prompts": {"query": "Q: ", "document": "D: "}, "default_prompt_name": None}
    (snapshot / "config_sentence_transformers.json").write_text(json.dumps(prompts), encoding="utf-8")
    after = {r["model"]: r for r in instruction_models()}
    assert probed == [VOYAGE]  # its loader's repository changed; QWEN's files did not
    assert after[VOYAGE]["reason"] is None and after[VOYAGE]["query"].startswith("Q: ")
    assert after[QWEN] == before[QWEN]


def test_an_unwritable_cache_still_lists_and_probes_each_time(two_models, tmp_path, monkeypatch):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be", encoding="utf-8")
    monkeypatch.setenv("INSTRUCT_BENCH_CACHE", str(blocked))
    names: list[str] = []
    monkeypatch.setattr(mteb_zoo, "probe_formats", lambda meta: names.append(meta.name) or ("{text}", "{text}", None))
    for _ in range(2):
        assert [r["query"] for r in instruction_models()] == ["{text}", "{text}"]
    assert sorted(names) == sorted([QWEN, VOYAGE] * 2) and blocked.is_file()


def test_a_damaged_cache_file_is_probed_again(two_models, probed):
    first = instruction_models()
    damaged = {"format": mteb_zoo.PROBE_CACHE_FORMAT, "models": {QWEN: {"query": 3}}}  # and VOYAGE's lost
    mteb_zoo.probe_cache_path().write_text(json.dumps(damaged), encoding="utf-8")
    probed.clear()
    assert instruction_models() == first and sorted(probed) == sorted([QWEN, VOYAGE])


def test_the_cache_file_is_keyed_by_the_packages_and_the_probe_code(tmp_path, monkeypatch):
    monkeypatch.setenv("INSTRUCT_BENCH_CACHE", str(tmp_path))
    code = tmp_path / "probe.py"
    code.write_text("one\n", encoding="utf-8")
    monkeypatch.setattr(mteb_zoo, "PROBE_CODE", (code,))
    path = mteb_zoo.probe_cache_path()
    assert path.parent == tmp_path / "catalog" and mteb_zoo.probe_cache_path() == path  # stable
    code.write_text("two\n", encoding="utf-8")
    edited = mteb_zoo.probe_cache_path()
    assert edited != path
    real = metadata.version
    monkeypatch.setattr(
        metadata, "version", lambda name: "0.0-other" if name == "sentence-transformers" else real(name)
    )
    assert mteb_zoo.probe_cache_path() not in (path, edited)
