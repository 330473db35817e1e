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
are skipped.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from bench.errors import BenchError, DataError

MANIFEST = "manifest.json"
MANIFEST_FORMAT = "instruct-bench-submission"
MODEL_META = "model_meta.json"
RUN_RECORDS = "run_records"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


@dataclass
class Submission:
    """The JSON files of one submission, by relative POSIX path, as bytes (parsed later, with errors named)."""

    source: str
    files: dict[str, bytes] = field(default_factory=dict)
    unreadable: str | None = None  # why the archive itself could not be read

    @property
    def manifest(self) -> bytes | None:
        return self.files.get(MANIFEST)


def read_submission(path: str | Path) -> Submission:
    """The submission at `path`: a zip from `bench submit`, or a folder (packed or plain results)."""
    path = Path(path)
    if path.is_dir():
        return Submission(str(path), _read_folder(path))
    if path.is_file():
        try:
            return Submission(str(path), _read_zip(path))
        except (zipfile.BadZipFile, OSError) as e:
            return Submission(str(path), unreadable=f"not a readable zip archive ({e})")
    raise DataError(f"No submission at {path}: give a results folder, a folder or a .zip written by `bench submit`.")


def _read_folder(root: Path) -> dict[str, bytes]:
    files = {}
    for p in sorted(root.rglob("*.json")):
        rel = p.relative_to(root)
        if p.is_file() and not any(part.startswith(".") for part in rel.parts):
            files[rel.as_posix()] = p.read_bytes()
    return files


def _read_zip(path: Path) -> dict[str, bytes]:
    files = {}
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            name = PurePosixPath(info.filename)
            if info.is_dir() or name.suffix != ".json" or any(part.startswith(".") for part in name.parts):
                continue
            files[name.as_posix()] = z.read(info)
    return files


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
            try:
                data = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                return None
            return data if isinstance(data, dict) else None
    return None


def pack(submission: Submission, out: Path, models: list[dict[str, Any]]) -> dict[str, Any]:
    """Write `submission`'s files and a manifest into the zip `out`; return the manifest."""
    from bench.fileio import atomic_write
    from bench.runner import package_versions

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
            for name, data in [(MANIFEST, (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode()), *payload.items()]:
                info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, data)
        tmp.write_bytes(buffer.getvalue())

    if out.exists() and out.is_dir():
        raise BenchError(f"--out {out} is a folder; give a file name ending in .zip")
    atomic_write(out, write)
    return manifest
