"""Loading task data from the Hugging Face hub (pinned revision) or from a local directory.

Local layout, the same schema as the published datasets (documented in docs/guides/local-data.md):

    DATA_DIR/<TaskName>/<config>.{csv,jsonl,json,parquet}   tasks with several configs (IntentEmotion)
    DATA_DIR/<TaskName>/<split>.{csv,jsonl,json,parquet}    tasks with one config (InstructSTSB: test.jsonl)
    DATA_DIR/<TaskName>/[<subset>/]  a `datasets` save_to_disk folder  tasks of MTEB's registry (bench/tasks/generic.py)

Local files are parsed with the standard library so that a malformed row is reported with its line
number, and so that texts such as "NA" or "None" stay texts (pandas would turn them into NaN).

A data file may be damaged or hostile; each way is one DataError naming the file, the line or row, and
the fix, never a traceback or a stall: JSON nested past MAX_DEPTH (counted on the bytes before the
recursive parser runs), an integer too long for Python, a CSV field past csv's 128 KiB limit (usually
an unclosed quote), a corrupt or truncated parquet file, or one whose footer declares, or whose values
expand to, more than MAX_PARQUET_BYTES (a decompression bomb), a text that is blank to the eye (only spaces
or zero-width characters) or holds a lone surrogate (valid JSON, but no UTF-8 writer takes it).
"""

from __future__ import annotations

import csv
import io
import json
import logging
import os
import sys
from collections import defaultdict
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Literal, Protocol, SupportsFloat, SupportsIndex, TypedDict, TypeVar, cast

import numpy as np

from bench.core.bounded import (
    MAX_DEPTH,
    brief,
    brief_line,
    is_blank,
    json_depth,
    json_too_deep,
    load_json_bounded,
    surrogate_problem,
)
from bench.core.errors import DataError
from bench.core.fileio import sha256_file, sha256_json
from bench.core.json_types import JSON
from bench.tasks.rows import Label, RawRow, RowT

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from datasets import Dataset, DatasetDict

logger = logging.getLogger(__name__)

DATA_DIR_ENV = "INSTRUCT_BENCH_DATA_DIR"
# A local parquet file's bounds, on its footer before any column is read and on what it decodes to: a data
# file of texts, labels and scores (the largest published set the harness runs is a few MB); every row
# becomes a Python dict, so 2 GiB of values already takes several times that in memory.
MAX_PARQUET_BYTES = 2 * 2**30
MAX_PARQUET_ROWS = 10_000_000
PARQUET_BATCH_ROWS = 4096  # rows decoded at a time: a batch's expanded size is counted before it is expanded
LOCAL_SUFFIXES = (".csv", ".jsonl", ".json", ".parquet")
MANIFEST = "manifest.json"  # written by every builder beside its files (bench/dataset_builders/)

ColumnKind = Literal["text", "label", "score"]
_Key = TypeVar("_Key", bound=Hashable)


@dataclass(frozen=True)
class Schema(Generic[RowT]):
    """Columns a task type needs: texts must be non-empty strings, labels non-null, scores numbers.

    `row` is the TypedDict (bench/tasks/rows.py) a validated row is: its keys must be the columns, so
    that `validate_rows` returns exactly what the type says.
    """

    row: type[RowT]
    columns: Mapping[str, ColumnKind]

    def __post_init__(self) -> None:
        keys = set(getattr(self.row, "__required_keys__", ())) | set(getattr(self.row, "__optional_keys__", ()))
        if keys != set(self.columns):
            raise TypeError(
                f"Schema columns {sorted(self.columns)} are not the keys of {self.row.__name__}: {sorted(keys)}"
            )

    @property
    def names(self) -> list[str]:
        return list(self.columns)


class StandIn(TypedDict):
    """Whether a task's data stands in for its published set (`stand_in_of`), as the run record keeps it."""

    stand_in: bool
    stand_in_note: str | None


class _CsvReader(Protocol):
    """What `_csv_record` uses of `csv.reader`'s object."""

    @property
    def line_num(self) -> int: ...

    def __iter__(self) -> Iterator[list[str]]: ...

    def __next__(self) -> list[str]: ...


def default_data_dir() -> Path | None:
    value = os.environ.get(DATA_DIR_ENV)
    return Path(value).expanduser() if value else None


def find_local_file(task_dir: Path, stem: str) -> Path:
    """The file for one config or split; a clear error names what was expected."""
    candidates = [task_dir / f"{stem}{suffix}" for suffix in LOCAL_SUFFIXES]
    found = [p for p in candidates if p.is_file()]
    if not found:
        expected = " or ".join(p.name for p in candidates)
        raise DataError(
            f"Missing data file for {task_dir.name}: expected {task_dir / stem}.* ({expected}). "
            f"See docs/guides/local-data.md for the layout."
        )
    return found[0]


def read_local_rows(path: Path, columns: Sequence[str]) -> Sequence[RawRow]:
    """Rows of a local file, checked for the expected columns."""
    suffix = path.suffix
    if suffix == ".csv":
        return _read_csv(path, columns)
    if suffix in (".jsonl", ".json"):
        return _read_json(path, columns)
    if suffix == ".parquet":
        return _read_parquet(path, columns)
    raise DataError(f"{path}: unsupported file type '{suffix}'; use one of {', '.join(LOCAL_SUFFIXES)}.")


def read_utf8(path: Path) -> str:
    """A local data file's text: UTF-8, with or without the byte-order mark Excel writes (utf-8-sig).

    Anything else (Latin-1, UTF-16) is a DataError naming the file, the offending byte and the fix.
    """
    return _decode(path, path.read_bytes())


def _decode(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise DataError(
            f"{path} line {line}: not UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start}; perhaps Latin-1 or "
            f'Windows-1252). Re-save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`, or "CSV UTF-8" in Excel).'
        ) from None


def _read_csv(path: Path, columns: Sequence[str]) -> list[dict[str, str]]:
    reader = csv.reader(io.StringIO(read_utf8(path), newline=""))
    header = _csv_record(path, reader)
    if header is None:
        raise DataError(f"{path}: file is empty; expected a header line with {', '.join(columns)}.")
    _check_columns(path, header, columns)
    rows = []
    while (record := _csv_record(path, reader)) is not None:
        if not record:
            continue
        if len(record) != len(header):
            raise DataError(
                f"{path} line {reader.line_num}: malformed row, expected {len(header)} fields "
                f"({', '.join(header)}) but found {len(record)}. Quote fields that contain commas."
            )
        rows.append(dict(zip(header, record, strict=True)))
    return rows


def _csv_record(path: Path, reader: _CsvReader) -> list[str] | None:
    """The next record, or None at the end; a csv.Error names the line the record starts on."""
    start = reader.line_num + 1
    try:
        return next(reader, None)
    except csv.Error as e:
        if "field larger than field limit" in str(e):
            raise DataError(
                f"{path} line {start}: a field runs past {csv.field_size_limit():,} characters (csv's limit), usually "
                f"because a quote opened in it is never closed, so the rest of the file reads as one field. "
                f'Close the quote (a quote inside a field is written ""), or give texts that long as JSONL.'
            ) from None
        raise DataError(f"{path} line {start}: not a valid CSV row ({brief_line(e)}).") from None


def _read_json(path: Path, columns: Sequence[str]) -> list[dict[str, JSON]]:
    data = path.read_bytes()
    text = _decode(path, data)
    numbered: list[tuple[int, JSON]]
    if text.lstrip().startswith("["):
        array = _json_array(path, data, text)
        assert isinstance(array, list)  # JSON text opening with `[` parses to an array (or raised DataError)
        numbered = list(enumerate(array, start=1))
        where = "item"
    else:
        numbered = _jsonl_records(path, data, text)
        where = "line"
    rows = []
    for n, record in numbered:
        if not isinstance(record, dict):
            raise DataError(f"{path} {where} {n}: expected a JSON object with keys {', '.join(columns)}.")
        missing = [c for c in columns if c not in record]
        if missing:
            raise DataError(f"{path} {where} {n}: malformed row, missing key(s) {', '.join(missing)}.")
        rows.append(record)
    return rows


def _json_array(path: Path, data: bytes, text: str) -> JSON:
    """A `.json` file's array; its nesting is bounded on the bytes before the (recursive) parser runs."""
    line = json_too_deep(data)
    if line is not None:
        raise DataError(
            f"{path} line {line}: arrays/objects nest more than {MAX_DEPTH} levels deep; a data "
            "row is one object of texts, labels and scores. Fix the file."
        )
    try:
        parsed: JSON = json.loads(text)
        return parsed
    except json.JSONDecodeError as e:
        raise DataError(f"{path}: invalid JSON ({e.msg} at line {e.lineno}).") from None
    except ValueError:  # the only other one: an integer past sys.get_int_max_str_digits()
        raise DataError(
            f"{path}: holds a number too long to read (over {sys.get_int_max_str_digits():,} digits); fix the file."
        ) from None


def _jsonl_records(path: Path, data: bytes, text: str) -> list[tuple[int, JSON]]:
    """(line number, parsed line) of a JSONL file. Lines end at "\\n" only: JSON allows U+2028 and other
    breaks that Python's `splitlines` splits at inside a string."""
    if json_depth(data) > MAX_DEPTH:  # the whole file at once; line by line only to name the line
        for line_no, raw in enumerate(data.split(b"\n"), start=1):
            if json_too_deep(raw) is not None:
                raise DataError(
                    f"{path} line {line_no}: arrays/objects nest more than {MAX_DEPTH} levels deep; "
                    "a data row is one object of texts, labels and scores. Fix the line."
                )
    numbered: list[tuple[int, JSON]] = []
    for line_no, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            numbered.append((line_no, json.loads(line)))
        except json.JSONDecodeError as e:
            raise DataError(
                f"{path} line {line_no}: malformed JSON row ({e.msg}); each line must be one complete JSON object."
            ) from None
        except ValueError:  # the only other one: an integer past sys.get_int_max_str_digits()
            raise DataError(
                f"{path} line {line_no}: a number too long to read (over "
                f"{sys.get_int_max_str_digits():,} digits); fix the row."
            ) from None
    return numbered


def _read_parquet(path: Path, columns: Sequence[str]) -> list[dict[str, object]]:
    """Rows of a parquet file, read with pyarrow (as `datasets` does, without copying it into its cache).

    Only the task's columns are read. Compression makes a small file a large table: its footer is checked
    first (`_check_parquet_metadata`), before any column is read; then, as a footer can lie and a
    dictionary-encoded column (pyarrow's default) declares only its distinct values, text columns are read
    as dictionaries and each batch's size once expanded is counted before it is (`_expanded_bytes`).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        metadata = pq.read_metadata(path)
        _check_parquet_metadata(path, metadata)
        schema = metadata.schema.to_arrow_schema()
        _check_columns(path, schema.names, columns)
        texts = [f.name for f in schema if f.name in columns and _is_text(f.type)]
        rows: list[dict[str, object]] = []
        expanded = 0
        with pq.ParquetFile(path, read_dictionary=texts) as parquet:
            for batch in parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=list(columns)):
                expanded += _expanded_bytes(batch)
                if expanded > MAX_PARQUET_BYTES:
                    raise DataError(
                        f"{path}: its values expand to more than {MAX_PARQUET_BYTES:,} bytes (its metadata declares "
                        f"{_parquet_declared_bytes(metadata):,}): a few values repeated over very many rows, or a "
                        "damaged file; so it is not read. Split the data, or give it as .jsonl or .csv."
                    )
                rows += batch.to_pylist()
        return rows
    except (pa.ArrowException, OSError, UnicodeDecodeError) as e:
        raise DataError(
            f"{path}: not a readable parquet file ({brief_line(e)}); it may be truncated or damaged. "
            f"Write it again (or give the data as .jsonl or .csv)."
        ) from None


def _parquet_declared_bytes(metadata: pq.FileMetaData) -> int:
    """The size a parquet file's footer says its data takes uncompressed: the larger of its row groups'
    total and their column chunks' sum (the two agree unless the footer is damaged or hostile)."""
    groups = [metadata.row_group(i) for i in range(metadata.num_row_groups)]
    chunks = sum(g.column(j).total_uncompressed_size for g in groups for j in range(g.num_columns))
    return max(sum(g.total_byte_size for g in groups), chunks)


def _check_parquet_metadata(path: Path, metadata: pq.FileMetaData) -> None:
    """Refuse, from the footer alone, a parquet file that declares more rows or uncompressed bytes than a
    data file holds: a few MB of compressed repeated text can declare gigabytes (a decompression bomb)."""
    declared = _parquet_declared_bytes(metadata)
    if metadata.num_rows > MAX_PARQUET_ROWS or declared > MAX_PARQUET_BYTES:
        raise DataError(
            f"{path}: its metadata declares {metadata.num_rows:,} rows and {declared:,} bytes uncompressed, "
            f"past what a data file may hold ({MAX_PARQUET_ROWS:,} rows, {MAX_PARQUET_BYTES:,} bytes); so it is "
            "not read. Split the data into several tasks' files, or give it as .jsonl or .csv."
        )


def _expanded_bytes(batch: pa.RecordBatch) -> int:
    """The bytes `batch` takes once each text column read as a dictionary is expanded, as `to_pylist`
    does: a value's length for every row that refers to it, counted from the lengths, expanding nothing."""
    import pyarrow.compute as pc

    total = 0
    for column in batch.columns:
        if _is_dictionary_of_text(column.type):
            lengths = pc.take(pc.binary_length(column.dictionary), column.indices)
            total += column.indices.nbytes + (pc.sum(lengths).as_py() or 0)
        else:
            total += column.nbytes
    return total


def _is_text(kind: pa.DataType) -> bool:
    import pyarrow as pa

    return any(
        test(kind)
        for test in (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary, pa.types.is_large_binary)
    )


def _is_dictionary_of_text(kind: pa.DataType) -> bool:
    import pyarrow as pa

    return pa.types.is_dictionary(kind) and _is_text(kind.value_type)


def _check_columns(path: Path, header: Sequence[str], columns: Sequence[str]) -> None:
    missing = [c for c in columns if c not in header]
    if missing:
        found = ", ".join(h if len(h) <= 40 else h[:37] + "..." for h in header[:20]) + (
            " ..." if len(header) > 20 else ""
        )
        raise DataError(  # a header line can be a 128 KiB field: the names are cut
            f"{path}: missing column(s) {', '.join(missing)}; found {found or 'none'}, expected {', '.join(columns)}."
        )


def check_clusters(task: str, aspect: str, labels: Sequence[Label]) -> None:
    """A clustering aspect needs two or more gold clusters: with one, k-means has nothing to find and
    V-measure is 1.0 whatever the embeddings, a score that would mean nothing."""
    distinct = set(map(str, labels))
    if len(distinct) < 2:
        found = f"only {brief(next(iter(distinct)))}" if distinct else "no rows"
        raise DataError(
            f"{task} aspect '{aspect}': a clustering aspect needs at least two different cluster labels, found "
            f"{found}. Fix the 'cluster' column of that aspect's file (or rebuild it with `bench build-data`)."
        )


def load_hub_rows(path: str, *, revision: str, config: str | None, split: str) -> list[RawRow]:
    """Rows of a published dataset at a pinned revision."""
    import datasets

    try:
        ds = datasets.load_dataset(path, name=config, revision=revision, split=split)
    except Exception as e:  # noqa: BLE001  # datasets raises many types; all mean "not available"
        what = f"{path}" + (f" (config '{config}')" if config else "")
        raise DataError(
            f"Could not load {what} at revision {revision[:12]} from the Hugging Face hub "
            f"({type(e).__name__}: {str(e).splitlines()[0][:200]}). Offline? Pass --data-dir DIR "
            f"(or set {DATA_DIR_ENV}) with the files laid out as docs/guides/local-data.md shows."
        ) from None
    rows: list[RawRow] = ds.to_list()
    return rows


def validate_rows(rows: Sequence[RawRow], schema: Schema[RowT], origin: str) -> list[RowT]:
    """Keep only the schema's columns and check every value; errors name the row (1-based).

    Each row becomes the schema's TypedDict: its keys are the schema's columns (`Schema` checks that) and
    each value has been checked for its kind (`_check_value`), which is what the cast below asserts.
    """
    if not rows:
        raise DataError(f"{origin}: no rows.")
    clean: list[RowT] = []
    for i, row in enumerate(rows, start=1):
        out: dict[str, Label] = {}
        for column, kind in schema.columns.items():
            if column not in row:
                raise DataError(f"{origin} row {i}: missing column '{column}'.")
            out[column] = _check_value(row[column], kind, f"{origin} row {i}, column '{column}'")
        clean.append(cast("RowT", out))
    return clean


def _check_value(value: object, kind: ColumnKind, where: str) -> Label:
    """A text must be something a model sees (zero-width characters alone are empty) and writable as
    UTF-8 (no lone surrogate, which JSON's `\\ud800` can make); a label one value (a text or a number,
    not a list); a score a finite number. Messages show a bounded view of the value."""
    if kind == "text":
        if not isinstance(value, str):
            raise DataError(f"{where}: expected text, got {type(value).__name__} {brief(value)}.")
        if is_blank(value):
            raise DataError(
                f"{where}: empty text (only spaces or invisible characters such as U+200B). Remove the "
                "row or fill in the text."
            )
        _check_surrogates(value, where)
        return value
    if kind == "label":
        if value is None or (isinstance(value, str) and is_blank(value)):
            raise DataError(f"{where}: empty label.")
        if isinstance(value, str):
            _check_surrogates(value, where)
        elif not isinstance(value, (int, float)) or (isinstance(value, float) and not np.isfinite(value)):
            raise DataError(f"{where}: a label must be a text or a number, got {type(value).__name__} {brief(value)}.")
        return value
    if not isinstance(value, (str, int, float, bytes, SupportsFloat, SupportsIndex)):  # what float() takes
        raise DataError(f"{where}: expected a number, got {brief(value)}.")
    try:
        score = float(value)
    except (TypeError, ValueError):
        raise DataError(f"{where}: expected a number, got {brief(value)}.") from None
    if not np.isfinite(score):
        raise DataError(f"{where}: score is {score}.")
    return score


def _check_surrogates(text: str, where: str) -> None:
    problem = surrogate_problem(text)
    if problem:
        raise DataError(f"{where}: the text {problem}.")


def stand_in_of(local_files: Mapping[str, Path] | None) -> StandIn:
    """`stand_in` and `stand_in_note` of a task's data, for the run record and every table that shows it.

    Only the builder knows whether a folder holds the task's published set or a stand-in (a proxy built
    from other labelled data, a small sample): it says so in the folder's `manifest.json` (`"proxy":
    true` and a `note`). Hub and packaged data, and folders without a manifest, are not stand-ins.
    """
    for folder in sorted({Path(p).parent for p in (local_files or {}).values()}):
        manifest = folder / MANIFEST
        try:
            data = load_json_bounded(
                manifest.read_bytes(), str(manifest), error=DataError, max_bytes=16 * 2**20, unique_keys=False
            )
        except FileNotFoundError:
            continue
        except DataError as e:  # damaged or hostile (deep, huge, a repeated key): the builder did not write it
            logger.warning("%s is unreadable (%s); the data is not marked as a stand-in.", manifest, e)
            continue
        if isinstance(data, dict) and data.get("proxy"):
            note = data.get("note")
            return {"stand_in": True, "stand_in_note": str(note) if note else "stand-in data (see its manifest.json)"}
    return {"stand_in": False, "stand_in_note": None}


def local_revision(files: Sequence[Path]) -> str:
    """A revision string for local data: changes whenever any file's content changes."""
    digest = sha256_json(sorted((p.name, sha256_file(p)) for p in files))
    return f"local-{digest[:12]}"


# ----------------------------------------------------------------- `datasets` save_to_disk copies
# A folder `Dataset(Dict).save_to_disk` wrote: dataset_dict.json (a DatasetDict) or state.json (a Dataset).
SAVED_MARKERS = ("dataset_dict.json", "state.json")
# state.json holds `_fingerprint`, a hash of how the copy was made (the same rows loaded on two machines
# may get two), not of its rows: it is left out of the revision.
SAVED_UNHASHED = ("state.json",)


def is_saved_dataset(folder: Path) -> bool:
    """Whether `folder` is the output of `datasets` `save_to_disk` (of a DatasetDict or a Dataset)."""
    return folder.is_dir() and any((folder / marker).is_file() for marker in SAVED_MARKERS)


def saved_dataset_files(root: Path, folders: Sequence[Path]) -> dict[str, Path]:
    """The data files (`.arrow`, `.json`) of save_to_disk folders, keyed by their path under `root`, sorted."""
    files = {}
    for folder in folders:
        for path in folder.rglob("*"):
            if path.suffix in (".arrow", ".json") and path.is_file():
                files[path.relative_to(root).as_posix()] = path
    return dict(sorted(files.items()))


def saved_revision(files: Mapping[str, Path]) -> str:
    """`local-<hash>` of save_to_disk folders: every arrow and json file (but state.json), with its place
    in the folder, in sorted order; the same rows saved twice give the same revision."""
    parts = [(key, sha256_file(path)) for key, path in sorted(files.items()) if path.name not in SAVED_UNHASHED]
    return f"local-{sha256_json(parts)[:12]}"


def read_saved_dataset(folder: Path) -> Dataset | DatasetDict:
    """`datasets.load_from_disk(folder)`; a damaged copy is one DataError naming the folder and the fix."""
    import datasets

    try:
        return datasets.load_from_disk(str(folder))
    except Exception as e:  # noqa: BLE001  # datasets/pyarrow raise many types for a damaged copy; all mean "unreadable"
        raise DataError(
            f"{folder}: not a readable `datasets` save_to_disk folder ({type(e).__name__}: {brief_line(e)}). "
            f"Save it again with `load_dataset(...).save_to_disk(...)` (see docs/guides/local-data.md)."
        ) from None


def stratified_indices(labels: Sequence[Hashable], n: int, *, seed: int) -> list[int]:
    """At most `n` row indices, sampled per label in proportion to label frequency, in original order.

    Every label keeps at least one row when n allows it, so a quick `--limit` run still sees every
    cluster or class. Deterministic given the seed.
    """
    if n <= 0:
        raise ValueError("limit must be positive")
    if n >= len(labels):
        return list(range(len(labels)))
    groups: dict[Hashable, list[int]] = defaultdict(list)
    for i, label in enumerate(labels):
        groups[label].append(i)
    keys = sorted(groups, key=str)
    quotas = _largest_remainder({k: len(groups[k]) for k in keys}, n)
    rng = np.random.default_rng(seed)
    chosen: list[int] = []
    for k in keys:
        members = groups[k]
        chosen.extend(members[j] for j in rng.choice(len(members), size=quotas[k], replace=False))
    return sorted(chosen)


def _largest_remainder(sizes: Mapping[_Key, int], n: int) -> dict[_Key, int]:
    total = sum(sizes.values())
    floor_share = {k: max(1, int(n * s / total)) if n >= len(sizes) else int(n * s / total) for k, s in sizes.items()}
    floor_share = {k: min(v, sizes[k]) for k, v in floor_share.items()}
    remainder = n - sum(floor_share.values())
    order = sorted(sizes, key=lambda k: (-(n * sizes[k] / total - int(n * sizes[k] / total)), str(k)))
    while remainder > 0:
        progressed = False
        for k in order:
            if remainder and floor_share[k] < sizes[k]:
                floor_share[k] += 1
                remainder -= 1
                progressed = True
        if not progressed:
            break
    while remainder < 0:  # minimum-one rule overshot: take back from the largest groups
        k = max(floor_share, key=lambda key: (floor_share[key], str(key)))
        floor_share[k] -= 1
        remainder += 1
    return floor_share
