"""`bench run --shift-sample N` (bench/run/shift.py): how far a task's instruction moves a text's embedding."""

from __future__ import annotations

import random

import pytest

from bench.results.comparison import results_table
from bench.run.runner import RunOptions, run
from bench.run.shift import Instructed, cosine_distances, sample
from toy_encoders import HashEncoder

TASK = "DemoInstructSTS"


def _run(monkeypatch, tmp_path, model, **options):
    monkeypatch.setattr("bench.run.runner.build_model", lambda _options: model)
    return run(RunOptions(tasks=[TASK], output_dir=str(tmp_path / "out"), show_progress_bar=False, **options))


def _items(n: int) -> list[Instructed]:
    return [Instructed(f"text {i}", f"instruction {i % 3}", "query" if i % 2 else None) for i in range(n)]


def test_the_sample_is_a_function_of_the_task_and_its_texts_alone():
    """Rank 0 sees every text whatever the rank count; the order it sees them in (and repeats) changes nothing."""
    items = _items(50)
    seed, picked = sample("T", items, 8)
    shuffled = random.Random(1).sample(items, len(items))
    assert sample("T", shuffled + items[:10], 8) == (seed, picked)  # order and repeats: the same sample
    assert len(picked) == 8 == len(set(picked)) and set(picked) <= set(items)
    assert sample("T", items, 8) == (seed, picked)  # no state between calls
    assert sample("Other", items, 8)[0] != seed  # the task's name is in the seed
    assert sample("T", items[:-1], 8)[0] != seed  # and its texts
    assert sample("T", items, 500) == (seed, sorted(set(items)))  # fewer texts than N: all of them


def test_cosine_distance_is_zero_for_the_same_vector_and_one_for_orthogonal():
    import numpy as np

    a = np.array([[1.0, 0.0], [3.0, 4.0], [0.0, 0.0]], dtype=np.float32)
    b = np.array([[0.0, 2.0], [3.0, 4.0], [1.0, 0.0]], dtype=np.float32)
    assert cosine_distances(a, b).tolist() == pytest.approx([1.0, 0.0, 1.0])


def test_an_instructed_run_records_a_shift_and_counts_its_encodes(tmp_path, monkeypatch):
    plain = HashEncoder(use_cache=False)
    [default] = _run(monkeypatch, tmp_path / "a", plain)
    shifted_model = HashEncoder(use_cache=False)
    [shifted] = _run(monkeypatch, tmp_path / "b", shifted_model, shift_sample=16)
    measured = shifted.record["instruction_shift"]
    assert measured["sample"] == 16 and measured["population"] >= 16 and isinstance(measured["seed"], int)
    assert measured["mean_cosine_distance"] > 0
    assert shifted.main_score == default.main_score  # the scores are the task's own, untouched
    # the blind encodes are counted in the record, and only they are new: the instructed ones are the task's
    extra = sum(map(len, shifted_model.groups)) - sum(map(len, plain.groups))
    assert 0 < extra <= 16
    assert shifted.record["encode"]["texts_encoded"] == default.record["encode"]["texts_encoded"] + extra
    assert shifted.record["encode"]["texts_requested"] == default.record["encode"]["texts_requested"] + 32
    [again] = _run(monkeypatch, tmp_path / "c", HashEncoder(use_cache=False), shift_sample=16)
    assert again.record["instruction_shift"] == measured  # the same sample, the same shift


def test_a_blind_setting_shifts_exactly_zero(tmp_path, monkeypatch):
    """The model ignores the instruction (as under --template none): both renderings are one input."""
    [blind] = _run(monkeypatch, tmp_path, HashEncoder(blind=True, use_cache=False), shift_sample=16)
    assert blind.record["instruction_shift"]["sample"] == 16
    assert blind.record["instruction_shift"]["mean_cosine_distance"] == 0.0


def test_the_sentence_transformers_none_template_renders_both_alike():
    from mteb.types import PromptType

    from bench.adapters.sentence_transformers import SentenceTransformerEncoder

    for template, equal in (("none", True), ("prefix", False)):
        model = SentenceTransformerEncoder("unused", template=template, use_cache=False)
        pair = [model.render("a text", i, PromptType.query) for i in ("Find the topic:", None)]
        assert (pair[0] == pair[1]) is equal


def test_a_default_run_is_unchanged(tmp_path, monkeypatch):
    """Off by default: no instruction_shift, no extra encode, and no Shift column in `bench results`."""
    model = HashEncoder(use_cache=False)
    [default] = _run(monkeypatch, tmp_path, model)
    assert "instruction_shift" not in default.record
    assert default.record["encode"]["texts_encoded"] == sum(map(len, model.groups))
    assert "Shift" not in results_table([str(tmp_path / "out")], fmt="markdown")
    _run(monkeypatch, tmp_path, HashEncoder(use_cache=False), shift_sample=8, overwrite=True)
    table = results_table([str(tmp_path / "out")], fmt="markdown")
    assert "Shift" in table


@pytest.mark.slow
def test_minilm_shifts_with_its_instruction_and_not_without(tmp_path, minilm_path):
    """The issue's demo: MiniLM with the task's instruction as a prefix shifts; with --template none, 0 exactly."""
    options = dict(model=f"st:{minilm_path}", tasks=[TASK], cache_dir=str(tmp_path / "cache"), show_progress_bar=False)
    [prefixed] = run(RunOptions(output_dir=str(tmp_path / "a"), template="prefix", shift_sample=32, **options))
    [blind] = run(RunOptions(output_dir=str(tmp_path / "b"), template="none", shift_sample=32, **options))
    assert prefixed.record["instruction_shift"]["mean_cosine_distance"] > 0.01
    assert blind.record["instruction_shift"]["mean_cosine_distance"] == 0.0
    assert prefixed.record["instruction_shift"]["seed"] == blind.record["instruction_shift"]["seed"]


def test_a_negative_sample_is_one_error_line(capsys):
    from bench.cli.main import main

    assert main(["run", "--model", "toy:m", "-t", TASK, "--shift-sample", "-1"]) == 2
    assert capsys.readouterr().err.strip() == "error: --shift-sample -1: give a number of texts, 0 (off) or more."


@pytest.mark.slow
def test_mtebs_own_implementation_shifts_and_reuses_the_tasks_vectors(tmp_path):
    """The default family (MTEB's implementation of MiniLM renders a task's inputs itself): the instructed
    inputs are read from MTEB's own call (memo hits: the task's vectors), only the blind ones are new encodes."""
    options = dict(tasks=[TASK], show_progress_bar=False)
    [plain] = run(RunOptions(output_dir=str(tmp_path / "a"), cache_dir=str(tmp_path / "ca"), **options))
    [shifted] = run(
        RunOptions(output_dir=str(tmp_path / "b"), cache_dir=str(tmp_path / "cb"), shift_sample=16, **options)
    )
    measured = shifted.record["instruction_shift"]
    assert shifted.record["model"]["family"] == "mteb" and "note" not in measured
    assert measured["sample"] == 16 and measured["mean_cosine_distance"] > 0.01
    extra = shifted.record["encode"]["texts_encoded"] - plain.record["encode"]["texts_encoded"]
    assert 0 < extra <= 16  # the blind inputs; the instructed ones were the task's own vectors
    assert shifted.main_score == plain.main_score
