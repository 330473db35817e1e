"""JSON Schemas of the files a submission holds, and validation messages that name file, field and problem.

The schemas live in `bench/leaderboard/schemas/` so that anyone (CI, another tool) can validate result files
without this package: `result.schema.json` (an MTEB TaskResult as `bench run` writes it),
`run_record.schema.json` (the run record beside it) and `manifest.schema.json` (what `bench submit`
packs). They pin what the leaderboard reads; fields they do not name are allowed, so a newer harness
that records more still validates.

A `Problem` is published (the build's output, the site's rejected list, leaderboard.json), so it never
carries more of a submission than a glance: values are quoted through `brief` (bench/core/bounded.py's
bounded repr, which never formats the whole value: a few characters of a string, a few items of a list
or dict, at most BRIEF_CHARS in all, control and invisible characters escaped), and the Problem itself
cuts its file, field and message to FILE_CHARS / MESSAGE_CHARS, escaping them (`printable`). Schema
errors are worded here from the failing keyword and `brief(instance)`, not from jsonschema's message,
which quotes the whole instance.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from jsonschema import Draft202012Validator, FormatChecker

from bench.core.bounded import brief as bounded_brief
from bench.core.bounded import printable
from bench.core.json_types import JSONObject

if TYPE_CHECKING:
    from jsonschema import ValidationError

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
SchemaName = Literal["result", "run_record", "manifest"]


BRIEF_CHARS = 200  # one quoted value of any kind (a few items of a list or dict, two levels deep)
FILE_CHARS = 200  # a file name or field path
MESSAGE_CHARS = 500  # a whole message: the harness's own words plus a few bounded values


def brief(value: object) -> str:
    """A value from a submission as a problem quotes it: bench.core.bounded's bounded repr (control and
    invisible characters escaped), at most BRIEF_CHARS."""
    return bounded_brief(value, BRIEF_CHARS)


class Plain(str):
    """Text the harness wrote itself (a task's accepted revisions): `Problem.of` puts it in unquoted."""


@dataclass(frozen=True)
class Problem:
    """One reason a submission is rejected: which file, which field, what is wrong.

    Bounded on construction (file and field to FILE_CHARS, message to MESSAGE_CHARS, control characters
    escaped), whoever builds it; quote submission values with `Problem.of`, which passes each through
    `brief`, so a value is never formatted whole.
    """

    reason: str  # a key of bench.leaderboard.validate.REASONS
    file: str
    field: str
    message: str

    def __post_init__(self) -> None:
        for name, limit in (("file", FILE_CHARS), ("field", FILE_CHARS), ("message", MESSAGE_CHARS)):
            object.__setattr__(self, name, printable(str(getattr(self, name)), limit))

    @classmethod
    def of(cls, reason: str, file: str, field: str, template: str, *values: object) -> Problem:
        """A problem whose message quotes submission values: `template`'s `{}` are filled with `brief(value)`
        (a `Plain` value as it is)."""
        return cls(reason, file, field, template.format(*(v if isinstance(v, Plain) else brief(v) for v in values)))

    def __str__(self) -> str:
        where = f"{self.file}: {self.field}" if self.field else self.file
        return f"{where}: {self.message} [{self.reason}]"


@cache
def schema(name: SchemaName) -> JSONObject:
    return json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))


@cache
def _validator(name: SchemaName) -> Draft202012Validator:
    return Draft202012Validator(schema(name), format_checker=FormatChecker())


def field_path(parts: Iterable[str | int]) -> str:
    """`scores.test[0].main_score` from a jsonschema path deque."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def check(name: SchemaName, data: object, file: str) -> list[Problem]:
    """Every schema violation of `data`, each once and naming the field (a missing field is named itself).

    jsonschema reports a `required` keyword once per missing field, each error holding the whole list
    of required fields, so the missing fields are read from the instance and each problem is kept once
    (four fields missing used to be listed four times each).
    """
    problems: dict[Problem, None] = {}  # insertion-ordered set
    for error in sorted(_validator(name).iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.message)):
        path = list(error.absolute_path)
        if error.validator == "required" and isinstance(error.instance, dict):
            missing = [k for k in error.validator_value if k not in error.instance]
            for key in missing:
                problems[
                    Problem("schema", file, field_path([*path, key]), f"required field is missing ({name} schema)")
                ] = None
            continue
        problems[Problem("schema", file, field_path(path) or "(top level)", f"{_message(error)} ({name} schema)")] = (
            None
        )
    return list(problems)


# How each keyword the schemas use is worded; `{}` are brief(instance) and brief(the keyword's value).
_WORDING = {
    "type": "{} is not of type {}",
    "enum": "{} is not one of {}",
    "const": "{} is not {}",
    "pattern": "{} does not match {}",
    "format": "{} is not a {}",
    "minimum": "{} is less than the minimum of {}",
    "maximum": "{} is more than the maximum of {}",
    "minLength": "{} is shorter than {} character(s)",
    "minItems": "{} has fewer than {} item(s)",
    "minProperties": "{} has fewer than {} properties",
}


def _message(error: ValidationError) -> str:
    """A jsonschema error worded from its keyword and a bounded view of the instance (jsonschema's own
    message quotes the whole instance, which may be a whole file)."""
    if error.validator == "type" and isinstance(error.validator_value, list):
        return f"{brief(error.instance)} is not of type {', '.join(brief(t) for t in error.validator_value)}"
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set((error.schema or {}).get("properties", {}))
        extra = [k for k in error.instance if k not in allowed]
        return f"properties {brief(extra)} are not allowed here"
    template = _WORDING.get(str(error.validator), "{} fails the schema keyword " + brief(error.validator) + ": {}")
    return template.format(brief(error.instance), brief(error.validator_value))
