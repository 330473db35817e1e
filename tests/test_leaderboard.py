"""Leaderboard: schemas, every rejection reason, escaping, averages and exports, on real `bench run` files."""

from __future__ import annotations

import csv
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from bench.cli import main
from leaderboard import REASONS, build, validate_all
from leaderboard.plots import robustness_svg, robustness_values
from leaderboard.reference import metric_range, task_reference
from leaderboard.schema import check
from leaderboard.submission import read_submission
from leaderboard.validate import validate
from leaderboard_fixtures import copy_results, demo_results, edit_json, result_files  # noqa: F401 (fixture)
from tasks.abstasks.base import PACKAGED_DATA_DIR

pytestmark = pytest.mark.slow  # the session fixture runs the demo suite twice with the real model

DEMO = ("DemoIntentEmotion", "DemoInstructSTS", "DemoNYTClustering")


def _submission(demo_results: Path, tmp_path: Path) -> Path:
    return copy_results(demo_results, tmp_path / "sub")


def _problems(path: Path, **kw):
    report = validate(read_submission(path), **kw)
    return report.problems


# ----------------------------------------------------------------------------------- schemas


def test_real_files_pass_the_schemas_and_all_checks(demo_results):
    for path in demo_results.rglob("*.json"):
        data = json.loads(path.read_text())
        if path.name == "model_meta.json":
            continue
        kind = "run_record" if path.parent.name == "run_records" else "result"
        assert check(kind, data, str(path)) == [], path
    report = validate(read_submission(demo_results))
    assert report.valid, report.summary()
    assert len(report.entries) == 6 and {e.task for e in report.entries} == set(DEMO)


def test_schema_problems_name_file_field_and_problem(demo_results):
    result, record = result_files(demo_results, "DemoIntentEmotion")
    data = json.loads(result.read_text())
    del data["task_name"]
    data["scores"]["test"][0]["main_score"] = "high"
    problems = check("result", data, "x/DemoIntentEmotion.json")
    by_field = {p.field: p for p in problems}
    assert by_field["task_name"].message.startswith("required field is missing")
    assert "is not of type 'number'" in by_field["scores.test[0].main_score"].message
    assert all(p.reason == "schema" and p.file == "x/DemoIntentEmotion.json" for p in problems)
    assert str(by_field["task_name"]) == "x/DemoIntentEmotion.json: task_name: required field is missing (result schema) [schema]"
    rec = json.loads(record.read_text())
    rec["task"]["instructions_sha256"] = "not-a-hash"
    rec["model"].pop("family")
    fields = {p.field for p in check("run_record", rec, "r.json")}
    assert fields == {"task.instructions_sha256", "model.family"}


def test_schema_files_are_valid_json_schemas():
    from jsonschema import Draft202012Validator

    for name in ("result", "run_record", "manifest"):
        path = Path(__file__).resolve().parents[1] / "leaderboard" / "schemas" / f"{name}.schema.json"
        Draft202012Validator.check_schema(json.loads(path.read_text()))


# ----------------------------------------------------------------------------------- rejections


def _break_json(root):
    result, _ = result_files(root, "DemoIntentEmotion")
    result.write_text('{"task_name": "DemoIntentEmotion", ', encoding="utf-8")
    return result.name, ""


def _empty(root):
    for path in list(root.rglob("*.json")):
        path.unlink()
    (root / "model_meta.json").write_text("{}")
    return str(root), ""


def _schema(root):
    result, _ = result_files(root, "DemoIntentEmotion")
    edit_json(result, lambda d: d["scores"]["test"][0].pop("main_score"))
    return result.name, "scores.test[0].main_score"


def _unpaired(root):
    _, record = result_files(root, "DemoInstructSTS")
    record.unlink()
    return "DemoInstructSTS.json", ""


def _record_mismatch(root):
    _, record = result_files(root, "DemoNYTClustering")
    edit_json(record, lambda d: d["task"]["dataset"].update(revision="local-000000000000"))
    return "run_records/DemoNYTClustering.json", "task.dataset.revision"


def _unknown_task(root):
    result, record = result_files(root, "DemoNYTClustering")
    edit_json(result, lambda d: d.update(task_name="NoSuchTask"))
    edit_json(record, lambda d: d["task"].update(name="NoSuchTask"))
    result.rename(result.with_name("NoSuchTask.json"))
    record.rename(record.with_name("NoSuchTask.json"))
    return "NoSuchTask.json", "task_name"


def _task_version(root):
    _, record = result_files(root, "DemoInstructSTS")
    edit_json(record, lambda d: d["task"].update(version="0"))
    return "run_records/DemoInstructSTS.json", "task.version"


def _main_score(root):
    result, _ = result_files(root, "DemoInstructSTS")
    edit_json(result, lambda d: d["scores"]["test"][0].update(main_score=0.9))
    return "DemoInstructSTS.json", "scores.test[0].main_score"


def _dataset_revision(root):
    result, record = result_files(root, "DemoIntentEmotion")
    for path, change in ((result, lambda d: d.update(dataset_revision="local-123456789abc")),
                         (record, lambda d: d["task"]["dataset"].update(revision="local-123456789abc"))):
        edit_json(path, change)
    return "DemoIntentEmotion.json", "dataset_revision"


def _instructions(root):
    _, record = result_files(root, "DemoIntentEmotion")

    def change(d):
        d["task"]["instructions"]["criteria"]["emotion"] = "What is the topic?"
        from bench.fileio import sha256_json

        d["task"]["instructions_sha256"] = sha256_json(d["task"]["instructions"])

    edit_json(record, change)
    return "run_records/DemoIntentEmotion.json", "task.instructions_sha256"


def _limited(root):
    _, record = result_files(root, "DemoNYTClustering")
    edit_json(record, lambda d: d["task"].update(limit=10))
    return "run_records/DemoNYTClustering.json", "task.limit"


def _score_range(root):
    result, _ = result_files(root, "DemoIntentEmotion")
    edit_json(result, lambda d: d["scores"]["test"][0].update(emotion_success_rate=1.5))
    return "DemoIntentEmotion.json", "scores.test[0].emotion_success_rate"


def _duplicate(root):
    result, record = result_files(root, "DemoNYTClustering")
    copy = root / "again" / result.name
    (copy.parent / "run_records").mkdir(parents=True)
    shutil.copy(result, copy)
    shutil.copy(record, copy.parent / "run_records" / record.name)
    return "DemoNYTClustering.json", "task_name"


def _manifest(root):
    (root / "manifest.json").write_text(json.dumps({
        "format": "instruct-bench-submission", "format_version": 1, "created_at": "2026-11-21T00:00:00+00:00",
        "harness_version": "0.1.0", "models": [],
        "files": [{"path": p.relative_to(root).as_posix(), "sha256": "0" * 64, "bytes": 1}
                  for p in root.rglob("*.json") if p.name != "manifest.json"],
    }))
    return "DemoIntentEmotion.json", ""


REJECTIONS = {
    "unreadable": _break_json, "empty": _empty, "schema": _schema, "unpaired": _unpaired,
    "record_mismatch": _record_mismatch, "unknown_task": _unknown_task, "task_version": _task_version,
    "main_score": _main_score, "dataset_revision": _dataset_revision, "instructions_sha256": _instructions,
    "limited": _limited, "score_range": _score_range, "duplicate": _duplicate, "manifest": _manifest,
}


def test_every_reason_has_a_rejection_test():
    from test_leaderboard_faults import LIMIT_REASONS  # hostile-input limits are probed there

    assert set(REJECTIONS) == set(REASONS) - LIMIT_REASONS


@pytest.mark.parametrize("reason", sorted(REJECTIONS))
def test_rejection(reason, demo_results, tmp_path):
    root = _submission(demo_results, tmp_path)
    file_suffix, field = REJECTIONS[reason](root)
    problems = _problems(root)
    assert problems, f"{reason}: nothing reported"
    assert {p.reason for p in problems} == {reason}, [str(p) for p in problems]
    assert any(p.file.endswith(file_suffix) and p.field == field for p in problems), [str(p) for p in problems]
    assert all(p.message for p in problems)
    # ... and the build leaves the submission out and lists it with the reason.
    result = build([root], tmp_path / "site")
    assert result.data["models"] == [] and result.data["suites"] == []
    listed = result.data["rejected"][0]["problems"]
    assert {p["reason"] for p in listed} == {reason}
    assert "Rejected submissions" in (tmp_path / "site" / "index.html").read_text()


def test_duplicate_across_submissions_rejects_the_later_one(demo_results, tmp_path):
    first, second = copy_results(demo_results, tmp_path / "a"), copy_results(demo_results, tmp_path / "b")
    reports = validate_all([first, second])
    assert reports[0].valid and not reports[1].valid
    assert {p.reason for p in reports[1].problems} == {"duplicate"} and len(reports[1].problems) == 6
    assert str(first) in reports[1].problems[0].message


def test_local_copy_is_known_only_with_its_data_dir(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(PACKAGED_DATA_DIR / "DemoNYTClustering", data / "NYTClustering")
    with_copy = task_reference("NYTClustering", [data]).revisions
    without = task_reference("NYTClustering").revisions
    local = set(with_copy) - set(without)
    assert len(local) == 1 and next(iter(local)).startswith("local-")
    assert "462fb544c8993a0421fd969a7a0f19f1fbd975bf" in without


def test_metric_ranges():
    assert metric_range("hmean_success_rate") == (0.0, 1.0)
    assert metric_range("cosine_spearman") == (-1.0, 1.0)
    assert metric_range("v_measure_incorrect_9") == (0.0, 1.0)
    assert metric_range("delta_ci_mean") == (-1.0, 1.0)
    assert metric_range("emotion_num_triplets")[0] == 0
    assert metric_range("similarity_pearson") == (-1.0, 1.0)
    assert metric_range("something_else") is None


# ----------------------------------------------------------------------------------- submit


def test_submit_packs_a_zip_the_build_accepts(demo_results, tmp_path, capsys):
    out = tmp_path / "minilm.zip"
    assert main(["submit", str(demo_results), "--out", str(out)]) == 0
    assert "Packed" in capsys.readouterr().out
    with zipfile.ZipFile(out) as z:
        names = set(z.namelist())
        manifest = json.loads(z.read("manifest.json"))
    assert {f["path"] for f in manifest["files"]} == names - {"manifest.json"}
    assert manifest["models"][0]["tasks"] == sorted(DEMO)
    assert validate_all([out])[0].valid
    # a file changed inside the archive after packing is caught by the manifest
    tampered = tmp_path / "tampered.zip"
    with zipfile.ZipFile(out) as src, zipfile.ZipFile(tampered, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name.endswith("DemoIntentEmotion.json") and "run_records" not in name:
                data = data.replace(b'"evaluation_time": ', b'"evaluation_time": 1', 1)
            dst.writestr(name, data)
    assert {p.reason for p in validate_all([tampered])[0].problems} == {"manifest"}


def test_submit_refuses_invalid_results(demo_results, tmp_path, capsys):
    root = _submission(demo_results, tmp_path)
    _task_version(root)
    code = main(["submit", str(root), "--out", str(tmp_path / "x.zip")])
    out, err = capsys.readouterr()
    assert code == 2 and not (tmp_path / "x.zip").exists()
    assert "task.version" in out and "[task_version]" in out and "error: " in err


# ----------------------------------------------------------------------------------- site and exports


def test_build_exports_and_averages(demo_results, tmp_path, capsys):
    site = tmp_path / "site"
    assert main(["leaderboard", "build", "--results", str(demo_results), "--out", str(site)]) == 0
    assert "0 of 1 submission(s) rejected" in capsys.readouterr().out
    data = json.loads((site / "leaderboard.json").read_text())
    (demo,) = [s for s in data["suites"] if s["name"] == "demo"]
    assert [c["label"] for c in demo["columns"]] == ["I.STSB (demo)", "IntEmo (demo)", "NYT (demo)"]
    assert len(demo["rows"]) == 2
    for row in demo["rows"]:
        experiment = "template=none" in next(m["setting"] for m in data["models"] if m["id"] == row["model_id"])
        mains = [json.loads(result_files(demo_results, t, experiment=experiment)[0].read_text())["scores"]["test"][0]["main_score"] for t in DEMO]
        assert row["average"] == pytest.approx(100 * sum(mains) / 3)
        assert sorted(row["scores"].values()) == pytest.approx(sorted(100 * m for m in mains))
    assert demo["rows"][0]["average"] >= demo["rows"][1]["average"]
    rows = list(csv.DictReader((site / "leaderboard.csv").open()))
    assert len(rows) == 6 and {r["task"] for r in rows} == set(DEMO)
    for r in rows:
        assert float(r["main_score_x100"]) == pytest.approx(100 * float(r["main_score"]), abs=0.005)
    pages = list((site / "models").glob("*.html"))
    assert len(pages) == 2
    for model in data["models"]:
        page = (site / "models" / f"{model['id']}.html").read_text()
        assert "Run record" in page and "instructions_sha256" in page
        for task, r in model["results"].items():
            assert f"{r['main_score_name']} = {100 * r['main_score']:.2f}" in page, task


def test_a_new_suite_gets_a_table_without_code_changes(demo_results, tmp_path, monkeypatch):
    import tasks

    monkeypatch.setitem(tasks.SUITES, "my-suite", ("DemoNYTClustering", "DemoIntentEmotion"))
    data = build([demo_results], tmp_path / "site").data
    (mine,) = [s for s in data["suites"] if s["name"] == "my-suite"]
    assert [c["label"] for c in mine["columns"]] == ["DemoNYTClustering", "DemoIntentEmotion"]
    assert mine["averages"][0]["label"] == "Avg"
    for row in mine["rows"]:
        assert row["average"] == pytest.approx(sum(row["scores"].values()) / 2)
    assert 'id="suite-my-suite"' in (tmp_path / "site" / "index.html").read_text()


def test_partial_suite_has_no_average(demo_results, tmp_path):
    root = _submission(demo_results, tmp_path)
    for task in ("DemoInstructSTS",):
        for experiment in (False, True):
            for p in result_files(root, task, experiment=experiment):
                p.unlink()
    data = build([root], tmp_path / "site").data
    (demo,) = data["suites"]
    assert all(r["average"] is None and r["scores"]["DemoInstructSTS"] is None for r in demo["rows"])


HOSTILE = '<script>alert("x")</script><img src=x onerror="document.title=\'pwned\'">'


def make_hostile(root: Path) -> None:
    """Rename the default-setting model to markup in every run record (a valid submission otherwise)."""
    for task in DEMO:
        _, record = result_files(root, task)
        edit_json(record, lambda d: d["model"].update(name=HOSTILE, family=HOSTILE, settings={**d["model"]["settings"], "instruction_template": HOSTILE}))


def test_strings_from_submissions_are_escaped(demo_results, tmp_path):
    root = _submission(demo_results, tmp_path)
    make_hostile(root)
    result = build([root], tmp_path / "site")
    assert not result.rejected
    pages = [tmp_path / "site" / "index.html", *(tmp_path / "site" / "models").glob("*.html")]
    for page in pages:
        html = page.read_text()
        assert "<script>alert" not in html and "<img src=x" not in html, page
        assert html.count("<script") == 1  # only the site's own leaderboard.js
    index = pages[0].read_text()
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in index
    names = [p.name for p in (tmp_path / "site" / "models").glob("*.html")]
    assert all(set(n) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") for n in names)


def test_robustness_plot_from_score_keys():
    scores = {f"v_measure_{s}_{i}": v for s, v in (("correct", 0.6), ("implicit", 0.5), ("incorrect", 0.2)) for i in range(10)}
    scores["delta_ci_mean"] = 0.4
    values = robustness_values(scores)
    assert values == {"correct": [0.6] * 10, "implicit": [0.5] * 10, "incorrect": [pytest.approx(0.2)] * 10}
    svg = str(robustness_svg("FewRel <b>", [("m<1>", values), ("m2", values)]))
    assert svg.count("<circle") == 2 * 30 + 3  # 30 dots per model + 3 legend marks
    assert "Δci +40.0" in svg and "Δii +30.0" in svg
    assert "FewRel &lt;b&gt;" in svg and "m&lt;1&gt;" in svg and "<b>" not in svg
    assert robustness_values({"hmean_v_measure": 0.3}) is None


def test_a_damaged_archive_is_listed_not_dropped(tmp_path):
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    (report,) = validate_all([bad])
    assert [p.reason for p in report.problems] == ["unreadable"] and report.problems[0].file == str(bad)
