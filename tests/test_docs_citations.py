"""Docs that cannot drift: every test, module and path a page cites exists.

A doc that names `tests/test_x.py::test_y` or `bench/core/z.py` makes a claim a reader will follow; when
the file or the test is renamed, the claim must fail here rather than send the reader nowhere. The core
layer's row of docs/design/layers.md lists its modules one by one, so every module of `bench/core` must be
named there.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from conftest import ROOT as REPO

DOC_FILES = sorted([REPO / "README.md", REPO / "CONTRIBUTING.md", *(REPO / "docs").rglob("*.md")])
SOURCE_FILES = sorted((REPO / "bench").rglob("*.py"))

# `tests/test_x.py`, optionally `::test_name` or `::Class::test_name`, optionally `[param]`.
TEST_CITATION = re.compile(r"(?<![\w/.])(tests/[\w/]+\.py)((?:::\w+)*)")
# `bench/a/b.py` or `bench/a/b/` (a package), not a cache folder such as `$INSTRUCT_BENCH_CACHE/gguf/`.
MODULE_CITATION = re.compile(r"(?<![\w/.$-])(bench/[\w/]+?(?:\.py|/))(?![\w])")
# A test named on its own, in backticks, after the file that holds it: `test_name`.
TEST_NAME = re.compile(r"`(test_\w+)")
# The guides that add a file cite the file they add; tests/test_guides.py applies them.
ADDING_GUIDES = ("add-a-",)


def _cited(files: list[Path], pattern: re.Pattern[str]) -> list[tuple[Path, tuple[str, ...]]]:
    found = []
    for path in files:
        for match in pattern.finditer(path.read_text(encoding="utf-8")):
            found.append((path, match.groups()))
    return found


@functools.cache  # a file is cited hundreds of times: parse each once
def _test_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
    return names


def _test_citations() -> list[tuple[Path, tuple[str, ...]]]:
    return _cited(DOC_FILES + SOURCE_FILES, TEST_CITATION)


def test_the_pages_cite_tests_at_all():
    """The check below must have something to check: the docs cite dozens of tests."""
    assert len({groups for _, groups in _test_citations()}) > 20


def test_every_cited_test_file_and_test_exists():
    missing = []
    for page, (file, names) in _test_citations():
        target = REPO / file
        if not target.is_file():
            missing.append(f"{page.relative_to(REPO)}: {file}")
            continue
        defined = _test_names(target)
        for name in [n for n in names.split("::") if n]:
            if name not in defined:
                missing.append(f"{page.relative_to(REPO)}: {file}::{name}")
    assert not missing, "cited but not there:\n" + "\n".join(sorted(set(missing)))


def test_every_test_named_by_itself_exists():
    """`tests/x.py`: `test_a`, `test_b` — the names after a cited file are tests somewhere in tests/."""
    defined = set().union(*(_test_names(p) for p in (REPO / "tests").rglob("*.py")))
    missing = sorted(
        {f"{page.relative_to(REPO)}: {name}" for page, (name,) in _cited(DOC_FILES, TEST_NAME) if name not in defined}
    )
    assert not missing, "named but not there:\n" + "\n".join(missing)


def test_every_cited_module_exists():
    missing = []
    pages = [p for p in DOC_FILES if not p.name.startswith(ADDING_GUIDES)]
    for page, (module,) in _cited(pages, MODULE_CITATION):
        if not (REPO / module).exists():
            missing.append(f"{page.relative_to(REPO)}: {module}")
    assert not missing, "cited but not there:\n" + "\n".join(sorted(set(missing)))


@pytest.mark.parametrize("layer", ["core"])
def test_layers_page_names_every_module_of_the_layers_it_lists(layer: str):
    page = (REPO / "docs" / "design" / "layers.md").read_text(encoding="utf-8")
    modules = sorted(p.name for p in (REPO / "bench" / layer).glob("*.py") if p.name != "__init__.py")
    unnamed = [m for m in modules if f"`{m}`" not in page and f"bench/{layer}/{m}" not in page]
    assert not unnamed, f"docs/design/layers.md does not name these modules of bench/{layer}: {unnamed}"


@pytest.mark.slow  # collects the whole suite in a process: about 20 s
def test_the_readmes_test_counts_are_the_collected_ones():
    """README's "About N tests ... M in the inner loop" are a measured count: within 10% of what pytest collects."""
    import subprocess
    import sys

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    stated = re.search(r"About ([\d,]+) tests.*?inner loop[^.]*?([\d,]+) tests", readme, re.S)
    assert stated, "README's Tests section no longer states the counts this test checks"
    total, inner = (int(n.replace(",", "")) for n in stated.groups())

    def collected(*marks: str) -> int:
        out = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *marks],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        found = re.search(r"(\d+)(?:/\d+)? tests? collected", out)
        assert found, out[-2000:]
        return int(found.group(1))

    for stated_count, measured in ((total, collected()), (inner, collected("-m", "not slow"))):
        assert abs(stated_count - measured) <= 0.1 * measured, (stated_count, measured)
