"""bench/results/store.py: reading result files and run records."""

from __future__ import annotations

from bench.results.store import read_json


def test_read_json_treats_a_file_that_is_no_json_object_as_missing(tmp_path):
    """The runner's reader reuses a result only when its file is a JSON object: a list, a number or null in
    a result's place is "to be recomputed", as a missing file is, never indexed as a result."""
    for name, text in (("list", "[1, 2]"), ("number", "3"), ("text", '"scores"'), ("null", "null")):
        (tmp_path / f"{name}.json").write_text(text, encoding="utf-8")
        assert read_json(tmp_path / f"{name}.json") is None, name
    (tmp_path / "object.json").write_text('{"task_name": "T"}', encoding="utf-8")
    assert read_json(tmp_path / "object.json") == {"task_name": "T"}
