"""MTEB's instruction-retrieval tasks as suites (bench/tasks/instruction_retrieval.py): `followir` and
`instruction-retrieval`, p-MRR's declaration, their averages, and p-MRR checked against the FollowIR paper.

The p-MRR check runs MTEB's own Core17InstructionRetrieval class (the harness's registered task) offline on a
small FollowIR-format set built here (corpus, queries with their original and changed instructions, qrels of
both, and `qrel_diff`: the documents the changed instruction makes non-relevant). MTEB loads the set with its
hub loader and reads `qrel_diff` with `datasets.load_dataset` inside the task's `task_specific_scores`, so the
set is handed to the task in MTEB's in-memory layout (`RetrievalSplitData`) and the one `load_dataset` call of
the task's module answers with the local `qrel_diff`; everything else (encoding, ranking, scoring) is MTEB's.
The run MTEB ranked is read back from its prediction file and scored again by `paper_p_mrr`, written here
from the paper's formula, not from MTEB's code.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import mteb
import pytest
from datasets import Dataset

from bench import tasks
from bench.core.errors import DataError, UnknownNameError
from bench.core.metric_specs import SIGNED
from bench.results.suites import average, averages, suite_averages
from bench.results.summary import detail_values
from bench.results.task_catalog import metric_index
from bench.tasks.generic import mteb_base_class
from bench.tasks.instruction_retrieval import FOLLOWIR_TASKS
from bench.tasks.mteb_compat import is_mtebs_task

# ------------------------------------------------------------------------------ suites, names, metric


def test_the_followir_suite_is_mtebs_followir_benchmark_run_by_mtebs_classes():
    assert tasks.SUITES["followir"] == FOLLOWIR_TASKS
    assert set(tasks.SUITES["followir"]) == {t.metadata.name for t in mteb.get_benchmark("FollowIR").tasks}
    instruction = {t.metadata.name for t in mteb.get_tasks(task_types=["InstructionRetrieval"])}
    assert "InstructIR" in instruction  # MTEB 2.26 has it: it joins the wider suite
    assert tasks.SUITES["instruction-retrieval"] == (*FOLLOWIR_TASKS, "InstructIR")
    for task in tasks.get_tasks(tasks.SUITES["instruction-retrieval"]):
        name = task.metadata.name
        assert mteb_base_class(type(task)) is type(mteb.get_task(name))  # MTEB's registered class runs it
        assert task.metadata == mteb.get_task(name).metadata  # MTEB's metadata: MTEB's canonical key
        assert is_mtebs_task(task), name  # a result MTEB's results repository can take


def test_mtebs_benchmark_name_followir_names_the_suite():
    from bench.cli.run_names import check_run_names

    assert tasks.suite_named("FollowIR") == "followir"
    assert tasks.task_names(suite="FollowIR") == list(FOLLOWIR_TASKS)
    assert check_run_names(None, "FollowIR") == "followir"  # answered from the catalogue, before MTEB's import
    assert tasks.suite_named("InstructBench-InstructionRetrieval") == "instruction-retrieval"
    assert mteb.get_benchmark("FollowIR").name == "FollowIR"  # MTEB's own benchmark is left as it is
    with pytest.raises(UnknownNameError, match="followir"):
        tasks.suite_named("FollowIRR")


def test_bench_list_suites_shows_both(capsys):
    from bench.cli.main import main

    assert main(["list", "suites"]) == 0
    out = capsys.readouterr().out
    assert "followir" in out and "instruction-retrieval" in out


def test_p_mrr_is_declared_signed_and_higher_is_better():
    metric = metric_index().resolve("p-MRR")
    assert metric is not None and metric.name == "p-MRR"
    assert (metric.range, metric.direction, metric.mteb_type) == (SIGNED, "higher", "InstructionReranking")
    assert "R_og" in metric.description and "per query" in metric.description
    robustness = metric_index().resolve("robustness_at_10")
    assert robustness is not None and robustness.mteb_type == "InstructionRetrieval"


def test_p_mrr_is_never_averaged_with_robustness_at_10():
    st = suite_averages("instruction-retrieval", {**dict.fromkeys(FOLLOWIR_TASKS, "p-MRR"), "InstructIR": "x"})
    assert [set(a.tasks or ()) for a in st] == [set(FOLLOWIR_TASKS), {"InstructIR"}]
    scores = {"Core17InstructionRetrieval": -2.0, "News21InstructionRetrieval": 1.0}
    scores |= {"Robust04InstructionRetrieval": 4.0, "InstructIR": 60.0}
    assert averages("instruction-retrieval", scores) == {"p-MRR": 1.0, "Robustness@10": 60.0}
    mains = {"A": "v_measure", "B": "delta_ci_mean", "C": "p-MRR", "D": "p-MRR", "E": "robustness_at_10"}
    apart = {a.label: set(a.tasks or ()) for a in suite_averages("no-style", mains)}  # as for `all`
    assert apart == {"Avg": {"A"}, "Mean Δci": {"B"}, "Mean p-MRR": {"C", "D"}, "Mean robustness@10": {"E"}}
    assert average([1.0, None]) is None


def test_the_details_are_mtebs_original_and_changed_ndcg_at_5_and_map_at_1000():
    scores = {"p-MRR": 0.1, "ndcg_at_5": 0.9, "og": {"ndcg_at_5": 0.2, "map_at_1000": 0.3}}
    scores |= {"changed": {"ndcg_at_5": 0.4, "map_at_1000": 0.5}}
    found = {key: value for key, _, value in detail_values("Core17InstructionRetrieval", scores, "p-MRR")}
    assert found == {"og.ndcg_at_5": 0.2, "changed.ndcg_at_5": 0.4, "og.map_at_1000": 0.3, "changed.map_at_1000": 0.5}


# ------------------------------------------------------------------------------ p-MRR against the paper


def paper_p_mrr(original: dict[str, dict[str, float]], changed: dict[str, dict[str, float]], diff) -> float:
    """FollowIR's p-MRR (Weller et al., 2024, §3): for each document whose relevance the changed instruction
    removes, with R_og and R_new its ranks under the original and the changed instruction and MRR = 1/R,
    MRR_og/MRR_new - 1 if R_og > R_new (the document rose), else 1 - MRR_new/MRR_og; averaged per query,
    then over queries. Ranks: by score, highest first, ties by document id, larger first (as MTEB since
    mteb#5092; the paper names no tie rule); a document outside the run is ranked after all of it."""

    def rank(run: dict[str, float], doc: str) -> int:
        order = sorted(run, key=lambda d: (run[d], d), reverse=True)  # highest score first; ties: larger id
        return order.index(doc) + 1 if doc in run else len(run) + 1

    per_query = []
    for qid, docs in diff.items():
        values = []
        for doc in docs:
            r_og, r_new = rank(original[qid], doc), rank(changed[qid], doc)
            mrr_og, mrr_new = 1 / r_og, 1 / r_new
            values.append(mrr_og / mrr_new - 1 if r_og > r_new else 1 - mrr_new / mrr_og)
        per_query.append(sum(values) / len(values))
    return sum(per_query) / len(per_query)


def test_paper_p_mrr_on_a_worked_example_equals_mtebs_evaluator():
    """By hand: q1's d1 falls from rank 2 to 4 (1 - (1/4)/(1/2) = 0.5), its d2 rises from 3 to 1
    ((1/3)/1 - 1 = -2/3); q2's d1 stays first (0): p-MRR = ((0.5 - 2/3) / 2 + 0) / 2 = -1/24."""
    from mteb._evaluators.retrieval_metrics import evaluate_p_mrr_change

    original = {"q1": {"d0": 0.9, "d1": 0.8, "d2": 0.7, "d3": 0.6}, "q2": {"d1": 0.9, "d0": 0.1}}
    changed = {"q1": {"d2": 0.9, "d0": 0.8, "d3": 0.7, "d1": 0.6}, "q2": {"d1": 0.5, "d0": 0.4}}
    diff = {"q1": ["d1", "d2"], "q2": ["d1"]}
    assert paper_p_mrr(original, changed, diff) == pytest.approx(-1 / 24)
    run = {f"{q}-og": r for q, r in original.items()} | {f"{q}-changed": r for q, r in changed.items()}
    qrels = {f"{q}-{s}": {"d0": 1} for q in original for s in ("og", "changed")}
    mtebs = evaluate_p_mrr_change(qrels, run, diff, [1, 5])
    assert mtebs["p-MRR"] == pytest.approx(-1 / 24)


CORPUS = [
    "solar power plants in spain produce electricity",
    "wind farms in germany and their turbines",
    "solar panels on houses in california",
    "oil prices rose in texas",
    "offshore wind power in denmark",
    "nuclear power plants in france",
    "solar subsidies in spain ended last year",
    "hydro dams in norway store water",
    "a wind and solar hybrid park opened in portugal",
]
TOPICS = {  # query: (text, original instruction, changed instruction, relevant under og, relevant under changed)
    "q1": (
        "renewable energy",
        "any document about solar or wind power is relevant",
        "only documents about wind power are relevant; solar panels and plants are not",
        ["d0", "d1", "d2", "d4", "d8"],
        ["d1", "d4", "d8"],
    ),
    "q2": (
        "energy in spain",
        "documents about energy in spain",
        "only spain subsidies are relevant, not power plants",
        ["d0", "d6"],
        ["d6"],
    ),
    "q3": (
        "power stations in europe",
        "any power plant in europe",
        "only nuclear plants in france are relevant",
        ["d0", "d1", "d5", "d7"],
        ["d5"],
    ),
}


def followir_set(folder: Path) -> dict[str, Any]:
    """A FollowIR-format set in MTEB's layout for the FollowIR tasks (corpus, queries with `instruction`,
    qrels with "-og"/"-changed" query ids, `qrel_diff`), written as jsonl under `folder` and read back."""
    files = {
        "corpus": [{"id": f"d{i}", "title": "", "text": text} for i, text in enumerate(CORPUS)],
        "queries": [
            {"id": f"{q}-{which}", "text": text, "instruction": instruction}
            for q, (text, og, new, _, _) in TOPICS.items()
            for which, instruction in (("og", og), ("changed", new))
        ],
        "qrels": [
            {"query-id": f"{q}-{which}", "corpus-id": doc, "score": 1}
            for q, (_, _, _, og, new) in TOPICS.items()
            for which, docs in (("og", og), ("changed", new))
            for doc in docs
        ],
        "qrel_diff": [{"query-id": q, "corpus-ids": sorted(set(og) - set(new))} for q, (*_, og, new) in TOPICS.items()],
    }
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in files.items():
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return {name: Dataset.from_json(str(folder / f"{name}.jsonl")) for name in files}


def test_mtebs_p_mrr_on_a_local_followir_set_equals_the_papers(tmp_path, monkeypatch):
    import mteb.tasks.instruction_reranking.eng.core17_instruction_retrieval as core17

    from toy_encoders import HashEncoder

    data = followir_set(tmp_path / "followir")
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for row in data["qrels"]:
        qrels[row["query-id"]][row["corpus-id"]] = row["score"]
    (task,) = tasks.get_tasks(["Core17InstructionRetrieval"])
    task.dataset = {
        "default": {
            "test": {
                "corpus": data["corpus"],
                "queries": data["queries"],
                "relevant_docs": dict(qrels),
                "top_ranked": None,
            }
        }
    }
    task.data_loaded = True
    asked = []

    def local_qrel_diff(path: str, name: str, **kwargs: Any) -> Dataset:
        asked.append((path, name))
        return data["qrel_diff"]

    monkeypatch.setattr(core17, "load_dataset", local_qrel_diff)
    predictions = tmp_path / "predictions"
    result = mteb.evaluate(
        HashEncoder(dim=4096, use_cache=False),
        [task],
        cache=None,
        prediction_folder=predictions,
        show_progress_bar=False,
        co2_tracker=False,
    )
    assert asked == [("mteb/Core17InstructionRetrieval", "qrel_diff")]
    (scores,) = result.task_results[0].scores["test"]
    assert scores["main_score"] == scores["p-MRR"]
    (file,) = predictions.glob("*.json")
    run = json.loads(file.read_text(encoding="utf-8"))["default"]["test"]
    original = {q.removesuffix("-og"): r for q, r in run.items() if q.endswith("-og")}
    changed = {q.removesuffix("-changed"): r for q, r in run.items() if q.endswith("-changed")}
    diff = {row["query-id"]: row["corpus-ids"] for row in data["qrel_diff"]}
    expected = paper_p_mrr(original, changed, diff)
    assert scores["p-MRR"] == pytest.approx(expected, abs=1e-12)
    assert expected != 0 and not math.isnan(expected)  # the instructions moved the changed documents
    # the details: MTEB's nDCG@5 and MAP@1000 on the original and on the changed queries alone
    found = {key: value for key, _, value in detail_values(task.metadata.name, scores, "p-MRR")}
    assert set(found) == {"og.ndcg_at_5", "changed.ndcg_at_5", "og.map_at_1000", "changed.map_at_1000"}
    assert found["og.ndcg_at_5"] == scores["og"]["ndcg_at_5"] and 0 <= found["changed.map_at_1000"] <= 1


# ------------------------------------------------------------------------------ bench run, offline


def test_a_local_followir_folder_replaces_the_hub_under_a_local_revision(tmp_path):
    followir_set(tmp_path / "Core17InstructionRetrieval")
    (task,) = tasks.get_tasks(["Core17InstructionRetrieval"], data_dir=tmp_path)
    assert task.metadata.dataset["revision"].startswith("local-") and not is_mtebs_task(task)
    task.load_data()
    split = task.dataset["default"]["test"]
    assert len(split["corpus"]) == len(CORPUS) and len(split["queries"]) == 2 * len(TOPICS)
    assert split["relevant_docs"]["q2-changed"] == {"d6": 1}
    (hub,) = tasks.get_tasks(["Core17InstructionRetrieval"], data_dir=tmp_path / "elsewhere")
    assert is_mtebs_task(hub)  # no folder for it: MTEB's own task, loaded as MTEB loads it
    (tmp_path / "Core17InstructionRetrieval" / "corpus.jsonl").unlink()
    with pytest.raises(DataError, match=r"no FollowIR-format folder: expected corpus\.jsonl"):
        tasks.get_tasks(["Core17InstructionRetrieval"], data_dir=tmp_path)
    (tmp_path / "News21InstructionRetrieval").mkdir()
    (tmp_path / "News21InstructionRetrieval" / "corpus.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(DataError, match="queries"):  # a file missing: named
        tasks.get_tasks(["News21InstructionRetrieval"], data_dir=tmp_path)


@pytest.mark.slow  # loads MiniLM
def test_bench_run_on_the_local_followir_set_gives_the_papers_p_mrr(tmp_path, minilm_path, monkeypatch):
    """`bench run` with MiniLM (MTEB's implementation, the default) on the local set; the reference ranks
    the same texts with sentence-transformers directly (query = text + " " + instruction, as MTEB joins
    them) and scores them with `paper_p_mrr`."""
    from sentence_transformers import SentenceTransformer

    from bench.cli.main import main

    data = followir_set(tmp_path / "data" / "Core17InstructionRetrieval")
    monkeypatch.chdir(tmp_path)
    assert (
        main(["run", "-t", "Core17InstructionRetrieval", "--data-dir", str(tmp_path / "data"), "--output-dir", "out"])
        == 0
    )
    (file,) = [p for p in (tmp_path / "out").rglob("Core17InstructionRetrieval.json") if p.parent.name != "run_records"]
    result = json.loads(file.read_text(encoding="utf-8"))
    assert result["dataset_revision"].startswith("local-")
    (scores,) = result["scores"]["test"]

    model = SentenceTransformer(minilm_path, device="cpu")
    docs = list(data["corpus"])
    doc_vectors = model.encode([d["text"] for d in docs], normalize_embeddings=True)
    run: dict[str, dict[str, float]] = {}
    for q in data["queries"]:
        vector = model.encode([f"{q['text']} {q['instruction']}"], normalize_embeddings=True)[0]
        run[q["id"]] = {d["id"]: float(v) for d, v in zip(docs, doc_vectors @ vector, strict=True)}
    original = {q.removesuffix("-og"): r for q, r in run.items() if q.endswith("-og")}
    changed = {q.removesuffix("-changed"): r for q, r in run.items() if q.endswith("-changed")}
    diff = {row["query-id"]: row["corpus-ids"] for row in data["qrel_diff"]}
    expected = paper_p_mrr(original, changed, diff)
    assert expected != 0
    assert scores["p-MRR"] == pytest.approx(expected, abs=5e-7)  # MTEB writes six decimals
    assert scores["main_score"] == scores["p-MRR"]


def _rewrite_first_row(path: Path, key: str, value: object) -> None:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows[0][key] = value
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_a_local_qrels_score_that_is_no_number_is_one_data_error(tmp_path):
    followir_set(tmp_path / "Core17InstructionRetrieval")
    _rewrite_first_row(tmp_path / "Core17InstructionRetrieval" / "qrels.jsonl", "score", None)
    (task,) = tasks.get_tasks(["Core17InstructionRetrieval"], data_dir=tmp_path)
    with pytest.raises(DataError, match=r"qrels\.jsonl row 1: score must be a number, got NoneType"):
        task.load_data()


def test_local_qrel_diff_corpus_ids_that_are_no_list_are_one_data_error(tmp_path):
    """A string would be read as a list of its characters, each a document id no run ranks."""
    followir_set(tmp_path / "Core17InstructionRetrieval")
    _rewrite_first_row(tmp_path / "Core17InstructionRetrieval" / "qrel_diff.jsonl", "corpus-ids", "d0")
    (task,) = tasks.get_tasks(["Core17InstructionRetrieval"], data_dir=tmp_path)
    task.load_data()
    qrels = task.dataset["default"]["test"]["relevant_docs"]
    with pytest.raises(DataError, match=r"qrel_diff\.jsonl row 1: corpus-ids must be a list of document ids"):
        task.task_specific_scores({}, qrels, {}, "test", "default")
