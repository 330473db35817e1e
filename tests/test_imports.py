"""Start-up imports: commands that compute nothing import no torch, transformers or sentence-transformers,
and no MTEB where they do not need it (each command runs in a fresh subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

MODEL_STACK = ("torch", "transformers", "sentence_transformers")
HEAVY = (*MODEL_STACK, "mteb")

# Runs `python -m bench ARGS...` (or a statement) and prints, last, which heavy modules it imported.
_DRIVER = """
import atexit, json, runpy, sys
heavy = {heavy!r}
atexit.register(lambda: sys.__stdout__.write("\\nIMPORTED " + json.dumps([m for m in heavy if m in sys.modules]) + "\\n"))
args = sys.argv[1:]
if args and args[0] == "--statement":
    exec(args[1])
else:
    sys.argv = ["bench", *args]
    runpy.run_module("bench", run_name="__main__", alter_sys=True)
"""


def imported(*args: str, env: dict[str, str] | None = None) -> list[str]:
    """The heavy modules a fresh `python -m bench ARGS` imported (it must exit 0)."""
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER.format(heavy=HEAVY), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
        env={**os.environ, **(env or {})},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = [x for x in proc.stdout.splitlines() if x.startswith("IMPORTED ")][-1]
    return json.loads(line.removeprefix("IMPORTED "))


def test_import_bench_errors_imports_no_mteb():
    assert imported("--statement", "import bench.core.errors") == []


@pytest.mark.parametrize("args", [["--help"], ["--version"]], ids=["help", "version"])
def test_help_and_version_import_nothing_heavy(args):
    assert imported(*args) == []


@pytest.mark.slow
def test_results_imports_nothing_heavy_once_the_task_catalogue_is_cached(tmp_path):
    """The first `bench results` under a cache derives the task catalogue (imports the tasks, hence MTEB)
    and caches it; the next starts without MTEB."""
    out = tmp_path / "results" / "org__model" / "rev"
    out.mkdir(parents=True)
    result = {"task_name": "DemoInstructSTS", "scores": {"test": [{"main_score": 0.5, "hf_subset": "default"}]}}
    (out / "DemoInstructSTS.json").write_text(json.dumps(result), encoding="utf-8")
    env = {"INSTRUCT_BENCH_CACHE": str(tmp_path / "cache")}
    assert "mteb" in imported("results", str(tmp_path / "results"), env=env)
    assert imported("results", str(tmp_path / "results"), env=env) == []


@pytest.mark.parametrize(
    "args", [["build-data", "list"], ["build-data", "instruction-variants", "--help"]], ids=["list", "help"]
)
def test_build_data_listing_and_help_import_nothing_heavy(args):
    assert imported(*args) == []


@pytest.mark.slow
@pytest.mark.parametrize("what", ["tasks", "suites"])
def test_listing_imports_no_model_stack(what):
    assert not set(imported("list", what)) & set(MODEL_STACK)


@pytest.mark.slow
def test_a_warm_model_listing_imports_no_model_stack(tmp_path):
    """`list models` renders each zoo model's formats by probing MTEB's wrapper around a weightless stand-in,
    which imports sentence-transformers (and torch) once; the probes are cached, so later listings do not."""
    env = {"INSTRUCT_BENCH_CACHE": str(tmp_path / "cache")}
    assert set(imported("list", "models", env=env)) & set(MODEL_STACK)  # the first listing probes
    assert not set(imported("list", "models", env=env)) & set(MODEL_STACK)


@pytest.mark.slow
def test_a_rerun_that_reuses_every_task_imports_no_model_stack(tmp_path):
    args = [
        "run",
        "-t",
        "DemoInstructSTS",
        "--output-dir",
        str(tmp_path / "out"),
        "--cache-dir",
        str(tmp_path / "cache"),
        "-q",
    ]
    assert "torch" in imported(*args)  # the first run computes
    assert not set(imported(*args)) & set(MODEL_STACK)  # the rerun reuses the result


@pytest.mark.registry
def test_the_task_catalogue_is_derived_from_the_task_sources(tmp_path, monkeypatch):
    """The cached catalogue is the task classes' own, and any change to a task file makes another key:
    adding a task needs no second edit, and no stale catalogue is ever read."""
    import shutil

    from bench.results import task_catalog

    monkeypatch.setenv("INSTRUCT_BENCH_CACHE", str(tmp_path / "cache"))
    task_catalog._cache_once.cache_clear()
    task_catalog._cached.cache_clear()
    assert task_catalog.catalog() == task_catalog.build()
    assert json.loads(task_catalog.catalog_path().read_text(encoding="utf-8")) == task_catalog.build(own_only=True)
    before = task_catalog.fingerprint()
    copy = shutil.copytree(task_catalog.TASKS_DIR, tmp_path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(task_catalog, "TASKS_DIR", copy)
    assert task_catalog.fingerprint() == before  # the same sources, wherever they lie
    (copy / "pet_clustering.py").write_text("# a new task file\n", encoding="utf-8")
    assert task_catalog.fingerprint() != before
    task_catalog._cache_once.cache_clear()
    task_catalog._cached.cache_clear()


@pytest.mark.slow
def test_a_rerun_that_reuses_every_task_imports_no_mteb_and_a_changed_key_recomputes(tmp_path):
    """A rerun decides "reused" from the first run's plan (bench/run/reuse.py), importing no MTEB; a run record
    whose resume key another setting wrote is not reused by it, but recomputed by the full run."""
    out = tmp_path / "out"
    args = ["run", "-t", "DemoInstructSTS", "--output-dir", str(out), "--cache-dir", str(tmp_path / "emb"), "-q"]
    env = {"INSTRUCT_BENCH_CACHE": str(tmp_path / "cache")}
    assert "mteb" in imported(*args, env=env)  # the first run computes, and keeps its plan
    assert imported(*args, env=env) == []
    [record] = out.glob("instruct-bench/results/*/*/run_records/DemoInstructSTS.json")
    data = json.loads(record.read_text(encoding="utf-8"))
    data["resume_key"]["seed"] = 7  # as a run with --seed 7 would have written it
    record.write_text(json.dumps(data), encoding="utf-8")
    assert "mteb" in imported(*args, env=env)  # recomputed
    assert json.loads(record.read_text(encoding="utf-8"))["resume_key"]["seed"] == 42


@pytest.mark.slow
def test_listing_tasks_and_suites_from_a_cached_catalogue_imports_no_mteb(tmp_path):
    env = {"INSTRUCT_BENCH_CACHE": str(tmp_path / "cache")}
    assert "mteb" in imported("list", "tasks", env=env)  # the first listing derives the catalogue
    assert imported("list", "tasks", env=env) == []
    assert imported("list", "suites", env=env) == []
