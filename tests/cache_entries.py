"""The embedding cache's entries as SQL sees them (`bench/adapters/cache.py`: a block per committed group, a slot
per key), for tests that look inside a cache file or damage one entry of it."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

ENTRIES = (
    "SELECT s.key, b.dim, substr(b.vectors, s.slot * b.dim * 4 + 1, b.dim * 4), s.checksum "
    "FROM slots s JOIN blocks b ON b.id = s.block"
)


def entries(path: Path) -> list[tuple[str, int, bytes, bytes]]:
    """(key, dim, vector bytes, checksum) of every entry in blocks of the cache file `path`, by key (read-only)."""
    conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
    try:
        return sorted(conn.execute(ENTRIES).fetchall())
    finally:
        conn.close()


def keys(path: Path) -> set[str]:
    return {key for key, *_ in entries(path)}


def checksum(vec: bytes) -> bytes:
    """The checksum the cache keeps of a vector's bytes."""
    return hashlib.blake2b(vec, digest_size=8).digest()


def store_entry(path: Path, key: str, vec: bytes, check: bytes | None = None) -> None:
    """Make `key`'s entry `vec` (`len(vec) / 4` wide) with checksum `check` (default: `vec`'s own), in a
    block of its own: how a test damages one entry (another width, NaN, a bad checksum)."""
    conn = sqlite3.connect(path)
    with conn:
        block = conn.execute("INSERT INTO blocks (dim, vectors) VALUES (?, ?)", (len(vec) // 4, vec)).lastrowid
        conn.execute(
            "INSERT OR REPLACE INTO slots VALUES (?, ?, 0, ?)", (key, block, checksum(vec) if check is None else check)
        )
    conn.close()


def flip_byte(path: Path, key: str) -> None:
    """Flip the first byte of `key`'s vector where it lies, inside its block (the block's other vectors and the
    checksum untouched): bit rot in one entry."""
    conn = sqlite3.connect(path)
    with conn:
        block, slot, dim = conn.execute(
            "SELECT s.block, s.slot, b.dim FROM slots s JOIN blocks b ON b.id = s.block WHERE s.key = ?", (key,)
        ).fetchone()
        with conn.blobopen("blocks", "vectors", block) as data:
            data.seek(slot * dim * 4)
            first = data.read(1)[0]
            data.seek(slot * dim * 4)
            data.write(bytes([first ^ 0xFF]))
    conn.close()
