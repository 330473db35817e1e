"""The leaderboard's exports: leaderboard.json (everything the site shows) and leaderboard.csv.

leaderboard.csv has one row per (model, task), then one per instruction variant (`variant`: its label,
`variant_set`: its set), then one per external row's task (a paper's or MTEB's, bench/leaderboard/external.py),
so the spread can be analysed from the CSV. Its columns are one spec, `COLUMNS`: each column says, once,
what it reads from each kind of row (a kind that has no such value leaves the cell empty), so a column is
one entry (docs/guides/add-a-leaderboard-column.md).

leaderboard.csv is opened in spreadsheets, which run a cell starting with = + - @ (or tab, CR) as a
formula: such a text cell gets a leading "'" (OWASP's advice on CSV injection); the numeric columns
(`number=True`) are written as numbers and left as they are, so a score of -10.59 stays -10.59.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from bench.core.json_types import JSON
from bench.leaderboard.external import SUBMITTED
from bench.leaderboard.reference import TaskReference, task_reference
from bench.leaderboard.row_types import (
    ExternalJson,
    LeaderboardJson,
    ModelJson,
    ResultCell,
    SensitivityModel,
    SensitivityTask,
    VariantJson,
)
from bench.results import marks

Row = TypeVar("Row")  # what a CSV row is read from: a Submitted, Variant or External
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what makes a spreadsheet read a cell as a formula (OWASP)


@dataclass(frozen=True)
class Submitted:
    """A submitted result: its model (leaderboard.json's `models[]`), task and result."""

    model: ModelJson
    task: str
    result: ResultCell


@dataclass(frozen=True)
class Variant:
    """A result under an instruction variant: its task block (`sensitivity[]`), its model's block in it, the
    model's row where the leaderboard has one ({} otherwise) and the variant."""

    task: SensitivityTask
    entry: SensitivityModel
    model: Mapping[str, object]  # a `ModelJson`, or {} when the leaderboard has no row of the model
    variant: VariantJson


@dataclass(frozen=True)
class External:
    """An external row's score on one task (×100, as the source printed it) and the harness's facts of it."""

    row: ExternalJson
    task: str
    value: float
    ref: TaskReference | None


@dataclass(frozen=True)
class CsvColumn:
    """One column of leaderboard.csv: its header and what it reads from each kind of row (None: left empty).

    `number`: written as a number, never neutralised as a formula (a score of -10.59 stays so)."""

    name: str
    submitted: Callable[[Submitted], object] | None = None
    variant: Callable[[Variant], object] | None = None
    external: Callable[[External], object] | None = None
    number: bool = False


def _record_task(s: Submitted, key: str) -> JSON:
    """A field of the result's run record's `task` block (validated: the block is there, with the key)."""
    task = s.result["record"]["task"]
    return task[key] if isinstance(task, dict) else None


def _bool(value: object) -> object:
    """True/False as the csv module writes them; unknown (None) as an empty cell."""
    return "" if value is None else value


def _mark(key: str, read: Callable[[ResultCell], bool]) -> CsvColumn:
    return CsvColumn(key, submitted=lambda s: read(s.result))


COLUMNS: tuple[CsvColumn, ...] = (
    CsvColumn("model", lambda s: s.model["name"], lambda v: v.entry["name"], lambda x: x.row["name"]),
    CsvColumn(
        "revision", lambda s: s.model["revision"], lambda v: v.entry["revision"], lambda x: x.row["revision"] or ""
    ),
    CsvColumn("setting", lambda s: s.model["setting"], lambda v: v.entry["setting"]),
    CsvColumn(
        "family", lambda s: s.model["family"], lambda v: v.model.get("family") or "", lambda x: x.row["family"] or ""
    ),
    CsvColumn(
        "n_parameters",
        lambda s: s.model["n_parameters"] or "",
        lambda v: v.model.get("n_parameters") or "",
        lambda x: x.row["n_parameters"] or "",
        number=True,
    ),
    CsvColumn("readout", lambda s: s.model["readout"] or "", lambda v: v.model.get("readout") or ""),
    CsvColumn("template", lambda s: s.model["template"] or "", lambda v: v.model.get("template") or ""),
    CsvColumn("task", lambda s: s.task, lambda v: v.task["task"], lambda x: x.task),
    CsvColumn("task_type", lambda s: _record_task(s, "type"), external=lambda x: x.ref.type if x.ref else ""),
    CsvColumn(
        "main_score_name",
        lambda s: s.result["main_score_name"],
        lambda v: v.task["main_score_name"],
        lambda x: x.ref.main_score if x.ref else "",
    ),
    CsvColumn(
        "main_score",
        lambda s: f"{s.result['main_score']:.6f}",
        lambda v: f"{v.variant['score'] / 100:.6f}",
        lambda x: f"{x.value / 100:.6f}",
        number=True,
    ),
    CsvColumn(
        "main_score_x100",
        lambda s: f"{100 * s.result['main_score']:.2f}",
        lambda v: f"{v.variant['score']:.2f}",
        lambda x: f"{x.value:.2f}",
        number=True,
    ),
    CsvColumn("dataset_revision", lambda s: s.result["dataset_revision"]),
    _mark(marks.LOCAL_COPY.key, lambda r: r["local_copy"]),
    _mark(marks.STAND_IN.key, lambda r: r["stand_in"]),
    CsvColumn("instructions_sha256", lambda s: _record_task(s, "instructions_sha256")),
    CsvColumn("submission", lambda s: s.result["submission"], lambda v: v.variant["submission"]),
    CsvColumn("file", lambda s: s.result["file"], lambda v: v.variant["file"]),
    CsvColumn("verification", lambda s: s.result["verification"], lambda v: v.variant["verification"]),
    CsvColumn(marks.BASELINE.key, lambda s: s.model["baseline"], lambda v: v.entry["baseline"]),
    CsvColumn(
        "instruction_aware",
        lambda s: _bool(s.model["instruction_aware"]),
        lambda v: _bool(v.model.get("instruction_aware")),
        lambda x: _bool(x.row["instruction_aware"]),
    ),
    CsvColumn("variant", variant=lambda v: v.variant["label"]),
    CsvColumn("variant_set", variant=lambda v: v.variant["set"] or ""),
    # submitted | reported | mteb (bench/leaderboard/external.py)
    CsvColumn("source", lambda s: SUBMITTED, lambda v: SUBMITTED, lambda x: x.row["source"]),
    # an external row's mark words: "reported in <paper>, Table N" / "published by MTEB"
    CsvColumn("source_label", external=lambda x: x.row["source_label"]),
    CsvColumn("source_url", external=lambda x: x.row["url"]),
    # an MTEB row of a model MTEB's registry does not know: True/False; empty for other rows
    CsvColumn(
        marks.UNREGISTERED.key,
        external=lambda x: _bool(x.row.get("unregistered")) if x.row["source"] == "mteb" else "",
    ),
)
CSV_COLUMNS = tuple(c.name for c in COLUMNS)


def csv_text(data: LeaderboardJson) -> str:
    """One row per (model, task): the main score and where it came from; then one per instruction
    variant, then one per external row's task (see the module docstring)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for m in data["models"]:
        for task, r in m["results"].items():
            _write_row(writer, {c: c.submitted for c in COLUMNS}, Submitted(m, task, r))
    models = by_id(data)
    for t in data["sensitivity"]:
        for entry in t["models"]:
            model_id = entry.get("model_id")
            model: Mapping[str, object] = (models.get(model_id) if model_id is not None else None) or {}
            for v in entry["variants"]:
                _write_row(writer, {c: c.variant for c in COLUMNS}, Variant(t, entry, model, v))
    for x in data.get("external", []):
        for task, value in x["scores"].items():
            _write_row(writer, {c: c.external for c in COLUMNS}, External(x, task, value, task_reference(task)))
    return buffer.getvalue()


def _write_row(writer: csv.DictWriter[str], read: dict[CsvColumn, Callable[[Row], object] | None], source: Row) -> None:
    """One CSV row with every text cell a spreadsheet would run as a formula neutralised; numbers kept."""
    cells = {c: f(source) for c, f in read.items() if f is not None}
    writer.writerow({c.name: value if c.number else _cell(value) for c, value in cells.items()})


def _cell(value: object) -> object:
    """A text cell starting with = + - @ tab or CR, with a leading "'" (OWASP CSV injection)."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_START) else value


def write_exports(data: LeaderboardJson, out: Path) -> tuple[Path, Path]:
    """leaderboard.json (as `atomic_write_json` writes it, streamed: an indented dump built as one string
    takes ~5 times the file's size, ~100 MB for 1,000 rows) and leaderboard.csv."""
    from bench.core.fileio import atomic_write, atomic_write_text

    json_path, csv_path = out / "leaderboard.json", out / "leaderboard.csv"
    atomic_write(json_path, lambda tmp: _dump_json(data, tmp))
    atomic_write_text(csv_path, csv_text(data))
    return json_path, csv_path


def _dump_json(data: LeaderboardJson, path: Path) -> None:
    with path.open("w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, ensure_ascii=False, default=str)
        f.write("\n")


def by_id(data: LeaderboardJson) -> dict[str, ModelJson]:
    """leaderboard.json's models by their row id."""
    return {m["id"]: m for m in data["models"]}
