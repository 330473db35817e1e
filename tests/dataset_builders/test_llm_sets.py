"""LLM dataset builders (bench/dataset_builders/llm_sets.py) on real raw files, against the fake OpenAI server."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re

import pytest

from bench.core.llm_client import LLMClient
from bench.dataset_builders import llm_prompts as P
from bench.dataset_builders.label_derived import BANKING_TEST, STSB_TEST, parse_banking, parse_stsb, read_source
from bench.dataset_builders.llm_sets import build_instruct_stsb, build_intent_emotion, build_robustness_instructions
from bench.dataset_builders.registry import get_builder

CHAT = "/v1/chat/completions"


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


def rewrite_handler(req):
    """Deterministic stand-in for GPT-4 on the two IntentEmotion prompts."""
    msgs = req["messages"]
    if len(msgs) == 1:
        text = re.search(r'\)\? "(.*)" Please output', msgs[0]["content"], re.DOTALL).group(1)
        return json.dumps({"optimistic": f"Great! {text}", "frustrating": f"Ugh. {text}"})
    first = json.loads(msgs[1]["content"])
    return json.dumps({k: v + " Also, close my account." for k, v in first.items()})


def question_handler(req):
    msgs = req["messages"]
    first_sentence = re.search(r"1\. (.*)\n2\. ", msgs[0]["content"]).group(1)
    if len(msgs) == 1:
        return json.dumps({"question": f"What exactly happens in: {first_sentence[:30]}?"})
    return json.dumps({"question": "What is the subject of the sentence?"})


def instructions_handler(req):
    kind = next(k for k in ("Paraphrase", "implicitly", "diverge") if k in req["messages"][0]["content"])
    return json.dumps({"instructions": [f"{kind} instruction number {i}" for i in range(10)]})


def build(fn, server, raw_dir, out, cache, **kw):
    kw.setdefault("size", 5)
    return fn(
        source_dir=raw_dir,
        out_dir=out,
        seed=7,
        llm_model="fake",
        base_url=server.base_url,
        llm_cache_dir=cache,
        max_retries=1,
        **kw,
    )


def read_csv(path):
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    return rows[0], rows[1:]


def tree_bytes(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_registered_as_llm_builders():
    for name in ("intent-emotion", "instruct-stsb", "robustness-instructions"):
        assert get_builder(name).uses_llm and callable(get_builder(name).function())


def test_intent_emotion_triplets_follow_appendix_a(fake_openai, raw_dir, tmp_path):
    fake_openai.chat_handler = rewrite_handler
    manifest = build(build_intent_emotion, fake_openai, raw_dir, tmp_path / "out", tmp_path / "cache")
    task_dir = tmp_path / "out" / "IntentEmotion"
    header, emotion = read_csv(task_dir / "emotion.csv")
    _, intent = read_csv(task_dir / "intent.csv")
    assert header == ["anchor", "positive", "negative"] and len(emotion) == len(intent) == 10
    calls = fake_openai.calls(CHAT)
    assert len(calls) == 10  # 5 utterances x (change emotion, then change intent as a follow-up)
    banking = {t.strip(): c for t, c in parse_banking(read_source(raw_dir, BANKING_TEST))}
    for k in range(5):
        o1, o2, f1 = emotion[2 * k]
        assert o1.startswith("Great! ") and f1 == "Ugh. " + o1.removeprefix("Great! ")
        assert o2 == o1 + " Also, close my account."
        f2 = f1 + " Also, close my account."
        assert emotion[2 * k + 1] == [f1, f2, o1]
        assert intent[2 * k] == [o1, f1, o2] and intent[2 * k + 1] == [f1, o1, f2]
        original = o1.removeprefix("Great! ")
        # The prompt is appendix A's, verbatim, with the utterance and its BANKING77 intent.
        assert P.fill(P.INTENT_EMOTION_EMOTION, intent=banking[original], text=original) in [
            c["messages"][0]["content"] for c in calls
        ]
    follow = next(c for c in calls if len(c["messages"]) == 3)
    assert follow["messages"][2]["content"].startswith('Modify the intent of the above utterances (i.e. from "')
    on_disk = json.loads((task_dir / "manifest.json").read_text())
    assert (
        on_disk["prompts"]["intent_emotion.change_emotion"]["sha256"]
        == hashlib.sha256(P.INTENT_EMOTION_EMOTION.encode()).hexdigest()
    )
    assert on_disk["sources"][0]["path"] == BANKING_TEST and on_disk["failures"] == []
    assert on_disk["llm"]["model"] == "fake" and on_disk["llm"]["endpoint"] == fake_openai.base_url
    assert on_disk["tokens"]["prompt_tokens"] > 0 and "test-key" not in json.dumps(on_disk)
    assert (
        on_disk["outputs"]["emotion.csv"]["sha256"]
        == hashlib.sha256((task_dir / "emotion.csv").read_bytes()).hexdigest()
    )
    assert manifest["summary"]["ledger"]["requests_sent"] == 10


def test_intent_emotion_loads_in_the_task(fake_openai, raw_dir, tmp_path):
    from bench.tasks import get_tasks

    fake_openai.chat_handler = rewrite_handler
    build(build_intent_emotion, fake_openai, raw_dir, tmp_path / "out", tmp_path / "cache", size=3)
    (task,) = get_tasks(["IntentEmotion"], data_dir=tmp_path / "out")
    task.load_data()
    rows = task.dataset["test"]
    assert len(rows) == 12 and sorted(set(rows["criterion"])) == ["emotion", "intent"]


def test_invalid_replies_become_recorded_failures(fake_openai, raw_dir, tmp_path):
    def handler(req):
        if "card" in req["messages"][0]["content"].split('"')[1]:  # every utterance whose intent names a card
            return "I cannot do that."
        return rewrite_handler(req)

    fake_openai.chat_handler = handler
    manifest = build(build_intent_emotion, fake_openai, raw_dir, tmp_path / "out", tmp_path / "cache", size=12)
    failures = manifest["failures"]
    assert failures and all(f["stage"] == "change_emotion" and f["attempts"] == 2 for f in failures)
    assert all("not JSON" in f["error"] for f in failures)
    kept = manifest["counts"]["utterances_kept"]
    assert kept == 12 - len(failures) and manifest["counts"]["triplets"]["emotion.csv"] == 2 * kept
    _, emotion = read_csv(tmp_path / "out" / "IntentEmotion" / "emotion.csv")
    assert len(emotion) == 2 * kept and "I cannot do that." not in json.dumps(emotion)


def test_follow_up_that_repeats_the_first_reply_is_invalid(fake_openai, raw_dir, tmp_path):
    def lazy(req):  # the intent "change" returns the same texts
        return rewrite_handler({"messages": req["messages"][:1]}) if len(req["messages"]) == 3 else rewrite_handler(req)

    fake_openai.chat_handler = lazy
    manifest = build(build_intent_emotion, fake_openai, raw_dir, tmp_path / "out", tmp_path / "cache", size=2)
    assert [f["stage"] for f in manifest["failures"]] == ["change_intent", "change_intent"]
    assert "repeats an earlier text" in manifest["failures"][0]["error"]


def test_instruct_stsb_rows(fake_openai, raw_dir, tmp_path):
    fake_openai.chat_handler = question_handler
    manifest = build(build_instruct_stsb, fake_openai, raw_dir, tmp_path / "out", tmp_path / "cache", size=4)
    rows = [json.loads(line) for line in (tmp_path / "out" / "InstructSTSB" / "test.jsonl").read_text().splitlines()]
    assert len(rows) == 8 and [r["score"] for r in rows] == [0, 1] * 4
    pairs = {(a, b) for a, b, _ in parse_stsb(read_source(raw_dir, STSB_TEST))}
    for disc, same in zip(rows[::2], rows[1::2], strict=True):
        assert (disc["sentence1"], disc["sentence2"]) == (same["sentence1"], same["sentence2"]) in pairs
        assert disc["instruction"].startswith("What exactly happens in: " + disc["sentence1"][:10])
        assert same["instruction"] == "What is the subject of the sentence?"
    second = next(c for c in fake_openai.calls(CHAT) if len(c["messages"]) == 3)
    assert second["messages"][2]["content"] == P.STSB_NON_DISCRIMINATIVE
    assert manifest["counts"] == {"pairs": 4, "pairs_kept": 4, "rows": 8}


def test_robustness_instructions(fake_openai, raw_dir, tmp_path):
    fake_openai.chat_handler = instructions_handler
    build(build_robustness_instructions, fake_openai, raw_dir, tmp_path / "out", tmp_path / "cache", size=None)
    data = json.loads((tmp_path / "out" / "RobustnessInstructions" / "instructions.json").read_text())
    assert "FewRelClustering" in data and "IntentEmotion" not in data and len(data) == 7
    entry = data["FeedbacksClustering"]
    assert entry["instruction"].startswith("Here is a human feedback")
    for kind, word in (("correct", "Paraphrase"), ("implicit", "implicitly"), ("incorrect", "diverge")):
        assert entry[f"{kind}_instructions"] == [f"{word} instruction number {i}" for i in range(10)]
    assert len(fake_openai.calls(CHAT)) == 21


def test_robustness_duplicates_are_retried(fake_openai, raw_dir, tmp_path):
    fake_openai.chat_handler = lambda req: json.dumps({"instructions": ["Same one."] * 9 + ["same one"]})
    manifest = build(build_robustness_instructions, fake_openai, raw_dir, tmp_path / "out", tmp_path / "cache", size=1)
    assert len(manifest["failures"]) == 3 and "repeats an instruction" in manifest["failures"][0]["error"]


def test_dry_run_sends_nothing(fake_openai, raw_dir, tmp_path, capsys):
    manifest = build(
        build_intent_emotion, fake_openai, raw_dir, tmp_path / "out", tmp_path / "cache", size=None, dry_run=True
    )
    assert fake_openai.requests == [] and not (tmp_path / "out").exists()
    summary = manifest["summary"]
    assert summary["requests"] == 2 * 3080 and summary["prompt_tokens_estimate"] > 3080 * 40
    assert summary["cost_usd_estimate"] == 0.0  # a local endpoint with an unknown model
    assert "6160 requests" in capsys.readouterr().err.replace(",", "")


def test_dry_run_prices_a_listed_model(fake_openai, raw_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("INSTRUCT_BENCH_LLM_PRICE", "30,60")
    summary = build(
        build_instruct_stsb, fake_openai, raw_dir, tmp_path / "out", tmp_path / "cache", size=10, dry_run=True
    )["summary"]
    expected = (summary["prompt_tokens_estimate"] * 30 + summary["completion_tokens_estimate"] * 60) / 1e6
    assert summary["requests"] == 20 and summary["cost_usd_estimate"] == pytest.approx(expected, abs=1e-4)
    assert fake_openai.requests == []


def test_rebuild_from_cache_is_byte_identical_and_free(fake_openai, raw_dir, tmp_path):
    fake_openai.chat_handler = question_handler
    build(build_instruct_stsb, fake_openai, raw_dir, tmp_path / "a", tmp_path / "cache")
    sent = len(fake_openai.requests)
    again = build(build_instruct_stsb, fake_openai, raw_dir, tmp_path / "b", tmp_path / "cache")
    assert len(fake_openai.requests) == sent and again["summary"]["ledger"]["cache_hits"] == 10
    assert tree_bytes(tmp_path / "a" / "InstructSTSB") == tree_bytes(tmp_path / "b" / "InstructSTSB")


def test_resume_after_interrupt(fake_openai, raw_dir, tmp_path, monkeypatch):
    fake_openai.chat_handler = rewrite_handler
    reference = build(build_intent_emotion, fake_openai, raw_dir, tmp_path / "ref", tmp_path / "ref-cache", size=6)
    n_total = reference["summary"]["ledger"]["requests_sent"]
    original_send = LLMClient._send
    sent = []

    def interrupted(self, body):
        if len(sent) == 4:
            raise KeyboardInterrupt
        sent.append(body)
        return original_send(self, body)

    monkeypatch.setattr(LLMClient, "_send", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build(build_intent_emotion, fake_openai, raw_dir, tmp_path / "out", tmp_path / "cache", size=6, concurrency=1)
    assert not (tmp_path / "out" / "IntentEmotion").exists()  # nothing half-written
    monkeypatch.setattr(LLMClient, "_send", original_send)
    resumed = build(build_intent_emotion, fake_openai, raw_dir, tmp_path / "out", tmp_path / "cache", size=6)
    assert resumed["summary"]["ledger"]["cache_hits"] == 4
    assert resumed["summary"]["ledger"]["requests_sent"] == n_total - 4
    ref, out = tree_bytes(tmp_path / "ref" / "IntentEmotion"), tree_bytes(tmp_path / "out" / "IntentEmotion")
    assert ref["emotion.csv"] == out["emotion.csv"] and ref["intent.csv"] == out["intent.csv"]


def test_cli_dry_run(fake_openai, raw_dir, tmp_path, capsys):
    from bench.cli.main import main

    code = main(
        [
            "build-data",
            "instruct-stsb",
            "--source-dir",
            str(raw_dir),
            "--out",
            str(tmp_path / "o"),
            "--size",
            "3",
            "--llm-model",
            "fake",
            "--base-url",
            fake_openai.base_url,
            "--dry-run",
        ]
    )
    assert code == 0 and "\nrequests: 6\n" in capsys.readouterr().out  # readable lines, not raw JSON
    code = main(
        [
            "build-data",
            "instruct-stsb",
            "--source-dir",
            str(raw_dir),
            "--out",
            str(tmp_path / "o"),
            "--size",
            "3",
            "--llm-model",
            "fake",
            "--base-url",
            fake_openai.base_url,
            "--dry-run",
            "--json",
        ]
    )
    assert code == 0 and json.loads(capsys.readouterr().out)["requests"] == 6
    assert fake_openai.requests == []
