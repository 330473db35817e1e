"""`JSON`: the type of a parsed JSON value, for values that are parsed JSON and nothing else.

Why: `Any` switches mypy off for everything it touches; `JSON` says what a value can be (a caller must
narrow it with `isinstance` before indexing), which is exactly what `json.loads` can return.
"""

from __future__ import annotations

from typing import TypeAlias

JSON: TypeAlias = dict[str, "JSON"] | list["JSON"] | str | int | float | bool | None
JSONObject: TypeAlias = dict[str, JSON]

__all__ = ["JSON", "JSONObject"]
