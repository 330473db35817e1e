"""The embedding cache's shards (a launched run: each rank commits what it encodes to its own file) and the
vectors rank 0 holds until a rank's shard has committed them (bench/adapters/cache.py)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap

import numpy as np

from bench.adapters.cache import EmbeddingCache, cache_files, shard_dir
from cache_entries import entries, keys

FINGERPRINT = {"family": "st", "model": "org/m", "revision": "r1"}


def _vectors(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, 8)).astype(np.float32)


def test_a_ranks_shard_is_its_own_file_and_the_main_reader_serves_it(tmp_path):
    main = EmbeddingCache(tmp_path, FINGERPRINT)
    main.put_many(["a"], _vectors(1, 1))
    shard = EmbeddingCache(tmp_path, FINGERPRINT, rank=2)
    assert shard.path == shard_dir(main.path) / "rank2.sqlite" and shard.main_path == main.path
    vectors = _vectors(3, 2)
    shard.put_many(["b", "c", "d"], vectors)
    assert len(entries(main.path)) == 1  # the main file holds rank 0's vector only
    found = main.get_many(["a", "b", "d", "x"])
    assert sorted(found) == ["a", "b", "d"]
    np.testing.assert_array_equal(found["d"], vectors[2])
    (listed,) = cache_files(tmp_path)  # one cache, its shard counted in
    assert listed.path == main.path and listed.entries == 4 and listed.dim == 8


def test_a_shard_written_during_the_run_is_seen_and_one_of_another_world_size_too(tmp_path):
    main = EmbeddingCache(tmp_path, FINGERPRINT)
    assert main.get_many(["b"]) == {}  # no shard yet
    EmbeddingCache(tmp_path, FINGERPRINT, rank=1).put_many(["b"], _vectors(1))
    EmbeddingCache(tmp_path, FINGERPRINT, rank=7).put_many(["c"], _vectors(1, 3))  # an earlier 8-rank run
    assert sorted(main.get_many(["b", "c"])) == ["b", "c"]


def test_a_killed_ranks_committed_groups_are_reused(tmp_path):
    """A rank killed mid-run (os._exit: no flush, no close) leaves the groups its writer committed."""
    script = textwrap.dedent(f"""
        import os, numpy as np
        from bench.adapters.cache import EmbeddingCache
        shard = EmbeddingCache({str(tmp_path)!r}, {FINGERPRINT!r}, rank=1)
        shard.put_many_later(["a", "b"], np.ones((2, 8), dtype=np.float32), 1)
        shard.flush()
        os._exit(9)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 9, done.stderr
    found = EmbeddingCache(tmp_path, FINGERPRINT).get_many(["a", "b"])
    assert sorted(found) == ["a", "b"] and float(found["a"].sum()) == 8.0


def test_a_damaged_shard_row_is_skipped_not_served_and_the_shard_is_not_written(tmp_path):
    shard = EmbeddingCache(tmp_path, FINGERPRINT, rank=1)
    shard.put_many(["a", "b"], _vectors(2))
    shard.close()
    with sqlite3.connect(shard.path) as conn:
        conn.execute("UPDATE slots SET checksum = x'00' WHERE key = 'a'")
    conn.close()
    found = EmbeddingCache(tmp_path, FINGERPRINT).get_many(["a", "b"])
    assert sorted(found) == ["b"]
    assert len(entries(shard.path)) == 2  # rank 0 never writes another rank's file


def test_held_vectors_are_served_until_settled_and_kept_if_their_rank_fails(tmp_path):
    main = EmbeddingCache(tmp_path, FINGERPRINT)
    vectors = _vectors(4)
    first = main.hold(["a", "b"], vectors[:2])
    main.hold(["c", "d"], vectors[2:])
    np.testing.assert_array_equal(main.get_many(["a"])["a"], vectors[0])  # served before any rank commits it
    main.settle(first)  # its rank committed a and b to its shard: no longer held here
    assert sorted(main.get_many(["a", "b", "c", "d"])) == ["c", "d"]
    main.keep_held()  # c and d's rank failed before committing: they go to the main file
    main.flush()
    assert sorted(keys(main.path)) == ["c", "d"]


def test_oldest_pending_names_the_first_group_not_committed_or_failed(tmp_path, monkeypatch):
    """What a rank reports as committed: never a group its writer has not committed, or failed to."""
    import contextlib

    shard = EmbeddingCache(tmp_path, FINGERPRINT, rank=1)
    assert shard.oldest_pending() is None
    with shard._lock:  # the writer waits for the connection
        shard.put_many_later(["a"], _vectors(1), 5)
        shard.put_many_later(["b"], _vectors(1), 9)
        assert shard.oldest_pending() == 5
    shard.flush()
    assert shard.oldest_pending() is None
    monkeypatch.setattr(shard, "_put_many", lambda keys, vectors: (_ for _ in ()).throw(OSError("disk")))
    shard.put_many_later(["c"], _vectors(1), 12)
    with contextlib.suppress(OSError):
        shard.flush()
    assert shard.oldest_pending() == 12  # a failed group is never reported as committed
