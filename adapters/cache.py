"""On-disk embedding cache shared across tasks and runs.

One SQLite file per model fingerprint (model id, revision and every adapter setting that changes a
vector); inside it, one row per model input, keyed by the hash of the exact input the adapter builds
from (instruction template, instruction, text). An instruction-blind template therefore maps every
instruction to the same key, and that text is embedded once.

SQLite gives atomic transactions (a killed run leaves whole groups or nothing). Every vector carries a
checksum: a damaged entry is reported, dropped and recomputed; an unreadable file is moved aside.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.fileio import sha256_json

logger = logging.getLogger(__name__)

_SQL_VARS = 900  # stay under SQLite's default host-parameter limit
CACHE_DIR_ENV = "INSTRUCT_BENCH_CACHE"


def default_cache_dir() -> Path:
    """`$INSTRUCT_BENCH_CACHE/embeddings`, else `~/.cache/instruct-bench/embeddings`."""
    root = os.environ.get(CACHE_DIR_ENV) or os.path.join(os.path.expanduser("~"), ".cache", "instruct-bench")
    return Path(root) / "embeddings"


def input_key(model_input: Any) -> str:
    """Stable key of one model input (a string, or a JSON list such as [prompt, text])."""
    data = json.dumps(model_input, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:40]


def _checksum(blob: bytes) -> bytes:
    return hashlib.blake2b(blob, digest_size=8).digest()


class EmbeddingCache:
    """Vectors by input key for one model fingerprint."""

    def __init__(self, root: Path, fingerprint: dict[str, Any]) -> None:
        self.fingerprint = fingerprint
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", str(fingerprint.get("model", "model")))[-60:]
        self.path = Path(root).expanduser() / f"{slug}-{sha256_json(fingerprint)[:16]}.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = self._open()

    def _open(self) -> sqlite3.Connection:
        try:
            return self._connect()
        except sqlite3.DatabaseError as e:
            aside = self.path.with_suffix(".corrupt")
            logger.warning("Embedding cache %s is unreadable (%s); moved to %s and starting afresh.", self.path, e, aside)
            self.path.replace(aside)
            return self._connect()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=60)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        conn.execute("CREATE TABLE IF NOT EXISTS emb (key TEXT PRIMARY KEY, dim INTEGER, vec BLOB, checksum BLOB)")
        conn.execute(
            "INSERT OR IGNORE INTO meta VALUES ('fingerprint', ?)", (json.dumps(self.fingerprint, sort_keys=True),)
        )
        conn.commit()
        return conn

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors for the keys that are cached and intact."""
        found: dict[str, np.ndarray] = {}
        damaged: list[str] = []
        for start in range(0, len(keys), _SQL_VARS):
            chunk = list(keys[start : start + _SQL_VARS])
            marks = ",".join("?" * len(chunk))
            query = f"SELECT key, dim, vec, checksum FROM emb WHERE key IN ({marks})"
            for key, dim, blob, checksum in self._conn.execute(query, chunk):
                if blob is None or len(blob) != 4 * dim or _checksum(blob) != checksum:
                    damaged.append(key)
                    continue
                found[key] = np.frombuffer(blob, dtype=np.float32)
        if damaged:
            logger.warning("Embedding cache %s: %d damaged entries dropped; they will be recomputed.", self.path, len(damaged))
            self.delete(damaged)
        return found

    def put_many(self, keys: Iterable[str], vectors: np.ndarray) -> None:
        """Store a group of vectors in one transaction."""
        rows = []
        for key, vec in zip(keys, np.asarray(vectors, dtype=np.float32), strict=True):
            blob = np.ascontiguousarray(vec).tobytes()
            rows.append((key, int(vec.shape[0]), blob, _checksum(blob)))
        with self._conn:
            self._conn.executemany("INSERT OR REPLACE INTO emb VALUES (?, ?, ?, ?)", rows)

    def delete(self, keys: Sequence[str]) -> None:
        with self._conn:
            self._conn.executemany("DELETE FROM emb WHERE key = ?", [(k,) for k in keys])

    def count(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM emb").fetchone()[0])

    def close(self) -> None:
        self._conn.close()


@dataclass(frozen=True)
class CacheFileInfo:
    """What one cache file holds, for `bench list cache`."""

    path: Path
    fingerprint: dict[str, Any]  # family, model, revision and every vector option (empty if unreadable)
    entries: int
    dim: int | None
    size: int  # bytes on disk, with SQLite's -wal and -shm files
    error: str | None = None


def cache_files(root: Path | None = None) -> list[CacheFileInfo]:
    """Every embedding cache file under `root` (default: `default_cache_dir()`), opened read-only.

    Reads only SQLite (no model code), so listing a large cache is quick and changes nothing; a file
    that SQLite cannot read is listed with the reason.
    """
    root = Path(root).expanduser() if root is not None else default_cache_dir()
    return [_file_info(path) for path in sorted(root.glob("*.sqlite"))] if root.is_dir() else []


def _file_info(path: Path) -> CacheFileInfo:
    size = sum(p.stat().st_size for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists())
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as e:
        return CacheFileInfo(path, {}, 0, None, size, str(e))
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        entries, dim = conn.execute("SELECT COUNT(*), MAX(dim) FROM emb").fetchone()
        fingerprint = json.loads(row[0]) if row else {}
    except (sqlite3.Error, json.JSONDecodeError) as e:
        return CacheFileInfo(path, {}, 0, None, size, str(e))
    finally:
        conn.close()
    return CacheFileInfo(path, fingerprint if isinstance(fingerprint, dict) else {}, int(entries), dim, size)
