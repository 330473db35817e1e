"""The files beside a result are MTEB's own, byte for byte: the TaskResult, model_meta.json and
run_settings.jsonl (merged as MTEB merges it), written atomically (bench/results/result_cache.py)."""

from __future__ import annotations

import errno
import json
import subprocess
import sys
from pathlib import Path

import mteb
import pytest

from bench.core.errors import StorageError
from bench.results.result_cache import AtomicResultCache
from bench.results.store import SCRATCH_PREFIX, find_results
from bench.tasks import get_tasks
from conftest import ROOT
from results_repo_check import folder_problems, result_file_problems
from toy_encoders import HashEncoder

LEGACY_LINE = {
    "task": "OldTask",
    "split": "test",
    "subset": "default",
    "version": {"mteb": "2.15.0"},
    "encode_kwargs": {"batch_size": 2},
}  # the shape MTEB wrote before 2.18.17, merged like any other


@pytest.fixture(scope="module")
def task_results():
    """Two real TaskResults (an STS task and a clustering task) from `mteb.evaluate`, nothing cached."""
    model = HashEncoder(use_cache=False)
    out = []
    for task in get_tasks(["DemoInstructSTS", "DemoNYTClustering"]):
        out.append(mteb.evaluate(model, task, cache=None, show_progress_bar=False, co2_tracker=False).task_results[0])
    return out


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _metas():
    return {
        "registry": mteb.get_model_meta("sentence-transformers/all-MiniLM-L6-v2"),  # a set of training datasets
        "experiment": HashEncoder(use_cache=False).mteb_model_meta,  # files under experiments/<name>/
    }


@pytest.mark.parametrize("which", ["registry", "experiment"])
def test_save_to_cache_writes_what_mteb_writes_byte_for_byte(task_results, tmp_path, which):
    meta = _metas()[which]
    ours, theirs = AtomicResultCache(tmp_path / "ours"), mteb.ResultCache(tmp_path / "theirs")
    sts, clustering = task_results
    for cache in (ours, theirs):  # an older run_settings.jsonl is there already: both must merge it
        folder = cache.get_task_result_path(sts.task_name, meta).parent
        folder.mkdir(parents=True)
        (folder / "run_settings.jsonl").write_text(json.dumps(LEGACY_LINE) + "\n", encoding="utf-8")
    steps = [(sts, {"batch_size": 8}), (clustering, {"batch_size": 8}), (sts, {"batch_size": 4}), (clustering, None)]
    for result, encode_kwargs in steps:  # two tasks in a row, then each again with other settings
        ours.save_to_cache(result, meta, encode_kwargs=encode_kwargs)
        theirs.save_to_cache(result, meta, encode_kwargs=encode_kwargs)
        assert _tree(tmp_path / "ours") == _tree(tmp_path / "theirs")
    folder = ours.get_task_result_path(sts.task_name, meta).parent
    assert sorted(p.name for p in folder.iterdir() if p.is_file()) == [
        "DemoInstructSTS.json",
        "DemoNYTClustering.json",
        "model_meta.json",
        "run_settings.jsonl",
    ]
    rows = [json.loads(line) for line in (folder / "run_settings.jsonl").read_text().splitlines()]
    assert {r["task"] for r in rows} == {"OldTask", "DemoInstructSTS", "DemoNYTClustering"}
    assert next(r for r in rows if r["task"] == "DemoInstructSTS")["encode_kwargs"] == {"batch_size": 4}
    assert not list((tmp_path / "ours").glob(f"{SCRATCH_PREFIX}*"))  # the scratch cache is gone
    assert folder_problems(tmp_path / "ours" / "results") == []  # the results repository's check passes


def test_the_result_cache_is_a_plain_class_and_reading_results_imports_no_mteb():
    """`AtomicResultCache` is a class of its own module (typed where it is used: a module `__getattr__` made
    every use `Any`), MTEB's ResultCache underneath; the result files are read without importing MTEB."""
    assert issubclass(AtomicResultCache, mteb.ResultCache) and AtomicResultCache.__module__.endswith("result_cache")
    code = "import sys, bench.results.store as s; print(hasattr(s, '__getattr__'), 'mteb' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert done.stdout.split() == ["False", "False"], done.stderr


def test_a_string_model_name_is_saved_as_mteb_saves_it(task_results, tmp_path):
    sts = task_results[0]
    AtomicResultCache(tmp_path / "ours").save_to_cache(sts, "org/model", "rev1", encode_kwargs={"batch_size": 3})
    mteb.ResultCache(tmp_path / "theirs").save_to_cache(sts, "org/model", "rev1", encode_kwargs={"batch_size": 3})
    assert _tree(tmp_path / "ours") == _tree(tmp_path / "theirs")
    assert "results/org__model/rev1/run_settings.jsonl" in _tree(tmp_path / "ours")


def test_a_failed_save_keeps_the_old_files_and_says_why_in_one_line(task_results, tmp_path, monkeypatch):
    sts = task_results[0]
    meta = _metas()["experiment"]
    cache = AtomicResultCache(tmp_path / "out")
    cache.save_to_cache(sts, meta, encode_kwargs={"batch_size": 8})
    folder = cache.get_task_result_path(sts.task_name, meta).parent
    before = _tree(folder)

    def half_then_full_disk(self, path):  # MTEB's writer dies mid-file
        path.write_text('{"dataset_revision": "', encoding="utf-8")
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(mteb.TaskResult, "to_disk", half_then_full_disk)
    with pytest.raises(StorageError, match="no space left on the device") as caught:
        cache.save_to_cache(sts, meta, encode_kwargs={"batch_size": 4})
    assert "\n" not in str(caught.value) and str(folder / f"{sts.task_name}.json") in str(caught.value)
    assert _tree(folder) == before  # result, model_meta.json and run_settings.jsonl untouched
    assert not list((tmp_path / "out").glob(f"{SCRATCH_PREFIX}*"))


def test_a_leftover_scratch_cache_is_never_read_as_a_result(task_results, tmp_path):
    """A crash (kill -9) between MTEB's write and the renames leaves `OUTPUT/.saving-*/`: neither MTEB's
    loader (it reads OUTPUT/results/) nor the harness's tables pick a result up from it."""
    sts = task_results[0]
    meta = _metas()["experiment"]
    mteb.ResultCache(tmp_path / "out" / f"{SCRATCH_PREFIX}crashed").save_to_cache(sts, meta)
    assert find_results(tmp_path / "out") == []
    assert mteb.ResultCache(tmp_path / "out").get_cache_paths(include_remote=False, require_model_meta=False) == []


# ------------------------------------------------------------------ the results repository's check itself
def _write_result(folder: Path, *, version: str = "2.26.24", subsets=("default",)) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    blocks = [{"hf_subset": s, "main_score": 0.5, "languages": ["eng-Latn"]} for s in subsets]
    path = folder / "DemoTask.json"
    path.write_text(
        json.dumps(
            {
                "dataset_revision": "r",
                "task_name": "DemoTask",
                "mteb_version": version,
                "evaluation_time": 1.0,
                "scores": {"test": blocks},
            }
        ),
        encoding="utf-8",
    )
    return path


def _write_settings(folder: Path, *rows: dict) -> None:
    (folder / "run_settings.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_the_check_mirrors_the_repositorys_rules(tmp_path):
    ok = {"task": "DemoTask", "splits": ["test"], "subsets": ["default"], "version": {"mteb": "2.26.24"}}
    path = _write_result(tmp_path / "a")
    assert any("is missing run_settings.jsonl" in p for p in result_file_problems(path))
    _write_settings(path.parent, ok)
    assert result_file_problems(path) == []
    # the singular shape MTEB wrote before 2.18.17, and a mix of the two spellings, are read as MTEB reads them
    _write_settings(
        path.parent, {"task": "DemoTask", "split": "test", "subset": "default", "version": {"mteb": "2.15"}}
    )
    assert result_file_problems(path) == []
    _write_settings(
        path.parent, {"task": "DemoTask", "splits": ["test"], "subset": "default", "version": {"mteb": "2.15"}}
    )
    assert result_file_problems(path) == []
    _write_settings(path.parent, {**ok, "split": "test"})
    assert any("defines both split/splits" in p for p in result_file_problems(path))
    _write_settings(path.parent, {**ok, "task": "OtherTask"})
    assert any("no matching run_settings.jsonl entry" in p for p in result_file_problems(path))
    _write_settings(path.parent, {**ok, "version": {"mteb": "2.13.9"}})
    assert any("version.mteb must use MTEB >=2.14.0" in p for p in result_file_problems(path))
    old = _write_result(tmp_path / "b", version="2.12.16-2.15.4")  # a range counts as its lower end
    _write_settings(old.parent, ok)
    assert any("mteb_version must use MTEB >=2.14.0" in p for p in result_file_problems(old))
    part = _write_result(tmp_path / "c", subsets=("en", "nl", "de"))
    _write_settings(part.parent, {**ok, "subsets": ["en"]})
    assert sorted(p.split("subset=")[1] for p in result_file_problems(part)) == ["'de'.", "'nl'."]
    (part.parent / "run_settings.jsonl").write_text("{bad json\n", encoding="utf-8")
    assert any("line 1 is not valid JSON" in p for p in result_file_problems(part))


@pytest.mark.slow
def test_a_bench_run_leaves_run_settings_beside_every_result(tmp_path):
    from bench.run.runner import RunOptions, run

    out = tmp_path / "out"
    run(RunOptions(suite="demo", output_dir=str(out), cache_dir=str(tmp_path / "cache"), show_progress_bar=False))
    results = [
        p
        for p in (out / "instruct-bench" / "results").rglob("*.json")
        if p.name != "model_meta.json" and p.parent.name != "run_records"
    ]
    assert len(results) == 3
    for path in results:
        assert (path.parent / "run_settings.jsonl").is_file() and (path.parent / "model_meta.json").is_file()
        rows = [json.loads(line) for line in (path.parent / "run_settings.jsonl").read_text().splitlines()]
        row = next(r for r in rows if r["task"] == path.stem)
        assert (
            row["splits"] == ["test"] and row["subsets"] == ["default"] and row["version"]["mteb"] == mteb.__version__
        )
        assert set(row["encode_kwargs"]) == {"batch_size"}  # what bench run passes to mteb.evaluate
    assert folder_problems(out / "instruct-bench" / "results") == []
