"""Plugins (bench/core/plugins.py): tasks and model families from the user's own code, through entry points
(`instruct_bench.tasks`, `instruct_bench.families`) or `--include-path DIR`, registered, listed, cached and
run like the built-in ones; a broken or clashing plugin is one error line."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import site
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.cli.main import main
from bench.core import plugins
from conftest import ROOT

TASK_SOURCE = '''
"""A plugin task: pet notes clustered by animal and by mood."""

from mteb import TaskMetadata

from bench.tasks._common import common_metadata
from bench.tasks.abstasks import AbsTaskMultiAspectClustering


class PetClustering(AbsTaskMultiAspectClustering):
    """Pet notes clustered by animal and by mood: one file per aspect, columns text,cluster."""

    aspects = {"animal": "Which animal is this about?", "mood": "How does the owner feel?"}
    metadata = TaskMetadata(
        name="PetClustering",
        description="Short notes about pets, clustered by animal and by the owner's mood.",
        dataset={"path": "my-org/PetClustering", "revision": "v1"},
        type="Clustering",
        main_score="hmean_v_measure",
        domains=["Written"],
        license="cc0-1.0",
        annotations_creators="expert-annotated",
        sample_creation="created",
        **common_metadata(reference=None, bibtex_citation=""),
    )
'''

FAMILY_SOURCE = '''
"""A plugin family: a bag of hashed words, no weights."""

import zlib

import numpy as np

from bench.adapters.base import BaseEncoder


class PetHashEncoder(BaseEncoder):
    """Bag of hashed words of the instruction and the text (a plugin family)."""

    family = "pethash"
    cli_flags = {"pet_dim": "length of the pethash vectors"}

    def __init__(self, model_path, *, name=None, revision=None, pet_dim: int = 64, **kwargs):
        self.pet_dim = pet_dim
        super().__init__(name=name or f"local/{model_path}", revision=revision or "v1", **kwargs)

    def _load(self):
        pass

    def render(self, text, instruction, prompt_type):
        return [instruction or "", text]

    def _encode_group(self, inputs, batch_size):
        out = np.zeros((len(inputs), self.pet_dim), dtype=np.float32)
        for row, (instruction, text) in enumerate(inputs):
            for word in f"{instruction} {text}".lower().split():
                out[row, zlib.crc32(word.encode()) % self.pet_dim] += 1.0
        return out
'''

NOTES = [  # (text, animal, mood)
    ("The cat purred on my lap all evening.", "cat", "happy"),
    ("Our kitten chased a sunbeam and made us laugh.", "cat", "happy"),
    ("The cat scratched the new sofa to shreds.", "cat", "annoyed"),
    ("The cat knocked my coffee off the desk again.", "cat", "annoyed"),
    ("The dog fetched the ball a hundred times, tail wagging.", "dog", "happy"),
    ("Our puppy learned to sit on the first try.", "dog", "happy"),
    ("The dog barked at the mailman for an hour.", "dog", "annoyed"),
    ("The dog dug up the tulips I had just planted.", "dog", "annoyed"),
]


def write_pet_data(root: Path) -> Path:
    """A `--data-dir` holding PetClustering's two aspect files."""
    folder = root / "PetClustering"
    folder.mkdir(parents=True)
    for aspect, column in (("animal", 1), ("mood", 2)):
        with open(folder / f"{aspect}.csv", "w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows([("text", "cluster"), *((n[0], n[column]) for n in NOTES)])
    return root


@pytest.fixture
def registries(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The task and family registries (the harness's and MTEB's) and the plugin state as they were before the
    test: a plugin registered here must not be seen by another test."""
    import bench.tasks  # noqa: F401 - the built-in tasks registered before the snapshot
    from bench.adapters import families, registry
    from bench.tasks import mteb_compat
    from bench.tasks import registry as task_registry

    registry.discover()
    dicts = [
        task_registry.TASKS,
        task_registry.SUITES,
        task_registry.SUITE_DESCRIPTIONS,
        task_registry._ORDER,
        mteb_compat.mteb_registry(),
        families.FAMILIES,
        families.FAMILY_ALIASES,
    ]
    saved = [dict(d) for d in dicts]
    task_list = mteb_compat.mteb_task_list()
    modules = set(sys.modules)
    monkeypatch.setattr(plugins, "_include_paths", [])
    monkeypatch.setattr(plugins, "_loaded", set())
    monkeypatch.setattr(plugins, "_plugin_modules", {})
    _forget_entry_points()
    yield
    for d, before in zip(dicts, saved, strict=True):
        d.clear()
        d.update(before)
    mteb_compat._get_tasks_module().TASK_LIST = task_list
    for name in set(sys.modules) - modules:
        if name.startswith(("bench_include_", "plugdemo")):
            del sys.modules[name]
    _forget_entry_points()


def _forget_entry_points() -> None:
    for cached in (plugins._all_entry_points, plugins._packages, plugins._installed):
        cached.cache_clear()


@pytest.fixture
def include_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "pet_tasks.py").write_text(TASK_SOURCE, encoding="utf-8")
    (folder / "pet_family.py").write_text(FAMILY_SOURCE, encoding="utf-8")
    (folder / "_helper.py").write_text("raise RuntimeError('a private file is not a plugin')\n", encoding="utf-8")
    return folder


def _result_files(out: Path) -> list[Path]:
    """PetClustering's MTEB result files under a run's output folder (not its run record)."""
    return [p for p in out.rglob("PetClustering.json") if p.parent.name != "run_records"]


def _bench(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------------------------------- --include-path
def test_include_path_tasks_and_families_are_listed(registries, include_dir, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = _bench(capsys, "list", "tasks", "--include-path", str(include_dir))
    assert code == 0, err
    assert "PetClustering" in out and "my-org/PetClustering" in out and "DemoInstructSTS" in out
    code, out, err = _bench(capsys, "list", "models", "--include-path", str(include_dir))
    assert code == 0, err
    assert "pethash:" in out and "pet_dim=64" in out and "Bag of hashed words" in out


def test_a_plugin_task_joins_the_suites_it_names_but_not_all(registries, include_dir):
    """An installed plugin must not change a built-in suite's average: its task is in no suite by default."""
    from bench.tasks import SUITES, TASKS, task_names
    from bench.tasks.registry import declare_suite

    (include_dir / "pet_tasks.py").write_text(
        TASK_SOURCE.replace(
            "    aspects =",
            '    suites = ("pets",)\n    aspects =',
        ).replace(
            "class PetClustering",
            'from bench.tasks.registry import declare_suite\n\ndeclare_suite("pets", "my pets")\n\n\nclass PetClustering',
        ),
        encoding="utf-8",
    )
    all_before = SUITES["all"]
    plugins.set_include_paths([include_dir])
    assert task_names(suite="pets") == ["PetClustering"] and "PetClustering" in TASKS
    assert SUITES["all"] == all_before
    declare_suite("pets", "my pets")  # the same declaration again is no conflict


def test_include_path_task_and_family_run_and_their_results_read(registries, include_dir, tmp_path, capsys):
    data = write_pet_data(tmp_path / "data")
    out_dir = tmp_path / "out"
    code, out, err = _bench(
        capsys,
        "run",
        "--include-path",
        str(include_dir),
        "-t",
        "PetClustering",
        "--model",
        "pethash:toy",
        "--pet-dim",  # the plugin family's own flag (its `cli_flags`)
        "32",
        "--data-dir",
        str(data),
        "--output-dir",
        str(out_dir),
        "--cache-dir",
        str(tmp_path / "emb"),
        "-q",
    )
    assert code == 0, err
    [result] = _result_files(out_dir)
    assert "family_pethash__pet_dim_32" in result.as_posix()
    scores = json.loads(result.read_text(encoding="utf-8"))["scores"]["test"][0]
    assert 0 <= scores["hmean_v_measure"] <= 1
    code, out, err = _bench(capsys, "results", str(out_dir), "--include-path", str(include_dir))
    assert code == 0, err
    assert "PetClustering" in out


def test_the_catalogues_cover_the_include_path_and_change_with_its_files(registries, include_dir):
    """The cached task catalogue and flag table of a run with an include path hold its task and family (a
    later process reads them without importing anything), under a key of their own, which an edit to a file
    of the folder changes; with no plugin the keys are those of the built-ins alone."""
    from bench.adapters import registry
    from bench.results import task_catalog

    plain = (task_catalog.catalog_path(), registry.flags_path())
    plugins.set_include_paths([include_dir])
    keyed = (task_catalog.catalog_path(), registry.flags_path())
    assert keyed[0] != plain[0] and keyed[1] != plain[1]

    assert "PetClustering" in task_catalog.catalog()["tasks"]
    assert "PetClustering" in json.loads(keyed[0].read_text(encoding="utf-8"))["tasks"]
    assert registry.run_flags()["pet_dim"] == ("length of the pethash vectors", "pethash")
    table = json.loads(keyed[1].read_text(encoding="utf-8"))
    assert table["families"]["pethash"] == "pethash" and "pet_dim" in {row[0] for row in table["flags"]}

    with (include_dir / "pet_tasks.py").open("a", encoding="utf-8") as f:
        f.write("\n# edited\n")
    assert task_catalog.catalog_path() not in (keyed[0], plain[0])
    assert registry.flags_path() not in (keyed[1], plain[1])
    plugins.set_include_paths([])
    assert (task_catalog.catalog_path(), registry.flags_path()) == plain


def test_a_plugin_that_fails_to_import_is_one_error_line(registries, tmp_path, capsys):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "needs_more.py").write_text("import not_installed_anywhere_xyz\n", encoding="utf-8")
    code, out, err = _bench(capsys, "list", "tasks", "--include-path", str(folder))
    assert code == 2 and out == ""
    [line] = err.splitlines()
    assert line.startswith(f"error: --include-path file {folder / 'needs_more.py'} cannot be imported: ")
    assert "ModuleNotFoundError: No module named 'not_installed_anywhere_xyz'" in line


def test_with_verbose_a_failing_plugin_shows_its_own_traceback_before_the_line(registries, tmp_path, capsys):
    """`-v`: the plugin's exception keeps its traceback (where in the user's file it failed), then the one line."""
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "divides.py").write_text("x = 1\ny = x / 0\n", encoding="utf-8")
    code, _, err = _bench(capsys, "list", "tasks", "-v", "--include-path", str(folder))
    assert code == 2
    assert "Traceback (most recent call last)" in err and 'divides.py", line 2' in err
    assert err.rstrip().splitlines()[-1].startswith("error: --include-path file ")
    code, _, quiet = _bench(capsys, "list", "tasks", "--include-path", str(folder))
    assert code == 2 and len(quiet.splitlines()) == 1 and "Traceback" not in quiet


def test_a_plugin_that_fails_in_bench_run_is_one_error_line(registries, tmp_path, capsys):
    """`bench run` imports the family plugins to build its flags, before its command runs: the same one line."""
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "typo.py").write_text("def broken(:\n", encoding="utf-8")
    code, _, err = _bench(capsys, "run", "-t", "DemoInstructSTS", "--include-path", str(folder), "--dry-run")
    assert code == 2
    [line] = err.splitlines()
    assert line.startswith("error: --include-path file ") and "typo.py cannot be imported: SyntaxError" in line


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            TASK_SOURCE.replace('name="PetClustering"', 'name="DemoInstructSTS"'),
            "Duplicate task name 'DemoInstructSTS'",
        ),
        (FAMILY_SOURCE.replace('family = "pethash"', 'family = "st"'), "Duplicate model family 'st'"),
    ],
    ids=["task", "family"],
)
def test_a_plugin_name_that_clashes_with_a_builtin_is_refused(registries, tmp_path, capsys, source, message):
    folder = tmp_path / "clash"
    folder.mkdir()
    (folder / "impostor.py").write_text(source, encoding="utf-8")
    code, _, err = _bench(capsys, "list", "models", "--include-path", str(folder))
    assert code == 2
    [line] = err.splitlines()
    assert line.startswith(f"error: --include-path file {folder / 'impostor.py'} cannot be loaded: {message}")


def test_an_include_path_that_is_no_folder_is_one_error_line(registries, tmp_path, capsys):
    code, _, err = _bench(capsys, "results", str(tmp_path), "--include-path", str(tmp_path / "nowhere"))
    assert code == 2
    expected = (
        f"error: --include-path {tmp_path / 'nowhere'} does not exist; give a folder whose .py files define "
        "tasks or model families."
    )
    assert err.splitlines() == [expected]


# ------------------------------------------------------------------------------------------- entry points
def _installed_plugin(site_dir: Path, version: str) -> None:
    """A distribution `plugdemo` on `site_dir`, as pip leaves one: its package and its dist-info with
    entry points in both groups."""
    package = site_dir / "plugdemo"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "tasks.py").write_text(TASK_SOURCE, encoding="utf-8")
    (package / "families.py").write_text(FAMILY_SOURCE, encoding="utf-8")
    for old in site_dir.glob("plugdemo-*.dist-info"):
        for f in old.iterdir():
            f.unlink()
        old.rmdir()
    info = site_dir / f"plugdemo-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: plugdemo\nVersion: {version}\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[instruct_bench.tasks]\npets = plugdemo.tasks\n\n[instruct_bench.families]\npethash = plugdemo.families\n",
        encoding="utf-8",
    )


def test_entry_point_plugins_register_and_key_the_catalogues(registries, tmp_path, monkeypatch):
    from bench.adapters.registry import FAMILIES, family_name
    from bench.tasks import TASKS, get_tasks

    site_dir = tmp_path / "site"
    _installed_plugin(site_dir, "0.1")
    before = plugins.fingerprint()
    monkeypatch.syspath_prepend(str(site_dir))
    _forget_entry_points()
    first = plugins.fingerprint()
    assert before == "" and first != ""

    [task] = get_tasks(["PetClustering"], data_dir=write_pet_data(tmp_path / "data"))  # imports the task plugins
    assert type(task) is TASKS["PetClustering"] and task.data_source == "local:data"
    assert TASKS["PetClustering"].__module__ == "plugdemo.tasks" and plugins.is_plugin_module("plugdemo.tasks")
    assert FAMILIES[family_name("pethash")].__module__ == "plugdemo.families"  # the lookup imports the families

    _installed_plugin(site_dir, "0.2")  # an upgrade keys other catalogues
    _forget_entry_points()
    assert plugins.fingerprint() not in (first, "")


def test_an_entry_point_that_fails_names_the_plugin_and_its_distribution(registries, tmp_path, monkeypatch):
    site_dir = tmp_path / "site"
    _installed_plugin(site_dir, "0.1")
    (site_dir / "plugdemo" / "tasks.py").write_text("raise ValueError('no data for you')\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(site_dir))
    _forget_entry_points()
    from bench.tasks import task_names

    for _ in range(2):  # not only the first lookup: each one fails the same way
        with pytest.raises(plugins.PluginError) as caught:
            task_names(tasks=["DemoInstructSTS"])
        assert str(caught.value) == (
            "plugin 'pets' (instruct_bench.tasks entry point plugdemo.tasks of plugdemo 0.1) cannot be imported: "
            "ValueError: no data for you; fix it or uninstall plugdemo."
        )


# ------------------------------------------------------------------------------------------- a real install
PYPROJECT = """
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "petplugin"
version = "0.1.0"
description = "A tiny instruct-bench plugin: one task, one model family"

[project.entry-points."instruct_bench.tasks"]
pets = "petplugin.tasks"

[project.entry-points."instruct_bench.families"]
pethash = "petplugin.families"

[tool.setuptools]
packages = ["petplugin"]
"""


@pytest.mark.slow
def test_a_plugin_package_installed_in_a_fresh_venv_is_listed_and_runs(tmp_path):
    """pip installs a tiny plugin package into a new venv (no download: `--no-deps --no-build-isolation`, the
    venv sees this interpreter's packages); there `bench list` shows its task and family and `bench run`
    runs them, with nothing passed on the command line but their names."""
    project = tmp_path / "petplugin"
    (project / "petplugin").mkdir(parents=True)
    (project / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (project / "petplugin" / "__init__.py").write_text('"""A tiny instruct-bench plugin."""\n', encoding="utf-8")
    (project / "petplugin" / "tasks.py").write_text(TASK_SOURCE, encoding="utf-8")
    (project / "petplugin" / "families.py").write_text(FAMILY_SOURCE, encoding="utf-8")

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    [venv_site] = venv.glob("lib/python*/site-packages")
    # On top of this interpreter: when it is itself a venv, --system-site-packages reaches only its base Python,
    # so its own site-packages (pip, setuptools, MTEB, torch ...) are added by a .pth file.
    (venv_site / "_parent.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),  # the bench under test
        "INSTRUCT_BENCH_CACHE": str(tmp_path / "cache"),
        "HF_HUB_OFFLINE": "1",
        "COLUMNS": "200",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }

    def run(*args: str) -> str:
        proc = subprocess.run(
            [str(python), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800, check=False
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stdout

    run("-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index", str(project))
    assert run("-c", "import petplugin, sys; print(petplugin.__file__)").startswith(str(venv_site))
    assert importlib.util.find_spec("petplugin") is None  # installed in the venv only

    tasks = run("-m", "bench", "list", "tasks")
    assert "PetClustering" in tasks and "my-org/PetClustering" in tasks
    assert "pethash:" in run("-m", "bench", "list", "models")
    data = write_pet_data(tmp_path / "data")
    out = tmp_path / "out"
    run(
        "-m",
        "bench",
        "run",
        "-t",
        "PetClustering",
        "--model",
        "pethash:toy",
        "--pet-dim",
        "32",
        "--data-dir",
        str(data),
        "--output-dir",
        str(out),
        "-q",
    )
    [result] = _result_files(out)
    assert "family_pethash__pet_dim_32" in result.as_posix()
