"""The run record the runner writes is what bench/core/run_record.py declares, key for key and in order.

Readers in the results and leaderboard layers may rely on the TypedDicts' names; a key the writer adds
without declaring it would be invisible to them (and to mypy where they read it). The file's key order
is part of its bytes, so the declared order is checked too. The record is built from stand-ins for the
model and the task (`_run_record` reads only attributes), so no model loads.
"""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace as NS
from typing import get_type_hints

import pytest

from bench.adapters.base import EncodeStats
from bench.core import run_record
from bench.run import runner

TOP_KEYS = [
    "record_version",
    "task",
    "model",
    "encode",
    "evaluation_seconds",
    "started_at",
    "versions",
    "python",
    "platform",
    "command",
    "resume_key",
]


def _record(
    *, facts: dict, oom_splits: int, usage: dict | None, device_batches: list | None, task_name: str = "T"
) -> dict:
    meta = NS(name=task_name, type="STS", main_score="spearman", dataset={"path": "org/t"}, revision="r1")
    task = NS(
        metadata=meta,
        task_version="1",
        data_source="local",
        instruction_set=lambda: {"task_instruction": "x"},
        instruction_set_sha256=lambda: "0" * 64,
    )
    model = NS(
        name="m",
        revision="rev",
        fingerprint={"model": "m"},
        content_id=lambda: None,
        family="sentence-transformers",
        mteb_model_meta=NS(experiment_kwargs=None),
        settings=lambda: {"batch_size": 8},
        identity_check=None,
        device="cpu",
        instruction_use=lambda _meta: {"used": True},
        record_facts=lambda: facts,
        cache=None,
        sub_encoders=list,
        device_batches=device_batches,
    )
    stats = EncodeStats(requested=5, unique=4, cache_hits=1, encoded=3, encode_seconds=0.5, oom_splits=oom_splits)
    options = runner.RunOptions()
    key = runner._resume_key(model, task, options)
    return runner._run_record(model, task, options, key, stats, datetime(2026, 1, 1, tzinfo=UTC), 1.0, usage)


def _undeclared(value: object, declared: type, where: str) -> list[str]:
    """Keys of `value` (recursively, through the nested TypedDicts) that `declared` does not name."""
    hints = get_type_hints(declared)
    found = [f"{where}.{k}" for k in value if k not in hints]  # type: ignore[union-attr]
    for k, v in value.items():  # type: ignore[union-attr]
        nested = hints.get(k)
        if isinstance(v, dict) and isinstance(nested, type) and hasattr(nested, "__annotations__"):
            found += _undeclared(v, nested, f"{where}.{k}")
    return found


@pytest.mark.parametrize(
    ("facts", "oom_splits", "usage", "device_batches", "task_name"),
    [({}, 0, None, None, "T"), ({"parameters": 1}, 2, {"requests": 3}, [4, 8], "DemoInstructSTS")],
    ids=["plain", "every-optional-key"],
)
def test_written_record_keys_are_the_declared_ones_in_order(facts, oom_splits, usage, device_batches, task_name):
    record = _record(
        facts=facts, oom_splits=oom_splits, usage=usage, device_batches=device_batches, task_name=task_name
    )
    assert _undeclared(record, run_record.RunRecord, "record") == []
    assert list(record) == TOP_KEYS
    # a task the harness declares gets its main score's metric version; a task it does not know, none
    declared = list(get_type_hints(run_record.TaskBlock))
    assert list(record["task"]) == (declared if task_name != "T" else [k for k in declared if k != "metric_version"])
    assert list(record["task"]["dataset"]) == list(get_type_hints(run_record.DatasetBlock))
    assert list(record["resume_key"]) == list(get_type_hints(run_record.ResumeKey))
    # optional keys sit where the file always had them: facts last in `model`, usage last in `encode`
    assert ("facts" in record["model"]) == bool(facts)
    assert list(record["encode"])[-1] == ("usage" if usage else "cache")
    assert ("oom_splits" in record["encode"]) == bool(oom_splits)
    assert record["encode"].get("device_batches") == device_batches


def test_the_variant_block_is_declared():
    from bench.core.variants import Variant, VariantFile

    variant = Variant("T", "Say it.", "correct", 0, "correct01-abcdef12")
    source = VariantFile(name="f", sha256="0" * 64, variants={"T": [variant]}, sets={"T": ("correct",)})
    assert _undeclared(variant.record(source), run_record.VariantBlock, "variant") == []
