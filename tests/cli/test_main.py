"""The CLI: tables, listings, and one clear line (no traceback) for every user error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.cli.main import main
from helpers import write_csv

ROOT = Path(__file__).resolve().parents[2]


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _one_error_line(code, err, pattern):
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2
    assert "Traceback" not in err
    assert lines[-1].startswith("error: ") and pattern in lines[-1], err


def test_list_commands(capsys):
    code, out, _ = _run(capsys, "list", "tasks")
    assert code == 0 and "IntentEmotion" in out and "hmean_v_measure" in out
    assert "all-MiniLM-L6-v2" in _run(capsys, "list", "models")[1]
    assert "demo" in _run(capsys, "list", "suites")[1]


def test_unknown_model_task_suite(capsys, tmp_path):
    code, _, err = _run(capsys, "run", "--model", "all-MiniLM-L6", "--output-dir", str(tmp_path))
    _one_error_line(code, err, "Unknown model 'all-MiniLM-L6'. Did you mean: all-MiniLM-L6-v2?")
    code, _, err = _run(capsys, "run", "--tasks", "IntentEmotio", "--output-dir", str(tmp_path))
    _one_error_line(code, err, "Unknown task 'IntentEmotio'. Did you mean: IntentEmotion")
    code, _, err = _run(capsys, "run", "--suite", "demmo", "--output-dir", str(tmp_path))
    _one_error_line(code, err, "Unknown suite 'demmo'. Did you mean: demo?")
    code, _, err = _run(capsys, "run", "--model", "nope:x", "--output-dir", str(tmp_path))
    _one_error_line(code, err, "Unknown model family 'nope'")


def test_bad_data_dirs(capsys, tmp_path):
    data = tmp_path / "data"
    header = ["anchor", "positive", "negative"]
    write_csv(data / "IntentEmotion" / "emotion.csv", header, [["a", "b", "c"]])
    args = ["run", "--tasks", "IntentEmotion", "--data-dir", str(data), "--output-dir", str(tmp_path / "o")]
    code, _, err = _run(capsys, *args)
    _one_error_line(code, err, "Missing data file for IntentEmotion")

    write_csv(data / "IntentEmotion" / "intent.csv", header, [["a", "b", "c"], ["x", "", "z"]])
    code, _, err = _run(capsys, *args)
    _one_error_line(code, err, "intent.csv row 2, column 'positive': empty text")

    (data / "IntentEmotion" / "intent.csv").write_text("anchor,positive,negative\na,b\n", encoding="utf-8")
    code, _, err = _run(capsys, *args)
    _one_error_line(code, err, "intent.csv line 2: malformed row, expected 3 fields")


def test_bad_options(capsys, tmp_path):
    code, _, err = _run(capsys, "run", "--limit", "0", "--output-dir", str(tmp_path))
    _one_error_line(code, err, "--limit must be a positive number")
    code, _, err = _run(capsys, "run", "--template", "{instruction}", "--output-dir", str(tmp_path))
    _one_error_line(code, err, "no '{text}' placeholder")
    code, _, err = _run(capsys, "results", str(tmp_path / "nothing"))
    _one_error_line(code, err, "No such results directory")


@pytest.mark.slow
def test_python_m_bench_run_default_then_results(tmp_path):
    env = {**os.environ, "INSTRUCT_BENCH_CACHE": str(tmp_path / "cache")}
    cmd = [sys.executable, "-m", "bench", "run", "--output-dir", str(tmp_path / "out")]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr
    for task in ("DemoIntentEmotion", "DemoInstructSTS", "DemoNYTClustering", "Average"):
        assert task in proc.stdout
    assert "[3/3] DemoNYTClustering" in proc.stderr
    row = next(line for line in proc.stdout.splitlines() if line.startswith("| DemoNYTClustering"))
    score = row.split("|")[3].strip()
    assert f"DemoNYTClustering: hmean_v_measure = {score} (" in proc.stderr  # log lines as the table: x100
    assert "DemoNYTClustering: 128/128 texts encoded in " in proc.stderr  # progress as log lines, not a bar
    assert "Loading weights" not in proc.stderr and "\r" not in proc.stderr
    printed = proc.stdout.split("Results: ")[1].split()[0]  # the folder printed is the folder written
    assert (tmp_path / printed / "DemoNYTClustering.json").is_file()
    assert (tmp_path / printed / "run_records" / "DemoNYTClustering.json").is_file()
    res = subprocess.run(
        [sys.executable, "-m", "bench", "results", str(tmp_path / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert res.returncode == 0 and "sentence-transformers/all-MiniLM-L6-v2" in res.stdout


def test_sigterm_is_handled_like_ctrl_c(capsys, monkeypatch):
    """A SIGTERM while a command runs: the same cleanup as a Ctrl-C (it is raised as a KeyboardInterrupt
    there), one line with the resume hint, exit 143; a Ctrl-C still exits 130; the handler is put back."""
    import signal

    from bench.cli.commands import listing

    def unhandled(signum, frame):  # what the test process does with a SIGTERM the CLI does not handle
        raise RuntimeError("SIGTERM not handled by the CLI")

    before = signal.signal(signal.SIGTERM, unhandled)
    cleaned: list[str] = []

    def killed(args):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            raise AssertionError("SIGTERM did not stop the command")
        except KeyboardInterrupt:
            cleaned.append("cleaned up")
            raise

    monkeypatch.setattr(listing, "_cmd_list", killed)
    try:
        code, out, err = _run(capsys, "list", "tasks")
        assert signal.getsignal(signal.SIGTERM) is unhandled  # put back
    finally:
        signal.signal(signal.SIGTERM, before)
    assert code == 143 and cleaned == ["cleaned up"] and out == "", err
    assert err.splitlines() == [
        "terminated (SIGTERM): finished tasks and encoded texts are saved; rerun the same command to resume."
    ]

    def ctrl_c(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(listing, "_cmd_list", ctrl_c)
    code, _, err = _run(capsys, "list", "tasks")
    assert code == 130 and err.startswith("interrupted: ") and "rerun the same command" in err
