"""Issue 30, "Trust, round three": a submission read while it changes, hard links, invisible names.

* Probe 6: a revision folder swapped for a link while `read_submission` walks it returned the outside
  folder's files as a clean submission (a path checked, then opened). The walk is by descriptor now:
  each swap, at the moment a hook makes it happen, is refused (`link`), and a thread swapping the folder
  for as long as the reads go on never gets outside content through.
* Probe 10a: a file with a second hard link (model_meta.json linked to a file outside) was read,
  published and packed; every file of a folder with more than one link is refused now.
* Probe 7: names holding a character that renders as nothing (Unicode's Default_Ignorable_Code_Point,
  the braille blank, enclosing marks) rendered exactly as MiniLM's name and were accepted.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import bench.leaderboard.submission as submission
from bench.leaderboard.names import problem, skeleton
from bench.leaderboard.submission import read_submission

SECRET = "CANARY-aws_secret_access_key-9f8e7d6c5b4a"
REVISION = "org__model/rev"  # the folder swapped, relative to the submission
TASK = "DemoInstructSTS"


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """(a folder submission with one result, its run record and model_meta.json, a folder outside with
    the same files holding SECRET): what a swapped or linked folder would expose."""
    root, outside = tmp_path / "sub", tmp_path / "outside"
    for folder, value in ((root / REVISION, "honest"), (outside, SECRET)):
        (folder / "run_records").mkdir(parents=True)
        for rel in ("model_meta.json", f"{TASK}.json", f"run_records/{TASK}.json"):
            (folder / rel).write_text(json.dumps({"name": "org/model", "license": value}), encoding="utf-8")
    return root, outside


def _leaks(sub: submission.Submission) -> bool:
    return any(SECRET.encode() in data for data in sub.files.values())


def _swap_for_link(root: Path, outside: Path) -> None:
    """The revision folder moved aside and a link to `outside` put in its place."""
    os.rename(root / REVISION, root / "org__model" / ".rev-aside")
    os.symlink(outside, root / REVISION, target_is_directory=True)


def _swap_for_folder(root: Path, outside: Path) -> None:
    """The revision folder moved aside and another folder moved into its place."""
    os.rename(root / REVISION, root / "org__model" / ".rev-aside")
    os.rename(outside, root / REVISION)


def _assert_refused(sub: submission.Submission, name: str) -> None:
    assert not sub.files and not _leaks(sub), sub
    assert [(p.reason, p.file) for p in sub.problems] == [("link", name)], sub.problems


# ----------------------------------------------------------------------------------- probe 6: swaps mid-read
def test_a_folder_swapped_for_a_link_while_being_listed_is_refused(tree, monkeypatch):
    """The swap lands after the revision folder's parent is listed and before it is listed itself: a
    reader that lists or opens by path then follows the link into the outside folder (HEAD did)."""
    root, outside = tree
    real_scandir = os.scandir
    swapped: list[bool] = []

    def scandir(target: Any = ".") -> contextlib.AbstractContextManager[list[os.DirEntry]]:
        with real_scandir(target) as it:
            entries = list(it)
        if not swapped and any(entry.name == "rev" for entry in entries):
            _swap_for_link(root, outside)
            swapped.append(True)
        return contextlib.nullcontext(entries)

    monkeypatch.setattr(os, "scandir", scandir)
    sub = read_submission(root)
    assert swapped
    _assert_refused(sub, REVISION)
    assert "symbolic link" in sub.problems[0].message


@pytest.mark.parametrize("swap", [_swap_for_link, _swap_for_folder], ids=["link", "folder"])
def test_a_folder_swapped_between_listing_and_reading_is_refused(tree, monkeypatch, swap):
    root, outside = tree
    real_list = submission._list_folder

    def list_then_swap(*args: Any) -> Any:
        listed = real_list(*args)
        swap(root, outside)
        return listed

    monkeypatch.setattr(submission, "_list_folder", list_then_swap)
    sub = read_submission(root)
    assert not sub.files and not _leaks(sub) and {p.reason for p in sub.problems} == {"link"}, sub.problems
    assert all(p.file.startswith(REVISION) for p in sub.problems)


HOLD = 0.0005  # seconds the swapping thread holds each state: about a read of the folder


@contextlib.contextmanager
def _swapping(root: Path, outside: Path) -> Iterator[list[int]]:
    """A thread swapping the revision folder for a link to `outside` and back, over and over, until the
    block ends (then the folder is put back); yields the count of swaps made."""
    stop, count = threading.Event(), [0]
    folder, aside, link = root / REVISION, root / "org__model" / ".rev-aside", root / "org__model" / ".rev-link"

    def swap() -> None:
        while not stop.is_set():
            os.symlink(outside, link, target_is_directory=True)
            os.rename(folder, aside)
            os.rename(link, folder)  # a link renamed over nothing: the folder's name is a link now
            time.sleep(HOLD)  # each state held a moment (the sleep also lets the reads run)
            os.unlink(folder)
            os.rename(aside, folder)
            time.sleep(HOLD)
            count[0] += 1

    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    try:
        yield count
    finally:
        stop.set()
        thread.join(timeout=10)
        assert not thread.is_alive()


def test_no_read_returns_outside_content_while_a_folder_is_swapped(tree):
    """Reads race a thread that swaps the folder (bounded: 2,000 reads or 5 s): each is refused, finds the
    folder missing or reads the honest files; none returns the outside folder's. Reading by path (the code
    before issue 30) returned it in 1 to 3 reads of 100 here, and in 123 of 55,727 in the issue's probe."""
    root, outside = tree
    outcomes: dict[str, int] = {}
    with _swapping(root, outside) as swaps:
        deadline = time.monotonic() + 5
        for _ in range(2_000):
            sub = read_submission(root)
            assert not _leaks(sub), f"outside content read after {sum(outcomes.values())} reads"
            kind = ",".join(sorted({p.reason for p in sub.problems})) or f"{len(sub.files)} files"
            outcomes[kind] = outcomes.get(kind, 0) + 1
            if time.monotonic() > deadline:
                break
    assert swaps[0] > 0 and outcomes.get("3 files", 0) > 0, outcomes  # the race ran, and clean reads happen


# ----------------------------------------------------------------------------------- probe 10a: hard links
@pytest.mark.parametrize(
    "rel", ["model_meta.json", f"{TASK}.json", f"run_records/{TASK}.json", "notes.txt", ".hidden.json"]
)
def test_a_file_with_a_second_hard_link_is_refused(tree, rel):
    """Every file of a folder, read or not: its other name may be a file outside (credentials)."""
    root, outside = tree
    target = root / REVISION / rel
    target.unlink(missing_ok=True)
    os.link(outside / "model_meta.json", target)
    sub = read_submission(root)
    _assert_refused(sub, f"{REVISION}/{rel}")
    assert "has 2 hard links" in sub.problems[0].message


def test_a_hard_link_made_after_listing_is_refused(tree, monkeypatch):
    root, outside = tree
    real_list = submission._list_folder

    def list_then_link(*args: Any) -> Any:
        listed = real_list(*args)
        os.link(root / REVISION / "model_meta.json", outside / "another-name.json")
        return listed

    monkeypatch.setattr(submission, "_list_folder", list_then_link)
    _assert_refused(read_submission(root), f"{REVISION}/model_meta.json")


def test_a_hard_linked_model_meta_is_neither_published_nor_packed(demo_results, tmp_path, capsys):
    """The whole path: a real submission whose model_meta.json is a second name of a file outside."""
    from bench.cli.main import main
    from bench.leaderboard import build

    root = Path(shutil.copytree(demo_results, tmp_path / "sub"))
    meta = next(root.rglob("model_meta.json"))
    secret = tmp_path / "outside.json"
    secret.write_text(json.dumps({**json.loads(meta.read_text()), "license": SECRET}), encoding="utf-8")
    meta.unlink()
    os.link(secret, meta)

    result = build([root], tmp_path / "site")
    (report,) = result.reports
    assert not report.valid and {p.reason for p in report.problems} == {"link"}, report.summary()
    published = b"".join(p.read_bytes() for p in (tmp_path / "site").rglob("*") if p.is_file())
    assert SECRET.encode() not in published and b"hard links" in published

    capsys.readouterr()
    packed = tmp_path / "submission.zip"
    assert main(["submit", str(root), "--out", str(packed)]) == 2
    _, err = capsys.readouterr()
    (line,) = [line for line in err.splitlines() if line.strip()]
    assert line.startswith("error: ") and "model_meta.json" in line and SECRET not in line, err
    assert not packed.exists()


# ----------------------------------------------------------------------------------- probe 7: invisible names
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
# The code points of the probe: each renders as nothing inserted in a name.
LISTED = [
    0x034F,  # COMBINING GRAPHEME JOINER
    0x1160,  # HANGUL JUNGSEONG FILLER
    0x115F,  # HANGUL CHOSEONG FILLER
    0x17B4,  # KHMER VOWEL INHERENT AQ
    0x17B5,  # KHMER VOWEL INHERENT AA
    *range(0xFE00, 0xFE10),  # VARIATION SELECTOR-1..16
    *range(0xE0100, 0xE01F0),  # VARIATION SELECTOR-17..256
    *range(0x180B, 0x1810),  # MONGOLIAN FREE VARIATION SELECTORs, VOWEL SEPARATOR
    0x2800,  # BRAILLE PATTERN BLANK
    0x20DD,  # COMBINING ENCLOSING CIRCLE
]
# Default_Ignorable_Code_Point as Unicode's DerivedCoreProperties.txt lists it (Unicode 15.1; unchanged
# since 14.0 added U+180F), copied here as the independent reference for the `regex` module's property.
DEFAULT_IGNORABLE = [
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
]


@pytest.mark.parametrize("code", LISTED, ids=lambda c: f"U+{c:04X}")
@pytest.mark.parametrize("where", [22, len(MINILM)], ids=["inside", "at-the-end"])
def test_a_name_with_an_invisible_character_is_rejected(code, where):
    name = MINILM[:where] + chr(code) + MINILM[where:]
    for board in ([], [MINILM]):
        found = problem(name, "r.json", board)
        assert found is not None and found.reason == "lookalike_name", (name, board)
        assert f"U+{code:04X}" in found.message and f"it shows as '{MINILM}'" in found.message, found.message
    assert skeleton(name) == skeleton(MINILM)  # compared without it


def test_invisible_is_unicode_default_ignorable_plus_blanks():
    """`invisible` over every code point: DerivedCoreProperties' Default_Ignorable_Code_Point, the braille
    blank and the enclosing marks (category Me), nothing else."""
    import unicodedata

    from bench.leaderboard.names import invisible

    expected = {c for low, high in DEFAULT_IGNORABLE for c in range(low, high + 1)} | {0x2800}
    expected |= {c for c in range(0x110000) if unicodedata.category(chr(c)) == "Me"}
    found = {c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and invisible(chr(c))}
    assert found == expected, sorted(found ^ expected)[:10]


@pytest.mark.parametrize(
    "name",
    [
        "BAAI/bge-\u4e2d\u6587",  # Chinese
        "nlpaueb/\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03cc-BERT",  # Greek
        "org/\ud55c\uad6d\uc5b4-\ubaa8\ub378",  # Hangul syllables (not fillers)
        "org/\u1780\u17b6\u179a",  # Khmer with a visible vowel sign (U+17B6), not the inherent ones
        "org/\u182e\u1823\u1829\u182d\u1823\u182f",  # Mongolian letters without a variation selector
    ],
)
def test_an_honest_name_with_visible_non_latin_letters_is_accepted(name):
    assert problem(name, "r.json", [MINILM]) is None


def test_prediction_files_are_left_out_of_a_submission(tree, tmp_path):
    """`bench run --save-predictions` files (predictions/<Task>_predictions.json) are neither read nor packed: they
    are no result (the schema would refuse them), and large; from a folder and from a zip alike."""
    import zipfile

    root, _ = tree
    predictions = root / REVISION / "predictions"
    predictions.mkdir()
    (predictions / f"{TASK}_predictions.json").write_text(json.dumps({"default": {"test": {}}}), encoding="utf-8")
    expected = {f"{REVISION}/{rel}" for rel in ("model_meta.json", f"{TASK}.json", f"run_records/{TASK}.json")}
    assert set(read_submission(root).files) == expected
    archive = tmp_path / "sub.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in root.rglob("*.json"):
            z.write(path, path.relative_to(root).as_posix())
    assert set(read_submission(archive).files) == expected
