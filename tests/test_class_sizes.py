"""No class in `bench/` over 400 lines: a class that size holds several things, and the next change to one
of them has to read all of them (issue 41: BaseEncoder was 573 lines, GenerativeEncoder 461)."""

from __future__ import annotations

import ast

from conftest import ROOT

LIMIT = 400


def class_sizes() -> dict[str, int]:
    sizes = {}
    for path in sorted((ROOT / "bench").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                sizes[f"{path.relative_to(ROOT)}:{node.name}"] = node.end_lineno - node.lineno + 1
    return sizes


def test_the_sizes_are_measured():
    """The check below reads real classes: the encoder base class is among them."""
    assert any(name.endswith(":BaseEncoder") for name in class_sizes())


def test_no_class_is_over_the_limit():
    over = {name: size for name, size in class_sizes().items() if size > LIMIT}
    assert not over, f"classes over {LIMIT} lines (split them by what each part holds): {over}"
