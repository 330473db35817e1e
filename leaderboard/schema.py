"""JSON Schemas of the files a submission holds, and validation messages that name file, field and problem.

The schemas live in `leaderboard/schemas/` so that anyone (CI, another tool) can validate result files
without this package: `result.schema.json` (an MTEB TaskResult as `bench run` writes it),
`run_record.schema.json` (the run record beside it) and `manifest.schema.json` (what `bench submit`
packs). They pin what the leaderboard reads; fields they do not name are allowed, so a newer harness
that records more still validates.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from jsonschema import Draft202012Validator, FormatChecker

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
SchemaName = Literal["result", "run_record", "manifest"]


@dataclass(frozen=True)
class Problem:
    """One reason a submission is rejected: which file, which field, what is wrong."""

    reason: str  # a key of leaderboard.validate.REASONS
    file: str
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}: {self.field}" if self.field else self.file
        return f"{where}: {self.message} [{self.reason}]"


@cache
def schema(name: SchemaName) -> dict[str, Any]:
    return json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))


@cache
def _validator(name: SchemaName) -> Draft202012Validator:
    return Draft202012Validator(schema(name), format_checker=FormatChecker())


def field_path(parts: Any) -> str:
    """`scores.test[0].main_score` from a jsonschema path deque."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def check(name: SchemaName, data: Any, file: str) -> list[Problem]:
    """Every schema violation of `data`, each naming the field (a missing field is named itself)."""
    problems = []
    for error in sorted(_validator(name).iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.message)):
        path = list(error.absolute_path)
        if error.validator == "required" and isinstance(error.instance, dict):
            missing = [k for k in error.validator_value if k not in error.instance]
            for key in missing:
                problems.append(Problem("schema", file, field_path([*path, key]), f"required field is missing ({name} schema)"))
            continue
        problems.append(Problem("schema", file, field_path(path) or "(top level)", f"{_short(error.message)} ({name} schema)"))
    return problems


def _short(message: str, limit: int = 200) -> str:
    return message if len(message) <= limit else message[: limit - 1] + "…"
