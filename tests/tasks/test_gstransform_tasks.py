"""GSTransform tasks (bench/tasks/gstransform.py) on small local folders: sampling, instruction styles, scores by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics.pairwise import paired_cosine_distances

from bench.core.errors import ConfigError, DataError
from bench.run.instruction_style import instruction_style_for
from bench.tasks import SUITES, get_tasks
from bench.tasks.gstransform import GSTRANSFORM_TASKS, INSTRUCTIONS, GSTAGNews, GSTAmzCF, GSTMultiHate, GSTPaperCode
from helpers import scores_of, write_csv
from toy_encoders import HashEncoder

TOPICS = {
    "sports": ["goal scored late", "team wins cup", "striker injured", "coach resigns", "league title race"],
    "money": [
        "shares fall sharply",
        "bank raises rates",
        "profits beat forecast",
        "bond yields climb",
        "merger talks end",
    ],
    "space": [
        "rocket launch delayed",
        "new planet found",
        "probe reaches mars",
        "telescope image released",
        "comet passes earth",
    ],
}


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    rows = [(text, topic) for topic, texts in TOPICS.items() for text in texts]
    write_csv(tmp_path / "GSTAGNews" / "topic.csv", ["text", "label"], rows)
    lang = [(t, "en" if i % 2 else "xx") for i, (t, _) in enumerate(rows)]
    write_csv(tmp_path / "GSTMultiHate" / "hateful.csv", ["text", "label"], rows)
    write_csv(tmp_path / "GSTMultiHate" / "language.csv", ["text", "label"], lang)
    write_csv(tmp_path / "GSTAmzCF" / "counterfactual.csv", ["text", "cluster"], rows)
    return tmp_path


def test_suite_lists_the_papers_nine_datasets() -> None:
    assert len(SUITES["gstransform"]) == 9 == len(GSTRANSFORM_TASKS)
    assert all(
        set(styles) == {"command", "question", "gstransform"} for a in INSTRUCTIONS.values() for styles in a.values()
    )


def test_appendix_c_strings_reach_the_model(data_dir: Path) -> None:
    for style, instruction in (
        ("command", "Represent the news according to their topic category."),
        ("question", "What is the topic category of this news?"),
        ("gstransform", "What is the topic category of this news? Just tell me the category name."),
    ):
        model = HashEncoder(use_cache=False)
        task = GSTAGNews(data_dir=data_dir, size=40, instruction_style=style)
        scores_of(model, task)
        assert {i for group in model.groups for i, _ in group} == {instruction}
        assert task.instruction_set()["style"] == style and task.instruction_set()["aspects"] == {"topic": instruction}


def test_unknown_style_is_a_config_error(data_dir: Path) -> None:
    with pytest.raises(ConfigError, match=r"Unknown instruction style 'shouty'.*command"):
        GSTAGNews(data_dir=data_dir, instruction_style="shouty")


def test_style_only_goes_to_tasks_that_have_styles(data_dir: Path) -> None:
    agnews, demo = get_tasks(["GSTAGNews", "DemoInstructSTS"], data_dir=data_dir, instruction_style="command")
    assert agnews.instruction_style == "command" and not hasattr(demo, "instruction_style")


def test_auto_style_follows_the_model_family() -> None:
    assert instruction_style_for("all-MiniLM-L6-v2", "auto") == "question"
    assert instruction_style_for("st:hkunlp/instructor-large", None) == "command"
    assert instruction_style_for("st:hkunlp/instructor-large", "gstransform") == "gstransform"


def test_triplet_score_matches_a_hand_computation(data_dir: Path) -> None:
    model = HashEncoder(use_cache=False)
    task = GSTAGNews(data_dir=data_dir, size=80, seed=3)
    scores = scores_of(model, task)
    task.load_data()  # evaluate unloads the data; reloading samples the same triplets
    split = task.dataset["test"]
    pool = task.pools["topic"]
    instr = task.aspects["topic"]
    vec = lambda idx: model._encode_group([[instr, pool[i]] for i in idx], 8)  # noqa: E731
    a, p, n = (vec(split[c]) for c in ("anchor", "positive", "negative"))
    expected = np.mean(paired_cosine_distances(a, p) < paired_cosine_distances(a, n))
    assert scores["topic_success_rate"] == pytest.approx(expected, abs=1e-12)
    assert scores["topic_num_triplets"] == 80 and scores["main_score"] == scores["hmean_success_rate"]


def test_sts_scores_match_spearman_per_aspect_and_their_mean(data_dir: Path) -> None:
    model = HashEncoder(use_cache=False)
    task = GSTMultiHate(data_dir=data_dir, size=60, seed=1)
    scores = scores_of(model, task)
    task.load_data()
    split = task.dataset["test"].to_pandas()
    manual = {}
    for aspect, part in split.groupby("aspect"):
        pool, instr = task.pools[aspect], task.aspects[aspect]
        e1 = model._encode_group([[instr, pool[i]] for i in part["first"]], 8)
        e2 = model._encode_group([[instr, pool[i]] for i in part["second"]], 8)
        manual[aspect] = spearmanr(part["score"], 1 - paired_cosine_distances(e1, e2))[0]
        assert scores[f"{aspect}_cosine_spearman"] == pytest.approx(manual[aspect], abs=1e-12)
        assert scores[f"{aspect}_num_pairs"] == 60
        assert scores[f"{aspect}_positive_rate"] == pytest.approx(part["score"].mean())
    assert scores["main_score"] == pytest.approx(np.mean(list(manual.values())), abs=1e-12)


def test_limit_caps_the_sample_and_seed_changes_it(data_dir: Path) -> None:
    small = GSTAGNews(data_dir=data_dir, size=100, limit=10, seed=1)
    small.load_data()
    assert len(small.dataset["test"]) == 10
    same, other = (GSTAGNews(data_dir=data_dir, size=100, seed=s) for s in (1, 2))
    for t in (same, other):
        t.load_data()
    first = GSTAGNews(data_dir=data_dir, size=100, seed=1)
    first.load_data()
    assert first.dataset["test"].to_list() == same.dataset["test"].to_list() != other.dataset["test"].to_list()
    assert "sampling" in first.instruction_set() and first.instruction_set()["sampling"]["size"] == 100


def test_clustering_task_reads_text_cluster_files(data_dir: Path) -> None:
    scores = scores_of(HashEncoder(use_cache=False), GSTAmzCF(data_dir=data_dir))
    assert 0 <= scores["v_measure_counterfactual"] <= 1 and scores["counterfactual_num_texts"] == 15


def test_missing_and_malformed_local_files_are_data_errors(data_dir: Path) -> None:
    (data_dir / "GSTMultiHate" / "language.csv").unlink()
    with pytest.raises(DataError, match="language"):
        GSTMultiHate(data_dir=data_dir)
    write_csv(data_dir / "GSTAGNews" / "topic.csv", ["text", "topic"], [("a", "x")])
    with pytest.raises(DataError, match=r"missing column.*label"):
        GSTAGNews(data_dir=data_dir).load_data()


def test_papercode_without_local_data_says_how_to_get_it() -> None:
    with pytest.raises(DataError, match=r"no published copy.*--data-dir.*GSTPaperCode/<aspect>.jsonl"):
        GSTPaperCode().load_data()
