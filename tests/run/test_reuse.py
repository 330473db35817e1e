"""A rerun whose every task is finished is decided from the run's plan (bench/run/reuse.py): without MTEB or
the model, and only where each run record's resume key is the plan's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.run import reuse
from bench.run.runner import RunOptions

KEY = {"record_version": 1, "model": "toy/m", "limit": None, "seed": 42}


def _finished(out: Path, key: dict, task: str = "DemoInstructSTS") -> str:
    """A finished task's result and run record under OUT, as a run files them; the result's path relative to OUT."""
    folder = out / "instruct-bench" / "results" / "toy__m" / "v1"
    (folder / "run_records").mkdir(parents=True)
    result = {
        "task_name": task,
        "scores": {"test": [{"main_score": 0.25, "cosine_spearman": 0.25, "hf_subset": "default"}]},
    }
    (folder / f"{task}.json").write_text(json.dumps(result), encoding="utf-8")
    (folder / "run_records" / f"{task}.json").write_text(json.dumps({"resume_key": key}), encoding="utf-8")
    return str((folder / f"{task}.json").relative_to(out))


def _plan(options: RunOptions, relative: str, key: dict) -> None:
    digest = reuse.request_digest(options)
    assert digest is not None
    job = {"task": "DemoInstructSTS", "main_score": "cosine_spearman", "result": relative, "resume_key": key}
    reuse.plan_path(digest).parent.mkdir(parents=True, exist_ok=True)
    reuse.plan_path(digest).write_text(json.dumps({"format": reuse.FORMAT, "jobs": [job]}), encoding="utf-8")


def test_a_plan_reuses_a_result_whose_record_has_its_resume_key(tmp_path):
    options = RunOptions(model="toy:m", tasks=["DemoInstructSTS"], output_dir=str(tmp_path / "out"))
    _plan(options, _finished(tmp_path / "out", KEY), KEY)
    [outcome] = reuse.plan_outcomes(options) or []
    assert (outcome.task, outcome.status, outcome.main_score) == ("DemoInstructSTS", "reused", 0.25)
    assert outcome.record["resume_key"] == KEY


def test_a_record_with_another_resume_key_is_not_reused(tmp_path):
    """The record says another setting made the result: the full run decides (and recomputes it)."""
    options = RunOptions(model="toy:m", tasks=["DemoInstructSTS"], output_dir=str(tmp_path / "out"))
    _plan(options, _finished(tmp_path / "out", {**KEY, "seed": 7}), KEY)
    assert reuse.plan_outcomes(options) is None


def test_a_damaged_result_or_a_missing_record_is_not_reused(tmp_path):
    options = RunOptions(model="toy:m", tasks=["DemoInstructSTS"], output_dir=str(tmp_path / "out"))
    relative = _finished(tmp_path / "out", KEY)
    _plan(options, relative, KEY)
    (tmp_path / "out" / relative).write_text("{not json", encoding="utf-8")
    assert reuse.plan_outcomes(options) is None


@pytest.mark.parametrize(
    "other",
    [
        {"limit": 20},
        {"seed": 7},
        {"template": "none"},
        {"model_options": {"pooling": "mean"}},
        {"instruction_style": "command"},
    ],
    ids=["limit", "seed", "template", "option", "style"],
)
def test_another_setting_has_another_plan(tmp_path, other):
    base = RunOptions(model="toy:m", tasks=["DemoInstructSTS"], output_dir=str(tmp_path / "a"))
    changed = RunOptions(**{**base.__dict__, **other})
    assert reuse.request_digest(changed) != reuse.request_digest(base)
    # the output folder is not part of it: the plan's paths are relative to it
    assert reuse.request_digest(
        RunOptions(**{**base.__dict__, "output_dir": str(tmp_path / "b")})
    ) == reuse.request_digest(base)


def test_a_changed_model_file_makes_another_plan(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "weights.bin").write_bytes(b"1234")
    options = RunOptions(model=str(model), tasks=["DemoInstructSTS"])
    before = reuse.request_digest(options)
    (model / "weights.bin").write_bytes(b"12345")
    assert reuse.request_digest(options) != before


@pytest.mark.parametrize(
    "other",
    [{"overwrite": True}, {"data_dir": "data"}, {"instruction_variants": "demo"}],
    ids=["overwrite", "data", "variants"],
)
def test_a_run_that_must_look_at_more_than_records_has_no_plan(other):
    assert not reuse.eligible(RunOptions(**other))


def test_a_family_registered_outside_the_package_keeps_no_plan():
    from toy_encoders import HashEncoder

    assert not reuse.from_package(HashEncoder(cache_dir=None, use_cache=False))
