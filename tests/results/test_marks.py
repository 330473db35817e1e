"""bench/results/marks.py: a run record's marks, read block by block (`bench.core.json_types.object_at`)."""

from __future__ import annotations

import pytest

from bench.results import marks


@pytest.mark.parametrize(
    "record",
    [
        {"task": ["limit", 8], "encode": "texts_requested"},
        {"task": {"dataset": "local:copy", "limit": 8.5}, "model": 3},
        {"model": {"instruction_use": ["follows_instructions"], "settings": "template=none"}},
    ],
)
def test_a_block_that_is_no_mapping_reads_as_absent_not_as_a_crash(record):
    """A record a reader has not validated (the leaderboard's entries, a hand-written file) whose blocks are
    lists, texts or numbers: each mark is "not said", as for a record that lacks the block."""
    assert marks.limit_of(record) is None
    assert marks.texts_of(record) is None
    assert marks.stand_in(record) is None
    assert marks.local_copy(record) is False
    assert marks.follows_instructions(record) is None
    assert marks.is_baseline(record) is False
    assert marks.data_marks(record) == ()


def test_the_marks_of_a_record_written_by_a_run():
    record = {
        "task": {"name": "DemoInstructSTS", "limit": 8, "dataset": {"stand_in": True, "stand_in_note": "a proxy"}},
        "encode": {"texts_requested": 76},
        "model": {"instruction_use": {"follows_instructions": False}},
    }
    assert marks.limit_of(record) == 8
    assert marks.texts_of(record) == 76
    assert marks.stand_in(record) == "a proxy"
    assert marks.is_baseline(record) is True
    assert marks.data_marks(record) == (marks.STAND_IN,)
