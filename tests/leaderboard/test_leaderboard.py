"""Leaderboard: schemas, every rejection reason, escaping, averages and exports, on real `bench run` files."""

from __future__ import annotations

import csv
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from bench.cli.main import main
from bench.leaderboard import REASONS, build, validate_all
from bench.leaderboard.plots import robustness_svg, robustness_values
from bench.leaderboard.reference import metric_range, task_reference
from bench.leaderboard.schema import check
from bench.leaderboard.submission import read_submission
from bench.leaderboard.validate import validate
from bench.tasks.abstasks.base import PACKAGED_DATA_DIR
from leaderboard_fixtures import add_variants, copy_model, copy_results, edit_json, result_files

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
    assert (
        str(by_field["task_name"])
        == "x/DemoIntentEmotion.json: task_name: required field is missing (result schema) [schema]"
    )
    rec = json.loads(record.read_text())
    rec["task"]["instructions_sha256"] = "not-a-hash"
    rec["model"].pop("family")
    fields = {p.field for p in check("run_record", rec, "r.json")}
    assert fields == {"task.instructions_sha256", "model.family"}


def test_schema_files_are_valid_json_schemas():
    from jsonschema import Draft202012Validator

    for name in ("result", "run_record", "manifest"):
        path = Path(__file__).resolve().parents[2] / "bench" / "leaderboard" / "schemas" / f"{name}.schema.json"
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
    for path, change in (
        (result, lambda d: d.update(dataset_revision="local-123456789abc")),
        (record, lambda d: d["task"]["dataset"].update(revision="local-123456789abc")),
    ):
        edit_json(path, change)
    return "DemoIntentEmotion.json", "dataset_revision"


def _instructions(root):
    _, record = result_files(root, "DemoIntentEmotion")

    def change(d):
        d["task"]["instructions"]["criteria"]["emotion"] = "What is the topic?"
        from bench.core.fileio import sha256_json

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
    (root / "manifest.json").write_text(
        json.dumps(
            {
                "format": "instruct-bench-submission",
                "format_version": 1,
                "created_at": "2026-11-21T00:00:00+00:00",
                "harness_version": "0.1.0",
                "models": [],
                "files": [
                    {"path": p.relative_to(root).as_posix(), "sha256": "0" * 64, "bytes": 1}
                    for p in root.rglob("*.json")
                    if p.name != "manifest.json"
                ],
            }
        )
    )
    return "DemoIntentEmotion.json", ""


def _variant(root):
    [(_, record), *_] = add_variants(result_files(root, "DemoInstructSTS"), [0.5, 0.6, 0.4])
    edit_json(record, lambda d: d["model"]["experiment"].update(instruction="v01-00000000"))
    return "run_records/DemoInstructSTS.json", "model.experiment.instruction"


def _out_of_range(root):
    result, _ = result_files(root, "DemoInstructSTS")
    result.write_text(result.read_text().replace('"main_score": ', f'"main_score": {10**4001 - 1}, "x": ', 1))
    return "DemoInstructSTS.json", "scores.test[0].main_score"


def _subsets(root):
    result, _ = result_files(root, "DemoInstructSTS")
    edit_json(result, lambda d: d["scores"]["test"].append({**d["scores"]["test"][0], "hf_subset": "fake"}))
    return "DemoInstructSTS.json", "scores.test[1].hf_subset"


REJECTIONS = {
    "unreadable": _break_json,
    "out_of_range": _out_of_range,
    "subsets": _subsets,
    "empty": _empty,
    "schema": _schema,
    "unpaired": _unpaired,
    "record_mismatch": _record_mismatch,
    "unknown_task": _unknown_task,
    "task_version": _task_version,
    "main_score": _main_score,
    "dataset_revision": _dataset_revision,
    "instructions_sha256": _instructions,
    "limited": _limited,
    "score_range": _score_range,
    "duplicate": _duplicate,
    "manifest": _manifest,
    "variant": _variant,
}


def test_every_reason_has_a_rejection_test():
    from test_leaderboard_faults import LIMIT_REASONS  # hostile-input limits are probed there

    # probed in tests/leaderboard/test_trust.py: a conflict holds results back across submissions (it
    # rejects none), and an internal error needs a check to fail unforeseen
    across = {"conflict", "internal_error"}
    assert set(REJECTIONS) == set(REASONS) - LIMIT_REASONS - across


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


def test_differing_results_across_submissions_are_held_back(demo_results, tmp_path):
    """A different result for a key another submission gave is a conflict: both held back (neither is
    verified), whatever the order; the identical one merges."""
    first, second = copy_results(demo_results, tmp_path / "a"), copy_results(demo_results, tmp_path / "b")
    for task in DEMO:
        edit_json(result_files(second, task)[1], lambda d: d["task"].update(seed=7))  # another setting, not a re-run
    reports = validate_all([first, second])
    assert all(r.valid for r in reports) and [len(r.held) for r in reports] == [3, 3]
    assert "3 held back: they conflict with another submission's" in reports[1].summary()
    # the same results again, byte for byte: merged, not rejected, not added twice
    again = validate_all([first, copy_results(demo_results, tmp_path / "c")])
    assert all(r.valid for r in again) and again[1].entries == [] and len(again[1].merged) == 6
    assert (
        "no new results; 6 re-run(s) of results another submission gave (same identity and scores: merged, not "
        "added twice)" in again[1].summary()
    )


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
        mains = [
            json.loads(result_files(demo_results, t, experiment=experiment)[0].read_text())["scores"]["test"][0][
                "main_score"
            ]
            for t in DEMO
        ]
        assert row["average"] == pytest.approx(100 * sum(mains) / 3)
        assert sorted(row["scores"].values()) == pytest.approx(sorted(100 * m for m in mains))
    assert demo["rows"][0]["average"] >= demo["rows"][1]["average"]
    rows = [
        r for r in csv.DictReader((site / "leaderboard.csv").open()) if r["source"] == "submitted"
    ]  # papers' rows too
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
    from bench import tasks

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
        edit_json(
            record,
            lambda d: d["model"].update(
                name=HOSTILE, family=HOSTILE, settings={**d["model"]["settings"], "instruction_template": HOSTILE}
            ),
        )


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


FORMULAS = {
    "name": '=HYPERLINK("http://x","MiniLM")',
    "family": "+cmd|' /C calc'!A0",
    "instruction_template": "-2+3",
    "experiment": {"@SUM(A1)": "1"},
}


def test_csv_cells_are_never_formulas(demo_results, tmp_path):
    """Text cells a spreadsheet would run (= + - @ tab CR) get a leading "'"; scores stay numbers, negative ones too."""
    root = _submission(demo_results, tmp_path)
    for task in DEMO:
        _, record = result_files(root, task)
        edit_json(
            record,
            lambda d: d["model"].update(
                name=FORMULAS["name"],
                family=FORMULAS["family"],
                experiment=FORMULAS["experiment"],
                settings={**d["model"]["settings"], "instruction_template": FORMULAS["instruction_template"]},
            ),
        )
    result = build([root], tmp_path / "site")
    assert not result.rejected, [r.summary() for r in result.rejected]
    rows = list(csv.DictReader((tmp_path / "site" / "leaderboard.csv").open(newline="")))
    forged = [r for r in rows if r["model"].startswith("'")]
    assert len(forged) == 3
    for r in forged:
        assert r["model"] == "'" + FORMULAS["name"] and r["family"] == "'" + FORMULAS["family"]
        assert r["template"] == "'" + FORMULAS["instruction_template"] and r["setting"] == "'@SUM(A1)=1"
    sts = next(r for r in forged if r["task"] == "DemoInstructSTS")
    assert (
        sts["main_score_x100"] == "-9.82" and float(sts["main_score"]) < 0
    )  # a negative score is a number, not "'-9.82"
    for r in rows:
        assert all(
            not v.startswith(("=", "+", "-", "@", "\t", "\r"))
            for k, v in r.items()
            if k not in ("main_score", "main_score_x100")
        )
        float(r["main_score"]), float(r["main_score_x100"])
        assert r["n_parameters"] == "" or int(r["n_parameters"]) > 0


def test_identical_scores_under_two_names_are_flagged_not_rejected(demo_results, tmp_path, capsys):
    root = _submission(demo_results, tmp_path)
    copy_model(root, "org/copied")
    site = tmp_path / "site"
    assert main(["leaderboard", "build", "--results", str(root), "--out", str(site)]) == 0
    out = capsys.readouterr().out
    data = json.loads((site / "leaderboard.json").read_text())
    assert not data["rejected"] and len(data["models"]) == 3
    models = {m["label"]: m for m in data["models"]}
    copied, original = models["org/copied"], models["sentence-transformers/all-MiniLM-L6-v2"]
    assert copied["same_scores_as"] == [original["id"]] and original["same_scores_as"] == [copied["id"]]
    assert copied["flags"] == [
        f"same scores as sentence-transformers/all-MiniLM-L6-v2 @ {original['revision']} on every task both have (3)"
    ]
    assert models["sentence-transformers/all-MiniLM-L6-v2 [template=none]"]["flags"] == []
    rows = {r["model_id"]: r for r in _demo_table(data)["rows"]}
    assert rows[copied["id"]]["flags"] == copied["flags"] and rows[copied["id"]]["rank"] is not None  # still ranked
    assert (
        "2 model setting(s) flagged" in out
        and "org/copied: same scores as sentence-transformers/all-MiniLM-L6-v2" in out
    )
    index = (site / "index.html").read_text()
    assert (
        index.count('<span class="badge flag" title="same scores as') == 2
        and "a submission copied under another name" in index
    )
    page = (site / "models" / f"{copied['id']}.html").read_text()
    assert f'href="../models/{original["id"]}.html">its page</a>' in page
    # a normal build: no flags anywhere
    data = build([demo_results], tmp_path / "plain").data
    assert all(m["flags"] == [] for m in data["models"]) and all(r["flags"] == [] for r in _demo_table(data)["rows"])
    assert 'class="badge flag"' not in (tmp_path / "plain" / "index.html").read_text()


@pytest.mark.parametrize(
    "name",
    [
        "nlpaueb/\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03cc-BERT",
        "\u667a\u6e90/\u4e2d\u6587\u5411\u91cf\u6a21\u578b",
    ],
)
def test_an_honest_non_latin_name_is_accepted(name, demo_results, tmp_path):
    root = _submission(demo_results, tmp_path)
    for task in DEMO:
        _, record = result_files(root, task)
        edit_json(record, lambda d: d["model"].update(name=name))
    result = build([root], tmp_path / "site")  # beside MiniLM's template=none row
    assert not result.rejected, [r.summary() for r in result.rejected]
    assert {m["name"] for m in result.data["models"]} == {name, "sentence-transformers/all-MiniLM-L6-v2"}


def test_robustness_plot_from_score_keys():
    scores = {
        f"v_measure_{s}_{i}": v for s, v in (("correct", 0.6), ("implicit", 0.5), ("incorrect", 0.2)) for i in range(10)
    }
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


# ----------------------------------------------------------------------------------- how the site reads (issue 13)


def _demo_table(data: dict) -> dict:
    (demo,) = [s for s in data["suites"] if s["name"] == "demo"]
    return demo


def test_rank_and_baseline(demo_results, tmp_path):
    """The `--template none` row (blind) is marked, unranked and never the shaded best, whatever its scores."""
    site = tmp_path / "site"
    data = build([demo_results], site).data
    demo = _demo_table(data)
    settings = {m["id"]: m["setting"] for m in data["models"]}
    (base,) = [r for r in demo["rows"] if r["baseline"]]
    (ranked,) = [r for r in demo["rows"] if not r["baseline"]]
    assert settings[base["model_id"]] == "template=none" and settings[ranked["model_id"]] == "default"
    assert base["rank"] is None and ranked["rank"] == 1
    assert demo["best"] == ranked["scores"]  # the only ranked model is the best of every column, not the baseline
    html = (site / "index.html").read_text()
    row = html[html.index(f'data-model-id="{base["model_id"]}"') :]
    row = row[: row.index("</tr>")]
    assert 'class="num best"' not in row and 'class="badge base"' in row and ">—</td>" in row
    assert base["borda_rank"] is None and ranked["borda_rank"] == 1
    # one ranked model: nothing to shade at all
    assert 'class="num best"' not in html


def test_ranks_follow_the_first_average_with_ties_and_gaps():
    from bench.leaderboard.suite_tables import _rank

    def row(average, baseline=False, scores=(1.0, 1.0), partial=None, subset=()):
        return {
            "averages": {"Avg": average},
            "partial": {"Avg": {"value": partial}} if partial is not None else {},
            "scores": dict(zip("ab", scores, strict=True)),
            "baseline": baseline,
            "subset": list(subset),
            "rank": None,
        }

    rows = [
        row(50.0, baseline=True),
        row(40.0),
        row(40.0),
        row(30.0),
        row(None),
        row(None, scores=(1.0, None), partial=99.0),  # a partial average over fewer tasks: not ranked
        row(45.0, subset=["a"]),  # a --limit run (validation refuses them): never ranked
    ]
    _rank(rows, "Avg", ("a", "b"))
    assert [r["rank"] for r in rows] == [None, 1, 1, 3, None, None, None]
    # no row complete: no row is ranked, each says why (issue 42's comparability rule; before, the partial
    # averages over the task set most rows shared were ranked: 2, 1, None)
    rows = [row(None, scores=(1.0, None), partial=p) for p in (20.0, 30.0)]
    rows.append(row(None, scores=(None, 1.0), partial=90.0))  # another task set, shared by fewer rows
    _rank(rows, "Avg", ("a", "b"))
    assert [r["rank"] for r in rows] == [None, None, None]
    assert {r["unranked_reason"] for r in rows} == {
        "partial: 1 of the 2 tasks of Avg; only a complete average is ranked"
    }


def test_best_ignores_the_baseline():
    from bench.leaderboard.suite_tables import _best

    rows = [
        {"baseline": True, "scores": {"a": 90.0, "b": 1.0}},
        {"baseline": False, "scores": {"a": 10.0, "b": 5.0}},
        {"baseline": False, "scores": {"a": 20.0, "b": None}},
    ]
    assert _best(rows) == {"a": 20.0, "b": 5.0}


def test_averages_never_mix_gaps_with_scores():
    from bench.results.suites import averages, suite_averages

    mains = {
        "NYTClustering": "hmean_v_measure",
        "FewRelClustering": "delta_ci_mean",
        "IntentEmotion": "hmean_success_rate",
        "FeedbacksClustering": "delta_ci_mean",
    }
    avgs = suite_averages("a-union-suite", mains)
    assert [(a.label, a.tasks) for a in avgs] == [
        ("Avg", ("NYTClustering", "IntentEmotion")),
        ("Mean Δci", ("FewRelClustering", "FeedbacksClustering")),
    ]
    scores = {"NYTClustering": 30.0, "FewRelClustering": 4.0, "IntentEmotion": 50.0, "FeedbacksClustering": -2.0}
    assert averages("a-union-suite", scores, avgs) == {"Avg": 40.0, "Mean Δci": 1.0}
    assert averages("a-union-suite", {**scores, "FewRelClustering": None}, avgs) == {"Avg": 40.0, "Mean Δci": None}
    # one kind of score only: the plain mean; a paper's suite keeps the paper's average
    assert [a.tasks for a in suite_averages("x", {"a": "v_measure", "b": "map"})] == [None]
    assert [a.label for a in suite_averages("robustness", {"FewRelClustering": "delta_ci_mean"})] == ["Mean Δci"]


def test_union_suites_get_separate_averages(demo_results, tmp_path, monkeypatch):
    """inbedder / all hold Δci and absolute scores: each average names the columns it covers."""
    from bench.tasks.registry import SUITES

    data = build([demo_results], tmp_path / "site").data
    for name in ("inbedder", "all"):
        tasks = SUITES[name]
        kinds = {task_reference(t).main_score.startswith("delta_") for t in tasks}
        assert kinds == {True, False}, name
    from bench.results.suites import suite_averages

    avgs = suite_averages("all", {t: task_reference(t).main_score for t in SUITES["all"]})
    # p-MRR and robustness@10 (the instruction-retrieval tasks) each get an average of their own
    assert {a.label for a in avgs} == {"Avg", "Mean Δci", "Mean p-MRR", "Mean robustness@10"}
    gaps = next(a for a in avgs if a.label == "Mean Δci").tasks
    assert gaps and all(task_reference(t).main_score == "delta_ci_mean" for t in gaps)
    assert not [s for s in data["suites"] if s["name"] in ("inbedder", "all")]  # no demo task in them: no empty table


def test_suite_paragraph_links_papers_and_datasets(demo_results, tmp_path):
    from bench.leaderboard.suite_tables import dataset_page
    from bench.results.suites import SUITE_STYLES

    build([demo_results], tmp_path / "site")
    html = (tmp_path / "site" / "index.html").read_text()
    assert 'href="https://arxiv.org/abs/2402.09642"' in html  # InBedder, for the demo suite
    for name in ("cosine_spearman", "hmean_success_rate", "hmean_v_measure"):
        assert f"<code>{name}</code>" in html
    assert "covers I.STSB (demo), IntEmo (demo), NYT (demo)" in html
    # every paper a suite links is one of the four papers, at the arXiv id of its own text, or FollowIR's and
    # InstructIR's, at the arXiv ids MTEB's task metadata and code cite (2403.15246, 2402.14334)
    urls = {p.url for st in SUITE_STYLES.values() for p in st.papers}
    ids = ("2402.09642", "2402.18458", "2505.24754", "2212.09741", "2403.15246", "2402.14334")
    assert urls == {f"https://arxiv.org/abs/{i}" for i in ids}
    assert dataset_page("InstructSTSB") == {
        "path": "BrandonZYW/InstructSTSB",
        "url": "https://huggingface.co/datasets/BrandonZYW/InstructSTSB",
    }
    assert dataset_page("DemoInstructSTS") is None  # packaged data has no hub page
    assert dataset_page("NoSuchTask") is None


def test_model_identity_and_card_links(demo_results, tmp_path):
    from bench.leaderboard.rows import model_card

    site = tmp_path / "site"
    data = build([demo_results], site).data
    meta = json.loads(next(demo_results.rglob("model_meta.json")).read_text())
    for m in data["models"]:
        assert (m["n_parameters"], m["embed_dim"]) == (meta["n_parameters"], meta["embed_dim"])
        assert m["family"] in ("mteb", "sentence-transformers")  # MTEB's implementation, and --template none
        assert m["model_card"] == "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2"
        page = (site / "models" / f"{m['id']}.html").read_text()
        assert f'<a href="{m["model_card"]}">model card</a>' in page and "22.7M" in page and "<td>384</td>" in page
    assert model_card("local/SmolLM2-135M-Instruct.Q4_1", {}) is None
    assert model_card("text-embedding-3-small", {}) is None
    assert model_card("org/name", {"reference": "https://example.com/x"}) == "https://huggingface.co/org/name"
    # model_meta.json cannot link a row to another model's card; a page of the model's own is kept
    assert (
        model_card("org/name", {"reference": "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2"})
        == "https://huggingface.co/org/name"
    )
    assert (
        model_card("org/name", {"reference": "https://huggingface.co/org/name/tree/v1"})
        == "https://huggingface.co/org/name/tree/v1"
    )
    assert (
        model_card("org/name", {"reference": "https://huggingface.co/org/name-evil"})
        == "https://huggingface.co/org/name"
    )


def test_one_number_format_on_every_page(demo_results, tmp_path):
    """Scores ×100 with two decimals, said once per page; no raw 0.xxxx score outside the raw run record."""
    import re

    site = tmp_path / "site"
    data = build([demo_results], site).data
    for page in [site / "index.html", *(site / "models").glob("*.html")]:
        html = page.read_text()
        assert html.count("All scores are ×100 with two decimals") == 1, page
        shown = re.sub(r"<details><summary>Run record.*?</details>", "", html, flags=re.S)
        shown = re.sub(
            r"<svg.*?</svg>",
            lambda m: re.sub(r'(x|y|cx|cy|x1|x2|y1|y2|width|height)="[^"]*"', "", m.group(0)),
            shown,
            flags=re.S,
        )
        assert not re.search(r">\s*-?\d+\.\d{3,}\s*<", shown), page  # no 3+ decimal number as text
        assert not re.search(r">-?\d+\.\d\s*<", shown), page  # nor a 1-decimal one
    model = data["models"][0]
    page = (site / "models" / f"{model['id']}.html").read_text()
    for task, r in model["results"].items():
        main = f"{100 * r['main_score']:.2f}"
        assert f'<td>main_score</td><td class="num">{main}</td>' in page, task
        for d in r["details"]:
            assert f"{d['value']:.2f}</text>" in page  # the per-aspect bars print the value
    svg = str(robustness_svg("t", [("m", {"correct": [0.61], "implicit": [0.5], "incorrect": [0.2]})]))
    assert "Δci +41.00" in svg and "Δii +30.00" in svg


def test_per_aspect_scores_on_the_model_page(demo_results, tmp_path):
    data = build([demo_results], tmp_path / "site").data
    results = data["models"][0]["results"]
    raw = json.loads(
        result_files(demo_results, "DemoIntentEmotion", experiment="template=none" in data["models"][0]["setting"])[
            0
        ].read_text()
    )
    scores = raw["scores"]["test"][0]
    assert {d["label"]: d["value"] for d in results["DemoIntentEmotion"]["details"]} == pytest.approx(
        {"emotion": 100 * scores["emotion_success_rate"], "intent": 100 * scores["intent_success_rate"]}
    )
    assert [d["label"] for d in results["DemoNYTClustering"]["details"]] == ["topic", "location"]
    assert results["DemoInstructSTS"]["details"] == []


def test_stand_in_data_is_marked(demo_results, tmp_path):
    root = _submission(demo_results, tmp_path)
    _, record = result_files(root, "DemoNYTClustering")
    note = "labels derived from the NYT section field, not the published set"
    edit_json(record, lambda d: d["task"]["dataset"].update(stand_in=True, stand_in_note=note))
    site = tmp_path / "site"
    data = build([root], site).data
    demo = _demo_table(data)
    marked = {r["model_id"]: r["stand_in"] for r in demo["rows"]}
    default = next(m for m in data["models"] if m["setting"] == "default")
    assert marked.pop(default["id"]) == ["DemoNYTClustering"] and list(marked.values()) == [
        []
    ]  # older records: unknown = not flagged
    assert default["results"]["DemoNYTClustering"]["stand_in"] is True
    index = (site / "index.html").read_text()
    assert index.count('<sup class="stand-in">‡</sup>') == 2  # the one score and the legend
    assert "stand-in (proxy) data" in index
    assert note in (site / "models" / f"{default['id']}.html").read_text()


def test_each_plot_once_and_size_plot(demo_results, tmp_path, monkeypatch):
    """A robustness strip plot appears in the first suite holding its task only; each suite has one size plot."""
    from bench import tasks

    root = _submission(demo_results, tmp_path)
    for experiment in (False, True):
        path, _ = result_files(root, "DemoNYTClustering", experiment=experiment)
        edit_json(
            path,
            lambda d: d["scores"]["test"][0].update(
                {
                    f"v_measure_{s}_{i}": v
                    for s, v in (("correct", 0.5), ("implicit", 0.4), ("incorrect", 0.1))
                    for i in range(10)
                }
            ),
        )
    monkeypatch.setitem(tasks.SUITES, "second-suite", ("DemoNYTClustering", "DemoIntentEmotion"))
    site = tmp_path / "site"
    data = build([root], site).data
    assert [s["name"] for s in data["suites"]] == ["demo", "second-suite"]
    html = (site / "index.html").read_text()
    assert html.count(": V-measure per instruction</text>") == 1
    assert html.count("against model size</text>") == 2
    demo = html[html.index('id="suite-demo"') : html.index('id="suite-second-suite"')]
    assert "NYT (demo): V-measure per instruction" in demo
    assert demo.count('class="point"') == 2 and demo.count('fill="#fff" stroke') == 1  # two models, one hollow baseline


def test_size_and_bar_plots_escape_and_place_points():
    from bench.leaderboard.plots import bars_svg, size_svg

    svg = str(size_svg("s <b>", [("m<1>", 10_000_000, 20.0, False), ("m2", 1_000_000_000, 60.0, True)]))
    assert "s &lt;b&gt;" in svg and "m&lt;1&gt;: 20.00" in svg and "m2 (baseline): 60.00" in svg and "<b>" not in svg
    import re

    cx = [float(v) for v in re.findall(r'<circle cx="([\d.]+)"', svg)]
    cy = [float(v) for v in re.findall(r'<circle cx="[\d.]+" cy="([\d.]+)"', svg)]
    assert cx[1] > cx[0] and cy[1] < cy[0]  # bigger model right, higher score up
    assert (cx[1] - cx[0]) == pytest.approx(420 * 2 / 2)  # 10M..1B spans two decades of the 420 px axis
    bars = str(bars_svg("t", [("intent", 85.4216), ("gap", -3.5)]))
    assert "85.42</text>" in bars and "-3.50</text>" in bars and bars.count("<rect") == 2


def test_no_mid_word_breaks_in_the_css():
    from bench.leaderboard.site import STATIC

    css = (STATIC / "leaderboard.css").read_text()
    assert "overflow-wrap: anywhere" not in css and "word-break" not in css
    assert "@media (max-width: 700px)" in css and "position: sticky; left: 0" in css


# ----------------------------------------------------------------------------------- instruction variants
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def variant_submission(demo_results: Path, tmp_path: Path) -> Path:
    """Three variants (two correct, one incorrect) of DemoInstructSTS for two models and the baseline.

    Rankings of the two ranked models: MiniLM first under both correct variants, org/other under the
    incorrect one; so Kendall τ is 1, -1, -1 over the three pairs of variants.
    """
    root = _submission(demo_results, tmp_path)
    copy_model(root, "org/other")
    add_variants(result_files(root, "DemoInstructSTS", model=MINILM), [0.50, 0.60, 0.40])
    add_variants(result_files(root, "DemoInstructSTS", model="org/other"), [0.40, 0.50, 0.45])
    add_variants(result_files(root, "DemoInstructSTS", model=MINILM, experiment=True), [0.30, 0.30, 0.30])
    return root


def test_variant_results_are_accepted_and_shown_apart(demo_results, tmp_path):
    import re

    root = variant_submission(demo_results, tmp_path)
    report = validate(read_submission(root))
    assert report.valid, report.summary()
    assert len(report.entries) == 18 and "(9 of them under instruction variants)" in report.summary()
    site = tmp_path / "site"
    data = build([root], site).data

    # no variant as a model row, in the suite tables, the model pages or the CSV
    assert sorted(m["label"] for m in data["models"]) == ["org/other", MINILM, f"{MINILM} [template=none]"]
    assert [len(s["rows"]) for s in data["suites"]] == [3]
    assert len(list((site / "models").glob("*.html"))) == 3
    rows = list(csv.DictReader((site / "leaderboard.csv").open()))
    assert len(rows) == 18 and sum(bool(r["variant"]) for r in rows) == 9  # variants: own rows, marked
    varied = [r for r in rows if r["model"] == "org/other" and r["variant"]]
    assert [r["main_score_x100"] for r in varied] == ["40.00", "50.00", "45.00"]
    assert [r["variant_set"] for r in varied] == ["correct", "correct", "incorrect"]

    # leaderboard.json holds the sensitivity data the page is drawn from
    assert json.loads((site / "leaderboard.json").read_text())["sensitivity"] == data["sensitivity"]
    (task,) = data["sensitivity"]
    assert task["task"] == "DemoInstructSTS" and task["main_score_name"] == "cosine_spearman"
    assert [m["label"] for m in task["models"]] == [MINILM, "org/other", f"{MINILM} [template=none]"]
    first, other, baseline = task["models"]
    assert first["model_id"] in {m["id"] for m in data["models"]} and baseline["baseline"]
    assert (first["n"], first["mean"], first["std"], first["min"], first["max"]) == pytest.approx((3, 50, 10, 40, 60))
    assert first["set_differences"] == pytest.approx({"correct-incorrect": 15.0})
    assert other["set_differences"] == pytest.approx({"correct-incorrect": 0.0}) and baseline["std"] == pytest.approx(0)
    default = json.loads(result_files(root, "DemoInstructSTS", model=MINILM)[0].read_text())["scores"]["test"][0][
        "main_score"
    ]
    assert first["default"] == pytest.approx(100 * default)
    assert [v["score"] for v in first["variants"]] == pytest.approx([50, 60, 40])
    assert all(v["verification"] == "self-reported" for m in task["models"] for v in m["variants"])
    stability = task["stability"]  # the baseline is never ranked: two models
    assert (stability["models"], stability["variants"]) == (2, 3)
    assert sorted(stability["kendall_tau"].values()) == pytest.approx([-1, -1, 1])
    assert stability["mean_tau"] == pytest.approx(-1 / 3) and stability["min_tau"] == pytest.approx(-1)
    assert stability["top_by_mean"] == MINILM and stability["other_top"] == 1
    assert stability["top_change_share"] == pytest.approx(1 / 3)

    html = (site / "index.html").read_text()
    section = html[html.index('id="sensitivity"') :]
    assert '<a href="#sensitivity">' in html
    assert section.count('<svg xmlns="http://www.w3.org/2000/svg" class="plot sensitivity"') == 1
    dots = re.findall(r'class="variant-dot"><title>(.*?) · (\S+): ([-\d.]+)</title>', section)
    assert len(dots) == 9  # one dot per variant per model
    for m in task["models"]:
        assert sorted(float(v) for label, _, v in dots if label == m["label"]) == pytest.approx(
            sorted(v["score"] for v in m["variants"])
        )
    assert section.count('class="default-ring"><title>') == 3
    stability_table = section[section.index('id="stability-DemoInstructSTS"') :]
    stability_table = stability_table[: stability_table.index("</table>")]
    for text in (
        'Mean Kendall τ</th><td class="num">-0.33',
        'Min Kendall τ</th><td class="num">-1.00',
        "1 of 3 variants (33%)",
        f"models/{first['model_id']}.html",
    ):
        assert text in stability_table, text
    table = section[section.index('id="sensitivity-table-DemoInstructSTS"') :]
    assert ">50.00<" in table and ">10.00<" in table and ">15.00<" in table and "correct-incorrect" in table

    # each model's page lists its own variants: label, instruction, score
    page = (site / "models" / f"{first['model_id']}.html").read_text()
    listed = page[page.index('id="variants"') : page.index('id="task-')]
    assert re.findall(r'<td class="num">([-\d.]+)</td>', listed) == ["50.00", "60.00", "40.00"]
    assert all(f"<code>{v['label']}</code>" in listed for v in first["variants"])


def test_a_variant_is_verified_like_any_result(demo_results, tmp_path):
    from bench.leaderboard.table import leaderboard_data
    from bench.leaderboard.verify import entry_sha256

    reports = validate_all([variant_submission(demo_results, tmp_path)])
    variants = [e for e in reports[0].entries if "variant" in e.record and e.model.name == "org/other"]

    def other(verified):
        (task,) = leaderboard_data(reports, verified)["sensitivity"]
        return next(m for m in task["models"] if m["name"] == "org/other")

    one = other({entry_sha256(variants[0]): {"verified": True}})
    assert [v["verification"] for v in one["variants"]].count("verified") == 1 and one[
        "verification"
    ] == "self-reported"
    assert other({entry_sha256(e): {"verified": True} for e in variants})["verification"] == "verified"


def test_sensitivity_plot_is_narrow_escaped_and_places_dots():
    import re

    from bench.leaderboard.plots import SENSITIVITY_WIDTH, sensitivity_svg

    models = [
        {
            "label": "org/<b>",
            "mean": 50.0,
            "std": 10.0,
            "default": 55.0,
            "baseline": False,
            "variants": [{"label": "v01-aaaaaaaa", "set": None, "score": s} for s in (40.0, 50.0, 60.0)],
        },
        {
            "label": "x/" + "m" * 80,
            "mean": 30.0,
            "std": None,
            "default": None,
            "baseline": True,
            "variants": [{"label": "v01-aaaaaaaa", "set": None, "score": 30.0}],
        },
    ]
    svg = str(sensitivity_svg("T: score per instruction variant", "main ×100", models))
    assert f'width="{SENSITIVITY_WIDTH}"' in svg and "<b>" not in svg and "org/&lt;b&gt;" in svg
    assert svg.count('class="variant-dot"') == 4 and svg.count('class="default-ring"><title>') == 1
    cx = [float(v) for v in re.findall(r'<circle cx="([\d.]+)"[^>]*class="variant-dot"', svg)]
    assert cx[0] < cx[1] < cx[2] and cx[3] < cx[0]  # higher score further right; 30 left of 40
    assert all(12 <= x <= SENSITIVITY_WIDTH - 14 for x in cx)
    assert "(baseline)</text>" not in svg and " (baseline)<title>" in svg  # a long label is clipped, the mark kept


def test_best_ignores_every_unranked_row():
    """Issue 42: a row the comparability rule leaves unranked (stand-in data, a partial average) is never shaded
    best, even where its score is the column's highest."""
    from bench.leaderboard.suite_tables import _best

    rows = [
        {"baseline": False, "scores": {"a": 90.0}, "unranked_reason": "not the same data: stand-in data (‡) on a"},
        {"baseline": False, "scores": {"a": 10.0}, "unranked_reason": None},
    ]
    assert _best(rows) == {"a": 10.0}
