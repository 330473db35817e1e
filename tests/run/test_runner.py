"""`bench run` end to end on the real default model: parity with mteb.evaluate, resume, records."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import mteb
import pytest

from bench.adapters.mteb_model import MTEBModel
from bench.adapters.registry import load_model
from bench.dataset_builders.label_derived import build_instruct_stsb_proxy, build_intent_emotion_proxy
from bench.run.runner import RunOptions, run
from bench.tasks import get_tasks
from bench.tasks.abstasks.base import PACKAGED_DATA_DIR

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def local_data(tmp_path_factory, raw_dir) -> Path:
    """The three tasks' published schemas, filled from real data where it exists here.

    IntentEmotion: BANKING77 intent triplets + GoEmotions emotion triplets (label-derived proxies).
    InstructSTSB: STS-B test pairs with binarised gold scores (proxy).
    NYTClustering: no NYT texts exist here, so the demo news items, laid out as topic.csv/location.csv.
    """
    root = tmp_path_factory.mktemp("data")
    build_intent_emotion_proxy(source_dir=raw_dir, out_dir=root, size=60)
    build_instruct_stsb_proxy(source_dir=raw_dir, out_dir=root, size=80)
    shutil.copytree(PACKAGED_DATA_DIR / "DemoNYTClustering", root / "NYTClustering")
    return root


def _options(tmp_path: Path, **kw) -> RunOptions:
    base = dict(output_dir=str(tmp_path / "out"), cache_dir=str(tmp_path / "cache"), show_progress_bar=False)
    return RunOptions(**{**base, **kw})


def test_bench_run_equals_mteb_evaluate_on_each_task(local_data, tmp_path):
    names = ["IntentEmotion", "InstructSTSB", "NYTClustering"]
    outcomes = run(_options(tmp_path, tasks=names, data_dir=str(local_data)))
    model = load_model("all-MiniLM-L6-v2", use_cache=False)
    for outcome, task in zip(outcomes, get_tasks(names, data_dir=local_data), strict=True):
        direct = mteb.evaluate(model, task, cache=None, show_progress_bar=False, co2_tracker=False)
        direct_scores = direct.task_results[0].scores["test"][0]
        for key, value in direct_scores.items():
            if isinstance(value, float):  # result files keep 6 decimals, as MTEB writes them
                assert outcome.scores[key] == pytest.approx(round(value, 6), abs=1e-12), (task.metadata.name, key)
        assert outcome.status == "computed"
        assert outcome.record["task"]["dataset"]["source"] == f"local:{local_data.name}"  # never a local path
        manifest = local_data / task.metadata.name / "manifest.json"  # the builder's word on its data
        note = json.loads(manifest.read_text())["note"] if manifest.is_file() else None
        assert outcome.record["task"]["dataset"]["stand_in_note"] == note
        assert outcome.record["task"]["dataset"]["stand_in"] is (task.metadata.name != "NYTClustering")


def test_task_classes_run_under_stock_mteb_models(local_data, minilm_path):
    from sentence_transformers import SentenceTransformer

    task = get_tasks(["IntentEmotion"], data_dir=local_data, limit=20)[0]
    result = mteb.evaluate(
        SentenceTransformer(minilm_path), task, cache=None, show_progress_bar=False, co2_tracker=False
    )
    assert 0.0 <= result.task_results[0].get_score() <= 1.0


def test_result_files_and_run_record(tmp_path):
    run(_options(tmp_path, suite="demo"))
    cache = mteb.ResultCache(tmp_path / "out" / "instruct-bench")  # the harness's tasks: beside MTEB's folder
    results = cache.load_results(models=["sentence-transformers/all-MiniLM-L6-v2"], require_model_meta=False)
    assert {r.task_name for m in results.model_results for r in m.task_results} == {
        "DemoIntentEmotion",
        "DemoInstructSTS",
        "DemoNYTClustering",
    }
    record_path = next((tmp_path / "out").rglob("run_records/DemoIntentEmotion.json"))
    record = json.loads(record_path.read_text())
    assert record["model"]["family"] == "mteb" and record["model"]["experiment"] == {}  # MTEB's computation
    assert record["model"]["settings"]["implementation"] == {
        "loader": "SentenceTransformerEncoderWrapper",
        "loader_kwargs": {},
    }
    prefixed = run(_options(tmp_path, tasks=["DemoIntentEmotion"], template="prefix"))[0].record
    assert prefixed["model"]["settings"]["instruction_template"] == "prefix"
    assert len(prefixed["model"]["settings"]["instruction_template_sha256"]) == 64
    assert prefixed["model"]["experiment"] == {"template": "prefix"}
    assert record["task"]["instructions"] == {
        "criteria": {"emotion": "How does the customer feel?", "intent": "What does the customer need?"}
    }
    assert len(record["task"]["instructions_sha256"]) == 64
    assert record["task"]["seed"] == 42 and record["task"]["dataset"]["revision"].startswith("local-")
    # the packaged weights are the published ones: MTEB's name and revision, and the check that says so
    assert record["model"]["revision"] == mteb.get_model_meta("sentence-transformers/all-MiniLM-L6-v2").revision
    assert record["model"]["identity_check"]["matches"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert record["versions"]["mteb"] and record["versions"]["torch"]
    assert record["encode"]["texts_encoded"] == 192 and record["encode"]["cache_hits"] == 0
    assert record["encode"]["encode_seconds"] > 0


def test_second_run_encodes_nothing(tmp_path):
    first = run(_options(tmp_path, suite="demo"))
    again = run(_options(tmp_path, suite="demo"))
    assert [o.status for o in again] == ["reused"] * 3
    forced = run(_options(tmp_path, suite="demo", overwrite=True))
    assert all(o.record["encode"]["texts_encoded"] == 0 for o in forced)
    assert all(o.record["encode"]["cache_hits"] == o.record["encode"]["unique_inputs"] > 0 for o in forced)
    assert [o.main_score for o in forced] == [o.main_score for o in first]


def test_settings_change_is_not_reused(tmp_path):
    run(_options(tmp_path, tasks=["DemoInstructSTS"]))
    limited = run(_options(tmp_path, tasks=["DemoInstructSTS"], limit=20))
    assert limited[0].status == "computed" and limited[0].record["task"]["limit"] == 20
    blind = run(_options(tmp_path, tasks=["DemoInstructSTS"], template="none"))
    assert blind[0].status == "computed" and blind[0].main_score == pytest.approx(0.0, abs=1e-9)
    assert blind[0].record["model"]["experiment"] == {"template": "none"}


def test_killed_mid_task_resumes_with_the_same_scores(tmp_path, monkeypatch):
    clean = run(_options(tmp_path / "clean", suite="demo", batch_size=8))
    original = MTEBModel._encode_group
    calls = {"n": 0}

    def dies_on_third_group(self, inputs, batch_size):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt("simulated kill")
        return original(self, inputs, batch_size)

    monkeypatch.setattr(MTEBModel, "_encode_group", dies_on_third_group)
    with pytest.raises(KeyboardInterrupt):
        run(_options(tmp_path / "killed", suite="demo", batch_size=8))
    monkeypatch.setattr(MTEBModel, "_encode_group", original)
    resumed = run(_options(tmp_path / "killed", suite="demo", batch_size=8))
    assert [o.main_score for o in resumed] == [o.main_score for o in clean]
    first = resumed[0].record["encode"]
    assert first["cache_hits"] == 2 * 64 and first["texts_encoded"] == 192 - 128  # two groups of 64 survived


def test_a_later_failure_keeps_finished_tasks(tmp_path, monkeypatch):
    import bench.tasks.abstasks.instruction_sts as sts

    def broken(*args, **kwargs):
        raise RuntimeError("scoring crashed")

    monkeypatch.setattr(sts.AbsTaskInstructionSTS, "_evaluate_subset", broken)
    with pytest.raises(RuntimeError):
        run(_options(tmp_path, tasks=["DemoIntentEmotion", "DemoInstructSTS"]))
    monkeypatch.undo()
    again = run(_options(tmp_path, tasks=["DemoIntentEmotion", "DemoInstructSTS"]))
    assert [o.status for o in again] == ["reused", "computed"]
