"""`bench run --instruction-variants`: the file, how each task type takes a variant, encode-once, statistics."""

from __future__ import annotations

import json
from pathlib import Path

import mteb
import numpy as np
import pytest
import yaml
from datasets import Dataset
from scipy.stats import kendalltau
from test_robustness import ScaledHashEncoder

from bench import tasks
from bench.core.errors import ConfigError, UnknownNameError
from bench.core.variants import load_variants
from bench.dataset_builders.sts_senteval import build_sts_senteval
from bench.results.sensitivity import collect, stability_by_task, summarize
from bench.results.store import find_results
from bench.results.summary import run_table
from bench.run.runner import RunOptions, run
from bench.tasks import TASKS, FewRelClustering
from bench.tasks.variants import variant_task
from toy_encoders import HashEncoder


def _write(path: Path, data: object) -> Path:
    text = json.dumps(data) if path.suffix == ".json" else yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    return path


# ----------------------------------------------------------------------------------------- the file
def test_lists_and_named_sets_get_stable_distinct_labels(tmp_path):
    vf = load_variants(
        _write(
            tmp_path / "v.yaml",
            {
                "name": "mine",
                "tasks": {"STSBenchmark": ["a: ", "b: "], "FewRelClustering": {"good": ["x"], "bad": ["y", "z"]}},
            },
        ),
        known_tasks=TASKS,
    )
    assert vf.name == "mine" and len(vf.sha256) == 64
    sts = vf.for_task("STSBenchmark")
    assert [v.label[:4] for v in sts] == ["v01-", "v02-"] and [v.set for v in sts] == [None, None]
    few = vf.for_task("FewRelClustering")
    assert [(v.set, v.index) for v in few] == [("good", 0), ("bad", 0), ("bad", 1)]
    assert [v.label[:6] for v in few] == ["good01", "bad01-", "bad02-"]
    assert vf.sets == {"FewRelClustering": ("good", "bad")}
    again = load_variants(_write(tmp_path / "w.json", {"STSBenchmark": ["a: ", "c: "]}))
    assert again.for_task("STSBenchmark")[0].label == sts[0].label  # same text, same label
    assert again.for_task("STSBenchmark")[1].label != sts[1].label  # another text, another folder


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"STSBenchmark": ["a", "a"]}, "repeats"),
        ({"STSBenchmark": []}, "no instructions"),
        ({"STSBenchmark": [""]}, "empty"),
        ({"STSBenchmark": [3]}, "non-empty string"),
        ({"STSBenchmark": "a"}, "must be a list"),
        ({"tasks": {"STSBenchmark": ["a"]}, "extra": 1}, "unknown top-level"),
        (["a"], "must hold a mapping"),
        ({"STSBenchmark": ["a", "\u200b\u2060\ufeff"]}, r"instruction list #2 is empty \(only spaces or invisible"),
        ({"STSBenchmark": [{"query": "q", "document": "\u200c"}]}, "non-empty string"),
        ({"STSBenchmark": [["x" * 10**6]]}, r"got \[\'xxx.{0,60}\]\.$"),  # a bounded view of what was given
        ({"t" * 10**6: ["a"]}, r"\(1,000,000 characters\) is not a task name"),
        ({"tasks": {"STSBenchmark": ["a"]}, "name": ["x"]}, "name must be a text, not list"),
    ],
)
def test_malformed_files_are_one_clear_error(tmp_path, content, message):
    with pytest.raises(ConfigError, match=message):
        load_variants(_write(tmp_path / "v.yaml", content))


def test_unknown_task_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(UnknownNameError, match="STSBenchmrk"):
        load_variants(_write(tmp_path / "v.yaml", {"STSBenchmrk": ["a"]}), known_tasks=TASKS)
    with pytest.raises(ConfigError, match="no such file, and not a built-in"):
        load_variants(tmp_path / "nope.yaml")
    (tmp_path / "bad.yaml").write_text("a: [", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_variants(tmp_path / "bad.yaml")


def test_cli_error_line_for_a_missing_file(tmp_path, capsys):
    from bench.cli.main import main

    assert (
        main(
            [
                "run",
                "--tasks",
                "DemoInstructSTS",
                "--instruction-variants",
                str(tmp_path / "x.yaml"),
                "--output-dir",
                str(tmp_path / "o"),
            ]
        )
        != 0
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: --instruction-variants") and "no such file" in err[-1]


def test_builtin_robustness_file_is_the_robustness_tasks_own_lists():
    vf = load_variants("inbedder-robustness", known_tasks=TASKS)
    assert set(vf.variants) == set(tasks.SUITES["robustness"])
    for name, variants in vf.variants.items():
        for which in ("correct", "implicit", "incorrect"):
            assert [v.instruction for v in variants if v.set == which] == list(TASKS[name].instructions[which])


def test_a_task_whose_instructions_belong_to_rows_refuses_variants():
    with pytest.raises(ConfigError, match="belong to the rows"):
        variant_task(TASKS["DemoInstructSTS"](), "x")
    with pytest.raises(ConfigError, match="one instruction per criterion"):
        variant_task(TASKS["DemoIntentEmotion"](), "one string for two criteria")
    copy = variant_task(TASKS["DemoIntentEmotion"](), {"intent": "i?", "emotion": "e?"})
    assert copy.criteria == {"intent": "i?", "emotion": "e?"} and copy.metadata.name == "DemoIntentEmotion"
    assert TASKS["DemoIntentEmotion"].criteria != copy.criteria  # the class is untouched


# ----------------------------------------------------------------------------------------- STS, end to end
@pytest.fixture(scope="module")
def sts_dir(raw_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sts")
    build_sts_senteval(source_dir=raw_dir, out_dir=out, size=60)
    return out


STS_VARIANTS = {
    "STSBenchmark": [
        "represent the statement: ",
        "Represent the sentence for semantic similarity: ",
        "Represent this statement to compare its meaning: ",
    ]
}


def _sentences(sts_dir: Path) -> int:
    rows = [json.loads(line) for line in (sts_dir / "STSBenchmark" / "test.jsonl").read_text().splitlines()]
    return len({r[k] for r in rows for k in ("sentence1", "sentence2")})


@pytest.mark.slow
@pytest.mark.parametrize("use_cache", [True, False])
def test_blind_run_encodes_each_sentence_once_and_reports_the_spread(sts_dir, tmp_path, use_cache):
    outcomes = run(
        RunOptions(
            tasks=["STSBenchmark"],
            data_dir=str(sts_dir),
            template="none",
            use_cache=use_cache,
            instruction_variants=str(_write(tmp_path / "v.yaml", STS_VARIANTS)),
            output_dir=str(tmp_path / "out"),
            show_progress_bar=False,
        )
    )
    default, *variants = outcomes
    assert default.variant is None and len(variants) == 3
    encoded = [o.record["encode"]["texts_encoded"] for o in outcomes]
    assert encoded == [_sentences(sts_dir), 0, 0, 0]  # every sentence once, for the default and all variants
    assert {o.main_score for o in outcomes} == {default.main_score}
    for o in variants:  # each variant is an MTEB experiment of its own, beside the default run
        assert Path(o.result_path).parent.name.startswith(f"instruction_{o.variant['label']}")
        assert o.record["model"]["experiment"]["instruction"] == o.variant["label"]
        assert o.record["task"]["instructions"]["task_instruction"] == o.variant["instruction"]
    table = run_table(outcomes)
    assert "Instruction variants" in table
    line = next(x for x in table.splitlines() if x.startswith("| STSBenchmark") and "| 3 " in x)
    assert line.count(f"{100 * default.main_score:.2f}") == 4 and "| 0.00 " in line  # default, mean, min, max; std 0


@pytest.mark.slow
def test_instruction_aware_run_encodes_each_sentence_once_per_variant(sts_dir, tmp_path):
    options = RunOptions(
        tasks=["STSBenchmark"],
        data_dir=str(sts_dir),
        template="prefix",
        instruction_variants=str(_write(tmp_path / "v.yaml", STS_VARIANTS)),
        output_dir=str(tmp_path / "out"),
        cache_dir=str(tmp_path / "cache"),  # it counts encodes: a fresh cache, not the session's
        show_progress_bar=False,
    )
    default, *variants = run(options)
    n = _sentences(sts_dir)
    # v01 is the task's own instruction: served from what the default run embedded
    assert [o.record["encode"]["texts_encoded"] for o in (default, *variants)] == [n, 0, n, n]
    assert variants[0].main_score == default.main_score
    assert len({o.main_score for o in variants}) == 3
    stats = summarize([_score(o) for o in variants])
    values = [o.main_score for o in variants]
    assert stats["mean"] == pytest.approx(np.mean(values)) and stats["std"] == pytest.approx(np.std(values, ddof=1))
    assert (stats["min"], stats["max"]) == (min(values), max(values))
    again = run(options)  # everything reused, nothing encoded
    assert [o.status for o in again] == ["reused"] * 4
    assert [o.main_score for o in again] == [o.main_score for o in (default, *variants)]


def _score(outcome):
    from bench.results.sensitivity import VariantScore

    return VariantScore(outcome.variant["label"], outcome.variant.get("set"), outcome.main_score)


# ----------------------------------------------------------------------------------------- robustness
def _robustness_file(tmp_path: Path) -> Path:
    sets = {w: list(FewRelClustering.instructions[w][:4]) for w in ("correct", "implicit", "incorrect")}
    return _write(tmp_path / "r.yaml", {"tasks": {"FewRelClustering": sets}})


def _run_toy(monkeypatch, model, **options):
    monkeypatch.setattr("bench.run.runner.build_model", lambda _options: model)
    return run(RunOptions(show_progress_bar=False, **options))


def test_robustness_as_variants_gives_the_tasks_own_gaps(fewrel_six_dir, tmp_path, monkeypatch):
    vf = load_variants("inbedder-robustness")
    default, *variants = _run_toy(
        monkeypatch,
        ScaledHashEncoder(use_cache=False),
        tasks=["FewRelClustering"],
        data_dir=str(fewrel_six_dir),
        instruction_variants="inbedder-robustness",
        output_dir=str(tmp_path / "out"),
    )
    assert len(variants) == 30 and all(o.main_score_name == "v_measure" for o in variants)
    for o in variants:  # each variant's V-measure is the default run's V-measure for that instruction
        assert o.main_score == pytest.approx(
            default.scores[f"v_measure_{o.variant['set']}_{o.variant['index']}"], abs=1e-12
        )
    stats = summarize([_score(o) for o in variants], vf.sets["FewRelClustering"])
    diffs = stats["set_differences"]
    # result files keep 6 decimals: the gaps of rounded V-measures against the rounded gap
    assert diffs["correct-incorrect"] == pytest.approx(default.scores["delta_ci_mean"], abs=2e-6)
    assert diffs["implicit-incorrect"] == pytest.approx(default.scores["delta_ii_mean"], abs=2e-6)
    assert "correct-incorrect" in run_table([default, *variants])


def test_rank_stability_over_two_models(fewrel_six_dir, tmp_path, monkeypatch):
    out = str(tmp_path / "out")
    variants_file = str(_robustness_file(tmp_path))
    for model in (
        ScaledHashEncoder(use_cache=False),
        HashEncoder(use_cache=False, name="toy/plain"),
        HashEncoder(use_cache=False, blind=True),
    ):
        _run_toy(
            monkeypatch,
            model,
            tasks=["FewRelClustering"],
            data_dir=str(fewrel_six_dir),
            instruction_variants=variants_file,
            output_dir=out,
        )
    groups = collect(find_results(Path(out)))
    # the default runs report Δci, the variants V-measure: no Default to show beside them
    assert len(groups) == 3 and all(len(g.scores) == 12 and g.default is None for g in groups)
    blind = next(g for g in groups if g.model[0] == "toy/hash-blind")
    assert blind.summary()["std"] == 0.0 and set(blind.summary()["set_differences"].values()) == {0.0}
    stability = stability_by_task(groups)["FewRelClustering"]
    assert stability["models"] == 3 and stability["variants"] == 12 and len(stability["kendall_tau"]) == 66
    labels = [s.label for s in groups[0].scores]
    a, b = labels[0], labels[5]
    by_label = [g.by_label() for g in groups]
    expected = kendalltau([m[a] for m in by_label], [m[b] for m in by_label]).statistic
    assert stability["kendall_tau"][f"{a}|{b}"] == pytest.approx(expected)
    means = [np.mean(list(m.values())) for m in by_label]
    top = int(np.argmax(means))
    other_top = [label for label in labels if by_label[top][label] < max(m[label] for m in by_label)]
    assert stability["top_change_share"] == pytest.approx(len(other_top) / 12)


# ----------------------------------------------------------------------------------------- MTEB's task types
def _in_memory(base_name: str, data) -> mteb.AbsTask:
    """MTEB's own task class of that name, its data given here instead of loaded from the hub."""
    base = type(mteb.get_task(base_name))

    class Local(base):
        def load_data(self, **kwargs):
            self.dataset = data()
            self.data_loaded = True

    Local.metadata = base.metadata
    return Local()


DOCS = [f"document {i} about topic {i % 3} and words {i * 7}" for i in range(12)]
QUERIES = [f"which document mentions topic {i % 3} words {i * 7}" for i in range(6)]


def _retrieval_data(with_instructions: bool):
    def data():
        queries = {"id": [f"q{i}" for i in range(6)], "text": QUERIES}
        if with_instructions:
            queries["instruction"] = [f"own instruction {i}" for i in range(6)]
        split = {
            "corpus": Dataset.from_dict({"id": [f"d{i}" for i in range(12)], "text": DOCS, "title": [""] * 12}),
            "queries": Dataset.from_dict(queries),
            "relevant_docs": {f"q{i}": {f"d{i}": 1} for i in range(6)},
            "top_ranked": None,
        }
        return {"default": {"test": split}}

    return data


def _evaluate(task, model) -> float:
    result = mteb.evaluate(model, task, cache=None, show_progress_bar=False, co2_tracker=False)
    return result.task_results[0].get_score()


@pytest.mark.parametrize("base", ["SciFact", "InstructIR"])
def test_retrieval_embeds_documents_once_and_queries_once_per_variant(base):
    model = HashEncoder(use_cache=False)
    task = _in_memory(base, _retrieval_data(with_instructions=base == "InstructIR"))
    variants = ["Find the passage: ", "Retrieve documents for: {instruction}"]
    copies = [variant_task(task, v) for v in variants]
    _evaluate(task, model)
    after_default = model.stats.encoded
    assert after_default == 12 + 6
    for copy in copies:
        _evaluate(copy, model)
    assert model.stats.encoded == after_default + 6 * len(variants)  # documents never again
    rendered = {tuple(x) for group in model.groups for x in group}
    if base == "InstructIR":  # a {instruction} template wraps each query's own instruction
        assert ("Retrieve documents for: own instruction 3", QUERIES[3]) in rendered
    else:
        assert ("Find the passage: ", QUERIES[3]) in rendered


@pytest.mark.parametrize(
    ("base", "data"),
    [
        (
            "SprintDuplicateQuestions",
            lambda: {
                "test": Dataset.from_dict(
                    {
                        "sentence1": [[f"question {i} about {i % 2}" for i in range(8)]],
                        "sentence2": [[f"question {i + 1} about {i % 2}" for i in range(8)]],
                        "labels": [[i % 2 for i in range(8)]],
                    }
                )
            },
        ),
        (
            "Banking77Classification",
            lambda: {
                "train": Dataset.from_dict(
                    {
                        "text": [f"card {i} lost" if i % 2 else f"transfer {i} late" for i in range(16)],
                        "label": [i % 2 for i in range(16)],
                    }
                ),
                "test": Dataset.from_dict(
                    {
                        "text": [f"card {i} gone" if i % 2 else f"transfer {i} slow" for i in range(8)],
                        "label": [i % 2 for i in range(8)],
                    }
                ),
            },
        ),
    ],
)
def test_task_level_instruction_types_take_the_variant_as_their_prompt(base, data):
    model = HashEncoder(use_cache=False)
    task = _in_memory(base, data)
    copy = variant_task(task, "Variant instruction: ")
    assert copy.metadata.prompt == "Variant instruction: " and type(task).metadata.prompt != copy.metadata.prompt
    _evaluate(copy, model)
    rendered = [x for group in model.groups for x in group]
    assert rendered and all(instruction == "Variant instruction: " for instruction, _ in rendered)


def test_mapping_variant_for_a_retrieval_task_sets_both_prompts():
    task = _in_memory("SciFact", _retrieval_data(with_instructions=False))
    copy = variant_task(task, {"query": "Q: ", "document": "D: "})
    assert copy.metadata.prompt == {"query": "Q: ", "document": "D: "}
    with pytest.raises(ConfigError, match="takes a query instruction"):
        variant_task(task, {"passage": "P: "})


def test_any_mteb_task_runs_with_variants_through_bench_run(tmp_path, monkeypatch):
    """`--tasks SciFact` is MTEB's SciFact (its class, prompt and scoring); here its data is given in memory."""
    from bench import tasks as tasks_pkg
    from bench.tasks.generic import mteb_task_class

    real = mteb_task_class("SciFact")

    class InMemory(real):
        def load_data(self, **kwargs):
            self.dataset = _retrieval_data(with_instructions=False)()
            self.data_loaded = True

    InMemory.metadata = real.metadata
    monkeypatch.setattr(tasks_pkg, "_mteb_task_class", lambda name: InMemory)
    model = HashEncoder(use_cache=False)
    variants = _write(tmp_path / "v.yaml", {"SciFact": ["Find the passage: ", "Which abstract answers: "]})
    outcomes = _run_toy(
        monkeypatch, model, tasks=["SciFact"], instruction_variants=str(variants), output_dir=str(tmp_path / "out")
    )
    assert [o.record["encode"]["texts_encoded"] for o in outcomes] == [18, 6, 6]  # documents once
    assert outcomes[0].record["task"]["instructions"]["task_instruction"] == real.metadata.prompt
    assert "SciFact" not in TASKS  # made on demand, not registered
    with pytest.raises(UnknownNameError, match="Did you mean: SciFact"):
        tasks_pkg.task_names(tasks=["SciFactt"])


@pytest.mark.parametrize("name", sorted(__import__("bench.core.variants").core.variants.builtin_variant_files()))
def test_every_builtin_file_loads_and_each_task_takes_each_variant(name):
    vf = load_variants(name, known_tasks=TASKS)
    assert vf.description and vf.source
    for task_name, variants in vf.variants.items():
        task = TASKS[task_name]()
        for v in variants:
            variant_task(task, v.instruction)
        if not vf.sets.get(task_name):  # a plain list starts with the task's own wording
            own = task.instruction_set()
            first = variants[0].instruction
            assert first in (own.get("task_instruction"), own.get("criteria"), own.get("aspects"))


@pytest.mark.slow
def test_variant_results_are_submitted_verified_and_shown(tmp_path):
    """The demo under the built-in `demo` variants: `bench submit`, `bench leaderboard verify` re-runs each
    variant as recorded and verifies it, and the site shows the distribution."""
    from bench.cli.main import main

    out, cache = tmp_path / "results", tmp_path / "cache"
    outcomes = run(
        RunOptions(instruction_variants="demo", output_dir=str(out), cache_dir=str(cache), show_progress_bar=False)
    )
    assert sum(o.variant is not None for o in outcomes) == 6
    packed, verification = tmp_path / "sub.zip", tmp_path / "verification.json"
    assert main(["submit", str(out), "--out", str(packed)]) == 0
    assert main(["leaderboard", "verify", str(packed), "--out", str(verification), "--cache-dir", str(cache)]) == 0
    verdicts = json.loads(verification.read_text())["results"]
    varied = [v for v in verdicts if "instruction" in (v["setting"] or "")]
    assert len(varied) == 6 and all(v["verified"] for v in varied), [v["note"] for v in varied]
    assert (
        main(
            [
                "leaderboard",
                "build",
                "--results",
                str(packed),
                "--verification",
                str(verification),
                "--out",
                str(tmp_path / "site"),
            ]
        )
        == 0
    )
    data = json.loads((tmp_path / "site" / "leaderboard.json").read_text())
    assert {s["task"] for s in data["sensitivity"]} == {"DemoIntentEmotion", "DemoNYTClustering"}
    assert "Instruction sensitivity" in (tmp_path / "site" / "index.html").read_text()
