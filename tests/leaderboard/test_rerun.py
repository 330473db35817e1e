"""A re-run is the same result (issue 32, item 2): bench/leaderboard/rerun.py and `settle_conflicts`.

Two `bench run`s of one setting never write the same bytes (dates, timings, cache hits, the command line,
model_meta.json's training datasets in a hash-seeded order), so results merge when their scores (exactly)
and identity are equal, and stay a conflict, decided by trust, when a score or an identity field differs.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from bench.cli.main import main
from bench.core.fileio import sha256_json
from bench.leaderboard import build, validate_all
from bench.leaderboard.rerun import RUNTIME_SETTINGS, first_difference, result_identity, same_result_view
from bench.leaderboard.submission import read_submission
from bench.leaderboard.validate import validate
from bench.leaderboard.verify import FORMAT, entry_sha256
from leaderboard_fixtures import add_variants, copy_results, edit_json, result_files

STS, NYT = "DemoInstructSTS", "DemoNYTClustering"


# ----------------------------------------------------------------------------------- helpers
def _rerun(root: Path) -> Path:
    """Rewrite every file of the results folder `root` as a second `bench run` of the same setting writes it:
    other dates and timings, cache hits, command line, `--model` spelling, device and batch size, and
    model_meta.json's training datasets in another order. Scores and identity stay as they are."""
    for path in sorted(root.rglob("*.json")):
        if path.name == "model_meta.json":
            edit_json(path, lambda d: d.update(training_datasets=sorted(d["training_datasets"] or [], reverse=True)))
        elif path.parent.name == "run_records":
            edit_json(path, _rerun_record)
        else:
            edit_json(path, _rerun_result)
    return root


def _rerun_result(d: dict[str, Any]) -> None:
    d.update(date=d["date"] + 3600, evaluation_time=d["evaluation_time"] / 7, kg_co2_emissions=0.001)
    for phase in d.get("evaluation_phases") or []:
        phase["end"] = phase["end"] / 7


def _rerun_record(d: dict[str, Any]) -> None:
    d.update(started_at="2031-05-01T12:00:00+00:00", evaluation_seconds=0.0123, command=["bench", "run", "-o", "x"])
    d["encode"].update(cache_hits=d["encode"]["texts_requested"], texts_encoded=0, encode_seconds=0.0)
    d["model"].update(spec="sentence-transformers/all-MiniLM-L6-v2", device="cuda:0")
    d["model"]["settings"].update(batch_size=256, device="cuda")
    d["resume_key"]["settings"].update(device="cuda")


def _score_digit(root: Path, task: str = STS) -> tuple[float, float]:
    """Change the last digit of `task`'s main score (and its metric): (before, after)."""
    result, record = result_files(root, task)
    metric = json.loads(record.read_text())["task"]["main_score"]
    before = json.loads(result.read_text())["scores"]["test"][0]["main_score"]
    after = round(before + 1e-6, 6)
    edit_json(result, lambda d: d["scores"]["test"][0].update({"main_score": after, metric: after}))
    return before, after


def _verification(path: Path, root: Path) -> Path:
    """A verification file vouching for every result of the submission `root`, as `verify` writes one."""
    entries = validate(read_submission(root)).entries
    results = [{"verified": True, "sha256": entry_sha256(e)} for e in entries]
    path.write_text(json.dumps({"format": FORMAT, "results": results}), encoding="utf-8")
    return path


def _default(data: dict[str, Any]) -> dict[str, Any]:
    (model,) = [m for m in data["models"] if m["setting"] == "default"]
    return model


def _seen_in(data: dict[str, Any], task: str) -> list[tuple[str, str]]:
    """(submission, verification) of each copy of the default row's `task`, as `accepted[].reruns` lists
    them (the copy shown first); [] when it was not merged."""
    found = [
        r
        for a in data["accepted"]
        for r in a["reruns"]
        if r["task"] == task and r["shown"] and r["label"] == _default(data)["label"]
    ]
    assert len(found) <= 1
    return [(c["submission"], c["verification"]) for c in found[0]["seen_in"]] if found else []


# ----------------------------------------------------------------------------------- the rule (fast)
def _record(**model: Any) -> dict[str, Any]:
    return {
        "task": {"name": "T", "dataset": {"revision": "r1"}, "instructions_sha256": "a" * 64, "seed": 42},
        "model": {"name": "o/m", "content": "sha256:1", "settings": {"dtype": "float32", "batch_size": 32}, **model},
        "encode": {"encode_seconds": 1.0},
        "started_at": "2030-01-01",
        "versions": {"mteb": "2.26.24"},
        "resume_key": {"settings": {"dtype": "float32", "device": None}},
    }


def test_what_counts_in_the_same_result():
    """Dates, timings, versions, device, batch size, spec and a set's order never count; a score's last digit,
    a dtype, the content, the dataset revision and the instructions do, named by field."""
    result = {"dataset_revision": "r1", "scores": {"test": [{"main_score": 0.123456, "mteb_version": "2.26.24"}]}}
    meta = {"n_parameters": 7, "training_datasets": ["A", "B"]}
    base = (result, _record(), meta)
    rerun = (
        {**result, "date": 2.0, "evaluation_time": 9.0, "mteb_version": "2.27.0"},
        {
            **_record(spec="other", device="cuda"),
            "encode": {"encode_seconds": 0.0},
            "started_at": "2031-01-01",
            "versions": {"mteb": "2.27.0"},
            "command": ["x"],
            "resume_key": {"settings": {"dtype": "float32", "device": "cuda"}},
        },
        {"n_parameters": 7, "training_datasets": ["B", "A"]},
    )
    rerun[1]["model"]["settings"]["batch_size"] = 256
    assert result_identity(*base) == result_identity(*rerun)
    digit = {**result, "scores": {"test": [{"main_score": 0.123457}]}}
    dtype = _record()
    dtype["model"]["settings"]["dtype"] = "float16"
    revision = _record()
    revision["task"]["dataset"]["revision"] = "r2"
    differing = {
        "scores.test[0].main_score": (digit, _record(), meta),
        "record.model.settings.dtype": (result, dtype, meta),
        "record.model.content": (result, _record(content="sha256:2"), meta),
        "record.task.dataset.revision": (result, revision, meta),
        "model_meta.n_parameters": (result, _record(), {**meta, "n_parameters": 8}),
    }
    for field, other in differing.items():
        assert result_identity(*other) != result_identity(*base), field
        found = first_difference([same_result_view(*base), same_result_view(*other)])
        assert found is not None and found[0] == field


def test_runtime_settings_are_runtime_options_of_a_family():
    """Every setting left out of a result's identity is declared runtime by some family
    (bench/adapters/options.py), so the list can never leave out an option that changes vectors."""
    from bench.adapters.options import family_options, runtime_options
    from bench.adapters.registry import FAMILIES, discover

    discover()
    declared = set().union(*(runtime_options(cls) for cls in FAMILIES.values()))
    assert declared >= RUNTIME_SETTINGS, sorted(RUNTIME_SETTINGS - declared)
    assert not {"dtype", "template", "instruction_template", "max_tokens"} & RUNTIME_SETTINGS
    # The list is one for all families: a family that takes one of them as an option must declare it runtime
    # too, or two of its results differing in that (vector-changing) option would merge as re-runs.
    vector = {
        name: sorted((set(family_options(cls)) & RUNTIME_SETTINGS) - runtime_options(cls))
        for name, cls in FAMILIES.items()
    }
    assert not {name: keys for name, keys in vector.items() if keys}


# ----------------------------------------------------------------------------------- the scenario
@pytest.mark.slow
def test_default_then_variants_in_a_new_folder_both_accepted(demo_results, tmp_path, capsys):
    """The default run submitted, then `--instruction-variants demo` run into a new folder (which recomputes the
    default result) and submitted: both accepted, the default result merged as a re-run seen in both, and the
    site has the sensitivity section. Real `bench run` output, packed by `bench submit`."""
    from bench.run.runner import RunOptions, run

    variants = tmp_path / "variants"
    run(
        RunOptions(
            tasks=[NYT],
            instruction_variants="demo",
            output_dir=str(variants),
            cache_dir=str(demo_results.parent / "lb-cache"),
            show_progress_bar=False,
        )
    )
    first, second = tmp_path / "default.zip", tmp_path / "variants.zip"
    assert main(["submit", str(demo_results), "--out", str(first)]) == 0
    assert main(["submit", str(variants), "--out", str(second)]) == 0
    capsys.readouterr()
    name = result_files(demo_results, NYT)[0].relative_to(demo_results).as_posix()
    with zipfile.ZipFile(first) as a, zipfile.ZipFile(second) as b:
        assert a.read(name) != b.read(name)  # a second run: not the same bytes (date, timings)
        assert json.loads(a.read(name))["scores"] == json.loads(b.read(name))["scores"]
    site = tmp_path / "site"
    result = build([first, second], site)
    reports = result.reports
    assert all(r.valid for r in reports), [r.summary() for r in reports]
    assert [len(r.merged) for r in reports] == [0, 1] and not any(r.held for r in reports)
    assert "1 re-run(s) of results another submission gave" in reports[1].summary()
    data = result.data
    assert not data["conflicts"] and not data["rejected"]
    assert _seen_in(data, NYT) == [(str(first), "self-reported"), (str(second), "self-reported")]
    assert _default(data)["results"][NYT]["seen_in"] == [str(first), str(second)]
    assert set(_default(data)["submissions"]) == {str(first), str(second)}
    (task,) = data["sensitivity"]
    assert task["task"] == NYT and task["models"][0]["model_id"] == _default(data)["id"]
    assert len(task["models"][0]["variants"]) == 3
    index = (site / "index.html").read_text()
    assert 'id="sensitivity"' in index and 'id="reruns"' in index
    assert f"seen in submissions {first} (self-reported: shown) and {second} (self-reported)" in index
    page = (site / "models" / f"{_default(data)['id']}.html").read_text()
    assert f"seen in submissions {first} and {second}" in page


# ----------------------------------------------------------------------------------- conflicts
def test_a_different_last_digit_is_a_conflict_naming_both_values(demo_results, tmp_path):
    first = copy_results(demo_results, tmp_path / "a")
    second = _rerun(copy_results(demo_results, tmp_path / "b"))
    before, after = _score_digit(second)
    result = build([first, second], tmp_path / "site")
    assert all(r.valid for r in result.reports)
    assert [len(r.held) for r in result.reports] == [1, 1] and [len(r.merged) for r in result.reports] == [0, 5]
    (conflict,) = result.data["conflicts"]
    assert conflict["task"] == STS and conflict["kept"] is None
    differs = conflict["differs_in"]
    assert differs["field"].startswith("scores.test[0].") and [v["value"] for v in differs["values"]] == [before, after]
    assert [h["main_score"] for h in conflict["held"]] == [before, after]
    named = f"{json.dumps(before)} ({first}), {json.dumps(after)} ({second})"
    assert named in differs["text"] and named in result.conflicts[0].summary()
    assert named in (tmp_path / "site" / "index.html").read_text()


def _dataset_revision(root: Path) -> str:
    result, record = result_files(root, STS)
    edit_json(result, lambda d: d.update(dataset_revision="packaged"))  # the pinned name: also accepted
    edit_json(
        record,
        lambda d: (
            d["task"]["dataset"].update(revision="packaged"),
            d["resume_key"].update(dataset_revision="packaged"),
        ),
    )
    return "result.dataset_revision"


def _dtype(root: Path) -> str:
    _, record = result_files(root, STS)
    edit_json(record, lambda d: d["model"]["settings"].update(dtype="float16"))
    return "record.model.settings.dtype"


def _content(root: Path) -> str:
    _, record = result_files(root, STS)
    edit_json(record, lambda d: d["model"].update(content="sha256:" + "0" * 64))
    return "record.model.content"


def _instructions(root: Path) -> str:
    """An instruction variant run with other task instructions under the same variant label."""
    record = min(p for p in root.rglob("run_records/*.json") if "variant" in json.loads(p.read_text()))

    def other(d: dict[str, Any]) -> None:
        d["task"]["instructions"] = {**d["task"]["instructions"], "column": "another"}
        d["task"]["instructions_sha256"] = sha256_json(d["task"]["instructions"])

    edit_json(record, other)
    return "record.task.instructions.column"


IDENTITY = {
    "dataset revision": _dataset_revision,
    "dtype": _dtype,
    "model content": _content,
    "instructions": _instructions,
}


@pytest.mark.parametrize("change", [None, *IDENTITY], ids=["re-run", *IDENTITY])
def test_a_rerun_differing_in_identity_is_a_conflict(demo_results, tmp_path, change):
    """The same scores under another identity (dataset revision, dtype, model content, an instruction variant's
    instructions) is a conflict naming the field, not a merge; the plain re-run merges."""
    first = copy_results(demo_results, tmp_path / "a")
    second = copy_results(demo_results, tmp_path / "b")
    for root in (first, second):
        add_variants(result_files(root, STS), [0.5, 0.6, 0.4])
    _rerun(second)
    field = IDENTITY[change](second) if change else None
    reports = validate_all([first, second])
    assert all(r.valid for r in reports), [r.summary() for r in reports]
    conflicts = build([first, second], tmp_path / "site").data["conflicts"]
    if field is None:
        assert not conflicts and [len(r.merged) for r in reports] == [0, 9]
        return
    (conflict,) = conflicts
    assert conflict["differs_in"]["field"] == field and [len(r.held) for r in reports] == [1, 1]


# ----------------------------------------------------------------------------------- verification
def test_a_rerun_of_a_verified_result_shows_the_verified_copy(demo_results, tmp_path):
    """A verified result and a self-reported re-run of it: merged, whatever the order, the verified copy shown
    and the re-run listed as self-reported; the re-run alone is not verified by the other copy's
    verification; a re-run with a different last digit is held back and the verified one kept."""
    genuine = copy_results(demo_results, tmp_path / "genuine")
    again = _rerun(copy_results(demo_results, tmp_path / "again"))
    verification = _verification(tmp_path / "v.json", genuine)
    for order in ([again, genuine], [genuine, again]):
        data = build(order, tmp_path / "site", verifications=[verification]).data
        assert not data["conflicts"], data["conflicts"]
        model = _default(data)
        assert model["verification"] == "verified" and model["results"][STS]["submission"] == str(genuine)
        assert _seen_in(data, STS) == [(str(genuine), "verified"), (str(again), "self-reported")]
    alone = build([again], tmp_path / "alone", verifications=[verification]).data
    assert _default(alone)["verification"] == "self-reported"
    _score_digit(again)
    data = build([again, genuine], tmp_path / "digit", verifications=[verification]).data
    (conflict,) = data["conflicts"]
    assert conflict["kept"]["submission"] == str(genuine) and conflict["kept"]["verification"] == "verified"
    assert [(h["submission"], h["verification"]) for h in conflict["held"]] == [(str(again), "self-reported")]
    assert _default(data)["verification"] == "verified"


def test_two_verified_copies_of_one_result_merge(demo_results, tmp_path):
    """Both copies verified (each by its own sha256): one result, shown verified, no conflict."""
    first = copy_results(demo_results, tmp_path / "a")
    second = _rerun(copy_results(demo_results, tmp_path / "b"))
    files = [_verification(tmp_path / f"{r.name}.json", r) for r in (first, second)]
    data = build([second, first], tmp_path / "site", verifications=files).data
    assert not data["conflicts"] and _default(data)["verification"] == "verified"
    assert _seen_in(data, STS) == [(str(second), "verified"), (str(first), "verified")]
