"""`bench run`'s parser takes its family flags from a cached table (`registry.run_flags`), so `bench run
--help` and parsing a run's arguments import no MTEB, torch, transformers or sentence-transformers once the
table for the families' files is cached; the table is the live families' flags, rebuilt when a file of the
package changes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

HEAVY = ("mteb", "torch", "transformers", "sentence_transformers")

# Runs `python -m bench ARGS...` (or, after --statement, a statement) and prints, last, the heavy modules it
# imported.
_DRIVER = """
import atexit, json, runpy, sys
atexit.register(lambda: sys.__stdout__.write("\\nIMPORTED " + json.dumps([m for m in {heavy!r} if m in sys.modules]) + "\\n"))
if sys.argv[1:2] == ["--statement"]:
    exec(sys.argv[2])
else:
    sys.argv = ["bench", *sys.argv[1:]]
    runpy.run_module("bench", run_name="__main__", alter_sys=True)
"""


def _bench(*args: str) -> tuple[str, list[str]]:
    """(stdout before the report, heavy modules imported) of a fresh `python -m bench ARGS`, which must exit 0."""
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER.format(heavy=HEAVY), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COLUMNS": "120"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out, _, report = proc.stdout.rpartition("\nIMPORTED ")
    return out, json.loads(report)


@pytest.fixture
def cached_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    """The flag table of the families' files in this session's cache (the first `bench run` writes it)."""
    from bench.adapters.registry import run_flags

    monkeypatch.setenv("COLUMNS", "120")
    run_flags()


def _live_run_help(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    """`bench run --help` from the imported families of the package (not the toy families of other tests)."""
    from bench.adapters import registry
    from bench.cli.main import main

    registry.discover()
    own = {f: c for f, c in registry.FAMILIES.items() if c.__module__.startswith("bench.adapters.")}
    monkeypatch.setattr(registry, "FAMILIES", own)
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    return capsys.readouterr().out


def test_run_help_imports_no_mteb_and_is_the_live_families_help(cached_flags, capsys, monkeypatch):
    out, heavy = _bench("run", "--help")
    assert heavy == []
    assert "--pooling V" in out and "--template V" in out
    assert out == _live_run_help(
        capsys, monkeypatch
    )  # every flag, help text and family tag as the imported families say


def test_parsing_a_run_with_family_flags_imports_no_mteb(cached_flags):
    statement = (
        "from bench.cli.main import build_parser\n"
        "from bench.cli.commands.run import model_spec_and_options\n"
        "args = build_parser(full_run=True).parse_args(['run', '-t', 'DemoInstructSTS', '--model', 'st:org/name',"
        " '--template', 'none', '--pooling', '1st-gen', '--batch-size', '8'])\n"
        "import json; print(json.dumps(model_spec_and_options(args)))"
    )
    out, heavy = _bench("--statement", statement)
    assert heavy == []
    assert json.loads(out) == ["st:org/name", {"template": "none", "pooling": "1st-gen", "batch_size": "8"}]


@pytest.fixture
def cold(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A fresh cache, and `run_flags` as a process that has not imported the families sees it (the families
    stay imported, so building the table costs nothing here)."""
    monkeypatch.setenv("INSTRUCT_BENCH_CACHE", str(tmp_path / "cache"))
    import bench.adapters.base  # noqa: F401 - imported, so that dropping its name below drops nothing else

    monkeypatch.delitem(sys.modules, "bench.adapters.base")
    from bench.adapters.registry import flags_path

    return flags_path()


def test_cold_start_builds_the_table_once_and_then_reads_it(cold):
    from bench.adapters.registry import FLAGS_FORMAT, cli_flags, run_flags

    assert not cold.exists()
    assert run_flags() == cli_flags(own_only=True)
    assert cold.exists()
    doctored = {"format": FLAGS_FORMAT, "flags": [["only_this", "read from the cache", "mteb"]]}
    cold.write_text(json.dumps(doctored), encoding="utf-8")
    assert run_flags() == {"only_this": ("read from the cache", "mteb")}


@pytest.mark.parametrize(
    "damage",
    ["not json", json.dumps({"format": 1, "flags": [["batch_size", 3, "mteb"]]}), json.dumps({"format": 0})],
    ids=["not-json", "bad-row", "other-format"],
)
def test_a_damaged_table_is_rebuilt(cold, damage):
    from bench.adapters.registry import cli_flags, run_flags

    cold.parent.mkdir(parents=True)
    cold.write_text(damage, encoding="utf-8")
    assert run_flags() == cli_flags(own_only=True)
    assert json.loads(cold.read_text(encoding="utf-8"))["flags"][0][0] == next(iter(cli_flags(own_only=True)))


def test_a_family_registered_outside_the_package_gets_its_flag_but_is_not_cached(monkeypatch, tmp_path):
    from bench.adapters.base import BaseEncoder
    from bench.adapters.registry import FAMILIES, flags_path, run_flags

    monkeypatch.setenv("INSTRUCT_BENCH_CACHE", str(tmp_path / "cache"))

    class Toy(BaseEncoder):
        family = "toy-flags-test"
        cli_flags = {"toy_width": "width of the toy family"}

        def __init__(self, path: str, *, toy_width: int = 3, **kwargs):
            super().__init__(**kwargs)

    try:
        assert run_flags()["toy_width"] == ("width of the toy family", "toy-flags-test")
        assert "toy_width" not in {row[0] for row in json.loads(flags_path().read_text(encoding="utf-8"))["flags"]}
    finally:
        del FAMILIES["toy-flags-test"]


def test_a_new_or_edited_family_file_changes_the_fingerprint(tmp_path):
    """A new family file, or an edit to one, keys another table (so it gets its flags with no second edit);
    compiled files do not."""
    from bench.adapters.registry import ADAPTERS_DIR, flags_fingerprint

    root = tmp_path / "adapters"
    root.mkdir()
    for name in ("base.py", "sentence_transformers.py"):
        shutil.copy(ADAPTERS_DIR / name, root / name)
    first = flags_fingerprint(root)
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "base.cpython-311.pyc").write_bytes(b"\0")
    assert flags_fingerprint(root) == first
    (root / "echo.py").write_text('class Echo(BaseEncoder):\n    family = "echo"\n', encoding="utf-8")
    added = flags_fingerprint(root)
    assert added != first
    with (root / "sentence_transformers.py").open("a", encoding="utf-8") as f:
        f.write("\n# edited\n")
    assert flags_fingerprint(root) not in (first, added)
