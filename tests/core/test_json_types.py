"""bench/core/json_types.py: `object_at`, how a reader walks into a block of parsed JSON."""

from __future__ import annotations

from bench.core.json_types import object_at


def test_object_at_gives_a_json_object_itself_and_an_empty_one_for_anything_else():
    block = {"limit": 8}
    assert object_at(block) is block
    for value in (None, [], ["limit"], "limit", 8, 8.5, True):
        assert object_at(value) == {}
