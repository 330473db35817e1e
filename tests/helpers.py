"""Writing small task folders in the published schema."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from conftest import ROOT


def write_csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path


def write_jsonl(path: Path, rows: Sequence[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def scores_of(model, task) -> dict:
    """Scores of one task under plain `mteb.evaluate`, nothing cached."""
    import mteb

    result = mteb.evaluate(model, task, cache=None, show_progress_bar=False, co2_tracker=False)
    return result.task_results[0].scores["test"][0]


def copy_working_tree(work: Path) -> Path:
    """A copy of the working tree at `work` (tracked files and new ones git does not ignore), where a
    test may add or change files; skips the test outside a git checkout."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    names = listed.stdout.split("\0") if listed.returncode == 0 else []
    if not names:
        pytest.skip("not a git checkout: cannot tell which files make the working tree")
    for name in filter(None, names):
        source = ROOT / name
        if source.is_file():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, work / name)
    return work


# What may differ between two runs of one example: durations, dates, absolute paths and timing columns.
_DURATION = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|s|min)\b")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b")
_PATH = re.compile(r"(?<![\w.])/(?:[\w.@+-]+/)*[\w.@+-]+/?")
_TIME_COLUMNS = re.compile(r"^(seconds|time|wall|elapsed|took)\b", re.IGNORECASE)


def masked(text: str) -> list[str]:
    """The lines of `text` with what varies between runs masked, and table rows without their padding."""
    out: list[str] = []
    timing: set[int] = set()
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.lstrip().startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if all(re.fullmatch(r":?-+:?", c) for c in cells if c):
                out.append("|---|")
                continue
            if not any(_TIME_COLUMNS.match(c) for c in cells) and timing:
                cells = ["<T>" if i in timing else c for i, c in enumerate(cells)]
            else:
                timing = {i for i, c in enumerate(cells) if _TIME_COLUMNS.match(c)}
            line = "| " + " | ".join(cells) + " |"
        else:
            timing = set()
        line = _PATH.sub("<PATH>", _DATE.sub("<DATE>", _DURATION.sub("<T>", line)))
        if line.strip():
            out.append(line.strip())
    return out


def missing_output(expected: str, actual: str) -> str | None:
    """None when every line the page shows is in the output, in order; else what is missing, with context."""
    want, got = masked(expected), masked(actual)
    at = 0
    for line in want:
        try:
            at = got.index(line, at) + 1
        except ValueError:
            near = "\n".join(got[max(0, at - 2) : at + 12])
            return f"the page shows\n  {line}\nbut the output (after line {at}) is\n{near}"
    return None


def compile_latex(tex: str, folder: Path) -> str:
    """Compile a table in a standard `article` (booktabs, amssymb, graphicx) with pdflatex; the log's text.

    Callers skip where pdflatex is not installed (`shutil.which("pdflatex")`)."""
    document = (
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage{amssymb}\n\\usepackage{graphicx}\n"
        f"\\begin{{document}}\n{tex}\n\\end{{document}}\n"
    )
    (folder / "t.tex").write_text(document, encoding="utf-8")
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    return (folder / "t.log").read_text(encoding="utf-8", errors="replace")
