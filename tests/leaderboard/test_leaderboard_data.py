"""leaderboard.json's data layer (bench/leaderboard/table.py): measured baselines, the template column, merged
submissions, Borda ranks and per-type means, model facts, filters, marks, and the build's counts."""

from __future__ import annotations

import csv
import json
import shutil
from types import SimpleNamespace

import pytest

from bench.cli.main import main
from bench.leaderboard import build, validate_all
from bench.leaderboard.facts import size_bucket
from bench.leaderboard.rows import template_label
from bench.leaderboard.suite_tables import _borda, task_types
from bench.results import marks
from leaderboard_fixtures import add_variants, copy_model, copy_results, edit_json, result_files

DEMO = ("DemoIntentEmotion", "DemoInstructSTS", "DemoNYTClustering")
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
BLIND = {"follows_instructions": False, "method": "render", "probe": {"text": "t", "instructions": ["a", "b"]}}
FOLLOWS = {**BLIND, "follows_instructions": True}


def _demo(data: dict) -> dict:
    (demo,) = [s for s in data["suites"] if s["name"] == "demo"]
    return demo


def _by_setting(data: dict) -> dict[str, dict]:
    return {m["setting"]: m for m in data["models"]}


# ----------------------------------------------------------------------------------- pure rules (fast)


def test_template_label_shows_the_instruction_template_used():
    def record(family, settings, use=None):
        return {"model": {"family": family, "settings": settings, **({"instruction_use": use} if use else {})}}

    inbedder = {"pooling": "1st-gen", "pattern": "qa", "pattern_format": "### Input:\n{input}\n\n### Instruction:..."}
    prompteol = {
        "prompts": "prompteol",
        "prompt_set": "prompteol",
        "prompt_list": ["..."],
        "instruction_template": None,
    }
    assert template_label(record("inbedder", inbedder)) == "qa"
    assert template_label(record("prompteol", prompteol)) == "none"  # no instruction template: not "prompteol"
    assert (
        template_label(record("prompteol", {**prompteol, "instruction_template": "{instruction}\n"}))
        == "{instruction}\n"
    )
    assert (
        template_label(record("sentence-transformers", {"template": "prefix", "instruction_template": "prefix"}))
        == "prefix"
    )
    assert (
        template_label(record("instructor", {"instruction_format": "Represent the {instruction}: "}))
        == "Represent the {instruction}: "
    )
    assert template_label(record("mteb", {"implementation": {}})) == "mteb"
    assert template_label(record("x", {"prompt_method": "eol", "layer": 3})) is None  # a readout is not a template
    # measured blind: "none", whatever the setting is called
    assert template_label(record("sentence-transformers", {"template": "model"}, BLIND)) == "none"
    assert template_label(record("mteb", {}, BLIND)) == "none"
    assert template_label(record("inbedder", inbedder, FOLLOWS)) == "qa"


def test_borda_counts_wins_splits_ties_and_skips_baselines_and_missing_tasks():
    rows = [
        {"scores": {"t1": 50.0, "t2": 40.0}, "baseline": False},
        {"scores": {"t1": 50.0, "t2": None}, "baseline": False},  # missing t2: no point for it, costs no one one
        {"scores": {"t1": 10.0, "t2": 60.0}, "baseline": False},
        {"scores": {"t1": 99.0, "t2": 99.0}, "baseline": True},  # never counted, never beats anyone
        {"scores": {"t1": None, "t2": None}, "baseline": False},
    ]
    for r in rows:
        r.update(borda=None, borda_rank=None)
    _borda(rows)
    assert [r["borda"] for r in rows] == [1.5, 1.5, 1.0, None, 0.0]
    assert [r["borda_rank"] for r in rows] == [1, 1, 3, None, 4]


def test_task_types_need_two_types():
    refs = {"a": SimpleNamespace(type="STS"), "b": SimpleNamespace(type="Clustering"), "c": SimpleNamespace(type="STS")}
    cols = [("a", "A"), ("b", "B"), ("c", "C")]
    assert task_types(cols, refs) == [
        {"type": "STS", "label": "STS", "tasks": ["a", "c"], "columns": ["A", "C"]},
        {"type": "Clustering", "label": "Clust.", "tasks": ["b"], "columns": ["B"]},
    ]
    assert task_types([("a", "A"), ("c", "C")], refs) == []


def test_size_buckets():
    assert [
        size_bucket(n) for n in (None, 0, 22_713_216, 99_999_999, 10**8, 134_515_008, 10**9, 7 * 10**9, 10**10)
    ] == [None, None, "<100M", "<100M", "100M–1B", "100M–1B", "1B–10B", "1B–10B", ">10B"]


def test_gguf_record_facts(tmp_path):
    """Quantisation and base model of a GGUF file, for the run record's `model.facts` (ModelMeta has no field)."""
    gguf = pytest.importorskip("gguf")
    import numpy as np

    from bench.adapters.gguf_file import gguf_record_facts
    from bench.adapters.model_card import gguf_facts

    file = tmp_path / "m.gguf"
    writer = gguf.GGUFWriter(file, "llama")
    writer.add_string("general.basename", "smol")
    writer.add_uint32("general.base_model.count", 1)
    writer.add_string("general.base_model.0.name", "SmolLM2 135M")
    writer.add_string("general.base_model.0.organization", "HuggingFaceTB")
    writer.add_string("general.base_model.0.repo_url", "https://huggingface.co/HuggingFaceTB/SmolLM2-135M")
    writer.add_file_type(int(gguf.LlamaFileType.MOSTLY_Q4_K_M))
    writer.add_tensor("t", np.zeros((4, 4), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    assert gguf_record_facts(file) == {
        "quantisation": "Q4_K_M",
        "base_model": "HuggingFaceTB/SmolLM2-135M",
        "base_model_url": "https://huggingface.co/HuggingFaceTB/SmolLM2-135M",
    }
    assert "quantisation" not in gguf_facts(file) and "base_model" not in gguf_facts(file)  # ModelMeta forbids extras
    assert gguf_record_facts(tmp_path / "missing.gguf") == {} and gguf_record_facts(tmp_path) == {}


# ----------------------------------------------------------------------------------- on real `bench run` files


@pytest.mark.slow
def test_baselines_are_measured(demo_results, tmp_path):
    """A row is a baseline when every one of its run records measured the setting blind: unranked, no Borda
    rank, never best, template "none"; the measurement beats the `--template none` fallback."""
    root = copy_results(demo_results, tmp_path / "sub")
    for task in DEMO:
        edit_json(result_files(root, task)[1], lambda d: d["model"].update(instruction_use=BLIND))
        edit_json(result_files(root, task, experiment=True)[1], lambda d: d["model"].update(instruction_use=FOLLOWS))
    data = build([root], tmp_path / "site").data
    models, demo = _by_setting(data), _demo(data)
    rows = {r["model_id"]: r for r in demo["rows"]}
    blind, follows = models["default"], models["template=none"]
    assert (blind["baseline"], blind["instruction_aware"], blind["template"]) == (True, False, "none")
    assert blind["instruction_use"] == BLIND and follows["instruction_use"] == FOLLOWS
    assert (follows["baseline"], follows["instruction_aware"], follows["template"]) == (False, True, "none")
    assert (rows[blind["id"]]["rank"], rows[blind["id"]]["borda_rank"], rows[blind["id"]]["borda"]) == (
        None,
        None,
        None,
    )
    assert rows[follows["id"]]["rank"] == 1 and rows[follows["id"]]["borda_rank"] == 1
    assert demo["best"] == rows[follows["id"]]["scores"]

    # one task that follows instructions keeps the row ranked: a baseline is blind on every result
    edit_json(result_files(root, "DemoNYTClustering")[1], lambda d: d["model"].update(instruction_use=FOLLOWS))
    data = build([root], tmp_path / "site2").data
    assert (
        _by_setting(data)["default"]["baseline"] is False and _by_setting(data)["default"]["instruction_aware"] is True
    )


@pytest.mark.slow
def test_identical_results_merge_and_the_variants_show(demo_results, tmp_path):
    """The default run, then a run folder holding two of the same default results plus instruction variants:
    both accepted, nothing counted twice, the sensitivity section built from the second."""
    first = copy_results(demo_results, tmp_path / "default")
    second = copy_results(demo_results, tmp_path / "variants")
    shutil.rmtree(result_files(second, "DemoInstructSTS", experiment=True)[0].parent)  # the template=none setting
    result, record = result_files(second, "DemoIntentEmotion")
    result.unlink()
    record.unlink()
    add_variants(result_files(second, "DemoInstructSTS"), [0.50, 0.60, 0.40])
    reports = validate_all([first, second])
    assert all(r.valid for r in reports), [r.summary() for r in reports]
    assert len(reports[1].merged) == 2 and len(reports[1].entries) == 3  # the two defaults merged, three variants new
    assert "2 re-run(s) of results another submission gave" in reports[1].summary()
    site = tmp_path / "site"
    data = build([first, second], site).data
    assert not data["rejected"] and [a["merged"] for a in data["accepted"]] == [0, 2]
    assert sorted(len(m["results"]) for m in data["models"]) == [3, 3]
    (task,) = data["sensitivity"]
    assert task["task"] == "DemoInstructSTS" and [v["score"] for v in task["models"][0]["variants"]] == pytest.approx(
        [50, 60, 40]
    )
    assert task["models"][0]["model_id"] == _by_setting(data)["default"]["id"]
    assert 'id="sensitivity"' in (site / "index.html").read_text()
    # a different result for a key given earlier is a conflict: neither is verified, so both are held back
    edit_json(result_files(second, "DemoNYTClustering")[1], lambda d: d["task"].update(seed=7))  # not a re-run
    reports = validate_all([first, second])
    assert all(r.valid for r in reports)
    assert [[e.file for e in r.held] for r in reports] == [
        [result_files(first, "DemoNYTClustering")[0].relative_to(first).as_posix()],
        [result_files(second, "DemoNYTClustering")[0].relative_to(second).as_posix()],
    ]


@pytest.mark.slow
def test_borda_and_type_means_in_the_suite_table(demo_results, tmp_path, monkeypatch):
    from bench import tasks

    root = copy_results(demo_results, tmp_path / "sub")
    copy_model(root, "org/other")
    for task, score in (("DemoInstructSTS", 0.9), ("DemoNYTClustering", 0.0)):  # org/other: best at STS, worst at NYT
        path = result_files(root, task, model="org/other")[0]
        main = json.loads(result_files(root, task, model="org/other")[1].read_text())["task"]["main_score"]
        edit_json(path, lambda d, s=score, m=main: d["scores"]["test"][0].update({"main_score": s, m: s}))
    result, record = result_files(root, "DemoIntentEmotion", model="org/other")
    result.unlink()
    record.unlink()
    monkeypatch.setitem(tasks.SUITES, "one-type", ("DemoInstructSTS",))
    data = build([root], tmp_path / "site").data
    demo, models = _demo(data), {m["label"]: m for m in data["models"]}
    assert [(t["type"], t["tasks"]) for t in demo["task_types"]] == [
        ("STS", ["DemoInstructSTS"]),
        ("Reranking", ["DemoIntentEmotion"]),
        ("Clustering", ["DemoNYTClustering"]),
    ]
    rows = {r["model_id"]: r for r in demo["rows"]}
    other, minilm = rows[models["org/other"]["id"]], rows[models[MINILM]["id"]]
    # org/other lacks IntEmo: no average and no rank by it, a Borda rank on the tasks it has, no Reranking mean
    assert other["average"] is None and other["rank"] is None
    assert other["type_means"] == {"STS": pytest.approx(90.0), "Reranking": None, "Clustering": pytest.approx(0.0)}
    assert minilm["type_means"] == {
        t["type"]: pytest.approx(minilm["scores"][t["tasks"][0]]) for t in demo["task_types"]
    }
    assert (other["borda"], minilm["borda"]) == (1.0, 1.0) and other["borda_rank"] == minilm["borda_rank"] == 1
    assert minilm["rank"] == 1
    base = next(r for r in demo["rows"] if r["baseline"])
    assert (base["rank"], base["borda_rank"], base["borda"]) == (None, None, None)
    (one,) = [s for s in data["suites"] if s["name"] == "one-type"]
    assert one["task_types"] == [] and all(r["type_means"] == {} for r in one["rows"])


@pytest.mark.slow
def test_model_facts_filters_marks_and_csv(demo_results, tmp_path):
    root = copy_results(demo_results, tmp_path / "sub")
    for task in DEMO:
        edit_json(
            result_files(root, task, experiment=True)[1],
            lambda d: d["model"].update(facts={"quantisation": "Q4_1", "base_model": "org/base"}),
        )
    meta_file = result_files(root, "DemoNYTClustering")[0].parent / "model_meta.json"
    meta = json.loads(meta_file.read_text())
    site = tmp_path / "site"
    data = build([root], site).data
    models = _by_setting(data)
    default, none = models["default"], models["template=none"]
    for m in (default, none):
        assert (m["max_tokens"], m["license"], m["release_date"]) == (
            int(meta["max_tokens"]),
            meta["license"],
            meta["release_date"],
        )
        assert m["memory_usage_mb"] == meta["memory_usage_mb"] and m["size_bucket"] == "<100M"
        assert isinstance(m["max_tokens"], int)  # MTEB's 256.0 as 256
    assert (default["quantisation"], default["base_model"]) == (None, None)
    assert (none["quantisation"], none["base_model"]) == ("Q4_1", "org/base")
    assert (default["template"], none["template"]) == ("mteb", "none")
    assert data["marks"] == [
        {"key": m.key, "symbol": m.symbol, "label": m.label, "meaning": m.meaning} for m in marks.MARKS
    ]
    assert data["filters"] == {
        "sources": ["submitted"],
        "families": ["mteb", "sentence-transformers"],
        "sizes": ["<100M"],
        "instruction_aware": [v for v in (True, False, None) if v in {default["instruction_aware"], False}],
        "verification": ["self-reported"],
    }
    rows = list(csv.DictReader((site / "leaderboard.csv").open(newline="")))
    assert {(r["setting"], r["baseline"], r["instruction_aware"]) for r in rows} == {
        ("default", "False", {None: "", True: "True"}[default["instruction_aware"]]),
        ("template=none", "True", "False"),
    }
    assert {r["stand_in"] for r in rows} == {"False"}

    # a record's older identity check still gives the quantisation; hostile model_meta.json values are dropped
    for task in DEMO:
        edit_json(
            result_files(root, task)[1],
            lambda d: d["model"].update(
                identity_check={"gguf": {"file_type": "Q8_0", "quantization_version": 2, "tensor_types": {}}}
            ),
        )
    edit_json(
        meta_file,
        lambda d: d.update(max_tokens=-1, release_date="<b>soon</b>", memory_usage_mb="87", license="x" * 500),
    )
    data = build([root], tmp_path / "site2").data
    default = _by_setting(data)["default"]
    assert default["quantisation"] == "Q8_0"
    assert (default["max_tokens"], default["release_date"], default["memory_usage_mb"], default["license"]) == (
        int(meta["max_tokens"]),
        meta["release_date"],
        meta["memory_usage_mb"],
        meta["license"],
    )  # MTEB's registry, by name


@pytest.mark.slow
def test_build_counts_variant_results_and_takes_several_verification_files(demo_results, tmp_path, capsys):
    from bench.leaderboard.verify import FORMAT, entry_sha256

    root = copy_results(demo_results, tmp_path / "sub")
    add_variants(result_files(root, "DemoInstructSTS"), [0.50, 0.60, 0.40])
    (report,) = validate_all([root])
    variants = [e for e in report.entries if "variant" in e.record]
    rows = [e for e in report.entries if "variant" not in e.record]
    files = []
    for name, entries in (("a", variants[:2]), ("b", [variants[2], rows[0]])):
        path = tmp_path / f"{name}.verification.json"
        path.write_text(
            json.dumps({"format": FORMAT, "results": [{"verified": True, "sha256": entry_sha256(e)} for e in entries]})
        )
        files.append(str(path))
    line = "4 of 9 result(s) verified: 1 of 6 in the tables, 3 of 3 instruction variants (the rest self-reported)"
    for flags in (["--verification", *files], ["--verification", files[0], "--verification", files[1]]):
        assert main(["leaderboard", "build", "--results", str(root), *flags, "--out", str(tmp_path / "site")]) == 0
        assert line in capsys.readouterr().out
    assert main(["leaderboard", "build", "--results", str(demo_results), "--out", str(tmp_path / "plain")]) == 0
    assert "0 of 6 result(s) verified (the rest self-reported)" in capsys.readouterr().out


# ----------------------------------------------------------------------------------- partial suites


@pytest.mark.slow
def test_partial_gstransform_site_ranks_as_bench_results(gst_partial_results, tmp_path):
    """GSTransform with 5 of its 9 tasks (the offline case): the site ranks rows as `bench results` ranks the
    same folders, under the one comparability rule (bench/results/comparability.py): a partial Mean is shown,
    never ranked (issue 42; before, the rows over the same 5 tasks were ranked 1, 1, 3), each unranked row says
    why, the columns no row fills are left out, and the rule is printed once."""
    from bench.results.comparability import RULE
    from bench.results.comparison import find_all, main_table

    root, data_dir = gst_partial_results
    site = tmp_path / "site"
    result = build([root], site, data_dirs=[data_dir])
    assert not result.rejected, [r.summary() for r in result.rejected]
    (gst,) = [s for s in result.data["suites"] if s["name"] == "gstransform"]
    labels = {m["id"]: m["label"] for m in result.data["models"]}
    rows = {labels[r["model_id"]]: r for r in gst["rows"]}
    site_ranks = {label: r["rank"] for label, r in rows.items()}
    assert site_ranks == {MINILM: None, "org/tie": None, "org/lower": None, "org/fewer": None, "org/blind": None}
    assert rows[MINILM]["unranked_reason"] == "partial: 5 of the 9 tasks of Mean; only a complete average is ranked"
    # partial averages, shown with how partial they are; none complete
    assert {label: (r["partial"]["Mean"]["present"], r["partial"]["Mean"]["of"]) for label, r in rows.items()} == {
        **dict.fromkeys(rows, (5, 9)),
        "org/fewer": (4, 9),
    }
    assert all(r["average"] is None for r in gst["rows"])
    assert rows["org/fewer"]["partial"]["Mean"]["value"] > rows[MINILM]["partial"]["Mean"]["value"]  # higher, unranked
    # columns no row can fill are not shown: the four tasks nobody ran, and every type mean (no type is complete)
    assert [c["task"] for c in gst["columns"]] == ["GSTAmzCF", "GSTMNews", "GSTMultiHate", "GSTToxic", "GSTAGNews"]
    assert gst["task_types"] == [] and [a["label"] for a in gst["averages"]] == ["Mean"]
    html = (site / "index.html").read_text(encoding="utf-8")
    section = html[html.index('id="suite-gstransform"') :]
    section = section[: section.index("</section>")]
    assert section.count(RULE) == 1 and "(5 of 9)" in section and "(4 of 9)" in section
    assert 'class="num tmean"' not in section
    # `bench results` over the same folder: the same rank for every row (compared by model name: one setting each)
    table = main_table(find_all([root]))
    rank, model = table.headers.index("#"), table.headers.index("Model")
    cli = {}
    for row in table.rows:
        cell = row[model]
        cli[getattr(cell, "full", None) or getattr(cell, "text", cell)] = getattr(row[rank], "text", row[rank])
    assert cli == {label: "-" if r is None else str(r) for label, r in site_ranks.items()}
