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
are skipped. Sizes, member counts and names are checked before anything is read (bench/leaderboard/limits.py):
a submission over a limit is rejected with a named reason, never read whole.

Symbolic links are never followed: a submission path that is a link, a link anywhere in a folder
(file or folder, hidden or not, whatever its name) and an archive member stored as a link each reject
the submission (`link`), and the link's target is never opened. A folder is listed with lstat; each
file is opened with O_NOFOLLOW and must still be the file listed (same device and inode), so a file
or folder swapped for a link while the build runs is caught too.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import stat
import zipfile
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from bench.core.errors import BenchError, DataError
from bench.core.fileio import unsafe_member_name
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
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
# Open without following a final link, and without blocking on a FIFO put where a file was listed.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
LINK_MESSAGE = "is a symbolic link: a submission is read without following links, so its target is never opened"


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
    """The submission at `path`: a zip from `bench submit`, or a folder (packed or plain results)."""
    path = Path(path)
    if path.is_symlink():
        return Submission(str(path), problems=[Problem("link", str(path), "", f"the submission path {LINK_MESSAGE}")])
    if path.is_dir():
        try:
            return Submission(str(path), *_read_folder(path))
        except OSError as e:
            return Submission(
                str(path), problems=[Problem("unreadable", str(path), "", f"cannot read the folder ({e})")]
            )
    if path.is_file():
        try:
            return Submission(str(path), *_read_zip(path))
        except ZIP_ERRORS as e:
            return Submission(
                str(path), problems=[Problem("unreadable", str(path), "", f"not a readable zip archive ({e})")]
            )
    raise DataError(f"No submission at {path}: give a results folder, a folder or a .zip written by `bench submit`.")


def _wanted(name: PurePosixPath) -> bool:
    return name.suffix == ".json" and not any(part.startswith(".") for part in name.parts)


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


def _list_folder(root: Path) -> tuple[dict[str, os.stat_result], list[str]]:
    """The wanted files under `root` (relative POSIX path -> lstat) and every link found on the way.

    Entries are told apart with lstat (scandir without following links), so a link to a file or a
    folder is recorded, never entered or opened. Stops once more than MAX_FILES are found.
    """
    files: dict[str, os.stat_result] = {}
    links: list[str] = []
    folders = [root]
    while folders and len(files) <= MAX_FILES:
        with os.scandir(folders.pop()) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                rel = Path(entry.path).relative_to(root).as_posix()
                if entry.is_symlink():
                    links.append(rel)
                elif entry.is_dir(follow_symlinks=False):
                    folders.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False) and _wanted(PurePosixPath(rel)):
                    files[rel] = entry.stat(follow_symlinks=False)
    return dict(sorted(files.items())), sorted(links)


def _read_listed(path: Path, listed: os.stat_result) -> bytes | None:
    """At most MAX_FILE_BYTES + 1 bytes of the file listed at `path`; None when it is no longer that
    regular file (made a link, or a folder on its way swapped for one, since it was listed)."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW met a link (EMLINK on some BSDs)
            return None
        raise
    with os.fdopen(fd, "rb") as f:
        now = os.fstat(f.fileno())
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (listed.st_dev, listed.st_ino):
            return None
        return f.read(MAX_FILE_BYTES + 1)  # the file may have grown since it was listed


def _read_folder(root: Path) -> tuple[dict[str, bytes], list[Problem]]:
    listed, links = _list_folder(root)
    if links:
        return {}, [Problem("link", name, "", LINK_MESSAGE) for name in links]
    problems = _size_problems(str(root), {name: st.st_size for name, st in listed.items()})
    if problems:
        return {}, problems
    files = {}
    for name, st in listed.items():
        data = _read_listed(root / name, st)
        if data is None:
            return {}, [
                Problem("link", name, "", "became a link or another file while being read; its target was not opened")
            ]
        if len(data) > MAX_FILE_BYTES:
            return {}, [Problem("too_large", name, "", f"more than {MAX_FILE_BYTES:,} bytes")]
        files[name] = data
    return files, []


def _read_zip(path: Path) -> tuple[dict[str, bytes], list[Problem]]:
    """The archive's JSON members; every limit checked from the directory before a member is read."""
    source = str(path)
    with os.fdopen(os.open(path, _OPEN_FLAGS), "rb") as raw:  # not through a link put there since the check
        size = os.fstat(raw.fileno()).st_size
        if size > MAX_ARCHIVE_BYTES:
            return {}, [
                Problem("too_large", source, "", f"the archive has {size:,} bytes; at most {MAX_ARCHIVE_BYTES:,}")
            ]
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
            if member_is_link(info):
                problems.append(Problem("link", info.filename, "", f"archive member {LINK_MESSAGE}"))
            elif unsafe_member_name(info.filename):
                problems.append(Problem("unsafe_path", info.filename, "", "member name is absolute or contains '..'"))
            elif info.filename in seen:
                problems.append(Problem("unsafe_path", info.filename, "", "two members have this name"))
            seen.add(info.filename)
        wanted = [i for i in infos if not i.is_dir() and _wanted(PurePosixPath(i.filename))]
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
            files[PurePosixPath(info.filename).as_posix()] = data
    return files, []


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


def model_meta_of(result_path: str, files: dict[str, bytes]) -> dict[str, Any] | None:
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


def pack(submission: Submission, out: Path, models: list[dict[str, Any]]) -> dict[str, Any]:
    """Write `submission`'s files and a manifest into the zip `out`; return the manifest."""
    from bench.core.fileio import atomic_write
    from bench.core.versions import package_versions

    payload = {p: b for p, b in sorted(submission.files.items()) if p != MANIFEST}
    manifest = {
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
