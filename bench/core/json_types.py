"""`JSON`: the type of a parsed JSON value, for values that are parsed JSON and nothing else.

Why: `Any` switches mypy off for everything it touches; `JSON` says what a value can be (a caller must
narrow it with `isinstance` before indexing), which is exactly what `json.loads` can return.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias

JSON: TypeAlias = dict[str, "JSON"] | list["JSON"] | str | int | float | bool | None
JSONObject: TypeAlias = dict[str, JSON]


def object_at(value: object) -> Mapping[str, object]:
    """`value` when it is a JSON object, else an empty one: how a reader walks into a block that an older
    file may lack or hold as null (`record.get("task")`), without an `Any` to index."""
    return value if isinstance(value, dict) else {}


__all__ = ["JSON", "JSONObject", "object_at"]
