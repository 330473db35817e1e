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
from itertools import accumulate

MAX_JSON_DEPTH = 64
MAX_FILES = 10_000
MAX_FILE_BYTES = 32 * 2**20
MAX_TOTAL_BYTES = 256 * 2**20
MAX_ARCHIVE_BYTES = 64 * 2**20

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = [0] * 256
for _open, _close in (b"[]", b"{}"):
    _STEP[_open], _STEP[_close] = 1, -1


def json_depth(data: bytes) -> int:
    """How deep `data`'s arrays and objects nest, counted without parsing (no recursion).

    Brackets inside strings do not count; for invalid JSON the count is a best effort, and the
    parser that runs next reports the syntax error.
    """
    brackets = _STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def unsafe_member_name(name: str) -> bool:
    """True for an archive member name that is absolute or climbs out of the archive (`../x`).

    The build never extracts archives, but such a name is never made by `bench submit`, so it is
    either damage or an attack, and a name with `..` could pose as another file of the submission.
    """
    parts = name.replace("\\", "/").split("/")
    return name.startswith(("/", "\\")) or bool(re.match(r"[A-Za-z]:", name)) or ".." in parts
