"""The embedding cache's file on disk: what a closed cache leaves beside it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np

from bench.adapters.cache import EmbeddingCache
from conftest import ROOT

FINGERPRINT = {"family": "toy", "model": "toy/m", "revision": "v1"}


def _vectors(n: int, dim: int = 384) -> np.ndarray:
    return np.random.default_rng(0).standard_normal((n, dim)).astype(np.float32)


def test_a_closed_cache_leaves_no_write_ahead_log(tmp_path):
    cache = EmbeddingCache(tmp_path, FINGERPRINT)
    cache.put_many([f"k{i}" for i in range(200)], _vectors(200))
    cache.close()
    assert not cache.path.with_name(cache.path.name + "-wal").exists()
    again = EmbeddingCache(tmp_path, FINGERPRINT)
    assert np.array_equal(again.get_many(["k7"])["k7"], _vectors(200)[7])
    again.close()
    cache.close()  # twice is harmless


def test_a_process_that_exits_without_closing_leaves_no_write_ahead_log(tmp_path):
    """A run never closes its encoder's cache; the exit handler commits what was handed over and folds the log."""
    script = textwrap.dedent(
        f"""
        import numpy as np
        from bench.adapters.cache import EmbeddingCache
        cache = EmbeddingCache({str(tmp_path)!r}, {FINGERPRINT!r})
        cache.put_many_later(["a", "b"], np.ones((2, 8), dtype=np.float32))
        print(cache.path)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    path = proc.stdout.strip().splitlines()[-1]
    assert not (tmp_path / (path.rsplit("/", 1)[-1] + "-wal")).exists()
    reopened = EmbeddingCache(tmp_path, FINGERPRINT)
    assert sorted(reopened.get_many(["a", "b"])) == ["a", "b"]
    reopened.close()
