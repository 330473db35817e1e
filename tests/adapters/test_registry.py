"""Model specs: names, family prefixes, paths; ablations become MTEB experiments."""

from __future__ import annotations

import pytest

from bench.adapters.registry import load_model, resolve
from bench.core.errors import UnknownNameError


def test_spec_forms(minilm_path, tmp_path):
    assert resolve("all-MiniLM-L6-v2")[:2] == ("mteb", minilm_path)  # MTEB's implementation by default
    assert resolve("st:org/some-model")[:2] == ("sentence-transformers", "org/some-model")
    assert resolve("generative:org/lm")[:2] == ("inbedder", "org/lm")  # an alias
    assert resolve(minilm_path)[0] == "mteb"
    assert resolve("org/some-model")[0] == "mteb"
    with pytest.raises(UnknownNameError, match="Did you mean: all-MiniLM-L6-v2"):
        resolve("all-minilm")


def test_options_that_change_vectors_become_experiments(tmp_path):
    default = load_model("all-MiniLM-L6-v2", cache_dir=tmp_path)
    assert default.mteb_model_meta.experiment_kwargs is None  # MTEB's own computation: MTEB's key
    assert default.name == "sentence-transformers/all-MiniLM-L6-v2" and default.family == "mteb"
    prefixed = load_model("all-MiniLM-L6-v2", template="prefix", cache_dir=tmp_path)
    assert prefixed.mteb_model_meta.experiment_kwargs == {"template": "prefix"}
    blind = load_model(
        "all-MiniLM-L6-v2", template="none", dtype="float16", batch_size=8, device="cpu", cache_dir=tmp_path
    )
    # half precision names the device kind too: fp16 kernels differ between a CPU and a GPU
    assert blind.mteb_model_meta.experiment_kwargs == {"template": "none", "dtype": "float16", "device_kind": "cpu"}
    assert blind.fingerprint != prefixed.fingerprint != default.fingerprint
    assert load_model("all-MiniLM-L6-v2", batch_size=8, cache_dir=tmp_path).mteb_model_meta.experiment_kwargs is None


@pytest.mark.registry
def test_run_flags_are_tagged_with_exactly_the_families_that_take_them():
    """`bench run --help` tags each family flag with every family whose constructor takes the option and for
    which it means something: --template is openai's too, --max-seq-length instructor's, and the API family
    runs no weights here, so it takes neither --device nor --dtype."""
    from bench.adapters.registry import FAMILIES, cli_flags

    tags = {option: set(owners.split(", ")) for option, (_, owners) in cli_flags().items()}
    ours = {
        f for f, cls in FAMILIES.items() if cls.__module__.startswith("bench.adapters.")
    }  # not the tests' toy families
    assert tags["template"] & ours == {"sentence-transformers", "openai"}
    assert tags["max_seq_length"] & ours == {"sentence-transformers", "instructor"}
    weights = ours - {"openai"}
    assert tags["device"] & ours == weights and tags["dtype"] & ours == weights
    assert {"mteb", "inbedder", "instructor", "gstransform"} <= weights


@pytest.mark.registry
def test_run_help_shows_the_family_tags(capsys, monkeypatch):
    from bench.cli.main import main

    monkeypatch.setenv("COLUMNS", "400")  # one line per flag
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    tags = {
        line.split()[0]: set(line.rsplit("[", 1)[1].rstrip("]").split(", "))
        for line in capsys.readouterr().out.splitlines()
        if line.strip().startswith("--") and line.endswith("]")
    }
    assert tags["--template"] == {"sentence-transformers", "openai"}
    assert tags["--max-seq-length"] == {"sentence-transformers", "instructor"}
    assert (
        "openai" not in tags["--device"] | tags["--dtype"]
        and {"mteb", "inbedder"} <= tags["--device"] & tags["--dtype"]
    )
