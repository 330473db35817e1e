"""The project's one client for chat LLMs behind an OpenAI-compatible endpoint (OpenAI, llama.cpp, vLLM).

What it adds to the `openai` package (which already retries 429/5xx and connection errors with
exponential backoff, honouring Retry-After):

* Settings from options or the environment (`LLMConfig.from_options`); the API key is read from
  $OPENAI_API_KEY by the `openai` package and is never stored, logged or part of a cache key.
* Structured replies: each `ChatRequest` carries a JSON schema. `json_mode="auto"` asks for
  `response_format={"type": "json_schema", ...}` (OpenAI, vLLM, llama.cpp's C++ server) and, when the
  server rejects that with HTTP 400, falls back to `{"type": "json_object", "schema": ...}`
  (llama-cpp-python's grammar-constrained mode), then to plain text. Every reply is parsed and checked
  against the schema (and an optional extra `check`) whatever the mode.
* A reply that fails validation is asked again, at most `max_retries` times. Retry k sends seed + k
  and, when the configured temperature is 0 (greedy decoding would repeat the same reply), temperature
  `retry_temperature` (0.7); each retry is thus its own request with its own cache entry. After the last
  retry the item is a recorded `failure`, never a guess.
* A response cache on disk (SQLite, one row per request) keyed by (endpoint, model, full request body):
  an interrupted build resumes without paying twice, and a rebuild from the same cache sends nothing and
  produces the same bytes. Transport failures are not cached, so a resume retries them.
* Bounded concurrency on daemon threads (`bench.core.http_deadline.run_in_order`, as `openai:` models
  use), so Ctrl-C stops a build at once even with requests in flight on a hung endpoint; a tqdm bar with
  rate and ETA, and a `TokenLedger`.
* Bounded time: each attempt (host look-up, connect, send and every read together,
  `bench.core.http_deadline`) lasts at most `timeout_s` (25 s, `$INSTRUCT_BENCH_LLM_TIMEOUT`), and each
  request, attempts and waits (a Retry-After included) together, at most 4 x 25 s + 3.5 s of backoff, so
  an endpoint that never answers, answers a byte at a time or asks to wait for minutes is a recorded
  failure that says so and how many attempts were made.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, Unpack

from bench.core.errors import ConfigError
from bench.core.fileio import sha256_json
from bench.core.http_deadline import RequestBudget, deadline_client, request_budget, run_in_order
from bench.core.json_types import JSON, JSONObject
from bench.core.paths import cache_root
from bench.core.redact import redact_url, refuse_url_credentials

if TYPE_CHECKING:
    from openai import OpenAI

logger = logging.getLogger(__name__)

N = TypeVar("N", int, float)

MODEL_ENV = "INSTRUCT_BENCH_LLM_MODEL"
BASE_URL_ENV = "OPENAI_BASE_URL"
TEMPERATURE_ENV = "INSTRUCT_BENCH_LLM_TEMPERATURE"
SEED_ENV = "INSTRUCT_BENCH_LLM_SEED"
CONCURRENCY_ENV = "INSTRUCT_BENCH_LLM_CONCURRENCY"
JSON_MODE_ENV = "INSTRUCT_BENCH_LLM_JSON_MODE"
TIMEOUT_ENV = "INSTRUCT_BENCH_LLM_TIMEOUT"  # seconds per attempt, connect and every read included
DEFAULT_TIMEOUT_S = 25.0  # 4 attempts x 25 s + 3.5 s backoff: a hung or trickling endpoint fails in under 2 minutes
PRICE_ENV = "INSTRUCT_BENCH_LLM_PRICE"  # "INPUT,OUTPUT" dollars per million tokens
OPENAI_URL = "https://api.openai.com/v1"
JSON_MODES = ("auto", "json_schema", "json_object", "none")
LOCAL_KEY = "not-needed"  # sent to key-less local servers; a real key comes only from $OPENAI_API_KEY

# List prices in dollars per million (input, output) tokens, for --dry-run estimates only. They change;
# set $INSTRUCT_BENCH_LLM_PRICE="IN,OUT" to override. Unknown models on a local endpoint cost 0.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4-0613": (30.0, 60.0),
    "gpt-4-1106-preview": (10.0, 30.0),
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.60),
}


@dataclass(frozen=True)
class LLMConfig:
    """Where requests go and how they are sent. Nothing here is secret; the key stays in the env."""

    model: str
    base_url: str = OPENAI_URL
    temperature: float = 0.0
    seed: int = 42
    max_tokens: int = 512
    concurrency: int = 4
    max_retries: int = 3
    timeout_s: float = DEFAULT_TIMEOUT_S
    json_mode: str = "auto"
    cache_dir: Path | None = None
    retry_temperature: float = 0.7

    @classmethod
    def from_options(
        cls,
        *,
        llm_model: str | None = None,
        base_url: str | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        concurrency: int | None = None,
        max_retries: int | None = None,
        llm_cache_dir: str | Path | None = None,
        json_mode: str | None = None,
    ) -> LLMConfig:
        """Options win over the environment, which wins over the defaults."""
        env = os.environ
        model = llm_model or env.get(MODEL_ENV)
        if not model:
            raise ConfigError(f"No LLM model given: pass --llm-model NAME or set ${MODEL_ENV}.")
        refuse_url_credentials(
            base_url or env.get(BASE_URL_ENV) or "", "--base-url" if base_url else f"${BASE_URL_ENV}"
        )
        cfg = cls(
            model=model,
            base_url=(base_url or env.get(BASE_URL_ENV) or OPENAI_URL).rstrip("/"),
            temperature=_number(temperature, TEMPERATURE_ENV, 0.0, float),
            seed=_number(seed, SEED_ENV, 42, int),
            concurrency=_number(concurrency, CONCURRENCY_ENV, 4, int),
            max_retries=3 if max_retries is None else max_retries,
            timeout_s=_number(None, TIMEOUT_ENV, DEFAULT_TIMEOUT_S, float),
            json_mode=json_mode or env.get(JSON_MODE_ENV) or "auto",
            cache_dir=Path(llm_cache_dir) if llm_cache_dir else default_llm_cache_dir(),
        )
        cfg.check()
        return cfg

    def check(self) -> None:
        if self.concurrency < 1:
            raise ConfigError(f"--concurrency must be at least 1, got {self.concurrency}.")
        if self.max_retries < 0:
            raise ConfigError(f"--max-retries must be 0 or more, got {self.max_retries}.")
        if not self.timeout_s > 0:
            raise ConfigError(f"${TIMEOUT_ENV} (seconds per attempt) must be positive, got {self.timeout_s}.")
        if self.json_mode not in JSON_MODES:
            raise ConfigError(f"Unknown JSON mode '{self.json_mode}'; choose one of {', '.join(JSON_MODES)}.")
        if not 0.0 <= self.temperature <= 2.0:
            raise ConfigError(f"--temperature must be within [0, 2], got {self.temperature}.")

    @property
    def is_openai(self) -> bool:
        return self.base_url.rstrip("/") == OPENAI_URL

    def record(self) -> JSONObject:
        """What a manifest records about the endpoint (no key, no cache path)."""
        return {
            "endpoint": redact_url(self.base_url),
            "model": self.model,
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "max_retries": self.max_retries,
            "retry_temperature": self.retry_temperature,
            "json_mode": self.json_mode,
        }


def _number(value: float | None, env_name: str, default: N, kind: type[N]) -> N:
    if value is not None:
        return kind(value)
    raw = os.environ.get(env_name)
    if raw is None or raw == "":
        return default
    try:
        return kind(raw)
    except ValueError:
        raise ConfigError(f"${env_name}={raw!r} is not a valid {kind.__name__}.") from None


def default_llm_cache_dir() -> Path:
    return cache_root() / "llm"


# ---------------------------------------------------------------------------------------------- requests
class RequestOptions(TypedDict, total=False):
    """`ChatRequest`'s fields beside its messages and schema, as `ChatRequest.user` and `follow_up` take them."""

    name: str  # what the reply is called in errors and the cache ("reply", "rewrite", ...)
    max_tokens: int | None  # None: the client's `max_tokens`
    check: Callable[[JSON], None] | None  # raises ValueError for what the schema cannot state


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion whose reply must be a JSON value matching `schema`.

    `check(value)` may raise ValueError for conditions a schema cannot state (say, two rewrites that
    must differ); it is not part of the cache key, so tightening it re-validates cached replies.
    """

    messages: tuple[dict[str, str], ...]
    schema: Mapping[str, object]
    name: str = "reply"
    max_tokens: int | None = None
    check: Callable[[JSON], None] | None = field(default=None, compare=False)  # on the parsed reply

    @staticmethod
    def user(prompt: str, schema: Mapping[str, object], **kw: Unpack[RequestOptions]) -> ChatRequest:
        return ChatRequest(messages=({"role": "user", "content": prompt},), schema=schema, **kw)

    def follow_up(
        self, reply: str, prompt: str, schema: Mapping[str, object], **kw: Unpack[RequestOptions]
    ) -> ChatRequest:
        """The same conversation, the assistant's raw reply, then a new user turn."""
        messages = (*self.messages, {"role": "assistant", "content": reply}, {"role": "user", "content": prompt})
        return ChatRequest(messages=messages, schema=schema, **kw)


@dataclass
class LLMResult:
    """Outcome of one request: `value` when valid, else `error`; `reply` is the last raw text seen."""

    ok: bool
    value: Any = None
    reply: str | None = None
    error: str | None = None
    attempts: int = 0
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})


@dataclass
class TokenLedger:
    """Counts for one client's lifetime. `*_tokens` cover every reply used, cached or fresh."""

    requests_sent: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    invalid_replies: int = 0
    failures: int = 0
    json_mode_fallbacks: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: int) -> None:
        with self._lock:
            for k, v in counts.items():
                setattr(self, k, getattr(self, k) + v)

    def as_dict(self) -> dict[str, int | list[str]]:
        with self._lock:
            return {f.name: copy.copy(getattr(self, f.name)) for f in fields(self) if not f.name.startswith("_")}


# ---------------------------------------------------------------------------------------------- cache
class ResponseCache:
    """Raw replies by request key, in one SQLite file; thread-safe through one lock."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / "responses.sqlite"
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
        with self._lock, self._conn:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, request TEXT, reply TEXT)")
            self._conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")

    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put_meta(self, key: str, value: str) -> None:
        with self._lock, self._conn:
            self._conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def get(self, key: str) -> JSONObject | None:
        with self._lock:
            row = self._conn.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, request: JSONObject, reply: JSONObject) -> None:
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO replies VALUES (?, ?, ?)",
                (key, json.dumps(request, ensure_ascii=False, sort_keys=True), json.dumps(reply, ensure_ascii=False)),
            )

    def close(self) -> None:
        with self._lock:
            self._conn.close()


# ---------------------------------------------------------------------------------------------- parsing
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse_json_reply(text: str) -> JSON:
    """The JSON value in a reply: the whole text, else the body of a ```json fence. Raises ValueError."""
    text = text.strip()
    candidates = [text] + [m.strip() for m in _FENCE.findall(text)]
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    raise ValueError(f"reply is not JSON: {text[:120]!r}")


def validate_reply(text: str, request: ChatRequest) -> JSON:
    """Parse and check one reply against the request's schema and extra check; raise ValueError."""
    import jsonschema

    value = parse_json_reply(text)
    try:
        jsonschema.validate(value, request.schema)
    except jsonschema.ValidationError as e:
        raise ValueError(f"reply does not match the schema: {e.message}") from None
    blank = _blank_path(value)
    if blank is not None:
        raise ValueError(f"reply has an empty string at {blank}")
    if request.check is not None:
        request.check(value)
    return value


def _blank_path(value: object, path: str = "$") -> str | None:
    """Where the first empty or whitespace-only string sits in a JSON value (a blank answer is no data)."""
    if isinstance(value, str):
        return path if not value.strip() else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        found = _blank_path(v, f"{path}[{k!r}]")
        if found:
            return found
    return None


def object_schema(**properties: Mapping[str, object]) -> dict[str, object]:
    """A strict object schema with every property required (the form OpenAI's strict mode accepts)."""
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


STRING: Mapping[str, object] = {"type": "string"}  # blank strings are refused by `validate_reply`


# ---------------------------------------------------------------------------------------------- client
class LLMClient:
    """Send `ChatRequest`s concurrently with caching, validation retries and a token ledger.

    Example:
        client = LLMClient(LLMConfig.from_options(llm_model="gpt-4o-mini"))
        results = client.run([ChatRequest.user("Say hi as JSON", object_schema(hi=STRING))])
    """

    def __init__(self, config: LLMConfig) -> None:
        config.check()
        self.config = config
        self.ledger = TokenLedger()
        self.cache = ResponseCache(config.cache_dir) if config.cache_dir else None
        self._mode_lock = threading.Lock()
        self._openai: OpenAI | None = None
        self._json_mode = self._first_json_mode()

    # -- public API -----------------------------------------------------------------------------
    def run(self, requests: Sequence[ChatRequest], *, desc: str = "LLM", show: bool | None = None) -> list[LLMResult]:
        """Results in the order of `requests`, `concurrency` at a time on daemon threads (`run_in_order`).

        A KeyboardInterrupt ends the run at once: every finished reply is cached, and the requests in
        flight are abandoned (a thread pool waited for them at exit, for ever on a trickling endpoint);
        a rerun sends them again.
        """
        from tqdm.auto import tqdm

        disable = None if show is None else not show
        tick = threading.Lock()
        with tqdm(total=len(requests), desc=desc, unit="req", disable=disable, leave=False) as bar:

            def one(request: ChatRequest) -> LLMResult:
                result = self.complete(request)
                with tick:
                    bar.update(1)
                return result

            return run_in_order(one, list(requests), self.config.concurrency, name="llm-request")

    def complete(self, request: ChatRequest) -> LLMResult:
        """One request: up to 1 + max_retries attempts until the reply validates."""
        usage = {"prompt_tokens": 0, "completion_tokens": 0}
        reply: str | None = None
        error = "no attempt made"
        for attempt in range(self.config.max_retries + 1):
            try:
                record = self._reply(request, attempt)
            except _TransportError as e:
                self.ledger.add(failures=1)
                return LLMResult(False, reply=reply, error=str(e), attempts=attempt + 1, usage=usage)
            reply = record["content"]
            for k in usage:
                usage[k] += int(record.get("usage", {}).get(k) or 0)
            try:
                value = validate_reply(reply or "", request)
            except ValueError as e:
                error = f"attempt {attempt + 1}: {e}"
                if record.get("finish_reason") == "length":
                    error += " (reply cut off at max_tokens)"
                self.ledger.add(invalid_replies=1)
                continue
            return LLMResult(True, value=value, reply=reply, attempts=attempt + 1, usage=usage)
        self.ledger.add(failures=1)
        return LLMResult(False, reply=reply, error=error, attempts=self.config.max_retries + 1, usage=usage)

    def request_body(self, request: ChatRequest, attempt: int = 0, json_mode: str | None = None) -> dict[str, Any]:
        """The exact body sent (and hashed for the cache); retry k differs (seed + k, see module docstring)."""
        temperature = self.config.temperature
        if attempt and temperature == 0:
            temperature = self.config.retry_temperature
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": [dict(m) for m in request.messages],
            "temperature": temperature,
            "seed": self.config.seed + attempt,
            "max_tokens": request.max_tokens or self.config.max_tokens,
        }
        mode = json_mode or self._json_mode
        if mode == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": request.name, "schema": request.schema, "strict": True},
            }
        elif mode == "json_object":
            body["response_format"] = {"type": "json_object", "schema": request.schema}
        return body

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()

    @property
    def json_mode(self) -> str:
        """The response_format in use now (after any fallback)."""
        return self._json_mode

    # -- internals ------------------------------------------------------------------------------
    def _first_json_mode(self) -> str:
        """For "auto", skip formats this endpoint and model already rejected (remembered in the cache),
        so a rebuild from the cache sends nothing."""
        if self.config.json_mode != "auto":
            return self.config.json_mode
        for mode in _MODE_ORDER:
            if self.cache is None or self.cache.get_meta(self._unsupported_key(mode)) is None:
                return mode
        return "none"

    def _unsupported_key(self, mode: str) -> str:
        # The endpoint as a hash, like the cache keys: a URL may carry a key (userinfo, ?api-key=) and this
        # key is written to the cache file.
        endpoint = sha256_json({"endpoint": self.config.base_url})[:16]
        return f"unsupported-format|{endpoint}|{self.config.model}|{mode}"

    def _cache_key(self, body: Mapping[str, object]) -> str:
        return sha256_json({"endpoint": self.config.base_url, "body": body})

    def _reply(self, request: ChatRequest, attempt: int) -> dict[str, Any]:
        """A reply record {content, finish_reason, usage} from the cache or the endpoint."""
        while True:
            mode = self._json_mode
            body = self.request_body(request, attempt, mode)
            key = self._cache_key(body)
            cached = self.cache.get(key) if self.cache is not None else None
            if cached is not None:
                self.ledger.add(cache_hits=1, **_usage(cached))
                return cached
            try:
                record = self._send(body)
            except _UnsupportedFormat as e:
                self._downgrade(mode, str(e))
                continue
            self.ledger.add(requests_sent=1, **_usage(record))
            if self.cache is not None:
                self.cache.put(key, body, record)
            return record

    def _downgrade(self, mode: str, why: str) -> None:
        """json_schema → json_object → none, once per client, when the server rejects a format."""
        with self._mode_lock:
            if self._json_mode != mode:  # another thread already moved on
                return
            if self.config.json_mode != "auto" or mode == "none":
                raise ConfigError(
                    f"The endpoint rejected response_format '{mode}' ({why}). Use --json-mode/"
                    f"${JSON_MODE_ENV} auto, json_object or none."
                )
            self._json_mode = _MODE_ORDER[_MODE_ORDER.index(mode) + 1]
            if self.cache is not None:
                self.cache.put_meta(self._unsupported_key(mode), why[:500])
            self.ledger.json_mode_fallbacks.append(f"{mode} -> {self._json_mode}: {why[:160]}")
            logger.warning("Endpoint rejected response_format %s; falling back to %s.", mode, self._json_mode)

    def _client(self) -> OpenAI:
        if self._openai is None:
            from openai import OpenAI

            key = os.environ.get("OPENAI_API_KEY")
            if not key and self.config.is_openai:
                raise ConfigError("api.openai.com needs an API key: set $OPENAI_API_KEY (it is never stored).")
            # Each attempt is bounded in total, not per read: a trickling endpoint times out too.
            self._openai = OpenAI(
                base_url=self.config.base_url,
                api_key=key or LOCAL_KEY,
                max_retries=self.config.max_retries,
                timeout=self.config.timeout_s,
                http_client=deadline_client(self.config.timeout_s),
            )
        return self._openai

    def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        """One reply from the endpoint, all attempts within the request's budget (`request_budget`)."""
        client = self._client()
        with request_budget(self.config.timeout_s, self.config.max_retries) as budget:
            return self._send_within(client, body, budget)

    def _send_within(self, client: OpenAI, body: dict[str, Any], budget: RequestBudget) -> dict[str, Any]:
        import openai

        try:
            completion = client.chat.completions.create(**body)
        except (openai.AuthenticationError, openai.PermissionDeniedError) as e:
            raise ConfigError(
                f"{self.config.base_url} refused the API key ({_message(e)}); check $OPENAI_API_KEY."
            ) from None
        except openai.NotFoundError as e:
            raise ConfigError(
                f"{self.config.base_url} has no model '{self.config.model}' or no chat endpoint ({_message(e)}); "
                f"check --llm-model and --base-url."
            ) from None
        except openai.APIStatusError as e:
            # A server that cannot honour response_format says so with 400, 422 (FastAPI) or, like
            # llama-cpp-python 0.3, 500 (after the openai client's retries); the body names the field.
            if "response_format" in body and _mentions_format(e):
                raise _UnsupportedFormat(_message(e)) from None
            raise _TransportError(f"{type(e).__name__} after {budget.summary()}: {_message(e)}") from None
        except openai.APITimeoutError:
            raise _TransportError(
                f"timed out: no answer within {self.config.timeout_s:g} s per attempt, {budget.attempts} attempt(s)"
                f"{budget.stopped_early()} (${TIMEOUT_ENV} sets the seconds per attempt)"
            ) from None
        except openai.APIConnectionError as e:
            raise _TransportError(f"{type(e).__name__} after {budget.summary()}: {_message(e)}") from None
        choice = completion.choices[0]
        usage = completion.usage
        return {
            "content": choice.message.content or "",
            "finish_reason": choice.finish_reason,
            "usage": {
                "prompt_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
                "completion_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
            },
        }


_MODE_ORDER = ("json_schema", "json_object", "none")


class _TransportError(Exception):
    """The endpoint could not answer even after the client's own retries."""


class _UnsupportedFormat(Exception):
    """HTTP 400 that names response_format."""


def _usage(record: dict[str, Any]) -> dict[str, int]:
    u = record.get("usage") or {}
    return {
        "prompt_tokens": int(u.get("prompt_tokens") or 0),
        "completion_tokens": int(u.get("completion_tokens") or 0),
    }


def _message(e: Exception) -> str:
    return str(getattr(e, "message", None) or e).splitlines()[0][:200]


def _mentions_format(e: Exception) -> bool:
    text = json.dumps(getattr(e, "body", None) or "") + _message(e)
    return any(word in text for word in ("response_format", "json_schema", "json_object"))


# ---------------------------------------------------------------------------------------------- templates
_PLACEHOLDER = re.compile(r"\[([A-Z][A-Z0-9_]*)\]")


def fill_template(template: str, **values: str) -> str:
    """Replace the template's [NAME] placeholders in one pass, so a value that itself contains
    "[TEXT]" is inserted as it is. A placeholder without a value is a bug: KeyError."""
    given = {k.upper(): v for k, v in values.items()}
    return _PLACEHOLDER.sub(lambda m: given[m.group(1)], template)


# ---------------------------------------------------------------------------------------------- estimates
def estimate_tokens(text: str) -> int:
    """Rough token count (4 characters per token, the usual rule for English with GPT tokenizers)."""
    return max(1, (len(text) + 3) // 4)


def estimate_cost(config: LLMConfig, prompt_tokens: int, completion_tokens: int) -> float | None:
    """Dollars for a dry run: $INSTRUCT_BENCH_LLM_PRICE, else the PRICES table, else 0 for local, else None."""
    raw = os.environ.get(PRICE_ENV)
    if raw:
        try:
            price_in, price_out = (float(x) for x in raw.split(","))
        except ValueError:
            raise ConfigError(f"${PRICE_ENV}={raw!r}: expected 'INPUT,OUTPUT' dollars per million tokens.") from None
    elif config.model in PRICES:
        price_in, price_out = PRICES[config.model]
    elif not config.is_openai:
        return 0.0
    else:
        return None
    return (prompt_tokens * price_in + completion_tokens * price_out) / 1e6
