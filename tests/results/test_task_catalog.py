"""bench/results/task_catalog.py: the catalogue as its types (`Catalog`, `TaskFacts`) say it is."""

from __future__ import annotations

from bench.results import task_catalog
from bench.results.task_catalog import Catalog
from bench.results.task_facts import TaskFacts


def test_the_catalogue_and_each_entry_hold_the_keys_their_types_name():
    """The cached file is read back as a `Catalog` unchecked (its FORMAT is): the types must name what
    `build` and `derive` write, each key once."""
    found = task_catalog.catalog()
    assert set(found) == set(Catalog.__annotations__)
    assert found["tasks"]
    for name, entry in found["tasks"].items():
        assert set(entry) == set(TaskFacts.__annotations__), name
