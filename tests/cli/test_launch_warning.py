"""`accelerate launch --num_processes 2` without `--multi_gpu` runs one process and says nothing: `bench run`
says it (bench/run/launcher.py), from the variables accelerate sets in the process it starts."""

from __future__ import annotations

import pytest

from bench.cli.commands import run as run_command
from bench.run import launcher
from bench.run.launcher import single_process_launch_warning

# What accelerate's simple launcher (one process) puts in the child's environment (accelerate/utils/launch.py)
SIMPLE_LAUNCH = {"ACCELERATE_USE_CPU": "False", "ACCELERATE_MIXED_PRECISION": "no", "ACCELERATE_DYNAMO_BACKEND": "NO"}
LAUNCHER = ["/venv/bin/python", "/venv/bin/accelerate", "launch", "--num_processes", "2", "-m", "bench", "run"]


def test_one_process_from_accelerate_launch_is_named_with_the_processes_asked_for():
    line = single_process_launch_warning(SIMPLE_LAUNCH, LAUNCHER)
    assert line == (
        "warning: accelerate launch started one process; for 2 processes add --multi_gpu (GPUs) "
        "or use torchrun --nproc_per_node 2"
    )
    assert "for 4 processes" in single_process_launch_warning(
        {"ACCELERATE_USE_CPU": "True", "WORLD_SIZE": "1"},
        ["accelerate", "launch", "--cpu", "--num-processes=4", "x.py"],
    )
    # the launcher's command line unreadable: N
    assert "for N processes" in single_process_launch_warning(SIMPLE_LAUNCH, [])


@pytest.mark.parametrize(
    ("env", "argv"),
    [
        ({**SIMPLE_LAUNCH, "WORLD_SIZE": "2", "RANK": "0"}, LAUNCHER),  # a real multi-process launch
        ({}, LAUNCHER),  # not launched by accelerate
        ({"WORLD_SIZE": "1"}, []),  # a plain run
        (SIMPLE_LAUNCH, ["accelerate", "launch", "--num_processes=1", "-m", "bench", "run"]),  # one process, as asked
    ],
)
def test_no_warning_otherwise(env, argv):
    assert single_process_launch_warning(env, argv) is None


def test_bench_run_logs_it_first(monkeypatch, caplog):
    """`bench run` logs the line before it imports or loads anything (here the run then stops at once)."""
    import sys

    for name, value in SIMPLE_LAUNCH.items():
        monkeypatch.setenv(name, value)
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(launcher, "_launcher_argv", lambda: LAUNCHER)
    monkeypatch.setitem(sys.modules, "bench.adapters.distributed", None)  # the first import after the check: stop there
    from bench.cli.main import build_parser

    args = build_parser().parse_args(["run"])  # the names are checked after the warning, before any import
    with caplog.at_level("WARNING"), pytest.raises(ImportError):
        run_command._cmd_run(args)
    assert [r.getMessage() for r in caplog.records] == [
        (
            "warning: accelerate launch started one process; for 2 processes add --multi_gpu (GPUs) "
            "or use torchrun --nproc_per_node 2"
        )
    ]
