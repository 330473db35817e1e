"""One conversion for every option source (issue 40, item 3): `--model-config` (YAML/JSON), `--model-args`
and the family flags are read against the family constructor's annotations by `coerce_option`, and a value
that does not fit is one `error:` line naming the file or flag, the option and the type, exit 2, before any
task or model loads (`--dry-run` too). Each probe ran the landed code into a TypeError traceback inside
MTEB's batching (exit 1), or was silently taken."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest

from bench.adapters.base import BaseEncoder
from bench.adapters.option_values import MODEL_ARGS, OptionSource, coerce_option, option_type
from bench.adapters.registry import FAMILIES, convert_options
from bench.cli.commands.run import model_option_layers
from bench.cli.main import build_parser, main
from bench.core.errors import ConfigError

HUGE = "9" * 4000  # fewer digits than Python's 4,300-digit limit: it parses, and is no batch size


def _one_error_line(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The error line of `bench run ARGV --dry-run`: exit 2, no traceback, exactly one `error:` line."""
    code = main(["run", *argv, "--tasks", "DemoInstructSTS", "--dry-run"])
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if line.startswith("error:")]
    assert code == 2 and "Traceback" not in captured.err and len(errors) == 1, captured.err
    assert "Dry run" not in captured.out  # refused before anything was counted
    return errors[0]


def _config(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# ------------------------------------------------------------------------ --model-config: typed values
@pytest.mark.parametrize(
    ("name", "text", "key", "annotation", "why"),
    [
        ("float.yaml", "batch_size: 2.5\n", "batch_size", "int", "a number with a fraction, not a whole number"),
        ("bool.yaml", "batch_size: true\n", "batch_size", "int", "a boolean, not a whole number"),
        ("inf.yaml", "batch_size: .inf\n", "batch_size", "int", "inf is not a finite number"),
        ("nan.yaml", "batch_size: .nan\n", "batch_size", "int", "nan is not a finite number"),
        ("huge.yaml", f"batch_size: {HUGE}\n", "batch_size", "int", "an integer of 4,000 digits"),
        ("inf.json", '{"batch_size": 1e999}', "batch_size", "int", "inf is not a finite number"),
        ("nested.yaml", "model_args:\n  batch_size: 2.5\n", "batch_size", "int", "not a whole number"),
        ("float-nan.yaml", "model: openai:fake\ntimeout: .nan\n", "timeout", "float", "nan is not a finite"),
        ("float-inf.json", '{"model": "openai:fake", "timeout": 1e999}', "timeout", "float", "inf is not a finite"),
        ("float-bool.yaml", "model: openai:fake\nprice: false\n", "price", "float | None", "a boolean, not a number"),
        ("str-number.yaml", "revision: 1234\n", "revision", "str | None", "quote it"),
    ],
)
def test_a_config_value_that_does_not_fit_is_one_line(capsys, tmp_path, name, text, key, annotation, why):
    path = _config(tmp_path, name, text)
    line = _one_error_line(capsys, "--model-config", path)
    assert line.startswith(f"error: --model-config {path}: {key}=") and f"is not a valid {annotation} (" in line
    assert why in line and f"`{key}: " in line and "in the file" in line  # the fix, as it is written there


def test_a_huge_config_integer_is_shown_short(capsys, tmp_path):
    line = _one_error_line(capsys, "--model-config", _config(tmp_path, "m.yaml", f"batch_size: {HUGE}\n"))
    assert "<integer of about 4,000 digits>" in line and len(line) < 400


# ------------------------------------------------------------------------ --model-config: the file's shape
@pytest.mark.parametrize(
    ("name", "text", "expect"),
    [
        ("empty.yaml", "", "is empty"),
        ("comments.yaml", "# model: all-MiniLM-L6-v2\n", "is empty"),
        ("braces.yaml", "{}\n", "is empty"),
        ("empty.json", "{}", "is empty"),
        ("list.yaml", "- batch_size: 8\n", "must hold a mapping (model: SPEC, option: value, ...), not a list"),
        ("list.json", '[{"batch_size": 8}]', "must hold a mapping (model: SPEC, option: value, ...), not a list"),
        ("text.yaml", "all-MiniLM-L6-v2\n", "must hold a mapping (model: SPEC, option: value, ...), not a string"),
        (
            "args-list.yaml",
            "model_args: [batch_size, 8]\n",
            "model_args must be a mapping of option: value, not a list",
        ),
        ("args-zero.yaml", "model_args: 0\n", "model_args must be a mapping of option: value, not a number"),
    ],
)
def test_a_config_file_of_the_wrong_shape_is_one_line(capsys, tmp_path, name, text, expect):
    path = _config(tmp_path, name, text)
    line = _one_error_line(capsys, "--model-config", path)
    assert line.startswith(f"error: --model-config {path}") and expect in line


# ------------------------------------------------------------------------ --model-args and flags: text
@pytest.mark.parametrize(
    ("model", "item", "annotation", "why"),
    [
        ("all-MiniLM-L6-v2", "batch_size=2.5", "int", "a number with a fraction, not a whole number"),
        ("all-MiniLM-L6-v2", "batch_size=true", "int", "a boolean, not a whole number"),
        ("all-MiniLM-L6-v2", "batch_size=inf", "int", "inf is not a finite number"),
        ("all-MiniLM-L6-v2", "batch_size=nan", "int", "nan is not a finite number"),
        ("all-MiniLM-L6-v2", "batch_size=1e999", "int", "inf is not a finite number"),
        ("all-MiniLM-L6-v2", f"batch_size={HUGE}", "int", "an integer of 4,000 digits"),
        ("all-MiniLM-L6-v2", f"batch_size={HUGE}{HUGE[:1000]}", "int", "an integer of 5,000 digits"),  # past int()'s
        ("openai:fake", "timeout=inf", "float", "inf is not a finite number"),
        ("openai:fake", "timeout=nan", "float", "nan is not a finite number"),
        ("openai:fake", "timeout=1e999", "float", "inf is not a finite number"),
        ("openai:fake", "max_retries=-inf", "int", "-inf is not a finite number"),
    ],
)
def test_a_model_args_value_that_does_not_fit_names_model_args(capsys, model, item, annotation, why):
    key = item.partition("=")[0]
    line = _one_error_line(capsys, "--model", model, "--model-args", item)
    assert line.startswith(f"error: --model-args: {key}=") and f"is not a valid {annotation} ({why}" in line
    assert f"give e.g. --model-args {key}=" in line


@pytest.mark.parametrize(
    ("argv", "flag", "why"),
    [
        (("--batch-size", "2.5"), "--batch-size", "not a whole number"),
        (("--batch-size", "true"), "--batch-size", "a boolean"),
        (("--batch-size", HUGE), "--batch-size", "an integer of 4,000 digits"),
        (("--model", "openai:fake", "--price", "inf"), "--price", "inf is not a finite number"),
        (("--model", "openai:fake", "--max-retries", "nan"), "--max-retries", "nan is not a finite number"),
    ],
)
def test_a_flag_value_that_does_not_fit_names_the_flag(capsys, argv, flag, why):
    line = _one_error_line(capsys, *argv)
    assert line.startswith(f"error: {flag}: ") and why in line and f"give e.g. {flag} " in line


def test_a_later_source_is_named_for_the_value_it_gave(capsys, tmp_path):
    """The file's valid value is overridden by --model-args' bad one: the line names --model-args, not the file."""
    path = _config(tmp_path, "m.yaml", "batch_size: 8\n")
    line = _one_error_line(capsys, "--model-config", path, "--model-args", "batch_size=8.5")
    assert line.startswith("error: --model-args: batch_size='8.5'")
    line = _one_error_line(capsys, "--model-config", path, "--model-args", "batch_size=4", "--batch-size", "x")
    assert line.startswith("error: --batch-size: batch_size='x'")


# ------------------------------------------------------------------------ Literal choices
@pytest.fixture
def choosy():
    """A family whose options are Literals (defined here: a family registers itself when its class is made)."""

    class Choosy(BaseEncoder):
        family = "choosy-test"

        def __init__(
            self, path: str, *, readout: Literal["mean", "last"] = "mean", level: Literal[1, 2] = 1, **kw: Any
        ):
            super().__init__(**kw)

    yield Choosy
    FAMILIES.pop("choosy-test", None)


def test_literal_choices_are_checked_against_their_values(choosy, capsys, tmp_path):
    line = _one_error_line(capsys, "--model", "choosy-test:x", "--model-args", "readout=max")
    assert line.startswith("error: --model-args: readout='max' is not a valid Literal['mean', 'last']")
    assert "not one of 'mean', 'last'" in line and "give e.g. --model-args readout=mean" in line
    path = _config(tmp_path, "m.yaml", "model: choosy-test:x\nlevel: 3\n")
    assert "level=3 is not a valid Literal[1, 2] (not one of 1, 2)" in _one_error_line(capsys, "--model-config", path)
    path = _config(tmp_path, "m.yaml", "model: choosy-test:x\nlevel: true\n")  # True == 1, but is no choice
    assert "level=true is not a valid Literal[1, 2]" in _one_error_line(capsys, "--model-config", path)
    assert coerce_option("readout", "last", "Literal['mean', 'last']") == "last"
    assert coerce_option("level", "2", "Literal[1, 2]", MODEL_ARGS) == 2  # text becomes the choice it spells
    assert coerce_option("level", 1, "typing.Literal[1, 2] | None") == 1


# ------------------------------------------------------------------------ valid values: as before
def _spec(*argv: str) -> tuple[str, dict[str, Any]]:
    """The spec and the options `bench run ARGV` runs with."""
    spec, layers = model_option_layers(build_parser(full_run=True).parse_args(["run", *argv]))
    return spec, convert_options(spec, layers)


def test_valid_values_are_the_same_from_every_source(tmp_path):
    yaml_path = _config(
        tmp_path,
        "m.yaml",
        "model: openai:fake\nbatch_size: 8\ntimeout: 5\nprice: 0.5\nmax-retries: '2'\ndimensions: null\n"
        "base_url: http://localhost:1\n",
    )
    typed = {"batch_size": 8, "timeout": 5, "price": 0.5, "max_retries": 2, "dimensions": None}
    assert _spec("--model-config", yaml_path) == ("openai:fake", {**typed, "base_url": "http://localhost:1"})
    json_path = _config(tmp_path, "m.json", json.dumps({"model": "openai:fake", **typed}))
    assert _spec("--model-config", json_path) == ("openai:fake", typed)
    text = "batch_size=8,timeout=5,price=0.5,max_retries=2,dimensions=none"
    assert _spec("--model", "openai:fake", "--model-args", text) == ("openai:fake", typed)
    # an int for a float option stays an int, as it always did (its experiment name and cache key with it);
    # text for a float option reads as a float, as it always did
    assert type(_spec("--model-config", yaml_path)[1]["timeout"]) is int
    assert type(_spec("--model", "openai:fake", "--model-args", "timeout=5")[1]["timeout"]) is float
    assert _spec("--model", "openai:fake", "--batch-size", "8", "--price", "0.5") == (
        "openai:fake",
        {"batch_size": 8, "price": 0.5},
    )
    # the mteb family's options, and an option it does not take, left for load_model to refuse with its list
    assert _spec("--model-args", "batch_size=16,dtype=float16") == (
        "all-MiniLM-L6-v2",
        {"batch_size": 16, "dtype": "float16"},
    )
    assert _spec("--model-args", "pooling=1st-gen") == ("all-MiniLM-L6-v2", {"pooling": "1st-gen"})


def test_the_conversion_rules_by_annotation():
    assert coerce_option("layer", "3", "int | str") == 3 and coerce_option("layer", "last", "int | str") == "last"
    assert coerce_option("layer", -1, "int | str") == -1
    assert coerce_option("filter_words", "a|b", "list[str] | tuple[str, ...] | None") == "a|b"  # the family splits
    assert coerce_option("filter_words", ["a", "b"], "list[str] | tuple[str, ...] | None") == ["a", "b"]
    assert coerce_option("prompts", ["q: "], "str | list[str]") == ["q: "]
    assert coerce_option("cache_dir", Path("/x"), "str | Path | None") == Path("/x")
    assert coerce_option("use_cache", "no", "bool") is False and coerce_option("flag", "on", "bool | None") is True
    assert coerce_option("anything", "8", "") == 8 and coerce_option("anything", {"a": 1}, "") == {"a": 1}
    assert coerce_option("batch_size", 2**63 - 1, "int") == 2**63 - 1
    assert option_type("Optional[Union[int, 'float']]").names == frozenset({"int", "float", "None"})
    for value, annotation, why in [
        (2**63, "int", "an integer of 19 digits"),
        (2.0, "int", "not a whole number"),
        (["a", 1], "list[str] | None", "a number"),
        ({"a": 1}, "int", "a mapping, not a whole number"),
        ("x", "list[int]", "text, not a list"),
        (float("inf"), "float | None", "not a finite number"),
    ]:
        with pytest.raises(ConfigError, match="is not a valid") as e:
            coerce_option("k", value, annotation, OptionSource("flag", "--k"))
        assert why in str(e.value) and str(e.value).startswith("--k: k=")


def test_a_literal_alias_in_a_constructor_is_spelled_out_for_the_parser():
    # issue 41, item 3: `pooling: Pooling` (a module's Literal alias) is read as its values, not as text
    from bench.adapters.options import spelled_out

    namespace = {"Mode": Literal["a", "b"], "Text": str}
    assert spelled_out("Mode", namespace) == "Literal['a', 'b']"
    assert spelled_out("Mode | None", namespace) == "Literal['a', 'b'] | None"
    assert spelled_out("Text | int", namespace) == "Text | int"  # not a Literal: as written
    assert spelled_out("list[Mode]", namespace) == "list[Mode]"  # only whole union members


@pytest.mark.parametrize(
    ("key", "bad"), [("pooling", "mean"), ("architecture", "decoder"), ("readout_formula", "book")]
)
def test_the_generative_familys_fixed_choices_are_checked_by_the_option_parser(key, bad):
    from bench.adapters.generative import GenerativeEncoder
    from bench.adapters.options import family_options

    info = family_options(GenerativeEncoder)[key]
    assert info.annotation.startswith("Literal[")
    with pytest.raises(ConfigError, match=f"{key}='{bad}' is not a valid Literal\\[.*not one of"):
        coerce_option(key, bad, info.annotation, MODEL_ARGS, default=info.default)
    assert coerce_option(key, info.default, info.annotation, MODEL_ARGS) == info.default
