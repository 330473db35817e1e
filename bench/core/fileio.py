"""Atomic file writes: a crash mid-write must never leave a half-written result or cache file.

Every file the harness writes goes through `atomic_write`, which is therefore the one place where
1. files get ordinary permissions: `tempfile.mkstemp` creates 0600, so the file is re-moded to what
   `open()` would have given (0666 minus the umask; 0644 by default), readable by a web server;
2. an OSError the user can fix (full disk, read-only folder, no permission, a file where a folder
   should be) becomes a `bench.core.errors.StorageError` naming the path and the fix; the old file, if any,
   is untouched, because the rename never happened.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bench.core.errors import StorageError, storage_error

_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process umask (reading it means setting it, hence the lock)."""
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode `open()` gives a new file: 0666 minus the umask (0644 under the usual 022)."""
    return 0o666 & ~current_umask()


def ensure_dir(path: Path, *, what: str = "output", option: str = "--output-dir/--out") -> Path:
    """`mkdir -p path`, with a fixable failure (read-only, a file in the way) as a StorageError."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        _reraise_storage(e, path, what, option)
    return path


def atomic_write(
    path: Path, write: Callable[[Path], object], *, what: str = "output", option: str = "--output-dir/--out"
) -> None:
    """Let `write` fill a temporary file beside `path`, then rename it over `path`.

    The rename is atomic on POSIX and Windows, so readers see the old file or the new one. `what` and
    `option` word the error when the folder cannot be written (see the module docstring).
    """
    path = Path(path)
    ensure_dir(path.parent, what=what, option=option)
    tmp: Path | None = None
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
        tmp = Path(name)
        write(tmp)
        os.chmod(tmp, file_mode())
        os.replace(tmp, path)
    except OSError as e:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        _reraise_storage(e, path, what, option)
    except BaseException:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise


def _reraise_storage(error: OSError, path: Path, what: str, option: str) -> None:
    """Raise the StorageError for `error`, or `error` itself when the user cannot fix it."""
    mapped = storage_error(error, path, what=what, option=option)
    if mapped is None:
        raise error
    raise mapped from error


def atomic_write_text(path: Path, text: str, **where: str) -> None:
    """`atomic_write` of UTF-8 text; `where` (what, option) words a storage error."""
    atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"), **where)


def atomic_write_json(path: Path, obj: object, **where: str) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n", **where)


def tree_fingerprint(root: Path, header: str, packages: tuple[str, ...] = ("mteb",)) -> str:
    """sha256 of `header`, every file under `root` (by relative path; `__pycache__` left out) and the installed
    versions of `packages`: the key of a cache derived from a package's source files (`read_cached`)."""
    from importlib import metadata

    digest = hashlib.sha256(f"{header}\0".encode())
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if path.is_file() and "__pycache__" not in relative.parts:
            digest.update(relative.as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    for name in packages:
        try:
            digest.update(f"{name} {metadata.version(name)}\0".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name} -\0".encode())
    return digest.hexdigest()


def read_cached(path: Path, fmt: int) -> dict[str, Any] | None:
    """A cached JSON object at `path` when it is one of layout `fmt`, else None (missing, unreadable,
    damaged or of another layout: the caller rebuilds it). One reader for every derived-facts cache (the
    task catalogue, MTEB's model facts, the zoo's probed formats), so a damaged file is never fatal anywhere."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) and found.get("format") == fmt else None


def write_cached(path: Path, built: Mapping[str, object], *, what: str) -> None:
    """Write a cache file atomically; a read-only or full cache costs only speed, never a failure."""
    try:
        atomic_write_json(path, built, what=what, option="$INSTRUCT_BENCH_CACHE")
    except (StorageError, OSError) as e:
        logging.getLogger(__name__).debug("%s not cached: %s", what, e)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_json(obj: object) -> str:
    """Hash of a JSON value, independent of key order."""
    return sha256_text(json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":")))


def sha256_file(path: Path, *, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with Path(path).open("rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def unsafe_member_name(name: str) -> bool:
    """True for an archive member name that is absolute or climbs out of the archive (`../x`).

    The build never extracts archives, but such a name is never made by `bench submit`, so it is
    either damage or an attack, and a name with `..` could pose as another file of the submission.
    """
    parts = name.replace("\\", "/").split("/")
    return name.startswith(("/", "\\")) or bool(re.match(r"[A-Za-z]:", name)) or ".." in parts
