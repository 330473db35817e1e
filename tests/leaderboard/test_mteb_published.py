"""MTEB's published results on the leaderboard (bench/leaderboard/mteb_published.py, `--mteb-results`).

Read from tests/fixtures/mteb_results: real files of MTEB's results repository (SOURCES.md names each
one's commit). Every expected score is read here from the JSON files themselves, independently of MTEB's
loader, and checked against two values copied from the files by hand, so a reader that picked another
file, split, revision or key fails.
"""

from __future__ import annotations

import csv
import json
import logging
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.cli.main import main
from bench.core.errors import BenchError, ConfigError, DataError
from bench.leaderboard.mteb_published import SETTING_NOTE, mteb_suites, published_rows
from bench.results import task_catalog
from conftest import ROOT

FIXTURE = Path(__file__).parent.parent / "fixtures" / "mteb_results"
E5 = "intfloat/multilingual-e5-small"
E5_DIR = FIXTURE / "results" / "intfloat__multilingual-e5-small" / "fd1525a9fd15316a2d503bf26ab031a61d056e98"
E5_OLD_DIR = FIXTURE / "results" / "intfloat__multilingual-e5-small" / "e4ce9877abf3edfe10b0d82785e83bdcb973e22e"
MXBAI = "mixedbread-ai/mxbai-embed-large-v1"
MXBAI_DIR = FIXTURE / "results" / "mixedbread-ai__mxbai-embed-large-v1" / "990580e27d329c7408b3741ecff85876e128e203"
BGE = "BAAI/bge-small-en-v1.5"
BGE_DIR = FIXTURE / "results" / "BAAI__bge-small-en-v1.5" / "5c38ec7c405ec4b44b94cc5a9bb96e735b38267a"
OPENAI = "openai/text-embedding-3-small"
OPENAI_DIR = (
    FIXTURE / "results" / "openai__text-embedding-3-small" / "1"
)  # MTEB < 1.0 files: SciDocsRR holds `map` only
OPENAI_STS = ("STS12", "STS15", "STS16", "STSBenchmark", "SICK-R")  # the index lacks its STS13 and STS14
GENERIC = set(task_catalog.suites()["generic"])
STS = set(task_catalog.suites()["generic-sts"])
FOLLOWIR = set(task_catalog.suites()["followir"])
INSTRUCTION_RETRIEVAL = set(task_catalog.suites()["instruction-retrieval"])
MTEB_SUITES = {"generic", "generic-sts", "followir", "instruction-retrieval"}


def published(folder: Path, task: str) -> float:
    """The main score ×100 as the file `folder/task.json` publishes it (one split, one subset: these tasks')."""
    data = json.loads((folder / f"{task}.json").read_text(encoding="utf-8"))
    (subset,) = data["scores"]["test"]
    return 100 * subset["main_score"]


@pytest.fixture(scope="module")
def rows() -> dict[str, Any]:
    return {r.model: r for r in published_rows(FIXTURE)}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A copy of the mimic, to break."""
    return Path(shutil.copytree(FIXTURE, tmp_path / "mteb-results"))


# ------------------------------------------------------------------------------ which suites, which models


def test_the_suites_made_of_mteb_tasks_are_generic_generic_sts_and_the_instruction_retrieval_ones():
    found = mteb_suites()
    assert set(found) == MTEB_SUITES  # not metaeol-sts: its SentEval copies are not MTEB's tasks
    assert set(found["generic"]) == GENERIC and set(found["generic-sts"]) == STS
    assert set(found["followir"]) == FOLLOWIR and set(found["instruction-retrieval"]) == INSTRUCTION_RETRIEVAL


def test_a_given_suite_with_a_task_mteb_lacks_is_an_error():
    with pytest.raises(ConfigError, match="STSBenchmark-SentEval"):
        mteb_suites({"metaeol-sts": task_catalog.suites()["metaeol-sts"]})
    assert published_rows(FIXTURE, {"generic-sts": sorted(STS)})  # a given MTEB suite is read


def test_each_model_has_the_tasks_of_the_suites_it_completes_and_an_incomplete_one_is_left_out(rows):
    assert set(rows) == {E5, MXBAI}  # bge-small lacks STS16: in no suite
    assert set(rows[E5].scores) == GENERIC | FOLLOWIR  # every task of generic (and so of generic-sts), and FollowIR's
    assert set(rows[MXBAI].scores) == STS  # generic-sts only: it lacks TwentyNewsgroups and the rerankers


def test_scores_are_mtebs_published_main_scores_times_100(rows):
    for model, folder in ((E5, E5_DIR), (MXBAI, MXBAI_DIR)):
        for task, value in rows[model].scores.items():
            assert value == published(folder, task), (model, task)
    # two values copied from the files by hand: the helper above reads the right key
    assert rows[E5].scores["STS12"] == pytest.approx(78.0543, abs=1e-9)
    assert rows[MXBAI].scores["STS16"] == pytest.approx(86.774, abs=1e-9)


@pytest.mark.parametrize("old_name", [E5_OLD_DIR.name, "zz-read-last"])
def test_another_revision_folder_does_not_replace_the_registry_revision(repo, old_name):
    """MTEB's `join_revisions` keeps the revision its registry names, whichever folder is read first."""
    old = repo / E5_OLD_DIR.relative_to(FIXTURE)
    old.rename(old.with_name(old_name))
    assert published(E5_OLD_DIR, "STS12") != published(E5_DIR, "STS12")
    (row,) = [r for r in published_rows(repo) if r.model == E5]
    assert row.scores["STS12"] == published(E5_DIR, "STS12")
    assert row.facts["revision"] == E5_DIR.name


def test_experiment_folders_are_ignored(repo, rows):
    """An `experiments/` folder (MTEB's layout for a run with other settings), whatever its model_meta.json
    says, and a revision folder whose model_meta.json names experiment settings never give a published
    score: here either would complete bge-small with the STS16 it lacks."""
    bge = repo / BGE_DIR.relative_to(FIXTURE)
    experiment = bge / "experiments" / "batch-8"
    experiment.mkdir(parents=True)
    shutil.copy(MXBAI_DIR / "STS16.json", experiment / "STS16.json")
    shutil.copy(BGE_DIR / "model_meta.json", experiment / "model_meta.json")
    other = bge.with_name("experiment-revision")
    shutil.copytree(BGE_DIR, other)
    shutil.copy(MXBAI_DIR / "STS16.json", other / "STS16.json")
    meta = json.loads((other / "model_meta.json").read_text(encoding="utf-8"))
    (other / "model_meta.json").write_text(json.dumps({**meta, "experiment_kwargs": {"batch_size": 8}}))
    found = {r.model: r for r in published_rows(repo)}
    assert set(found) == {E5, MXBAI}
    assert found[E5].scores == rows[E5].scores


def test_rows_carry_the_mark_link_facts_and_notes(rows):
    row = rows[E5]
    assert (row.source, row.label, row.table) == ("mteb", "published by MTEB", None)
    assert (
        row.url == "https://github.com/embeddings-benchmark/results/tree/main/results/intfloat__multilingual-e5-small"
    )
    meta = json.loads((E5_DIR / "model_meta.json").read_text(encoding="utf-8"))
    for key in ("n_parameters", "release_date", "license", "open_weights", "embed_dim", "reference"):
        assert row.facts[key] == meta[key], key
    assert row.spec == {"model": f"mteb:{E5}"}  # in MTEB's registry: `bench run --model mteb:...` runs it
    assert row.notes[0] == SETTING_NOTE
    # SciDocsRR was published on an older dataset revision, with an older MTEB's main score (map)
    assert any(n.startswith("SciDocsRR: MTEB's result is on dataset revision d3c5e1fc") for n in row.notes)
    assert not any(n.startswith("STS12") for n in row.notes)  # same revision and main score as the harness's
    assert rows[MXBAI].notes == (SETTING_NOTE,)


def test_followir_rows_are_mtebs_published_p_mrr(rows):
    """e5-small's three FollowIR files (MTEB 1.36's layout: details under "individual") give its row on the
    followir suite, MTEB's p-MRR ×100; published on older dataset revisions than MTEB 2.26 pins: noted."""
    for task in FOLLOWIR:
        assert rows[E5].scores[task] == published(E5_DIR, task), task
    assert rows[E5].scores["Robust04InstructionRetrieval"] == pytest.approx(-7.6222, abs=1e-9)  # copied by hand
    assert rows[E5].scores["News21InstructionRetrieval"] == pytest.approx(0.5421, abs=1e-9)
    assert any(
        n.startswith("Core17InstructionRetrieval: MTEB's result is on dataset revision e39ff896")
        for n in rows[E5].notes
    )


def test_the_board_shows_mtebs_followir_row_with_mtebs_numbers(tmp_path):
    from bench.leaderboard.site import build

    empty = tmp_path / "no-runs"
    empty.mkdir()
    data = build([empty], tmp_path / "site", external=published_rows(FIXTURE)).data
    tables = {s["name"]: s for s in data["suites"]}
    followir = tables["followir"]
    assert followir["averages"][0]["label"] == "p-MRR" and followir["metrics"][0]["main_score"] == "p-MRR"
    (row,) = [r for r in followir["rows"] if r.get("source") == "mteb"]
    assert row["model_id"] == f"mteb||{E5}"
    assert row["scores"] == {t: published(E5_DIR, t) for t in FOLLOWIR}
    assert row["averages"]["p-MRR"] == pytest.approx(sum(published(E5_DIR, t) for t in FOLLOWIR) / 3)
    # e5-small has no InstructIR result: no row in the wider suite, whose averages keep p-MRR apart
    assert not [r for r in tables.get("instruction-retrieval", {}).get("rows", []) if r.get("source") == "mteb"]


# ----------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda p: p / "missing", "no such folder"),
        (lambda p: (p / "file.json").write_text("{}") and p / "file.json", "is a file, not a folder"),
        (lambda p: p, "is not an MTEB results folder"),
    ],
)
def test_a_path_that_is_not_a_results_folder_is_one_error(tmp_path, make, words):
    path = make(tmp_path)
    with pytest.raises(BenchError, match=words) as caught:
        published_rows(path)
    assert "git clone --depth 1 https://github.com/embeddings-benchmark/results" in str(caught.value)
    assert not (tmp_path / "missing").exists()  # MTEB's ResultCache creates its folder: never for a wrong path


def test_cli_prints_one_error_line(tmp_path, capsys):
    code = main(["leaderboard", "build", "--results", str(tmp_path), "--mteb-results", str(tmp_path / "nope")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: --mteb-results ") and "no such folder" in err[0]


def _not_json(folder: Path) -> None:
    (folder / "STS13.json").write_text('{"task_name": "STS13", "scores": ')


def _absurd(folder: Path) -> None:
    path = folder / "STS14.json"
    path.write_text(path.read_text().replace('"main_score": 0.8521908733722553', '"main_score": 85.21908733722553'))


def _oversized(folder: Path) -> None:
    path = folder / "STS15.json"
    path.write_text(path.read_text() + " " * 2_000_001)


def _linked(folder: Path) -> None:
    (folder / "STS12.json").unlink()
    (folder / "STS12.json").symlink_to("/dev/zero")  # read whole, it would never end


def _linked_folder(folder: Path) -> None:
    """The revision folder a link to a folder outside the clone (here a copy of the same files)."""
    outside = folder.parents[3] / "outside"
    folder.rename(outside)
    folder.symlink_to(outside, target_is_directory=True)


def _bad_meta(folder: Path) -> None:
    (folder / "model_meta.json").write_text("[1, 2")


def _deep(folder: Path) -> None:
    """Nested 100,000 deep: MTEB's `json.loads` would end the whole build with a RecursionError."""
    (folder / "STS16.json").write_text('{"task_name": "STS16", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")


def _renamed(name: str) -> Callable[[Path], None]:
    def rename(folder: Path) -> None:
        meta = json.loads((folder / "model_meta.json").read_text(encoding="utf-8"))
        (folder / "model_meta.json").write_text(json.dumps({**meta, "name": name}), encoding="utf-8")

    return rename


@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (_not_json, "STS13.json is not valid JSON: Expecting value (line 1, column 34)"),
        (_absurd, "STS14: main score 85.2"),
        (_oversized, "STS15.json is 2,00"),
        (_linked, "STS12.json is a link or not a regular file"),
        (_bad_meta, "model_meta.json"),
        (_linked_folder, "the model or revision folder is a link"),
        (_deep, "STS16.json line 1: arrays/objects nest more than 64 levels deep"),
        (
            _renamed("mixedbread-ai/mxbai-embed-l\u0430rge-v1"),
            "reads as the ASCII name 'mixedbread-ai/mxbai-embed-large-v1'",
        ),
        (_renamed("mixedbread-ai/mxbai\u202eembed"), "holds a control or invisible character"),
    ],
)
def test_a_malformed_model_folder_is_skipped_with_a_warning(repo, rows, caplog, damage, words):
    damage(repo / MXBAI_DIR.relative_to(FIXTURE))
    with caplog.at_level(logging.WARNING, logger="bench.leaderboard.mteb_published"):
        found = {r.model: r for r in published_rows(repo)}
    assert set(found) == {E5} and found[E5].scores == rows[E5].scores
    assert any(words in r.getMessage() for r in caplog.records), [r.getMessage() for r in caplog.records]


def test_every_model_folder_unreadable_is_one_error(repo):
    for folder in (E5_DIR, E5_OLD_DIR, MXBAI_DIR, BGE_DIR, OPENAI_DIR):
        _bad_meta(repo / folder.relative_to(FIXTURE))
    with pytest.raises(DataError, match=r"none of its 5 model folder\(s\) .* could be read; the first: "):
        published_rows(repo)


def test_the_reader_imports_mteb_only_when_called():
    code = "import sys, bench.leaderboard.mteb_published, bench.cli.commands.leaderboard; print('mteb' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------------------------------ end to end


@pytest.mark.slow  # the demo submission runs the demo suite with the real model (once per session)
def test_cli_build_shows_mtebs_rows_in_the_generic_and_sts_suites(demo_results, tmp_path, capsys):
    site = tmp_path / "site"
    args = ["leaderboard", "build", "--results", str(demo_results), "--mteb-results", str(FIXTURE)]
    assert main([*args, "--no-reported", "--out", str(site)]) == 0
    assert "2 row(s) published by MTEB" in capsys.readouterr().out
    data = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    external = {x["id"]: x for x in data["external"]}
    assert {x["name"] for x in external.values()} == {E5, MXBAI}
    assert all(x["source"] == "mteb" and x["source_label"] == "published by MTEB" for x in external.values())
    assert external[f"mteb||{E5}"]["n_parameters"] == 118_000_000
    tables = {s["name"]: s for s in data["suites"]}
    expected = {"generic": {E5: E5_DIR}, "generic-sts": {E5: E5_DIR, MXBAI: MXBAI_DIR}, "followir": {E5: E5_DIR}}
    for suite, models in expected.items():
        shown = {external[r["model_id"]]["name"]: r for r in tables[suite]["rows"] if r.get("source") == "mteb"}
        assert set(shown) == set(models), suite  # mxbai lacks generic's other tasks: not in its table
        for model, folder in models.items():
            assert shown[model]["scores"] == {t: published(folder, t) for t in shown[model]["scores"]}
    for suite in set(tables) - set(expected):  # metaeol-sts, all, inbedder: not made of MTEB tasks only; no InstructIR
        assert not [r for r in tables[suite]["rows"] if r.get("source") == "mteb"], suite
    with (site / "leaderboard.csv").open(encoding="utf-8") as f:
        csv_rows = [r for r in csv.DictReader(f) if r["source"] == "mteb"]
    assert {r["task"] for r in csv_rows} == GENERIC | FOLLOWIR


def test_the_harness_s_own_tasks_registered_with_mteb_are_not_mteb_s():
    """`import bench.tasks` registers the harness's tasks in MTEB's registry (same main score and revision):
    they must not make the instruction suites look like suites MTEB publishes results for."""
    import bench.tasks  # noqa: F401  (registers the harness's tasks with MTEB)

    assert set(mteb_suites()) == MTEB_SUITES


# ------------------------------------------------------------- issue 42: complete and honest MTEB rows


def _old_format_score(task: str) -> float:
    """The score ×100 of an MTEB < 1.0 STS file of text-embedding-3-small (`{"test": {"cos_sim": {"spearman": x}}}`)."""
    data = json.loads((OPENAI_DIR / f"{task}.json").read_text(encoding="utf-8"))
    return 100 * data["test"]["cos_sim"]["spearman"]


# The STS files text-embedding-3-small has in the mimic, and the same with its SciDocsRR: a reranking file of
# MTEB < 1.0 holding only `map`, for which MTEB 2.26 gives no main score (map_at_1000).
WITH_OLD_RERANKING = {"sts-five": list(OPENAI_STS), "sts-five-and-scidocs": [*OPENAI_STS, "SciDocsRR"]}


def test_a_task_mteb_cannot_score_is_missing_for_that_task_only(caplog):
    """Before: its SciDocsRR file (MTEB's TypeError on a main score of None) dropped the model from every suite."""
    from bench.leaderboard.external import joins

    with caplog.at_level(logging.WARNING, logger="bench.leaderboard.mteb_published"):
        found = {r.model: r for r in published_rows(FIXTURE, WITH_OLD_RERANKING)}
    row = found[OPENAI]
    assert row.scores == {t: _old_format_score(t) for t in OPENAI_STS}
    assert row.scores["STS12"] == pytest.approx(73.08926436, abs=1e-9)  # copied from the file by hand
    assert set(row.unscored) == {"SciDocsRR"}
    assert "no main score (map_at_1000)" in row.unscored["SciDocsRR"] and "holds map only" in row.unscored["SciDocsRR"]
    assert joins(row, WITH_OLD_RERANKING["sts-five"]) and joins(row, WITH_OLD_RERANKING["sts-five-and-scidocs"])
    (warning,) = [r.getMessage() for r in caplog.records if OPENAI in r.getMessage()]
    assert "SciDocsRR counted as missing (the model stays on the suites it completes)" in warning


def test_such_a_model_is_shown_partial_and_unranked_on_the_suite_with_that_task(tmp_path):
    """The board, MTEB's way: the model ranked on the suite it completes, "5 of 6" and unranked on the suite
    whose SciDocsRR MTEB cannot score, that cell saying why."""
    from bench.leaderboard.suite_tables import suite_tables

    found = {r.model: r for r in published_rows(FIXTURE, WITH_OLD_RERANKING)}
    suites = {name: tuple(tasks) for name, tasks in WITH_OLD_RERANKING.items()}
    with pytest.MonkeyPatch.context() as mp:  # the two suites stand for the harness's generic-sts and generic
        mp.setattr(task_catalog, "suites", lambda: suites)
        mp.setattr(task_catalog, "ordered_suites", lambda: suites)
        tables = {t["name"]: t for t in suite_tables([], external=[found[OPENAI], found[MXBAI]])}
    sts = {r["model_id"]: r for r in tables["sts-five"]["rows"]}
    assert sts[f"mteb||{OPENAI}"]["rank"] is not None and sts[f"mteb||{OPENAI}"]["coverage"] == "5 of 5"
    (row,) = [r for r in tables["sts-five-and-scidocs"]["rows"] if r["model_id"] == f"mteb||{OPENAI}"]
    assert row["coverage"] == "5 of 6" and row["rank"] is None and row["unranked_reason"].startswith("partial: 5 of")
    assert row["scores"]["SciDocsRR"] is None and "no main score" in row["unscored"]["SciDocsRR"]
    # every cell of an MTEB < 1.0 file names no dataset revision: marked, so not comparable with harness runs
    assert row["cell_marks"]["STS12"][0]["key"] == "older_revision" and row["comparable_with_runs"] is False
    assert sts[f"mteb||{MXBAI}"]["cell_marks"] == {} and sts[f"mteb||{MXBAI}"]["comparable_with_runs"] is True


def test_every_model_with_results_that_makes_no_row_is_listed_with_why():
    from bench.leaderboard.mteb_published import published as read

    found = read(FIXTURE)
    assert {r.model for r in found.rows} == {E5, MXBAI}
    why = {x["model"]: x["reason"] for x in found.excluded}
    assert set(why) == {BGE, OPENAI} and all(x["source"] == "mteb" for x in found.excluded)
    assert why[BGE].startswith("completes no suite: generic-sts lacks STS16 (has 6 of 7 tasks)")
    assert why[OPENAI].startswith("completes no suite: generic-sts lacks STS13, STS14 (has 5 of 7 tasks)")


def test_an_unreadable_folder_is_listed_with_why(repo):
    from bench.leaderboard.mteb_published import published as read

    _bad_meta(repo / MXBAI_DIR.relative_to(FIXTURE))
    why = {x["model"]: x["reason"] for x in read(repo).excluded}
    assert why[f"{MXBAI} (revision folder {MXBAI_DIR.name})"].startswith("its folder cannot be read: model_meta.json")


def test_cells_on_an_older_metric_or_dataset_revision_are_marked_per_cell(rows):
    marks = rows[E5].cell_marks
    assert set(marks["SciDocsRR"]) == {"older_metric", "older_revision"}  # MTEB 1.36: `map`, revision d3c5e1fc
    assert (
        "map_at_1000" in marks["SciDocsRR"]["older_metric"] and "d3c5e1fc0b85" in marks["SciDocsRR"]["older_revision"]
    )
    assert not any(t in marks for t in STS)  # the harness's revision and main score
    assert rows[MXBAI].cell_marks == {}


def test_a_row_joined_from_two_revision_folders_names_each(repo, rows):
    """Without its registry revision's STS12, MTEB's join takes the older folder's: the row names both."""
    (repo / E5_DIR.relative_to(FIXTURE) / "STS12.json").unlink()
    (row,) = [r for r in published_rows(repo) if r.model == E5]
    assert row.scores["STS12"] == published(E5_OLD_DIR, "STS12")
    assert row.revisions == (E5_DIR.name, E5_OLD_DIR.name)  # most tasks first
    assert rows[E5].revisions == (E5_DIR.name,)


def test_the_site_names_each_revision_a_row_was_joined_from(repo, tmp_path):
    from bench.leaderboard.site import build

    (repo / E5_DIR.relative_to(FIXTURE) / "STS12.json").unlink()
    empty = tmp_path / "no-runs"
    empty.mkdir()
    data = build([empty], tmp_path / "site", external=published_rows(repo)).data
    (row,) = [
        r for s in data["suites"] if s["name"] == "generic-sts" for r in s["rows"] if r["model_id"] == f"mteb||{E5}"
    ]
    assert row["revisions"] == [E5_DIR.name, E5_OLD_DIR.name]
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "revisions fd1525a9fd15…, e4ce9877abf3…" in html


def test_rows_carry_the_training_datasets_mteb_s_registry_names(rows):
    import mteb

    from bench.leaderboard.zero_shot import zero_shot

    for model in (E5, MXBAI):
        meta = mteb.get_model_meta(model)
        assert rows[model].training == frozenset(meta.get_training_datasets())
        assert zero_shot(rows[model].training, GENERIC)["zero_shot"] == (
            "yes" if meta.is_zero_shot_on(sorted(GENERIC)) else "no"
        )
    found = {r.model: r for r in published_rows(FIXTURE, WITH_OLD_RERANKING)}
    assert mteb.get_model_meta(OPENAI).training_datasets is None and found[OPENAI].training is None  # MTEB: "NA"


def test_the_site_lists_the_left_out_models_and_offers_the_zero_shot_and_comparable_filters(tmp_path):
    from bench.leaderboard.mteb_published import published as read
    from bench.leaderboard.site import build

    empty = tmp_path / "no-runs"
    empty.mkdir()
    found = read(FIXTURE)
    data = build([empty], tmp_path / "site", external=found.rows, excluded=found.excluded).data
    assert data["excluded_models"] == found.excluded
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert 'id="excluded"' in html and "openai/<wbr>text-embedding-3-small" in html and "lacks STS13, STS14" in html
    assert 'class="f-zero-shot"' in html and 'class="f-comparable"' in html
    assert 'class="cell-mark older_metric"' in html  # e5-small's SciDocsRR on generic
    generic = next(s for s in data["suites"] if s["name"] == "generic")
    (e5,) = [r for r in generic["rows"] if r["model_id"] == f"mteb||{E5}"]
    assert (e5["zero_shot"], e5["zero_shot_pct"], e5["trained_on"]) == ("yes", 100, [])
    assert e5["comparable_with_runs"] is False and set(e5["cell_marks"]) == {
        "AskUbuntuDupQuestions",
        "SciDocsRR",
        "StackOverflowDupQuestions",
    }


def test_generic_shows_mtebs_mean_over_all_its_tasks_last(tmp_path):
    """MTEB's "Mean (Task)" over all eleven tasks of generic, after the papers' averages (which still rank)."""
    from bench.leaderboard.site import build

    empty = tmp_path / "no-runs"
    empty.mkdir()
    data = build([empty], tmp_path / "site", external=published_rows(FIXTURE)).data
    generic = next(s for s in data["suites"] if s["name"] == "generic")
    assert [a["label"] for a in generic["averages"]][-1] == "Mean (Task)"
    assert generic["average_label"] == "Avg (InBedder)"
    assert set(generic["averages"][-1]["tasks"]) == GENERIC
    (e5,) = [r for r in generic["rows"] if r["model_id"] == f"mteb||{E5}"]
    assert e5["averages"]["Mean (Task)"] == pytest.approx(sum(published(E5_DIR, t) for t in GENERIC) / len(GENERIC))


def test_cli_build_counts_the_models_left_out(tmp_path, capsys):
    empty = tmp_path / "no-runs"
    empty.mkdir()
    args = ["leaderboard", "build", "--results", str(empty), "--mteb-results", str(FIXTURE), "--no-reported"]
    assert main([*args, "--out", str(tmp_path / "site")]) == 0
    out = capsys.readouterr().out
    assert "2 row(s) published by MTEB" in out and "2 MTEB model(s) left out, each listed on the site with why" in out
    data = json.loads((tmp_path / "site" / "leaderboard.json").read_text(encoding="utf-8"))
    assert {x["model"] for x in data["excluded_models"]} == {BGE, OPENAI}


@pytest.mark.parametrize(("count", "folded"), [(50, False), (51, True)])
def test_a_long_list_of_models_left_out_is_folded_under_its_count(tmp_path, count, folded):
    """MTEB's whole repository leaves out hundreds of models (one STS file each): the list folds, its count shown."""
    from bench.leaderboard.row_types import ExcludedJson
    from bench.leaderboard.site import build

    empty = tmp_path / "no-runs"
    empty.mkdir()
    left_out = [ExcludedJson(source="mteb", model=f"org/model-{i}", reason="completes no suite") for i in range(count)]
    build([empty], tmp_path / "site", excluded=left_out)
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    summary = f"<summary>{count} model(s) with published results of the suites' tasks but no row here"
    assert (f"<details>{summary}" in html) is folded and (f"<details open>{summary}" in html) is not folded
