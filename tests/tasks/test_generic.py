"""Generic MTEB tasks with a task instruction (bench/tasks/generic.py): MTEB's own classes, local SentEval data."""

from __future__ import annotations

import json
from pathlib import Path

import mteb
import pytest
from datasets import Dataset, DatasetDict

from bench.core.errors import DataError
from bench.dataset_builders.sts_senteval import build_sts_senteval
from bench.tasks import SUITES, TASKS, get_tasks
from helpers import scores_of, write_jsonl
from toy_encoders import HashEncoder

STS12STS, SickrSTS = type(mteb.get_task("STS12")), type(mteb.get_task("SICK-R"))  # MTEB's classes, public API
STS_METRICS = ("cosine_spearman", "cosine_pearson", "manhattan_spearman", "euclidean_spearman", "spearman", "pearson")


def _same_rows_in_mteb(base: type, instruction: str, rows: list[dict]) -> mteb.AbsTask:
    """MTEB's own task class on the given rows, with the same task instruction; nothing of the harness."""

    class Plain(base):
        metadata = base.metadata.model_copy(update={"prompt": instruction})

        def load_data(self, **kwargs):
            self.dataset = DatasetDict({"test": Dataset.from_list(rows)})
            self.data_loaded = True

    return Plain()


def test_generic_suite_holds_inbedder_controls_and_metaeol_sts() -> None:
    assert SUITES["generic"] == (
        "TwentyNewsgroupsClustering",
        "AskUbuntuDupQuestions",
        "SciDocsRR",
        "StackOverflowDupQuestions",
        "STS12",
        "STS13",
        "STS14",
        "STS15",
        "STS16",
        "STSBenchmark",
        "SICK-R",
    )
    assert issubclass(TASKS["STS12"], STS12STS) and TASKS["STS12"].metadata.prompt == "Represent the statement: "
    assert TASKS["SciDocsRR"].metadata.prompt == {
        "query": "Represent the Scientific title: ",
        "document": "Represent the Scientific document: ",
    }
    assert TASKS["TwentyNewsgroupsClustering"].metadata.prompt == "Categorize the topic of the news article."


def test_local_sts_equals_mteb_on_the_same_rows_and_uses_the_instruction(tmp_path: Path) -> None:
    rows = [
        {"sentence1": f"a cat sat on mat {i}", "sentence2": f"a cat {'sat' if i % 2 else 'ran'} {i}", "score": i % 6}
        for i in range(30)
    ]
    write_jsonl(tmp_path / "SICK-R" / "test.jsonl", rows)
    (task,) = get_tasks(["SICK-R"], data_dir=tmp_path)
    model = HashEncoder(use_cache=False)
    ours = scores_of(model, task)
    assert {i for group in model.groups for i, _ in group} == {"Represent the statement: "}
    reference = scores_of(HashEncoder(use_cache=False), _same_rows_in_mteb(SickrSTS, "Represent the statement: ", rows))
    assert {k: ours[k] for k in STS_METRICS} == {k: reference[k] for k in STS_METRICS}
    assert task.metadata.revision.startswith("local-") and task.data_source.startswith("local:")


def test_limit_and_bad_rows(tmp_path: Path) -> None:
    rows = [{"sentence1": f"s{i}", "sentence2": f"t{i}", "score": i % 6} for i in range(30)]
    write_jsonl(tmp_path / "STS12" / "test.jsonl", rows)
    (task,) = get_tasks(["STS12"], data_dir=tmp_path, limit=12)
    task.load_data()
    assert len(task.dataset["test"]) == 12
    write_jsonl(tmp_path / "STS12" / "test.jsonl", [*rows, {"sentence1": "x", "sentence2": "y", "score": 7}])
    with pytest.raises(DataError, match=r"row 31: score 7.0 outside"):
        get_tasks(["STS12"], data_dir=tmp_path)[0].load_data()
    (tmp_path / "STS12" / "test.jsonl").write_text('{"sentence1": "x", "score": 1}\n')
    with pytest.raises(DataError, match=r"line 1: malformed row, missing key.*sentence2"):
        get_tasks(["STS12"], data_dir=tmp_path)[0].load_data()


def test_offline_hub_load_is_a_clear_error() -> None:
    (task,) = get_tasks(["STS13"])
    with pytest.raises(DataError, match=r"Could not load mteb/sts13-sts .*--data-dir"):
        task.load_data()


@pytest.mark.slow
def test_harness_run_gives_exactly_mtebs_score_with_minilm(raw_dir: Path, tmp_path: Path) -> None:
    """`bench.run.runner.run` on SentEval-built STS12 and SICK-R == MTEB's AbsTaskSTS on the same rows, same model."""
    from bench.adapters.registry import load_model
    from bench.run.runner import RunOptions, run

    build_sts_senteval(source_dir=raw_dir, out_dir=tmp_path / "data", size=60)
    outcomes = run(
        RunOptions(
            tasks=["STS12", "SICK-R"],
            data_dir=str(tmp_path / "data"),
            output_dir=str(tmp_path / "results"),
            cache_dir=str(tmp_path / "cache"),
        )
    )
    model = load_model("all-MiniLM-L6-v2", use_cache=False)
    for outcome, base in zip(outcomes, (STS12STS, SickrSTS), strict=True):
        lines = (tmp_path / "data" / outcome.task / "test.jsonl").read_text(encoding="utf-8").splitlines()
        rows = [json.loads(x) for x in lines]
        assert len(rows) == 60
        reference = scores_of(model, _same_rows_in_mteb(base, TASKS[outcome.task].instruction, rows))
        for metric in STS_METRICS:  # result files hold MTEB's own TaskResult.to_disk rounding (6 decimals)
            assert outcome.scores[metric] == round(reference[metric], 6), (outcome.task, metric)
        assert 0.3 < outcome.main_score < 1.0
