"""Reading a YAML or JSON file the user names on the command line (`--model-config`, `--instruction-variants`).

One place for what can go wrong before the content is even looked at: the file is missing or unreadable,
not UTF-8, or not valid YAML/JSON (by its suffix: `.json` is JSON, anything else YAML, a superset). Each
is one ConfigError naming the option, the file and the fix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.errors import ConfigError


def read_yaml_or_json(path: Path, option: str) -> tuple[Any, bytes]:
    """(parsed content, the file's bytes) of `path`, given as `option`."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ConfigError(f"Cannot read {option} {path}: {e.strerror}.") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{option} {path} is not UTF-8 text; save it as UTF-8.") from None
    import yaml

    try:
        if path.suffix.lower() == ".json":
            return json.loads(text), raw
        return yaml.safe_load(text), raw
    except json.JSONDecodeError as e:
        raise ConfigError(f"{option} {path} is not valid JSON: {_first_line(e)}") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{option} {path} is not valid YAML: {_first_line(e)}") from None


def _first_line(error: Exception) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__
