"""The embedding cache's file on disk: its size beside the vectors it holds, what a closed cache leaves beside it,
and files written before its blocks."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from bench.adapters.cache import EmbeddingCache, cache_files, input_key, shard_path
from cache_entries import checksum, entries, keys
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
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr
    path = proc.stdout.strip().splitlines()[-1]
    assert not (tmp_path / (path.rsplit("/", 1)[-1] + "-wal")).exists()
    reopened = EmbeddingCache(tmp_path, FINGERPRINT)
    assert sorted(reopened.get_many(["a", "b"])) == ["a", "b"]
    reopened.close()


@pytest.mark.parametrize("dim", [384, 768, 1024, 4096])
def test_a_closed_cache_is_at_most_1_1_times_its_raw_vectors(tmp_path, dim):
    """Vectors committed in the encoder's groups (256) lie back to back in their group's block: the file, once
    closed, is at most 1.1x the float32 bytes it holds (a row per vector was 1.37x at 384 dimensions)."""
    n = 2000
    vectors = np.random.default_rng(dim).standard_normal((n, dim)).astype(np.float32)
    keys = [input_key(i) for i in range(n)]
    cache = EmbeddingCache(tmp_path, {**FINGERPRINT, "dim": dim})
    for start in range(0, n, 256):
        cache.put_many(keys[start : start + 256], vectors[start : start + 256])
    cache.close()
    assert not cache.path.with_name(cache.path.name + "-wal").exists()
    assert cache.path.stat().st_size <= 1.1 * vectors.nbytes
    again = EmbeddingCache(tmp_path, {**FINGERPRINT, "dim": dim})
    found = again.get_many(keys[::7] + keys[1:300])  # parts of blocks, and whole ones
    assert all(np.array_equal(found[k], vectors[keys.index(k)]) for k in keys[::7] + keys[1:300])
    again.close()


OLD_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE emb (key TEXT PRIMARY KEY, dim INTEGER, vec BLOB, checksum BLOB);
"""


def _old_file(path, vectors: np.ndarray, keys: list[str]) -> None:
    """A cache file as written before blocks: a row per vector in `emb`."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(OLD_SCHEMA)
    with conn:
        conn.execute("INSERT INTO meta VALUES ('fingerprint', ?)", (json.dumps(FINGERPRINT, sort_keys=True),))
        conn.execute("INSERT INTO meta VALUES ('dim', ?)", (str(vectors.shape[1]),))
        conn.executemany(
            "INSERT INTO emb VALUES (?, ?, ?, ?)",
            [(k, v.size, v.tobytes(), checksum(v.tobytes())) for k, v in zip(keys, vectors, strict=True)],
        )
    conn.close()


def test_a_file_written_before_blocks_is_served_and_grows_in_blocks(tmp_path):
    vectors = _vectors(4, 16)
    first = EmbeddingCache(tmp_path, FINGERPRINT)
    first.close()
    path = first.path
    path.unlink()
    _old_file(path, vectors, ["a", "b", "c", "d"])
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE emb SET checksum = x'00' WHERE key = 'b'")
    conn.close()
    cache = EmbeddingCache(tmp_path, FINGERPRINT)
    assert cache.path == path and cache.count() == 4
    found = cache.get_many(["a", "b", "c", "d"])
    assert sorted(found) == ["a", "c", "d"]  # b's damaged row is not served, and is dropped
    assert all(np.array_equal(found[k], vectors[i]) for i, k in enumerate("abcd") if k != "b")
    cache.put_many(["b", "c"], _vectors(2, 16) + 1)  # recomputed b, and c stored again
    assert keys(path) == {"b", "c"} and cache.count() == 4  # the new entries are in blocks, the old rows gone
    np.testing.assert_array_equal(cache.get_many(["c"])["c"], _vectors(2, 16)[1] + 1)
    (listed,) = cache_files(tmp_path)
    assert listed.entries == 4 and listed.dim == 16
    cache.close()


def test_an_old_read_only_file_and_an_old_shard_are_served(tmp_path, monkeypatch):
    import bench.adapters.cache

    vectors = _vectors(3, 16)
    main = EmbeddingCache(tmp_path, FINGERPRINT)
    main.close()
    main.path.unlink()
    _old_file(main.path, vectors[:2], ["a", "b"])
    shard = shard_path(main.path, 1)
    shard.parent.mkdir()
    _old_file(shard, vectors[2:], ["c"])
    monkeypatch.setattr(bench.adapters.cache.os, "access", lambda p, mode: False)  # a read-only mount
    reader = EmbeddingCache(tmp_path, FINGERPRINT)
    assert reader.read_only
    found = reader.get_many(["a", "b", "c"])
    assert sorted(found) == ["a", "b", "c"] and np.array_equal(found["c"], vectors[2])
    reader.close()


def test_a_block_goes_when_none_of_its_keys_is_left(tmp_path):
    """Keys stored again or dropped leave no block behind that nothing reads."""
    cache = EmbeddingCache(tmp_path, FINGERPRINT)
    cache.put_many(["a", "b"], _vectors(2, 8))
    cache.put_many(["a", "b"], _vectors(2, 8) + 1)  # the first block's keys all point at the second now
    cache.put_many(["c"], _vectors(1, 8))
    cache.delete(["c"])
    with sqlite3.connect(cache.path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM blocks").fetchone()[0] == 1
    assert len(entries(cache.path)) == 2 and cache.count() == 2
    np.testing.assert_array_equal(cache.get_many(["a"])["a"], _vectors(2, 8)[0] + 1)
    cache.close()
