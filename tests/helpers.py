"""Writing small task folders in the published schema."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path

import mteb


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
    result = mteb.evaluate(model, task, cache=None, show_progress_bar=False, co2_tracker=False)
    return result.task_results[0].scores["test"][0]
