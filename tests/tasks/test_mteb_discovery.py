"""MTEB finds the harness's tasks by type and its suites as benchmarks (bench/tasks/mteb_compat.py, bench/tasks/benchmarks.py).

Real MTEB calls only: `mteb.get_tasks` with its filters, `mteb.get_benchmark(s)`, `mteb.evaluate` on a
benchmark, and MTEB's own per-type aggregation. The before/after comparison runs in a fresh interpreter,
because this process imported `bench.tasks` long ago.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import mteb
import pytest
from mteb.benchmarks.benchmark import BenchmarkAggregation

from bench import tasks
from bench.core.errors import ConfigError
from bench.tasks import mteb_compat
from bench.tasks.abstasks import AbsTaskInstructionTriplet
from bench.tasks.abstasks.label_sampled import AbsTaskLabelTriplet
from bench.tasks.benchmarks import BENCHMARK_NAMES, SuiteTasks, benchmark_name
from bench.tasks.registry import SUITES

pytestmark = pytest.mark.registry  # MTEB finds every harness task and suite

ROOT = Path(__file__).resolve().parents[2]


def _own(cls: type) -> bool:
    """A harness task under its own name (not MTEB's task with an instruction added)."""
    return mteb_compat.mteb_registry().get(cls.metadata.name) is cls


OWN = {name: cls for name, cls in tasks.TASKS.items() if _own(cls)}
UNDER_MTEB_NAMES = {name for name in tasks.TASKS if name not in OWN}


def _names(found) -> list[str]:
    return [t.metadata.name for t in found]


# ---------------------------------------------------------------- (1) get_tasks


def test_which_tasks_are_the_harnesss_own():
    assert {
        "IntentEmotion",
        "NYTClustering",
        "InstructSTSB",
        "GSTAGNews",
        "FewRelClustering",
        "DemoIntentEmotion",
        "STSBenchmark-SentEval",
        "SICK-R-SentEval",
    } <= set(OWN)
    # the generic tasks under MTEB's names stay MTEB's classes in MTEB's registry
    assert {"STS12", "SICK-R", "SciDocsRR", "TwentyNewsgroupsClustering"} <= UNDER_MTEB_NAMES
    assert type(mteb.get_task("STS12")).__module__.startswith("mteb.")


def test_get_tasks_lists_every_harness_task_once():
    listed = _names(mteb.get_tasks(exclude_superseded=False))
    assert len(listed) == len(set(listed))  # nothing listed twice, no MTEB task shadowed
    assert set(tasks.TASKS) <= set(listed)
    task_list = mteb_compat.mteb_task_list()
    for name, cls in OWN.items():
        assert task_list.count(cls) == 1, name
    for name in UNDER_MTEB_NAMES:  # MTEB's class is listed, the harness's instructed copy is not
        assert tasks.TASKS[name] not in task_list, name


def test_get_tasks_default_filters_drop_only_superseded_tasks():
    listed = set(_names(mteb.get_tasks()))
    for name, cls in OWN.items():
        assert (name in listed) == (cls.metadata.superseded_by is None), name
    assert {"IntentEmotion", "NYTClustering", "GSTToxic", "FewNerdClustering", "SICK-R-SentEval"} <= listed
    # MTEB's own filters keep working for MTEB's tasks
    assert "STSBenchmark" not in listed and "STSBenchmark.v2" in listed


@pytest.mark.parametrize("task_type", ["Reranking", "Clustering", "STS", "PairClassification"])
def test_get_tasks_by_type_has_each_harness_task_of_that_type(task_type):
    found = mteb.get_tasks(task_types=[task_type], exclude_superseded=False)
    names = set(_names(found))
    expected = {n for n, c in OWN.items() if c.metadata.type == task_type}
    assert expected <= names
    assert {n for n in OWN if n in names} == expected  # and no harness task of another type
    assert all(t.metadata.type == task_type for t in found)
    assert any(type(t).__module__.startswith("mteb.") for t in found)  # MTEB's own tasks of the type too
    for t in found:
        if t.metadata.name in OWN:
            assert type(t) is OWN[t.metadata.name]


def test_get_tasks_by_type_names():
    reranking = set(_names(mteb.get_tasks(task_types=["Reranking"])))
    assert {"IntentEmotion", "DemoIntentEmotion", "GSTIntEmo", "GSTToxic", "GSTAGNews"} <= reranking
    assert {"SciDocsRR", "NevIR"} <= reranking  # MTEB's
    clustering = set(_names(mteb.get_tasks(task_types=["Clustering"])))
    assert {"NYTClustering", "DemoNYTClustering", "GSTNYTClust", "GSTAmzCF", "GSTMNews"} <= clustering
    robustness = {
        "NYTTopicClustering",
        "FeedbacksClustering",
        "RateMyProfClustering",
        "FewRelClustering",
        "FewEventClustering",
        "FewNerdClustering",
    }
    assert not robustness & clustering  # a V-measure gap is no V-measure
    assert robustness <= set(_names(mteb.get_tasks(task_types=["InstructionReranking"])))
    assert not {"IntentEmotion", "InstructSTSB"} & clustering
    sts = set(_names(mteb.get_tasks(task_types=["STS"])))
    assert {"InstructSTSB", "DemoInstructSTS", "GSTPaperCode", "GSTMultiHate", "GSTBigPatent", "SICK-R-SentEval"} <= sts
    pair = set(_names(mteb.get_tasks(task_types=["PairClassification"])))
    assert not set(OWN) & pair and "SprintDuplicateQuestions" in pair


def test_other_mteb_filters_still_work():
    eng = set(_names(mteb.get_tasks(languages=["eng"])))
    assert {"IntentEmotion", "GSTMultiHate", "DemoNYTClustering"} <= eng
    assert not set(OWN) & set(_names(mteb.get_tasks(languages=["deu"]))), "the harness's tasks are English"
    assert not set(OWN) & set(_names(mteb.get_tasks(script=["Cyrl"])))
    financial = set(_names(mteb.get_tasks(domains=["Financial"])))
    assert {"IntentEmotion", "DemoIntentEmotion", "GSTIntEmo"} <= financial and "NYTClustering" not in financial
    assert {"IntentEmotion"} <= set(_names(mteb.get_tasks(categories=["t2t"], modalities=["text"])))
    assert not set(OWN) & set(_names(mteb.get_tasks(modalities=["image"], exclusive_modality_filter=True)))
    by_type_and_domain = _names(mteb.get_tasks(task_types=["Reranking"], domains=["Financial"], languages=["eng"]))
    assert {"IntentEmotion", "GSTIntEmo"} <= set(by_type_and_domain)
    # superseded: STSBenchmark-SentEval inherits MTEB's STSBenchmark metadata, `superseded_by` included
    assert "STSBenchmark-SentEval" in _names(mteb.get_tasks(task_types=["STS"], exclude_superseded=False))
    # by name: the harness's task, MTEB's task and the harness's generic task under MTEB's name
    found = mteb.get_tasks(tasks=["IntentEmotion", "STS12", "FewRelClustering"])
    assert _names(found) == ["IntentEmotion", "STS12", "FewRelClustering"]
    assert type(found[0]) is tasks.IntentEmotion and type(found[1]).__module__.startswith("mteb.")


@pytest.mark.slow
def test_mteb_before_and_after_import_tasks():
    """A fresh interpreter: MTEB's counts, then `import tasks` (with an empty data directory: nothing may be
    instantiated at import), then the same calls again."""
    code = textwrap.dedent("""
        import json, os, sys, tempfile
        import mteb
        from mteb.get_tasks import TASK_LIST
        def classes(found):
            return {t.metadata.name: f"{type(t).__module__}.{type(t).__qualname__}" for t in found}
        before = {
            "all": classes(mteb.get_tasks()),
            "all_superseded": classes(mteb.get_tasks(exclude_superseded=False)),
            "clustering": sorted(t.metadata.name for t in mteb.get_tasks(task_types=["Clustering"])),
            "benchmarks": [b.name for b in mteb.get_benchmarks()],
        }
        import importlib
        importlib.reload(sys.modules["mteb.benchmarks.get_benchmark"])  # forget MTEB's cached benchmarks
        sys.modules.pop("mteb.benchmarks.benchmarks", None)
        os.environ["INSTRUCT_BENCH_DATA_DIR"] = tempfile.mkdtemp()  # no task folders at all
        from bench import tasks
        lazy = {"mteb_benchmarks_built": "mteb.benchmarks.benchmarks" in sys.modules}
        bench = mteb.get_benchmark("InBedder-awareness")
        lazy["len"] = len(bench)
        try:
            list(bench)
            lazy["error"] = None
        except Exception as e:
            lazy["error"] = type(e).__name__
        lazy["demo"] = [type(t).__name__ for t in mteb.get_benchmark("InstructBench-demo")]  # packaged data
        del os.environ["INSTRUCT_BENCH_DATA_DIR"]
        after = {
            "all": classes(mteb.get_tasks()),
            "all_superseded": classes(mteb.get_tasks(exclude_superseded=False)),
            "clustering": sorted(t.metadata.name for t in mteb.get_tasks(task_types=["Clustering"])),
            "benchmarks": [b.name for b in mteb.get_benchmarks()],
        }
        print(json.dumps({"before": before, "after": after, "lazy": lazy,
                          "own": {n: c.metadata.superseded_by is None for n, c in tasks.TASKS.items()
                                  if f"{c.__module__}.{c.__qualname__}".startswith("bench.tasks.")}}))
    """)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("INSTRUCT_BENCH_DATA_DIR", None)
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    before, after, lazy = out["before"], out["after"], out["lazy"]

    # import is lazy: no task instantiated (the empty data directory would have failed it), MTEB's own
    # benchmark module not built; the benchmark's tasks are made (and fail here) only when used
    assert lazy == {
        "mteb_benchmarks_built": False,
        "len": 3,
        "error": "MissingDataError",
        "demo": ["DemoIntentEmotion", "DemoInstructSTS", "DemoNYTClustering"],
    }

    own = set(OWN)
    own_listed = {n for n in own if n in after["all"]}
    assert own_listed == {n for n in own if out["own"].get(n, True)}  # every non-superseded one
    assert not own & set(before["all_superseded"])
    # MTEB's tasks are unaffected: same names, same classes; ours are added
    for key in ("all", "all_superseded"):
        assert {n: c for n, c in after[key].items() if n not in own} == before[key]
    assert len(after["all"]) == len(before["all"]) + len(own_listed)
    assert len(after["all_superseded"]) == len(before["all_superseded"]) + len(own)
    new_clustering = set(after["clustering"]) - set(before["clustering"])
    assert new_clustering == {n for n in own_listed if OWN[n].metadata.type == "Clustering"}
    assert "NYTClustering" in new_clustering and "IntentEmotion" not in after["clustering"]
    # benchmarks: MTEB's first and unchanged, then one per suite
    assert after["benchmarks"][: len(before["benchmarks"])] == before["benchmarks"]
    added = after["benchmarks"][len(before["benchmarks"]) :]
    assert added == [benchmark_name(s) for s in tasks.registry.ordered_suites()]


# ---------------------------------------------------------------- (2) benchmarks


def test_every_suite_is_a_benchmark():
    assert set(BENCHMARK_NAMES) >= set(SUITES), "every suite has a chosen benchmark name"
    listed = {b.name: b for b in mteb.get_benchmarks()}
    for suite, names in SUITES.items():
        bench = mteb.get_benchmark(benchmark_name(suite))
        assert bench is listed[benchmark_name(suite)] is mteb.get_benchmark(benchmark_name(suite))
        assert isinstance(bench, mteb.Benchmark) and isinstance(bench.tasks, SuiteTasks)
        assert len(bench) == len(names) and suite in (bench.description or "")
    assert {
        "InBedder",
        "InBedder-awareness",
        "InBedder-robustness",
        "GSTransform",
        "InstructBench",
        "InstructBench-demo",
        "MetaEOL-STS",
        "INSTRUCTOR-STS",
        "InstructBench-generic",
    } <= set(listed)
    with pytest.raises(KeyError):
        mteb.get_benchmark("InBedder-unknown")


def test_benchmark_tasks_are_the_suites_tasks():
    bench = mteb.get_benchmark("InBedder-awareness")
    assert _names(bench) == list(SUITES["awareness"])  # the suite's order
    assert set(SUITES["awareness"]) == {"IntentEmotion", "NYTClustering", "InstructSTSB"}
    assert [type(t) for t in bench] == [tasks.TASKS[n] for n in SUITES["awareness"]]
    assert bench.tasks.built and bench[0] is bench[0]  # made once
    gst = mteb.get_benchmark("GSTransform")
    assert _names(gst) == list(SUITES["gstransform"]) and len(gst) == 9
    # the generic suites hold the harness's instructed copies under MTEB's names
    generic = {t.metadata.name: t for t in mteb.get_benchmark("INSTRUCTOR-STS")}
    assert set(generic) == {"STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICK-R"}
    assert type(generic["STS12"]) is tasks.TASKS["STS12"] and generic["STS12"].metadata.prompt
    everything = set(_names(mteb.get_benchmark("InstructBench")))
    assert everything == set(tasks.TASKS) - set(SUITES["demo"])


def test_benchmark_names_are_not_mtebs():
    mtebs = mteb_compat.mteb_benchmark_registry()
    assert len(mtebs) > 50 and "MTEB(eng, v2)" in mtebs
    assert not set(BENCHMARK_NAMES.values()) & set(mtebs)
    assert all(b.name == name for name, b in mteb_compat.harness_benchmarks().items())


@pytest.mark.parametrize("name", ["MTEB(eng, v2)", "MTEB"])  # a name, an alias
def test_a_benchmark_named_like_mtebs_is_refused(monkeypatch, name):
    fake = mteb.Benchmark(name=name, tasks=[])
    monkeypatch.setattr(mteb_compat, "_BENCHMARK_SOURCES", [*mteb_compat._BENCHMARK_SOURCES, lambda: [fake]])
    with pytest.raises(ConfigError, match="rename"):
        mteb.get_benchmark("InBedder")
    monkeypatch.undo()
    assert mteb.get_benchmark("MTEB(eng, v2)").name == "MTEB(eng, v2)"


@pytest.mark.slow
def test_a_benchmark_runs_in_mteb_evaluate():
    from toy_encoders import HashEncoder

    bench = mteb.get_benchmark("InstructBench-demo")
    result = mteb.evaluate(HashEncoder(use_cache=False), bench, cache=None, show_progress_bar=False, co2_tracker=False)
    assert sorted(r.task_name for r in result.task_results) == sorted(SUITES["demo"])
    per_type = BenchmarkAggregation.TASK_TYPES.aggregate(result.task_results)
    assert set(per_type) == {"Reranking", "STS", "Clustering"}
    triplet = next(r for r in result.task_results if r.task_name == "DemoIntentEmotion")
    assert per_type["Reranking"] == pytest.approx(triplet.get_score())


# ---------------------------------------------------------------- (3) task types

# main score -> the MTEB type whose per-type mean it can join
TYPE_OF_MAIN_SCORE = {
    "hmean_success_rate": "Reranking",  # rank two candidates for an instructed query (NevIR, ColDeRReranking)
    "hmean_v_measure": "Clustering",
    "cosine_spearman": "STS",
    "mean_cosine_spearman": "STS",
    "delta_ci_mean": "InstructionReranking",  # a V-measure gap: joins p-MRR (instruction-following change), not V-measures
}


def test_every_harness_task_has_the_type_of_its_main_score():
    """The type is decided once, in the main score's declaration (`Metric.mteb_type`), and every task follows it."""
    from bench.core.metric_specs import resolve
    from bench.results.task_catalog import metrics

    for name, cls in OWN.items():
        meta = cls.metadata
        metric = resolve(meta.main_score, metrics(name) or ())
        assert metric is not None and metric.mteb_type, f"{name}: decide the MTEB type for {meta.main_score}"
        assert meta.type == metric.mteb_type, name
        if meta.main_score in TYPE_OF_MAIN_SCORE:  # the declarations say what was decided for the landed tasks
            assert metric.mteb_type == TYPE_OF_MAIN_SCORE[meta.main_score], name


def test_triplet_tasks_are_reranking_not_pair_classification():
    triplets = {n for n, c in OWN.items() if issubclass(c, (AbsTaskInstructionTriplet, AbsTaskLabelTriplet))}
    assert triplets == {"IntentEmotion", "DemoIntentEmotion", "GSTIntEmo", "GSTToxic", "GSTAGNews"}
    for name in triplets:
        meta = tasks.TASKS[name].metadata
        assert meta.type == "Reranking" and meta.simplified_task_type == "retrieval", name
    assert not [n for n, c in tasks.TASKS.items() if c.metadata.type == "PairClassification"]
    # the type MTEB model implementations key their prompts by (AbsEncoder.get_prompt_name)
    from mteb.models.abs_encoder import get_prompt_name
    from mteb.types import PromptType

    prompts = {"PairClassification": "pair", "Reranking-query": "rerank query", "Reranking": "rerank"}
    assert get_prompt_name(prompts, tasks.IntentEmotion.metadata, PromptType.query) == "Reranking-query"
    assert get_prompt_name(prompts, tasks.IntentEmotion.metadata, None) == "Reranking"
