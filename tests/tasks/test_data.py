"""Local data: layout, schema checks with precise messages, --limit sampling, content revisions."""

from __future__ import annotations

from collections import Counter

import pytest

from bench.core.errors import DataError
from bench.tasks import InstructSTSB, IntentEmotion, NYTClustering
from bench.tasks.data import Schema, stratified_indices
from bench.tasks.rows import TripletRow
from helpers import write_csv, write_jsonl

HEADER = ["anchor", "positive", "negative"]


def _intent_emotion_dir(tmp_path, emotion_rows=None):
    write_csv(tmp_path / "IntentEmotion" / "emotion.csv", HEADER, emotion_rows or [["a", "b", "c"]])
    write_csv(tmp_path / "IntentEmotion" / "intent.csv", HEADER, [["d", "e", "f"]])
    return tmp_path


def test_missing_task_folder_and_missing_file(tmp_path):
    with pytest.raises(DataError, match=r"No folder for task IntentEmotion"):
        IntentEmotion(data_dir=tmp_path)
    write_csv(tmp_path / "IntentEmotion" / "emotion.csv", HEADER, [["a", "b", "c"]])
    with pytest.raises(DataError, match=r"Missing data file for IntentEmotion: expected .*intent\.\*"):
        IntentEmotion(data_dir=tmp_path)


def test_malformed_csv_row_names_the_line(tmp_path):
    _intent_emotion_dir(tmp_path)
    path = tmp_path / "IntentEmotion" / "emotion.csv"
    path.write_text("anchor,positive,negative\na,b,c\nonly two,fields\n", encoding="utf-8")
    task = IntentEmotion(data_dir=tmp_path)
    with pytest.raises(DataError, match=r"emotion\.csv line 3: malformed row, expected 3 fields"):
        task.load_data()


def test_empty_text_names_row_and_column(tmp_path):
    _intent_emotion_dir(tmp_path, emotion_rows=[["a", "b", "c"], ["x", "  ", "z"]])
    with pytest.raises(DataError, match=r"emotion\.csv row 2, column 'positive': empty text"):
        IntentEmotion(data_dir=tmp_path).load_data()


def test_missing_column_and_bad_json(tmp_path):
    write_csv(tmp_path / "NYTClustering" / "topic.csv", ["text", "label"], [["t", "x"]])
    write_csv(tmp_path / "NYTClustering" / "location.csv", ["text", "cluster"], [["t", "x"]])
    with pytest.raises(DataError, match=r"topic\.csv: missing column\(s\) cluster"):
        NYTClustering(data_dir=tmp_path).load_data()
    path = tmp_path / "InstructSTSB" / "test.jsonl"
    write_jsonl(path, [{"sentence1": "a", "sentence2": "b", "score": 1, "instruction": "q?"}])
    path.write_text(path.read_text() + '{"sentence1": "a", "sentence2": \n', encoding="utf-8")
    with pytest.raises(DataError, match=r"test\.jsonl line 2: malformed JSON row"):
        InstructSTSB(data_dir=tmp_path).load_data()


def test_sts_score_must_be_in_range(tmp_path):
    write_jsonl(
        tmp_path / "InstructSTSB" / "test.jsonl",
        [{"sentence1": "a", "sentence2": "b", "score": 3, "instruction": "q?"}],
    )
    with pytest.raises(DataError, match=r"score 3.0 outside \[0, 1\]"):
        InstructSTSB(data_dir=tmp_path).load_data()


def test_texts_that_look_like_nulls_stay_texts(tmp_path):
    _intent_emotion_dir(tmp_path, emotion_rows=[["NA", "None", "null"]])
    task = IntentEmotion(data_dir=tmp_path)
    task.load_data()
    assert task.dataset["test"][0]["anchor"] == "NA"


def test_local_revision_follows_content(tmp_path):
    _intent_emotion_dir(tmp_path)
    first = IntentEmotion(data_dir=tmp_path).metadata.revision
    assert first.startswith("local-") and first == IntentEmotion(data_dir=tmp_path).metadata.revision
    _intent_emotion_dir(tmp_path, emotion_rows=[["a", "b", "changed"]])
    assert IntentEmotion(data_dir=tmp_path).metadata.revision != first
    assert IntentEmotion.metadata.revision == "d0101c15083166b77371cf542c4045decc0a6e92"  # class untouched


def test_data_dir_from_environment(tmp_path, monkeypatch):
    _intent_emotion_dir(tmp_path)
    monkeypatch.setenv("INSTRUCT_BENCH_DATA_DIR", str(tmp_path))
    assert IntentEmotion().data_source == f"local:{tmp_path.name}"  # the folder name only, never a path


def test_offline_hub_load_fails_fast_with_a_fix():
    task = IntentEmotion()
    assert task.data_source == "hub"
    with pytest.raises(DataError, match=r"Could not load BrandonZYW/IntentEmotion .*--data-dir"):
        task.load_data()


def test_stratified_indices():
    labels = ["a"] * 50 + ["b"] * 30 + ["c"] * 20
    picked = stratified_indices(labels, 10, seed=1)
    assert picked == sorted(picked) and len(picked) == 10
    assert Counter(labels[i] for i in picked) == {"a": 5, "b": 3, "c": 2}
    assert picked == stratified_indices(labels, 10, seed=1)
    assert picked != stratified_indices(labels, 10, seed=2)
    rare = ["x"] * 97 + ["y", "z", "w"]
    assert {rare[i] for i in stratified_indices(rare, 5, seed=0)} == {"x", "y", "z", "w"}
    assert stratified_indices(labels, 1000, seed=0) == list(range(100))


def test_limit_is_applied_per_aspect_and_keeps_every_cluster(tmp_path):
    texts = [f"t{k}" for k in range(40)]
    write_csv(tmp_path / "NYTClustering" / "topic.csv", ["text", "cluster"], [[t, k % 4] for k, t in enumerate(texts)])
    write_csv(
        tmp_path / "NYTClustering" / "location.csv", ["text", "cluster"], [[t, k % 2] for k, t in enumerate(texts)]
    )
    task = NYTClustering(data_dir=tmp_path, limit=8)
    task.load_data()
    rows = task.dataset["test"].to_list()
    assert Counter(r["aspect"] for r in rows) == {"topic": 8, "location": 8}
    assert Counter(r["cluster"] for r in rows if r["aspect"] == "topic") == {"0": 2, "1": 2, "2": 2, "3": 2}


def test_suite_run_skips_tasks_without_local_data_but_named_tasks_fail(tmp_path, caplog):
    from bench.core.errors import MissingDataError
    from bench.run.runner import RunOptions, build_tasks

    _intent_emotion_dir(tmp_path)
    with caplog.at_level("WARNING", logger="bench"):
        tasks = build_tasks(RunOptions(suite="awareness", data_dir=str(tmp_path)))
    assert [t.metadata.name for t in tasks] == ["IntentEmotion"]
    skipped = [r.getMessage() for r in caplog.records if r.getMessage().startswith("skipped")]
    assert len(skipped) == 2 and "InstructSTSB" in skipped[0] and "NYTClustering" in skipped[1]
    with pytest.raises(MissingDataError, match="No folder for task InstructSTSB"):
        build_tasks(RunOptions(tasks=["IntentEmotion", "InstructSTSB"], data_dir=str(tmp_path)))
    with pytest.raises(MissingDataError, match="No task of suite 'robustness' has data"):
        build_tasks(RunOptions(suite="robustness", data_dir=str(tmp_path)))


def _sts_rows(**changes):
    return [
        {"sentence1": "a", "sentence2": "b", "score": 1, "instruction": "q?"},
        {"sentence1": "c", "sentence2": "d", "score": 0, "instruction": "r?", **changes},
    ]


def test_parquet_loads_like_jsonl(tmp_path):
    """Read with pyarrow directly (no copy into the datasets cache): the same rows as the JSONL."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    write_jsonl(tmp_path / "j" / "InstructSTSB" / "test.jsonl", _sts_rows())
    (tmp_path / "p" / "InstructSTSB").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(_sts_rows()), tmp_path / "p" / "InstructSTSB" / "test.parquet")
    loaded = []
    for name in ("j", "p"):
        task = InstructSTSB(data_dir=tmp_path / name)
        task.load_data()
        loaded.append(task.dataset["test"].to_list())
    assert loaded[0] == loaded[1] and len(loaded[0]) == 2


def test_a_line_separator_inside_a_jsonl_text_is_text(tmp_path):
    """JSON allows U+2028 (and U+0085) unescaped inside a string; Python's splitlines would cut the row there."""
    path = tmp_path / "InstructSTSB" / "test.jsonl"
    write_jsonl(path, _sts_rows())
    path.write_text(path.read_text().replace('"c"', '"c\u2028still c\u0085"'), encoding="utf-8")
    task = InstructSTSB(data_dir=tmp_path)
    task.load_data()
    assert "c\u2028still c\u0085" in task.dataset["test"]["sentence1"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("\u200b\u200c\u200d\u2060\ufeff \t", "empty text"),
        ("\u3164\ufe0f", "empty text"),
        ("ok \ud83d cut", "the text holds a lone surrogate"),
        (["a", "list"], "expected text, got list"),
        ("x" * 10_000 + "\u200b", None),  # a real text with a zero-width character is fine
    ],
)
def test_texts_must_be_visible_and_writable(tmp_path, value, message):
    write_jsonl(tmp_path / "InstructSTSB" / "test.jsonl", _sts_rows(sentence2=value))
    task = InstructSTSB(data_dir=tmp_path)
    if message is None:
        task.load_data()
        return
    with pytest.raises(DataError, match=rf"test\.jsonl row 2, column 'sentence2': {message}") as caught:
        task.load_data()
    assert len(str(caught.value)) < 400  # a bounded view of the value, never the whole of it


@pytest.mark.parametrize(
    ("label", "message"),
    [
        ("\u200b", "empty label"),
        ({"a": 1}, "a label must be a text or a number, got dict"),
        ("x\udc00", "the text holds a lone surrogate"),
    ],
)
def test_labels_must_be_one_visible_value(tmp_path, label, message):
    rows = [{"text": "t1", "cluster": "a"}, {"text": "t2", "cluster": label}]
    write_jsonl(tmp_path / "NYTClustering" / "topic.jsonl", rows)
    write_jsonl(tmp_path / "NYTClustering" / "location.jsonl", rows)
    with pytest.raises(DataError, match=rf"topic\.jsonl row 2, column 'cluster': {message}"):
        NYTClustering(data_dir=tmp_path).load_data()


def test_a_csv_error_names_the_line_its_record_starts_on(tmp_path):
    _intent_emotion_dir(tmp_path)
    path = tmp_path / "IntentEmotion" / "emotion.csv"
    path.write_text("anchor,positive,negative\na,b,c\n" + '"open,b,c\n' + "x\n" * 70_000, encoding="utf-8")
    with pytest.raises(
        DataError, match=r"emotion\.csv line 3: a field runs past 131,072 characters .* Close the quote"
    ):
        IntentEmotion(data_dir=tmp_path).load_data()


def test_a_schema_must_name_exactly_the_keys_of_its_row_type():
    """`validate_rows` returns the schema's row TypedDict: a column it lacks or adds would make that type lie."""
    assert Schema(TripletRow, {"anchor": "text", "positive": "text", "negative": "text"}).names == [
        "anchor",
        "positive",
        "negative",
    ]
    with pytest.raises(TypeError, match=r"not the keys of TripletRow"):
        Schema(TripletRow, {"anchor": "text", "positive": "text"})
    with pytest.raises(TypeError, match=r"not the keys of TripletRow"):
        Schema(TripletRow, {"anchor": "text", "positive": "text", "negative": "text", "criterion": "label"})
