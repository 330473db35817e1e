"""Test sets regenerated with an LLM, the way the InBedder paper built them (appendix A and B).

    intent-emotion           IntentEmotion/{emotion,intent}.csv   (anchor,positive,negative)
    instruct-stsb            InstructSTSB/test.jsonl              (sentence1,sentence2,score,instruction)
    robustness-instructions  RobustnessInstructions/instructions.json

All calls go through `bench.core.llm_client` (cache, retries, validation, ledger). Outputs and manifest.json
are written atomically at the very end, so Ctrl-C leaves the previous files (if any) and a response
cache from which a rerun resumes. Nothing in the outputs or the manifest depends on the clock or on
what the cache already held, so a rebuild from the same cache is byte-identical. Items whose replies
stay invalid after the retries are left out and listed under "failures" in the manifest.

With a real GPT-4 endpoint these builders reproduce the published procedure; with a small local
model (tests, CI) they exercise it but the data is of toy quality.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.core.bounded import MAX_SOURCE_BYTES, load_json_bounded
from bench.core.errors import ConfigError, DataError
from bench.core.llm_client import (
    STRING,
    ChatRequest,
    LLMClient,
    LLMConfig,
    LLMResult,
    estimate_cost,
    estimate_tokens,
    object_schema,
)
from bench.core.redact import redact_url
from bench.dataset_builders import llm_prompts as P
from bench.dataset_builders.label_derived import (
    BANKING_TEST,
    STSB_TEST,
    SourceFile,
    parse_banking,
    parse_stsb,
    read_source,
    records_to_jsonl_bytes,
    triplets_to_csv_bytes,
    write_manifest,
    write_outputs,
)

INBEDDER_INSTRUCTIONS = "InBedder/derived/task_descriptions_and_instructions.json"
ROBUSTNESS_KINDS = ("correct", "implicit", "incorrect")
N_INSTRUCTIONS = 10

REWRITE_SCHEMA = object_schema(optimistic=STRING, frustrating=STRING)
QUESTION_SCHEMA = object_schema(question=STRING)
INSTRUCTIONS_SCHEMA = object_schema(
    instructions={"type": "array", "items": STRING, "minItems": N_INSTRUCTIONS, "maxItems": N_INSTRUCTIONS}
)


# ---------------------------------------------------------------------------------------------- plumbing
@dataclass
class Plan:
    """Requests a build will send, for --dry-run and the pre-flight line (follow-ups are estimated)."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, prompt: str, completion_tokens: int, *, earlier_reply_tokens: int = 0) -> None:
        """One request; a follow-up also re-sends the earlier turn's reply as prompt."""
        self.requests += 1
        self.prompt_tokens += estimate_tokens(prompt) + earlier_reply_tokens
        self.completion_tokens += completion_tokens

    def report(self, config: LLMConfig) -> dict[str, object]:
        cost = estimate_cost(config, self.prompt_tokens, self.completion_tokens)
        return {
            "requests": self.requests,
            "prompt_tokens_estimate": self.prompt_tokens,
            "completion_tokens_estimate": self.completion_tokens,
            "cost_usd_estimate": None if cost is None else round(cost, 4),
            "note": "estimate: 4 characters per token, no retries, no cache hits; "
            "set $INSTRUCT_BENCH_LLM_PRICE=IN,OUT ($/1M tokens) for models without a listed price",
        }


def _announce(name: str, config: LLMConfig, plan: Plan) -> dict[str, object]:
    report = plan.report(config)
    cost = report["cost_usd_estimate"]
    print(
        f"{name}: {report['requests']} requests to {config.model} at {redact_url(config.base_url)}, about "
        f"{report['prompt_tokens_estimate']:,} prompt + {report['completion_tokens_estimate']:,} completion tokens"
        f"{'' if cost is None else f', about ${cost:,.2f}'} (before cache hits)",
        file=sys.stderr,
    )
    return report


def _sample_indices(n: int, size: int | None, seed: int) -> list[int]:
    """`size` items drawn without replacement, kept in source order; all of them when size is None."""
    if size is None or size >= n:
        return list(range(n))
    if size < 1:
        raise ConfigError(f"--size must be a positive number, got {size}.")
    return sorted(np.random.default_rng(seed).choice(n, size=size, replace=False).tolist())


def _norm(text: str) -> str:
    """Comparison key: case, spacing and end punctuation do not make two texts different."""
    return re.sub(r"\s+", " ", text).strip().strip(".?!").strip().casefold()


def _distinct(*pairs: tuple[str, str]) -> Callable[[Any], None]:
    """A reply check: each named (key, other-text) must differ from the other text."""

    def check(value: Any) -> None:
        for key, other in pairs:
            if _norm(value[key]) == _norm(other):
                raise ValueError(f"'{key}' repeats an earlier text: {other[:60]!r}")

    return check


def _tokens(results: Sequence[LLMResult | None]) -> dict[str, int]:
    used = [r for r in results if r is not None]
    return {k: sum(r.usage[k] for r in used) for k in ("prompt_tokens", "completion_tokens")}


def _finish(
    task_dir: Path,
    *,
    builder: str,
    note: str,
    config: LLMConfig,
    client: LLMClient,
    seed: int,
    size: int | None,
    sources: list[SourceFile],
    templates: list[str],
    outputs: dict[str, tuple[bytes, int]],
    counts: dict[str, object],
    failures: list[dict[str, object]],
    results: Sequence[LLMResult | None],
) -> dict[str, object]:
    """Write outputs, then manifest.json (no clock, no cache-state counts); return manifest + run summary."""
    records = write_outputs(task_dir, outputs)
    manifest = {
        "builder": f"bench.dataset_builders.llm_sets:{builder}",
        "proxy": False,
        "note": note,
        "seed": seed,
        "size": size,
        "llm": {**config.record(), "json_mode_used": client.json_mode},
        "prompts": P.template_records(templates),
        "sources": [s.record for s in sources],
        "counts": counts,
        "failures": failures,
        "tokens": _tokens(results),
        "outputs": records,
    }
    write_manifest(task_dir, manifest)
    summary = {"out": str(task_dir), **counts, "failures": len(failures), "ledger": client.ledger.as_dict()}
    return {**manifest, "summary": summary}


def _conversations(
    config: LLMConfig,
    first: list[ChatRequest],
    follow_up: Callable[[int, ChatRequest, LLMResult], ChatRequest],
    descs: tuple[str, str],
) -> tuple[LLMClient, list[LLMResult], dict[int, LLMResult]]:
    """Appendix A's two-prompt conversations: the second prompt is a follow-up turn, sent only where the
    first reply passed its checks. Returns the (closed) client for its ledger, the first replies, and the
    second replies by item index."""
    client = LLMClient(config)
    try:
        stage1 = client.run(first, desc=descs[0])
        where = [k for k, res in enumerate(stage1) if res.ok]
        second = [follow_up(k, first[k], stage1[k]) for k in where]
        stage2 = dict(zip(where, client.run(second, desc=descs[1]), strict=True))
    finally:
        client.close()
    return client, stage1, stage2


def _failure(item: int, stage: str, result: LLMResult) -> dict[str, object]:
    return {"item": item, "stage": stage, "attempts": result.attempts, "error": result.error}


# ---------------------------------------------------------------------------------------------- IntentEmotion
INTENT_EMOTION_NOTE = (
    "IntentEmotion rebuilt with the InBedder appendix A procedure: each sampled BANKING77 test utterance is "
    "rewritten as optimistic and frustrating keeping its intent (u1_opt, u1_fru), then both rewrites get a new "
    "intent keeping their emotion (u2_opt, u2_fru, follow-up turn). Triplets (anchor, positive, negative): "
    "emotion.csv has (u1_opt, u2_opt, u1_fru) and (u1_fru, u2_fru, u1_opt); intent.csv has (u1_opt, u1_fru, "
    "u2_opt) and (u1_fru, u1_opt, u2_fru). Utterances whose replies stayed invalid are left out (see failures)."
)


def build_intent_emotion(
    *,
    source_dir: Path,
    out_dir: Path,
    seed: int = 42,
    size: int | None = None,
    llm_model: str | None = None,
    base_url: str | None = None,
    temperature: float | None = None,
    concurrency: int | None = None,
    llm_cache_dir: str | Path | None = None,
    dry_run: bool = False,
    max_retries: int | None = None,
) -> dict[str, object]:
    """IntentEmotion/{emotion,intent}.csv from BANKING77 test; `size` = utterances (default all 3,080)."""
    banking = read_source(source_dir, BANKING_TEST)
    rows = [(t.strip(), c.strip()) for t, c in parse_banking(banking) if t.strip() and c.strip()]
    items = [rows[i] for i in _sample_indices(len(rows), size, seed)]
    config = LLMConfig.from_options(
        llm_model=llm_model,
        base_url=base_url,
        temperature=temperature,
        seed=seed,
        concurrency=concurrency,
        llm_cache_dir=llm_cache_dir,
        max_retries=max_retries,
    )
    first = [
        ChatRequest.user(
            P.fill(P.INTENT_EMOTION_EMOTION, intent=c, text=t), REWRITE_SCHEMA, name="rewrite", check=_rewrites_differ
        )
        for t, c in items
    ]
    plan = Plan()
    for req, (text, _) in zip(first, items, strict=True):
        reply = 2 * estimate_tokens(text) + 20
        plan.add(req.messages[0]["content"], reply)
        plan.add(req.messages[0]["content"] + P.INTENT_EMOTION_INTENT, reply, earlier_reply_tokens=reply)
    report = _announce("intent-emotion", config, plan)
    if dry_run:
        return {"summary": {"dry_run": True, "utterances": len(items), **report}}

    def change_intent(k: int, req: ChatRequest, res: LLMResult) -> ChatRequest:
        u1 = res.value
        assert res.reply is not None  # only ok results are followed up, and an ok result has its reply
        return req.follow_up(
            res.reply,
            P.fill(P.INTENT_EMOTION_INTENT, intent=items[k][1]),
            REWRITE_SCHEMA,
            name="rewrite",
            check=_distinct(("optimistic", u1["optimistic"]), ("frustrating", u1["frustrating"])),
        )

    client, stage1, stage2 = _conversations(
        config, first, change_intent, ("IntentEmotion: change emotion", "IntentEmotion: change intent")
    )

    emotion, intent, failures = [], [], []
    for k, res1 in enumerate(stage1):
        if not res1.ok:
            failures.append(_failure(k, "change_emotion", res1))
            continue
        res2 = stage2[k]
        if not res2.ok:
            failures.append(_failure(k, "change_intent", res2))
            continue
        o1, f1 = res1.value["optimistic"].strip(), res1.value["frustrating"].strip()
        o2, f2 = res2.value["optimistic"].strip(), res2.value["frustrating"].strip()
        emotion += [(o1, o2, f1), (f1, f2, o1)]
        intent += [(o1, f1, o2), (f1, o1, f2)]
    return _finish(
        Path(out_dir) / "IntentEmotion",
        builder="build_intent_emotion",
        note=INTENT_EMOTION_NOTE,
        config=config,
        client=client,
        seed=seed,
        size=size,
        sources=[banking],
        templates=["intent_emotion.change_emotion", "intent_emotion.change_intent"],
        outputs={
            "emotion.csv": (triplets_to_csv_bytes(emotion), len(emotion)),
            "intent.csv": (triplets_to_csv_bytes(intent), len(intent)),
        },
        counts={
            "utterances": len(items),
            "utterances_kept": len(emotion) // 2,
            "triplets": {"emotion.csv": len(emotion), "intent.csv": len(intent)},
        },
        failures=failures,
        results=[*stage1, *stage2.values()],
    )


def _rewrites_differ(value: Any) -> None:
    if _norm(value["optimistic"]) == _norm(value["frustrating"]):
        raise ValueError("the optimistic and frustrating rewrites are the same text")


# ---------------------------------------------------------------------------------------------- InstructSTSB
INSTRUCT_STSB_NOTE = (
    "InstructSTSB rebuilt with the InBedder appendix A procedure: for each sampled STS-B test pair the LLM "
    "writes a question that discriminates the two sentences (row with score 0) and, as a follow-up turn, one "
    "whose answers do not (row with score 1). Each pair yields both rows, in that order; pairs whose replies "
    "stayed invalid are left out (see failures)."
)


def build_instruct_stsb(
    *,
    source_dir: Path,
    out_dir: Path,
    seed: int = 42,
    size: int | None = None,
    llm_model: str | None = None,
    base_url: str | None = None,
    temperature: float | None = None,
    concurrency: int | None = None,
    llm_cache_dir: str | Path | None = None,
    dry_run: bool = False,
    max_retries: int | None = None,
) -> dict[str, object]:
    """InstructSTSB/test.jsonl from STS-B test; `size` = sentence pairs (default all 1,379)."""
    stsb = read_source(source_dir, STSB_TEST)
    pairs = [(s1, s2) for s1, s2, _ in parse_stsb(stsb) if s1 and s2]
    items = [pairs[i] for i in _sample_indices(len(pairs), size, seed)]
    config = LLMConfig.from_options(
        llm_model=llm_model,
        base_url=base_url,
        temperature=temperature,
        seed=seed,
        concurrency=concurrency,
        llm_cache_dir=llm_cache_dir,
        max_retries=max_retries,
    )
    first = [
        ChatRequest.user(P.fill(P.STSB_DISCRIMINATIVE, sentence1=a, sentence2=b), QUESTION_SCHEMA, name="question")
        for a, b in items
    ]
    plan = Plan()
    for req in first:
        plan.add(req.messages[0]["content"], 25)
        plan.add(req.messages[0]["content"] + P.STSB_NON_DISCRIMINATIVE, 25, earlier_reply_tokens=25)
    report = _announce("instruct-stsb", config, plan)
    if dry_run:
        return {"summary": {"dry_run": True, "pairs": len(items), **report}}

    def non_discriminative(k: int, req: ChatRequest, res: LLMResult) -> ChatRequest:
        assert res.reply is not None  # only ok results are followed up, and an ok result has its reply
        return req.follow_up(
            res.reply,
            P.STSB_NON_DISCRIMINATIVE,
            QUESTION_SCHEMA,
            name="question",
            check=_distinct(("question", res.value["question"])),
        )

    client, stage1, stage2 = _conversations(
        config,
        first,
        non_discriminative,
        ("InstructSTSB: discriminative question", "InstructSTSB: non-discriminative question"),
    )

    records, failures = [], []
    for k, res1 in enumerate(stage1):
        stage, res = ("discriminative", res1) if not res1.ok else ("non_discriminative", stage2[k])
        if not res.ok:
            failures.append(_failure(k, stage, res))
            continue
        s1, s2 = items[k]
        records.append({"sentence1": s1, "sentence2": s2, "score": 0, "instruction": res1.value["question"].strip()})
        records.append({"sentence1": s1, "sentence2": s2, "score": 1, "instruction": res.value["question"].strip()})
    return _finish(
        Path(out_dir) / "InstructSTSB",
        builder="build_instruct_stsb",
        note=INSTRUCT_STSB_NOTE,
        config=config,
        client=client,
        seed=seed,
        size=size,
        sources=[stsb],
        templates=["instruct_stsb.discriminative", "instruct_stsb.non_discriminative"],
        outputs={"test.jsonl": (records_to_jsonl_bytes(records), len(records))},
        counts={"pairs": len(items), "pairs_kept": len(records) // 2, "rows": len(records)},
        failures=failures,
        results=[*stage1, *stage2.values()],
    )


# ---------------------------------------------------------------------------------------------- robustness
ROBUSTNESS_NOTE = (
    "Instruction lists for the InBedder robustness test (appendix B, Figure 9): for each task's original "
    "instruction, 10 correct paraphrases, 10 implicit and 10 incorrect instructions, one request per list. "
    "A list must hold 10 distinct instructions, none equal to the original (case, spacing and end "
    "punctuation ignored), else it is asked again; an instruction already in an earlier list of the same "
    "task is then dropped (listed under dropped_cross_list). The prompts are project-written (the paper "
    "prints none). Same keys as InBedder/derived/task_descriptions_and_instructions.json."
)


def build_robustness_instructions(
    *,
    source_dir: Path,
    out_dir: Path,
    seed: int = 42,
    size: int | None = None,
    llm_model: str | None = None,
    base_url: str | None = None,
    temperature: float | None = None,
    concurrency: int | None = None,
    llm_cache_dir: str | Path | None = None,
    dry_run: bool = False,
    max_retries: int | None = None,
) -> dict[str, object]:
    """RobustnessInstructions/instructions.json for the tasks that have robustness lists in InBedder.

    `size` = number of tasks (default all of them, in the file's order).
    """
    source = read_source(source_dir, INBEDDER_INSTRUCTIONS)
    tasks = _robustness_tasks(source)
    tasks = [tasks[i] for i in _sample_indices(len(tasks), size, seed)]
    config = LLMConfig.from_options(
        llm_model=llm_model,
        base_url=base_url,
        temperature=temperature,
        seed=seed,
        concurrency=concurrency,
        llm_cache_dir=llm_cache_dir,
        max_retries=max_retries,
    )
    requests = [
        ChatRequest.user(
            P.fill(P.TEMPLATES[f"robustness.{kind}"], instruction=inst, n=str(N_INSTRUCTIONS)),
            INSTRUCTIONS_SCHEMA,
            name="instructions",
            max_tokens=1024,
            check=_instruction_list(inst),
        )
        for _, inst in tasks
        for kind in ROBUSTNESS_KINDS
    ]
    plan = Plan()
    for req in requests:
        plan.add(req.messages[0]["content"], 25 * N_INSTRUCTIONS)
    report = _announce("robustness-instructions", config, plan)
    if dry_run:
        return {"summary": {"dry_run": True, "tasks": len(tasks), **report}}

    client = LLMClient(config)
    try:
        results = client.run(requests, desc="Robustness instructions")
    finally:
        client.close()
    out: dict[str, dict[str, object]] = {}
    failures: list[dict[str, object]] = []
    for t, (name, inst) in enumerate(tasks):
        entry: dict[str, object] = {"instruction": inst}
        seen: set[str] = set()
        dropped: list[str] = []
        for j, kind in enumerate(ROBUSTNESS_KINDS):
            res = results[t * len(ROBUSTNESS_KINDS) + j]
            if not res.ok:
                failures.append({**_failure(t, kind, res), "task": name})
                entry[f"{kind}_instructions"] = None
                continue
            kept: list[str] = []
            for text in (s.strip() for s in res.value["instructions"]):
                (dropped if _norm(text) in seen else kept).append(text)
            seen.update(_norm(s) for s in kept)
            entry[f"{kind}_instructions"] = kept
        entry["dropped_cross_list"] = dropped
        out[name] = entry
    data = (json.dumps(out, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    complete = sum(all(e[f"{k}_instructions"] for k in ROBUSTNESS_KINDS) for e in out.values())
    return _finish(
        Path(out_dir) / "RobustnessInstructions",
        builder="build_robustness_instructions",
        note=ROBUSTNESS_NOTE,
        config=config,
        client=client,
        seed=seed,
        size=size,
        sources=[source],
        templates=[f"robustness.{k}" for k in ROBUSTNESS_KINDS],
        outputs={"instructions.json": (data, len(out))},
        counts={"tasks": len(tasks), "tasks_complete": complete},
        failures=failures,
        results=results,
    )


def _robustness_tasks(source: SourceFile) -> list[tuple[str, str]]:
    """(task, original instruction) for every task that has published robustness lists."""
    data = load_json_bounded(  # size, nesting and integer digits bounded before the parser runs
        source.data, source.rel_path, error=DataError, max_bytes=MAX_SOURCE_BYTES, unique_keys=False
    )
    if not isinstance(data, dict):
        raise DataError(f"{source.rel_path}: expected an object of task name -> instructions.")
    tasks = [
        (name, d["instruction"])
        for name, d in data.items()
        if isinstance(d, dict) and isinstance(d.get("instruction"), str) and d.get("correct_instructions")
    ]
    if not tasks:
        raise DataError(f"{source.rel_path}: no task has an 'instruction' string and 'correct_instructions'.")
    return tasks


def _instruction_list(original: str) -> Callable[[Any], None]:
    def check(value: Any) -> None:
        normed = [_norm(s) for s in value["instructions"]]
        if len(set(normed)) != len(normed):
            raise ValueError("the list repeats an instruction")
        if _norm(original) in normed:
            raise ValueError("the list repeats the original instruction")

    return check
