"""The OpenAI-compatible embedding family against a real local HTTP server (tests/fake_openai.py).

Retries, status codes and JSON parsing go through the `openai` client for real; the server records
every request, so "sends nothing" is checked by counting what arrived.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import numpy as np
import pytest

from bench.adapters.openai_api import (
    OpenAIEmbeddingEncoder,
    _message,
    budget_tokens,
    endpoint_query,
    plan_requests,
    public_url,
)
from bench.adapters.registry import load_model
from bench.cli.main import main
from bench.core.errors import ConfigError, EncodingError
from bench.run.dry_run import dry_run
from bench.run.runner import RunOptions, run
from fake_openai import FakeOpenAI, fake_vector

EMB = "/v1/embeddings"
SECRET = "sk-test-SECRET-0123456789abcdef"


@pytest.fixture
def api(fake_openai, monkeypatch):
    """The fake server, with a distinctive key in the environment (and only there)."""
    fake_openai.api_key = SECRET
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return fake_openai


def _encoder(server, tmp_path, **options) -> OpenAIEmbeddingEncoder:
    options.setdefault("cache_dir", tmp_path / "cache")
    return load_model("openai:fake", base_url=server.base_url, **options)


def _words(texts) -> int:  # the fake server's token count
    return sum(len(t.split()) for t in texts)


def test_vectors_requests_and_ledger(api, tmp_path):
    enc = _encoder(api, tmp_path, price=0.5)
    texts = ["hello world", "foo", "hello world", "a b c d"]
    vecs = enc.encode_inputs(texts)
    assert np.allclose(vecs, [fake_vector(t) for t in texts], atol=1e-6)
    [body] = api.calls(EMB)
    assert sorted(body["input"]) == ["a b c d", "foo", "hello world"] and body["model"] == "fake"
    assert "dimensions" not in body and body["encoding_format"] == "float"
    usage = enc.usage()
    assert usage["requests"] == 1 and usage["retries"] == 0 and usage["texts"] == 3
    assert usage["tokens"] == _words(["hello world", "foo", "a b c d"]) == 7
    assert usage["usd"] == pytest.approx(7 * 0.5 / 1e6) and usage["price_source"] == "--price"
    assert enc.usage(since=usage)["requests"] == 0


@pytest.mark.parametrize(("status", "times"), [(429, 1), (500, 2), (503, 1)])
def test_transient_errors_are_retried_and_counted(api, tmp_path, status, times):
    api.fail(EMB, status, times)
    enc = _encoder(api, tmp_path, max_retries=3)
    vecs = enc.encode_inputs(["one", "two"])
    assert np.allclose(vecs, [fake_vector("one"), fake_vector("two")], atol=1e-6)
    assert len(api.calls(EMB)) == times + 1
    assert enc.usage()["requests"] == 1 and enc.usage()["retries"] == times


def test_rate_limit_beyond_retries_is_one_clear_error(api, tmp_path):
    api.fail(EMB, 429, 2)
    enc = _encoder(api, tmp_path, max_retries=1)
    with pytest.raises(EncodingError, match=r"still rate-limited \(429\) after 1 retries.*--max-retries"):
        enc.encode_inputs(["x"])
    assert len(api.calls(EMB)) == 2


def test_bad_key_is_one_clear_line_without_the_key(api, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-777")
    with pytest.raises(ConfigError, match=r"rejected the API key \(401\)\. Set a valid key in OPENAI_API_KEY") as err:
        _encoder(api, tmp_path).encode_inputs(["x"])
    assert "sk-wrong-key-777" not in str(err.value)
    assert len(api.calls(EMB)) == 1  # 401 is not retried
    code = main(
        [
            "run",
            "--model",
            "openai:fake",
            "--base-url",
            api.base_url,
            "--tasks",
            "DemoInstructSTS",
            "--output-dir",
            str(tmp_path / "out"),
            "--cache-dir",
            str(tmp_path / "c2"),
        ]
    )
    err_lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and err_lines[-1].startswith("error: ") and "rejected the API key (401)" in err_lines[-1]
    assert not any("Traceback" in line or "sk-wrong-key-777" in line for line in err_lines)


def test_other_api_errors_are_clear(api, tmp_path):
    api.fail(EMB, 400, 1)
    with pytest.raises(EncodingError, match=r"answered HTTP 400: scripted failure 400"):
        _encoder(api, tmp_path).encode_inputs(["x"])
    closed = "http://127.0.0.1:9/v1"  # discard port: nothing listens
    with pytest.raises(EncodingError, match=r"Could not reach http://127.0.0.1:9/v1 .*Check --base-url"):
        load_model("openai:fake", base_url=closed, max_retries=0, use_cache=False).encode_inputs(["x"])


def test_error_messages_mask_the_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)

    class Err(Exception):
        body = {"message": f"Incorrect API key provided: {SECRET}."}

    assert SECRET not in _message(Err()) and "***" in _message(Err())
    assert public_url("https://user:pw@host:8443/v1?api-key=k") == "https://host:8443/v1"


def test_key_required_for_openai_but_not_for_a_local_server(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="Set OPENAI_API_KEY"):
        load_model("openai:text-embedding-3-small", use_cache=False).encode_inputs(["x"])
    server = FakeOpenAI(api_key=None).start()
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)  # the endpoint may come from the environment
        enc = load_model("openai:fake", use_cache=False)
        assert enc.encode_inputs(["x"]).shape == (1, 16) and len(server.calls(EMB)) == 1
    finally:
        server.close()


def test_requests_split_by_count_and_token_budget(api, tmp_path):
    texts = [f"text number {i:02d}" for i in range(7)]  # 14 bytes each
    enc = _encoder(api, tmp_path, batch_size=3, max_concurrency=1)  # one at a time: they arrive in plan order
    enc.encode_inputs(texts)
    assert [len(b["input"]) for b in api.calls(EMB)] == [3, 3, 1]
    assert enc.usage()["requests"] == 3

    enc = _encoder(api, tmp_path, max_tokens_per_request=30, cache_dir=tmp_path / "other", max_concurrency=1)
    before = len(api.calls(EMB))
    vecs = enc.encode_inputs(texts)
    sent = api.calls(EMB)[before:]
    assert [len(b["input"]) for b in sent] == [2, 2, 2, 1]
    assert all(sum(budget_tokens("fake", t) for t in b["input"]) <= 30 for b in sent)
    assert sorted(t for b in sent for t in b["input"]) == sorted(texts)
    assert np.allclose(vecs, [fake_vector(t) for t in texts], atol=1e-6)


def test_request_plan_caps_inputs_at_the_api_limit():
    enc = OpenAIEmbeddingEncoder("fake", batch_size=5000, use_cache=False)
    sizes = [len(b) for b in enc._requests(["ab"] * 5000, enc.batch_size)]
    assert sizes == [2048, 2048, 904]
    # one input over the whole budget goes alone rather than being dropped or merged
    assert [len(b) for b in plan_requests(["x" * 50, "y", "z"], max_inputs=10, max_tokens=10, count=len)] == [1, 2]


def test_budget_never_undercounts_tokens():
    # UTF-8 bytes bound any byte-level BPE's token count from above, also for non-Latin scripts
    for text in ["plain ascii", "日本語のテキスト", "emoji 🙂🙂", "ünïcödé"]:
        assert budget_tokens("fake", text) >= len(text)


def test_options_that_change_vectors_are_experiments(tmp_path):
    base = load_model("openai:fake", base_url="http://x/v1", price=1.0, max_retries=1, use_cache=False)
    # the harness's client and template, not MTEB's OpenAI implementation: never MTEB's key
    assert base.mteb_model_meta.experiment_kwargs == {"template": "prefix"}
    short = load_model("openai:fake", dimensions=8, template="none", use_cache=False)
    assert short.mteb_model_meta.experiment_kwargs == {"dimensions": 8, "template": "none"}
    assert short.fingerprint != base.fingerprint
    with pytest.raises(ConfigError, match="Template 'model'"):
        load_model("openai:fake", template="model")


def test_endpoint_query_drops_credentials_and_sorts():
    url = "https://gw.example/v1?deployment=a&api-key=K&api-version=2024-02&sig=S&x-access_token=T&Subscription-Key=Q"
    assert endpoint_query(url) == "api-version=2024-02&deployment=a"
    assert endpoint_query("https://gw.example/v1?sig=S&token=T") == endpoint_query("https://gw.example/v1") == ""


def test_the_query_string_is_part_of_the_endpoint_but_credentials_are_not(api, tmp_path, capsys):
    """`?deployment=a` and `?deployment=b` may be two models behind one URL: two cache files. A credential
    parameter only authorises: one cache file, and no credential value (nor the query in clear) is in any
    byte of the cache folder or in `bench list cache`."""
    key_a, key_b = "QuErY-KeY-1111", "QuErY-KeY-2222"

    def encoder(query: str) -> OpenAIEmbeddingEncoder:
        return load_model("openai:fake", base_url=api.base_url + query, cache_dir=tmp_path / "cache")

    a1, a2 = encoder(f"?deployment=a&api-key={key_a}"), encoder(f"?api-key={key_b}&deployment=a")
    b, plain = encoder(f"?deployment=b&api-key={key_a}"), encoder("")
    assert a1.fingerprint == a2.fingerprint and a1.cache.path == a2.cache.path
    assert b.fingerprint != a1.fingerprint and b.cache.path != a1.cache.path != plain.cache.path
    assert a1.fingerprint["endpoint"] == b.fingerprint["endpoint"] == plain.fingerprint["endpoint"] == api.base_url
    assert "endpoint_query_sha256" not in plain.fingerprint  # an endpoint without a query keeps its old cache
    texts = ["one", "two"]
    for enc in (a1, a2, b, plain):
        assert np.allclose(enc.encode_inputs(texts), [fake_vector(t) for t in texts], atol=1e-6)
    assert len(api.calls(EMB)) == 3  # a2 was served by a1's cache
    written = b"".join(p.read_bytes() for p in (tmp_path / "cache").rglob("*") if p.is_file())
    assert len(list((tmp_path / "cache").glob("*.sqlite"))) == 3 and b"endpoint_query_sha256" in written
    assert main(["list", "cache", "--cache-dir", str(tmp_path / "cache")]) == 0
    shown = capsys.readouterr().out
    for text in (key_a, key_b, "deployment"):
        assert text.encode() not in written and text not in shown


def test_a_reply_in_another_order_is_put_back_in_input_order(tmp_path, monkeypatch):
    """The `index` fields say where each vector goes; a server may list them in any order."""

    class Reversed(FakeOpenAI):
        def _reply(self, path, body):
            status, payload = super()._reply(path, body)
            if path == EMB:
                payload["data"].reverse()
            return status, payload

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = Reversed(api_key=None).start()
    try:
        texts = _texts(5)
        enc = _encoder(server, tmp_path, batch_size=2)
        assert np.allclose(enc.encode_inputs(texts), [fake_vector(t) for t in texts], atol=1e-6)
    finally:
        server.close()


@pytest.mark.parametrize(
    "items",
    [
        [{"index": 1, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": [0.0, 1.0]}],
        [{"index": 0, "embedding": [1.0, 0.0]}],
        [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": ["x", 1.0]}],
        [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": [1e400, 1.0]}],
        [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": [0.0, -0.0]}],
    ],
    ids=["repeated", "too-few", "not-numbers", "1e400", "zero"],
)
def test_a_bad_reply_is_neither_counted_nor_returned(api, tmp_path, items):
    from types import SimpleNamespace

    enc = _encoder(api, tmp_path)
    data = [SimpleNamespace(**item) for item in items]
    with pytest.raises(EncodingError, match=r"nothing of this reply was used"):
        enc._vectors(data, ["a", "b"])
    assert enc.usage()["requests"] == 0 and enc._reply_dim is None


def test_instruction_is_a_prefix(api, tmp_path):
    enc = _encoder(api, tmp_path)
    assert enc.render("text", "Find the topic.", None) == "Find the topic. text"
    assert enc.render("text", None, None) == "text"
    custom = _encoder(api, tmp_path, template="Instruct: {instruction}\nQuery: {text}")
    assert custom.render("t", "i", None) == "Instruct: i\nQuery: t"
    assert _encoder(api, tmp_path, template="none").render("t", "i", None) == "t"


def test_dimensions_are_sent(api, tmp_path):
    _encoder(api, tmp_path, dimensions=8).encode_inputs(["x"])
    assert api.calls(EMB)[-1]["dimensions"] == 8


# ------------------------------------------------------------------------------------ through the runner
def _options(server, tmp_path, **kw) -> RunOptions:
    base = dict(
        model="openai:text-embedding-3-small",
        model_options={"base_url": server.base_url},
        tasks=["DemoInstructSTS"],
        output_dir=str(tmp_path / "out"),
        cache_dir=str(tmp_path / "cache"),
        show_progress_bar=False,
    )
    return RunOptions(**{**base, **kw})


def test_dry_run_sends_nothing_and_predicts_the_real_run(api, tmp_path):
    estimates = dry_run(_options(api, tmp_path))
    assert api.requests == [] and not (tmp_path / "out").exists()
    [est] = estimates
    run(_options(api, tmp_path))
    sent = [t for b in api.calls(EMB) for t in b["input"]]
    assert est.texts == len(sent) == len(set(sent))
    assert est.estimate["tokens"] == sum(math.ceil(len(t) / 4) for t in sent)  # the documented heuristic
    assert est.estimate["requests"] == len(api.calls(EMB))
    assert est.estimate["usd"] == pytest.approx(est.estimate["tokens"] * 0.02 / 1e6)  # price table
    # after the run, everything is cached: a dry run expects nothing to send
    assert dry_run(_options(api, tmp_path))[0].texts == 0


def test_unknown_price_is_unknown_not_guessed(api, tmp_path, capsys):
    code = main(
        [
            "run",
            "--model",
            "openai:my-local-model",
            "--base-url",
            api.base_url,
            "--tasks",
            "DemoInstructSTS",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--output-dir",
            str(tmp_path / "out"),
            "--dry-run",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and api.requests == []
    assert "| unknown" in out and "Cost unknown" in out and "ceil(characters / 4)" in out
    assert not (tmp_path / "out").exists()


def test_run_records_ledger_and_rerun_from_cache_sends_nothing(api, tmp_path):
    api.fail(EMB, 429, 1)
    [outcome] = run(_options(api, tmp_path))
    usage = outcome.record["encode"]["usage"]
    sent = api.calls(EMB)[1:]  # the first call was the scripted 429
    assert usage["requests"] == len(sent) and usage["retries"] == 1
    assert usage["texts"] == outcome.record["encode"]["texts_encoded"] == sum(len(b["input"]) for b in sent)
    assert usage["tokens"] == _words(t for b in sent for t in b["input"])
    assert usage["usd"] == pytest.approx(usage["tokens"] * 0.02 / 1e6)
    n = len(api.requests)
    [again] = run(_options(api, tmp_path, overwrite=True))
    assert len(api.requests) == n, "a rerun must be served by the embedding cache"
    assert again.record["encode"]["usage"]["requests"] == 0 and again.record["encode"]["texts_encoded"] == 0
    assert again.main_score == outcome.main_score


def test_key_is_never_written_or_logged(api, tmp_path, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    for name in ("openai", "httpx", "httpx2", "httpcore", "bench"):
        logging.getLogger(name).setLevel(logging.DEBUG)
    code = main(
        [
            "-v",
            "run",
            "--model",
            "openai:text-embedding-3-small",
            "--base-url",
            api.base_url,
            "--tasks",
            "DemoInstructSTS",
            "--output-dir",
            str(tmp_path / "out"),
            "--cache-dir",
            str(tmp_path / "cache"),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0 and "API usage: 1 requests, 0 retries" in out
    headers = {k.lower(): v for k, v in api.requests[0]["headers"].items()}
    assert headers["authorization"] == f"Bearer {SECRET}"  # the key did travel, so its absence below means something
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "DemoInstructSTS.json" for p in written)
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in out + err + caplog.text
    record = json.loads(next(Path(tmp_path / "out").rglob("run_records/DemoInstructSTS.json")).read_text())
    assert record["model"]["family"] == "openai" and record["model"]["settings"]["endpoint"] == api.base_url


# ------------------------------------------------------------------------------------ concurrent requests
def _texts(n: int) -> list[str]:
    return [f"text number {i:02d}" for i in range(n)]  # one length: the harness keeps their order


def _sent(server) -> list[list[str]]:
    return sorted(b["input"] for b in server.calls(EMB))


LEDGER = ("requests", "retries", "texts", "tokens", "tokens_estimated")


def test_concurrent_requests_are_bounded_and_give_the_sequential_result(api, tmp_path):
    """Groups of batch_size x 8 inputs, so 8 requests per group: 40 texts in 2 per request are 20 requests."""
    api.latency = 0.05  # every request is still in flight when the next ones start
    texts = _texts(40)
    sequential = _encoder(api, tmp_path, batch_size=2, max_concurrency=1, cache_dir=tmp_path / "c1")
    expected = sequential.encode_inputs(texts)
    assert api.max_in_flight == 1 and len(api.calls(EMB)) == 20
    sent_sequentially = _sent(api)

    for limit in (3, 8):
        api.requests.clear()
        api.max_in_flight = 0
        enc = _encoder(api, tmp_path, batch_size=2, max_concurrency=limit, cache_dir=tmp_path / f"c{limit}")
        vecs = enc.encode_inputs(texts)
        assert 1 < api.max_in_flight <= limit
        assert np.array_equal(vecs, expected)  # in input order, bit for bit
        assert np.allclose(vecs, [fake_vector(t) for t in texts], atol=1e-6)
        assert _sent(api) == sent_sequentially  # the same requests, in whatever order they went out
        assert {k: enc.usage()[k] for k in LEDGER} == {k: sequential.usage()[k] for k in LEDGER}
    assert enc.mteb_model_meta.embed_dim == 16


def test_a_group_widens_to_hold_every_request_in_flight(api, tmp_path):
    """More than 8 requests in flight need groups of more than 8 batches (one group is one cache commit)."""
    api.latency = 0.05
    enc = _encoder(api, tmp_path, batch_size=1, max_concurrency=12)
    assert enc.group_batches() == 12
    enc.encode_inputs(_texts(24))
    assert 8 < api.max_in_flight <= 12


def test_ledger_is_exact_under_many_threads(api, tmp_path):
    texts = _texts(96)
    enc = _encoder(api, tmp_path, batch_size=1, max_concurrency=8)
    for _ in range(2):  # a second encoder call on a fresh cache sends everything again
        enc._cache, enc._cache_root = None, enc._cache_root / "again"
        enc._memo = None  # and no in-memory memo of the first call (BaseEncoder._Memo)
        enc.encode_inputs(texts)
    usage = enc.usage()
    assert usage["requests"] == len(api.calls(EMB)) == 2 * 96 and usage["texts"] == 2 * 96
    assert usage["tokens"] == 2 * _words(texts) and usage["retries"] == 0


def test_rate_limits_are_retried_per_request_under_concurrency(api, tmp_path):
    api.latency = 0.02
    api.retry_after_ms = "20"  # Retry-After-Ms, which the client prefers to its own backoff
    api.fail(EMB, 429, 5)  # whichever requests arrive first
    texts = _texts(16)
    enc = _encoder(api, tmp_path, batch_size=2, max_concurrency=4, max_retries=5)
    vecs = enc.encode_inputs(texts)
    assert np.allclose(vecs, [fake_vector(t) for t in texts], atol=1e-6)
    assert len(api.calls(EMB)) == 8 + 5
    usage = enc.usage()
    assert usage["requests"] == 8 and usage["retries"] == 5 and usage["texts"] == 16
    assert usage["tokens"] == _words(texts)  # a rejected attempt costs nothing


def test_rate_limit_beyond_retries_under_concurrency_is_one_error(api, tmp_path, capfd):
    api.retry_after_ms = "10"
    api.fail(EMB, 429, 1000)
    enc = _encoder(api, tmp_path, batch_size=1, max_concurrency=4, max_retries=1)
    with pytest.raises(EncodingError, match=r"still rate-limited \(429\) after 1 retries"):
        enc.encode_inputs(_texts(16))
    # the first request to give up stops the rest: at most the 4 in flight plus 1 per other worker in the race
    assert len(api.calls(EMB)) <= 2 * (4 + 3)
    assert enc.usage()["requests"] == 0
    assert "Traceback" not in "".join(capfd.readouterr())


def test_one_failed_request_is_the_usual_single_error(api, tmp_path, capfd):
    api.latency = 0.05
    texts = _texts(16)  # batch_size 1: 8 requests per group, 2 groups
    api.fail_input(texts[0], 400)
    enc = _encoder(api, tmp_path, batch_size=1, max_concurrency=2)
    with pytest.raises(EncodingError, match=r"answered HTTP 400: scripted failure 400") as err:
        enc.encode_inputs(texts)
    assert isinstance(err.value, EncodingError) and not isinstance(err.value, ExceptionGroup)
    # requests not yet started are dropped: 2 in flight, at most 1 more started by the other worker
    assert 1 <= len(api.calls(EMB)) <= 3
    assert "Traceback" not in "".join(capfd.readouterr())
    # nothing from the failed group was cached; a retry after the fault sends the whole group again
    api.fail_input(texts[0], None)
    before = len(api.calls(EMB))
    assert np.allclose(enc.encode_inputs(texts), [fake_vector(t) for t in texts], atol=1e-6)
    assert len(api.calls(EMB)) - before == 16


def test_the_earliest_failed_request_gives_the_error(api, tmp_path):
    api.latency = 0.05
    texts = _texts(8)
    api.fail_input(texts[1], 400)  # both requests are in flight together; the earlier one's error wins
    api.fail_input(texts[0], 404)
    enc = _encoder(api, tmp_path, batch_size=1, max_concurrency=8)
    with pytest.raises(Exception, match=r"not found \(404\)"):
        enc.encode_inputs(texts)


def test_max_concurrency_is_a_runtime_option_and_validated(api, tmp_path, capsys):
    default = load_model("openai:fake", use_cache=False)
    assert default.max_concurrency == 4
    for limit in (1, 16, "8"):
        enc = load_model("openai:fake", max_concurrency=limit, use_cache=False)
        assert enc.fingerprint == default.fingerprint
        assert enc.experiment() == default.experiment() == {"template": "prefix"}
    for bad in (0, -2, 1.5, True, "many"):
        with pytest.raises(ConfigError, match=r"max.concurrency"):
            load_model("openai:fake", max_concurrency=bad, use_cache=False)
    # vectors cached by a sequential run serve a concurrent one: nothing is sent again
    texts = _texts(10)
    _encoder(api, tmp_path, max_concurrency=1, batch_size=2).encode_inputs(texts)
    n = len(api.requests)
    _encoder(api, tmp_path, max_concurrency=6, batch_size=2).encode_inputs(texts)
    assert len(api.requests) == n
    # the flag, and its one-line error
    code = main(
        [
            "run",
            "--model",
            "openai:fake",
            "--base-url",
            api.base_url,
            "--tasks",
            "DemoInstructSTS",
            "--max-concurrency",
            "0",
            "--output-dir",
            str(tmp_path / "out"),
            "--cache-dir",
            str(tmp_path / "c"),
        ]
    )
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and err[-1].startswith("error: ") and "--max-concurrency" in err[-1] and api.requests[n:] == []


def test_cli_run_with_concurrent_requests(api, tmp_path, capsys):
    args = [
        "run",
        "--model",
        "openai:text-embedding-3-small",
        "--base-url",
        api.base_url,
        "--tasks",
        "DemoInstructSTS",
        "--batch-size",
        "4",
        "--output-dir",
        str(tmp_path / "out"),
        "-q",
    ]
    assert main([*args, "--max-concurrency", "1", "--cache-dir", str(tmp_path / "c1")]) == 0
    sequential = capsys.readouterr().out
    sent, scores = _sent(api), _main_scores(tmp_path / "out")
    api.requests.clear()
    assert main([*args, "--max-concurrency", "4", "--cache-dir", str(tmp_path / "c4"), "--overwrite"]) == 0
    concurrent = capsys.readouterr().out
    assert _sent(api) == sent and len(sent) > 4 and _main_scores(tmp_path / "out") == scores
    usage = [line for line in concurrent.splitlines() if line.startswith("API usage:")]
    assert usage and usage == [line for line in sequential.splitlines() if line.startswith("API usage:")]
    record = json.loads(next((tmp_path / "out").rglob("run_records/DemoInstructSTS.json")).read_text())
    assert record["model"]["settings"]["max_concurrency"] == 4

    api.fail(EMB, 400, 1)  # one request of many fails: one error line, no traceback
    code = main([*args, "--max-concurrency", "4", "--cache-dir", str(tmp_path / "c5"), "--overwrite"])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and err[-1].startswith("error: ") and "answered HTTP 400" in err[-1]
    assert not any("Traceback" in line for line in err)


def _main_scores(out: Path) -> dict[str, float]:
    return {
        p.stem: json.loads(p.read_text())["scores"]["test"][0]["main_score"]
        for p in out.rglob("*.json")
        if p.parent.name != "run_records" and p.name != "model_meta.json"
    }
