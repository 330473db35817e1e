"""How the CLI prints a summary (a dry run's estimate, a training report): readable lines, not raw JSON.

One `field: value` line per field, nested fields indented under their parent, words for the keys
(`requests_at_most` reads "requests at most"), counts with thousands separators as in every other CLI
table, other numbers as they are. A command that also offers `--json` prints the same dict as JSON for
scripts.
"""

from __future__ import annotations

import json
from typing import Any


def summary_text(data: dict[str, Any], indent: str = "") -> str:
    """The dict as indented `field: value` lines."""
    lines = []
    for key, value in data.items():
        name = str(key).replace("_", " ")
        if isinstance(value, dict) and value:
            lines.append(f"{indent}{name}:")
            lines.append(summary_text(value, indent + "  "))
        else:
            lines.append(f"{indent}{name}: {_value(value)}")
    return "\n".join(lines)


def _value(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return {True: "yes", False: "no", None: "-"}[value]
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.6g}"
    if isinstance(value, list | tuple):
        return ", ".join(_value(v) for v in value) or "-"
    if isinstance(value, dict):
        return "-"
    return str(value)


def print_summary(data: dict[str, Any], as_json: bool = False) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False) if as_json else summary_text(data))
