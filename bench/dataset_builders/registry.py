"""Names `bench build-data NAME` accepts, and the function each one calls.

A builder is `fn(*, source_dir: Path, out_dir: Path, seed: int, size: int | None, **llm) -> dict` and returns
its manifest (which it has also written next to the data). Label-derived builders are deterministic
functions of the raw files and the seed; LLM builders also receive the options in `LLM_OPTIONS`, and a
builder with `options` the CLI flags named there (e.g. `tasks`, `suite`). A builder that reads no raw
files (`needs_source=False`) gets `source_dir=None` when `--source-dir` is not given.
Targets are "module:function" strings so that listing builders imports nothing heavy.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.core.errors import UnknownNameError


@dataclass(frozen=True)
class Builder:
    target: str
    description: str
    uses_llm: bool = False
    needs_source: bool = True  # whether --source-dir is required
    options: tuple[str, ...] = ()  # extra CLI options it takes (build_data.BUILDER_OPTIONS)

    def function(self) -> Callable[..., dict[str, Any]]:  # a manifest: JSON the CLI reads
        module, name = self.target.split(":")
        return getattr(importlib.import_module(module), name)


# Deterministic builders from labelled public data (issue: full suites).
LABEL_BUILDERS: dict[str, Builder] = {
    "intent-emotion-proxy": Builder(
        "bench.dataset_builders.label_derived:build_intent_emotion_proxy",
        "IntentEmotion-schema triplets from BANKING77 intents and GoEmotions emotions (proxy, not the GPT-4 set)",
    ),
    "instruct-stsb-proxy": Builder(
        "bench.dataset_builders.label_derived:build_instruct_stsb_proxy",
        "InstructSTSB-schema pairs from STS-B test, binarised gold scores (proxy, not the GPT-4 set)",
    ),
    # MetaEOL's STS set and the GSTransform datasets (bench/dataset_builders/sts_senteval.py, gstransform_sources.py).
    "sts-senteval": Builder(
        "bench.dataset_builders.sts_senteval:build_sts_senteval",
        "STS12-16, STSBenchmark, SICK-R as MTEB defines them (generic-sts), plus SentEval's STSBenchmark-SentEval and SICK-R-SentEval (metaeol-sts)",
    ),
    "gstransform": Builder(
        "bench.dataset_builders.gstransform_sources:build_gstransform",
        "every GSTransform task with a staged source: AmzCF, MNews, MultiHate, Toxic (stand-in), AG-News, IntEmo (proxy)",
    ),
    "gst-amzcf": Builder(
        "bench.dataset_builders.gstransform_sources:build_gst_amzcf",
        "GSTAmzCF from Amazon counterfactual EN test (670 reviews)",
    ),
    "gst-mnews": Builder(
        "bench.dataset_builders.gstransform_sources:build_gst_mnews",
        "GSTMNews from MasakhaNEWS English test (948 articles, 6 categories)",
    ),
    "gst-multihate": Builder(
        "bench.dataset_builders.gstransform_sources:build_gst_multihate",
        "GSTMultiHate from Multilingual HateCheck (10 languages) + English HateCheck",
    ),
    "gst-toxic": Builder(
        "bench.dataset_builders.gstransform_sources:build_gst_toxic",
        "GSTToxic STAND-IN from a 101-row Jigsaw-2018 sample (not toxic_conversations_50k)",
    ),
    "gst-agnews": Builder(
        "bench.dataset_builders.gstransform_sources:build_gst_agnews",
        "GSTAGNews from AG News test (7,600 texts, 4 topics)",
    ),
    "gst-intemo": Builder(
        "bench.dataset_builders.gstransform_sources:build_gst_intemo",
        "GSTIntEmo proxy triplets from BANKING77 intents and GoEmotions emotions",
    ),
    # Robustness clustering corpora (bench/dataset_builders/clustering_sets.py).
    "few-rel-clustering": Builder(
        "bench.dataset_builders.clustering_sets:build_few_rel",
        "FewRelClustering from ClusterLLM few_rel_nat (4,480 texts, 64 relations; the set InBedder names)",
    ),
    "few-nerd-clustering": Builder(
        "bench.dataset_builders.clustering_sets:build_few_nerd",
        "FewNerdClustering from ClusterLLM few_nerd_nat (3,789 texts, 58 entity types)",
    ),
    "few-event-clustering": Builder(
        "bench.dataset_builders.clustering_sets:build_few_event",
        "FewEventClustering from ClusterLLM few_event (4,742 texts, 34 event types)",
    ),
    "ratemyprof-clustering-standin": Builder(
        "bench.dataset_builders.clustering_sets:build_ratemyprof_standin",
        "RateMyProfClustering STAND-IN: GoalEx RateMyProf reviews, GoalEx LLM labels, 4 balanced clusters",
    ),
    "feedbacks-clustering-standin": Builder(
        "bench.dataset_builders.clustering_sets:build_feedbacks_standin",
        "FeedbacksClustering STAND-IN: GoalEx summary feedback, GoalEx LLM labels, 3 balanced clusters",
    ),
    "nyt-clustering": Builder(
        "bench.dataset_builders.clustering_sets:build_nyt",
        "NYTClustering topic/location (also NYTTopicClustering) from GoalEx NYT labels + user-supplied texts",
    ),
    "robustness-sets": Builder(
        "bench.dataset_builders.clustering_sets:build_robustness_sets",
        "all robustness corpora the source directory allows (Few*, RateMyProf/Feedbacks stand-ins, NYT if texts)",
    ),
}

# Builders that call an LLM through the project's OpenAI-compatible client (issue: dataset builders).
LLM_BUILDERS: dict[str, Builder] = {
    "intent-emotion": Builder(
        "bench.dataset_builders.llm_sets:build_intent_emotion",
        "IntentEmotion triplets: BANKING77 test utterances rewritten by an LLM (InBedder appendix A prompts)",
        uses_llm=True,
    ),
    "instruct-stsb": Builder(
        "bench.dataset_builders.llm_sets:build_instruct_stsb",
        "InstructSTSB: STS-B test pairs with LLM-written discriminating / non-discriminating questions",
        uses_llm=True,
    ),
    "robustness-instructions": Builder(
        "bench.dataset_builders.llm_sets:build_robustness_instructions",
        "10 correct, 10 implicit, 10 incorrect instructions per robustness task (InBedder appendix B)",
        uses_llm=True,
    ),
    "instruction-variants": Builder(
        "bench.dataset_builders.instruction_variants:build_instruction_variants",
        "a variants file for `bench run --instruction-variants`: each task's instruction + --size (5) LLM "
        "paraphrases, for --tasks or --suite (default generic-sts); needs no --source-dir",
        uses_llm=True,
        needs_source=False,
        options=("tasks", "suite"),
    ),
}

# Options passed to LLM builders only (CLI flag → keyword).
LLM_OPTIONS = ("llm_model", "base_url", "temperature", "concurrency", "llm_cache_dir", "dry_run", "max_retries")


def builders() -> dict[str, Builder]:
    return {**LABEL_BUILDERS, **LLM_BUILDERS}


def get_builder(name: str) -> Builder:
    known = builders()
    if name not in known:
        raise UnknownNameError("dataset builder", name, known, list_command="python -m bench build-data list")
    return known[name]
