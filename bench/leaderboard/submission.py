"""Reading a submission (zip, packed folder or a plain `bench run` output folder) and packing one.

A submission is a set of JSON files in MTEB's result layout:

    [results/]<org>__<model>/<revision>/[experiments/<name>/]<Task>.json          result (MTEB TaskResult)
    [results/]<org>__<model>/<revision>/[experiments/<name>/]run_records/<Task>.json
    [results/]<org>__<model>/<revision>/model_meta.json                          optional (MTEB ModelMeta)
    manifest.json                                                                 written by `bench submit`

`bench submit DIR` validates the files under DIR and writes them, with a manifest listing each file's
sha256, into one zip with fixed timestamps (the same files give the same archive). The leaderboard
reads the files straight from the archive and never extracts it, so a hostile member name cannot
write anywhere. Only `.json` files are read; hidden files (`.name`, e.g. half-written temp files)
and the files of a `predictions/` folder (`bench run --save-predictions`) are skipped. Sizes, member
counts and names are checked before anything is read (bench/leaderboard/limits.py): a submission over a
limit is rejected with a named reason, never read whole.

Links are never followed: a submission path that is a link, a link anywhere in a folder (file or
folder, hidden or not, whatever its name), a file of a folder with more than one hard link (another
name of it may lie anywhere on the machine) and an archive member stored as a link each reject the
submission (`link`), and the link's target is never opened.

A folder is walked by file descriptor, never by path: the submission path is opened with O_NOFOLLOW,
each folder below it with O_DIRECTORY | O_NOFOLLOW relative to its parent's descriptor (`dir_fd`),
listed through its own descriptor (scandir of the fd, lstat of each entry) and each file opened with
O_NOFOLLOW relative to its folder's. Every folder and file opened must still be the one listed (same
device and inode), so a file or folder swapped for a link (or for another file or folder) while the
build reads it is refused (`link`), never read: checking a path and then opening it would follow a
link put there in between.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import posixpath
import stat
import zipfile
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import TypedDict

from bench.core.errors import BenchError, DataError
from bench.core.fileio import unsafe_member_name
from bench.core.json_types import JSONObject
from bench.leaderboard.limits import (
    MAX_ARCHIVE_BYTES,
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_JSON_DEPTH,
    MAX_TOTAL_BYTES,
    json_depth,
    member_is_link,
)
from bench.leaderboard.schema import Problem

MANIFEST = "manifest.json"
MANIFEST_FORMAT = "instruct-bench-submission"
MODEL_META = "model_meta.json"
RUN_RECORDS = "run_records"
# `bench run --save-predictions`' per-sample files (bench/results/store.py PREDICTIONS): never part of a submission
PREDICTIONS = "predictions"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
# Open without following a final link, and without blocking on a FIFO put where a file was listed.
# POSIX only: a folder is walked with `dir_fd`, which Windows lacks.
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
_DIR_FLAGS = _OPEN_FLAGS | os.O_DIRECTORY
# What opening a listed name gives when it is no longer what was listed: O_NOFOLLOW met a link (ELOOP;
# EMLINK on some BSDs), O_DIRECTORY met a file (ENOTDIR).
_SWAP_ERRORS = (errno.ELOOP, errno.EMLINK, errno.ENOTDIR)
LINK_MESSAGE = "is a symbolic link: a submission is read without following links, so its target is never opened"
SWAP_MESSAGE = "became a link or another file or folder while being read; its target was not opened"
HARD_LINK_MESSAGE = (
    "has {} hard links: another name of this file may lie outside the submission, so it is not read; "
    "put a copy of the file itself in its place"
)


@dataclass
class Submission:
    """The JSON files of one submission, by relative POSIX path, as bytes (parsed later, with errors named)."""

    source: str
    files: dict[str, bytes] = field(default_factory=dict)
    # Why the submission as a whole cannot be read (damaged archive, a limit exceeded, unsafe names);
    # when there are any, `files` is empty and the submission is rejected with these.
    problems: list[Problem] = field(default_factory=list)

    @property
    def manifest(self) -> bytes | None:
        return self.files.get(MANIFEST)


# What zipfile and zlib raise for a damaged, truncated, encrypted or oddly compressed archive.
ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    OSError,
    EOFError,
    RuntimeError,
    NotImplementedError,
    zlib.error,
)


def read_submission(path: str | Path) -> Submission:
    """The submission at `path`: a zip from `bench submit`, or a folder (packed or plain results).

    `path` is opened once, without following a link, and read through that descriptor: what is read is
    what was checked, whatever is put at `path` meanwhile."""
    path = Path(path)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as e:
        return _unopened(path, e)
    try:
        return _read_open(path, fd)
    finally:
        os.close(fd)


def _read_open(path: Path, fd: int) -> Submission:
    """The submission open as `fd`: a folder, or a zip read through a copy of the descriptor."""
    source, mode = str(path), os.fstat(fd).st_mode
    if stat.S_ISDIR(mode):
        try:
            return Submission(source, *_read_folder(source, fd))
        except OSError as e:
            return _unreadable(path, f"cannot read the folder ({e})")
    if stat.S_ISREG(mode):
        try:
            with os.fdopen(os.dup(fd), "rb") as raw:
                return Submission(source, *_read_zip(source, raw))
        except ZIP_ERRORS as e:
            return _unreadable(path, f"not a readable zip archive ({e})")
    raise _missing(path)


def _unopened(path: Path, error: OSError) -> Submission:
    """The submission whose path cannot be opened: a link (never followed), or unreadable; a DataError
    when nothing is there."""
    if error.errno in (errno.ELOOP, errno.EMLINK):
        return Submission(str(path), problems=[Problem("link", str(path), "", f"the submission path {LINK_MESSAGE}")])
    if error.errno in (errno.ENOENT, errno.ENOTDIR):
        raise _missing(path) from error
    return _unreadable(path, f"cannot open it ({error})")


def _unreadable(path: Path, why: str) -> Submission:
    return Submission(str(path), problems=[Problem("unreadable", str(path), "", why)])


def _missing(path: Path) -> DataError:
    return DataError(f"No submission at {path}: give a results folder, a folder or a .zip written by `bench submit`.")


def _wanted(name: PurePosixPath) -> bool:
    hidden = any(part.startswith(".") for part in name.parts)
    return name.suffix == ".json" and not hidden and name.parent.name != PREDICTIONS


def _size_problems(source: str, sizes: dict[str, int]) -> list[Problem]:
    """Count and size limits, from sizes known before reading (zip directory, or stat)."""
    if len(sizes) > MAX_FILES:
        return [
            Problem("too_many_files", source, "", f"{len(sizes):,} files; a submission may hold at most {MAX_FILES:,}")
        ]
    problems = [
        Problem("too_large", name, "", f"{size:,} bytes uncompressed; a file may have at most {MAX_FILE_BYTES:,}")
        for name, size in sizes.items()
        if size > MAX_FILE_BYTES
    ]
    total = sum(sizes.values())
    if total > MAX_TOTAL_BYTES:
        problems.append(
            Problem("too_large", source, "", f"{total:,} bytes uncompressed in all; at most {MAX_TOTAL_BYTES:,}")
        )
    return problems


class _Swapped(Exception):
    """A folder or file of a submission is no longer the one listed (a link, or another one, put there)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _open_listed(name: str, flags: int, folder: int, listed: tuple[int, int], rel: str) -> tuple[int, os.stat_result]:
    """(descriptor, fstat) of `name` in the folder open as `folder`, opened without following a link;
    _Swapped (naming `rel`) unless it is the (device, inode) `listed`."""
    try:
        fd = os.open(name, flags, dir_fd=folder)
    except OSError as e:
        if e.errno in _SWAP_ERRORS:
            raise _Swapped(rel) from e
        raise
    now = os.fstat(fd)
    if (now.st_dev, now.st_ino) != listed:
        os.close(fd)
        raise _Swapped(rel)
    return fd, now


class _Tree:
    """The folders of a folder submission, opened by descriptor below the root's, each checked to be the
    folder listed. Holds the chain of folders opened last, which the next file (in sorted order) mostly
    shares: a folder is opened about once per walk, and only as many are open at a time as it is deep."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.folders: dict[str, tuple[int, int]] = {}  # relative path -> (device, inode), as listed
        self.chain: list[tuple[str, int]] = []  # (relative path, descriptor), from the root down

    def open(self, rel: str) -> int:
        """The descriptor of the listed folder `rel` ("" for the root)."""
        while self.chain and not (rel == self.chain[-1][0] or rel.startswith(self.chain[-1][0] + "/")):
            os.close(self.chain.pop()[1])
        here = self.chain[-1][0] if self.chain else ""
        rest = rel[len(here) + 1 :] if here else rel
        for part in rest.split("/") if rest else []:
            here = f"{here}/{part}" if here else part
            parent = self.chain[-1][1] if self.chain else self.root
            fd, _ = _open_listed(part, _DIR_FLAGS, parent, self.folders[here], here)
            self.chain.append((here, fd))
        return self.chain[-1][1] if self.chain else self.root

    def close(self) -> None:
        """Close the chain's folders (never the root's descriptor, which the caller owns)."""
        while self.chain:
            os.close(self.chain.pop()[1])


def _list_folder(tree: _Tree) -> tuple[dict[str, os.stat_result], list[Problem]]:
    """The wanted files of the tree (relative POSIX path -> lstat), and a `link` problem for every link
    found on the way: a symbolic link (recorded, never entered or opened) or a file with more than one
    hard link. Each folder is listed through its own descriptor (`_Tree.open`), its entries told apart
    by lstat relative to it. Stops once more than MAX_FILES are found."""
    files: dict[str, os.stat_result] = {}
    problems: list[Problem] = []
    pending = [""]
    while pending and len(files) <= MAX_FILES:
        folder = pending.pop()
        fd = tree.open(folder)
        with os.scandir(fd) as entries:
            names = sorted(entry.name for entry in entries)
        for name in names:
            rel = f"{folder}/{name}" if folder else name
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                problems.append(Problem("link", rel, "", LINK_MESSAGE))
            elif stat.S_ISDIR(st.st_mode):
                tree.folders[rel] = _identity(st)
                pending.append(rel)
            elif stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                problems.append(Problem("link", rel, "", HARD_LINK_MESSAGE.format(st.st_nlink)))
            elif stat.S_ISREG(st.st_mode) and _wanted(PurePosixPath(rel)):
                files[rel] = st
    return dict(sorted(files.items())), sorted(problems, key=lambda p: p.file)


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def _read_listed(tree: _Tree, rel: str, listed: os.stat_result) -> bytes:
    """At most MAX_FILE_BYTES + 1 bytes of the file listed as `rel`, opened below its folder's descriptor;
    _Swapped when it (or a folder on its way) is no longer the one listed, or has gained a hard link."""
    folder, _, name = rel.rpartition("/")
    fd, now = _open_listed(name, _OPEN_FLAGS, tree.open(folder), _identity(listed), rel)
    with os.fdopen(fd, "rb") as f:
        if now.st_nlink > 1:  # a second name made since it was listed
            raise _Swapped(rel)
        return f.read(MAX_FILE_BYTES + 1)  # the file may have grown since it was listed


def _read_folder(source: str, root: int) -> tuple[dict[str, bytes], list[Problem]]:
    """The folder `source`, open as `root`, walked by descriptor (see the module docstring)."""
    tree = _Tree(root)
    try:
        return _read_tree(source, tree)
    except _Swapped as e:
        return {}, [Problem("link", e.name, "", SWAP_MESSAGE)]
    finally:
        tree.close()


def _read_tree(source: str, tree: _Tree) -> tuple[dict[str, bytes], list[Problem]]:
    """`_read_folder`: list, check links and sizes, then read each file, every folder opened afresh."""
    listed, problems = _list_folder(tree)
    if problems:
        return {}, problems
    problems = _size_problems(source, {name: st.st_size for name, st in listed.items()})
    if problems:
        return {}, problems
    tree.close()  # each folder is opened again, and checked again, on the way to its files
    files = {}
    for name, st in listed.items():
        data = _read_listed(tree, name, st)
        if len(data) > MAX_FILE_BYTES:
            return {}, [Problem("too_large", name, "", f"more than {MAX_FILE_BYTES:,} bytes")]
        files[name] = data
    return files, []


def _read_zip(source: str, raw: io.BufferedReader) -> tuple[dict[str, bytes], list[Problem]]:
    """The archive's JSON members; every limit checked from the directory before a member is read."""
    size = os.fstat(raw.fileno()).st_size
    if size > MAX_ARCHIVE_BYTES:
        return {}, [Problem("too_large", source, "", f"the archive has {size:,} bytes; at most {MAX_ARCHIVE_BYTES:,}")]
    return _read_archive(source, raw)


def _read_archive(source: str, raw: io.BufferedReader) -> tuple[dict[str, bytes], list[Problem]]:
    """`_read_zip` past the archive's size: names, links and sizes from the directory, then the members."""
    with zipfile.ZipFile(raw) as z:
        infos = z.infolist()
        if len(infos) > MAX_FILES:
            return {}, [
                Problem(
                    "too_many_files", source, "", f"{len(infos):,} members; a submission may hold at most {MAX_FILES:,}"
                )
            ]
        problems, seen = [], set()
        for info in infos:
            name = member_path(info.filename)
            if member_is_link(info):
                problems.append(Problem("link", info.filename, "", f"archive member {LINK_MESSAGE}"))
            elif unsafe_member_name(info.filename):
                problems.append(Problem("unsafe_path", info.filename, "", "member name is absolute or contains '..'"))
            elif name in seen:
                problems.append(Problem("unsafe_path", info.filename, "", f"two members have this name (as {name})"))
            seen.add(name)
        wanted = [i for i in infos if not i.is_dir() and _wanted(PurePosixPath(member_path(i.filename)))]
        problems += _size_problems(source, {i.filename: i.file_size for i in wanted})
        if problems:
            return {}, problems
        files, total = {}, 0
        for info in wanted:
            with z.open(info) as member:
                data = member.read(MAX_FILE_BYTES + 1)  # headers can lie about the size
            total += len(data)
            if len(data) > MAX_FILE_BYTES or total > MAX_TOTAL_BYTES:
                return {}, [Problem("too_large", info.filename, "", "inflates past the size its header declares")]
            files[member_path(info.filename)] = data
    return files, []


def member_path(name: str) -> str:
    """An archive member's name as the path it stands for (`a/./b`, `a//b` and `./a/b` are all `a/b`, a
    folder's trailing `/` dropped; a name with `..` is refused before: `unsafe_member_name`): two members are
    duplicates when their paths are, so a second copy is refused by the duplicate rule, never read over the
    first."""
    return posixpath.normpath(name)


def role(path: str) -> str:
    """What a file in a submission is: manifest, model_meta, run_record or result."""
    p = PurePosixPath(path)
    if path == MANIFEST:
        return "manifest"
    if p.name == MODEL_META:
        return "model_meta"
    if p.parent.name == RUN_RECORDS:
        return "run_record"
    return "result"


def record_path_of(result_path: str) -> str:
    p = PurePosixPath(result_path)
    return str(p.parent / RUN_RECORDS / p.name)


def result_path_of(record_path: str) -> str:
    p = PurePosixPath(record_path)
    return str(p.parent.parent / p.name)


def model_meta_of(result_path: str, files: dict[str, bytes]) -> JSONObject | None:
    """The MTEB ModelMeta saved beside a result (or beside its revision folder, for experiments)."""
    p = PurePosixPath(result_path).parent
    for folder in (p, *p.parents):
        raw = files.get(str(folder / MODEL_META)) if str(folder) != "." else files.get(MODEL_META)
        if raw is not None:
            if json_depth(raw) > MAX_JSON_DEPTH:
                return None
            try:
                data = json.loads(raw)
            except ValueError:  # not UTF-8, not JSON, or an integer too long to convert
                return None
            return data if isinstance(data, dict) else None
    return None


class ManifestModel(TypedDict):
    """A model setting a submission holds, with its tasks (manifest.json's `models[]`)."""

    name: str
    revision: str
    experiment: str  # "default", or the options that differ from the family's defaults
    tasks: list[str]


class ManifestFile(TypedDict):
    """A file of the submission (manifest.json's `files[]`)."""

    path: str
    sha256: str
    bytes: int


class Manifest(TypedDict):
    """manifest.json, as `bench submit` writes it into the zip (schemas/manifest.schema.json)."""

    format: str  # MANIFEST_FORMAT
    format_version: int
    created_at: str  # ISO time, to the second
    harness_version: str | None
    models: list[ManifestModel]
    files: list[ManifestFile]


def pack(submission: Submission, out: Path, models: list[ManifestModel]) -> Manifest:
    """Write `submission`'s files and a manifest into the zip `out`; return the manifest."""
    from bench.core.fileio import atomic_write
    from bench.core.versions import package_versions

    payload = {p: b for p, b in sorted(submission.files.items()) if p != MANIFEST}
    manifest: Manifest = {
        "format": MANIFEST_FORMAT,
        "format_version": 1,
        "created_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "harness_version": package_versions().get("instruct-bench"),
        "models": models,
        "files": [{"path": p, "sha256": hashlib.sha256(b).hexdigest(), "bytes": len(b)} for p, b in payload.items()],
    }

    def write(tmp: Path) -> None:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as z:
            for name, data in [
                (MANIFEST, (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode()),
                *payload.items(),
            ]:
                info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, data)
        tmp.write_bytes(buffer.getvalue())

    if out.exists() and out.is_dir():
        raise BenchError(f"--out {out} is a folder; give a file name ending in .zip")
    atomic_write(out, write)
    return manifest
