"""De-quantised GGUF models kept on disk, so that a GGUF file is de-quantised once, not on every run.

transformers loads a GGUF file (`from_pretrained(folder, gguf_file=name)`) by parsing its header with
gguf's `GGUFReader` (seconds for a 49k-token vocabulary: once for the config, once for the tokenizer,
once more for the model) and de-quantising every tensor. For SmolLM2-135M-Instruct that is ~30 s of a
two-core machine, on every run. The first load therefore saves what it built as ordinary transformers
folders, and later loads read those (well under a second):

    $INSTRUCT_BENCH_CACHE/gguf/<file stem>-<key>/
        config/                      config.json                          (AutoConfig)
        tokenizer/                   tokenizer.json, tokenizer_config.json, ...
        model-<architecture>-<dtype>/  config.json, generation_config.json, model.safetensors
        each with entry.json: the key, and every file's size and sha256

The key is what decides the de-quantised result: the GGUF file's sha256 (the digest its content id is
made of, `bench.adapters.identity.file_sha256`, remembered under the file's stat: never hashed twice),
the files beside it that `from_pretrained(folder, gguf_file=...)` also reads (`tokenizer_config.json`,
`generation_config.json`, ...), and the versions of transformers (its tensor mapping), gguf (its
de-quantisation), numpy and torch. The model's folder is per target dtype and architecture class.
Changing the file, a file beside it or one of those packages is a new key (the old entry is left;
deleting `gguf/` costs only time). A hub GGUF (no local file) is not cached.

An entry is written in a temporary folder beside it and renamed into place whole: a killed run leaves
no half entry (its temporary folder is swept by a later write once an hour old). Every load checks that
the entry holds exactly its recorded files, each a regular file of the recorded size and sha256 (a large
file's digest is remembered under its stat, so it is read again only after it changed), and no link
anywhere from the file's folder down (a link is never followed: it could point at any folder); an entry
that fails, or that transformers cannot load, is removed (a link: the link, never its target) and
rebuilt from the GGUF file with one warning. The check finds damage (a flipped bit, a truncated copy,
a half-deleted folder); it is no defence against someone who can write the cache, who can rewrite
`entry.json` as easily as the weights. A cache that cannot be written (read-only, full disk, no room for
the weights) costs only time: one warning per process, and the model loads from the GGUF file as before.

Loads of one file in several processes at once (a sweep started twice, ranks of a launched run) build
each part once: its builder holds a lock beside the entry (`filelock`: an OS lock, gone with its holder
however it exits); the others wait, then read the entry it wrote. `GGUFCache.load` says which happened
(`CacheUse`), for the run record's `encode.gguf_cache`.

Only a dense load is kept: when transformers keeps the weights in GGUF blocks (its kernel path, for the
architectures it supports natively), a plain reload would compute differently, so nothing is cached.
"""

from __future__ import annotations

import errno
import functools
import json
import logging
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict, TypeVar

from bench.core import versions
from bench.core.fileio import current_umask, sha256_file, sha256_json
from bench.core.paths import cache_root
from bench.core.progress import LOG_INTERVAL, format_duration, stderr_is_terminal

logger = logging.getLogger(__name__)

T = TypeVar("T")
CacheUse = Literal["hit", "built", "off"]
"""Where a loaded part came from: its cache entry ("hit"); the GGUF file, with the entry written for later
runs ("built"); or the GGUF file with nothing kept ("off": the cache cannot be written, or transformers kept
the weights quantised)."""

FORMAT = 1  # the layout of an entry; a change makes every old entry a miss
ENTRY = "entry.json"
# Files beside a GGUF file that transformers reads too when asked for `from_pretrained(folder, gguf_file=...)`.
SIBLINGS = (
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "chat_template.jinja",
    "chat_template.json",
)
VERSIONED = ("transformers", "gguf", "numpy", "torch")  # packages that change a de-quantised tensor
STALE_TMP_SECONDS = 3600.0  # a temporary folder untouched this long belongs to a run that was killed
FREE_MARGIN = 1 << 30  # bytes of disk left free after writing an entry

_warned = threading.Event()  # one "cannot cache" warning per process
_announced: set[Path] = set()  # entries whose first load said where it is kept


def cache_dir() -> Path:
    """`$INSTRUCT_BENCH_CACHE/gguf`, else `~/.cache/instruct-bench/gguf`."""
    return cache_root() / "gguf"


@functools.cache
def package_versions() -> dict[str, str | None]:
    """The installed version of each of VERSIONED (None: not installed); asked once per process."""
    return versions.package_versions(VERSIONED)


@dataclass(frozen=True)
class GGUFCache:
    """The cache entries of one local GGUF file.

    Attributes:
        file: the GGUF file.
        key: what decides every part's content (`gguf_key`), hashed into `folder`'s name.
        folder: where this file's parts live.
    """

    file: Path
    key: dict[str, Any]
    folder: Path

    def part(self, name: str) -> Path:
        return self.folder / name

    def lock_file(self, name: str) -> Path:
        """The lock the builders of part `name` take: one per part, so that a load waiting for one part never
        waits behind another's; beside `folder`, not in it (the folder holds only its parts)."""
        return self.folder.with_name(f"{self.folder.name}.{name}.lock")

    def load(
        self,
        name: str,
        *,
        fresh: Callable[[], T],
        from_folder: Callable[[Path], T],
        save: Callable[[T, Path], object],
        what: str,
        keep: Callable[[T], bool] = lambda _: True,
    ) -> tuple[T, CacheUse]:
        """Part `name` from its entry, else built by `fresh()` (from the GGUF file) and saved for next time;
        with where it came from. While one process builds the part, another one's load waits for it and
        reads its entry (`_building`), so a file is de-quantised once however many runs load it at once.

        Args:
            name: the part's folder (`config`, `tokenizer`, `model-causal-float32`).
            fresh: the load from the GGUF file; its exceptions are the caller's.
            from_folder: the load from a saved folder.
            save: writes the part into an empty folder.
            what: the work `fresh` does, for the progress lines ("de-quantising the weights to float32").
            keep: whether a fresh result may be cached (a model left in GGUF blocks may not).
        """
        if self.folder.is_symlink():  # never followed: it could lead anywhere; the link goes, not its target
            logger.warning("GGUF cache entry %s is a symbolic link, never followed; rebuilding it.", self.folder)
            _remove(self.folder)
        cached = self._read(name, from_folder)
        if cached is not None:
            return cached, "hit"
        with self._building(name):
            cached = self._read(name, from_folder)  # another process built it while this one waited
            if cached is not None:
                return cached, "hit"
            note = None if self.folder in _announced else f"first load; kept in {self.folder} for later runs"
            _announced.add(self.folder)
            weights = name.startswith("model-")
            stored = False
            with progress_lines(f"{self.file.name}: {what}", note, done=logging.INFO if weights else logging.DEBUG):
                built = fresh()
                if keep(built):
                    stored = self.store(name, lambda tmp: save(built, tmp), size=_size_of(built))
                else:
                    logger.debug("%s: %s not cached (transformers kept it quantised)", self.file.name, name)
        return built, "built" if stored else "off"

    def _read(self, name: str, from_folder: Callable[[Path], T]) -> T | None:
        """Part `name` read from its entry, or None (no whole entry: a damaged one is removed, with a warning)."""
        folder = self.part(name)
        if not check_entry(folder, self.key, name):
            return None
        try:
            return from_folder(folder)
        except Exception as e:  # noqa: BLE001 - transformers raises many types; a damaged entry costs a rebuild
            logger.warning("GGUF cache entry %s cannot be loaded (%s); rebuilding it from %s.", folder, e, self.file)
            _remove(folder)
            return None

    @contextmanager
    def _building(self, name: str) -> Iterator[None]:
        """Hold this file's lock while part `name` is built: a second process loading the file meanwhile waits
        here, then finds the entry. A lock that cannot be taken (a cache that cannot be written) is skipped:
        the load goes on, and `store` says why nothing is kept."""
        from filelock import FileLock, Timeout

        lock = FileLock(self.lock_file(name))
        locked = False
        try:
            self.folder.parent.mkdir(parents=True, exist_ok=True)
            try:
                lock.acquire(timeout=0)
            except Timeout:
                logger.info("%s: another process is building its %s; waiting for it", self.file.name, name)
                lock.acquire()
            locked = True
        except OSError as e:
            logger.debug("GGUF cache lock %s not taken (%s); building without it", self.lock_file(name), e)
        try:
            yield
        finally:
            if locked:
                lock.release()

    def store(self, name: str, write: Callable[[Path], object], *, size: int = 0) -> bool:
        """Write part `name` through `write(tmp)` and rename it into place; False (one warning) if it cannot be."""
        folder = self.part(name)
        tmp: Path | None = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            _sweep(self.folder)
            free = shutil.disk_usage(self.folder).free
            if size and free < size + FREE_MARGIN:
                raise OSError(errno.ENOSPC, f"{size / 1e6:,.1f} MB of weights, {free / 1e6:,.0f} MB free")
            tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{name}-", dir=self.folder))
            write(tmp)
            listed, odd = _listing(tmp)
            if odd:
                raise OSError(errno.EINVAL, f"{name} was saved with something other than files: {odd[0]}")
            files = {rel: {"size": file.stat().st_size, "sha256": sha256_file(file)} for rel, file in listed.items()}
            (tmp / ENTRY).write_text(
                json.dumps({"format": FORMAT, "part": name, "key": self.key, "files": files}, indent=1) + "\n",
                encoding="utf-8",
            )
            _publish(tmp, folder)
            tmp = None
        except Exception as e:  # noqa: BLE001 - the cache costs only time: the run goes on with what it loaded
            _warn_once(
                f"GGUF cache not written ({type(e).__name__}: {e}); {self.file.name} is read and de-quantised "
                f"again on its next load."
            )
            return False
        finally:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
        try:  # remember the digests under the files' final paths, so that the next load reads no file twice
            for rel, file in _listing(folder)[0].items():
                if rel != ENTRY:
                    _digest(file)
        except OSError:
            pass
        return True


def gguf_cache(gguf_file: str | Path) -> GGUFCache | None:
    """The cache of a local GGUF file, or None (no such file)."""
    file = Path(gguf_file).expanduser()
    if not file.is_file():
        return None
    key = gguf_key(file)
    digest = sha256_json(key)[:16]
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", file.stem)[:80] or "model"
    return GGUFCache(file, key, cache_dir() / f"{stem}-{digest}")


def gguf_key(file: Path) -> dict[str, Any]:
    """What decides the de-quantised model: the file's content, the files beside it transformers reads, the versions."""
    siblings = {n: _digest(file.parent / n)["sha256"] for n in SIBLINGS if (file.parent / n).is_file()}
    return {"format": FORMAT, "gguf_sha256": _digest(file)["sha256"], "siblings": siblings, **package_versions()}


def check_entry(folder: Path, key: dict[str, Any], name: str) -> bool:
    """Whether `folder` is a whole entry of `key`: a real folder (not a link) holding its record and exactly
    the files it records, each a regular file (no link, followed or not) of the size and sha256 recorded.
    A missing entry is False silently; a damaged one is removed (a link: the link itself), with a warning.

    The sha256 finds damage, not tampering: whoever can write the cache can rewrite the record too."""
    if folder.is_symlink():
        problem: str | None = "it is a symbolic link, never followed"
    elif not os.path.lexists(folder / ENTRY):
        return False
    else:
        problem = _entry_problem(folder, key, name)
    if problem is None:
        return True
    logger.warning("GGUF cache entry %s is damaged (%s); rebuilding it.", folder, problem)
    _remove(folder)
    return False


def _entry_problem(folder: Path, key: dict[str, Any], name: str) -> str | None:
    """What is wrong with the entry in `folder`, or None (see `check_entry`)."""
    try:
        listed, odd = _listing(folder)
        if odd:
            return f"{odd[0]} is a link or not a regular file"
        if ENTRY not in listed:
            return f"its {ENTRY} is not a regular file"
        record = json.loads(listed.pop(ENTRY).read_text(encoding="utf-8"))
        files = record["files"]
        if record.get("format") != FORMAT or record.get("part") != name or record.get("key") != key or not files:
            return "it records another key"
        if extra := sorted(set(listed) - set(files)):
            return f"it holds {extra[0]}, which it does not record"
        for rel, want in files.items():
            path = listed.get(rel)
            if path is None or path.stat().st_size != want["size"]:
                return f"{rel} is missing or of another size"
            if _digest(path)["sha256"] != want["sha256"]:
                return f"{rel} does not match its recorded sha256"
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        return f"its record cannot be read ({type(e).__name__})"
    return None


def is_dense(model: object) -> bool:
    """Whether a model transformers loaded from a GGUF file holds plain de-quantised weights, so that saving and
    reloading them computes exactly what it computes. Its legacy loader (`supported` False) de-quantises every
    tensor; its GGUF path keeps weights in blocks (`packed_modules`) or grafts ggml's kernels when `kernels`
    is installed: such a model is not cached."""
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is None or not getattr(quantizer, "supported", False):
        return True
    import importlib.util

    dequantized = bool(getattr(getattr(quantizer, "quantization_config", None), "dequantize", False))
    return (
        dequantized and not getattr(quantizer, "packed_modules", None) and importlib.util.find_spec("kernels") is None
    )


def save_dense(model: Any, folder: Path) -> None:
    """`save_pretrained` of a de-quantised GGUF model. transformers refuses to save any model loaded through its
    GGUF quantizer, even one whose every weight it de-quantised (`is_dense`); the weights are plain tensors,
    saved as a model without the quantizer saves them."""
    quantizer = getattr(model, "hf_quantizer", None)
    model.hf_quantizer = None
    try:
        model.save_pretrained(folder)
    finally:
        model.hf_quantizer = quantizer


@contextmanager
def progress_lines(
    what: str, note: str | None = None, *, interval: float = LOG_INTERVAL, done: int = logging.INFO
) -> Iterator[None]:
    """Log `what` (and `note`) when it starts, and at level `done` when it ends; elsewhere than a terminal, a
    line every `interval` seconds while it runs (bench/core/progress.py's convention: a log that stays silent
    means the process is gone)."""
    logger.info("%s%s", what, f" ({note})" if note else "")
    start, stop = time.monotonic(), threading.Event()

    def beat() -> None:
        while not stop.wait(interval):
            logger.info("%s: %s elapsed", what, format_duration(time.monotonic() - start))

    thread = None
    if not stderr_is_terminal():  # on a terminal transformers draws its own bar
        thread = threading.Thread(target=beat, name="bench-gguf-progress", daemon=True)
        thread.start()
    try:
        yield
    finally:
        stop.set()
        if thread is not None:
            thread.join()
    logger.log(done, "%s: done in %s", what, format_duration(time.monotonic() - start))


# ------------------------------------------------------------------------------------ helpers
class FileDigest(TypedDict):
    """A file's size and sha256, as an entry's record keeps each of its files."""

    size: int
    sha256: str


def _digest(file: Path) -> FileDigest:
    from bench.adapters.identity import file_sha256  # remembered under the file's stat: read once

    return {"size": file.stat().st_size, "sha256": file_sha256(file)}


def _listing(folder: Path) -> tuple[dict[str, Path], list[str]]:
    """Every regular file under `folder` by its relative name (`entry.json` included), and the names of what
    else is there: links (to a file or a folder, never followed or entered) and devices, pipes, sockets."""
    files: dict[str, Path] = {}
    odd: list[str] = []
    folders = [folder]
    while folders:
        with os.scandir(folders.pop()) as found:
            for item in found:
                rel = Path(item.path).relative_to(folder).as_posix()
                if item.is_symlink():
                    odd.append(rel)
                elif item.is_dir(follow_symlinks=False):
                    folders.append(Path(item.path))
                elif item.is_file(follow_symlinks=False):
                    files[rel] = Path(item.path)
                else:
                    odd.append(rel)
    return dict(sorted(files.items())), sorted(odd)


def _publish(tmp: Path, folder: Path) -> None:
    """Rename `tmp` to `folder`; a damaged entry in the way is replaced, a whole one (another run's) kept."""
    os.chmod(tmp, 0o777 & ~current_umask())  # mkdtemp makes 0700
    try:
        os.replace(tmp, folder)
    except OSError as e:
        if e.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.EISDIR):
            raise
        # another run published it first, or a damaged entry is in the way: keep the other's, drop ours
        shutil.rmtree(tmp, ignore_errors=True)


def _sweep(folder: Path) -> None:
    """Remove temporary folders left by killed runs (untouched for STALE_TMP_SECONDS)."""
    now = time.time()
    for tmp in folder.glob(".tmp-*"):
        try:
            newest = max([tmp.stat().st_mtime, *(p.stat().st_mtime for p in tmp.rglob("*"))])
        except OSError:
            continue
        if now - newest > STALE_TMP_SECONDS:
            shutil.rmtree(tmp, ignore_errors=True)


def _remove(folder: Path) -> None:
    """Move a bad entry aside, then delete it (a reader never sees half of it gone); a link is unlinked, and
    what it points to is left alone."""
    if folder.is_symlink():
        with suppress(OSError):
            folder.unlink()
        return
    aside = folder.with_name(f".tmp-removed-{folder.name}-{os.getpid()}-{time.monotonic_ns()}")
    try:
        os.replace(folder, aside)
    except OSError:
        return
    shutil.rmtree(aside, ignore_errors=True)


def _size_of(obj: Any) -> int:
    """Bytes of a model's parameters and buffers (0 for anything else)."""
    total = 0
    for tensors in (getattr(obj, "parameters", None), getattr(obj, "buffers", None)):
        if callable(tensors):
            total += sum(t.numel() * t.element_size() for t in tensors())
    return total


def _warn_once(message: str) -> None:
    if _warned.is_set():
        logger.debug("%s", message)
        return
    _warned.set()
    logger.warning("%s", message)
