"""How often `Any` appears in bench/, per 1,000 code lines, per layer and for the whole package.

    python tools/any_density.py [PACKAGE_DIR]

Issue 41 set the goal at 25 or fewer per 1,000 code lines (MTEB and sentence-transformers: 12-14):
an `Any` at an internal boundary hides what a caller must pass, so mypy cannot check it.
tests/test_any_density.py holds each layer at the figure it has reached, so it can only go down.

What counts, read with `tokenize` so that strings and comments never do:
- an `Any` is a NAME token spelled `Any` (`typing.Any`, `Any` in an annotation or an import);
- a code line is a line holding at least one NAME or OP token (docstrings, comments and blank
  lines are not code lines).
A layer is a sub-package of bench/ (`bench/run`, `bench/core`, ...); modules at the top of
bench/ (`__init__.py`, `__main__.py`) form the layer `bench`.
"""

from __future__ import annotations

import io
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "bench"
WHOLE = "(whole package)"


@dataclass(frozen=True)
class Count:
    """`Any` tokens and code lines of some files; `per_1000` is the figure the issue sets a goal on."""

    anys: int = 0
    code_lines: int = 0

    def __add__(self, other: Count) -> Count:
        return Count(self.anys + other.anys, self.code_lines + other.code_lines)

    @property
    def per_1000(self) -> float:
        return 1000 * self.anys / self.code_lines if self.code_lines else 0.0


def count_source(source: str) -> Count:
    """Count one module's `Any` NAME tokens and the lines holding a NAME or OP token."""
    anys = 0
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.NAME, tokenize.OP):
            lines.add(token.start[0])
            if token.type == tokenize.NAME and token.string == "Any":
                anys += 1
    return Count(anys, len(lines))


def layer_of(path: Path, package: Path) -> str:
    """`bench/run` for bench/run/runner.py, `bench` for bench/__init__.py."""
    parts = path.relative_to(package).parts
    return f"{package.name}/{parts[0]}" if len(parts) > 1 else package.name


def measure(package: Path = PACKAGE) -> dict[str, Count]:
    """Counts per layer (sorted by name), and the whole package under `WHOLE`."""
    per_layer: dict[str, Count] = {}
    for path in sorted(package.rglob("*.py")):
        layer = layer_of(path, package)
        per_layer[layer] = per_layer.get(layer, Count()) + count_source(path.read_text(encoding="utf-8"))
    total = sum(per_layer.values(), Count())
    return {**dict(sorted(per_layer.items())), WHOLE: total}


def table(counts: dict[str, Count]) -> str:
    """A plain-text table: layer, `Any` tokens, code lines, `Any` per 1,000 code lines."""
    width = max(len(name) for name in counts)
    rows = [f"{'layer':<{width}}  {'Any':>5}  {'code lines':>10}  {'per 1,000':>9}"]
    rows += [
        f"{name:<{width}}  {count.anys:>5}  {count.code_lines:>10}  {count.per_1000:>9.1f}"
        for name, count in counts.items()
    ]
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    package = Path(argv[0]) if argv else PACKAGE
    if not package.is_dir():
        print(f"error: {package} is not a folder; pass the package folder (e.g. bench)", file=sys.stderr)
        return 2
    print(table(measure(package)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
