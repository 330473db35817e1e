"""Leaderboard fault probes: hostile or damaged submissions, each rejected with a named reason.

Table-driven: every probe builds one bad submission and names the rejection reason it must get
(bench/leaderboard/validate.py REASONS). A final probe feeds them all to one build with a good submission:
the build finishes, the good one is published and every bad one is listed. Links to a credentials
file outside (SECRET) must leave no trace of it in anything the build prints or writes. Forged scores (manifest
deleted, manifest re-hashed) pass validation by design (a manifest detects accidents, not forgery)
and are caught by `bench leaderboard verify` instead (tests further down).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.leaderboard import REASONS, build
from bench.leaderboard.limits import MAX_ARCHIVE_BYTES, MAX_FILE_BYTES, MAX_FILES, MAX_JSON_DEPTH, json_depth
from bench.leaderboard.submission import read_submission
from bench.leaderboard.validate import validate
from leaderboard_fixtures import edit_json, result_files

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
    with (
        zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z,
        z.open(f"m/rev/{DEMO_TASK}.json", "w", force_zip64=True) as member,
    ):
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
    data[info.header_offset + 22 : info.header_offset + 26] = (1000).to_bytes(4, "little")
    directory = data.rfind(b"PK\x01\x02")  # the last directory entry is the member added last
    assert data[directory + 46 : directory + 46 + 15] == b"m/rev/Liar.json"
    data[directory + 24 : directory + 28] = (1000).to_bytes(4, "little")
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


def _duplicate_spelled(spelling: Callable[[str], str]) -> Callable[[Path, Path], Path]:
    """A result file repeated under another spelling of its path (`a/./b`, `a//b`): a later copy that a
    reader keying members by their path would read over the first."""

    def make(demo: Path, tmp: Path) -> Path:
        root = _copy(demo, tmp)
        result, _ = result_files(root, DEMO_TASK)
        return _zip_of(root, tmp / "respelled.zip", {spelling(result.relative_to(root).as_posix()): b"{}"})

    return make


def _latin1_json(demo: Path, tmp: Path) -> Path:
    root = _copy(demo, tmp)
    _, record = result_files(root, DEMO_TASK)
    text = record.read_text(encoding="utf-8").replace('"cpu"', '"caf\u00e9"')
    record.write_bytes(text.encode("latin-1"))
    return root


def _long_integer(demo: Path, tmp: Path) -> Path:
    """Valid JSON that Python's parser refuses (ValueError past 4,300 digits), not a JSONDecodeError."""
    root = _copy(demo, tmp)
    result, _ = result_files(root, DEMO_TASK)
    result.write_text(result.read_text().replace('"task_name"', '"padding": ' + "1" * 5000 + ', "task_name"', 1))
    return root


def _not_a_zip(demo: Path, tmp: Path) -> Path:
    out = tmp / "bad.zip"
    out.write_bytes(b"PK\x03\x04 not really a zip")
    return out


# A credentials file outside the submission, which a followed link would publish (a JSON object, so
# that a schema error quoting the file would show it: the worst case).
SECRET = "CANARY-aws_secret_access_key-9f8e7d6c5b4a"
LOOKALIKE = "sentence-transformers/\u0430ll-MiniLM-L6-v2"  # Cyrillic а (U+0430) for the Latin a


def _outside(tmp: Path) -> Path:
    secret = tmp / "outside" / "credentials.json"
    secret.parent.mkdir()
    secret.write_text(json.dumps({"aws_secret_access_key": SECRET, "task_name": SECRET, "scores": SECRET}))
    return secret


def _linked_model_meta(demo: Path, tmp: Path) -> Path:
    root = _copy(demo, tmp)
    meta = next(root.rglob("model_meta.json"))
    meta.unlink()
    meta.symlink_to(_outside(tmp))
    return root


def _linked_result(demo: Path, tmp: Path) -> Path:
    root = _copy(demo, tmp)
    result, _ = result_files(root, DEMO_TASK)
    result.unlink()
    result.symlink_to(_outside(tmp))
    return root


def _linked_folder(demo: Path, tmp: Path) -> Path:
    """A folder of the submission that is a link to a folder outside, holding the secret as a result."""
    root = _copy(demo, tmp)
    secret = _outside(tmp)
    (secret.parent / "rev").mkdir()
    (secret.parent / "rev" / f"{DEMO_TASK}.json").write_text(secret.read_text())
    (root / "org__leak").symlink_to(secret.parent, target_is_directory=True)
    return root


def _linked_member(demo: Path, tmp: Path) -> Path:
    """A zip member stored as a symlink (as `zip --symlinks` writes one): its content is the target's path."""
    out = _zip_of(_copy(demo, tmp), tmp / "link.zip")
    info = zipfile.ZipInfo("org__leak/rev/model_meta.json")
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    with zipfile.ZipFile(out, "a") as z:
        z.writestr(info, str(_outside(tmp)))
    return out


def _linked_submission(demo: Path, tmp: Path) -> Path:
    """The submission path itself is a link (to a folder of JSON files outside)."""
    secret = _outside(tmp)
    (tmp / "sub").symlink_to(secret.parent, target_is_directory=True)
    return tmp / "sub"


def _lookalike_name(demo: Path, tmp: Path) -> Path:
    """The default setting's results renamed to LOOKALIKE: a second row that reads as MiniLM."""
    root = _copy(demo, tmp)
    for task in ("DemoIntentEmotion", DEMO_TASK, "DemoNYTClustering"):
        _, record = result_files(root, task)
        edit_json(record, lambda d: d["model"].update(name=LOOKALIKE))
    return root


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
    "two members with one path (a/./b)": (_duplicate_spelled(lambda p: p.replace("/", "/./", 1)), "unsafe_path"),
    "two members with one path (a//b)": (_duplicate_spelled(lambda p: p.replace("/", "//", 1)), "unsafe_path"),
    "non-UTF-8 (Latin-1) JSON": (_latin1_json, "unreadable"),
    "integer with 5,000 digits": (_long_integer, "unreadable"),
    "not a zip at all": (_not_a_zip, "unreadable"),
    "model_meta.json is a link to a file outside": (_linked_model_meta, "link"),
    "a result file is a link to a file outside": (_linked_result, "link"),
    "a folder in the results is a link to a folder outside": (_linked_folder, "link"),
    "zip member stored as a symlink": (_linked_member, "link"),
    "the submission path is a link": (_linked_submission, "link"),
    "model name with a Cyrillic look-alike letter": (_lookalike_name, "lookalike_name"),
}
LINK_PROBES = [name for name, (_, reason) in PROBES.items() if reason == "link"]
# Each hostile-input reason has a probe here (the other reasons: tests/leaderboard/test_leaderboard.py).
LIMIT_REASONS = {"json_depth", "too_many_files", "too_large", "unsafe_path", "link", "lookalike_name"}


def test_every_limit_reason_has_a_probe():
    assert set(REASONS) >= LIMIT_REASONS
    assert {reason for _, reason in PROBES.values()} >= LIMIT_REASONS


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


@pytest.mark.parametrize("probe", ["two members with one path (a/./b)", "two members with one path (a//b)"])
def test_member_paths_are_normalised_before_the_duplicate_rule(probe, bad_submissions):
    """The second copy is refused as a duplicate (its name and the path it stands for), not read over the first."""
    (problem,) = validate(read_submission(bad_submissions[probe])).problems
    assert problem.reason == "unsafe_path" and problem.message.startswith("two members have this name (as ")
    assert "/./" in problem.file or "//" in problem.file  # the second spelling is the one refused


@pytest.mark.parametrize("probe", LINK_PROBES)
def test_a_link_is_named_and_its_target_never_read(probe, bad_submissions):
    report = validate(read_submission(bad_submissions[probe]))
    assert all("symbolic link" in p.message for p in report.problems), report.summary()
    assert SECRET not in report.summary() and "outside" not in report.summary()


def test_no_outside_content_reaches_the_output_or_the_site(bad_submissions, demo_results, tmp_path, capsys):
    """Every probe in one CLI build: the linked credentials appear nowhere in what it prints or writes."""
    site = tmp_path / "site"
    code, out, err = _cli(
        [
            "leaderboard",
            "build",
            "--results",
            *map(str, bad_submissions.values()),
            str(demo_results),
            "--out",
            str(site),
        ],
        capsys,
    )
    assert code == 0
    written = {p: p.read_text(encoding="utf-8") for p in site.rglob("*") if p.is_file()}
    assert {site / "index.html", site / "leaderboard.json", site / "leaderboard.csv"} <= set(written)
    for where, text in {"stdout": out, "stderr": err, **{str(p): t for p, t in written.items()}}.items():
        assert SECRET not in text, where
    rejected = json.loads(written[site / "leaderboard.json"])["rejected"]
    assert {p["reason"] for r in rejected for p in r["problems"]} >= {"link", "lookalike_name"}
    assert SECRET not in json.dumps(rejected)
    assert "symbolic link" in written[site / "index.html"]


def test_a_lookalike_name_is_rejected_naming_the_name_it_imitates(bad_submissions):
    (problem,) = validate(read_submission(bad_submissions["model name with a Cyrillic look-alike letter"])).problems
    assert problem.field == "model.name" and problem.file.endswith(
        f"run_records/{DEMO_TASK}.json"
    )  # the first file naming it
    assert "reads as the ASCII name 'sentence-transformers/all-MiniLM-L6-v2'" in problem.message
    assert "U+0430 CYRILLIC SMALL LETTER A" in problem.message


@pytest.mark.parametrize(
    ("name", "board", "imitates"),
    [
        (LOOKALIKE, [], "sentence-transformers/all-MiniLM-L6-v2"),  # passes for an ASCII name, board or not
        (
            "sentence-transformers/\uff41ll-MiniLM-L6-v2",
            [],
            "sentence-transformers/all-MiniLM-L6-v2",
        ),  # fullwidth: not NFKC
        ("sentence-transformers/all-MiniLM\u200b-L6-v2", [], "ZERO WIDTH SPACE"),  # invisible
        ("org/model\u2013v2", [], "org/model-v2"),  # en dash for the hyphen
        ("\u0391\u0392\u039f/x", [], "ABO/x"),  # whole-script Greek capitals that are all Latin look-alikes
        (
            "org/\u03bb\u0430",
            ["org/\u03bba"],
            "org/\u03bba",
        ),  # Cyrillic а beside Greek λ: only the board's name is imitated
        # Greek λ and Latin a in one word: mixed scripts, refused since issue 40 (the allowance: test_names.py)
        ("org/\u03bba", [], "mixes scripts within the word '\u03bba' (Greek, Latin)"),
        ("org/\u03bb-a", [], None),  # honest names: Greek, Chinese, beside Latin words or not
        ("nlpaueb/\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03cc-BERT", [], None),
        ("\u667a\u6e90/\u4e2d\u6587\u5411\u91cf\u6a21\u578b", ["sentence-transformers/all-MiniLM-L6-v2"], None),
        ("BAAI/bge-\u4e2d\u6587", [], None),
        ("sentence-transformers/all-MiniLM-L6-v2", [LOOKALIKE], None),  # ASCII names are never rejected here
        ("org/model-I", ["org/model-l"], None),
    ],
)
def test_lookalike_rule(name, board, imitates):
    from bench.leaderboard.names import problem

    found = problem(name, "r.json", board)
    assert (found is None) == (imitates is None), found
    if found is not None:
        assert found.reason == "lookalike_name" and imitates in found.message


def test_problem_messages_quote_a_bounded_view(demo_results, tmp_path):
    """A value of 1 MB where a number belongs, a 1 MB field name and a terminal escape: every problem is short."""
    from bench.core.bounded import STRING_CHARS
    from bench.leaderboard.schema import FILE_CHARS, MESSAGE_CHARS, Problem

    root = _copy(demo_results, tmp_path)
    result, record = result_files(root, DEMO_TASK)
    edit_json(result, lambda d: d["scores"]["test"][0].update(main_score=SECRET * 30_000, **{"k" * 2**20: "x"}))
    edit_json(record, lambda d: d["task"].update(version="\x1b]0;pwned\x07" + "v" * 2**20))
    problems = validate(read_submission(root)).problems
    assert problems
    for p in problems:
        assert len(p.message) <= MESSAGE_CHARS + 1 and len(p.field) <= FILE_CHARS + 1 and len(p.file) <= FILE_CHARS + 1
        assert p.message.count(SECRET) <= STRING_CHARS // len(SECRET) + 1 and "\x1b" not in str(p)
    by_field = {p.field: p.message for p in problems}
    assert by_field["scores.test[0].main_score"].startswith(f"'{SECRET}")
    assert "'… is not of type 'number'" in by_field["scores.test[0].main_score"]
    long = Problem.of(
        "schema", "f\x1b[2J" * 1000, "", "{} and {}", list(range(10**6)), {str(i): "y" * 10**6 for i in range(10)}
    )
    assert len(long.file) <= FILE_CHARS + 1 and "\x1b" not in long.file and len(long.message) <= 2 * 200 + 10
    assert "[0, 1, 2, 3, ...]" in long.message


@pytest.mark.parametrize(
    ("data", "depth"),
    [
        (b"{}", 1),
        (b"1", 0),
        (b'[[1, {"a": [2]}]]', 4),
        (b'["[[[", "\\"]]]]"]', 1),
        (b'{"\\\\": [[]]}', 3),
        (b"[" * 100_000 + b"]" * 100_000, 100_000),
    ],
)
def test_json_depth_counts_brackets_outside_strings(data, depth):
    assert json_depth(data) == depth
    if depth <= MAX_JSON_DEPTH:  # the independent value: Python's parser, where it does not overflow
        parsed = json.loads(data)

        def nest(v):
            return (
                1 + max((nest(x) for x in (v.values() if isinstance(v, dict) else v)), default=0)
                if isinstance(v, dict | list)
                else 0
            )

        assert nest(parsed) == depth


def test_limits_are_far_above_a_real_submission(demo_results):
    sizes = [p.stat().st_size for p in demo_results.rglob("*.json")]
    assert max(sizes) * 100 < MAX_FILE_BYTES
    assert max(json_depth(p.read_bytes()) for p in demo_results.rglob("*.json")) * 4 < MAX_JSON_DEPTH
    assert os.path.getsize(next(demo_results.rglob(f"{DEMO_TASK}.json"))) > 0


# ----------------------------------------------------------------------------------- forgery and verification
FORGED = 0.99  # DemoInstructSTS's real cosine_spearman is -0.098163 (-9.82 on the site); forged to 99.00


def _cli(argv: list[str], capsys) -> tuple[int, str, str]:
    from bench.cli.main import main

    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _one_error_line(code: int, out: str, err: str) -> str:
    assert code == 2, (code, out, err)
    assert "Traceback" not in out + err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


@pytest.fixture(scope="module")
def honest(demo_results, tmp_path_factory) -> tuple[Path, Path, Path]:
    """(packed zip, its verification file, embedding cache) of the demo results, verified once."""
    from bench.cli.main import main

    base = tmp_path_factory.mktemp("honest")
    cache = demo_results.parent / "lb-cache"  # the vectors the fixture's run computed (same model, same inputs)
    packed, verification = base / "minilm.zip", base / "minilm.verification.json"
    assert main(["submit", str(demo_results), "--out", str(packed)]) == 0
    assert main(["leaderboard", "verify", str(packed), "--out", str(verification), "--cache-dir", str(cache)]) == 0
    return packed, verification, cache


def _forge(packed: Path, out: Path, *, manifest: str) -> Path:
    """The packed submission with DemoInstructSTS (default setting) edited to 0.99; the manifest deleted
    ("deleted") or its sha256 and size recomputed for the edited file ("rehashed")."""
    with zipfile.ZipFile(packed) as z:
        files = {name: z.read(name) for name in z.namelist()}
    (name,) = [
        n for n in files if n.endswith(f"/{DEMO_TASK}.json") and "run_records" not in n and "experiments" not in n
    ]
    result = json.loads(files[name])
    assert round(100 * result["scores"]["test"][0]["main_score"], 2) == -9.82
    result["scores"]["test"][0].update(main_score=FORGED, cosine_spearman=FORGED)
    files[name] = json.dumps(result, indent=2).encode()
    if manifest == "deleted":
        del files["manifest.json"]
        for rel, data in files.items():
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_bytes(data)
        return out
    import hashlib

    listing = json.loads(files["manifest.json"])
    for item in listing["files"]:
        if item["path"] == name:
            item.update(sha256=hashlib.sha256(files[name]).hexdigest(), bytes=len(files[name]))
    files["manifest.json"] = json.dumps(listing).encode()
    forged = out / "forged.zip"
    with zipfile.ZipFile(forged, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for rel, data in files.items():
            z.writestr(rel, data)
    return forged


def _shown(data: dict, task: str = DEMO_TASK) -> tuple[float, str]:
    """(score ×100 in the demo table, row's verification) of the default-setting model row."""
    model = next(m for m in data["models"] if m["setting"] == "default")
    row = next(r for s in data["suites"] for r in s["rows"] if r["model_id"] == model["id"])
    assert row["verification"] == model["verification"]
    return round(row["scores"][task], 2), model["results"][task]["verification"]


def test_honest_submission_is_shown_verified(honest, tmp_path):
    packed, verification, _ = honest
    data = build([packed], tmp_path / "site", verifications=[verification]).data
    assert _shown(data) == (-9.82, "verified")
    assert {r["verification"] for m in data["models"] for r in m["results"].values()} == {"verified"}
    assert {m["verification"] for m in data["models"]} == {"verified"}
    import csv

    rows = list(csv.DictReader((tmp_path / "site" / "leaderboard.csv").open()))
    assert len(rows) == 6 and {r["verification"] for r in rows} == {"verified"}
    page = (tmp_path / "site" / "index.html").read_text()
    assert page.count('<span class="badge verified" title=') == 2  # one per model row (two settings)
    # without the verification file the same results are self-reported
    data = build([packed], tmp_path / "plain").data
    assert _shown(data) == (-9.82, "self-reported")


@pytest.mark.parametrize("manifest", ["deleted", "rehashed"])
def test_forged_score_is_never_shown_as_verified(manifest, honest, tmp_path, capsys):
    packed, verification, cache = honest
    (tmp_path / "forged").mkdir()
    forged = _forge(packed, tmp_path / "forged", manifest=manifest)
    # a manifest detects accidents, not forgery: the forged submission is consistent and accepted ...
    assert validate(read_submission(forged)).valid
    # ... but is shown only as self-reported, even beside the honest submission's verification file
    data = build([forged], tmp_path / "site", verifications=[verification]).data
    assert _shown(data) == (100 * FORGED, "self-reported")
    assert _shown(data, "DemoNYTClustering")[1] == "verified"  # untouched results keep their verification
    rows = [r for s in data["suites"] for r in s["rows"]]
    assert [r["verification"] for r in rows].count("self-reported") == 1
    # and verify recomputes the real score and refuses the forged one (exit status 1)
    checked = tmp_path / "forged.verification.json"
    code, out, err = _cli(
        ["leaderboard", "verify", str(forged), "--out", str(checked), "--cache-dir", str(cache)], capsys
    )
    assert code == 1 and "Traceback" not in out + err
    verdicts = {(v["task"], v["setting"]): v for v in json.loads(checked.read_text())["results"]}
    bad = verdicts[(DEMO_TASK, "default")]
    assert not bad["verified"] and bad["claimed"] == FORGED and round(100 * bad["recomputed"], 2) == -9.82
    assert "main_score: claimed 99.00 (×100), recomputed -9.82 (×100)" in bad["note"]
    assert sum(v["verified"] for v in verdicts.values()) == 5
    assert f"NOT verified {DEMO_TASK}" in out
    data = build([forged], tmp_path / "site2", verifications=[verification, checked]).data
    assert _shown(data) == (100 * FORGED, "self-reported")


def test_unloadable_model_is_not_verified_and_says_why(demo_results, tmp_path, capsys):
    root = _copy(demo_results, tmp_path)
    for record in root.rglob("run_records/*.json"):
        data = json.loads(record.read_text())
        data["model"]["spec"] = "no-such-model"
        record.write_text(json.dumps(data))
    code, out, err = _cli(["leaderboard", "verify", str(root), "--out", str(tmp_path / "v.json")], capsys)
    assert code == 1 and "Traceback" not in out + err
    results = json.loads((tmp_path / "v.json").read_text())["results"]
    assert len(results) == 6 and not any(r["verified"] for r in results)
    assert all(r["note"].startswith("could not re-run: Unknown model 'no-such-model'") for r in results)


@pytest.mark.parametrize(
    ("claimed", "recomputed", "ok"),
    [
        ({"main_score": 0.5}, {"main_score": 0.5 + 0.9e-4}, True),
        ({"main_score": 0.5}, {"main_score": 0.5 + 1.1e-4}, False),
        ({"main_score": 0.5, "a": 0.1}, {"main_score": 0.5, "a": 0.2}, False),  # a part, not the main score
        ({"main_score": 0.5, "a": 0.1}, {"main_score": 0.5}, False),  # a score the re-run does not give
        ({"main_score": float("nan")}, {"main_score": 0.5}, False),
        (
            {"main_score": 0.5, "hf_subset": "default", "languages": ["eng-Latn"]},
            {"main_score": 0.5, "hf_subset": "x"},
            True,
        ),
    ],
)
def test_tolerance(claimed, recomputed, ok):
    from bench.leaderboard.verify import TOLERANCE, compare

    assert TOLERANCE == 1e-4
    _, differ = compare({"scores": {"test": [claimed]}}, {"scores": {"test": [recomputed]}})
    assert (not differ) == ok, differ


# ----------------------------------------------------------------------------------- CLI faults: one line, exit 2
def _verify_missing(tmp: Path, bad: dict[str, Path]) -> list[str]:
    return ["leaderboard", "verify", str(tmp / "nope.zip"), "--out", str(tmp / "v.json")]


def _verify_rejected(tmp: Path, bad: dict[str, Path]) -> list[str]:
    return ["leaderboard", "verify", str(bad["1.5 MB zip holding a 1.5 GiB member"]), "--out", str(tmp / "v.json")]


def _verify_out_is_folder(tmp: Path, bad: dict[str, Path]) -> list[str]:
    return ["leaderboard", "verify", str(bad["not a zip at all"]), "--out", str(tmp)]


def _build_missing_verification(tmp: Path, bad: dict[str, Path]) -> list[str]:
    return [
        "leaderboard",
        "build",
        "--results",
        str(tmp),
        "--verification",
        str(tmp / "nope.json"),
        "--out",
        str(tmp / "s"),
    ]


def _build_foreign_verification(tmp: Path, bad: dict[str, Path]) -> list[str]:
    (tmp / "v.json").write_text('{"format": "something-else", "results": []}')
    return [
        "leaderboard",
        "build",
        "--results",
        str(tmp),
        "--verification",
        str(tmp / "v.json"),
        "--out",
        str(tmp / "s"),
    ]


def _build_deep_verification(tmp: Path, bad: dict[str, Path]) -> list[str]:
    (tmp / "v.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)
    return [
        "leaderboard",
        "build",
        "--results",
        str(tmp),
        "--verification",
        str(tmp / "v.json"),
        "--out",
        str(tmp / "s"),
    ]


def _build_latin1_verification(tmp: Path, bad: dict[str, Path]) -> list[str]:
    (tmp / "v.json").write_bytes('{"format": "caf\u00e9"}'.encode("latin-1"))
    return [
        "leaderboard",
        "build",
        "--results",
        str(tmp),
        "--verification",
        str(tmp / "v.json"),
        "--out",
        str(tmp / "s"),
    ]


def _submit_linked_file(tmp: Path, bad: dict[str, Path]) -> list[str]:
    return ["submit", str(bad["model_meta.json is a link to a file outside"]), "--out", str(tmp / "submission.zip")]


def _submit_linked_folder(tmp: Path, bad: dict[str, Path]) -> list[str]:
    return ["submit", str(bad["the submission path is a link"]), "--out", str(tmp / "submission.zip")]


CLI_PROBES: dict[str, tuple[Callable[[Path, dict[str, Path]], list[str]], str]] = {
    "verify: no such submission": (_verify_missing, "No submission at"),
    "verify: submission rejected by validation": (_verify_rejected, "only an accepted submission can be verified"),
    "verify: --out is a folder": (_verify_out_is_folder, "is a folder"),
    "build: verification file missing": (_build_missing_verification, "No verification file at"),
    "build: not a verification file": (_build_foreign_verification, "is not a verification file"),
    "build: verification file nested 100,000 deep": (_build_deep_verification, "nests deeper than 64"),
    "build: non-UTF-8 verification file": (_build_latin1_verification, "is unreadable"),
    "submit: a folder holding a link": (_submit_linked_file, "model_meta.json: is a symbolic link"),
    "submit: a link to a folder": (_submit_linked_folder, "is a symbolic link; a submission never follows links"),
}


@pytest.mark.parametrize("probe", list(CLI_PROBES))
def test_cli_fault_is_one_error_line(probe, bad_submissions, tmp_path, capsys):
    make, words = CLI_PROBES[probe]
    (tmp_path / "s").mkdir()
    before = sorted(p.name for p in (tmp_path / "s").iterdir())
    line = _one_error_line(*_cli(make(tmp_path, bad_submissions), capsys))
    assert words in line
    assert not (tmp_path / "v.json").exists() or probe.startswith("build")
    assert not (tmp_path / "submission.zip").exists() and SECRET not in line  # a refused submit packs nothing
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == before  # a failed build writes no site


def test_build_with_hostile_submissions_exits_0_and_lists_them(bad_submissions, demo_results, tmp_path, capsys):
    paths = [str(p) for p in bad_submissions.values()]
    code, out, err = _cli(
        ["leaderboard", "build", "--results", *paths, str(demo_results), "--out", str(tmp_path / "s")], capsys
    )
    assert code == 0 and "Traceback" not in out + err
    assert f"{len(PROBES)} of {len(PROBES) + 1} submission(s) rejected" in out
    assert "0 of 6 result(s) verified (the rest self-reported)" in out
    code, out, err = _cli(
        ["leaderboard", "build", "--strict", "--results", *paths, "--out", str(tmp_path / "s2")], capsys
    )
    assert code == 1 and "Traceback" not in out + err


def test_a_credential_in_a_run_record_is_never_published(demo_results, tmp_path):
    """A run record holding a URL credential (an older harness, an edited file: Azure Functions' `?code=`,
    userinfo) is masked before the site, leaderboard.json and leaderboard.csv are written."""
    from leaderboard_fixtures import edit_json

    root = _copy(demo_results, tmp_path)
    leaked = "https://user:PaSsWoRd-1@fn.example/api?code=SeCrEt-CoDe-2&jwt=SeCrEt-JwT-3"
    for record in root.rglob("run_records/*.json"):
        edit_json(
            record, lambda d: (d["model"]["settings"].update(base_url=leaked), d.update(command=["bench", leaked]))
        )
    result = build([root], tmp_path / "site")
    assert result.reports[0].valid
    published = b"".join(p.read_bytes() for p in (tmp_path / "site").rglob("*") if p.is_file())
    assert b"fn.example/api?code=***&jwt=***" in published
    for secret in (b"PaSsWoRd-1", b"SeCrEt-CoDe-2", b"SeCrEt-JwT-3"):
        assert secret not in published
