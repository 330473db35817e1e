"""A leaderboard build imports neither MTEB nor the task classes once its caches are warm.

Importing MTEB cost every build ~300 MB and seconds, for facts that change only with the task files or
MTEB's version: the task catalogue (bench/results/task_catalog.py, task_facts.py) and MTEB's model facts
(bench/results/model_catalog.py) keep them, keyed so that they are never stale. Each build here runs in
a fresh process, so what it imported is what the build itself needs.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.core.fileio import read_cached
from bench.results import model_catalog, task_catalog
from conftest import ROOT

HEAVY = ("mteb", "bench.tasks", "torch")

# Builds the site for the results folder argv[1] into argv[2] and prints, last, which of HEAVY it imported.
_DRIVER = f"""
import json, sys
from pathlib import Path
from bench.leaderboard.site import build
build([Path(sys.argv[1])], Path(sys.argv[2]))
print("IMPORTED " + json.dumps([m for m in {HEAVY!r} if m in sys.modules]))
"""


def _build(results: Path, site: Path, cache: Path) -> list[str]:
    """The heavy modules a fresh process imported to build `site` from `results`, under the cache `cache`."""
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER, str(results), str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
        env={**os.environ, "INSTRUCT_BENCH_CACHE": str(cache)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = [x for x in proc.stdout.splitlines() if x.startswith("IMPORTED ")][-1]
    imported: list[str] = json.loads(line.removeprefix("IMPORTED "))
    return imported


def _board(site: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    data.pop("generated_at")
    return data


@pytest.fixture
def fresh_catalogues(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty cache root, and the in-process catalogues forgotten before and after the test."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("INSTRUCT_BENCH_CACHE", str(cache))
    forget = (task_catalog._cache_once, task_catalog._cached, model_catalog.registry_facts)
    for cached in forget:
        cached.cache_clear()
    yield cache
    for cached in forget:
        cached.cache_clear()


def test_a_build_with_warm_caches_imports_no_mteb_and_builds_the_same_board(demo_results, tmp_path):
    cache = tmp_path / "cache"
    assert "mteb" in _build(demo_results, tmp_path / "cold", cache)  # the first build derives and caches
    assert sorted(p.name.split("-")[0] for p in (cache / "catalog").iterdir()) == ["mteb", "tasks"]
    assert _build(demo_results, tmp_path / "warm", cache) == []
    board = _board(tmp_path / "warm")
    assert board == _board(tmp_path / "cold")
    assert board["accepted"] and not board["rejected"]
    model = board["models"][0]
    assert model["embed_dim"] == 384 and model["license"] == "apache-2.0"  # MTEB's facts, from the cache


def test_the_catalogue_key_covers_every_file_under_bench_tasks(tmp_path, monkeypatch):
    """Instruction hashes and packaged-data revisions depend on the data and YAML files beside the sources:
    an edit to any file under bench/tasks makes another key; compiled files do not."""
    copy = shutil.copytree(task_catalog.TASKS_DIR, tmp_path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(task_catalog, "TASKS_DIR", copy)
    seen = {task_catalog.fingerprint()}
    (copy / "__pycache__").mkdir()
    (copy / "__pycache__" / "demo.cpython-311.pyc").write_bytes(b"compiled")
    assert task_catalog.fingerprint() in seen
    data_file = next(p for p in sorted((copy / "demo_data").rglob("*")) if p.suffix in (".csv", ".jsonl"))
    edits = [
        copy / "instruction_variants" / "demo.yaml",
        data_file,
        copy / "demo_data" / "NEW.md",
        copy / "new_task.py",
    ]
    for path in edits:
        with path.open("a", encoding="utf-8") as f:
            f.write("\n# edited\n")
        key = task_catalog.fingerprint()
        assert key not in seen, path.relative_to(copy)
        seen.add(key)


def test_a_catalogue_of_another_layout_is_rebuilt_not_misread(fresh_catalogues):
    path = task_catalog.catalog_path()
    path.parent.mkdir(parents=True)
    old = {"suites": {"demo": ["DemoInstructSTS"]}, "tasks": {"DemoInstructSTS": {"main_score": "x"}}}
    path.write_text(json.dumps(old), encoding="utf-8")  # the layout before FORMAT: no revisions, no subsets
    assert task_catalog._cached() == task_catalog.build(own_only=True)
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["format"] == task_catalog.FORMAT
    assert set(written["tasks"]["DemoInstructSTS"]) >= {"revisions", "instructions_sha256", "subsets", "version"}


def test_mtebs_model_facts_are_cached_once_per_mteb_version(fresh_catalogues):
    facts = model_catalog.registry_facts()
    minilm = facts["sentence-transformers/all-MiniLM-L6-v2"]
    assert set(minilm) == set(model_catalog.FIELDS) and minilm["embed_dim"] == 384
    path = model_catalog.catalog_path()
    assert path.parent == fresh_catalogues / "catalog" and path.name.startswith("mteb-models-")
    assert read_cached(path, model_catalog.FORMAT) == {"format": model_catalog.FORMAT, "models": facts}
    path.write_text(json.dumps({"models": {}}), encoding="utf-8")  # another layout: rebuilt, not read as "none"
    model_catalog.registry_facts.cache_clear()
    assert model_catalog.registry_facts() == facts


@pytest.mark.parametrize(
    ("value", "kept"),
    [
        (256, 256),
        (256.0, 256.0),
        (math.inf, None),
        (math.nan, None),
        ("mit", "mit"),
        (None, None),
        (True, True),
        (datetime.date(2024, 1, 1), None),
        ([384, 768], None),
    ],
)
def test_model_facts_keep_what_json_holds_exactly(value, kept):
    """What JSON cannot hold becomes None, which the leaderboard reads as unknown, as it read those values."""
    found = model_catalog._plain(value)
    assert found == kept and type(found) is type(kept)


@pytest.mark.slow  # a real run of MiniLM
def test_the_first_build_after_a_run_imports_no_mteb(tmp_path):
    """`bench run` has MTEB imported anyway, so it leaves both caches behind: the leaderboard build that
    follows it under the same cache root starts warm."""
    cache, results = tmp_path / "cache", tmp_path / "results"
    run = subprocess.run(
        [sys.executable, "-m", "bench", "run", "-q", "-t", "DemoInstructSTS", "--output-dir", str(results)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
        env={**os.environ, "INSTRUCT_BENCH_CACHE": str(cache)},
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert _build(results, tmp_path / "site", cache) == []
