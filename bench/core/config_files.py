"""Reading a YAML or JSON file the user names on the command line (`--model-config`, `--instruction-variants`).

One place for what can go wrong before the content is even looked at: the file is missing or unreadable,
larger than a config file can be, not UTF-8, or not valid YAML/JSON (by its suffix: `.json` is JSON,
anything else YAML, a superset); and what a valid file can still do to the parser or to what reads it
next: nest deep enough to overflow the recursive parsers, expand through YAML aliases into billions of
values, write a key twice (the last would silently win), hold a lone surrogate, an integer of more digits
than Python reads or a date that does not exist (`bench/core/bounded.py`).
Each is one ConfigError naming the option, the file and the fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.core.bounded import MAX_CONFIG_BYTES, load_json_bounded, load_yaml_bounded, read_at_most
from bench.core.errors import ConfigError


def read_yaml_or_json(path: Path, option: str) -> tuple[Any, bytes]:
    """(parsed content, the file's bytes) of `path`, given as `option`."""
    what = f"{option} {path}"
    raw = _read_capped(path, option)
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"{what} is larger than {MAX_CONFIG_BYTES:,} bytes; a config file holds a few KB. "
            "Check that it is the file you meant."
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{what} is not UTF-8 text; save it as UTF-8.") from None
    if path.suffix.lower() == ".json":
        return load_json_bounded(raw, what), raw
    return load_yaml_bounded(text, what), raw


def _read_capped(path: Path, option: str) -> bytes:
    """At most one byte past the limit: a device (`/dev/zero`) or a huge file is never read whole."""
    try:
        return read_at_most(path, MAX_CONFIG_BYTES)
    except OSError as e:
        raise ConfigError(f"Cannot read {option} {path}: {e.strerror}.") from None
