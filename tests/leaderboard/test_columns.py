"""leaderboard.csv's columns are one spec (bench/leaderboard/exports.py `COLUMNS`): each column says once
what it reads from a submitted result, a variant and an external row, and the CSV is written from it."""

from __future__ import annotations

import csv
import io

import pytest

from bench.leaderboard.entries import Entry, ModelKey
from bench.leaderboard.exports import COLUMNS, CSV_COLUMNS, csv_text
from bench.leaderboard.rows import ModelRow, model_json


def _data() -> dict:
    """leaderboard.json's data for one submitted row (built by the row code itself), one variant of it and one
    external row: every kind of CSV row."""
    record = {
        "model": {"family": "sentence-transformers", "settings": {"pooling": "mean", "dtype": "float32"}},
        "task": {"main_score": "cosine_spearman", "type": "STS", "instructions_sha256": "=cmd"},
    }
    result = {"scores": {"test": [{"main_score": 0.5, "cosine_spearman": 0.5}]}, "dataset_revision": "r"}
    row = ModelRow(ModelKey("org/m", "r1", "default"))
    row.results["STSX"] = Entry("s.zip", "org/m/STSX.json", "STSX", row.key, result, record)
    model = model_json(row)
    variant = {"label": "v1", "set": None, "score": 42.0, "submission": "s.zip", "file": "f", "verification": "x"}
    entry = {"name": "org/m", "revision": "r1", "setting": "default", "model_id": model["id"], "baseline": False}
    external = {
        "name": "paper-model",
        "revision": None,
        "family": None,
        "n_parameters": None,
        "instruction_aware": None,
        "source": "reported",
        "source_label": "reported in X",
        "url": "https://example.org",
        "scores": {"STSX": 61.5},
    }
    return {
        "models": [model],
        "sensitivity": [
            {"task": "STSX", "main_score_name": "cosine_spearman", "models": [{**entry, "variants": [variant]}]}
        ],
        "external": [external],
    }


@pytest.mark.registry
def test_every_column_is_written_for_the_kinds_of_rows_it_reads():
    """Each column has a unique header and reads at least one kind of row; the CSV has every header and, in each
    row, a value exactly where the column reads that row's kind (a guide's new column included)."""
    assert len(set(CSV_COLUMNS)) == len(CSV_COLUMNS)
    assert all(c.submitted or c.variant or c.external for c in COLUMNS)
    rows = list(csv.DictReader(io.StringIO(csv_text(_data()))))
    assert [r["source"] for r in rows] == ["submitted", "submitted", "reported"]
    assert list(rows[0]) == list(CSV_COLUMNS)
    for row, kind in zip(rows, ("submitted", "variant", "external"), strict=True):
        unread = [c.name for c in COLUMNS if getattr(c, kind) is None]
        assert [name for name in unread if row[name] != ""] == [], kind


def test_a_number_column_is_never_neutralised_and_a_text_one_is():
    rows = list(csv.DictReader(io.StringIO(csv_text(_data()))))
    assert rows[0]["instructions_sha256"] == "'=cmd"  # a formula-looking text cell
    assert rows[0]["main_score"] == "0.500000" and rows[1]["main_score_x100"] == "42.00"
    assert rows[2]["main_score_x100"] == "61.50" and rows[2]["source_url"] == "https://example.org"
