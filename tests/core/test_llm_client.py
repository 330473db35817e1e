"""bench.core.llm_client against the local OpenAI-compatible server (tests/fake_openai.py): real HTTP."""

from __future__ import annotations

import json

import pytest

from bench.core.errors import ConfigError
from bench.core.llm_client import STRING, ChatRequest, LLMClient, LLMConfig, object_schema, parse_json_reply

CHAT = "/v1/chat/completions"
SCHEMA = object_schema(answer=STRING)


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


def make_client(server, tmp_path, **kw) -> LLMClient:
    kw.setdefault("max_retries", 2)
    return LLMClient(
        LLMConfig.from_options(llm_model="fake", base_url=server.base_url, llm_cache_dir=tmp_path / "llm", **kw)
    )


def answer_handler(req):
    return json.dumps({"answer": req["messages"][-1]["content"].upper()})


def requests(n):
    return [ChatRequest.user(f"question {i}", SCHEMA) for i in range(n)]


def test_replies_parsed_in_order_and_ledger_counts(fake_openai, tmp_path, key):
    fake_openai.chat_handler = answer_handler
    client = make_client(fake_openai, tmp_path, concurrency=3)
    results = client.run(requests(7))
    assert [r.value["answer"] for r in results] == [f"QUESTION {i}" for i in range(7)]
    ledger = client.ledger.as_dict()
    assert ledger["requests_sent"] == 7 and ledger["cache_hits"] == 0 and ledger["failures"] == 0
    # The fake counts words: 2 per prompt, 3 per reply ('{"answer":', '"QUESTION', 'i"}').
    assert ledger["prompt_tokens"] == 14 and ledger["completion_tokens"] == 21
    body = fake_openai.calls(CHAT)[0]
    assert body["model"] == "fake" and body["temperature"] == 0 and body["seed"] == 42
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == SCHEMA


def test_cache_hits_send_nothing_and_key_is_never_stored(fake_openai, tmp_path, key):
    fake_openai.chat_handler = answer_handler
    first = make_client(fake_openai, tmp_path).run(requests(4))
    again = make_client(fake_openai, tmp_path)
    second = again.run(requests(4))
    assert len(fake_openai.calls(CHAT)) == 4
    assert again.ledger.cache_hits == 4 and again.ledger.requests_sent == 0
    assert [r.value for r in first] == [r.value for r in second]
    assert again.ledger.prompt_tokens == 8  # tokens of cached replies still count as used
    for path in (tmp_path / "llm").iterdir():
        assert b"test-key" not in path.read_bytes()
    assert fake_openai.requests[0]["headers"]["authorization"] == "Bearer test-key"


def test_a_changed_request_is_a_cache_miss(fake_openai, tmp_path, key):
    fake_openai.chat_handler = answer_handler
    make_client(fake_openai, tmp_path).run(requests(2))
    make_client(fake_openai, tmp_path, temperature=0.5).run(requests(2))
    LLMClient(
        LLMConfig.from_options(llm_model="other", base_url=fake_openai.base_url, llm_cache_dir=tmp_path / "llm")
    ).run(requests(2))
    assert len(fake_openai.calls(CHAT)) == 6


@pytest.mark.parametrize("status", [429, 500])
def test_rate_limits_and_server_errors_are_retried(fake_openai, tmp_path, key, status):
    fake_openai.chat_handler = answer_handler
    fake_openai.fail(CHAT, status, times=2)
    client = make_client(fake_openai, tmp_path, concurrency=1)
    results = client.run(requests(3))
    assert all(r.ok for r in results)
    assert len(fake_openai.calls(CHAT)) == 5
    assert client.ledger.requests_sent == 3


def test_persistent_server_error_is_a_failure_and_not_cached(fake_openai, tmp_path, key):
    fake_openai.chat_handler = answer_handler
    fake_openai.fail(CHAT, 503, times=2)  # max_retries=1: two HTTP attempts, both fail
    result = make_client(fake_openai, tmp_path, max_retries=1).complete(requests(1)[0])
    assert not result.ok and "503" in result.error
    retry = make_client(fake_openai, tmp_path, max_retries=1).complete(requests(1)[0])
    assert retry.ok  # the failure was not cached, so a rerun asks again


def test_malformed_json_is_retried_then_recorded_as_failure(fake_openai, tmp_path, key):
    fake_openai.chat_handler = lambda req: "Sure! The answer is 42."
    client = make_client(fake_openai, tmp_path, max_retries=2)
    result = client.complete(requests(1)[0])
    assert not result.ok and result.value is None
    assert result.attempts == 3 and "not JSON" in result.error
    assert result.reply == "Sure! The answer is 42."
    bodies = fake_openai.calls(CHAT)
    assert [(b["seed"], b["temperature"]) for b in bodies] == [(42, 0), (43, 0.7), (44, 0.7)]
    assert client.ledger.failures == 1 and client.ledger.invalid_replies == 3
    # A rebuild from the cache reaches the same failure without sending anything.
    again = make_client(fake_openai, tmp_path, max_retries=2)
    assert again.complete(requests(1)[0]).error == result.error
    assert again.ledger.requests_sent == 0


def test_invalid_then_valid_reply(fake_openai, tmp_path, key):
    fake_openai.chat_handler = lambda req: '{"answer": ""}' if req["seed"] == 42 else '```json\n{"answer": "ok"}\n```'
    result = make_client(fake_openai, tmp_path).complete(requests(1)[0])
    assert result.ok and result.value == {"answer": "ok"} and result.attempts == 2


def test_schema_violations_and_checks_are_invalid(fake_openai, tmp_path, key):
    fake_openai.chat_handler = lambda req: '{"answer": 3}'
    assert "schema" in make_client(fake_openai, tmp_path, max_retries=0).complete(requests(1)[0]).error

    def no_yes(value):
        if value["answer"] == "yes":
            raise ValueError("said yes")

    fake_openai.chat_handler = lambda req: '{"answer": "yes"}'
    req = ChatRequest.user("q", SCHEMA, check=no_yes)
    assert "said yes" in make_client(fake_openai, tmp_path, max_retries=0).complete(req).error


@pytest.mark.parametrize("status", [422, 500])  # FastAPI's validation error; llama-cpp-python 0.3.36 answers 500
def test_unsupported_response_format_falls_back_and_is_remembered(tmp_path, key, status):
    from fake_openai import FakeOpenAI

    class JsonObjectOnly(FakeOpenAI):  # like llama-cpp-python: only "text" and "json_object" (+ schema)
        def _reply(self, path, body):
            if body.get("response_format", {}).get("type") == "json_schema":
                return status, {
                    "error": {
                        "message": "1 validation error: {'loc': ('body', 'response_format', "
                        "'type'), 'msg': \"Input should be 'text' or 'json_object'\"}"
                    }
                }
            return super()._reply(path, body)

    server = JsonObjectOnly().start()
    try:
        server.chat_handler = answer_handler
        client = make_client(server, tmp_path)
        assert client.complete(requests(1)[0]).ok
        assert client.json_mode == "json_object" and client.ledger.json_mode_fallbacks
        assert server.calls(CHAT)[-1]["response_format"] == {"type": "json_object", "schema": SCHEMA}
        again = make_client(server, tmp_path)
        assert again.json_mode == "json_object"
        assert again.complete(requests(1)[0]).ok and again.ledger.requests_sent == 0
    finally:
        server.close()


def test_follow_up_carries_the_conversation(fake_openai, tmp_path, key):
    fake_openai.chat_handler = answer_handler
    first = ChatRequest.user("one", SCHEMA)
    client = make_client(fake_openai, tmp_path)
    r1 = client.complete(first)
    client.complete(first.follow_up(r1.reply, "two", SCHEMA))
    assert [m["role"] for m in fake_openai.calls(CHAT)[-1]["messages"]] == ["user", "assistant", "user"]
    assert fake_openai.calls(CHAT)[-1]["messages"][1]["content"] == r1.reply


def test_configuration_errors(monkeypatch, tmp_path):
    monkeypatch.delenv("INSTRUCT_BENCH_LLM_MODEL", raising=False)
    with pytest.raises(ConfigError, match="--llm-model"):
        LLMConfig.from_options()
    monkeypatch.setenv("INSTRUCT_BENCH_LLM_MODEL", "env-model")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/")
    monkeypatch.setenv("INSTRUCT_BENCH_LLM_TEMPERATURE", "0.3")
    cfg = LLMConfig.from_options(concurrency=2)
    assert (cfg.model, cfg.base_url, cfg.temperature, cfg.concurrency) == ("env-model", "http://127.0.0.1:9/v1", 0.3, 2)
    with pytest.raises(ConfigError, match="concurrency"):
        LLMConfig.from_options(concurrency=0)
    monkeypatch.setenv("INSTRUCT_BENCH_LLM_TEMPERATURE", "hot")
    with pytest.raises(ConfigError, match="TEMPERATURE"):
        LLMConfig.from_options()
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("INSTRUCT_BENCH_LLM_TEMPERATURE")
    client = LLMClient(LLMConfig.from_options(llm_cache_dir=tmp_path))
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        client.complete(requests(1)[0])


def test_wrong_key_is_a_config_error(fake_openai, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "wrong")
    with pytest.raises(ConfigError, match="refused the API key"):
        make_client(fake_openai, tmp_path).complete(requests(1)[0])


def test_parse_json_reply():
    assert parse_json_reply(' {"a": 1} ') == {"a": 1}
    assert parse_json_reply('Here:\n```json\n{"a": [1]}\n```') == {"a": [1]}
    with pytest.raises(ValueError, match="reply is not JSON"):
        parse_json_reply("{'a': 1}")
