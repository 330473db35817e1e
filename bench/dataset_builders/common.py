"""What every label-derived builder shares: reading sources once (hashed), writing outputs atomically, manifests.

Outputs carry no timestamps and are written in a fixed order, so a rebuild with the same sources and
seed is byte-identical. Every task folder gets a `manifest.json` with its sources (path, sha256,
bytes), outputs (rows, sha256, bytes), the seed and the builder's parameters.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, overload

from bench.core.errors import DataError
from bench.core.fileio import atomic_write


class MissingSourceError(DataError, FileNotFoundError):
    """A raw source file that is not where the builder expects it."""


@dataclass(frozen=True)
class SourceFile:
    """Raw bytes of a source file plus the provenance recorded in the manifest."""

    rel_path: str
    data: bytes

    @property
    def record(self) -> dict[str, object]:
        """Manifest entry; hashing the exact bytes parsed ties outputs to inputs."""
        return {"path": self.rel_path, "sha256": sha256_bytes(self.data), "bytes": len(self.data)}

    @property
    def text(self) -> str:
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise DataError(f"{self.rel_path}: not UTF-8 text ({e}).") from None


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_source(source_dir: Path, rel_path: str) -> SourceFile:
    """Read a raw file once, so the hash in the manifest is of exactly what was parsed."""
    path = Path(source_dir) / rel_path
    if not path.is_file():
        raise MissingSourceError(
            f"Expected source file not found: {path}. Pass the raw data root "
            f"(the directory that contains the checkout '{rel_path.split('/')[0]}/'; the docs' Data guide, "
            f"docs/guides/data.md, says where to get it) as --source-dir."
        )
    return SourceFile(rel_path=rel_path, data=path.read_bytes())


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write via a temporary file and rename (bench.core.fileio), so readers never see half a file."""
    atomic_write(Path(path), lambda tmp: tmp.write_bytes(data), option="--out")


def csv_bytes(header: Sequence[str], rows: Iterable[Sequence[object]]) -> bytes:
    """CSV with `\\n` line ends; the csv module quotes commas, quotes and newlines inside fields."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue().encode("utf-8")


def jsonl_bytes(records: Iterable[dict[str, object]]) -> bytes:
    """One JSON object per line; key order is preserved from the dicts."""
    return "".join(json.dumps(rec, ensure_ascii=False) + "\n" for rec in records).encode("utf-8")


def write_outputs(task_dir: Path, outputs: dict[str, tuple[bytes, int]]) -> dict[str, dict[str, object]]:
    """Write each output atomically and return its manifest record (rows + sha256)."""
    records: dict[str, dict[str, object]] = {}
    for name, (data, n_rows) in outputs.items():
        atomic_write_bytes(task_dir / name, data)
        records[name] = {"rows": n_rows, "sha256": sha256_bytes(data), "bytes": len(data)}
    return records


def write_manifest(task_dir: Path, manifest: dict[str, object]) -> dict[str, object]:
    """Stable formatting (fixed indent, no timestamps) keeps rebuilds byte-identical."""
    text = json.dumps(manifest, ensure_ascii=False, indent=2) + "\n"
    atomic_write_bytes(task_dir / "manifest.json", text.encode("utf-8"))
    return manifest


Quoting = Literal[0, 1, 2, 3]  # csv.QUOTE_MINIMAL, QUOTE_ALL, QUOTE_NONNUMERIC, QUOTE_NONE


@overload
def parse_delimited(
    src: SourceFile,
    *,
    delimiter: str = ...,
    header: Literal[True] = ...,
    quoting: Quoting = ...,
    required: Sequence[str] = ...,
) -> list[dict[str, str]]: ...


@overload
def parse_delimited(
    src: SourceFile,
    *,
    delimiter: str = ...,
    header: Literal[False],
    quoting: Quoting = ...,
    required: Sequence[str] = ...,
) -> list[list[str]]: ...


def parse_delimited(
    src: SourceFile,
    *,
    delimiter: str = ",",
    header: bool = True,
    quoting: Quoting = csv.QUOTE_MINIMAL,
    required: Sequence[str] = (),
) -> list[dict[str, str]] | list[list[str]]:
    """Rows of a CSV/TSV source; with a header, dicts checked for `required` columns."""
    reader = csv.reader(io.StringIO(src.text, newline=""), delimiter=delimiter, quoting=quoting)
    if not header:
        return [row for row in reader if row]
    names = next(reader, None)
    if names is None:
        raise DataError(f"{src.rel_path}: empty file; expected a header with {', '.join(required)}.")
    missing = [c for c in required if c not in names]
    if missing:
        raise DataError(f"{src.rel_path}: missing column(s) {', '.join(missing)}; found {', '.join(names)}.")
    rows = []
    for n, row in enumerate(reader, start=2):
        if not row:
            continue
        if len(row) != len(names):
            raise DataError(f"{src.rel_path} record {n}: expected {len(names)} fields, found {len(row)}.")
        rows.append(dict(zip(names, row, strict=True)))
    return rows


def summary(builder: str, seed: int, tasks: dict[str, dict[str, Any]]) -> dict[str, object]:
    """What a builder covering several task folders returns: one line per task (files and rows)."""
    return {
        "builder": builder,
        "seed": seed,
        "tasks": {name: {f: rec["rows"] for f, rec in m["outputs"].items()} for name, m in tasks.items()},
    }
