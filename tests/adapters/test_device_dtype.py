"""`--dtype auto` is the families' default: bfloat16 on a CUDA GPU (float16 on one without bf16), float32 on
a CPU, where nothing changes: fingerprint, cache file, experiment name and recorded settings are float32's,
whether the dtype is left out or given as float32. MTEB's implementation keeps its loader's dtype."""

from __future__ import annotations

import pytest
import torch

import bench.adapters.device
from bench.adapters.base import BaseEncoder
from bench.adapters.options import option_defaults
from bench.adapters.registry import family_class, load_model
from toy_encoders import HashEncoder

# HashEncoder's fingerprint when float32 was the default (the cache file of every earlier CPU run)
FLOAT32 = {
    "family": "toy",
    "model": "toy/hash",
    "revision": "v1",
    "blind": False,
    "dim": 64,
    "dtype": "float32",
    "nan_for": None,
}


def _identity(enc):
    return enc.fingerprint, enc.cache.path.name, enc.mteb_model_meta.experiment_name, enc.experiment(), enc.settings()


def _gpu(monkeypatch, bf16=True):
    monkeypatch.setattr(bench.adapters.device, "resolve_device", lambda device: "cuda")
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: bf16)


@pytest.mark.parametrize("family", ["sentence-transformers", "inbedder", "prompteol", "metaeol", "instructor", "toy"])
def test_the_families_default_is_auto(family):
    cls = HashEncoder if family == "toy" else family_class(family)
    assert option_defaults(cls)["dtype"] == "auto"
    assert option_defaults(family_class("mteb"))["dtype"] is None  # MTEB's loader decides, unless --dtype is given
    assert "auto (default" in BaseEncoder.cli_flags["dtype"]


def test_a_cpu_run_is_float32_as_before(tmp_path):
    default = HashEncoder(cache_dir=tmp_path, device="cpu")
    explicit = HashEncoder(cache_dir=tmp_path, device="cpu", dtype="float32")
    auto = HashEncoder(cache_dir=tmp_path, device="cpu", dtype="auto")
    assert default.dtype == "float32" and default.fingerprint == FLOAT32
    assert _identity(default) == _identity(explicit) == _identity(auto)
    assert default.experiment() == {"family": "toy"} and default.settings()["dtype"] == "float32"
    half = HashEncoder(cache_dir=tmp_path, device="cpu", dtype="bfloat16")  # still an experiment, as before
    assert half.experiment() == {"family": "toy", "dtype": "bfloat16", "device_kind": "cpu"}


@pytest.mark.parametrize(("bf16", "dtype"), [(True, "bfloat16"), (False, "float16")])
def test_a_cuda_run_is_half_precision_and_named_so(tmp_path, monkeypatch, bf16, dtype):
    cpu_cache = HashEncoder(cache_dir=tmp_path, device="cpu").cache.path
    _gpu(monkeypatch, bf16)
    gpu = HashEncoder(cache_dir=tmp_path)
    assert gpu.dtype == dtype and gpu.settings()["dtype"] == dtype
    assert gpu.experiment() == {"family": "toy", "dtype": dtype, "device_kind": "cuda"}
    assert gpu.cache.path != cpu_cache and gpu.fingerprint == {**FLOAT32, "dtype": dtype, "device_kind": "cuda"}
    full = HashEncoder(cache_dir=tmp_path, dtype="float32")  # float32 on a GPU: the unnamed setting, as before
    assert full.experiment() == {"family": "toy"} and full.fingerprint == FLOAT32


def test_a_sentence_transformers_cuda_run_loads_bf16(tmp_path, monkeypatch, minilm_path):
    _gpu(monkeypatch)
    st = load_model(f"st:{minilm_path}", cache_dir=tmp_path)
    assert st.dtype == "bfloat16" and st.experiment() == {
        "template": "prefix",
        "dtype": "bfloat16",
        "device_kind": "cuda",
    }


def test_mteb_and_openai_families_are_unchanged(tmp_path, monkeypatch):
    _gpu(monkeypatch)
    mteb = load_model("all-MiniLM-L6-v2", cache_dir=tmp_path)  # MTEB's key: the loader's dtype
    assert mteb.family == "mteb" and mteb.mteb_model_meta.experiment_kwargs is None
    assert mteb.fingerprint["dtype"] is None and mteb.settings()["dtype"] is None
    api = load_model("openai:text-embedding-3-small", cache_dir=tmp_path)  # no weights: no dtype to choose
    assert api.fingerprint["dtype"] == "float32" and "device_kind" not in api.fingerprint
    assert api.experiment() == {"template": "prefix"}
