"""The descriptive statistics the package ships: where MTEB reads and writes them, and that they are MTEB's own.

bench/tasks/task_statistics.py gives every harness task a statistics path inside this package; the shipped files
(bench/tasks/descriptive_stats/<type>/<task>.json) are what MTEB's `calculate_descriptive_statistics` computes on
the task's local data, for the tasks whose local data provably is their pinned data.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import mteb
import pytest
from test_mteb_validators import NO_STATISTICS

from bench import tasks
from bench.tasks import task_statistics
from bench.tasks.task_statistics import STATS_DIR, provably_pinned
from conftest import ROOT

_spec = importlib.util.spec_from_file_location("descriptive_stats_tool", ROOT / "tools" / "descriptive_stats.py")
assert _spec is not None and _spec.loader is not None
descriptive_stats_tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(descriptive_stats_tool)

OWN = {n: c for n, c in tasks.TASKS.items() if mteb.get_task(n).__class__ is c}
DEMO = sorted(n for n, c in OWN.items() if c.packaged)
SENTEVAL = ["STSBenchmark-SentEval", "SICK-R-SentEval"]
MTEB_STATS_DIR = Path(mteb.__file__).parent / "descriptive_stats"


def _shipped(name: str) -> dict:
    meta = OWN[name].metadata
    return json.loads((STATS_DIR / str(meta.type) / f"{name}.json").read_text(encoding="utf-8"))


def _recomputed(name: str, monkeypatch, tmp_path: Path, data_dir: Path | None = None) -> tuple[dict, dict]:
    """MTEB's `calculate_descriptive_statistics` on the task's local data now, written under tmp_path."""
    monkeypatch.setattr(task_statistics, "STATS_DIR", tmp_path)
    task = OWN[name](data_dir=data_dir)
    assert task.metadata.descriptive_stats is None  # nothing cached there: MTEB computes
    returned = task.calculate_descriptive_statistics()
    written = json.loads(task.metadata.descriptive_stat_path.read_text(encoding="utf-8"))
    return returned, written


def test_every_harness_task_reads_and_writes_its_statistics_inside_the_package():
    for name, cls in OWN.items():
        path = mteb.get_task(name).metadata.descriptive_stat_path
        assert path == STATS_DIR / str(cls.metadata.type) / f"{name}.json", name
        assert MTEB_STATS_DIR not in path.parents, name  # never site-packages
    assert STATS_DIR == ROOT / "bench" / "tasks" / "descriptive_stats"


def test_tasks_under_mteb_names_keep_mtebs_statistics():
    sts12 = tasks.TASKS["STS12"]
    assert sts12.metadata.descriptive_stat_path.parent.parent == MTEB_STATS_DIR
    assert sts12.metadata.n_samples == mteb.get_task("STS12").metadata.n_samples is not None


def test_statistics_ship_for_exactly_the_provably_pinned_tasks():
    shipped = {p.stem for p in STATS_DIR.glob("*/*.json")}
    assert shipped == {n for n, c in OWN.items() if provably_pinned(c)} == {*DEMO, *SENTEVAL}
    assert len(DEMO) == 3


@pytest.mark.parametrize("name", DEMO)
def test_shipped_statistics_are_what_mteb_computes_on_the_local_data(name, monkeypatch, tmp_path):
    shipped = _shipped(name)
    returned, written = _recomputed(name, monkeypatch, tmp_path)
    assert returned == written == shipped


@pytest.mark.slow
@pytest.mark.parametrize("name", SENTEVAL)
def test_shipped_senteval_statistics_are_what_mteb_computes_on_the_build(name, raw_dir, monkeypatch, tmp_path):
    from bench.cli.main import main

    data = tmp_path / "data"
    assert main(["-q", "build-data", "sts-senteval", "--source-dir", str(raw_dir), "--out", str(data)]) == 0
    shipped = _shipped(name)
    returned, written = _recomputed(name, monkeypatch, tmp_path / "stats", data_dir=data)
    assert returned == written == shipped


@pytest.mark.parametrize("name", [*DEMO, *SENTEVAL])
def test_n_samples_comes_from_the_shipped_statistics(name):
    meta = mteb.get_task(name).metadata
    assert meta.descriptive_stats == _shipped(name)
    assert meta.n_samples == {split: s["num_samples"] for split, s in _shipped(name).items()}
    assert all(n > 0 for n in meta.n_samples.values()) and set(meta.n_samples) == set(meta.eval_splits)


def test_the_tool_regenerates_inside_the_package(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(task_statistics, "STATS_DIR", tmp_path)
    assert descriptive_stats_tool.main(["-t", "DemoInstructSTS"]) == 0
    assert json.loads((tmp_path / "STS" / "DemoInstructSTS.json").read_text()) == _shipped("DemoInstructSTS")
    assert "DemoInstructSTS" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["IntentEmotion", "RateMyProfClustering", "NoSuchTask"])
def test_the_tool_refuses_a_task_whose_data_is_not_provably_pinned(name, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(task_statistics, "STATS_DIR", tmp_path)
    assert descriptive_stats_tool.main(["-t", name]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and name in err
    assert not list(tmp_path.iterdir())


def test_docs_list_every_task_without_statistics():
    guide = (ROOT / "docs" / "guides" / "mteb.md").read_text(encoding="utf-8")
    rows = re.findall(r"^  \| ([A-Za-z, ]+) \| (.+) \|$", guide, flags=re.MULTILINE)
    listed = {name.strip() for names, _ in rows for name in names.split(",")} - {"Task"}
    assert listed == set(NO_STATISTICS)


def test_the_tool_answers_missing_local_data_in_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(task_statistics, "STATS_DIR", tmp_path)
    assert descriptive_stats_tool.main(["-t", "SICK-R-SentEval", "--data-dir", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "SICK-R-SentEval" in err
    assert not list(tmp_path.iterdir())
