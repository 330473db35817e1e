"""Batches sized for a CUDA device (bench/adapters/device_budget.py): the budget worked by hand, and the
CUDA path on a CPU with a faked device (free memory, out-of-memory errors above a size)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from bench.adapters.device_budget import GIB, DeviceBatches, ModelShape, device_budget, model_shape
from toy_encoders import HashEncoder

# Llama-shaped models (benchmarks/gpu_readouts.py): TinyLlama-1.1B and Llama-2-7B, and SmolLM2-135M
TINYLLAMA = ModelShape(1_100_048_384, hidden_size=2048, num_layers=22, intermediate_size=5632, kv_size=256)
LLAMA7B = ModelShape(6_738_415_616, hidden_size=4096, num_layers=32, intermediate_size=11008, kv_size=4096)
SMOLLM2 = ModelShape(134_515_008, hidden_size=576, num_layers=30, intermediate_size=1536, kv_size=192)


def test_bytes_per_token_by_hand():
    # bf16: 2 x (6 x 2048 + 3 x 5632) = 2 x 29,184; a generation adds 2 x (2 x 22 layers x 256)
    assert TINYLLAMA.token_bytes() == 58_368
    assert TINYLLAMA.token_bytes(generates=True) == 58_368 + 2 * 2 * 22 * 256 == 80_896
    assert LLAMA7B.token_bytes() == 2 * (6 * 4096 + 3 * 11008) == 115_200
    assert LLAMA7B.token_bytes(generates=True) == 2 * (57_600 + 2 * 32 * 4096) == 639_488
    assert ModelShape(10, hidden_size=100, num_layers=2, dtype_bytes=4).token_bytes() == 4 * (600 + 1200)  # MLP 4x


def test_budget_on_a_large_card_by_hand():
    # 1.1B: compute target 2^45 / (2 x 1,100,048,384) = 15,992 tokens, under 32 rows x 512 = 16,384: the rows floor;
    # memory (130 - 1) GiB x 0.5 / 58,368 = 1,186,546 tokens is far away. Rows: 16,384 / 32 = 512.
    plan = device_budget(130 * GIB, TINYLLAMA, max_length=512)
    assert (plan.max_tokens, plan.batch_size, plan.limited_by) == (16_384, 512, "rows")
    # 6.7B: 2^45 / 13,476,831,232 = 2,610 tokens, also under the floor: the same batches as the 1.1B
    assert device_budget(120 * GIB, LLAMA7B, max_length=512).max_tokens == 16_384
    # 135M: 2^45 / 269,030,016 = 130,782 tokens, capped at 65,536; rows 65,536 / 32 = 2,048, capped at 1,024
    plan = device_budget(130 * GIB, SMOLLM2, max_length=512)
    assert (plan.max_tokens, plan.batch_size, plan.limited_by) == (65_536, 1024, "cap")
    # a shorter max input length lowers the floor: 1.1B at 128 tokens: 4,096 < 15,992: the compute target,
    # rounded down to a multiple of 1,024: 15,360 tokens, 480 rows
    plan = device_budget(130 * GIB, TINYLLAMA, max_length=128)
    assert (plan.max_tokens, plan.batch_size, plan.limited_by) == (15_360, 480, "compute")


def test_budget_on_a_small_card_by_hand():
    # 7B with 2 GiB left after loading: (2 - 1) GiB x 0.5 = 536,870,912 bytes / 115,200 = 4,660 tokens -> 4,096
    plan = device_budget(2 * GIB, LLAMA7B, max_length=512)
    assert (plan.max_tokens, plan.batch_size, plan.limited_by) == (4_096, 128, "memory")
    assert plan.record() == {
        "max_tokens": 4096,
        "batch_size": 128,
        "limited_by": "memory",
        "free_gib": 2.0,
        "bytes_per_token": 115_200,
    }
    # generating: 536,870,912 / 639,488 = 839 tokens, below one step: 1,024 (a longer row goes alone), 32 rows
    plan = device_budget(2 * GIB, LLAMA7B, max_length=512, generates=True)
    assert (plan.max_tokens, plan.batch_size, plan.limited_by) == (1_024, 32, "memory")
    assert device_budget(0, LLAMA7B, max_length=512).max_tokens == 1_024  # less free than the reserve


def test_model_shape_reads_llama_and_gpt2_configs():
    params = [torch.zeros(10), torch.zeros(5)]
    llama = SimpleNamespace(
        config=SimpleNamespace(
            hidden_size=2048,
            num_hidden_layers=22,
            intermediate_size=5632,
            num_attention_heads=32,
            num_key_value_heads=4,
        ),
        parameters=lambda: iter(params),
    )
    assert model_shape(llama, "bfloat16") == ModelShape(15, 2048, 22, 5632, kv_size=4 * 64, dtype_bytes=2)
    gpt2 = SimpleNamespace(config=SimpleNamespace(n_embd=768, n_layer=12, n_head=12, n_inner=None), parameters=list)
    assert model_shape(gpt2, "float32") == ModelShape(0, 768, 12, None, kv_size=768, dtype_bytes=4)


# ------------------------------------------------------------------------------ the CUDA path, faked
class ToyLM(DeviceBatches, HashEncoder):
    """A family with device batches whose forward pass runs out of memory above `limit` padded tokens."""

    def __init__(self, *, limit: int = 10**9, **kwargs):
        self.limit = limit
        self.calls: list[tuple[int, int]] = []  # (rows, padded tokens) of each forward pass
        super().__init__(**kwargs)

    def budget_shape(self) -> ModelShape:
        return ModelShape(1_000_000_000, hidden_size=1000, num_layers=10, intermediate_size=1000, dtype_bytes=2)

    def budget_length(self) -> int:
        return 100

    def _encode_group(self, inputs, batch_size):
        return self.run_batches(inputs, self._forward, batch_size=batch_size)

    def _forward(self, batch):
        tokens = len(batch) * max(len(x) for x in batch)
        self.calls.append((len(batch), tokens))
        if tokens > self.limit:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return np.ones((len(batch), 4), dtype=np.float32)


@pytest.fixture
def fake_cuda(monkeypatch):
    """torch sees one CUDA device with `free[0]` bytes free; returns the list of free-memory reads."""
    reads: list[str] = []
    free = [4 * GIB]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (reads.append(device), (free[0], 80 * GIB))[1])
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device=None: 0)
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda device=None: 0)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    return SimpleNamespace(reads=reads, free=free)


def _toy(tmp_path, **options):
    return ToyLM(cache_dir=tmp_path, use_cache=False, dtype="float32", show_progress_bar=False, **options)


TEXTS = [f"{i:03d}" + "x" * (97 - i % 50) for i in range(300)]  # 50-100 characters (the toy's tokens)


def test_on_cuda_the_budget_is_chosen_once_and_shapes_every_batch(tmp_path, fake_cuda):
    # 1e9 parameters: compute target 2^45 / 2e9 = 17,592 > 32 x 100; memory (4 - 1) GiB x 0.5 / 2 x 9,000 bytes
    # = 89,478 tokens: 17,408 tokens (a multiple of 1,024), 544 rows
    enc = _toy(tmp_path, device="cuda")
    enc.encode_inputs(TEXTS)
    assert enc.device_batches == {
        "max_tokens": 17_408,
        "batch_size": 544,
        "limited_by": "compute",
        "free_gib": 4.0,
        "bytes_per_token": 18_000,
    }
    assert enc.max_tokens == 17_408 and enc.batch_size == 32  # the option itself is untouched
    assert [rows for rows, _ in enc.calls] == [174, 126]  # 174 x 100 = 17,400 tokens; the rest (<= 17,408)
    assert all(tokens <= 17_408 for _, tokens in enc.calls)
    fake_cuda.free[0] = 80 * GIB  # a later call keeps the budget: planned batches never change within a run
    enc.calls.clear()
    enc.encode_inputs([t + "!" for t in TEXTS])
    assert [rows for rows, _ in enc.calls] == [172, 128]  # 172 x 101 = 17,372 tokens
    assert fake_cuda.reads == ["cuda"]
    assert "max_tokens" not in enc.settings() or enc.settings()["max_tokens"] is None  # not the setting's identity


def test_out_of_memory_still_halves_that_batch_under_the_device_budget(tmp_path, fake_cuda, monkeypatch):
    # the real one runs gc.collect(), a second over a whole session's heap; this test counts the split
    monkeypatch.setattr("bench.adapters.batching.free_accelerator_memory", lambda: None)
    enc = _toy(tmp_path, device="cuda", limit=9_000)  # the estimate was too large for this device
    vectors = enc.encode_inputs(TEXTS)
    assert vectors.shape == (300, 4)
    # 174 rows (17,400 tokens) fail -> 87 + 87 rows; then the next planned batch at its full size again
    assert [rows for rows, _ in enc.calls] == [174, 87, 87, 126]
    assert enc.stats.oom_splits == 1 and enc.stats.encoded == 300


@pytest.mark.parametrize("given", [{"batch_size": 8}, {"max_tokens": 300}])
def test_a_given_batch_size_or_token_budget_wins(tmp_path, fake_cuda, given):
    enc = _toy(tmp_path, device="cuda", **given)
    enc.encode_inputs(TEXTS[:40])
    assert enc.device_batches is None and fake_cuda.reads == []
    if "batch_size" in given:
        assert [rows for rows, _ in enc.calls] == [8] * 5
    else:  # at most 300 padded tokens a batch: 3 rows of 100-98 characters first
        assert enc.calls[0] == (3, 300) and all(tokens <= 300 for _, tokens in enc.calls)


def test_a_callers_own_batch_size_wins(tmp_path, fake_cuda):
    enc = _toy(tmp_path, device="cuda")
    enc.encode_inputs(TEXTS[:40], batch_size=16)
    assert [rows for rows, _ in enc.calls] == [16, 16, 8] and fake_cuda.reads == []


def test_on_a_cpu_nothing_changes(tmp_path, fake_cuda):
    enc = _toy(tmp_path, device="cpu")
    enc.encode_inputs(TEXTS[:70])
    assert [rows for rows, _ in enc.calls] == [32, 32, 6]
    assert enc.device_batches is None and enc.max_tokens is None and fake_cuda.reads == []


def test_a_launched_run_forms_the_one_process_batches(tmp_path, fake_cuda):
    """Rank 0 plans every rank's batches with the budget it chose (`plan_jobs`); a rank that is sent a batch
    (`encode_share`, never `_encode_missing`) chooses no budget of its own and runs it as one batch."""
    from bench.adapters.distributed import plan_jobs

    one = _toy(tmp_path, device="cuda")
    one.encode_inputs(TEXTS)
    rank0 = _toy(tmp_path, device="cuda")
    rows = rank0.device_batch_size(rank0.batch_size)  # what rank 0's `_encode_missing` passes to the team
    ordered = sorted(TEXTS, key=len, reverse=True)  # as `encode_inputs` hands them on: longest first
    jobs = plan_jobs(rank0, ordered, rows)
    assert [b - a for a, b in jobs] == [rows for rows, _ in one.calls]
    fake_cuda.free[0] = GIB  # another rank's device is fuller: it does not matter there
    other = _toy(tmp_path, device="cuda")
    for a, b in jobs:
        other.encode_share(ordered[a:b], rows)
    assert other.calls == one.calls and other.device_batches is None


def test_the_run_record_names_the_device_batches(tmp_path, fake_cuda):
    from datetime import UTC, datetime

    from bench.adapters.base import EncodeStats
    from bench.run.runner import RunOptions, _run_record
    from bench.tasks import get_tasks

    task, enc = get_tasks(["DemoInstructSTS"])[0], _toy(tmp_path, device="cuda")

    def encode_record():
        return _run_record(enc, task, RunOptions(), {}, EncodeStats(), datetime.now(UTC), 0.0)["encode"]

    assert "device_batches" not in encode_record()  # nothing chosen: the record as before
    enc.encode_inputs(TEXTS[:10])
    assert encode_record()["device_batches"]["max_tokens"] == 17_408


def test_generative_budget_hooks():
    from bench.adapters.generative import GenerativeEncoder

    def hooks(**attrs):
        fake = SimpleNamespace(max_input_length=512, mask_length=3, **attrs)
        return GenerativeEncoder.budget_generates(fake), GenerativeEncoder.budget_length(fake)

    assert hooks(pooling="1st-gen", architecture="causal") == (False, 512)
    assert hooks(pooling="avg-gen", architecture="causal") == (True, 512)
    assert hooks(pooling="re-encode", architecture="seq2seq") == (True, 512)
    assert hooks(pooling="avg-gen", architecture="masked") == (False, 515)


@pytest.mark.slow
def test_smollm2s_shape_and_budget(smollm2_gguf):
    """The shape read from a real config (SmolLM2-135M: 9 heads of 64, 3 key/value heads) and its budget."""
    _, enc, _ = smollm2_gguf
    assert model_shape(enc.model, "bfloat16") == SMOLLM2
    assert device_budget(20 * GIB, SMOLLM2, max_length=512).max_tokens == 65_536
