"""Leaderboard fault probes: hostile or damaged submissions, each rejected with a named reason.

Table-driven: every probe builds one bad submission and names the rejection reason it must get
(leaderboard/validate.py REASONS). A final probe feeds them all to one build with a good submission:
the build finishes, the good one is published and every bad one is listed. Forged scores (manifest
deleted, manifest re-hashed) pass validation by design (a manifest detects accidents, not forgery)
and are caught by `bench leaderboard verify` instead (tests further down).
"""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from leaderboard import REASONS, build
from leaderboard.limits import MAX_ARCHIVE_BYTES, MAX_FILE_BYTES, MAX_FILES, MAX_JSON_DEPTH, json_depth
from leaderboard.submission import read_submission
from leaderboard.validate import validate
from leaderboard_fixtures import demo_results, result_files  # noqa: F401 (fixture)

GIB = 2**30
DEMO_TASK = "DemoInstructSTS"


def _copy(demo: Path, tmp: Path) -> Path:
    return Path(shutil.copytree(demo, tmp / "sub"))


def _zip_of(folder: Path, out: Path, extra: dict[str, bytes] | None = None) -> Path:
    """`folder`'s files as a zip, plus `extra` members written verbatim (names unchecked)."""
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for p in sorted(folder.rglob("*.json")):
            z.write(p, p.relative_to(folder).as_posix())
        for name, data in (extra or {}).items():
            z.writestr(name, data)
    return out


# ----------------------------------------------------------------------------------- probes
def _deep_json(demo: Path, tmp: Path) -> Path:
    root = _copy(demo, tmp)
    result, _ = result_files(root, DEMO_TASK)
    result.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    return root


def _deep_json_in_zip(demo: Path, tmp: Path) -> Path:
    root = _copy(demo, tmp)
    result, _ = result_files(root, DEMO_TASK)
    result.write_bytes(b'{"a":' * 100_000 + b"1" + b"}" * 100_000)
    return _zip_of(root, tmp / "deep.zip")


def _zip_bomb(demo: Path, tmp: Path) -> Path:
    """1.5 GiB of zeros in a ~1.5 MB archive, streamed: nothing near 1.5 GiB is written or held."""
    out = tmp / "bomb.zip"
    block = bytes(2**20)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z:
        with z.open(f"m/rev/{DEMO_TASK}.json", "w", force_zip64=True) as member:
            for _ in range(int(1.5 * GIB) // len(block)):
                member.write(block)
    assert out.stat().st_size < 2 * 2**20
    return out


def _lying_header(demo: Path, tmp: Path) -> Path:
    """A 40 MiB member whose directory entry and local header claim 1,000 bytes: zipfile reads only
    the declared bytes, the CRC then fails, and the archive is unreadable (never 40 MiB in memory)."""
    out = _zip_of(_copy(demo, tmp), tmp / "liar.zip", {"m/rev/Liar.json": bytes(40 * 2**20)})
    data = bytearray(out.read_bytes())
    with zipfile.ZipFile(out) as z:
        info = z.getinfo("m/rev/Liar.json")
    data[info.header_offset + 22: info.header_offset + 26] = (1000).to_bytes(4, "little")
    directory = data.rfind(b"PK\x01\x02")  # the last directory entry is the member added last
    assert data[directory + 46: directory + 46 + 15] == b"m/rev/Liar.json"
    data[directory + 24: directory + 28] = (1000).to_bytes(4, "little")
    out.write_bytes(bytes(data))
    return out


def _too_many_members(demo: Path, tmp: Path) -> Path:
    out = tmp / "many.zip"
    with zipfile.ZipFile(out, "w") as z:
        for i in range(MAX_FILES + 1):
            z.writestr(f"m/rev/T{i}.json", b"{}")
    return out


def _huge_archive(demo: Path, tmp: Path) -> Path:
    """An archive bigger than the limit is refused from its size alone (a sparse file: no disk used)."""
    out = tmp / "huge.zip"
    with out.open("wb") as f:
        f.truncate(MAX_ARCHIVE_BYTES + 1)
    return out


def _huge_file_in_folder(demo: Path, tmp: Path) -> Path:
    root = _copy(demo, tmp)
    result, _ = result_files(root, DEMO_TASK)
    with result.open("r+b") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: checked by stat, never read
    return root


def _path_traversal(demo: Path, tmp: Path) -> Path:
    return _zip_of(_copy(demo, tmp), tmp / "up.zip", {"../x.json": b"{}"})


def _nested_traversal(demo: Path, tmp: Path) -> Path:
    return _zip_of(_copy(demo, tmp), tmp / "up2.zip", {"m/rev/../../../etc/x.json": b"{}"})


def _absolute_name(demo: Path, tmp: Path) -> Path:
    return _zip_of(_copy(demo, tmp), tmp / "abs.zip", {"/etc/x.json": b"{}"})


def _duplicate_member(demo: Path, tmp: Path) -> Path:
    root = _copy(demo, tmp)
    result, _ = result_files(root, DEMO_TASK)
    with pytest.warns(UserWarning, match="Duplicate name"):
        return _zip_of(root, tmp / "dup.zip", {result.relative_to(root).as_posix(): b"{}"})


def _latin1_json(demo: Path, tmp: Path) -> Path:
    root = _copy(demo, tmp)
    _, record = result_files(root, DEMO_TASK)
    text = record.read_text(encoding="utf-8").replace('"cpu"', '"caf\u00e9"')
    record.write_bytes(text.encode("latin-1"))
    return root


def _not_a_zip(demo: Path, tmp: Path) -> Path:
    out = tmp / "bad.zip"
    out.write_bytes(b"PK\x03\x04 not really a zip")
    return out


PROBES: dict[str, tuple[Callable[[Path, Path], Path], str]] = {
    "JSON nested 100,000 deep (folder)": (_deep_json, "json_depth"),
    "JSON objects nested 100,000 deep (zip)": (_deep_json_in_zip, "json_depth"),
    "1.5 MB zip holding a 1.5 GiB member": (_zip_bomb, "too_large"),
    "member header understates its size": (_lying_header, "unreadable"),
    "more members than the limit": (_too_many_members, "too_many_files"),
    "archive over the size limit": (_huge_archive, "too_large"),
    "file over the size limit in a folder": (_huge_file_in_folder, "too_large"),
    "member named ../x.json": (_path_traversal, "unsafe_path"),
    "member climbing out through ..": (_nested_traversal, "unsafe_path"),
    "member with an absolute name": (_absolute_name, "unsafe_path"),
    "two members with one name": (_duplicate_member, "unsafe_path"),
    "non-UTF-8 (Latin-1) JSON": (_latin1_json, "unreadable"),
    "not a zip at all": (_not_a_zip, "unreadable"),
}
# Each limit's rejection reason has a probe here (the other reasons: tests/test_leaderboard.py).
LIMIT_REASONS = {"json_depth", "too_many_files", "too_large", "unsafe_path"}


def test_every_limit_reason_has_a_probe():
    assert LIMIT_REASONS <= set(REASONS)
    assert LIMIT_REASONS <= {reason for _, reason in PROBES.values()}


@pytest.fixture(scope="module")
def bad_submissions(demo_results, tmp_path_factory) -> dict[str, Path]:
    """Every probe's submission, built once (the zip bomb takes a few seconds of deflating zeros)."""
    base = tmp_path_factory.mktemp("bad")
    out = {}
    for i, (name, (make, _)) in enumerate(PROBES.items()):
        folder = base / f"p{i}"
        folder.mkdir()
        out[name] = make(demo_results, folder)
    return out


@pytest.mark.parametrize("probe", list(PROBES))
def test_hostile_submission_is_rejected_with_its_reason(probe, bad_submissions):
    report = validate(read_submission(bad_submissions[probe]))
    assert not report.valid
    assert {p.reason for p in report.problems} == {PROBES[probe][1]}, report.summary()


def test_no_bad_submission_stops_the_build(bad_submissions, demo_results, tmp_path):
    """All probes and one good submission in one build: it finishes, publishes the good one, lists the rest."""
    result = build([*bad_submissions.values(), demo_results], tmp_path / "site")
    assert len(result.rejected) == len(PROBES)
    assert [r.submission for r in result.reports if r.valid] == [str(demo_results)]
    assert (tmp_path / "site" / "index.html").is_file()
    listed = {r["submission"] for r in result.data["rejected"]}
    assert listed == {str(p) for p in bad_submissions.values()}


@pytest.mark.parametrize(("data", "depth"), [
    (b"{}", 1), (b"1", 0), (b'[[1, {"a": [2]}]]', 4), (b'["[[[", "\\"]]]]"]', 1), (b'{"\\\\": [[]]}', 3),
    (b"[" * 100_000 + b"]" * 100_000, 100_000),
])
def test_json_depth_counts_brackets_outside_strings(data, depth):
    assert json_depth(data) == depth
    if depth <= MAX_JSON_DEPTH:  # the independent value: Python's parser, where it does not overflow
        parsed = json.loads(data)

        def nest(v):
            return 1 + max((nest(x) for x in (v.values() if isinstance(v, dict) else v)), default=0) \
                if isinstance(v, dict | list) else 0
        assert nest(parsed) == depth


def test_limits_are_far_above_a_real_submission(demo_results):
    sizes = [p.stat().st_size for p in demo_results.rglob("*.json")]
    assert max(sizes) * 100 < MAX_FILE_BYTES
    assert max(json_depth(p.read_bytes()) for p in demo_results.rglob("*.json")) * 4 < MAX_JSON_DEPTH
    assert os.path.getsize(next(demo_results.rglob(f"{DEMO_TASK}.json"))) > 0
