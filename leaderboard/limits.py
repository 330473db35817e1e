"""Bounds on what one submission can make the leaderboard build read, parse or hold.

A submission comes from anyone, so the build must survive a hostile one: a zip bomb (a small archive
whose member inflates to gigabytes), an archive with millions of members, JSON nested deep enough to
overflow Python's recursion limit. Every bound is checked before the work it bounds:

* the archive's size on disk (`stat`) before it is opened, which bounds its central directory;
* member count, each member's declared size and their declared total, from the directory, before a
  member is read; each member is then read with a cap of its limit plus one byte, because a member's
  header can lie about its size;
* JSON nesting depth by scanning the bytes (strings removed, brackets counted) before `json.loads`,
  so a deep document never reaches the recursive parser.

A submission that exceeds a bound is rejected with the reason named here (leaderboard/validate.py
REASONS) and listed; the build goes on with the others. The limits are far above what a real
submission needs: a result file and its run record are a few KB each, and the whole of every suite
is under 100 files.
"""

from __future__ import annotations

import re

import numpy as np

MAX_JSON_DEPTH = 64
MAX_FILES = 10_000
MAX_FILE_BYTES = 4 * 2**20
MAX_TOTAL_BYTES = 32 * 2**20
MAX_ARCHIVE_BYTES = 64 * 2**20

_QUOTE = ord('"')
_STEP = np.zeros(256, dtype=np.int8)
_STEP[list(b"[{")], _STEP[list(b"]}")] = 1, -1


def json_depth(data: bytes) -> int:
    """How deep `data`'s arrays and objects nest, counted without parsing (no recursion).

    Vectorised, so time and memory are a few passes over the bytes whatever they hold: escaped
    backslashes and quotes are dropped, after which every quote opens or closes a string; brackets
    outside strings are summed. For invalid JSON the count is a best effort, and the parser that
    runs next reports the syntax error.
    """
    plain = np.frombuffer(data.replace(b"\\\\", b"").replace(b'\\"', b""), dtype=np.uint8)
    outside = (np.cumsum(plain == _QUOTE, dtype=np.int32) & 1) == 0
    steps = np.where(outside, _STEP[plain], np.int8(0))
    return int(np.cumsum(steps, dtype=np.int32).max(initial=0))


def unsafe_member_name(name: str) -> bool:
    """True for an archive member name that is absolute or climbs out of the archive (`../x`).

    The build never extracts archives, but such a name is never made by `bench submit`, so it is
    either damage or an attack, and a name with `..` could pose as another file of the submission.
    """
    parts = name.replace("\\", "/").split("/")
    return name.startswith(("/", "\\")) or bool(re.match(r"[A-Za-z]:", name)) or ".." in parts
