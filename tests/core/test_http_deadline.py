"""Bounds on what an OpenAI-compatible endpoint can do to a run (issue 30, "Trust, round three").

* API vectors must be JSON numbers: strings and booleans, which numpy would silently turn into floats,
  are refused whole, before anything of the reply is counted or cached.
* A request, all its attempts and waits together, ends within its stated limit (`failure_bound_s`):
  a Retry-After is honoured only within it, and a host name that never resolves times out like a server
  that never answers.
* An error says how many attempts were really made.
* Ctrl-C in `bench build-data` with LLM requests in flight on a hung endpoint exits 130 within 5 s.

Each request that could hang on landed code runs on a daemon thread waited for a little longer than its
limit, so a regression fails the test instead of holding the suite.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.adapters.openai_api import OpenAIEmbeddingEncoder
from bench.cli.main import main
from bench.core.errors import EncodingError
from bench.core.llm_client import ChatRequest, LLMClient, LLMConfig
from cache_entries import entries
from fake_openai import FakeOpenAI
from test_faults import StallServer, interrupt_in_flight

ROOT = Path(__file__).resolve().parents[2]
EMB = "/v1/embeddings"
CHAT = "/v1/chat/completions"
MARGIN_S = 5.0  # beyond a request's limit, for a loaded machine: the limits below are seconds, not minutes
HANGING_HOST = "dns-never-answers.invalid"


@pytest.fixture
def api(monkeypatch) -> Iterator[FakeOpenAI]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = FakeOpenAI(api_key=None).start()
    yield server
    server.close()


def _within(seconds: float, call: Callable[[], Any]) -> tuple[Any, float]:
    """(what `call()` returned or raised, seconds it took), run on a daemon thread waited for `seconds`:
    a call still running then fails the test (and is left to end with the process)."""
    outcome: list[Any] = []

    def target() -> None:
        try:
            outcome.append(call())
        except Exception as e:  # noqa: BLE001 - handed to the test
            outcome.append(e)

    tick = time.monotonic()
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"still running after {seconds:g} s"
    return outcome[0], time.monotonic() - tick


def _encoder(server: FakeOpenAI, **kw: Any) -> OpenAIEmbeddingEncoder:
    encoder = OpenAIEmbeddingEncoder("fake", base_url=server.base_url, use_cache=False, **kw)
    encoder.ensure_loaded()  # the `openai` import is not part of any bound
    return encoder


def _llm(base_url: str, tmp_path: Path, max_retries: int) -> LLMClient:
    client = LLMClient(
        LLMConfig.from_options(llm_model="fake", base_url=base_url, max_retries=max_retries, llm_cache_dir=tmp_path)
    )
    client._client()  # the `openai` import is not part of any bound
    return client


# ---------------------------------------------------------------------------------------------- 9: vectors
def _as_strings(body: dict[str, Any], items: list[dict[str, Any]]) -> None:
    """Every vector the same, its values sent as strings: numpy reads them as numbers."""
    for item in items:
        item["embedding"] = ["0.1"] * len(item["embedding"])


def _as_booleans(body: dict[str, Any], items: list[dict[str, Any]]) -> None:
    """The vectors' signs sent as true/false (never all false, so not refused as all-zero)."""
    for item in items:
        item["embedding"] = [x > 0 for x in item["embedding"]]


def _one_value_as_string(body: dict[str, Any], items: list[dict[str, Any]]) -> None:
    """The last value of the last vector only, as a string: the rest of the reply is right."""
    items[-1]["embedding"][-1] = str(items[-1]["embedding"][-1])


NOT_NUMBERS = {"strings": _as_strings, "booleans": _as_booleans, "one-string": _one_value_as_string}


@pytest.mark.parametrize("spoil", NOT_NUMBERS.values(), ids=NOT_NUMBERS.keys())
def test_vectors_must_be_json_numbers(api, spoil):
    api.spoil = spoil
    encoder = _encoder(api)
    with pytest.raises(EncodingError, match=r"not a list of JSON numbers \(input \d+: .*strings or booleans"):
        encoder.encode_inputs(["one", "two", "three"])
    assert encoder.usage()["requests"] == 0 and encoder.usage()["texts"] == 0  # nothing of it was counted


def _second_request_only(spoil: Callable[..., None]) -> Callable[..., None]:
    """`spoil` for the second embeddings request only: the first and the others are right."""
    seen: list[int] = []
    lock = threading.Lock()

    def second_only(body: dict[str, Any], items: list[dict[str, Any]]) -> None:
        with lock:
            seen.append(1)
            mine = len(seen) == 2
        if mine:
            spoil(body, items)

    return second_only


def _cached_vectors(cache: Path) -> int:
    return sum(len(entries(db)) for db in cache.rglob("*.sqlite"))


@pytest.mark.parametrize(
    "spoil", [_as_strings, _as_booleans, _second_request_only(_as_strings)], ids=["strings", "booleans", "one-request"]
)
def test_a_run_on_vectors_that_are_not_numbers_is_one_error_and_caches_nothing(api, spoil, tmp_path, capsys):
    """Landed code took `["0.1", ...]` (all equal) as vectors: exit 0, cosine_spearman NaN, 120 vectors
    cached. Now: one `error:` line, exit 2, no result, no vector cached, even from the good requests of
    the group whose other request was refused."""
    api.spoil = spoil
    out, cache = tmp_path / "out", tmp_path / "cache"
    argv = ["run", "--model", "openai:fake", "--base-url", api.base_url, "--tasks", "DemoInstructSTS"]
    code = main([*argv, "--batch-size", "8", "--output-dir", str(out), "--cache-dir", str(cache), "-q"])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and "Traceback" not in err, err
    assert "not a list of JSON numbers" in errors[0] and "nothing of this reply was used" in errors[0]
    assert api.calls(EMB)  # requests were sent (how many before the first refusal ends the run depends on timing)
    assert _cached_vectors(cache) == 0
    assert not [p for p in out.rglob("*.json") if p.parent.name != "run_records" and p.name != "model_meta.json"]


# ---------------------------------------------------------------------------------------------- 10a: Retry-After
@pytest.mark.parametrize(
    ("retry_after", "options", "attempts"),
    [("119", {}, 1), ("5", {"timeout": 1.0, "max_retries": 3}, 2)],
    ids=["119s-defaults", "5s-in-a-7.5s-limit"],
)
def test_retry_after_is_honoured_within_the_request_limit(api, retry_after, options, attempts):
    """Landed code slept every Retry-After up to 2 minutes: `Retry-After: 119` held one request 676 s
    over 6 attempts. Now a wait is honoured only when it and one more attempt fit in what is left of
    the request's limit (87.5 s by default); otherwise the request ends at once, saying why."""
    api.retry_after = retry_after
    api.fail(EMB, 429, times=1000)
    encoder = _encoder(api, **options)
    bound = encoder.failure_bound_s()
    error, elapsed = _within(bound + MARGIN_S, lambda: encoder.encode_inputs(["hello"]))
    assert isinstance(error, EncodingError), error
    assert elapsed <= bound, elapsed
    expected = (
        f"still rate-limited (429) after {attempts - 1} retries ({attempts} attempt(s)); it asked to wait "
        f"{retry_after} s more, past this request's limit of {bound:g} s"
    )
    assert expected in str(error)
    assert len(api.calls(EMB)) == attempts


def test_llm_client_honours_retry_after_within_the_request_limit(api, tmp_path):
    """The LLM builders' client, same bound: 4 attempts x 25 s + 3.5 s = 103.5 s by default."""
    api.retry_after = "119"
    api.fail(CHAT, 429, times=1000)
    client = _llm(api.base_url, tmp_path, max_retries=3)
    result, elapsed = _within(103.5 + MARGIN_S, lambda: client.complete(ChatRequest.user("hi", {"type": "object"})))
    assert not result.ok and elapsed <= 103.5
    assert "RateLimitError after 0 retries (1 attempt(s)); it asked to wait 119 s more" in result.error
    assert "limit of 103.5 s" in result.error and len(api.calls(CHAT)) == 1


# ---------------------------------------------------------------------------------------------- 10a: DNS
@pytest.fixture
def hanging_resolver(monkeypatch) -> Iterator[None]:
    """`socket.getaddrinfo` never answers for HANGING_HOST (until the test ends), as a dead resolver."""
    real = socket.getaddrinfo
    release = threading.Event()

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == HANGING_HOST:
            release.wait(300)
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield
    release.set()


def test_a_host_name_that_never_resolves_times_out_within_the_limit(hanging_resolver, monkeypatch):
    """The look-up of the host was outside every deadline (`getaddrinfo` has no timeout): a dead resolver
    held each attempt for ever. Now it counts in the attempt's `timeout`: 2 attempts of 1 s + 0.5 s."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    encoder = OpenAIEmbeddingEncoder(
        "fake", base_url=f"http://{HANGING_HOST}:8080/v1", use_cache=False, timeout=1.0, max_retries=1
    )
    encoder.ensure_loaded()
    bound = encoder.failure_bound_s()
    error, elapsed = _within(bound + MARGIN_S, lambda: encoder.encode_inputs(["hello"]))
    assert isinstance(error, EncodingError), error
    assert "timed out: no answer within 1 s per attempt, 2 attempt(s)" in str(error)
    assert 2 * 1.0 <= elapsed <= bound + 2.0, elapsed


def test_llm_client_host_look_up_is_inside_the_deadline(hanging_resolver, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("INSTRUCT_BENCH_LLM_TIMEOUT", "1")
    client = _llm(f"http://{HANGING_HOST}:8080/v1", tmp_path, max_retries=1)
    result, elapsed = _within(2.5 + MARGIN_S, lambda: client.complete(ChatRequest.user("hi", {"type": "object"})))
    assert not result.ok and "timed out: no answer within 1 s per attempt, 2 attempt(s)" in result.error
    assert elapsed <= 2.5 + 2.0, elapsed


# ---------------------------------------------------------------------------------------------- 10b: attempts
@pytest.mark.parametrize(
    ("retry_after", "max_retries", "why"),
    [("0", 0, ""), ("121", 5, "; it asked to wait 121 s more")],
    ids=["max-retries-0", "retry-after-past-the-clients-limit"],
)
def test_a_429_error_says_how_many_attempts_were_made(api, retry_after, max_retries, why):
    """Landed code said "after 5 retries" for a 429 the client never retried (a Retry-After past its
    2 minutes): the number was the setting, not what happened."""
    api.retry_after = retry_after
    api.fail(EMB, 429, times=1000)
    encoder = _encoder(api, max_retries=max_retries)
    with pytest.raises(EncodingError) as error:
        encoder.encode_inputs(["hello"])
    assert f"still rate-limited (429) after 0 retries (1 attempt(s)){why}" in str(error.value)
    assert len(api.calls(EMB)) == 1


def test_an_error_after_retries_counts_them(api):
    """Retried 503s: the attempts made, 1 + max_retries here, are the ones the line states."""
    api.fail(EMB, 503, times=1000)
    encoder = _encoder(api, max_retries=2)
    with pytest.raises(EncodingError, match=r"answered HTTP 503 after 2 retries \(3 attempt\(s\)\): scripted"):
        encoder.encode_inputs(["hello"])
    assert len(api.calls(EMB)) == 3


def test_llm_error_says_how_many_attempts_were_made(api, tmp_path):
    api.fail(CHAT, 429, times=1000)
    result = _llm(api.base_url, tmp_path, max_retries=0).complete(ChatRequest.user("hi", {"type": "object"}))
    assert not result.ok and "RateLimitError after 0 retries (1 attempt(s))" in result.error


# ---------------------------------------------------------------------------------------------- 10c: Ctrl-C
@pytest.mark.slow
def test_ctrl_c_in_build_data_with_requests_in_flight_exits_130_within_5_s(tmp_path):
    """SIGINT to `python -m bench build-data` (an LLM builder) while 4 requests are held by an endpoint
    that never answers: exit 130 within 5 s. (The LLM client's thread pool waited for its requests in
    flight; it now runs them as `bench run` does, on daemon threads the main thread waits for in steps.)"""
    server = StallServer()
    # Attempts of 5 s, not 25: the builder's first requests wait out one attempt before the 4th is sent
    # (4 in flight after ~10 s, not ~29 s), and a client that waited for them would still take 20 s or more.
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "INSTRUCT_BENCH_LLM_TIMEOUT": "5"}
    env.pop("OPENAI_API_KEY", None)
    argv = [
        *(sys.executable, "-m", "bench", "build-data", "instruction-variants", "--suite", "generic-sts"),
        *("--size", "5", "--llm-model", "fake", "--base-url", server.base_url, "--concurrency", "4"),
        *("--out", str(tmp_path / "variants.yaml"), "--llm-cache-dir", str(tmp_path / "llm"), "-q"),
    ]
    code, err, elapsed = interrupt_in_flight(argv, env, server, 4)
    assert code == 130, err
    assert "interrupted:" in err and "Traceback" not in err
    assert elapsed < 5.0, f"exited {elapsed:.1f} s after Ctrl-C"
    print(f"build-data exited {elapsed:.2f} s after Ctrl-C")
