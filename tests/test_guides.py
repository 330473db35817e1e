"""The extension guides hold: a task, a model family or a metric added exactly as its guide says is one
file, a leaderboard column one entry.

Each guide under docs/guides/ that says "Save the class ... in `bench/....py`" shows that class in a
python block. This test takes the class and the imports it uses (nothing else of the block), writes it
where the guide says in a copy of the working tree, and runs there every test that enumerates the
registered tasks, suites, families, metrics or CSV columns (marker `registry`) and the import contracts:
the suite stays green with no second edit. A guide that says "Add the column, as the block writes it, at
the end of `COLUMNS` in `bench/....py`" has its block's `CsvColumn(...)` appended to that tuple in the same
copy. (test_docs.py runs the blocks themselves.)
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from helpers import copy_working_tree

SAVE_AS = re.compile(r"Save the class, with the imports it uses, in `(?P<path>bench/[\w/]+\.py)`")
ADD_COLUMN = re.compile(
    r"Add the column, as the block writes it, at the end of `COLUMNS` in `(?P<path>bench/[\w/]+\.py)`"
)
PYTHON_BLOCK = re.compile(r"^```python\n(?P<code>.*?)^```$", re.MULTILINE | re.DOTALL)


def guides() -> list[Path]:
    return sorted(p for p in (ROOT / "docs" / "guides").glob("*.md") if SAVE_AS.search(p.read_text("utf-8")))


def column_guides() -> list[Path]:
    return sorted(p for p in (ROOT / "docs" / "guides").glob("*.md") if ADD_COLUMN.search(p.read_text("utf-8")))


def column_entry(code: str) -> str:
    """The block's `CsvColumn(...)` call, as an entry of the COLUMNS tuple (indented, with its comma)."""
    tree = ast.parse(code)
    call = next(
        n.value
        for n in tree.body
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and ast.unparse(n.value.func) == "CsvColumn"
    )
    text = ast.get_source_segment(code, call) or ""
    return "".join(f"    {line}\n" if line else "\n" for line in f"{text},".splitlines())


def add_column(path: Path, entry: str) -> None:
    """Append `entry` to the COLUMNS tuple of `path` (the tuple closes with a `)` line before CSV_COLUMNS)."""
    text = path.read_text(encoding="utf-8")
    end = "\n)\nCSV_COLUMNS = "
    assert text.count(end) == 1, f"{path}: COLUMNS no longer ends right before CSV_COLUMNS"
    path.write_text(text.replace(end, "\n" + entry.rstrip("\n") + end), encoding="utf-8")


def class_file(code: str) -> str:
    """The block's class definitions with the imports they use, as a module (the block's other
    statements, which try the class out, left behind)."""
    tree = ast.parse(code)
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    used = {n.id for c in classes for n in ast.walk(c) if isinstance(n, ast.Name)}
    lines = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            lines.append(ast.unparse(node))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a for a in node.names if (a.asname or a.name).split(".")[0] in used]
            if names:
                node.names = names
                lines.append(ast.unparse(node))
    body = [ast.get_source_segment(code, c) for c in classes]
    return "\n".join(lines) + "\n\n\n" + "\n\n\n".join(b for b in body if b) + "\n"


def test_the_guides_are_found():
    assert {p.name for p in guides()} == {"add-a-task.md", "add-a-model-family.md", "add-a-metric.md"}
    assert {p.name for p in column_guides()} == {"add-a-leaderboard-column.md"}


def test_column_entry_is_the_call_as_a_tuple_entry(tmp_path: Path):
    code = (
        'from x import CsvColumn\n\ncolumn = CsvColumn(\n    "dtype",\n    submitted=lambda s: 1,\n)\n\nprint(column)\n'
    )
    assert column_entry(code) == '    CsvColumn(\n        "dtype",\n        submitted=lambda s: 1,\n    ),\n'
    module = tmp_path / "m.py"
    module.write_text("COLUMNS = (\n    A,\n)\nCSV_COLUMNS = 1\n", encoding="utf-8")
    add_column(module, "    B,\n")
    assert module.read_text(encoding="utf-8") == "COLUMNS = (\n    A,\n    B,\n)\nCSV_COLUMNS = 1\n"


def test_class_file_keeps_the_class_and_the_imports_it_uses():
    code = "import os\nimport zlib\nfrom a import B, C\n\n\nclass X(B):\n    n = zlib.crc32(b'')\n\n\nprint(X())\n"
    assert class_file(code) == "import zlib\nfrom a import B\n\n\nclass X(B):\n    n = zlib.crc32(b'')\n"


@pytest.mark.slow  # a pytest session in a copy of the tree
def test_the_guides_applied_to_a_copy_leave_the_suite_green(tmp_path: Path):
    """Every guide at once, in one copy (one run of the registry tests, not two); a failure names the files."""
    work = copy_working_tree(tmp_path / "repo")
    added: dict[str, tuple[str, str]] = {}  # file -> (name it registers, `bench list` what)
    for guide in guides():
        text = guide.read_text(encoding="utf-8")
        target = SAVE_AS.search(text).group("path")
        block = next(m.group("code") for m in PYTHON_BLOCK.finditer(text) if "\nclass " in m.group("code"))
        assert not (work / target).exists(), f"{target} exists already"
        (work / target).write_text(class_file(block), encoding="utf-8")
        name = re.search(r'^    (?:family = |    name=)"([^"]+)"', block, re.MULTILINE).group(1)
        added[target] = (name, "models" if target.startswith("bench/adapters/") else "tasks")
    columns: dict[str, str] = {}  # file -> the header of the column added to its COLUMNS
    for guide in column_guides():
        text = guide.read_text(encoding="utf-8")
        target = ADD_COLUMN.search(text).group("path")
        block = next(m.group("code") for m in PYTHON_BLOCK.finditer(text) if "CsvColumn(" in m.group("code"))
        entry = column_entry(block)
        add_column(work / target, entry)
        columns[target] = re.search(r'CsvColumn\(\s*"([^"]+)"', entry).group(1)
    env = {**os.environ, "PYTHONPATH": str(work), "INSTRUCT_BENCH_CACHE": str(tmp_path / "cache"), "COLUMNS": "200"}
    env.pop("PYTEST_CURRENT_TEST", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-m", "registry", "tests"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    assert proc.returncode == 0, (
        f"with {sorted(added)} added and {columns} in COLUMNS as the guides say:\n{proc.stdout[-6000:]}{proc.stderr[-2000:]}"
    )
    assert " passed" in summary and "deselected" in summary, summary
    for target, (name, what) in added.items():  # and each new file is what the harness now lists
        listed = subprocess.run(
            [sys.executable, "-m", "bench", "list", what], cwd=work, env=env, capture_output=True, text=True, check=True
        )
        assert name in listed.stdout, (target, listed.stdout[-3000:])
    for target, header in columns.items():  # and the CSV now has the column
        found = subprocess.run(
            [sys.executable, "-c", "from bench.leaderboard.exports import CSV_COLUMNS; print(CSV_COLUMNS)"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        assert repr(header) in found.stdout, (target, found.stdout)
