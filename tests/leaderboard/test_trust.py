"""Leaderboard trust, round three (issue 30): what one hostile submission can do to the build and the board.

* identical scores: 1,000 rows with one set of scores are one group, one note per row naming a few
  others, one printed line per group (was one note per pair: 999,000 lines, 8 minutes);
* numbers: an integer too big for a float (4,001 digits) is `out_of_range` at validation, not an
  OverflowError in `build`, `verify` and `submit`; any error a check did not foresee is that
  submission's `internal_error`, and the others still build;
* conflicts: decided by trust, not order; a verified result beats a self-reported one, two differing
  self-reported results are both held back and listed, and model_meta.json is part of "the same";
* schema problems listed once each; a result's splits and subsets exactly the task's (`subsets`).
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest

from bench.cli.main import main
from bench.leaderboard import REASONS, build, validate_all
from bench.leaderboard.entries import Entry, ModelKey
from bench.leaderboard.same_scores import same_scores
from bench.leaderboard.schema import check
from bench.leaderboard.submission import read_submission
from bench.leaderboard.validate import validate
from bench.leaderboard.verify import FORMAT, entry_sha256
from leaderboard_fixtures import copy_model, copy_results, edit_json, result_files

STS = "DemoInstructSTS"
DEMO = ("DemoIntentEmotion", STS, "DemoNYTClustering")
HUGE = 10**4001 - 1  # 4,001 digits: json.loads reads it (Python's limit is 4,300), no float holds it
NEW_CODES = ("out_of_range", "subsets", "conflict", "internal_error")


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _reasons(path: Path) -> set[str]:
    return {p.reason for p in validate(read_submission(path)).problems}


def _verification(path: Path, report: Any) -> Path:
    """A verification file (as `bench leaderboard verify` writes one) vouching for every result of `report`."""
    results = [{"verified": True, "sha256": entry_sha256(e)} for e in report.entries]
    path.write_text(json.dumps({"format": FORMAT, "results": results}), encoding="utf-8")
    return path


def _default(data: dict[str, Any]) -> dict[str, Any]:
    (model,) = [m for m in data["models"] if m["setting"] == "default"]
    return model


def _forge_sts(root: Path, score: float = 0.99) -> None:
    result, record = result_files(root, STS)
    main_name = json.loads(record.read_text())["task"]["main_score"]
    edit_json(result, lambda d: d["scores"]["test"][0].update({"main_score": score, main_name: score}))


def test_new_reasons_are_named_and_explained():
    for code in NEW_CODES:
        assert REASONS.get(code), code
    docs = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "leaderboard.md").read_text()
    assert all(f"`{code}`" in docs for code in NEW_CODES)


# ----------------------------------------------------------------------------------- 3: identical scores
def _row_entries(name: str, scores: dict[str, float]) -> list[Entry]:
    key = ModelKey(name, "r1", "default")
    return [
        Entry("s.zip", f"{name}/{task}.json", task, key, {"scores": {"test": [{"main_score": v}]}}, {})
        for task, v in scores.items()
    ]


def test_identical_rows_are_one_group_with_one_bounded_note_each():
    """50 copies of one row: 50 notes (one per row, each naming 3 others and counting 49), not 50 x 49."""
    from bench.leaderboard.rows import model_rows

    copies = [e for i in range(50) for e in _row_entries(f"org/copy-{i:02d}", {"A": 0.5, "B": 0.25})]
    honest = _row_entries("org/honest", {"A": 0.6, "B": 0.3})
    subset = _row_entries("org/one-task", {"A": 0.5})  # a copy of one task only: same on every task both have
    twins = same_scores(model_rows(copies + honest + subset))
    assert ModelKey("org/honest", "r1", "default") not in twins
    assert len(twins) == 51
    one = twins[ModelKey("org/copy-07", "r1", "default")]
    assert one.count == 50 and len(one.shown) == 3 and all(other.key.name != "org/copy-07" for other, _ in one.shown)
    flag = one.note()
    assert flag.startswith("same scores as 50 other rows on every task both have: org/") and flag.endswith("…")
    assert len(flag) < 300
    assert twins[ModelKey("org/one-task", "r1", "default")].count == 50  # shares task A with every copy
    assert len({t.group for t in twins.values()}) == 2  # the copies' scores, and the one-task row's


def test_two_rows_keep_the_pair_note():
    from bench.leaderboard.rows import model_rows

    rows = model_rows(_row_entries("org/a", {"A": 0.5, "B": 0.2}) + _row_entries("org/b", {"A": 0.5, "B": 0.2}))
    (pair,) = {t.note() for t in same_scores(rows).values() if "org/a" in t.note()}
    assert pair == "same scores as org/a @ r1 on every task both have (2)"


def test_many_copies_build_one_note_per_row_and_one_printed_line(demo_results, tmp_path, capsys):
    """40 rows with one set of scores, in one build: notes grow as the rows (40), not as their pairs (1,560)."""
    root = copy_results(demo_results, tmp_path / "sub")
    for i in range(39):
        copy_model(root, f"org/copy-{i:02d}")
    site = tmp_path / "site"
    code, out, _ = _cli(["leaderboard", "build", "--results", str(root), "--out", str(site)], capsys)
    assert code == 0
    data = json.loads((site / "leaderboard.json").read_text())
    flagged = [m for m in data["models"] if m["flags"]]
    assert len(flagged) == 40 and sum(len(m["flags"]) for m in data["models"]) == 40
    assert all(m["same_scores_count"] == 39 and len(m["same_scores_as"]) == 3 for m in flagged)
    assert len({m["same_scores_group"] for m in flagged}) == 1
    assert sum("same scores as" in line for line in out.splitlines()) == 1
    assert "40 model setting(s) flagged" in out and "same scores as 39 other rows" in out
    index = (site / "index.html").read_text()
    assert index.count("same scores as") == 40  # one badge title per row
    page = (site / "models" / f"{flagged[0]['id']}.html").read_text()
    assert page.count("same scores as") == 1 and "(pages: " in page


# ----------------------------------------------------------------------------------- 4: numbers
def _huge_score(root: Path) -> str:
    result, _ = result_files(root, STS)
    result.write_text(result.read_text().replace('"main_score": ', f'"main_score": {HUGE}, "x": ', 1))
    return "scores.test[0].main_score"


def _huge_record_number(root: Path) -> str:
    _, record = result_files(root, "DemoNYTClustering")
    text = record.read_text()
    record.write_text(text.replace('"evaluation_seconds": ', f'"evaluation_seconds": {HUGE}, "x": ', 1))
    return "evaluation_seconds"


def _huge_model_size(root: Path) -> str:
    meta = result_files(root, STS)[0].parent / "model_meta.json"
    meta.write_text(meta.read_text().replace('"n_parameters": ', f'"n_parameters": {HUGE}, "x": ', 1))
    return "n_parameters"


def _nan_score(root: Path) -> str:
    result, _ = result_files(root, "DemoIntentEmotion")
    result.write_text(result.read_text().replace('"main_score": ', '"main_score": NaN, "x": ', 1))
    return "scores.test[0].main_score"


HUGE_NUMBERS = {
    "a 4,001-digit score": _huge_score,
    "a 4,001-digit run record number": _huge_record_number,
    "a 4,001-digit model size in model_meta.json": _huge_model_size,
    "a NaN score (not JSON, read by Python)": _nan_score,
}


@pytest.mark.parametrize("probe", list(HUGE_NUMBERS))
def test_a_number_no_float_holds_is_rejected_at_validation(probe, demo_results, tmp_path):
    root = copy_results(demo_results, tmp_path / "sub")
    field = HUGE_NUMBERS[probe](root)
    report = validate(read_submission(root))
    assert {p.reason for p in report.problems} == {"out_of_range"}, report.summary()
    (problem,) = report.problems
    assert problem.field == field and len(problem.message) < 200
    if "NaN" not in probe:
        assert "an integer of 4,001 digits: no float holds it" in problem.message


def test_build_verify_and_submit_name_the_number_and_never_crash(demo_results, tmp_path, capsys):
    bad = copy_results(demo_results, tmp_path / "bad")
    _huge_score(bad)
    code, out, err = _cli(
        ["leaderboard", "build", "--results", str(bad), str(demo_results), "--out", str(tmp_path / "site")], capsys
    )
    assert code == 0 and "Traceback" not in out + err
    assert "[out_of_range]" in out and f"accepted {demo_results}" in out and "1 of 2 submission(s) rejected" in out
    for argv in (
        ["leaderboard", "verify", str(bad), "--out", str(tmp_path / "v.json")],
        ["submit", str(bad), "--out", str(tmp_path / "s.zip")],
    ):
        code, out, err = _cli(argv, capsys)
        assert code == 2 and "Traceback" not in out + err, argv
        assert next(line for line in err.splitlines() if line.strip()).startswith("error: ")
        assert "[out_of_range]" in out
    assert not (tmp_path / "v.json").exists() and not (tmp_path / "s.zip").exists()


def test_an_unforeseen_error_in_one_submission_is_its_reason_and_the_others_build(
    demo_results, tmp_path, capsys, monkeypatch
):
    from bench.leaderboard import site
    from bench.leaderboard import validate as validate_module

    boom = copy_results(demo_results, tmp_path / "boom")
    for task in DEMO:
        edit_json(result_files(boom, task)[1], lambda d: d["model"].update(name="org/boom"))
    real_check = validate_module._check_variant

    def check_variant(record_file: str, record: dict[str, Any]) -> list[Any]:
        if record["model"]["name"] == "org/boom":
            raise KeyError("a case no check foresaw")
        return real_check(record_file, record)

    unreadable = tmp_path / "reader-bug"
    unreadable.mkdir()
    real_read = site.read_submission

    def read_submission(path: str | Path) -> Any:
        if str(path) == str(unreadable):
            raise RecursionError("a reader bug on hostile input")
        return real_read(path)

    monkeypatch.setattr(validate_module, "_check_variant", check_variant)
    monkeypatch.setattr(site, "read_submission", read_submission)
    code, out, err = _cli(
        [
            "leaderboard",
            "build",
            "--results",
            str(boom),
            str(unreadable),
            str(demo_results),
            "--out",
            str(tmp_path / "s"),
        ],
        capsys,
    )
    assert code == 0 and "Traceback" not in out + err
    assert "2 of 3 submission(s) rejected" in out and f"accepted {demo_results}" in out
    data = json.loads((tmp_path / "s" / "leaderboard.json").read_text())
    reasons = {r["submission"]: {p["reason"] for p in r["problems"]} for r in data["rejected"]}
    assert reasons == {str(boom): {"internal_error"}, str(unreadable): {"internal_error"}}
    assert "unexpected KeyError" in out and "unexpected RecursionError" in out
    assert len(data["models"]) == 2


# ----------------------------------------------------------------------------------- 5: conflicts
def test_a_forgery_listed_first_loses_to_the_verified_result(demo_results, tmp_path, capsys):
    genuine = copy_results(demo_results, tmp_path / "genuine")
    forged = copy_results(demo_results, tmp_path / "forged")
    _forge_sts(forged)
    verification = _verification(tmp_path / "v.json", validate(read_submission(genuine)))
    for order in ([forged, genuine], [genuine, forged]):
        result = build(order, tmp_path / "site", verifications=[verification])
        assert all(r.valid for r in result.reports), [r.summary() for r in result.reports]
        model = _default(result.data)
        assert round(100 * model["results"][STS]["main_score"], 2) == -9.82
        assert model["verification"] == "verified"
        (conflict,) = result.data["conflicts"]
        assert conflict["task"] == STS and conflict["kept"]["submission"] == str(genuine)
        assert [h["submission"] for h in conflict["held"]] == [str(forged)]
        assert [h["verification"] for h in conflict["held"]] == ["self-reported"]
    code, out, _ = _cli(
        [
            "leaderboard",
            "build",
            "--results",
            str(forged),
            str(genuine),
            "--verification",
            str(verification),
            "--out",
            str(tmp_path / "cli"),
        ],
        capsys,
    )
    assert code == 0 and "1 conflict(s): 1 result(s) held back" in out
    assert f"on {STS}: kept the verified result of {genuine}:" in out
    assert "held back: they conflict" in out


def test_differing_self_reported_results_are_both_held_back(demo_results, tmp_path):
    first = copy_results(demo_results, tmp_path / "a")
    second = copy_results(demo_results, tmp_path / "b")
    _forge_sts(second)
    for order in ([first, second], [second, first]):
        reports = validate_all(order)
        assert all(r.valid for r in reports)
        assert [len(r.held) for r in reports] == [1, 1] and [len(r.merged) for r in reports] == [0, 5]
    result = build([first, second], tmp_path / "site")
    model = _default(result.data)
    assert STS not in model["results"] and len(model["results"]) == 2  # the other tasks are shown
    (conflict,) = result.data["conflicts"]
    assert conflict["kept"] is None and {h["submission"] for h in conflict["held"]} == {str(first), str(second)}
    assert conflict["decision"] == "all held back: no one result is verified"
    assert [a["held"] for a in result.data["accepted"]] == [1, 1]
    index = (tmp_path / "site" / "index.html").read_text()
    assert 'id="conflicts"' in index and "held back:" in index and 'href="#conflicts"' in index
    # both verified (two re-runs within tolerance): still no order to prefer one, so both stay held back
    both = [_verification(tmp_path / f"{r.name}.json", validate(read_submission(r))) for r in (first, second)]
    data = build([first, second], tmp_path / "both", verifications=both).data
    assert STS not in _default(data)["results"] and data["conflicts"][0]["kept"] is None


def test_model_meta_is_part_of_the_same_result(demo_results, tmp_path):
    """A byte-identical copy whose model_meta.json claims 70B parameters and another license: it neither
    merges with nor replaces the genuine row."""
    genuine = copy_results(demo_results, tmp_path / "genuine")
    inflated = copy_results(demo_results, tmp_path / "inflated")
    for meta in inflated.rglob("model_meta.json"):
        edit_json(meta, lambda d: d.update(n_parameters=70_000_000_000, license="proprietary"))
    real = json.loads(next(genuine.rglob("model_meta.json")).read_text())
    data = build([inflated, genuine], tmp_path / "plain").data
    assert data["models"] == [] and len(data["conflicts"]) == 6  # no one verified: nothing of either shown
    verification = _verification(tmp_path / "v.json", validate(read_submission(genuine)))
    data = build([inflated, genuine], tmp_path / "site", verifications=[verification]).data
    model = _default(data)
    assert (model["n_parameters"], model["license"]) == (real["n_parameters"], real["license"])
    assert {c["kept"]["submission"] for c in data["conflicts"]} == {str(genuine)}


def test_identical_copies_still_merge(demo_results, tmp_path):
    reports = validate_all([demo_results, copy_results(demo_results, tmp_path / "again")])
    assert [len(r.entries) for r in reports] == [6, 0] and len(reports[1].merged) == 6
    assert not any(r.held for r in reports)


# ----------------------------------------------------------------------------------- 10: schema, subsets
def test_each_schema_problem_is_listed_once():
    problems = check("result", {}, "r.json")
    assert [p.field for p in problems] == ["dataset_revision", "task_name", "mteb_version", "scores"]
    record = check("run_record", {"task": {}}, "rr.json")
    assert len(record) == len({(p.field, p.message) for p in record}) > 9


def _extra_subset(root: Path) -> str:
    result, _ = result_files(root, STS)
    edit_json(result, lambda d: d["scores"]["test"].append({**d["scores"]["test"][0], "hf_subset": "fake"}))
    return "scores.test[1].hf_subset"


def _repeated_subset(root: Path) -> str:
    result, _ = result_files(root, STS)
    edit_json(result, lambda d: d["scores"]["test"].append(dict(d["scores"]["test"][0])))
    return "scores.test[1].hf_subset"


def _missing_subset(root: Path) -> str:
    result, _ = result_files(root, STS)
    edit_json(result, lambda d: d["scores"]["test"][0].update(hf_subset="other"))
    return "scores.test[0].hf_subset"


def _extra_split(root: Path) -> str:
    result, _ = result_files(root, STS)
    edit_json(result, lambda d: d["scores"].update(validation=d["scores"]["test"]))
    return "scores.validation"


SUBSET_PROBES = {
    "a fake extra hf_subset": _extra_subset,
    "the task's subset twice": _repeated_subset,
    "another subset in place of the task's": _missing_subset,
    "a split the task does not have": _extra_split,
}


@pytest.mark.parametrize("probe", list(SUBSET_PROBES))
def test_scores_hold_exactly_the_tasks_subsets(probe, demo_results, tmp_path):
    root = copy_results(demo_results, tmp_path / "sub")
    field = SUBSET_PROBES[probe](root)
    problems = validate(read_submission(root)).problems
    assert {p.reason for p in problems} == {"subsets"}, [str(p) for p in problems]
    assert field in {p.field for p in problems}


def test_a_fake_subset_never_moves_the_shown_score(demo_results, tmp_path):
    """The probe's numbers: a fake subset at 0.99 beside the real -0.098 showed 44.59 for -9.82."""
    root = copy_results(demo_results, tmp_path / "sub")
    result, _ = result_files(root, STS)
    fake = {"main_score": 0.99, "cosine_spearman": 0.99, "hf_subset": "fake"}
    edit_json(result, lambda d: d["scores"]["test"].append({**d["scores"]["test"][0], **fake}))
    data = build([root, demo_results], tmp_path / "site").data
    assert [r["submission"] for r in data["rejected"]] == [str(root)]
    assert round(100 * _default(data)["results"][STS]["main_score"], 2) == -9.82


def test_zip_with_a_huge_integer_is_listed_with_the_others(demo_results, tmp_path):
    """The same as a packed zip (what `bench submit` gives the maintainer): rejected, never a crash."""
    root = copy_results(demo_results, tmp_path / "sub")
    _huge_score(root)
    packed = tmp_path / "bad.zip"
    with zipfile.ZipFile(packed, "w") as z:
        for p in sorted(root.rglob("*.json")):
            z.write(p, p.relative_to(root).as_posix())
    shutil.rmtree(root)
    assert _reasons(packed) == {"out_of_range"}
