"""`--mteb-results` reads what MTEB's own `ResultCache` reads (issue 40, item 1).

A `ResultCache` folder (`~/.cache/mteb`) holds the user's own runs beside MTEB's published ones, often of
a model MTEB's registry does not know. Such a model gets its row from its own files, marked ∉ "not in
MTEB's registry", and a problem in any one model folder is one warning naming it, never the end of the
build. The user's model here is `acme/my-model`: the seven real STS result files MTEB published for
mixedbread-ai/mxbai-embed-large-v1 (tests/fixtures/mteb_results, SOURCES.md names each one's commit),
copied under that new name beside the mimic's registered models.
"""

from __future__ import annotations

import csv
import json
import logging
import shutil
from collections.abc import Callable
from html import escape
from pathlib import Path
from typing import Any

import pytest

from bench.cli.main import main
from bench.leaderboard.mteb_published import published_rows
from bench.results import marks, task_catalog

FIXTURE = Path(__file__).parent.parent / "fixtures" / "mteb_results"
MXBAI = "mixedbread-ai/mxbai-embed-large-v1"
MXBAI_DIR = FIXTURE / "results" / "mixedbread-ai__mxbai-embed-large-v1" / "990580e27d329c7408b3741ecff85876e128e203"
E5 = "intfloat/multilingual-e5-small"
ACME = "acme/my-model"
STS = sorted(task_catalog.suites()["generic-sts"])
LOGGER = "bench.leaderboard.mteb_published"


def published(folder: Path, task: str) -> float:
    """The main score ×100 as the file `folder/task.json` publishes it (one split, one subset: these tasks')."""
    data = json.loads((folder / f"{task}.json").read_text(encoding="utf-8"))
    (subset,) = data["scores"]["test"]
    return 100 * subset["main_score"]


def own_copy(cache: Path, folder: str, *, meta: dict | None = None) -> Path:
    """mxbai's seven published STS files copied to `results/<folder>/r1` of `cache`, with `meta` as its
    model_meta.json (mxbai's own with `meta`'s keys replaced) or none."""
    target = cache / "results" / folder / "r1"
    target.mkdir(parents=True)
    for task in STS:
        shutil.copy(MXBAI_DIR / f"{task}.json", target / f"{task}.json")
    if meta is not None:
        given = json.loads((MXBAI_DIR / "model_meta.json").read_text(encoding="utf-8"))
        (target / "model_meta.json").write_text(json.dumps({**given, **meta}), encoding="utf-8")
    return target


def row_html(section: str, model: str) -> str:
    """The <tr> of the MTEB row of `model` in a suite's section of index.html."""
    start = section.rindex("<tr", 0, section.index(f'data-model-id="{escape(f"mteb||{model}")}"'))
    return section[start : section.index("</tr>", start)]


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    """A ResultCache folder: the mimic's published results and `acme/my-model`'s run, no model_meta.json."""
    root = Path(shutil.copytree(FIXTURE, tmp_path / "mteb-cache"))
    own_copy(root, "acme__my-model")
    return root


def build(cache: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[dict, str]:
    """The CLI's build of `cache` alone (no submission, no paper rows): leaderboard.json and stdout."""
    (out / "submissions").mkdir(parents=True)
    args = ["leaderboard", "build", "--results", str(out / "submissions"), "--mteb-results", str(cache)]
    assert main([*args, "--no-reported", "--out", str(out / "site")]) == 0
    data = json.loads((out / "site" / "leaderboard.json").read_text(encoding="utf-8"))
    return data, capsys.readouterr().out


@pytest.mark.parametrize("with_meta", [False, True], ids=["folder-names", "model-meta"])
def test_a_model_mteb_does_not_register_gets_its_row_marked_unregistered(cache, tmp_path, capsys, caplog, with_meta):
    """The landed code asked MTEB's registry for the names found (`get_model_metas(model_names=...)`) and
    ended the build with `KeyError: "Model 'acme/my-model' not found in MTEB registry."`."""
    if with_meta:  # the model_meta.json `mteb.evaluate` writes beside a run: its name, revision and facts
        shutil.rmtree(cache / "results" / "acme__my-model")
        own_copy(cache, "acme__my-model", meta={"name": ACME, "revision": "r1", "n_parameters": 123_000_000})
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        data, out = build(cache, tmp_path, capsys)
    assert [r.getMessage() for r in caplog.records if r.name == LOGGER] == []
    assert f"3 row(s) published by MTEB (1 {marks.UNREGISTERED.symbol} not in MTEB's registry)" in out

    external = {x["name"]: x for x in data["external"]}
    assert set(external) == {E5, MXBAI, ACME}  # the registered models are still there
    own = external[ACME]
    assert own["unregistered"] is True and external[E5]["unregistered"] is external[MXBAI]["unregistered"] is False
    assert own["scores"] == {t: published(MXBAI_DIR, t) for t in STS}  # its own files' scores, read by MTEB
    assert own["revision"] == "r1" and own["spec"] is None and own["url"] is None
    assert own["n_parameters"] == (123_000_000 if with_meta else None)  # model_meta.json's, never the registry's
    assert any(n.startswith("not in MTEB's model registry") for n in own["notes"])
    assert {"key": "unregistered", "symbol": "∉", "label": "not in MTEB's registry"}.items() <= next(
        m for m in data["marks"] if m["key"] == "unregistered"
    ).items()
    (sts,) = [s for s in data["suites"] if s["name"] == "generic-sts"]
    assert {r["model_id"] for r in sts["rows"]} == {f"mteb||{m}" for m in (E5, MXBAI, ACME)}

    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    section = index.split('<section class="suite" id="suite-generic-sts">', 1)[1].split("</section>", 1)[0]
    badge = '<span class="badge unregistered"'
    assert badge in row_html(section, ACME) and badge not in row_html(section, MXBAI)
    assert f'{marks.UNREGISTERED.symbol}</span> <span class="word">not in MTEB&#39;s registry</span>' in index
    assert (
        "not in MTEB&#39;s registry</span></span>: a model MTEB&#39;s model registry does not know" in index
    )  # legend

    with (tmp_path / "site" / "leaderboard.csv").open(encoding="utf-8") as f:
        flags = {(r["model"], r["unregistered"]) for r in csv.DictReader(f) if r["source"] == "mteb"}
    assert flags == {(ACME, "True"), (MXBAI, "False"), (E5, "False")}


def _not_json(folder: Path) -> None:
    (folder / "STS13.json").write_text('{"task_name": "STS13", "scores": ')


def _bad_meta(folder: Path) -> None:
    (folder / "model_meta.json").write_text("[1, 2")


def _nameless_meta(folder: Path) -> None:
    (folder / "model_meta.json").write_text(json.dumps({"revision": "r1"}))


def _unreadable_score(folder: Path) -> None:
    """A file MTEB's loader reads, but gives no main score for: the score is a word."""
    path = folder / "STS12.json"
    path.write_text(path.read_text().replace('"main_score": 0.7906872494516909', '"main_score": "high"'))


def _old_format(folder: Path) -> None:
    """An MTEB result of before 1.11 whose conversion MTEB's loader fails on (an AttributeError)."""
    (folder / "STS14.json").write_text(json.dumps({"mteb_dataset_name": "STS14", "test": [1, 2]}))


@pytest.mark.parametrize(
    ("damage", "cause"),
    [
        (_not_json, "STS13.json is not valid JSON"),
        (_bad_meta, "model_meta.json"),
        (_nameless_meta, "model_meta.json has no model name"),
        (_unreadable_score, "STS12: scores MTEB cannot read"),
        (_old_format, "STS14.json is not an MTEB result file (AttributeError"),
    ],
)
def test_a_broken_model_folder_is_one_warning_and_the_rest_builds(cache, caplog, damage, cause):
    """Beside acme/my-model, another folder of the user's (`acme__broken`) is damaged: one warning names
    that folder and the cause, and every other model, registered or not, keeps its row."""
    broken = own_copy(cache, "acme__broken")
    damage(broken)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        rows = {r.model: r for r in published_rows(cache)}
    assert set(rows) == {E5, MXBAI, ACME}
    assert rows[ACME].unregistered and not rows[MXBAI].unregistered
    warned = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert len(warned) == 1, warned
    assert str(broken) in warned[0] and cause in warned[0], warned


MARKER = 4242.5  # the evaluation_time of acme__broken's STS12.json: how a patched MTEB step knows that file


def _marked(results: Any) -> bool:
    """Whether a TaskResult, or BenchmarkResults holding one, is acme__broken's marked STS12."""
    import mteb

    if isinstance(results, mteb.BenchmarkResults):
        return any(t.evaluation_time == MARKER for r in results.model_results for t in r.task_results)
    return bool(results.evaluation_time == MARKER)


def _fail_on_marked(method: str) -> Callable[..., Any]:
    """MTEB's `method` (of TaskResult, or BenchmarkResults for join_revisions), made to fail on the marked
    file, as MTEB's code could on values no check of the reader foresaw."""
    import mteb

    real = getattr(mteb.BenchmarkResults if method == "join_revisions" else mteb.TaskResult, method)

    def failing(self: Any, *args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs) if method == "from_disk" else None  # a classmethod: `self` is the class
        if _marked(found if method == "from_disk" else self):
            raise RuntimeError(f"MTEB's {method} failed")
        return found if method == "from_disk" else real(self, *args, **kwargs)

    return classmethod(failing) if method == "from_disk" else failing  # type: ignore[return-value]


@pytest.mark.parametrize("method", ["from_disk", "join_revisions", "validate_and_filter_scores"])
def test_any_error_mteb_raises_on_one_model_folder_leaves_out_that_folder_alone(cache, caplog, monkeypatch, method):
    """Whatever MTEB's loader (`TaskResult.from_disk`), its join of every folder's results at once
    (`BenchmarkResults.join_revisions`) or its scoring (`validate_and_filter_scores`) raises on one model
    folder's values, beyond the errors the reader expects, that folder is left out with one warning and
    every other model builds."""
    import mteb

    broken = own_copy(cache, "acme__broken")
    data = json.loads((broken / "STS12.json").read_text(encoding="utf-8"))
    (broken / "STS12.json").write_text(json.dumps({**data, "evaluation_time": MARKER}), encoding="utf-8")
    owner = mteb.BenchmarkResults if method == "join_revisions" else mteb.TaskResult
    monkeypatch.setattr(owner, method, _fail_on_marked(method))
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        rows = {r.model: r for r in published_rows(cache)}
    assert set(rows) == {E5, MXBAI, ACME}
    warned = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert len(warned) == 1 and str(broken) in warned[0] and "RuntimeError: MTEB's" in warned[0], warned
