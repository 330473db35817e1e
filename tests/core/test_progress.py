"""Encode progress: log lines outside a terminal (time faked, never slept), a bar that stays and moves per batch."""

from __future__ import annotations

import io
import logging
import threading

import numpy as np
import pytest

from bench.core.progress import EncodeProgress, format_duration
from toy_encoders import HashEncoder


class BatchedHash(HashEncoder):
    """HashEncoder through the shared batching loop, as real families are."""

    def _encode_group(self, inputs, batch_size):
        return self.run_batches(
            inputs, lambda batch: HashEncoder._encode_group(self, batch, batch_size), batch_size=batch_size
        )


def _inputs(n: int, stem: str = "text number") -> list[list[str]]:
    return [["", f"{stem} {i}"] for i in range(n)]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "bench.core.progress"]


def test_log_lines_every_interval_with_count_rate_and_eta(caplog):
    caplog.set_level(logging.INFO, logger="bench.core.progress")
    clock = FakeClock()
    with EncodeProgress(1000, "FewRelClustering", show=False, clock=clock, heartbeat=False) as p:
        assert _lines(caplog) == ["FewRelClustering: encoding 1,000 texts"]
        clock.now += 4.0
        p.update(100)  # 4 s after the start: too early for a line
        assert len(_lines(caplog)) == 1
        clock.now += 6.0
        p.update(150)  # 10 s: 250 texts, 25 texts/s, 750 left -> 30 s
        assert _lines(caplog)[-1] == (
            "FewRelClustering: 250/1,000 texts (25%), 25.0 texts/s, elapsed 0:00:10, ETA 0:00:30"
        )
        clock.now += 9.9
        p.update(50)
        assert len(_lines(caplog)) == 2  # 9.9 s after the last line
        clock.now += 0.1
        p.update(0)
        assert _lines(caplog)[-1].startswith("FewRelClustering: 300/1,000 texts (30%), 15.0 texts/s")
        clock.now += 30.0
        p.update(700)
    assert _lines(caplog)[-1] == "FewRelClustering: 1,000/1,000 texts encoded in 0:00:50, 20.0 texts/s"


def test_heartbeat_logs_while_one_batch_runs(caplog):
    """No batch finishes, yet the log gets a line each interval: the thread ticks on its own."""
    caplog.set_level(logging.INFO, logger="bench.core.progress")
    seen = threading.Event()

    class Signal(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "ETA" in record.getMessage():
                seen.set()

    handler = Signal()
    logging.getLogger("bench.core.progress").addHandler(handler)
    try:
        with EncodeProgress(10, "Slow", show=False, interval=0.01):
            assert seen.wait(timeout=1000), "no heartbeat line"
    finally:
        logging.getLogger("bench.core.progress").removeHandler(handler)
    assert any(
        line.startswith("Slow: 0/10 texts (0%), 0.0 texts/s") and line.endswith("ETA unknown")
        for line in _lines(caplog)
    )


def test_batches_count_as_their_share_of_the_group():
    clock = FakeClock()
    p = EncodeProgress(100, "t", show=False, clock=clock, heartbeat=False)
    p.start_group(64)
    p.batch_done(16, 64)  # one batch of a group the family sends as is
    assert p.position == 16
    p.batch_done(32, 512)  # MetaEOL-like: 8 inputs per text, 32 inputs = 4 texts
    assert p.position == 20
    p.batch_done(10_000, 10)  # never past the group's end
    assert p.position == 64
    p.update(64)
    p.start_group(36)
    assert p.position == 64
    p.update(36)
    assert p.position == 100
    p.close()
    p.batch_done(5, 5)  # after close: ignored
    assert p.position == 100


def test_terminal_bar_stays_and_moves_per_batch(monkeypatch, tmp_path):
    """With a bar (a terminal), each batch redraws it and the finished bar is left on screen."""
    import tqdm.auto

    stream = io.StringIO()
    real = tqdm.auto.tqdm
    made = []

    def fake_tqdm(*args, **kwargs):
        bar = real(*args, file=stream, **kwargs)
        made.append((kwargs, bar))
        return bar

    monkeypatch.setattr(tqdm.auto, "tqdm", fake_tqdm)
    monkeypatch.setattr("bench.core.progress.BAR_MININTERVAL", 0)
    BatchedHash(batch_size=4, cache_dir=tmp_path).encode_inputs(_inputs(40), show=True)
    kwargs, bar = made[0]
    assert kwargs["leave"] is True and kwargs["miniters"] == 1 and kwargs["mininterval"] == 0
    assert bar.n == 40
    drawn = [part for part in stream.getvalue().split("\r") if "/40" in part]
    assert any(" 4/40" in d for d in drawn) and any("32/40" in d for d in drawn), drawn  # per batch of 4
    assert stream.getvalue().endswith("\n")  # leave=True: the bar stays


def test_encoder_logs_progress_outside_a_terminal(caplog, tmp_path):
    caplog.set_level(logging.INFO, logger="bench.core.progress")
    model = BatchedHash(batch_size=4, cache_dir=tmp_path)  # show None, and pytest's stderr is not a terminal
    model.encode_inputs(_inputs(10), desc="MyTask")
    lines = _lines(caplog)
    assert lines[0] == "MyTask: encoding 10 texts"
    assert lines[-1].startswith("MyTask: 10/10 texts encoded in ")
    assert model._progress is None


@pytest.mark.parametrize(("seconds", "text"), [(0, "0:00:00"), (59.6, "0:01:00"), (3725, "1:02:05")])
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


def test_vectors_unchanged_by_progress(tmp_path):
    texts = _inputs(9)
    shown = BatchedHash(batch_size=2, cache_dir=tmp_path / "a").encode_inputs(texts, show=True)
    logged = BatchedHash(batch_size=2, cache_dir=tmp_path / "b").encode_inputs(texts)
    assert np.array_equal(shown, logged)


def test_a_failed_encode_says_where_it_stopped(caplog, tmp_path):
    caplog.set_level(logging.INFO, logger="bench.core.progress")
    model = BatchedHash(batch_size=2, cache_dir=tmp_path, nan_for="poison")
    with pytest.raises(Exception, match="NaN"):
        model.encode_inputs([*_inputs(16), ["", "poison text"]], desc="Bad")
    assert _lines(caplog)[-1].startswith("Bad: 16/17 texts kept; encoding stopped after ")


# ------------------------------------------------------------------------------- 0-column terminals
class _FakeTTY(io.StringIO):
    """A stderr that says it is a terminal (its width is what `os.get_terminal_size` is patched to say)."""

    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        return 2


@pytest.mark.parametrize(("columns", "terminal"), [(0, False), (120, True)])
def test_a_terminal_of_0_columns_gets_log_lines_not_a_bar(monkeypatch, caplog, columns, terminal):
    import os

    from bench.core.progress import stderr_is_terminal

    caplog.set_level(logging.INFO, logger="bench.core.progress")
    monkeypatch.setattr("sys.stderr", _FakeTTY())
    monkeypatch.setattr(os, "get_terminal_size", lambda fd=1: os.terminal_size((columns, 24)))
    assert stderr_is_terminal() is terminal
    with EncodeProgress(5, "T (pass 1)", heartbeat=False) as p:
        p.update(5)
    assert (p._bar is not None) is terminal
    assert bool(_lines(caplog)) is not terminal  # 0 columns: the log lines a file gets
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert stderr_is_terminal() is False  # not a TTY at all


# ------------------------------------------------------------------------------- library bars
def _pristine_tqdm(monkeypatch) -> None:
    """tqdm's defaults as imported without TQDM_DISABLE (an earlier in-process CLI call may have set it);
    the class is restored after the test."""
    import functools

    import tqdm.std

    init = tqdm.std.tqdm.__dict__["__init__"]
    keywords = {k: v for k, v in init.keywords.items() if k != "disable"}
    monkeypatch.setattr(tqdm.std.tqdm, "__init__", functools.partialmethod(init.func, *init.args, **keywords))


def test_cli_switches_library_bars_off_outside_a_terminal(monkeypatch):
    """transformers' GGUF loader draws a plain `tqdm.auto.tqdm` ("Converting and de-quantizing GGUF tensors");
    after the CLI's start-up outside a terminal, such a bar writes nothing, while the harness's own still draws."""
    import os

    import tqdm.auto
    import tqdm.std

    from bench.cli.main import _configure_logging

    _pristine_tqdm(monkeypatch)
    env = {k: v for k, v in os.environ.items() if k != "TQDM_DISABLE"}
    monkeypatch.setattr(os, "environ", env)  # restored afterwards
    monkeypatch.setattr("sys.stderr", io.StringIO())  # a log file
    library = io.StringIO()
    for _ in tqdm.auto.tqdm(range(3), desc="before", file=library):
        pass
    assert "before" in library.getvalue()  # drawn, as it was in a log file before the fix
    _configure_logging(False, False)
    assert os.environ["TQDM_DISABLE"] == "1"  # child processes and later imports of tqdm
    for _ in tqdm.auto.tqdm(range(3), desc="Converting and de-quantizing GGUF tensors...", file=library):
        pass
    assert "Converting" not in library.getvalue()
    ours = io.StringIO()
    monkeypatch.setattr("sys.stderr", ours)
    with EncodeProgress(3, "Ours", show=True, heartbeat=False) as p:  # asked for: shown all the same
        p.update(3)
    assert "Ours" in ours.getvalue()


def test_cli_leaves_library_bars_on_a_terminal(monkeypatch):
    import os

    import tqdm.std

    from bench.cli.main import _configure_logging

    _pristine_tqdm(monkeypatch)
    monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items() if k != "TQDM_DISABLE"})
    monkeypatch.setattr("sys.stderr", _FakeTTY())
    monkeypatch.setattr(os, "get_terminal_size", lambda fd=1: os.terminal_size((100, 24)))
    _configure_logging(False, False)
    assert "TQDM_DISABLE" not in os.environ and "disable" not in tqdm.std.tqdm.__dict__["__init__"].keywords


# ------------------------------------------------------------------------------- pass labels
def test_pass_labels():
    from bench.adapters.base import pass_label

    assert [pass_label("STS12", "sentence", n) for n in (1, 2, 3)] == [
        "STS12 (sentence 1)",
        "STS12 (sentence 2)",
        "STS12 (sentence 1)",
    ]
    assert pass_label("STS17", "sentence", 2, "en-de") == "STS17 (en-de, sentence 2)"
    assert pass_label("SciFact", "queries", 1) == "SciFact (queries)"
    assert pass_label("SciFact", "corpus", 2) == "SciFact (corpus, pass 2)"
    assert pass_label("NYTClustering", "instruction", 3) == "NYTClustering (instruction 3)"
    assert pass_label("X", None, 1_106) == "X (pass 1,106)"
    assert pass_label("X", None, 1) == "X"  # a task's one pass: its name says it (a second one is "pass 2")


def test_each_encode_pass_of_an_mteb_sts_task_names_its_side(caplog, tmp_path):
    """MTEB's own STS evaluator encodes sentence 1, then sentence 2: each progress line says which."""
    import mteb
    from datasets import Dataset
    from mteb._evaluators.any_sts_evaluator import AnySTSEvaluator
    from mteb.timing import TimingStack

    caplog.set_level(logging.INFO, logger="bench.core.progress")
    metadata = mteb.get_task("STSBenchmark").metadata
    data = Dataset.from_dict(
        {
            "sentence1": ["a cat sat", "a dog ran", "rain fell"],
            "sentence2": ["a cat slept", "the dog ran", "sun shone"],
            "score": [4.0, 3.0, 0.5],
        }
    )
    evaluator = AnySTSEvaluator(
        data,
        ("sentence1", "sentence2"),
        task_metadata=metadata,
        hf_split="test",
        hf_subset="default",
        input1_prompt_type=None,
        input2_prompt_type=None,
        timer=TimingStack(),
    )
    evaluator(BatchedHash(batch_size=2, cache_dir=tmp_path), encode_kwargs={"batch_size": 2})
    starts = [line for line in _lines(caplog) if ": encoding " in line]
    assert starts == ["STSBenchmark (sentence 1): encoding 3 texts", "STSBenchmark (sentence 2): encoding 3 texts"]


def test_robustness_passes_are_numbered_by_instruction(caplog, tmp_path):
    """A task that encodes its corpus once per instruction: `instruction 1`, `instruction 2`, in one memo scope
    (the task's name: the label is only what is shown)."""
    import mteb
    from mteb.types import PromptType

    caplog.set_level(logging.INFO, logger="bench.core.progress")
    metadata = mteb.get_task("STSBenchmark").metadata.model_copy(update={"name": "Robust", "type": "Clustering"})
    model = BatchedHash(batch_size=2, cache_dir=tmp_path)
    texts = ["one", "two", "three"]
    for instruction in ("first instruction", "second instruction"):
        rows = [{"query": texts, "instruction": [instruction] * 3}]
        model.encode(rows, task_metadata=metadata, hf_split="test", hf_subset="default", prompt_type=PromptType.query)
    starts = [line for line in _lines(caplog) if ": encoding " in line]
    assert starts == ["Robust (instruction 1): encoding 3 texts", "Robust (instruction 2): encoding 3 texts"]
    assert model._memo.scope == "Robust"
