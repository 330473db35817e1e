"""MTEB's tasks from a local `datasets` save_to_disk copy (`--data-dir`), and the MTEB-named tasks' prompt source.

The copies are built from the real raw files in ../shared/data/raw (skipped when absent) in MTEB's columns and
splits, i.e. what `load_dataset(**task.metadata.dataset)` gives before MTEB's `dataset_transform`.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import mteb
import pytest
from datasets import Dataset, DatasetDict

from bench.cli.main import main
from bench.core.errors import ConfigError, DataError, MissingDataError
from bench.tasks import TASKS, get_tasks
from bench.tasks.generic import INSTRUCTOR_SOURCE, MTEB_PROMPT_SOURCE
from bench.tasks.variants import variant_task
from helpers import scores_of
from toy_encoders import HashEncoder

BANKING = "Banking77Classification"
STSB = "STSBenchmark"
AMAZON = "AmazonCounterfactualClassification"


# ---------------------------------------------------------------------------------------- copies of real data
def _per_label(rows: list[dict], key: str, n: int) -> list[dict]:
    """The first `n` rows of each label, in file order (a small copy that keeps every class)."""
    seen: dict[str, int] = defaultdict(int)
    out = []
    for row in rows:
        if seen[row[key]] < n:
            seen[row[key]] += 1
            out.append(row)
    return out


def save_banking77(raw: Path, out: Path, *, train_per_label: int = 4, test_per_label: int = 2) -> Path:
    """mteb/banking77's columns (text, label, label_text) and splits (train, test), from PolyAI's CSVs.

    MTEB trains a logistic regression on `samples_per_label` (8) train rows per label and scores the test
    split; a few rows per label keep the test fast and are the same copy for both paths compared."""
    folder = raw / "task-specific-datasets" / "banking_data"

    def read(split: str) -> list[dict]:
        with (folder / f"{split}.csv").open(encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f))

    labels = {c: i for i, c in enumerate(sorted({r["category"] for r in read("train")}))}
    data = DatasetDict(
        {
            split: Dataset.from_list(
                [
                    {"text": r["text"], "label": labels[r["category"]], "label_text": r["category"]}
                    for r in _per_label(read(split), "category", n)
                ]
            )
            for split, n in (("train", train_per_label), ("test", test_per_label))
        }
    )
    data.save_to_disk(str(out / BANKING))
    return out / BANKING


def save_stsbenchmark(raw: Path, out: Path, *, pairs: int = 120) -> Path:
    """mteb/stsbenchmark-sts's test split (sentence1, sentence2, score 0-5) from STS-B's original sts-test.csv
    (tab-separated genre, file, year, id, score, s1, s2; some lines carry two more source fields)."""
    path = raw / "SynWMD" / "data" / "downstream" / "STS" / "STSBenchmark" / "stsbenchmark" / "sts-test.csv"
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines()[:pairs]:
        fields = line.split("\t")
        rows.append({"sentence1": fields[5], "sentence2": fields[6], "score": float(fields[4])})
    DatasetDict({"test": Dataset.from_list(rows)}).save_to_disk(str(out / STSB))
    return out / STSB


def save_amazon_en(raw: Path, out: Path, *, rows: int = 60) -> Path:
    """The `en` subset of mteb/amazon_counterfactual (text, label; train, validation, test) from the raw TSVs."""
    folder = raw / "amazon-multilingual-counterfactual-dataset" / "data"
    splits = {}
    for split, name in (("train", "EN_train"), ("validation", "EN_valid"), ("test", "EN_test")):
        with (folder / f"{name}.tsv").open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
            picked = _per_label(list(reader), "is_counterfactual", rows // 2)
        splits[split] = Dataset.from_list(
            [{"text": r["sentence"], "label": int(r["is_counterfactual"])} for r in picked]
        )
    DatasetDict(splits).save_to_disk(str(out / AMAZON / "en"))
    return out / AMAZON / "en"


def _mteb_task_on(name: str, folder: Path) -> mteb.AbsTask:
    """MTEB's own task class reading the save_to_disk copy in place of the hub, then its own transform."""
    import datasets

    base = type(mteb.get_task(name))

    class OnLocalCopy(base):
        def load_data(self, num_proc=None, **kwargs):
            if self.data_loaded:
                return
            self.dataset = datasets.load_from_disk(str(folder))
            self.dataset_transform(num_proc=num_proc)
            self.data_loaded = True

    return OnLocalCopy()


def _mtebs_minilm(path: str):
    """MTEB's own implementation of all-MiniLM-L6-v2 (its ModelMeta's loader) on the packaged weights."""
    from mteb.models.sentence_transformer_wrapper import (
        SentenceTransformerEncoderWrapper,
    )
    from sentence_transformers import SentenceTransformer

    meta = mteb.get_model_meta("sentence-transformers/all-MiniLM-L6-v2")
    assert meta.loader is SentenceTransformerEncoderWrapper
    model = SentenceTransformerEncoderWrapper(SentenceTransformer(path))
    model.mteb_model_meta = model.mteb_model_meta.model_copy(update={"name": meta.name, "revision": meta.revision})
    return model


# ---------------------------------------------------------------------------------------- bench run == mteb
@pytest.mark.slow
def test_bench_run_on_local_copies_equals_mtebs_computation(
    raw_dir: Path, minilm_path: str, tmp_path: Path, session_cache: Path
) -> None:
    """The reference is MTEB's own evaluation, uncached; the run may take vectors the session's cache
    holds (keyed by content), as a user's second run would."""
    data = tmp_path / "data"
    folders = {BANKING: save_banking77(raw_dir, data), STSB: save_stsbenchmark(raw_dir, data)}
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "INSTRUCT_BENCH_CACHE": str(session_cache)}
    # Default options: equal to MTEB's computation once the default model runs MTEB's own implementation
    # (family `mteb`); under the sentence-transformers `prefix` template it would differ (the task prompt is prefixed).
    cmd = [
        sys.executable,
        "-m",
        "bench",
        "run",
        "-t",
        BANKING,
        STSB,
        "--data-dir",
        str(data),
        "--output-dir",
        str(tmp_path / "out"),
    ]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    notes = [line for line in proc.stdout.splitlines() if line.startswith("Note: ")]
    assert len(notes) == 1 and "local-… dataset revision" in notes[0] and "will not take them" in notes[0], proc.stdout
    model = _mtebs_minilm(minilm_path)
    for name, folder in folders.items():
        (result_file,) = [p for p in (tmp_path / "out").rglob(f"{name}.json") if p.parent.name != "run_records"]
        result = json.loads(result_file.read_text(encoding="utf-8"))
        assert result["dataset_revision"].startswith("local-"), result["dataset_revision"]
        record = json.loads((result_file.parent / "run_records" / f"{name}.json").read_text(encoding="utf-8"))
        assert record["task"]["dataset"]["revision"] == result["dataset_revision"]
        assert record["task"]["dataset"]["source"] == "local:data"
        ours = result["scores"]["test"][0]["main_score"]
        reference = scores_of(model, _mteb_task_on(name, folder))["main_score"]
        assert abs(ours - reference) <= 1e-6, (name, ours, reference)


# ---------------------------------------------------------------------------------------- layout and revision
def test_local_copy_replaces_the_hub_with_a_content_revision(raw_dir: Path, tmp_path: Path) -> None:
    save_stsbenchmark(raw_dir, tmp_path / "a", pairs=40)
    save_stsbenchmark(raw_dir, tmp_path / "b", pairs=40)
    save_stsbenchmark(raw_dir, tmp_path / "c", pairs=41)
    (a,), (b,), (c,) = (get_tasks([STSB], data_dir=tmp_path / d) for d in "abc")
    published = type(mteb.get_task(STSB)).metadata.revision
    assert a.metadata.revision.startswith("local-") and a.metadata.revision != published
    assert a.metadata.revision == b.metadata.revision != c.metadata.revision  # content, not place or time
    assert a.data_source == "local:a" and a.saved_folders == {"default": tmp_path / "a" / STSB}
    a.load_data()
    assert a.dataset["test"].num_rows == 40 and a.dataset["test"][0]["score"] == 2.5
    a.unload_data()  # MTEB drops instance metadata on unload: the local revision comes back, unhashed again
    assert a.metadata.revision == b.metadata.revision


def test_mteb_registry_task_reads_its_copy_and_mtebs_transform_runs(raw_dir: Path, tmp_path: Path) -> None:
    save_banking77(raw_dir, tmp_path, train_per_label=2, test_per_label=1)
    (task,) = get_tasks([BANKING], data_dir=tmp_path)
    assert (
        task.metadata.revision.startswith("local-") and task.metadata.prompt == mteb.get_task(BANKING).metadata.prompt
    )
    task.load_data()
    assert set(task.dataset) == {"train", "test"} and task.dataset["test"].num_rows == 77
    task.n_experiments = 1  # MTEB's 10 resampled fits score the same transform ten times over
    scores = scores_of(HashEncoder(use_cache=False), task)
    assert 0.0 <= scores["accuracy"] <= 1.0


def test_multilingual_task_evaluates_the_subsets_present(raw_dir: Path, tmp_path: Path, caplog) -> None:
    """Decision: a multilingual task runs the subsets that have a folder (MTEB's hf_subsets filtering), with a
    warning naming the others; a folder that is no subset of the task is an error."""
    save_amazon_en(raw_dir, tmp_path)
    (task,) = get_tasks([AMAZON], data_dir=tmp_path)
    assert task.hf_subsets == ["en"] and task.metadata.revision.startswith("local-")
    assert "none for en-ext, de, ja" in caplog.text
    task.n_experiments = 1  # which subsets and splits are scored, not MTEB's 10 resampled fits of each
    result = mteb.evaluate(HashEncoder(use_cache=False), task, cache=None, show_progress_bar=False, co2_tracker=False)
    scores = result.task_results[0].scores
    assert set(scores) == {"validation", "test"}
    assert [s["hf_subset"] for s in scores["test"]] == ["en"] and [s["hf_subset"] for s in scores["validation"]] == [
        "en"
    ]

    (tmp_path / AMAZON / "xx").mkdir()
    with pytest.raises(DataError, match=r"xx is no subset of AmazonCounterfactualClassification \(its subsets: en-ext"):
        get_tasks([AMAZON], data_dir=tmp_path)
    (tmp_path / AMAZON / "xx").rmdir()
    (tmp_path / AMAZON / "de").mkdir()
    with pytest.raises(DataError, match=r"de is not a `datasets` save_to_disk folder.*name='de'"):
        get_tasks([AMAZON], data_dir=tmp_path)


def test_multilingual_task_as_one_folder_is_an_error(tmp_path: Path) -> None:
    DatasetDict({"test": Dataset.from_dict({"text": ["a"], "label": [0]})}).save_to_disk(str(tmp_path / AMAZON))
    with pytest.raises(DataError, match=r"is multilingual: give one folder per subset"):
        get_tasks([AMAZON], data_dir=tmp_path)


def test_copy_without_a_split_mteb_reads_is_one_error(tmp_path: Path) -> None:
    DatasetDict({"test": Dataset.from_dict({"text": ["a", "b"], "label": [0, 1]})}).save_to_disk(
        str(tmp_path / BANKING)
    )
    (task,) = get_tasks([BANKING], data_dir=tmp_path)
    with pytest.raises(DataError, match=r"lacks the split\(s\) train \(it has test\)"):
        task.load_data()
    Dataset.from_dict({"text": ["a"], "label": [0]}).save_to_disk(str(tmp_path / "one" / BANKING))
    (task,) = get_tasks([BANKING], data_dir=tmp_path / "one")
    with pytest.raises(DataError, match=r"holds one split, not a DatasetDict"):
        task.load_data()


def test_retrieval_and_reranking_take_no_local_copy(tmp_path: Path) -> None:
    for name in ("NFCorpus", "SciDocsRR"):  # MTEB's retrieval loader; SciDocsRR is also the harness's generic task
        (tmp_path / name).mkdir()
        with pytest.raises(DataError, match=rf"{name} takes no local copy \(MTEB loads this .* with its own loader"):
            get_tasks([name], data_dir=tmp_path)


def test_no_folder_named_task_falls_back_to_mtebs_loading_and_suites_skip(raw_dir: Path, tmp_path: Path) -> None:
    """A task of MTEB's registry named with --tasks and no folder loads as MTEB does (hub or datasets cache);
    a suite run skips its STS tasks without a folder (MissingDataError), as before."""
    from bench.run.runner import RunOptions, build_tasks

    (task,) = get_tasks([BANKING], data_dir=tmp_path)
    assert task.data_source == "hub" and task.saved_folders is None
    assert task.metadata.revision == type(mteb.get_task(BANKING)).metadata.revision
    with pytest.raises(MissingDataError, match="save_to_disk"):
        get_tasks(["STS12"], data_dir=tmp_path)
    save_stsbenchmark(raw_dir, tmp_path, pairs=20)
    tasks = build_tasks(RunOptions(suite="generic-sts", data_dir=str(tmp_path)))
    assert [t.metadata.name for t in tasks] == [STSB] and tasks[0].saved_folders


def test_sts_jsonl_layout_still_reads_and_a_saved_folder_wins(raw_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "STS12"
    folder.mkdir()
    (folder / "test.jsonl").write_text(json.dumps({"sentence1": "a", "sentence2": "b", "score": 1}) + "\n")
    (task,) = get_tasks(["STS12"], data_dir=tmp_path)
    assert task.saved_folders is None and list(task.local_files) == ["test"]
    DatasetDict(
        {"test": Dataset.from_dict({"sentence1": ["x", "y"], "sentence2": ["y", "z"], "score": [1.0, 2.0]})}
    ).save_to_disk(str(folder))
    (task,) = get_tasks(["STS12"], data_dir=tmp_path, limit=1)
    task.load_data()
    assert task.saved_folders and task.dataset["test"].num_rows == 1  # --limit applies to the STS tasks' copies


def test_not_a_save_to_disk_folder_is_one_error_line(capsys, tmp_path: Path) -> None:
    (tmp_path / BANKING).mkdir()
    (tmp_path / BANKING / "test.csv").write_text("text,label\na,0\n", encoding="utf-8")
    code = main(["run", "-t", BANKING, "--data-dir", str(tmp_path), "--output-dir", str(tmp_path / "out")])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and "Traceback" not in err
    assert lines[-1].startswith("error: ") and "is not a `datasets` save_to_disk folder" in lines[-1], err
    assert (
        "load_dataset('mteb/banking77', revision='0fd18e25b25c072e09e0d92ab615fda904d66300').save_to_disk" in lines[-1]
    )


def test_damaged_copy_is_one_data_error(tmp_path: Path) -> None:
    DatasetDict({"test": Dataset.from_dict({"sentence1": ["x"], "sentence2": ["y"], "score": [1.0]})}).save_to_disk(
        str(tmp_path / STSB)
    )
    for arrow in (tmp_path / STSB).rglob("*.arrow"):
        arrow.write_bytes(b"not arrow")
    (task,) = get_tasks([STSB], data_dir=tmp_path)
    with pytest.raises(DataError, match=r"not a readable `datasets` save_to_disk folder"):
        task.load_data()


def test_run_note_names_results_on_local_data() -> None:
    from bench.results.outcome import TaskOutcome
    from bench.run.local_data import local_data_note

    def outcome(name: str, revision: str, source: str) -> TaskOutcome:
        record = {"task": {"dataset": {"revision": revision, "source": source}}}
        return TaskOutcome(name, "m", 0.5, {}, "computed", record)

    assert local_data_note([outcome("A", "0fd18e25", "hub")]) is None
    note = local_data_note([outcome("STS12", "0fd18e25", "hub"), outcome("STS13", "local-abc", "local:data")])
    assert note.startswith("Note: STS13 ran on local data") and "\n" not in note
    assert "will not take them" in note and "instruct-bench/" in note
    assert local_data_note([outcome("DemoInstructSTS", "local-abc", "package")]) is None  # the harness's own task


# ---------------------------------------------------------------------------------------- prompt source
def test_prompt_source_mteb_is_mtebs_metadata_harness_the_instruction(tmp_path: Path) -> None:
    cls = TASKS[STSB]
    mtebs = type(mteb.get_task(STSB)).metadata
    harness, own = cls(), cls(prompt_source="mteb")
    assert harness.metadata.prompt == "represent the statement: " and harness.prompt_source == "harness"
    assert harness.instruction_set() == {"task_instruction": "represent the statement: ", "source": INSTRUCTOR_SOURCE}
    assert own.metadata == mtebs and own.metadata.prompt is None and own.prompt_source == "mteb"
    assert own.instruction_set() == {"task_instruction": None, "source": MTEB_PROMPT_SOURCE}
    assert isinstance(own, cls) and type(own).__name__ == cls.__name__
    assert cls.metadata.prompt == "represent the statement: "  # the class itself is untouched
    assert harness.instruction_set_sha256() != own.instruction_set_sha256()  # results never mix
    (via,) = get_tasks([STSB], prompt_source="mteb")
    assert via.metadata == mtebs
    with pytest.raises(ConfigError, match="Unknown prompt source 'inbedder'"):
        cls(prompt_source="inbedder")

    # with a local copy: MTEB's metadata but for the local revision, kept through unload
    DatasetDict({"test": Dataset.from_dict({"sentence1": ["x"], "sentence2": ["y"], "score": [1.0]})}).save_to_disk(
        str(tmp_path / STSB)
    )
    (task,) = get_tasks([STSB], data_dir=tmp_path, prompt_source="mteb")
    assert task.metadata.revision.startswith("local-") and task.metadata.prompt is None
    assert task.metadata.model_copy(update={"dataset": mtebs.dataset}) == mtebs
    task.load_data()
    task.unload_data()
    assert task.metadata.revision.startswith("local-") and task.metadata.prompt is None


def test_instruction_variants_work_under_both_prompt_sources(tmp_path: Path) -> None:
    DatasetDict({"test": Dataset.from_dict({"sentence1": ["x"], "sentence2": ["y"], "score": [1.0]})}).save_to_disk(
        str(tmp_path / STSB)
    )
    for source in ("harness", "mteb"):
        (task,) = get_tasks([STSB], data_dir=tmp_path, prompt_source=source)
        variant = variant_task(task, "Represent the sentence: ")
        assert variant.metadata.prompt == "Represent the sentence: " and variant.metadata.revision.startswith("local-")
        assert variant.instruction_set() == {
            "task_instruction": "Represent the sentence: ",
            "source": "instruction variant",
        }
        assert task.metadata.prompt == ("represent the statement: " if source == "harness" else None)
        variant.load_data()
        variant.unload_data()  # the variant's class keeps the variant's prompt
        assert (
            variant.metadata.prompt == "Represent the sentence: "
            and variant.metadata.revision == task.metadata.revision
        )


def test_other_tasks_accept_or_ignore_the_prompt_source() -> None:
    senteval = TASKS["STSBenchmark-SentEval"]
    assert senteval(prompt_source="mteb").metadata == senteval.metadata  # a task of its own name: the same
    (banking,) = get_tasks([BANKING], prompt_source="mteb")  # MTEB's registry: already MTEB's prompt
    assert banking.metadata == type(mteb.get_task(BANKING)).metadata
    assert get_tasks([BANKING], prompt_source="harness")[0].metadata == banking.metadata
    (demo,) = get_tasks(["DemoIntentEmotion"], prompt_source="mteb")  # no prompt_sources: not passed
    assert not hasattr(demo, "prompt_source")
