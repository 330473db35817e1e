"""The one shim into MTEB's internals (bench/tasks/mteb_compat.py): fails loudly when an MTEB release changes it."""

from __future__ import annotations

import importlib

import mteb
import pytest

from bench import tasks
from bench.tasks.mteb_compat import create_query_dataloader, mteb_query_dataloader, mteb_registry, mteb_task_list


def test_mtebs_private_registry_is_still_the_dict_get_task_reads():
    module = importlib.import_module("mteb.get_tasks")
    assert isinstance(module._TASKS_REGISTRY, dict), "MTEB changed its task registry: update bench/tasks/mteb_compat.py"
    assert module._TASKS_REGISTRY is mteb_registry()
    assert "STS12" in module._TASKS_REGISTRY  # MTEB's own tasks are still there


def test_mtebs_task_list_and_benchmark_registry_are_still_what_get_tasks_and_get_benchmark_read():
    module = importlib.import_module("mteb.get_tasks")
    assert isinstance(module.TASK_LIST, tuple) and module.TASK_LIST is mteb_task_list()
    assert "TASK_LIST" in mteb.get_tasks.__code__.co_names, "get_tasks no longer filters TASK_LIST"
    assert tasks.IntentEmotion in module.TASK_LIST
    benchmarks = importlib.import_module("mteb.benchmarks.get_benchmark")
    assert "_build_registry" in benchmarks.get_benchmark.__code__.co_names
    assert "_build_registry" in benchmarks.get_benchmarks.__code__.co_names
    assert getattr(benchmarks._build_registry, "_harness_wrapper", False)
    assert mteb.get_benchmark("InBedder").name == "InBedder"


@pytest.mark.registry
def test_mteb_finds_the_harness_tasks_by_name():
    for name, cls in tasks.TASKS.items():
        found = mteb.get_task(name)
        # harness tasks are found as themselves; the generic tasks under MTEB names stay MTEB's classes
        assert isinstance(found, cls) or issubclass(cls, type(found)), name
    assert type(mteb.get_task("IntentEmotion")) is tasks.IntentEmotion
    assert [t.metadata.name for t in mteb.get_tasks(tasks=["IntentEmotion", "FewRelClustering"])] == [
        "IntentEmotion",
        "FewRelClustering",
    ]


def test_the_query_dataloader_still_carries_instructions():
    from datasets import Dataset

    task = tasks.DemoIntentEmotion()
    ds = Dataset.from_dict({"text": ["a", "b"], "instruction": ["x", "y"]})
    batch = next(iter(mteb_query_dataloader(ds, task_metadata=task.metadata, batch_size=2)))
    assert list(batch["query"]) == ["a", "b"] and list(batch["instruction"]) == ["x", "y"]


def test_the_harness_loader_gives_exactly_mtebs_batches():
    """Every batch of the fast loader equals MTEB's on the same rows: keys, their order, values, types."""
    from datasets import Dataset

    task = tasks.FewRelClustering if hasattr(tasks, "FewRelClustering") else tasks.DemoNYTClustering
    metadata = task.metadata
    texts = [f"text {i} " + "é" * (i % 3) for i in range(37)] + ["", "  padded  "]
    instructions = [f"instruction {i % 4}" for i in range(len(texts) - 1)] + [""]
    ds = Dataset.from_dict({"text": texts, "instruction": instructions})
    for batch_size in (1, 5, 32, 64):
        ours = create_query_dataloader(texts, instructions, task_metadata=metadata, batch_size=batch_size)
        theirs = mteb_query_dataloader(ds, task_metadata=metadata, batch_size=batch_size)
        ours_batches, theirs_batches = list(ours), list(theirs)
        assert len(ours_batches) == len(theirs_batches) == len(ours)
        for mine, reference in zip(ours_batches, theirs_batches, strict=True):
            assert list(mine) == list(reference)  # the same keys in the same order
            for key in reference:
                assert type(mine[key]) is type(reference[key]), key
                assert mine[key] == reference[key], key
        # what encoders read from `inputs.dataset` (features; MTEB's cache wrapper iterates it)
        assert ours.dataset.features == theirs.dataset.features
        assert list(ours.dataset) == list(theirs.dataset)
