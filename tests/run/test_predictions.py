"""`bench run --save-predictions` (bench/run/predictions.py): each task's per-sample file, read back, re-scores to
the main score its result file holds.

The re-scoring here is independent of the harness's scorers: scipy's Spearman, sklearn's V-measure and the
standard library's harmonic mean on the file's numbers, and, for MTEB's tasks, MTEB's own scoring of MTEB's file.
Result files keep 6 decimals (MTEB rounds them), so the recomputed score is rounded the same way before comparing.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import mteb
import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import accuracy_score, v_measure_score
from test_local_mteb_data import BANKING, STSB, save_banking77, save_stsbenchmark

from bench.cli.main import build_parser, main
from bench.core.errors import DataError
from bench.results.store import PREDICTIONS, find_results
from bench.run.runner import RunOptions, run
from bench.tasks import get_tasks
from toy_encoders import HashEncoder, ScaledHashEncoder


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: HashEncoder | None = None, **kw: object):
    model = model or HashEncoder(use_cache=False)
    monkeypatch.setattr("bench.run.runner.build_model", lambda _options: model)
    options = {"output_dir": str(tmp_path / "out"), "show_progress_bar": False, **kw}
    return run(RunOptions(**options))  # type: ignore[arg-type]


def _file(outcome) -> dict:
    """The outcome's prediction file, as the run record names it."""
    path = Path(outcome.result_path).parent / outcome.record["predictions"]
    assert path.parent.name == PREDICTIONS and path.name == f"{outcome.task}_predictions.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _v_measures(labels: list, clusterings: list[list[int]]) -> list[float]:
    return [float(v_measure_score(labels, found)) for found in clusterings]


def _rescore(payload: dict) -> float:
    """A harness task's main score from its prediction payload alone (the rules bench/run/predictions.py states)."""
    kind = payload["kind"]
    if kind == "robustness":
        sets = payload["assignments"]
        return float(
            np.mean(_v_measures(payload["labels"], sets["correct"]))
            - np.mean(_v_measures(payload["labels"], sets["incorrect"]))
        )
    groups = list(payload["groups"].values())
    if kind == "triplet":
        return statistics.harmonic_mean([sum(g["success"]) / len(g["success"]) for g in groups])
    if kind == "sts":
        return float(np.mean([spearmanr(g["gold"], g["similarity"])[0] for g in groups]))
    return statistics.harmonic_mean([_v_measures(g["labels"], [g["assignments"]])[0] for g in groups])


def _same_score(recomputed: float, stored: float) -> None:
    assert abs(round(recomputed, 6) - stored) <= 1e-12, (recomputed, stored)


def test_harness_tasks_prediction_files_rescore_to_their_main_score(tmp_path, monkeypatch):
    outcomes = _run(tmp_path, monkeypatch, suite="demo", save_predictions=True)
    assert {o.record["items"]["kind"] for o in outcomes} == {"triplet", "sts", "clustering"}
    for o in outcomes:
        found = _file(o)
        assert found["mteb_model_meta"] == {"model_name": "toy/hash", "revision": "v1"}  # MTEB's envelope
        payload = found["default"]["test"]
        assert payload == o.record["items"]  # the items the record keeps, in full
        _same_score(_rescore(payload), o.main_score)


def test_robustness_prediction_file_rescores_to_its_gap(tmp_path, monkeypatch, fewrel_six_dir):
    model = ScaledHashEncoder(use_cache=False)
    (o,) = _run(
        tmp_path, monkeypatch, model, tasks=["FewRelClustering"], data_dir=str(fewrel_six_dir), save_predictions=True
    )
    payload = _file(o)["default"]["test"]
    assert payload["kind"] == "robustness" and set(payload["assignments"]) >= {"correct", "incorrect"}
    _same_score(_rescore(payload), o.main_score)


def test_mtebs_tasks_write_mtebs_file_which_mteb_rescores(tmp_path, monkeypatch, raw_dir):
    data = tmp_path / "data"
    save_stsbenchmark(raw_dir, data, pairs=40)
    save_banking77(raw_dir, data, train_per_label=2, test_per_label=1)
    sts_out, banking_out = _run(tmp_path, monkeypatch, tasks=[STSB, BANKING], data_dir=str(data), save_predictions=True)
    sts, banking = get_tasks([STSB, BANKING], data_dir=data)
    for task in (sts, banking):
        task.load_data()

    found = _file(sts_out)
    assert found["mteb_model_meta"] == {"model_name": "toy/hash", "revision": "v1"}
    predicted = found["default"]["test"]  # MTEB's STS payload: one similarity per pair, per measure
    assert set(predicted) == {"cosine_scores", "manhattan_distances", "euclidean_distances", "similarity_scores"}
    gold = [sts._normalize(s) for s in sts.dataset["test"]["score"]]
    _same_score(sts._calculate_scores(predicted, gold)[sts.metadata.main_score], sts_out.main_score)  # MTEB's reading
    _same_score(float(spearmanr(gold, predicted["cosine_scores"])[0]), sts_out.main_score)

    experiments = _file(banking_out)["default"]["test"]  # MTEB's classification payload: labels per experiment
    assert len(experiments) == banking.n_experiments
    truth = banking.dataset["test"]["label"]
    _same_score(float(np.mean([accuracy_score(truth, p) for p in experiments])), banking_out.main_score)


def test_no_prediction_files_without_the_flag(tmp_path, monkeypatch):
    outcomes = _run(tmp_path, monkeypatch, suite="demo")
    assert not [p for p in (tmp_path / "out").rglob("*") if PREDICTIONS in p.name]
    assert all("predictions" not in o.record for o in outcomes)


def test_a_finished_task_is_reused_only_with_its_prediction_file(tmp_path, monkeypatch):
    first = _run(tmp_path, monkeypatch, suite="demo")
    assert {o.status for o in first} == {"computed"}
    again = _run(tmp_path, monkeypatch, suite="demo", save_predictions=True)  # finished, but kept no predictions
    assert {o.status for o in again} == {"computed"} and all(_file(o) for o in again)
    kept = _run(tmp_path, monkeypatch, suite="demo", save_predictions=True)
    assert {o.status for o in kept} == {"reused"}
    gone = Path(kept[0].result_path).parent / kept[0].record["predictions"]
    gone.unlink()
    last = _run(tmp_path, monkeypatch, suite="demo", save_predictions=True)
    assert [o.status for o in last] == ["computed", "reused", "reused"] and gone.is_file()


def test_a_rerun_replaces_the_file_and_leaves_no_scratch_folder(tmp_path, monkeypatch):
    (o,) = _run(tmp_path, monkeypatch, tasks=["DemoInstructSTS"], save_predictions=True)
    path = Path(o.result_path).parent / o.record["predictions"]
    stale = json.loads(path.read_text(encoding="utf-8"))
    stale["stale-subset"] = {"test": {}}  # MTEB merges into a file already there; the run must not
    path.write_text(json.dumps(stale), encoding="utf-8")
    _run(tmp_path, monkeypatch, tasks=["DemoInstructSTS"], save_predictions=True, overwrite=True)
    assert "stale-subset" not in json.loads(path.read_text(encoding="utf-8"))
    assert not [p for p in (tmp_path / "out").rglob(".*") if p.name.startswith(f".{PREDICTIONS}")]


def test_prediction_files_are_never_read_as_results(tmp_path, monkeypatch):
    (o,) = _run(tmp_path, monkeypatch, tasks=["DemoInstructSTS"], save_predictions=True)
    path = Path(o.result_path).parent / o.record["predictions"]
    path.write_text("not JSON: a prediction file is not opened by the tables", encoding="utf-8")
    (found,) = find_results(tmp_path / "out")
    assert found[0] == Path(o.result_path)
    path.parent.rename(path.parent.parent / "elsewhere")  # the same file outside predictions/ is a damaged result
    with pytest.raises(DataError):
        find_results(tmp_path / "out")


@pytest.mark.parametrize("flag", ["--save-predictions", "--log-samples"])
def test_the_flag_and_lm_evals_alias(flag):
    args = build_parser().parse_args(["run", "-t", "DemoInstructSTS", flag])
    assert args.save_predictions is True
    assert build_parser().parse_args(["run", "-t", "DemoInstructSTS"]).save_predictions is False


def test_a_task_type_that_saves_no_predictions_is_recorded_so_and_reused(tmp_path, monkeypatch):
    monkeypatch.setattr("bench.run.predictions.keep_predictions", lambda *a, **kw: None)  # as a type MTEB saves none of
    (first,) = _run(tmp_path, monkeypatch, tasks=["DemoInstructSTS"], save_predictions=True)
    assert first.record["predictions"] is None
    (again,) = _run(tmp_path, monkeypatch, tasks=["DemoInstructSTS"], save_predictions=True)
    assert again.status == "reused"  # nothing to wait for: not evaluated again on every run


def test_bench_run_with_lm_evals_flag_writes_the_file_its_record_names(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("bench.run.runner.build_model", lambda _options: HashEncoder(use_cache=False))
    out = tmp_path / "out"
    assert main(["run", "-t", "DemoInstructSTS", "--log-samples", "--output-dir", str(out), "-q"]) == 0
    (record_path,) = out.rglob("run_records/DemoInstructSTS.json")
    record = json.loads(record_path.read_text(encoding="utf-8"))
    assert record["predictions"] == "predictions/DemoInstructSTS_predictions.json"
    assert (record_path.parent.parent / record["predictions"]).is_file()
    assert "DemoInstructSTS" in capsys.readouterr().out


def test_mtebs_loader_reads_the_results_and_never_a_prediction_file(tmp_path, monkeypatch):
    outcomes = _run(tmp_path, monkeypatch, suite="demo", save_predictions=True)
    cache = mteb.ResultCache(tmp_path / "out" / "instruct-bench")
    paths = cache.get_cache_paths(load_experiments="match_name")
    assert sorted(p.name for p in paths) == sorted(f"{o.task}.json" for o in outcomes)
    (model,) = cache.load_results(load_experiments="match_name").model_results
    assert sorted(t.task_name for t in model.task_results) == sorted(o.task for o in outcomes)
