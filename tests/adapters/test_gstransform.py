"""GSTransform (bench/adapters/gstransform.py): loss, training, storage, and end to end on real AG News texts with a
rule-based LLM (tests/gstransform_oracle.py) behind the fake OpenAI server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from bench.adapters.gstransform import (
    GSTransformEncoder,
    TrainSettings,
    contrastive_loss,
    fit,
    load_transforms,
    save_transform,
    train_transform,
)
from bench.core.errors import ConfigError, ModelLoadError
from bench.core.llm_client import LLMClient, LLMConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from gstransform_agnews import INSTRUCTION, load_ag_news, split, triplet_accuracy, v_measure

N_TRAIN, N_EVAL = 160, 300


def test_contrastive_loss_by_hand():
    z = torch.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 0.5]])
    y = torch.tensor([0, 0, 1])
    # pairs: (0,1) same, d=5 -> 25; (0,2) different, d=0.5 -> (1-0.5)^2=0.25; (1,2) different, d=sqrt(9+12.25)>1 -> 0
    assert float(contrastive_loss(z, y, margin=1.0)) == pytest.approx((25 + 0.25 + 0) / 3)


@pytest.mark.slow
def test_fit_separates_labels_and_keeps_reconstruction():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 8)).astype(np.float32)
    y = (x[:, 0] > 0).astype(int)  # the label lives in one direction among eight
    weights, info = fit(x, y, TrainSettings(max_epochs=60, patience=60, learning_rate=1e-2))
    assert info["best_val_loss"] < info["initial_val_loss"] and info["n_validation"] == 40
    z = x @ weights["encoder_weight"].T + weights["encoder_bias"]
    centroid_gap = np.linalg.norm(z[y == 1].mean(0) - z[y == 0].mean(0)) / z.std()
    assert centroid_gap > np.linalg.norm(x[y == 1].mean(0) - x[y == 0].mean(0)) / x.std()
    assert set(weights) == {"encoder_weight", "encoder_bias", "decoder_weight", "decoder_bias"}


@pytest.fixture(scope="module")
def agnews(raw_dir):
    rows = load_ag_news(raw_dir / "CharCnn_Keras" / "data" / "ag_news_csv" / "test.csv")
    return split(rows, N_TRAIN, N_EVAL, seed=0)


@pytest.fixture(scope="module")
def trained(agnews, tmp_path_factory, minilm_path):
    """One transform trained through the real client against the fake server (shared by the tests below)."""
    from fake_openai import FakeOpenAI
    from gstransform_oracle import oracle_handler

    train, _ = agnews
    work = tmp_path_factory.mktemp("gst")
    server = FakeOpenAI(api_key=None).start()
    server.chat_handler = oracle_handler(dict(train))
    client = LLMClient(LLMConfig.from_options(llm_model="fake", base_url=server.base_url, llm_cache_dir=work / "llm"))
    try:
        folder = train_transform(
            [t for t, _ in train],
            instruction=INSTRUCTION,
            out_dir=work / "transforms",
            client=client,
            applies_to=["What is the topic of news?"],
            runtime_options={"cache_dir": work / "emb"},
            settings=TrainSettings(sample_size=N_TRAIN, n_clusters=50),
        )
    finally:
        client.close()
        server.close()
    return work, folder, client.ledger.as_dict(), len(server.requests)


@pytest.mark.slow
def test_training_writes_safetensors_and_config(trained):
    work, folder, ledger, n_requests = trained
    files = sorted(p.name for p in folder.iterdir())
    assert files == ["config.json", "labels.jsonl", "transform.safetensors"]
    assert not list(work.glob("transforms/**/*.pt")) and not list(work.glob("transforms/**/*.pkl"))
    config = json.loads((folder / "config.json").read_text())
    # Four distinct summaries -> k capped at 4 -> four labels, the AG News topics; every text classified.
    assert sorted(config["taxonomy"]) == ["Business", "Sci/Tech", "Sports", "World"]
    assert config["failures"] == {"summary": 0, "label": 0, "classify": 0}
    assert config["sample"]["labelled"] == N_TRAIN and sum(config["label_counts"].values()) == N_TRAIN
    assert config["applies_to"] == [INSTRUCTION, "What is the topic of news?"]
    assert config["settings"]["contrastive_weight"] == config["settings"]["reconstruction_weight"] == 1.0
    assert config["training"]["n_validation"] == N_TRAIN // 5
    assert set(config["prompts"]) == {"summary", "label", "classify"}
    assert n_requests == ledger["requests_sent"] == 2 * N_TRAIN + 4
    from safetensors import safe_open

    with safe_open(str(folder / "transform.safetensors"), "np") as f:
        assert f.get_tensor("encoder_weight").shape == (384, 384)


@pytest.mark.slow
def test_transform_improves_held_out_topic_scores_without_re_encoding(trained, agnews):
    work, _, _, _ = trained
    _, held = agnews
    texts, labels = [t for t, _ in held], [lab for _, lab in held]
    gst = GSTransformEncoder(str(work / "transforms"), cache_dir=str(work / "emb"))
    x = gst.base.encode_inputs([gst.base.render(t, None, None) for t in texts], show=False)
    encoded = gst.base.stats.encoded
    z = gst.encode_inputs([gst.render(t, INSTRUCTION, None) for t in texts], show=False)
    assert gst.base.stats.encoded == encoded  # the transform reused the cached generic vectors
    z_alias = gst.encode_inputs([gst.render(t, "What is the topic of news?", None) for t in texts[:5]], show=False)
    np.testing.assert_allclose(z_alias, z[:5], rtol=1e-6)
    base_acc, gst_acc = triplet_accuracy(x, labels, n=2000), triplet_accuracy(z, labels, n=2000)
    print(
        f"held-out triplet accuracy {base_acc:.4f} -> {gst_acc:.4f}; "
        f"V-measure {v_measure(x, labels):.4f} -> {v_measure(z, labels):.4f}"
    )
    assert gst_acc > base_acc + 0.025  # about 2.5 standard errors of the difference at n=2000


@pytest.mark.slow
def test_unknown_instruction_and_wrong_base_are_clear_errors(trained, tmp_path):
    work, folder, _, _ = trained
    gst = GSTransformEncoder(str(work / "transforms"), cache_dir=str(work / "emb"))
    with pytest.raises(ConfigError, match="serves the instruction 'Where did the news happen\\?'"):
        gst.encode_inputs([gst.render("a text", "Where did the news happen?", None)], show=False)
    config = json.loads((folder / "config.json").read_text())
    config["base_fingerprint"] = {**config["base_fingerprint"], "revision": "other"}
    from safetensors.numpy import load_file

    save_transform(tmp_path, weights=load_file(str(folder / "transform.safetensors")), config=config, sample=None)
    with pytest.raises(ConfigError, match="retrain it"):
        GSTransformEncoder(str(tmp_path), cache_dir=str(work / "emb"))


def test_missing_directory_is_a_load_error(tmp_path):
    with pytest.raises(ModelLoadError, match="gstransform train"):
        load_transforms(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelLoadError, match="No transform"):
        load_transforms(tmp_path / "empty")


@pytest.mark.slow
def test_registry_spec_loads_the_family(trained):
    from bench.adapters.registry import load_model

    work, _, _, _ = trained
    model = load_model(f"gstransform:{work / 'transforms'}", cache_dir=str(work / "emb"), batch_size=16)
    assert isinstance(model, GSTransformEncoder) and model.base_model == "all-MiniLM-L6-v2"
    assert model.revision.startswith("gst-") and model.base.batch_size == 16
    with pytest.raises(ConfigError, match="no option 'template'"):
        load_model(f"gstransform:{work / 'transforms'}", template="none")


@pytest.mark.slow
def test_cli_train_and_dry_run(agnews, fake_openai, tmp_path, capsys, monkeypatch):
    from bench.cli.main import main
    from gstransform_oracle import oracle_handler

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    train, _ = agnews
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(t for t, _ in train[:40]) + "\n", encoding="utf-8")
    fake_openai.chat_handler = oracle_handler(dict(train))
    argv = [
        "gstransform",
        "train",
        "--texts",
        str(texts),
        "--instruction",
        INSTRUCTION,
        "--out",
        str(tmp_path / "t"),
        "--sample-size",
        "30",
        "--llm-model",
        "fake",
        "--base-url",
        fake_openai.base_url,
    ]
    assert main([*argv, "--dry-run"]) == 0
    assert "requests at most: 110\n" in capsys.readouterr().out and fake_openai.requests == []  # readable lines
    assert main([*argv, "--dry-run", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["requests_at_most"] == 2 * 30 + 50 and fake_openai.requests == []
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["labelled"] == 30 and report["failures"] == {"summary": 0, "label": 0, "classify": 0}
    assert len(load_transforms(tmp_path / "t")) == 1


def test_a_transform_used_under_another_dtype_names_the_flag():
    from bench.adapters.gstransform import _dtype_hint

    trained = {"family": "st", "model": "m", "dtype": "float32"}
    assert _dtype_hint(trained, {**trained, "dtype": "bfloat16"}) == " (only the dtype differs: add --dtype float32)"
    assert _dtype_hint(trained, {**trained, "dtype": "bfloat16", "model": "other"}) == ""  # not the one fix
