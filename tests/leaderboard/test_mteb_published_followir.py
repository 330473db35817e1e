"""MTEB's published FollowIR rows for more models (issue 44): `--mteb-results` on the extended mimic.

The mimic (tests/fixtures/mteb_results, SOURCES.md names each file's commit) holds, beside its own
`results/`, a `followir/results/` folder of real FollowIR files of five more models, byte for byte from
MTEB's results repository. They are kept apart so the tests of tests/leaderboard/test_mteb_published.py keep reading
the base mimic unchanged; the extended mimic (`extended` below) is both folders in one `results/`.

The models span MTEB's layouts and the registry: FollowIR-7B (an instruction-tuned reranker, an `external`
folder whose files name no MTEB version), INSTRUCTOR-xl (instruction-tuned, not in MTEB's registry, files of
MTEB 1.7.32: the layout before 1.11, p-MRR with no main_score), e5-base-v2 (a plain bi-encoder, MTEB 1.7.32),
bge-base-en-v1.5 (a plain bi-encoder, MTEB 1.18.0: p-MRR beside `individual.original` / `changed`) and
GritLM-7B (only Core17 and Robust04: it completes no suite). Every expected score is read here from the
JSON files themselves, independently of MTEB's loader, and checked against values copied by hand.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from bench.leaderboard.mteb_published import UNREGISTERED_NOTE, published
from bench.results import task_catalog

FIXTURE = Path(__file__).parent.parent / "fixtures" / "mteb_results"
MORE = FIXTURE / "followir" / "results"
FOLLOWIR = sorted(task_catalog.suites()["followir"])
E5_SMALL = "intfloat/multilingual-e5-small"
FOLLOWIR_7B = "jhu-clsp/FollowIR-7B"
INSTRUCTOR_XL = "hkunlp/instructor-xl"
E5_BASE = "intfloat/e5-base-v2"
BGE_BASE = "BAAI/bge-base-en-v1.5"
GRITLM = "GritLM/GritLM-7B"
FOLDERS = {
    E5_SMALL: FIXTURE / "results" / "intfloat__multilingual-e5-small" / "fd1525a9fd15316a2d503bf26ab031a61d056e98",
    FOLLOWIR_7B: MORE / "jhu-clsp__FollowIR-7B" / "external",
    INSTRUCTOR_XL: MORE / "hkunlp__instructor-xl" / "no_revision_available",
    E5_BASE: MORE / "intfloat__e5-base-v2" / "no_revision_available",
    BGE_BASE: MORE / "BAAI__bge-base-en-v1.5" / "a5beb1e3e68b9ab74eb54cfd186867f64f240e1a",
}
# the other version of FollowIR-7B's Core17 file in the repository's history (commit 29546d77…): the same
# p-MRR written ×100, as text byte for byte
FOLLOWIR_7B_CORE17_PERCENT = (
    '{\n    "dataset_revision": "e39ff896cf3efbbdeeb950e6bd7c79f266995b07",\n    "task_name": '
    '"Core17InstructionRetrieval",\n    "evaluation_time": null,\n    "mteb_version": null,\n    "scores": {\n'
    '        "test": [\n            {\n                "hf_subset": "default",\n                "languages": [\n'
    '                    "eng-Latn"\n                ],\n                "p-MRR": 16.47851858684521,\n'
    '                "main_score": 16.47851858684521\n            }\n        ]\n    }\n}'
)


def p_mrr(folder: Path, task: str) -> float:
    """The p-MRR ×100 the file `folder/task.json` publishes for its test split, read from the JSON as written:
    MTEB >= 1.11 layout (`scores.test[0].main_score`) or the layout before (`test["p-MRR"]`)."""
    data = json.loads((folder / f"{task}.json").read_text(encoding="utf-8"))
    if "scores" in data:
        (subset,) = data["scores"]["test"]
        return 100 * subset["main_score"]
    return 100 * data["test"]["p-MRR"]


@pytest.fixture(scope="module")
def extended(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The extended mimic: the base mimic's results/ and followir/results/ in one results folder."""
    root = tmp_path_factory.mktemp("mteb-extended")
    shutil.copytree(FIXTURE / "results", root / "results")
    shutil.copytree(MORE, root / "results", dirs_exist_ok=True)
    return root


def test_the_fixture_files_hold_the_values_copied_by_hand():
    """p_mrr reads the right key of each layout (values copied from the files by hand)."""
    assert p_mrr(FOLDERS[FOLLOWIR_7B], "Core17InstructionRetrieval") == pytest.approx(16.478518586845212, abs=1e-12)
    assert p_mrr(FOLDERS[INSTRUCTOR_XL], "Robust04InstructionRetrieval") == pytest.approx(-8.082301624473728, abs=1e-12)
    assert p_mrr(FOLDERS[E5_BASE], "News21InstructionRetrieval") == pytest.approx(-1.9953940842661264, abs=1e-12)
    assert p_mrr(FOLDERS[BGE_BASE], "Robust04InstructionRetrieval") == pytest.approx(-7.5349, abs=1e-12)


def test_each_new_model_s_followir_cells_are_mtebs_published_p_mrr(extended):
    found = published(extended)
    rows = {r.model: r for r in found.rows}
    for model, folder in FOLDERS.items():
        assert {t: rows[model].scores[t] for t in FOLLOWIR} == {t: p_mrr(folder, t) for t in FOLLOWIR}, model
    # the new models have FollowIR's files only: they complete followir and nothing else
    assert all(set(rows[m].scores) == set(FOLLOWIR) for m in (FOLLOWIR_7B, INSTRUCTOR_XL, E5_BASE, BGE_BASE))
    # INSTRUCTOR is not in MTEB's registry: its row is marked, with no run spec and no link
    assert rows[INSTRUCTOR_XL].unregistered and rows[INSTRUCTOR_XL].spec is None and rows[INSTRUCTOR_XL].url == ""
    assert UNREGISTERED_NOTE in rows[INSTRUCTOR_XL].notes
    assert not rows[FOLLOWIR_7B].unregistered and rows[FOLLOWIR_7B].spec == {"model": f"mteb:{FOLLOWIR_7B}"}
    assert rows[FOLLOWIR_7B].facts["revision"] == "4d25d437e38b510c01852070c0731e8f6e1875d1"  # its model_meta.json's
    # GritLM-7B has no News21 file: no row, listed with why
    why = {x["model"]: x["reason"] for x in found.excluded}
    assert GRITLM not in rows
    assert why[GRITLM].startswith("completes no suite: followir lacks News21InstructionRetrieval (has 2 of 3 tasks)")


def test_the_board_shows_mtebs_p_mrr_rows_ranked_by_the_comparability_rule(extended, tmp_path):
    """The followir table shows every model's published p-MRR as the files hold it, each cell marked for its
    older dataset revision (so none is comparable with a harness run), and ranks the MTEB rows among
    themselves: complete, on the same data (MTEB's files, the same dataset revisions) and metric."""
    from bench.leaderboard.site import build

    empty = tmp_path / "no-runs"
    empty.mkdir()
    found = published(extended)
    data = build([empty], tmp_path / "site", external=found.rows, excluded=found.excluded).data
    followir = next(s for s in data["suites"] if s["name"] == "followir")
    shown = {r["model_id"].removeprefix("mteb||"): r for r in followir["rows"] if r.get("source") == "mteb"}
    assert set(shown) == set(FOLDERS)
    means = {m: sum(p_mrr(folder, t) for t in FOLLOWIR) / len(FOLLOWIR) for m, folder in FOLDERS.items()}
    for model, folder in FOLDERS.items():
        row = shown[model]
        assert row["scores"] == {t: p_mrr(folder, t) for t in FOLLOWIR}, model
        assert row["averages"]["p-MRR"] == pytest.approx(means[model], abs=1e-12), model
        assert {t: [m["key"] for m in row["cell_marks"][t]] for t in FOLLOWIR} == {
            t: ["older_revision"] for t in FOLLOWIR
        }
        assert row["comparable_with_runs"] is False and row["unranked_reason"] is None, model
    # competition ranks on the printed average (×100, two decimals), computed here from the files
    printed = {m: round(v, 2) for m, v in means.items()}
    expected = {m: 1 + sum(o > v for o in printed.values()) for m, v in printed.items()}
    assert {m: shown[m]["rank"] for m in FOLDERS} == expected
    assert expected[FOLLOWIR_7B] == 1 and expected[BGE_BASE] == len(FOLDERS)  # 12.15 first, -3.98 last
    assert data["excluded_models"] == found.excluded and GRITLM in {x["model"] for x in found.excluded}


def test_a_row_missing_a_followir_task_is_shown_partial_and_unranked(extended, tmp_path):
    """A model with a FollowIR file MTEB gives no score for (here News21 of e5-base-v2 without its p-MRR, as
    an older MTEB's file without the main score) stays on the board as a partial row, never ranked."""
    from bench.leaderboard.site import build

    repo = tmp_path / "repo"
    shutil.copytree(extended, repo)
    news21 = repo / FOLDERS[E5_BASE].relative_to(MORE.parent) / "News21InstructionRetrieval.json"
    news21.write_text(news21.read_text(encoding="utf-8").replace('"p-MRR"', '"ndcg_at_10"'), encoding="utf-8")
    empty = tmp_path / "no-runs"
    empty.mkdir()
    data = build([empty], tmp_path / "site", external=published(repo).rows).data
    followir = next(s for s in data["suites"] if s["name"] == "followir")
    (row,) = [r for r in followir["rows"] if r["model_id"] == f"mteb||{E5_BASE}"]
    assert row["rank"] is None and row["unranked_reason"].startswith("partial: 2 of the 3 tasks")
    assert row["scores"]["News21InstructionRetrieval"] is None
    ranked = [r for r in followir["rows"] if r.get("source") == "mteb" and r["rank"] is not None]
    assert sorted(r["rank"] for r in ranked) == [1, 2, 3, 4]


def test_a_file_with_p_mrr_written_x100_leaves_the_model_out_with_a_warning(extended, tmp_path, caplog):
    """The repository's other version of FollowIR-7B's Core17 file holds p-MRR ×100 (16.48, not 0.1648): MTEB's
    loader reads it as written, so it is refused as outside p-MRR's range [-1, 1], never shown as 1647.85."""
    repo = tmp_path / "repo"
    shutil.copytree(extended, repo)
    core17 = repo / FOLDERS[FOLLOWIR_7B].relative_to(MORE.parent) / "Core17InstructionRetrieval.json"
    core17.write_text(FOLLOWIR_7B_CORE17_PERCENT, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="bench.leaderboard.mteb_published"):
        found = published(repo)
    assert FOLLOWIR_7B not in {r.model for r in found.rows}
    assert {INSTRUCTOR_XL, E5_BASE, BGE_BASE, E5_SMALL} <= {r.model for r in found.rows}
    words = "Core17InstructionRetrieval: main score 16.47851858684521 is outside its metric's range"
    assert any(words in r.getMessage() for r in caplog.records), [r.getMessage() for r in caplog.records]
    assert any(words in x["reason"] for x in found.excluded if x["model"].startswith(FOLLOWIR_7B))
