"""The tiers hold (tests/tiers.py): outside `slow`, a real model fails the test that loads it, while a
tiny model built from a config passes; a test on the session's real runs is `slow` by its fixture."""

from __future__ import annotations

import os
import textwrap

import pytest

from conftest import ROOT

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.slow  # the inner sessions load MiniLM

INNER = textwrap.dedent(
    """
    import pytest
    from transformers import AutoModel, BertConfig, BertModel

    from bench.adapters.registry import MODELS

    MINILM = MODELS["all-MiniLM-L6-v2"].path()


    def test_real_model_outside_slow():
        AutoModel.from_pretrained(MINILM)


    @pytest.mark.slow
    def test_real_model_in_slow():
        AutoModel.from_pretrained(MINILM)


    def test_tiny_model_outside_slow(tmp_path):
        config = BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                            intermediate_size=16)
        BertModel(config).save_pretrained(tmp_path)
        AutoModel.from_pretrained(tmp_path)


    def test_on_the_session_runs(demo_results):
        pass
    """
)


@pytest.fixture
def inner(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    pytester.makeconftest('pytest_plugins = ["tiers"]\n')
    pytester.makepyfile(test_inner=INNER)
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow\n    registry: registry\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT / "tests"), str(ROOT)]))
    return pytester


def test_a_real_model_outside_slow_fails_the_test(inner: pytest.Pytester):
    result = inner.runpytest_subprocess("-p", "no:cacheprovider", "-k", "not session_runs")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*test_real_model_outside_slow loads a real model (22,713,216 parameters)*"])


def test_a_test_on_the_session_runs_is_slow(inner: pytest.Pytester):
    result = inner.runpytest_subprocess("-p", "no:cacheprovider", "-m", "not slow", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["*test_real_model_outside_slow*", "*test_tiny_model_outside_slow*"])
    assert "test_on_the_session_runs" not in result.stdout.str()
    assert "test_real_model_in_slow" not in result.stdout.str()
