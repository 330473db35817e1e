"""Where a test lives: `tests/<layer>/test_<module>[_<aspect>].py` for a module of `bench/<layer>/`, so that a
module's tests are found by its name; the top of tests/ holds only the checks of the whole tree."""

from __future__ import annotations

from conftest import ROOT

TESTS = ROOT / "tests"
# Checks of the whole tree (layers, docs, packaging, tiers): they test no one module.
WHOLE_TREE = {
    "test_any_density.py",
    "test_class_sizes.py",
    "test_docs.py",
    "test_docs_citations.py",
    "test_faults.py",
    "test_gpu_kit.py",
    "test_guides.py",
    "test_imports.py",
    "test_layers.py",
    "test_layout.py",
    "test_packaging.py",
    "test_tiers.py",
}


def test_each_test_folder_is_a_layer_of_bench():
    layers = {p.name for p in (ROOT / "bench").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and any(p.glob("test_*.py"))}
    assert folders and folders <= layers, f"test folders that are no layer of bench/: {sorted(folders - layers)}"


def test_only_whole_tree_checks_sit_at_the_top_of_tests():
    top = {p.name for p in TESTS.glob("test_*.py")}
    assert top == WHOLE_TREE, (
        f"move {sorted(top - WHOLE_TREE)} into tests/<layer>/ (the layer of the module they test), "
        f"or list a whole-tree check in WHOLE_TREE; missing: {sorted(WHOLE_TREE - top)}"
    )


def test_test_file_names_are_unique_across_folders():
    """pytest imports test files by their base name (no `__init__.py`): two of one name cannot both load."""
    names = [p.name for p in TESTS.glob("*/test_*.py")] + [p.name for p in TESTS.glob("test_*.py")]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})


def test_most_modules_have_tests_named_for_them():
    """A module's tests are found by its name: tests/<layer>/test_<module>*.py (the figure may only go up)."""
    modules = [
        p
        for p in (ROOT / "bench").rglob("*.py")
        if p.name != "__init__.py" and len(p.relative_to(ROOT / "bench").parts) > 1
    ]
    found = [p for p in modules if any((TESTS / p.relative_to(ROOT / "bench").parts[0]).glob(f"test_{p.stem}*.py"))]
    assert len(found) >= 73, f"{len(found)} of {len(modules)} modules have tests named for them"
