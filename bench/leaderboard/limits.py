"""Bounds on what one submission can make the leaderboard build read, parse or hold.

A submission comes from anyone, so the build must survive a hostile one: a zip bomb (a small archive
whose member inflates to gigabytes), an archive with millions of members, JSON nested deep enough to
overflow Python's recursion limit. Every bound is checked before the work it bounds:

* the archive's size on disk (`stat`) before it is opened, which bounds its central directory;
* member count, each member's declared size and their declared total, from the directory, before a
  member is read; each member is then read with a cap of its limit plus one byte, because a member's
  header can lie about its size;
* JSON nesting depth by scanning the bytes (strings removed, brackets counted) before `json.loads`,
  so a deep document never reaches the recursive parser;
* links: a folder is walked by file descriptor (each folder opened with O_DIRECTORY|O_NOFOLLOW relative
  to its parent's descriptor, each file with O_NOFOLLOW, each checked to be the one listed), so a
  symbolic link is never entered or opened and a folder swapped for one mid-read is refused; a file
  with a second hard link is refused too (bench/leaderboard/submission.py); an archive member whose
  Unix mode says "symlink" (`member_is_link`) is refused from the directory. A link could point
  anywhere on the build machine (a credentials file), so its target is never read, whatever it is.

A submission that exceeds a bound is rejected with the reason named here (bench/leaderboard/validate.py
REASONS) and listed; the build goes on with the others. The limits are far above what a real
submission needs: a result file and its run record are a few KB each, and the whole of every suite
is under 100 files.
"""

from __future__ import annotations

import stat
import zipfile

from bench.core.bounded import json_depth  # noqa: F401 - re-exported: the leaderboard reads it from here

MAX_JSON_DEPTH = 64
MAX_FILES = 10_000
MAX_FILE_BYTES = 4 * 2**20
MAX_TOTAL_BYTES = 32 * 2**20
MAX_ARCHIVE_BYTES = 64 * 2**20


def member_is_link(info: zipfile.ZipInfo) -> bool:
    """True for an archive member stored as a symbolic link (Unix mode in the high bits of
    external_attr, as `zip --symlinks` writes it): its content is a path, which an extracting tool
    would follow. The build never extracts, but such a member is never made by `bench submit`."""
    return stat.S_ISLNK(info.external_attr >> 16)
