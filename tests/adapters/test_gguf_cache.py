"""The GGUF cache (bench/adapters/gguf_cache.py) on a tiny llama GGUF built here: a second load reads no byte of
the GGUF file and gives what transformers' own GGUF load gives; the key follows the dtype, the file, the files
beside it and the versions; a damaged entry is rebuilt; a cache that cannot be written costs one warning."""

from __future__ import annotations

import builtins
import errno
import importlib.util
import io
import json
import logging
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

gguf = pytest.importorskip("gguf")
torch = pytest.importorskip("torch")

from bench.adapters import gguf_cache as gc  # noqa: E402
from bench.adapters.lm import detect_architecture, load_lm, load_tokenizer  # noqa: E402

TEXTS = ["the cat sat on the mat", "hello there, ü 日本"]
DURATION = r"\d+:[0-5]\d:[0-5]\d"  # bench.core.progress.format_duration: H:MM:SS


def _byte_tokens() -> list[str]:
    """GPT-2's byte-to-unicode table: every byte is a token, so any text tokenises."""
    bs = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def write_tiny_gguf(path: Path, *, seed: int = 0, hidden: int = 32, layers: int = 2) -> Path:
    """A 2-layer llama with a byte-level BPE tokenizer, its matrices quantised (Q8_0, Q4_1) as GGUF files are."""
    import numpy as np
    from gguf.quants import quantize

    rng = np.random.default_rng(seed)
    tokens = [*_byte_tokens(), "Ġt", "he", "Ġthe", "<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    vocab, heads, kv_heads, ffn = len(tokens), 4, 2, 64
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_context_length(64)
    w.add_embedding_length(hidden)
    w.add_block_count(layers)
    w.add_feed_forward_length(ffn)
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_rope_dimension_count(hidden // heads)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_vocab_size(vocab)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types([1] * (vocab - 3) + [3, 3, 3])
    w.add_token_merges(["Ġ t", "h e", "Ġt he"])
    w.add_bos_token_id(vocab - 3)
    w.add_eos_token_id(vocab - 1)

    def tensor(name: str, shape: tuple[int, ...], qtype: Any = gguf.GGMLQuantizationType.Q8_0) -> None:
        data = (rng.standard_normal(shape) * 0.2).astype(np.float32)
        if qtype == gguf.GGMLQuantizationType.F32:
            w.add_tensor(name, data)
        else:
            w.add_tensor(name, quantize(data, qtype), raw_dtype=qtype)

    f32 = gguf.GGMLQuantizationType.F32
    tensor("token_embd.weight", (vocab, hidden), gguf.GGMLQuantizationType.Q4_1)
    for i in range(layers):
        tensor(f"blk.{i}.attn_norm.weight", (hidden,), f32)
        tensor(f"blk.{i}.attn_q.weight", (hidden, hidden))
        tensor(f"blk.{i}.attn_k.weight", (hidden * kv_heads // heads, hidden))
        tensor(f"blk.{i}.attn_v.weight", (hidden * kv_heads // heads, hidden))
        tensor(f"blk.{i}.attn_output.weight", (hidden, hidden))
        tensor(f"blk.{i}.ffn_norm.weight", (hidden,), f32)
        tensor(f"blk.{i}.ffn_gate.weight", (ffn, hidden))
        tensor(f"blk.{i}.ffn_up.weight", (ffn, hidden))
        tensor(f"blk.{i}.ffn_down.weight", (hidden, ffn))
    tensor("output_norm.weight", (hidden,), f32)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_gguf(tmp_path_factory.mktemp("tiny-gguf") / "tiny.gguf")


@pytest.fixture(scope="module")
def reference(tiny: Path) -> dict[str, Any]:
    """What transformers itself loads from the file (no harness, no cache), per dtype."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny.parent, gguf_file=tiny.name, padding_side="left")
    tok.pad_token = tok.eos_token  # as load_tokenizer does for a tokenizer without one
    out = {"ids": tok(TEXTS)["input_ids"]}
    for dtype in ("float32", "bfloat16"):
        model = AutoModelForCausalLM.from_pretrained(tiny.parent, gguf_file=tiny.name, dtype=getattr(torch, dtype))
        out[dtype] = (model.state_dict(), _states(model, tok))
    return out


@pytest.fixture(scope="module")
def built(tiny: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache root holding the tiny file's float32 entries (copied into a test's root: no test de-quantises twice)."""
    root = tmp_path_factory.mktemp("built")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("INSTRUCT_BENCH_CACHE", str(root))
        _load(tiny)
    return root


def _copy_built(built: Path, root: Path) -> None:
    import shutil

    shutil.copytree(built / "gguf", root / "gguf")


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache root of the test's own, and the once-per-process warning re-armed."""
    monkeypatch.setenv("INSTRUCT_BENCH_CACHE", str(tmp_path / "cache"))
    gc._warned.clear()
    return tmp_path / "cache"


def _states(model: Any, tok: Any) -> Any:
    batch = tok(TEXTS, return_tensors="pt", padding=True)
    with torch.no_grad():
        return model(**batch, output_hidden_states=True).hidden_states[-1]


def _load(path: Path, dtype: str = "float32") -> tuple[Any, Any, Any]:
    """config, tokenizer and model as the LM families load them."""
    arch = detect_architecture(str(path), None)
    tok = load_tokenizer(str(path), revision=None, padding_side="left", truncation_side="left")
    model = load_lm(str(path), architecture=arch, revision=None, dtype=dtype, device="cpu")
    return arch, tok, model


def _same_model(model: Any, tok: Any, ref: tuple[dict[str, Any], Any]) -> bool:
    state, states = ref
    mine = model.state_dict()
    return (
        mine.keys() == state.keys()
        and all(torch.equal(mine[k], state[k]) for k in state)
        and torch.equal(_states(model, tok), states)
    )


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == gc.__name__ and r.levelno >= logging.WARNING]


def test_second_load_reads_no_byte_of_the_gguf_and_equals_transformers_own(tiny, reference, monkeypatch):
    """The first load builds the cache; the second reads neither the GGUF file (no parse, no second hash: its
    digest is remembered) nor anything else of it, and gives transformers' own tensors, states and tokens."""
    arch, tok, model = _load(tiny)
    assert arch == "causal" and _same_model(model, tok, reference["float32"])
    entry = gc.gguf_cache(tiny)
    assert entry is not None
    assert {p.name for p in entry.folder.iterdir()} == {"config", "tokenizer", "model-causal-float32"}

    opened: list[str] = []
    real_open = builtins.open

    def spy(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(os.fspath(file) if isinstance(file, (str, os.PathLike)) else repr(file))
        return real_open(file, *args, **kwargs)

    with monkeypatch.context() as mp:
        mp.setattr(builtins, "open", spy)
        mp.setattr(io, "open", spy)
        arch2, tok2, model2 = _load(tiny)
    assert opened and not [f for f in opened if f.endswith(".gguf")]
    assert arch2 == "causal" and _same_model(model2, tok2, reference["float32"])
    assert tok2(TEXTS)["input_ids"] == reference["ids"] and tok2.padding_side == "left"
    assert model2.config.to_dict() == model.config.to_dict()  # named by the GGUF's folder, as a fresh load is
    assert model2.generation_config.to_dict() == model.generation_config.to_dict()
    assert tok2.name_or_path == tok.name_or_path == str(tiny.parent)


def test_the_key_follows_dtype_file_siblings_and_versions(tiny, reference, tmp_path, monkeypatch):
    """One entry per dtype: a float32 load after a bfloat16 one is not served the bfloat16 weights, nor the reverse."""
    for dtype in ("bfloat16", "float32", "bfloat16", "float32"):  # built, built, then each from its own entry
        _, tok, model = _load(tiny, dtype)
        assert model.dtype == getattr(torch, dtype) and _same_model(model, tok, reference[dtype])
    entry = gc.gguf_cache(tiny)
    assert sorted(p.name for p in entry.folder.glob("model-*")) == ["model-causal-bfloat16", "model-causal-float32"]

    (tmp_path / "other").mkdir()
    other = write_tiny_gguf(tmp_path / "other" / "tiny.gguf", seed=1)
    before = gc.gguf_cache(other)
    assert before.folder.parent == entry.folder.parent and before.folder != entry.folder  # same name, other bytes
    (other.parent / "tokenizer_config.json").write_text("{}", encoding="utf-8")  # transformers reads it too
    assert gc.gguf_cache(other).folder != before.folder
    versions = gc.package_versions()
    assert set(versions) == {"transformers", "gguf", "numpy", "torch"} and entry.key.items() >= versions.items()
    for package in versions:
        monkeypatch.setattr(gc, "package_versions", lambda p=package: {**versions, p: "99.0"})
        assert gc.gguf_cache(tiny).folder != entry.folder, package
    assert gc.gguf_cache("HuggingFaceTB/SmolLM2-135M-Instruct-GGUF/x.gguf") is None  # a hub file: not cached


@pytest.mark.parametrize("damage", ["flipped byte", "truncated", "record"])
def test_a_damaged_entry_is_rebuilt(tiny, reference, built, fresh_cache, damage, caplog):
    _copy_built(built, fresh_cache)
    entry = gc.gguf_cache(tiny)
    folder = entry.part("model-causal-float32")
    weights = folder / "model.safetensors"
    data = bytearray(weights.read_bytes())
    if damage == "flipped byte":
        data[-5] ^= 0xFF
        weights.write_bytes(bytes(data))
    elif damage == "truncated":
        weights.write_bytes(bytes(data[: len(data) // 2]))
    else:
        (folder / gc.ENTRY).write_text("{not json", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger=gc.__name__):
        _, tok, model = _load(tiny)
    assert _same_model(model, tok, reference["float32"])
    assert [m for m in _warnings(caplog) if "damaged" in m and "model-causal-float32" in m]
    assert gc.check_entry(folder, entry.key, "model-causal-float32")  # whole again
    assert not list(entry.folder.glob(".tmp-*"))


@pytest.mark.parametrize("failure", ["read-only", "full disk", "no room for the weights"])
def test_a_cache_that_cannot_be_written_costs_one_warning(tiny, reference, failure, fresh_cache, monkeypatch, caplog):
    """Each load is as transformers' own; the run warns once (not once per part, not again on the second load)."""
    code = {"read-only": errno.EROFS, "full disk": errno.ENOSPC}.get(failure)
    if code is not None:
        real_mkdir = os.mkdir

        def mkdir(path: Any, *args: Any, **kwargs: Any) -> None:
            if str(path).startswith(str(fresh_cache)):
                raise OSError(code, os.strerror(code), str(path))
            real_mkdir(path, *args, **kwargs)

        monkeypatch.setattr(os, "mkdir", mkdir)
    else:  # room for the small files, not for the weights plus FREE_MARGIN
        monkeypatch.setattr(gc.shutil, "disk_usage", lambda _: type("Usage", (), {"free": gc.FREE_MARGIN})())
    with caplog.at_level(logging.DEBUG, logger=gc.__name__):
        _load(tiny)
        _, tok, model = _load(tiny)
    assert _same_model(model, tok, reference["float32"])
    warned = _warnings(caplog)
    assert len(warned) == 1 and "GGUF cache not written" in warned[0], warned
    assert not list(fresh_cache.rglob("model.safetensors"))


def test_an_interrupted_write_leaves_no_entry_and_stale_folders_are_swept(tiny, reference, monkeypatch):
    def interrupted(model: Any, folder: Path) -> None:
        (folder / "model.safetensors").write_bytes(b"half a file")
        raise KeyboardInterrupt

    with monkeypatch.context() as mp:  # Ctrl-C while the weights are written
        mp.setattr(gc, "save_dense", interrupted)
        with pytest.raises(KeyboardInterrupt):
            _load(tiny)
    entry = gc.gguf_cache(tiny)
    assert not entry.part("model-causal-float32").exists() and not list(entry.folder.glob(".tmp-*"))

    stale = entry.folder / ".tmp-model-causal-float32-killed"  # what a SIGKILL leaves
    stale.mkdir()
    (stale / "model.safetensors").write_bytes(b"half a file")
    old = time.time() - 2 * gc.STALE_TMP_SECONDS
    for p in (stale / "model.safetensors", stale):
        os.utime(p, (old, old))
    _, tok, model = _load(tiny)
    assert _same_model(model, tok, reference["float32"]) and not stale.exists()
    assert gc.check_entry(entry.part("model-causal-float32"), entry.key, "model-causal-float32")


def test_a_first_load_says_what_it_does_and_keeps_saying_it(tiny, caplog):
    """On a log: where the entry goes, which part is being built, a line every interval, and when the weights are done;
    a load from the cache says nothing."""
    with caplog.at_level(logging.INFO, logger=gc.__name__):
        with gc.progress_lines("tiny.gguf: de-quantising", "first load", interval=0.05):
            time.sleep(0.3)
        _load(tiny)
        first = len(caplog.records)
        _load(tiny)
    lines = [r.getMessage() for r in caplog.records if r.name == gc.__name__]
    # the lines' shape (H:MM:SS), never a duration: a loaded machine takes seconds where an idle one takes none
    assert lines[0] == "tiny.gguf: de-quantising (first load)"
    assert [line for line in lines if re.fullmatch(rf"tiny\.gguf: de-quantising: done in {DURATION}", line)]
    assert [line for line in lines if re.fullmatch(rf"tiny\.gguf: de-quantising: {DURATION} elapsed", line)]
    folder = gc.gguf_cache(tiny).folder
    started, done = [line for line in lines if line.startswith("tiny.gguf: de-quantising")][-2:]
    assert started == "tiny.gguf: de-quantising the weights to float32"
    assert re.fullmatch(rf"tiny\.gguf: de-quantising the weights to float32: done in {DURATION}", done), done
    assert f"tiny.gguf: reading the config (first load; kept in {folder} for later runs)" in lines
    assert "tiny.gguf: reading the tokenizer" in lines and len(caplog.records) == first
    record = json.loads((folder / "model-causal-float32" / gc.ENTRY).read_text(encoding="utf-8"))
    assert set(record["files"]) == {"config.json", "generation_config.json", "model.safetensors"}


def test_an_encoder_embeds_the_same_from_the_cache(tiny, fresh_cache):
    """`bench run`'s path: an `inbedder:` encoder of the file, built twice (the second from the cache)."""
    from bench.adapters.registry import load_model

    def vectors() -> Any:
        enc = load_model(f"inbedder:{tiny}", device="cpu", pooling="1st-gen", use_cache=False)
        return enc.encode_inputs([enc.render(text, "What is it about?", None) for text in TEXTS])

    first = vectors()
    assert gc.gguf_cache(tiny).part("model-causal-float32").is_dir()
    second = vectors()
    assert first.shape == (2, 32) and (first == second).all()


def test_only_a_fully_de_quantised_model_is_kept(tiny, fresh_cache, monkeypatch):
    """transformers' legacy GGUF loader de-quantises every tensor (kept); its GGUF path may keep weights in blocks
    or graft ggml kernels, which a plain reload would not reproduce (not kept, and said at DEBUG only)."""
    from types import SimpleNamespace as NS

    legacy = NS(hf_quantizer=NS(supported=False))
    packed = NS(hf_quantizer=NS(supported=True, quantization_config=NS(dequantize=False), packed_modules={"a": 1}))
    unpacked = NS(hf_quantizer=NS(supported=True, quantization_config=NS(dequantize=True), packed_modules={}))
    assert gc.is_dense(NS(hf_quantizer=None)) and gc.is_dense(legacy) and not gc.is_dense(packed)
    assert gc.is_dense(unpacked) == (importlib.util.find_spec("kernels") is None)

    monkeypatch.setattr(gc, "is_dense", lambda model: False)
    _load(tiny)
    entry = gc.gguf_cache(tiny)
    assert entry.part("config").is_dir() and not entry.part("model-causal-float32").exists()


def _entry_elsewhere(entry_folder: Path, elsewhere: Path) -> Path:
    """A copy of a whole entry (or part) outside the cache: what a link planted in the cache would lead to."""
    import shutil

    shutil.copytree(entry_folder, elsewhere)
    return elsewhere


@pytest.mark.parametrize("link", ["the file's folder", "a part's folder", "a file", "an unrecorded file"])
def test_a_link_in_the_cache_is_never_followed(tiny, reference, built, fresh_cache, tmp_path, link, caplog):
    """Whole, checksummed entries behind a link (or beside a file the record does not list) are not served:
    one warning, the entry rebuilt as a real folder of regular files, and what the link led to left alone."""
    _copy_built(built, fresh_cache)
    entry = gc.gguf_cache(tiny)
    part = entry.part("model-causal-float32")
    weights = part / "model.safetensors"
    if link == "the file's folder":  # the whole entry moved out and linked back
        outside = _entry_elsewhere(entry.folder, tmp_path / "outside")
        gc._remove(entry.folder)
        entry.folder.symlink_to(outside, target_is_directory=True)
        probe = outside / "model-causal-float32" / "model.safetensors"
    elif link == "a part's folder":
        outside = _entry_elsewhere(part, tmp_path / "outside")
        gc._remove(part)
        part.symlink_to(outside, target_is_directory=True)
        probe = outside / "model.safetensors"
    elif link == "a file":  # the same bytes (so the same sha256), through a link
        outside = tmp_path / "outside.safetensors"
        outside.write_bytes(weights.read_bytes())
        weights.unlink()
        weights.symlink_to(outside)
        probe = outside
    else:
        probe = part / "model.safetensors.index.json"
        probe.write_text("{}", encoding="utf-8")
    kept = probe.read_bytes()
    with caplog.at_level(logging.WARNING, logger=gc.__name__):
        _, tok, model = _load(tiny)
    assert _same_model(model, tok, reference["float32"])
    warned = _warnings(caplog)
    assert len(warned) == 1 and ("symbolic link" in warned[0] or "link" in warned[0] or "record" in warned[0]), warned
    assert not entry.folder.is_symlink() and not part.is_symlink() and not weights.is_symlink()
    assert gc.check_entry(part, entry.key, "model-causal-float32")  # a whole entry of regular files again
    assert sorted(p.name for p in part.iterdir()) == [
        "config.json",
        "entry.json",
        "generation_config.json",
        "model.safetensors",
    ]
    if link != "an unrecorded file":
        assert probe.read_bytes() == kept  # the link went, never what it led to


def test_concurrent_loads_de_quantise_once(tiny, reference, fresh_cache, monkeypatch, caplog):
    """Two loads of one file at once (threads here; processes take the same OS lock): one de-quantises, the
    other waits for it and reads the entry it wrote. The first holds its save until the second is seen waiting
    (or, without a lock, de-quantising too), so the two always overlap."""
    import threading

    overlapped = threading.Event()

    class Watch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            message = record.getMessage()
            starts = [r for r in caplog.records if r.getMessage() == "tiny.gguf: de-quantising the weights to float32"]
            if ("waiting for it" in message and "model-causal-float32" in message) or len(starts) >= 2:
                overlapped.set()

    real_save = gc.save_dense

    def save_when_overlapped(model: Any, folder: Path) -> None:
        overlapped.wait(timeout=120)
        real_save(model, folder)

    monkeypatch.setattr(gc, "save_dense", save_when_overlapped)
    watch = Watch()
    gc.logger.addHandler(watch)
    loaded: list[Any] = []
    failed: list[BaseException] = []

    def load() -> None:
        try:
            loaded.append(_load(tiny))
        except BaseException as e:  # noqa: BLE001 - reported below, not lost in the thread
            failed.append(e)
            overlapped.set()

    try:
        with caplog.at_level(logging.INFO, logger=gc.__name__):
            threads = [threading.Thread(target=load) for _ in range(2)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=1800)
    finally:
        gc.logger.removeHandler(watch)
    assert not failed and overlapped.is_set() and len(loaded) == 2, failed
    lines = [r.getMessage() for r in caplog.records if r.name == gc.__name__]
    assert lines.count("tiny.gguf: de-quantising the weights to float32") == 1, lines
    assert [line for line in lines if "another process is building its model-causal-float32" in line]
    for _, tok, model in loaded:
        assert _same_model(model, tok, reference["float32"])


def test_the_run_record_says_whether_the_weights_came_from_the_cache(tiny, fresh_cache, monkeypatch):
    """`encode.gguf_cache`: "built" when the run de-quantised the file and kept it, "hit" when it read the
    kept copy (checked for damage, not for tampering), "off" when nothing was kept; absent when no GGUF file's
    weights were loaded."""
    from datetime import UTC, datetime

    from bench.adapters.base import EncodeStats
    from bench.adapters.registry import load_model
    from bench.run.runner import RunOptions, _run_record
    from bench.tasks import get_tasks

    task = get_tasks(["DemoInstructSTS"])[0]

    def encode_record() -> dict[str, Any]:
        enc = load_model(f"inbedder:{tiny}", device="cpu", pooling="1st-gen", use_cache=False)
        enc.encode_inputs([enc.render(TEXTS[0], "What is it about?", None)])
        return _run_record(enc, task, RunOptions(), {}, EncodeStats(), datetime.now(UTC), 0.0)["encode"]

    assert encode_record()["gguf_cache"] == "built"
    assert encode_record()["gguf_cache"] == "hit"
    monkeypatch.setenv("INSTRUCT_BENCH_CACHE", str(fresh_cache.parent / "other"))
    monkeypatch.setattr(gc, "is_dense", lambda model: False)  # transformers kept the weights quantised
    assert encode_record()["gguf_cache"] == "off"

    unloaded = load_model(f"inbedder:{tiny}", device="cpu", pooling="1st-gen", use_cache=False)  # nothing encoded
    record = _run_record(unloaded, task, RunOptions(), {}, EncodeStats(), datetime.now(UTC), 0.0)["encode"]
    assert "gguf_cache" not in record
