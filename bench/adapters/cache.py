"""On-disk embedding cache shared across tasks and runs.

One SQLite file per model fingerprint (model id, revision and every adapter setting that changes a
vector); inside it, one entry per model input, keyed by the hash of the exact input the adapter builds
from (instruction template, instruction, text). An instruction-blind template therefore maps every
instruction to the same key, and that text is embedded once.

The file stores a committed group as one row of `blocks`, its float32 vectors back to back (SQLite spills
them into fully packed overflow pages), and each key as a row of `slots` (`WITHOUT ROWID`: the key, its block,
its place in the block and its vector's checksum). A row per vector, as files before held (`emb`), left part
of every page empty (1.37x the raw bytes at 384 dimensions); blocks of the encoder's groups cost 1.05x at
384 and 1.01x at 4,096 (`benchmarks/fixed_costs.py`). A file written before is read as it is: its `emb` rows
are served and dropped like any entry, and what is stored in it from then on goes to blocks. A block whose
keys were all stored again or dropped is deleted.

SQLite gives atomic transactions (a killed run leaves whole groups or nothing). Every vector carries a
checksum, and the file records the model's dimension: an entry whose checksum fails, whose dimension
differs or that holds NaN/inf is reported, dropped and recomputed, never served. A file SQLite says is
corrupt is moved aside. A cache the process cannot write (read-only mount, another user's folder) is
used read-only with a warning: it serves what it holds and is never moved aside or changed. Write
failures the user can fix (full disk, a file where the folder should be) become one `error:` line
(`bench.core.errors.StorageError`); groups committed before stay.

`put_many_later` commits on a writer thread, beside the encoding. Vectors handed over are served from
memory until committed; one lock keeps the connection to one thread at a time; `flush` waits for the
writer. The encoder flushes at the end of each call and on every failure path, and the process's exit
flushes too, so nothing handed over is lost.

Shards (a launched run, `bench/adapters/distributed/`): each rank other than 0 commits the vectors it
encodes to its own file, `<main stem>.shards/rank<R>.sqlite` beside the main file (`EmbeddingCache(...,
rank=R)`), so no two processes of a run write one SQLite file and rank 0 commits only its own batches.
The main file's reader (rank 0, a plain run) serves main + every shard it finds as one cache: a lookup
asks the main file, then each shard (read-only) for the keys still missing. Shards are named by rank, not
by world size: a rerun with more or fewer ranks reads every shard there is and appends to its own. A
rank killed mid-run leaves its committed groups in its shard (SQLite transactions), and a rerun reuses
them. Shards are never merged: merging would put every vector through rank 0's SQLite again (the cost
shards remove), and reading N shards costs N more indexed lookups per call. Deleting the main file
without its `.shards` folder leaves vectors that still serve the same fingerprint, which is correct.
Until a rank's shard has committed a batch rank 0 received, rank 0 holds those vectors (`hold`: served
by lookups, committed to the main file by `keep_held` if that rank fails), so a lookup never misses a
vector rank 0 already has, and a failure loses nothing that reached rank 0.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import os
import queue
import re
import sqlite3
import threading
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bench.core.errors import StorageError
from bench.core.fileio import ensure_dir, sha256_json
from bench.core.paths import cache_root

if TYPE_CHECKING:
    from bench.core.json_types import JSONObject

logger = logging.getLogger(__name__)

_SQL_VARS = 900  # stay under SQLite's default host-parameter limit


def default_cache_dir() -> Path:
    """`$INSTRUCT_BENCH_CACHE/embeddings`, else `~/.cache/instruct-bench/embeddings`."""
    return cache_root() / "embeddings"


def input_key(model_input: object) -> str:
    """Stable key of one model input (a string, or a JSON list such as [prompt, text])."""
    data = json.dumps(model_input, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:40]


def _checksum(blob: bytes) -> bytes:
    return hashlib.blake2b(blob, digest_size=8).digest()


def _sqlite_code(error: sqlite3.Error) -> int:
    """SQLite's primary result code of an error (extended codes carry it in the low byte)."""
    return (getattr(error, "sqlite_errorcode", 0) or 0) & 0xFF


def _is_corrupt(error: sqlite3.Error) -> bool:
    return _sqlite_code(error) in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


def _is_read_only(error: sqlite3.Error) -> bool:
    return _sqlite_code(error) in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM)


def _is_full(error: sqlite3.Error) -> bool:
    return _sqlite_code(error) == sqlite3.SQLITE_FULL or "disk is full" in str(error)


class EmbeddingCache:
    """Vectors by input key for one model fingerprint."""

    def __init__(self, root: Path, fingerprint: JSONObject, *, rank: int = 0) -> None:
        """The cache of `fingerprint` under `root`: its main file (rank 0), or rank `rank`'s shard of it."""
        self.fingerprint = fingerprint
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", str(fingerprint.get("model", "model")))[-60:]
        self.main_path = Path(root).expanduser() / f"{slug}-{sha256_json(fingerprint)[:16]}.sqlite"
        self.rank = rank
        self.path = shard_path(self.main_path, rank) if rank else self.main_path  # the file this object writes
        self.read_only = False
        self._dim: int | None = None
        self._writer: _Writer | None = None
        self._lock = threading.RLock()  # the connection, one thread at a time (the writer's and the caller's)
        self._shards: dict[Path, sqlite3.Connection | None] = {}  # read-only, the main file's reader only
        self._held: dict[int, list[str]] = {}  # token -> keys, vectors another rank has yet to commit
        self._held_vectors: dict[str, np.ndarray] = {}
        self._held_lists: dict[int, np.ndarray] = {}
        self._tokens = 0
        self._conn = self._open()
        _OPEN.add(self)

    def _open(self) -> sqlite3.Connection | None:
        """A connection; read-only (with a warning) when the cache cannot be written, None when there is
        no readable cache file at all (then nothing is cached)."""
        if self.rank and not self.path.parent.is_dir():  # a rank's first shard: its folder beside the main file
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:  # the cache folder is not writable: this rank sends its vectors uncommitted
                return self._open_read_only(str(e))
        if self.path.parent.is_dir() and not self._writable():
            return self._open_read_only("it is not writable")
        ensure_dir(self.path.parent, what="the embedding cache", option="--cache-dir")
        try:
            return self._connect()
        except sqlite3.DatabaseError as e:
            if _is_read_only(e):
                return self._open_read_only(str(e))
            if _is_full(e):
                raise self._full_error(e) from e
            if not _is_corrupt(e):
                raise
            aside = self.path.with_suffix(".corrupt")
            logger.warning("Embedding cache %s is corrupt (%s); moved to %s and starting afresh.", self.path, e, aside)
            self.path.replace(aside)
            return self._connect()

    def _writable(self) -> bool:
        folder_ok = os.access(self.path.parent, os.W_OK | os.X_OK)
        return folder_ok and (not self.path.exists() or os.access(self.path, os.W_OK))

    def _open_read_only(self, why: str) -> sqlite3.Connection | None:
        """Serve what a cache we cannot write holds; write nothing, move nothing."""
        self.read_only = True
        if not self.path.is_file():
            logger.warning(
                "Embedding cache %s cannot be created (%s); running without a cache. "
                "Give a writable --cache-dir to keep vectors.",
                self.path,
                why,
            )
            return None
        logger.warning(
            "Embedding cache %s is read-only (%s); it is used read-only: cached vectors are "
            "served, new ones are not stored.",
            self.path,
            why,
        )
        # Plain read-only mode reads a WAL left by a killed writer; on a read-only mount it cannot make the
        # WAL's -shm file, and immutable mode (which creates nothing) reads the main file alone.
        uri = self.path.resolve().as_uri()
        for mode in ("ro", "ro&immutable=1"):
            conn = sqlite3.connect(f"{uri}?mode={mode}", uri=True, timeout=60)
            try:
                conn.execute("SELECT COUNT(*) FROM meta").fetchone()
                return conn
            except sqlite3.DatabaseError as e:
                conn.close()
                error = e
        logger.warning("Embedding cache %s cannot be read (%s); running without it.", self.path, error)
        return None

    def _full_error(self, error: sqlite3.Error) -> StorageError:
        return StorageError(
            f"Cannot write the embedding cache {self.path}: the disk is full ({error}). Fix: free some space, "
            f"or point --cache-dir at another disk, or run with --no-cache; vectors cached before are kept."
        )

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=60, check_same_thread=False)  # one thread at a time (_lock)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        conn.execute(_BLOCKS)
        conn.execute(_SLOTS)
        conn.execute(
            "INSERT OR IGNORE INTO meta VALUES ('fingerprint', ?)", (json.dumps(self.fingerprint, sort_keys=True),)
        )
        conn.commit()
        return conn

    @property
    def dim(self) -> int | None:
        """The model's vector dimension, recorded with the first vectors stored (None before)."""
        if self._dim is None and self._conn is not None:
            with self._lock:
                row = self._conn.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()
            self._dim = int(row[0]) if row else None
        return self._dim

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors for the keys that are cached and intact (checksum, dimension, finite values)."""
        found: dict[str, np.ndarray] = {}
        damaged: list[str] = []
        if self._conn is None:
            return found
        if self._writer is not None:  # handed over, not yet committed
            found = self._writer.pending(keys)
        with self._lock:
            found.update((k, self._held_vectors[k]) for k in keys if k in self._held_vectors and k not in found)
        keys = [k for k in keys if k not in found]
        dim = self.dim
        with self._lock:
            damaged = _lookup(self._conn, keys, dim, found)
        if damaged:
            logger.warning(
                "Embedding cache %s: %d damaged entries (checksum, dimension or NaN) not used; they will "
                "be recomputed.",
                self.path,
                len(damaged),
            )
            self.delete(damaged)
        if not self.rank:
            self._get_from_shards([k for k in keys if k not in found], dim, found)
        return found

    def _get_from_shards(self, keys: list[str], dim: int | None, found: dict[str, np.ndarray]) -> None:
        """Add what the shards of other ranks hold of `keys` (read-only: a damaged row is skipped, not deleted)."""
        if not keys:
            return
        try:
            paths = sorted(shard_dir(self.main_path).glob("rank*.sqlite"))
        except OSError:
            return
        for path in paths:
            if path not in self._shards:
                self._shards[path] = _open_shard(path)
            conn = self._shards[path]
            if conn is None:
                continue
            try:
                with self._lock:
                    damaged = _lookup(conn, keys, dim, found)
            except sqlite3.DatabaseError as e:
                logger.warning("Embedding cache shard %s cannot be read (%s); not used.", path, e)
                self._shards[path] = None
                continue
            if damaged:
                logger.warning("Embedding cache shard %s: %d damaged entries not used.", path, len(damaged))
            keys = [k for k in keys if k not in found]
            if not keys:
                return

    # ---------------------------------------------------------------- vectors another rank is committing
    def hold(self, keys: Sequence[str], vectors: np.ndarray) -> int:
        """Serve `vectors` (which another rank is committing to its shard) until `settle` or `keep_held`."""
        with self._lock:
            self._tokens += 1
            self._held[self._tokens] = list(keys)
            self._held_lists[self._tokens] = vectors
            self._held_vectors.update(zip(keys, vectors, strict=True))
            return self._tokens

    def settle(self, token: int) -> None:
        """The other rank committed the vectors held under `token`: stop holding them."""
        with self._lock:
            for key in self._held.pop(token, ()):
                self._held_vectors.pop(key, None)
            self._held_lists.pop(token, None)

    def keep_held(self) -> None:
        """Commit every held vector to this file (their rank failed before committing them)."""
        with self._lock:
            held = [(self._held[t], self._held_lists[t]) for t in sorted(self._held)]
            self._held.clear()
            self._held_lists.clear()
            self._held_vectors.clear()
        for keys, vectors in held:
            self.put_many_later(keys, vectors)

    def put_many_later(self, keys: Iterable[str], vectors: np.ndarray, tag: int = 0) -> bool:
        """`put_many` on the writer thread; an error it met (a full disk) is raised here or by `flush`.
        False when nothing will be stored (a read-only cache). `tag` (increasing) names the group for
        `oldest_pending`."""
        if self.read_only or self._conn is None:
            return False
        if self._writer is None:
            self._writer = _Writer(self)
        self._writer.put(list(keys), np.asarray(vectors, dtype=np.float32), tag)  # the caller hands it over
        return True

    def oldest_pending(self) -> int | None:
        """The tag of the oldest group handed over and not committed (or whose commit failed), else None."""
        return self._writer.oldest_pending() if self._writer is not None else None

    def flush(self) -> None:
        """Wait until every `put_many_later` is committed; raise the writer's error, if any."""
        if self._writer is not None:
            self._writer.flush()

    def put_many(self, keys: Iterable[str], vectors: np.ndarray) -> None:
        """Store a group of vectors in one transaction (nothing, for a read-only cache)."""
        self.flush()
        self._put_many(keys, vectors)

    def _put_many(self, keys: Iterable[str], vectors: np.ndarray) -> None:
        """The group as one block (its vectors back to back) and a slot per key, in one transaction."""
        if self.read_only or self._conn is None:
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        keys = list(keys)
        if vectors.ndim != 2 or len(keys) != len(vectors):
            raise ValueError(f"{len(keys)} keys for vectors of shape {vectors.shape}")
        width = vectors.shape[1] * 4
        data = vectors.tobytes()  # the block: one copy for the group
        try:
            with self._lock, self._conn:
                if self.dim is None:
                    self._conn.execute("INSERT OR REPLACE INTO meta VALUES ('dim', ?)", (str(vectors.shape[1]),))
                    self._dim = int(vectors.shape[1])
                if not keys:
                    return
                replaced = _blocks_of(self._conn, keys)
                block = self._conn.execute(
                    "INSERT INTO blocks (dim, vectors) VALUES (?, ?)", (vectors.shape[1], data)
                ).lastrowid
                self._conn.executemany(
                    "INSERT OR REPLACE INTO slots VALUES (?, ?, ?, ?)",
                    [(key, block, i, _checksum(data[i * width : (i + 1) * width])) for i, key in enumerate(keys)],
                )
                _drop_unused_blocks(self._conn, replaced)
                if _LEGACY in _tables(self._conn):  # a file written before blocks: its row of a key goes
                    self._conn.executemany(f"DELETE FROM {_LEGACY} WHERE key = ?", [(k,) for k in keys])
        except sqlite3.OperationalError as e:
            if _is_full(e):
                raise self._full_error(e) from e
            raise

    def delete(self, keys: Sequence[str]) -> None:
        self.flush()
        if self.read_only or self._conn is None:
            return
        with self._lock, self._conn:
            blocks = _blocks_of(self._conn, keys)
            self._conn.executemany("DELETE FROM slots WHERE key = ?", [(k,) for k in keys])
            _drop_unused_blocks(self._conn, blocks)
            if _LEGACY in _tables(self._conn):
                self._conn.executemany(f"DELETE FROM {_LEGACY} WHERE key = ?", [(k,) for k in keys])

    def count(self) -> int:
        self.flush()
        if self._conn is None:
            return 0
        with self._lock:
            return _entries(self._conn)[0]

    def close(self) -> None:
        """Commit what was handed over, then fold the write-ahead log into the file and close it: a closed
        cache is one file, with no `-wal` (which can grow to the size of a run's vectors) left beside it."""
        self.flush()
        if self._conn is not None:
            with self._lock:
                if not self.read_only:
                    try:
                        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                    except sqlite3.Error as e:  # another process is reading it: its last close folds the log
                        logger.debug("Embedding cache %s: log not folded in (%s)", self.path, e)
                self._conn.close()
                self._conn = None
        for conn in self._shards.values():
            if conn is not None:
                conn.close()
        self._shards.clear()


def shard_dir(main_path: Path) -> Path:
    """The folder of the other ranks' shards of the cache file `main_path`: `<stem>.shards`."""
    return main_path.with_suffix(".shards")


def shard_path(main_path: Path, rank: int) -> Path:
    return shard_dir(main_path) / f"rank{rank}.sqlite"


def _open_shard(path: Path) -> sqlite3.Connection | None:
    """A read-only connection to another rank's shard (which that rank may be writing), None if unreadable."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=60, check_same_thread=False)
        conn.execute("SELECT COUNT(*) FROM meta").fetchone()
        return conn
    except sqlite3.Error as e:
        logger.warning("Embedding cache shard %s cannot be read (%s); not used.", path, e)
        return None


_BLOCKS = "CREATE TABLE IF NOT EXISTS blocks (id INTEGER PRIMARY KEY, dim INTEGER NOT NULL, vectors BLOB NOT NULL)"
_SLOTS = (
    "CREATE TABLE IF NOT EXISTS slots (key TEXT PRIMARY KEY, block INTEGER NOT NULL, slot INTEGER NOT NULL, "
    "checksum BLOB NOT NULL) WITHOUT ROWID"
)
_LEGACY = "emb"  # a row per vector (key, dim, vec, checksum): files written before blocks


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _chunks(keys: Sequence[str]) -> Iterable[tuple[list[str], str]]:
    """`keys` in runs SQLite takes as host parameters, each with its `?,?,...`."""
    for start in range(0, len(keys), _SQL_VARS):
        chunk = list(keys[start : start + _SQL_VARS])
        yield chunk, ",".join("?" * len(chunk))


def _blocks_of(conn: sqlite3.Connection, keys: Sequence[str]) -> set[int]:
    """The blocks that hold a slot of `keys`."""
    blocks: set[int] = set()
    for chunk, marks in _chunks(keys):
        blocks.update(b for (b,) in conn.execute(f"SELECT block FROM slots WHERE key IN ({marks})", chunk))
    return blocks


def _drop_unused_blocks(conn: sqlite3.Connection, blocks: set[int]) -> None:
    """Delete those of `blocks` that no slot points to any more (every key replaced or dropped); a block that
    still serves a key keeps the bytes of its dropped ones (only a damaged or re-stored key leaves such bytes)."""
    if blocks:
        marks = ",".join("?" * len(blocks))
        conn.execute(f"DELETE FROM blocks WHERE id IN ({marks}) AND id NOT IN (SELECT block FROM slots)", list(blocks))


def _entries(conn: sqlite3.Connection) -> tuple[int, int | None]:
    """(entries, largest dimension) of a cache file, blocks and rows of a file written before blocks."""
    tables = _tables(conn)
    entries, dim = 0, None
    if "slots" in tables:
        entries += conn.execute("SELECT COUNT(*) FROM slots").fetchone()[0]
        dim = conn.execute("SELECT MAX(dim) FROM blocks").fetchone()[0]
    if _LEGACY in tables:
        count, legacy_dim = conn.execute(f"SELECT COUNT(*), MAX(dim) FROM {_LEGACY}").fetchone()
        entries += count
        dim = max((d for d in (dim, legacy_dim) if d is not None), default=None)
    return int(entries), dim


def _lookup(
    conn: sqlite3.Connection | None, keys: Sequence[str], dim: int | None, found: dict[str, np.ndarray]
) -> list[str]:
    """Add the intact entries of `keys` in `conn` to `found`; return the keys of damaged entries."""
    if conn is None:
        return []
    tables = _tables(conn)
    damaged = _lookup_blocks(conn, keys, dim, found) if "slots" in tables else []
    if _LEGACY in tables:
        skip = set(damaged)
        damaged += _lookup_rows(conn, [k for k in keys if k not in found and k not in skip], dim, found)
    return damaged


def _lookup_blocks(
    conn: sqlite3.Connection, keys: Sequence[str], dim: int | None, found: dict[str, np.ndarray]
) -> list[str]:
    """`_lookup` in blocks: a block read whole when most of it is wanted, else each wanted vector read in place,
    in slot order (incremental blob I/O: the pages of the vectors not wanted are not copied)."""
    wanted: dict[int, list[tuple[int, str, bytes]]] = {}
    for chunk, marks in _chunks(keys):
        for key, block, slot, checksum in conn.execute(
            f"SELECT key, block, slot, checksum FROM slots WHERE key IN ({marks})", chunk
        ):
            if key not in found:
                wanted.setdefault(block, []).append((slot, key, checksum))
    damaged: list[str] = []
    for block, slots in sorted(wanted.items()):
        row = conn.execute("SELECT dim FROM blocks WHERE id = ?", (block,)).fetchone()
        if row is None:  # a slot whose block is gone
            damaged += [key for _, key, _ in slots]
            continue
        block_dim, width = int(row[0]), 4 * int(row[0])
        try:
            data = conn.blobopen("blocks", "vectors", block, readonly=True)
        except sqlite3.OperationalError:  # not a blob (a NULL, a number)
            damaged += [key for _, key, _ in slots]
            continue
        with data:
            size = len(data)
            whole = data.read() if 2 * len(slots) * width >= size else None  # most of it: one read
            for slot, key, checksum in sorted(slots):
                start = slot * width
                vec = b""
                if start >= 0 and start + width <= size:
                    if whole is not None:
                        vec = whole[start : start + width]
                    else:
                        data.seek(start)
                        vec = data.read(width)
                if not _intact(block_dim, vec, checksum, dim):
                    damaged.append(key)
                    continue
                found[key] = np.frombuffer(vec, dtype=np.float32)
    return damaged


def _lookup_rows(
    conn: sqlite3.Connection, keys: Sequence[str], dim: int | None, found: dict[str, np.ndarray]
) -> list[str]:
    """`_lookup` in the rows of a file written before blocks (a row per vector)."""
    damaged: list[str] = []
    for chunk, marks in _chunks(keys):
        rows = conn.execute(f"SELECT key, dim, vec, checksum FROM {_LEGACY} WHERE key IN ({marks})", chunk).fetchall()
        for key, row_dim, blob, checksum in rows:
            if key in found:
                continue
            if not _intact(row_dim, blob, checksum, dim):
                damaged.append(key)
                continue
            found[key] = np.frombuffer(blob, dtype=np.float32)
    return damaged


_OPEN: weakref.WeakSet[EmbeddingCache] = weakref.WeakSet()


@atexit.register
def _flush_all() -> None:
    """At exit, commit what every cache was handed (a finished run returns before its last groups are in), and
    close it, so that its write-ahead log is folded into the file (`close`)."""
    for cache in list(_OPEN):
        try:
            cache.flush()
        except Exception as e:  # noqa: BLE001 - too late to stop anything: say what was not kept
            logger.warning("Embedding cache %s: the last vectors were not stored (%s).", cache.path, e)
        try:
            cache.close()
        except Exception as e:  # noqa: BLE001 - the vectors are committed; only the log stays beside the file
            logger.debug("Embedding cache %s: not closed at exit (%s)", cache.path, e)


class _Writer:
    """One cache's writer thread: commits queued groups in order; keeps the first error for `flush`."""

    def __init__(self, cache: EmbeddingCache) -> None:
        self.cache = cache
        self.queue: queue.Queue = queue.Queue()
        self.error: BaseException | None = None
        self._pending: dict[str, tuple[int, np.ndarray]] = {}  # key -> (group, vector), until committed
        self._tags: dict[int, int] = {}  # group -> tag, until committed (insertion order: oldest first)
        self._failed_tag: int | None = None  # the tag of the first group whose commit failed
        self._groups = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._run, name="bench-cache-writer", daemon=True).start()

    def put(self, keys: list[str], vectors: np.ndarray, tag: int = 0) -> None:
        self._raise()
        with self._lock:
            self._groups += 1
            group = self._groups
            self._pending.update((k, (group, v)) for k, v in zip(keys, vectors, strict=True))
            self._tags[group] = tag
        self.queue.put((group, keys, vectors))

    def oldest_pending(self) -> int | None:
        with self._lock:
            if self._failed_tag is not None:
                return self._failed_tag
            return next(iter(self._tags.values()), None)

    def pending(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        with self._lock:
            return {k: self._pending[k][1] for k in keys if k in self._pending}

    def flush(self) -> None:
        self.queue.join()
        self._raise()

    def _raise(self) -> None:
        if self.error is not None:
            error, self.error = self.error, None
            raise error

    def _run(self) -> None:
        while True:
            group, keys, vectors = self.queue.get()
            try:
                if self.error is None:  # after a failure, later groups are dropped: the error stops the run
                    self.cache._put_many(keys, vectors)
            except BaseException as e:  # noqa: BLE001 - handed to the encoding thread by `flush`
                self.error = e
                with self._lock:
                    if self._failed_tag is None:
                        self._failed_tag = self._tags.get(group, 0)
            finally:
                with self._lock:
                    self._tags.pop(group, None)
                    for key in keys:  # a later group may have handed the same key over again
                        if self._pending.get(key, (0,))[0] == group:
                            del self._pending[key]
                self.queue.task_done()


def _intact(row_dim: int, blob: bytes | None, checksum: bytes | None, dim: int | None) -> bool:
    """Whether a stored vector may be served: checksum matches, the cache's dimension, all finite."""
    if blob is None or len(blob) != 4 * row_dim or _checksum(blob) != checksum:
        return False
    if dim is not None and row_dim != dim:
        return False
    return bool(np.isfinite(np.frombuffer(blob, dtype=np.float32)).all())


@dataclass(frozen=True)
class CacheFileInfo:
    """What one cache file holds, for `bench list cache`."""

    path: Path
    fingerprint: JSONObject  # family, model, revision and every vector option (empty if unreadable)
    entries: int
    dim: int | None
    size: int  # bytes on disk, with SQLite's -wal and -shm files
    error: str | None = None


def cache_files(root: Path | None = None) -> list[CacheFileInfo]:
    """Every embedding cache file under `root` (default: `default_cache_dir()`), opened read-only.

    Reads only SQLite (no model code), so listing a large cache is quick and changes nothing; a file
    that SQLite cannot read is listed with the reason. A file's row counts its ranks' shards in.
    """
    root = Path(root).expanduser() if root is not None else default_cache_dir()
    return [_file_info(path) for path in sorted(root.glob("*.sqlite"))] if root.is_dir() else []


def _file_info(path: Path) -> CacheFileInfo:
    """One cache's row: the main file with its shards (entries and bytes of both; the fingerprint is the main's)."""
    info = _one_file_info(path)
    shards = sorted(shard_dir(path).glob("rank*.sqlite")) if shard_dir(path).is_dir() else []
    for shard in map(_one_file_info, shards):
        info = replace(
            info, entries=info.entries + shard.entries, size=info.size + shard.size, dim=info.dim or shard.dim
        )
    return info


def _one_file_info(path: Path) -> CacheFileInfo:
    size = sum(p.stat().st_size for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists())
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as e:
        return CacheFileInfo(path, {}, 0, None, size, str(e))
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        entries, dim = _entries(conn)
        fingerprint = json.loads(row[0]) if row else {}
    except (sqlite3.Error, json.JSONDecodeError) as e:
        return CacheFileInfo(path, {}, 0, None, size, str(e))
    finally:
        conn.close()
    return CacheFileInfo(path, fingerprint if isinstance(fingerprint, dict) else {}, int(entries), dim, size)
