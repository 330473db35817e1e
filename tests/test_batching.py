"""Token-budget batching and out-of-memory recovery in the shared encoder (adapters/base.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from adapters.base import plan_batches
from bench.core.errors import ConfigError, EncodingError
from toy_encoders import HashEncoder


def test_plan_batches_by_count_and_token_budget():
    assert plan_batches([5, 4, 3, 2, 1], batch_size=2) == [2, 2, 1]
    # budget 10 padded tokens: [5,4] = 2x5 = 10 fits, adding 3 makes 3x5 = 15
    assert plan_batches([5, 4, 3, 2, 1], batch_size=32, max_tokens=10) == [2, 3]
    # [3,2,1] = 3x3 = 9 fits; a row longer than the budget goes alone
    assert plan_batches([50, 3, 2, 1], batch_size=32, max_tokens=10) == [1, 3]
    assert plan_batches([], batch_size=4) == []


def _oom_encoder(tmp_path, limit):
    enc = HashEncoder(cache_dir=tmp_path, batch_size=8)
    calls: list[int] = []

    def fn(batch):
        calls.append(len(batch))
        if len(batch) > limit:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return np.array([[float(x)] for x in batch])

    return enc, fn, calls


def test_out_of_memory_halves_the_batch_and_keeps_finished_batches(tmp_path):
    enc, fn, calls = _oom_encoder(tmp_path, limit=3)
    got = enc.run_batches(list(range(20)), fn, lengths=[1] * 20)
    np.testing.assert_array_equal(got[:, 0], np.arange(20))
    assert calls[:3] == [8, 4, 2]  # 8 fails, 4 fails, 2 fits
    assert sum(c for c in calls if c <= 3) == 20  # every input encoded exactly once
    assert enc._oom_limits == (2, None)
    calls.clear()
    enc.run_batches(list(range(4)), fn, lengths=[1] * 4)  # later groups start from the smaller limit
    assert calls == [2, 2]


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
    enc.run_batches(["x" * 6, "x" * 6, "x" * 4, "x" * 4, "x" * 4, "x"], lambda b: (sizes.append(len(b)), np.ones((len(b), 1)))[1])
    assert sizes == [2, 3, 1]
    with pytest.raises(ConfigError, match="max_tokens"):
        HashEncoder(cache_dir=tmp_path, max_tokens=0)
