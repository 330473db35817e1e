"""Token-budget batching and out-of-memory recovery in the shared encoder (bench/adapters/base.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bench.adapters.base import plan_batches
from bench.core.errors import ConfigError, EncodingError
from toy_encoders import HashEncoder


def test_plan_batches_by_count_and_token_budget():
    assert plan_batches([5, 4, 3, 2, 1], batch_size=2) == [2, 2, 1]
    # budget 10 padded tokens: [5,4] = 2x5 = 10 fits, adding 3 makes 3x5 = 15
    assert plan_batches([5, 4, 3, 2, 1], batch_size=32, max_tokens=10) == [2, 3]
    # [3,2,1] = 3x3 = 9 fits; a row longer than the budget goes alone
    assert plan_batches([50, 3, 2, 1], batch_size=32, max_tokens=10) == [1, 3]
    assert plan_batches([], batch_size=4) == []


@pytest.fixture(autouse=True)
def freed(monkeypatch) -> list[None]:
    """One entry per time the encoder frees accelerator memory after an out-of-memory error. The real
    `free_accelerator_memory` runs `gc.collect()`, which over a whole test session's heap takes about a
    second a split: these tests count splits, not collections."""
    calls: list[None] = []
    monkeypatch.setattr("bench.adapters.batching.free_accelerator_memory", lambda: calls.append(None))
    return calls


def _oom_encoder(tmp_path, limit):
    enc = HashEncoder(cache_dir=tmp_path, batch_size=8)
    calls: list[int] = []

    def fn(batch):
        calls.append(len(batch))
        if len(batch) > limit:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return np.array([[float(x)] for x in batch])

    return enc, fn, calls


def test_out_of_memory_splits_that_batch_only_and_counts_the_splits(tmp_path, caplog, freed):
    enc, fn, calls = _oom_encoder(tmp_path, limit=3)
    with caplog.at_level("WARNING", logger="bench.adapters.batching"):
        got = enc.run_batches(list(range(20)), fn, lengths=[1] * 20)
    np.testing.assert_array_equal(got[:, 0], np.arange(20))  # in input order
    # 8 fails -> 4 fails -> 2 + 2; 4 fails -> 2 + 2; the next batch of 8 again (full size), and so on
    assert calls == [8, 4, 2, 2, 4, 2, 2] * 2 + [4, 2, 2]
    assert sum(c for c in calls if c <= 3) == 20  # every input encoded exactly once
    assert enc.stats.oom_splits == 7 and len(freed) == 7  # memory freed before each split
    splits = [r.getMessage() for r in caplog.records if "out of memory" in r.getMessage()]
    assert (
        len(splits) == 7
        and splits[0] == "toy/hash: out of memory on a batch of 8; running it as 4 + 4 rows (this batch only)."
    )
    calls.clear()
    enc.run_batches(list(range(5)), fn, lengths=[1] * 5)  # a later call starts from the full size again
    assert calls == [5, 2, 3] and enc.stats.oom_splits == 8  # odd: the longer rows in the smaller half
    calls.clear()
    enc.run_batches(list(range(7)), fn, lengths=[1] * 7)
    assert calls == [7, 3, 4, 2, 2] and enc.stats.oom_splits == 10


def test_out_of_memory_split_respects_the_token_budget_plan(tmp_path):
    """Batches are planned once (rows and token budget: 4 rows of 10 tokens); a split stays inside its batch
    and the next batch keeps the planned size."""
    enc = HashEncoder(cache_dir=tmp_path, batch_size=8, max_tokens=40)
    calls: list[list[int]] = []

    def fn(batch):
        calls.append(list(batch))
        if len(batch) > 2 and batch[0] == 0:  # the first planned batch runs out of memory
            raise RuntimeError("MPS backend out of memory")
        return np.array([[float(x)] for x in batch])

    got = enc.run_batches(list(range(8)), fn, lengths=[10] * 8)
    np.testing.assert_array_equal(got[:, 0], np.arange(8))
    assert calls == [[0, 1, 2, 3], [0, 1], [2, 3], [4, 5, 6, 7]] and enc.stats.oom_splits == 1


def test_out_of_memory_on_one_input_is_a_clear_error(tmp_path):
    enc, fn, _ = _oom_encoder(tmp_path, limit=0)
    with pytest.raises(EncodingError, match="out of memory on a single input"):
        enc.run_batches([1, 2], fn, lengths=[7, 7])


def test_other_errors_are_not_retried(tmp_path):
    enc = HashEncoder(cache_dir=tmp_path)
    calls = []

    def fn(batch):
        calls.append(1)
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        enc.run_batches([1, 2, 3], fn, lengths=[1, 1, 1])
    assert calls == [1]


def test_token_budget_shapes_batches(tmp_path):
    enc = HashEncoder(cache_dir=tmp_path, batch_size=100, max_tokens=12)
    sizes = []
    enc.run_batches(
        ["x" * 6, "x" * 6, "x" * 4, "x" * 4, "x" * 4, "x"], lambda b: (sizes.append(len(b)), np.ones((len(b), 1)))[1]
    )
    assert sizes == [2, 3, 1]
    with pytest.raises(ConfigError, match="max_tokens"):
        HashEncoder(cache_dir=tmp_path, max_tokens=0)


def test_the_run_record_names_oom_splits_only_when_there_were_some(tmp_path):
    from datetime import UTC, datetime

    from bench.adapters.base import EncodeStats
    from bench.run.runner import RunOptions, _run_record
    from bench.tasks import get_tasks

    task, enc = get_tasks(["DemoInstructSTS"])[0], HashEncoder(cache_dir=tmp_path)

    def encode_record(stats):
        return _run_record(enc, task, RunOptions(), {}, stats, datetime.now(UTC), 0.0)["encode"]

    assert "oom_splits" not in encode_record(EncodeStats(encoded=4))  # a run without one records as before
    assert encode_record(EncodeStats(encoded=4, oom_splits=3))["oom_splits"] == 3
