"""The layering is a test: import-linter's contracts (.importlinter) and no file circles (grimp).

A wrong import fails here with the broken contract's name; docs/design/layers.md says what each layer holds.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from conftest import ROOT

pytestmark = pytest.mark.registry  # the import contracts hold over every module, a new one included

PACKAGES = ("bench",)
CONTRACTS = {
    "Layers: each layer imports only the layers below it",
    "Core imports nothing of bench's other layers",
    "bench.tasks and bench.adapters never import each other",
    "bench.tasks and bench.adapters import only the core",
    "bench.leaderboard re-runs only through the run layer's verify entry point (bench.run.reproduce)",
}
_LINT = (
    "import sys; from importlinter.cli import lint_imports; "
    "sys.exit(lint_imports(config_filename='.importlinter', no_cache=True, no_logo=True))"
)


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    """import-linter over the packages found first at `root` (a copy's own, not the installed ones)."""
    return subprocess.run(
        [sys.executable, "-c", _LINT],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=1800,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin", "COLUMNS": "400"},
    )


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.find_modules_directly_imported_by(v)):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while (w := stack.pop()) != v:
                component.append(w)
            if component:
                found.append(sorted([v, *component]))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def _copy(tmp_path: Path) -> Path:
    for name in PACKAGES:
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "*.csv", "*.jsonl"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    return tmp_path


def test_the_import_contracts_hold():
    proc = lint(ROOT)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    kept = {
        line.rsplit(" KEPT", 1)[0].strip() for line in proc.stdout.replace("\n(", " (").splitlines() if " KEPT" in line
    }
    assert kept >= CONTRACTS, f"contracts not checked: {CONTRACTS - kept}"


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("bench/core/errors.py", "import bench.adapters.registry", "Core imports nothing of bench's other layers"),
        (
            "bench/tasks/metrics.py",
            "import bench.adapters.options",
            "bench.tasks and bench.adapters never import each other",
        ),
        (
            "bench/leaderboard/table.py",
            "import bench.run.runner",
            "bench.leaderboard re-runs only through the run layer's",
        ),
        ("bench/results/summary.py", "import bench.cli.main", "Layers: each layer imports only the layers below it"),
    ],
    ids=["core-up", "task-adapter", "leaderboard-run", "results-cli"],
)
def test_a_wrong_import_fails_with_the_rules_name(tmp_path, module, line, contract):
    root = _copy(tmp_path)
    path = root / module
    path.write_text(path.read_text() + f"\n{line}  # planted by the test\n")
    proc = lint(root)
    assert proc.returncode != 0
    assert f"{contract}" in proc.stdout and "BROKEN" in proc.stdout, proc.stdout[-4000:]


def test_no_file_imports_another_that_imports_it_back():
    graph = grimp.build_graph(*PACKAGES, include_external_packages=False)
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_circle():
    graph = grimp.ImportGraph()
    for a, b in [("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d"), ("p.e", "p.e2")]:
        graph.add_import(importer=a, imported=b)
    assert cycles(graph) == [["p.a", "p.b", "p.c"]]
