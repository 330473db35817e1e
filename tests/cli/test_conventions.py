"""MTEB's and lm-eval's command-line habits (issue 43, "Conventions"): a suite named by its MTEB benchmark name,
comma lists for `-t`, `--batch-size auto`, `--output-folder`; names checked before MTEB is imported; a mistyped
option answered with the closest one, for every subcommand."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from bench.adapters.option_values import MODEL_ARGS, OptionSource, coerce_option
from bench.adapters.registry import convert_options, load_model
from bench.cli.main import build_parser, main
from bench.core.errors import ConfigError, UnknownNameError
from conftest import ROOT


def _dry_run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["run", *argv, "--dry-run"]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def _tasks_of(table: str) -> list[str]:
    """The task column of a dry run's table (its rows before Total)."""
    return [line.split("|")[1].strip() for line in table.splitlines() if re.match(r"\| (?!Task|Total|-)", line)]


# ------------------------------------------------------------------------------------- suites
@pytest.mark.parametrize("name", ["InstructBench-demo", "instructbench-demo"])
def test_a_suite_is_named_by_its_mteb_benchmark_name(capsys, name):
    assert _tasks_of(_dry_run(capsys, "--suite", name)) == _tasks_of(_dry_run(capsys, "--suite", "demo"))


def test_the_task_registry_takes_a_benchmark_name_too():
    from bench.tasks import task_names

    assert task_names(suite="InBedder-robustness") == task_names(suite="robustness")


def test_a_variants_file_built_for_a_benchmark_name_is_named_for_its_suite():
    from bench.dataset_builders.instruction_variants import _task_selection

    assert _task_selection(None, "INSTRUCTOR-STS") == _task_selection(None, "generic-sts")


def test_an_unknown_suite_gets_the_closest_suite_or_benchmark_names(capsys):
    assert main(["run", "--suite", "InstructBench-dem", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: Unknown suite 'InstructBench-dem'. Did you mean: InstructBench-demo")


# ------------------------------------------------------------------------------------- task lists
@pytest.mark.parametrize(
    "argv",
    [
        ["-t", "DemoInstructSTS,DemoNYTClustering"],
        ["-t", "DemoInstructSTS", "DemoNYTClustering"],
        ["--tasks", "DemoInstructSTS, DemoNYTClustering"],
        ["-t", "DemoInstructSTS,", "DemoNYTClustering"],
    ],
    ids=["comma", "space", "comma-space", "trailing-comma"],
)
def test_tasks_are_comma_or_space_separated(capsys, argv):
    assert _tasks_of(_dry_run(capsys, *argv)) == ["DemoInstructSTS", "DemoNYTClustering"]


def test_a_task_list_of_commas_only_is_refused(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["run", "-t", ",", "--dry-run"])
    assert stop.value.code == 2
    assert "-t names no task" in capsys.readouterr().err


# ------------------------------------------------------------------------------------- --batch-size auto
def test_batch_size_auto_dry_runs(capsys):
    assert _tasks_of(_dry_run(capsys, "-t", "DemoInstructSTS", "--batch-size", "auto")) == ["DemoInstructSTS"]


@pytest.mark.parametrize(
    "source",
    [OptionSource("flag", "--batch-size"), MODEL_ARGS, OptionSource("file", "model.yaml")],
    ids=["flag", "model-args", "file"],
)
def test_batch_size_auto_is_the_familys_default_from_every_source(source):
    options = convert_options("all-MiniLM-L6-v2", [(source, {"batch_size": "Auto "})])
    assert options == {"batch_size": None}
    model = load_model("all-MiniLM-L6-v2", **options)
    # not given: its documented default, and on CUDA an LM family's device budget (DeviceBatches reads
    # `_given_options`: tests/adapters/test_device_budget.py)
    assert model.batch_size == 32 and "batch_size" not in model._given_options


def test_batch_size_auto_from_python_is_the_familys_default_too():
    model = load_model("all-MiniLM-L6-v2", batch_size="auto")
    assert model.batch_size == 32 and "batch_size" not in model._given_options


def test_auto_passes_the_one_conversion_and_its_int_checks_hold():
    assert coerce_option("batch_size", "auto", "int", MODEL_ARGS, default=32) is None
    for value in ("2.5", "automatic", True, 2.0):
        with pytest.raises(ConfigError):
            coerce_option("batch_size", value, "int", MODEL_ARGS, default=32)
    with pytest.raises(ConfigError):  # only the options that take it read `auto`
        coerce_option("max_seq_length", "auto", "int", MODEL_ARGS)


def test_reproduce_takes_batch_size_auto_through_the_same_conversion(capsys):
    parse = build_parser().parse_args
    assert parse(["reproduce", "inbedder-table1", "--batch-size", "auto"]).batch_size is None
    assert parse(["reproduce", "inbedder-table1", "--batch-size", "8"]).batch_size == 8
    with pytest.raises(SystemExit):
        parse(["reproduce", "inbedder-table1", "--batch-size", "2.5"])
    assert "not a valid int (a number with a fraction" in capsys.readouterr().err


# ------------------------------------------------------------------------------------- --output-folder
@pytest.mark.parametrize("flag", ["--output-dir", "--output-folder"])
def test_output_folder_is_output_dir(flag, tmp_path):
    for command in (["run"], ["reproduce", "inbedder-table1"]):
        args = build_parser(full_run=True).parse_args([*command, flag, str(tmp_path)])
        assert args.output_dir == str(tmp_path)


# ------------------------------------------------------------------------------------- typos
@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["run", "--tempalte", "none"], "--tempalte: did you mean --template?"),
        (["run", "-t", "DemoInstructSTS", "--output-foldr=x"], "--output-foldr: did you mean --output-folder?"),
        (["list", "tasks", "--verbse"], "--verbse: did you mean --verbose?"),
        (["results", "results", "--formt", "csv"], "--formt: did you mean --format?"),
    ],
)
def test_a_mistyped_option_is_answered_with_the_closest(capsys, argv, hint):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"bench {argv[0]}: error: unrecognized arguments" in err and hint in err


def test_an_unknown_model_family_is_answered_before_any_model_loads(capsys):
    assert main(["run", "--model", "inbeder:x.gguf", "--dry-run"]) == 2
    assert capsys.readouterr().err.startswith("error: Unknown model family 'inbeder'. Did you mean: inbedder?")


# ------------------------------------------------------------------------------------- no MTEB for a typo
def _imported(*argv: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """A fresh `python -X importtime -m bench ARGS` and the top-level modules it imported."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "bench", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
        env={**os.environ, "COLUMNS": "120"},
    )
    modules = {m.group(1).split(".")[0] for m in re.finditer(r"^import time:.*\| +(\S+)$", proc.stderr, re.M)}
    return proc, modules


@pytest.fixture
def warm_catalogues() -> None:
    """The task catalogue and the run-flag table of this checkout in the session's cache (a first `bench run`
    writes them)."""
    from bench.adapters.registry import run_flags
    from bench.results.task_catalog import catalog

    catalog()
    run_flags()


@pytest.mark.parametrize(
    ("argv", "answer"),
    [
        (["-t", "DemoIntentEmoton"], "Did you mean: DemoIntentEmotion"),
        (["--suite", "InstructBench-dem"], "Did you mean: InstructBench-demo"),
        (["--model", "inbeder:x.gguf"], "Did you mean: inbedder?"),
    ],
    ids=["task", "suite", "family"],
)
def test_a_mistyped_name_is_answered_without_importing_mteb(warm_catalogues, argv, answer):
    proc, modules = _imported("run", *argv)
    assert proc.returncode == 2
    assert answer in proc.stderr
    assert "bench" in modules  # the importtime report was read
    assert not modules & {"mteb", "torch", "transformers", "sentence_transformers"}


def test_a_mistyped_option_imports_no_mteb(warm_catalogues):
    proc, modules = _imported("run", "--tempalte", "none")
    assert proc.returncode == 2 and "did you mean --template?" in proc.stderr
    assert "mteb" not in modules


def test_an_mteb_task_name_passes_the_early_check():
    from bench.cli.run_names import check_run_names

    assert check_run_names(["Banking77Classification", "DemoInstructSTS"], None) is None
    with pytest.raises(UnknownNameError, match="Did you mean: Banking77Classification"):
        check_run_names(["Banking77Classificaton"], None)


def test_a_dry_run_with_every_text_cached_counts_zero_tokens():
    """A dry run after a run of the same tasks has nothing to encode: zero tokens, not the fast tokenizer's
    IndexError on an empty batch (the mteb.md example above dry-runs the demo after its Python block ran it)."""
    from bench.adapters.mteb_zoo import dry_run_tokens, weightless

    model = load_model("all-MiniLM-L6-v2", use_cache=False)
    with weightless(model):
        model.ensure_loaded()
        assert dry_run_tokens(model, []) == {"tokens": 0, "tokens_method": "the model's tokenizer"}
