"""Model options: `--model-args`, `--model-config`, family flags, options derived from signatures."""

from __future__ import annotations

import json

import pytest

from bench.adapters.registry import (
    coerce_option,
    describe_families,
    family_options,
    load_model,
    parse_model_args,
    read_model_config,
)
from bench.cli.commands.run import model_spec_and_options
from bench.cli.main import build_parser, main
from bench.core.errors import ConfigError
from toy_encoders import HashEncoder


def _error_line(capsys, *argv) -> str:
    code = main(list(argv))
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and "Traceback" not in err and lines[-1].startswith("error: "), err
    return lines[-1]


def test_parse_model_args():
    assert parse_model_args("pooling=1st-gen, dtype=float16") == {"pooling": "1st-gen", "dtype": "float16"}
    # a value may hold commas and '=' unless a comma is followed by `key=`
    assert parse_model_args("template=Instruct: {instruction}, then {text},max-seq-length=128") == {
        "template": "Instruct: {instruction}, then {text}",
        "max_seq_length": "128",
    }
    assert parse_model_args("") == {}
    with pytest.raises(ConfigError, match=r"--model-args item 'pooling' is not key=value; write e.g."):
        parse_model_args("pooling")
    with pytest.raises(ConfigError, match="gives 'dtype' twice"):
        parse_model_args("dtype=float16,dtype=float32")


def test_values_are_converted_by_annotation():
    assert coerce_option("batch_size", "8", "int") == 8
    assert coerce_option("max_seq_length", "none", "int | None") is None
    assert coerce_option("price", "0.5", "float | None") == 0.5
    assert coerce_option("use_cache", "false", "bool") is False
    assert coerce_option("revision", "1234", "str | None") == "1234"  # a str option stays a str
    assert coerce_option("batch_size", 8, "int") == 8  # typed values (YAML/JSON) pass through
    with pytest.raises(ConfigError, match=r"batch_size='many' is not a valid int"):
        coerce_option("batch_size", "many", "int")


def test_options_come_from_the_constructor_signatures():
    opts = family_options(HashEncoder)
    assert {"blind", "dim", "nan_for", "batch_size", "dtype", "cache_dir"} <= set(opts)
    assert not {"name", "experiment", "self", "kwargs"} & set(opts)
    assert opts["dim"].default == 64 and opts["batch_size"].default == 32
    families = {f["family"]: f for f in describe_families()}
    assert families["openai"]["options"]["max_retries"] == 5 and "dimensions" in families["openai"]["options"]
    assert families["sentence-transformers"]["options"]["template"] == "prefix"
    assert families["sentence-transformers"]["description"].startswith("A SentenceTransformer")


def test_string_options_load_typed_and_unknown_ones_list_the_valid(tmp_path):
    model = load_model("all-MiniLM-L6-v2", batch_size="8", max_seq_length="128", template="none", cache_dir=tmp_path)
    assert model.batch_size == 8 and model.max_seq_length == 128
    assert model.mteb_model_meta.experiment_kwargs == {"template": "none", "max_seq_length": 128}
    with pytest.raises(
        ConfigError, match=r"'mteb' has no option 'pooling'\. Its options: .*--template.*max_seq_length, template"
    ):
        load_model("all-MiniLM-L6-v2", pooling="1st-gen")
    with pytest.raises(
        ConfigError, match=r"'sentence-transformers' has no option 'pooling'\. Its options: .*max_seq_length.*template"
    ):
        load_model("all-MiniLM-L6-v2", pooling="1st-gen", template="none")
    with pytest.raises(ConfigError, match=r"no option 'dimension'\. Did you mean: dimensions\?"):
        load_model("openai:fake", dimension=8)
    with pytest.raises(ConfigError, match="no option 'api_key'"):  # keys come from the environment only
        load_model("openai:fake", api_key="sk-x")


def test_cli_option_errors_are_one_line(capsys, tmp_path):
    out = ["--output-dir", str(tmp_path)]
    line = _error_line(capsys, "run", "--model-args", "pooling=1st-gen", *out)
    assert "Model family 'mteb' has no option 'pooling'" in line and "--template" in line
    line = _error_line(capsys, "run", "--pooling", "1st-gen", *out)
    assert "has no option 'pooling'" in line
    line = _error_line(capsys, "run", "--model-args", "batch_size=big", *out)
    assert "batch_size='big' is not a valid int" in line
    line = _error_line(capsys, "run", "--model-args", "oops", *out)
    assert "--model-args item 'oops' is not key=value" in line
    line = _error_line(capsys, "run", "--model-config", str(tmp_path / "missing.yaml"), *out)
    assert "Cannot read --model-config" in line
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: [unclosed\n")
    assert "is not valid YAML" in _error_line(capsys, "run", "--model-config", str(bad), *out)
    bad.write_text("- a\n- b\n")
    assert "must hold a mapping" in _error_line(capsys, "run", "--model-config", str(bad), *out)


def _spec(*argv):
    return model_spec_and_options(build_parser(full_run=True).parse_args(["run", *argv]))


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_model_config_file_and_precedence(tmp_path, suffix):
    data = {
        "model": "openai:text-embedding-3-small",
        "dimensions": 256,
        "template": "none",
        "model_args": {"max_retries": 2, "template": "ignored: top-level keys win {text}"},
    }
    path = tmp_path / f"model{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(data))
    else:
        import yaml

        path.write_text(yaml.safe_dump(data))
    assert read_model_config(path) == (
        "openai:text-embedding-3-small",
        {"max_retries": 2, "template": "none", "dimensions": 256},
    )
    assert _spec("--model-config", str(path)) == (
        "openai:text-embedding-3-small",
        {"max_retries": 2, "template": "none", "dimensions": 256},
    )
    # --model-args override the file; family flags override both; --model overrides the file's model
    spec, options = _spec(
        "--model-config",
        str(path),
        "--model-args",
        "dimensions=64,template=prefix",
        "--template",
        "{instruction}: {text}",
        "--model",
        "openai:text-embedding-3-large",
    )
    assert spec == "openai:text-embedding-3-large"
    assert options == {"max_retries": 2, "template": "{instruction}: {text}", "dimensions": "64"}
    model = load_model(spec, **options, use_cache=False)
    assert model.dimensions == 64 and model.template == "{instruction}: {text}" and model.max_retries == 2
    assert _spec() == ("all-MiniLM-L6-v2", {})


def test_list_models_shows_families_and_options(capsys):
    assert main(["list", "models"]) == 0
    out = capsys.readouterr().out
    for text in (
        "all-MiniLM-L6-v2",
        "sentence-transformers:",
        "st:",
        "openai:",
        "template='prefix'",
        "dimensions=None",
        "max_retries=5",
        "--model-args",
    ):
        assert text in out, text
