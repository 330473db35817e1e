"""OpenAI-compatible embedding APIs: `--model openai:MODEL_ID` (OpenAI, or any `/v1/embeddings` server).

    python -m bench run --model openai:text-embedding-3-small --dimensions 256
    python -m bench run --model openai:bge-m3 --base-url http://localhost:8000/v1 --price 0

The key comes from the environment only (`OPENAI_API_KEY`; required for api.openai.com, optional for
another endpoint, which then gets a placeholder) and is never stored: not in settings, results, run records, caches or log lines. The endpoint is
`--base-url`, else `$OPENAI_BASE_URL`, else api.openai.com.

How texts are sent:
- the instruction becomes a text prefix, with the templates of the sentence-transformers family
  (`prefix` = "{instruction} {text}", `none`, or a custom string with `{text}`);
- requests respect the API's limits: at most `batch_size` (capped at 2,048) inputs and at most
  `max_tokens_per_request` tokens (300,000) each. Tokens are counted with tiktoken when it is
  installed and its encoding is available offline, else bounded by UTF-8 bytes (never fewer than
  tokens), so a request never exceeds the budget;
- 429, 5xx, connection errors and timeouts are retried by the `openai` client (`max_retries`,
  exponential backoff honouring Retry-After); every retry is counted, and an error says how many
  attempts were really made;
- an endpoint that never answers, or answers a byte at a time, or whose host name never resolves, fails
  within a bounded time: each attempt (look-up, connect, send and every read together,
  `bench.core.http_deadline`) lasts at most `timeout` seconds (12), and the whole request, attempts and
  waits together, at most 6 x 12 s plus 15.5 s of backoff, 87.5 s (`failure_bound_s`), leaving room under
  two minutes for start-up, with an error saying it timed out. A Retry-After is honoured within that
  limit only: a wait that does not fit ends the request at once, the error naming the wait asked for;
- a reply is used only when it is one finite, non-zero vector of JSON numbers per input, of one length,
  with the indices 0..n-1 once each; anything else (not JSON, an `{"error": ...}` body sent with HTTP 200,
  missing or repeated indices, numbers sent as strings or booleans, NaN/inf, all-zero vectors, vectors of
  different lengths) is an error naming the endpoint, raised before the reply is counted or cached;
- requests go out concurrently: within a group (`batch_size` x max(8, max_concurrency) inputs, see
  bench/adapters/base.py) at most `max_concurrency` (4; `bench run --max-concurrency`, 1 = one at a time) are in
  flight at once, through one thread-safe client; vectors come back in input order, identical to a
  sequential run. Each request keeps its own retries and backoff (honouring Retry-After). The first
  failure cancels the requests not yet started, waits for those in flight (each bounded as above), and
  raises that request's error, as a sequential run would. Requests run on daemon threads that the
  calling thread waits for in short steps (`bench.core.http_deadline.run_in_order`, which the LLM
  client of the data builders shares), so Ctrl-C stops the run at once, whatever the endpoint does. A runtime option: it changes neither the cache fingerprint nor the MTEB experiment;
- the cache fingerprint names the endpoint by scheme, host, port, path and query string: the query
  (`?deployment=a`, `?api-version=...`) as the sha256 of its sorted parameters, credential-named ones
  (`api-key`, `sig`, `token`, ...) left out, so no value of it is written in clear.

The usage ledger (`usage()`, recorded per task in the run record's `encode.usage`) counts requests,
retries, texts sent, tokens (as the endpoint reports them) and their cost in USD from `PRICES_USD_PER_1M`
or `--price`; for a model with no known price the cost is unknown (None), never guessed.
`estimate_usage` prices inputs without sending them (`bench run --dry-run`): tokens by tiktoken when
available, else the documented heuristic of one token per 4 characters (rounded up, per text).
"""

from __future__ import annotations

import logging
import math
import os
import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import lru_cache
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict, cast
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np

from bench.adapters.base import BaseEncoder
from bench.adapters.sentence_transformers import template_string
from bench.core.errors import ConfigError, EncodingError, ModelLoadError
from bench.core.fileio import sha256_text
from bench.core.http_deadline import RequestBudget, deadline_client, failure_bound_s, request_budget, run_in_order
from bench.core.redact import credential_param, refuse_url_credentials

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from mteb.types import PromptType

    from bench.adapters.model_input import ModelInput
    from bench.core.json_types import JSONObject

logger = logging.getLogger(__name__)

API_KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_INPUTS_PER_REQUEST = 2048  # OpenAI: "any array must be 2048 dimensions or less"
MAX_TOKENS_PER_REQUEST = 300_000  # OpenAI: summed over all inputs of one request
# USD per 1M input tokens, OpenAI's list prices (standard tier) when this table was written.
PRICES_USD_PER_1M: dict[str, float] = {
    "text-embedding-3-small": 0.02,
    "text-embedding-3-large": 0.13,
    "text-embedding-ada-002": 0.10,
}
PRICE_TABLE_SOURCE = "price table (OpenAI list prices, 2025)"
CHARS_PER_TOKEN = 4
LOCAL_KEY = "not-needed"  # sent to a key-less local endpoint when $OPENAI_API_KEY is unset
DEFAULT_TIMEOUT_S = 12.0  # per attempt; with 5 retries an endpoint that never answers fails in < 2 minutes
DEFAULT_MAX_CONCURRENCY = 4  # requests in flight at once within a group


@dataclass
class APIUsage:
    """Running totals of what the endpoint was asked and charged."""

    requests: int = 0
    retries: int = 0
    texts: int = 0
    tokens: int = 0
    tokens_estimated: int = 0  # part of `tokens` estimated because the endpoint reported no usage


class Cost(TypedDict):
    """What a number of tokens costs: USD (None when the price is unknown), the price and where it comes from."""

    usd: float | None
    usd_per_1m_tokens: float | None
    price_source: str | None


class Usage(Cost):
    """The usage ledger of the run record (`encode.usage`): `APIUsage`'s counts, how tokens were counted, the cost."""

    requests: int
    retries: int
    texts: int
    tokens: int
    tokens_estimated: int
    tokens_method: str


class UsageEstimate(Cost):
    """What `--dry-run` says sending some texts would cost (`estimate_usage`)."""

    texts: int
    tokens: int
    tokens_method: str
    requests: int


class OpenAIEmbeddingEncoder(BaseEncoder):
    """An OpenAI-compatible embedding API; the instruction is a text prefix; key from $OPENAI_API_KEY.

    Requests of a group go out on `max_concurrency` daemon threads sharing one client (1 = one at a
    time); vectors are assembled in input order, the usage ledger is updated under a lock, and the
    first failure cancels the requests not yet started and is raised as the single error of the group.
    In a multi-process run an API model gets no ranks: this option is its parallelism.
    """

    family = "openai"
    results_name_family = False
    # The harness's own client and templates, not MTEB's OpenAI implementation: always an experiment.
    experiment_always = ("template",)
    local_weights = False  # the endpoint's weights: --device and --dtype are not this family's options
    distributes = False  # a remote model: a launched run leaves it to rank 0 (requests run concurrently instead)
    notes = "template: none|prefix|'<custom>'; key from $OPENAI_API_KEY only; base_url: any OpenAI-compatible endpoint"
    cli_flags = {
        "dimensions": "shortened output size, for API models that support it",
        "base_url": "OpenAI-compatible endpoint (default $OPENAI_BASE_URL, else api.openai.com); the key is read "
        "from $OPENAI_API_KEY only",
        "price": "USD per 1M input tokens for the API cost ledger (overrides the price table)",
        "max_retries": "API retries per request on 429/5xx/connection errors",
        "max_concurrency": "API requests in flight at once (default 4; 1 sends them one at a time)",
    }
    # Options that change how vectors are fetched or priced, not which: never an MTEB experiment.
    runtime_options: ClassVar[tuple[str, ...]] = (
        "base_url",
        "max_retries",
        "timeout",
        "price",
        "max_tokens_per_request",
        "max_concurrency",
    )

    def __init__(
        self,
        model_id: str,
        *,
        name: str | None = None,
        revision: str | None = None,
        template: str = "prefix",
        dimensions: int | None = None,
        base_url: str | None = None,
        max_retries: int = 5,
        timeout: float = DEFAULT_TIMEOUT_S,
        price: float | None = None,
        max_tokens_per_request: int = MAX_TOKENS_PER_REQUEST,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        batch_size: int = 512,
        **kwargs: Any,
    ) -> None:
        """An embedding API serving `model_id` (see module docstring).

        Args:
            revision: only the revision results are filed under (default `api`): the endpoint serves whatever
                weights it has.
            template: how the instruction is put into the text sent: `prefix` ("{instruction} {text}"), `none`
                (the text alone) or a custom string with `{text}` (and `{instruction}`).
            timeout: seconds one API attempt (connect, send and every read) may take before it fails and is
                retried; raise it for a slow local server.
            max_tokens_per_request: tokens per request, summed over its inputs (OpenAI's limit, 300,000, by
                default); lower it for an endpoint with a smaller limit.
            max_tokens: unused: API requests are cut by `batch_size` and `max_tokens_per_request`.
        """
        if template == "model":
            raise ConfigError(
                "Template 'model' needs a model's own prompts; API models have none. Use prefix, none or a custom string."
            )
        for option, value in (("dimensions", dimensions), ("max_tokens_per_request", max_tokens_per_request)):
            if value is not None and value <= 0:
                raise ConfigError(f"{option} must be positive, got {value}.")
        if max_retries < 0 or (price is not None and price < 0):
            raise ConfigError("max_retries and price must not be negative.")
        if not timeout > 0:
            raise ConfigError(f"timeout (seconds per API attempt) must be positive, got {timeout}.")
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) or max_concurrency < 1:
            raise ConfigError(
                f"--max-concurrency (API requests in flight at once) must be a whole number of at least 1, "
                f"got {max_concurrency!r}."
            )
        self.model_id = model_id
        self.template = template
        self.template_format = template_string(template)
        self.dimensions = dimensions
        refuse_url_credentials(
            base_url or os.environ.get(BASE_URL_ENV) or "", "--base-url" if base_url else f"${BASE_URL_ENV}"
        )
        self.base_url = (base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")
        self.max_retries = max_retries
        self.timeout = timeout
        self.price = price
        self.max_tokens_per_request = max_tokens_per_request
        self.max_concurrency = max_concurrency
        self.api_usage = APIUsage()
        self._ledger_lock = threading.Lock()  # the ledger, the reply length and the model meta, across threads
        self._client: Any = None
        self._reply_dim: int | None = None  # vector length of the first reply; every later one must match
        super().__init__(name=name or model_id, revision=revision or "api", batch_size=batch_size, **kwargs)

    def __getstate__(self) -> dict[str, Any]:  # a lock does not pickle; an unloaded encoder still does
        return {k: v for k, v in self.__dict__.items() if k != "_ledger_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._ledger_lock = threading.Lock()

    # ------------------------------------------------------------------ settings
    @property
    def endpoint(self) -> str:
        """The base URL without credentials or query string (safe to record)."""
        return public_url(self.base_url)

    @property
    def device(self) -> str:
        return "api"

    def settings(self) -> JSONObject:
        return {
            **super().settings(),
            "instruction_template": self.template,
            "instruction_template_format": self.template_format,
            "instruction_template_sha256": sha256_text(self.template_format),
            "dimensions": self.dimensions,
            "endpoint": self.endpoint,
            "max_retries": self.max_retries,
            "max_tokens_per_request": self.max_tokens_per_request,
        }

    def identity_extras(self) -> JSONObject:
        """The endpoint: another one may serve other weights under the same name, so its vectors are cached
        apart. Its query string selects too (`?deployment=a`), so it counts, as a hash (see `endpoint_query`);
        an endpoint without one keeps the fingerprint it always had, and so its cache."""
        query = endpoint_query(self.base_url)
        return {"endpoint": self.endpoint, **({"endpoint_query_sha256": sha256_text(query)} if query else {})}

    def price_per_million(self) -> tuple[float | None, str | None]:
        """(USD per 1M input tokens, where that number comes from); (None, None) when unknown."""
        if self.price is not None:
            return self.price, "--price"
        known = PRICES_USD_PER_1M.get(self.model_id)
        return (known, PRICE_TABLE_SOURCE) if known is not None else (None, None)

    def usage(self, since: Mapping[str, object] | None = None) -> Usage:
        """The ledger for the run record: requests, retries, texts, tokens and cost (None if unknown).

        Running totals, or with `since` (an earlier `usage()`), what was used after it.
        """
        counts: dict[str, int] = asdict(self.api_usage)
        if since:
            counts = {k: v - _count(since.get(k)) for k, v in counts.items()}
        method = "reported by the endpoint"
        if counts["tokens_estimated"]:
            method += f"; {counts['tokens_estimated']} estimated ({token_method(self.model_id)}) where it reported none"
        return Usage(
            requests=counts["requests"],
            retries=counts["retries"],
            texts=counts["texts"],
            tokens=counts["tokens"],
            tokens_estimated=counts["tokens_estimated"],
            tokens_method=method,
            **self._cost(counts["tokens"]),
        )

    def estimate_usage(self, inputs: Sequence[str]) -> UsageEstimate:
        """What sending `inputs` would cost, computed locally (for `--dry-run`)."""
        tokens = sum(count_tokens(self.model_id, text) for text in inputs)
        requests = sum(1 for _ in self._requests(list(inputs), self.batch_size))
        return UsageEstimate(
            texts=len(inputs),
            tokens=tokens,
            tokens_method=token_method(self.model_id),
            requests=requests,
            **self._cost(tokens),
        )

    def _cost(self, tokens: int) -> Cost:
        price, source = self.price_per_million()
        usd = None if price is None else round(tokens * price / 1e6, 8)
        return Cost(usd=usd, usd_per_1m_tokens=price, price_source=source)

    # ------------------------------------------------------------------ family hooks
    def render(self, text: str, instruction: str | None, prompt_type: PromptType | None) -> str:
        """The exact string sent: the instruction as a prefix per the template, or the text alone."""
        if instruction is None or self.template == "none":
            return text
        return self.template_format.format(instruction=instruction, text=text)

    def _load(self) -> None:
        import openai

        key = os.environ.get(API_KEY_ENV)
        if not key and self.endpoint == DEFAULT_BASE_URL:
            raise ConfigError(
                f"Set {API_KEY_ENV} to use openai:{self.model_id} on {DEFAULT_BASE_URL}; "
                f"the key is read from the environment only."
            )
        key = key or LOCAL_KEY
        # The client appends "/embeddings" to the base URL as it is, query string and all; the query goes
        # to every request as its own query instead (a repeated parameter keeps its last value).
        parts = urlsplit(self.base_url)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        self._client = openai.OpenAI(
            api_key=key,
            base_url=urlunsplit(parts._replace(query="", fragment="")),
            default_query=query or None,
            max_retries=self.max_retries,
            timeout=self.timeout,
            http_client=deadline_client(self.timeout),
        )

    def group_batches(self) -> int:
        return max(super().group_batches(), self.max_concurrency)  # room for every request in flight

    def _encode_group(self, inputs: list[ModelInput], batch_size: int) -> np.ndarray:
        """The group's vectors in input order; its requests at most `max_concurrency` at a time."""
        batches = list(self._requests(cast("list[str]", inputs), batch_size))  # `render` gives strings
        return np.concatenate(run_in_order(self._embed, batches, self.max_concurrency))

    # ------------------------------------------------------------------ requests
    def _requests(self, inputs: list[str], batch_size: int) -> Iterator[list[str]]:
        """Consecutive slices within the per-request input count and token budget."""
        limit = min(batch_size, MAX_INPUTS_PER_REQUEST)
        yield from plan_requests(
            inputs,
            max_inputs=limit,
            max_tokens=self.max_tokens_per_request,
            count=lambda text: budget_tokens(self.model_id, text),
        )

    def _embed(self, batch: list[str]) -> np.ndarray:
        """The vectors of one request, in input order; a reply is checked whole before it counts."""
        import openai

        extra = {"dimensions": self.dimensions} if self.dimensions else {}
        with request_budget(self.timeout, self.max_retries) as budget:  # all attempts within failure_bound_s
            try:
                raw = self._client.embeddings.with_raw_response.create(
                    model=self.model_id, input=batch, encoding_format="float", **extra
                )
            except openai.APIError as e:
                raise self._error(e, budget) from None
        response = self._parse(raw)
        vectors = self._vectors(_items(response["data"]), batch)
        usage = response.get("usage")
        reported = usage.get("prompt_tokens") if isinstance(usage, dict) else None
        estimated = 0
        if type(reported) is not int:  # absent, or not a JSON integer
            reported = estimated = sum(count_tokens(self.model_id, text) for text in batch)
        with self._ledger_lock:  # requests may run in several threads (`max_concurrency`)
            lengths = self._one_length({vectors.shape[1], self._reply_dim or vectors.shape[1]})
            self._reply_dim = lengths[0]
            if self.mteb_model_meta.embed_dim is None:
                self.mteb_model_meta = self.mteb_model_meta.model_copy(update={"embed_dim": lengths[0]})
            self.api_usage.requests += 1
            self.api_usage.retries += int(getattr(raw, "retries_taken", 0) or 0)
            self.api_usage.texts += len(batch)
            self.api_usage.tokens_estimated += estimated
            self.api_usage.tokens += int(reported)
        return vectors

    def _parse(self, raw: Any) -> dict[str, Any]:
        """The reply's JSON as sent: the `openai` package's parse would turn `true` into 1.0, so a reply of
        booleans would pass for numbers. A reply that is not the JSON of an embeddings list is an
        EncodingError, and one that carries `{"error": ...}` (some proxies and llama.cpp send it with HTTP
        200) says the message."""
        http = raw.http_response
        try:
            response = http.json()
        except ValueError:  # not JSON (an HTML page), or broken JSON
            response = None
        if isinstance(response, dict) and isinstance(response.get("data"), list):
            return response
        if (message := _error_body(http)) is not None:
            raise self._bad_reply(
                f"answered HTTP {http.status_code} with an error instead of embeddings: {message}",
                "serves this model",
                fix="Check the model id and that --base-url",
            )
        raise self._bad_reply(
            f"answered with something that is not the JSON of an embeddings reply (HTTP {http.status_code}, "
            f"{http.headers.get('content-type')})",
            "points at an OpenAI-compatible /v1 endpoint",
        )

    def _vectors(self, data: list[Any], batch: list[str]) -> np.ndarray:
        """The reply's vectors in input order, once they are one finite, non-zero vector of numbers per input
        with the indices 0..n-1 once each: anything else would be cached and scored as if it were right."""
        problem = _index_problem([getattr(d, "index", None) for d in data], len(batch))
        if problem:
            raise self._bad_reply(
                f"returned {problem} for {len(batch)} inputs, so its vectors cannot be matched "
                f"to their inputs (each index 0..{len(batch) - 1} must appear once)"
            )
        found = [_numbers(d.embedding) for d in sorted(data, key=lambda d: d.index)]
        if (i := next((i for i, row in enumerate(found) if row is None), None)) is not None:
            raise self._bad_reply(
                f"returned an embedding that is not a list of JSON numbers (input {i}: {batch[i][:60]!r}; "
                f"values sent as strings or booleans are not numbers)",
                "serves embeddings as JSON numbers",
            )
        rows = [row for row in found if row is not None]  # every one, after the check above
        self._one_length({len(row) for row in rows})
        vectors = np.stack(rows)
        for bad, what in (
            (~np.isfinite(vectors).all(axis=1), "NaN or infinite values"),
            (~vectors.any(axis=1), "all-zero vectors (no direction: every cosine with one is NaN)"),
        ):
            if bad.any():
                first = int(np.flatnonzero(bad)[0])
                raise self._bad_reply(
                    f"returned {what} for {int(bad.sum())} of {len(batch)} inputs (first: {batch[first][:60]!r})",
                    "serves a working model",
                )
        return vectors

    def _one_length(self, lengths: set[int]) -> list[int]:
        """`lengths` (of vectors in one reply, or of this reply and the first) as a list, when there is one."""
        if len(lengths) > 1:
            raise self._bad_reply(
                f"returned vectors of different lengths ({', '.join(map(str, sorted(lengths)))}); "
                f"a model gives one length",
                "serves only this model (and --dimensions)",
            )
        return sorted(lengths)

    def _bad_reply(
        self,
        problem: str,
        check: str = "points at an OpenAI-compatible /v1 endpoint",
        *,
        fix: str = "Check that --base-url",
    ) -> EncodingError:
        """One line for a reply that is refused: nothing of it is counted or cached."""
        return EncodingError(
            f"{self.endpoint} (model {self.model_id}) {problem}. {fix} {check}; nothing of this reply was used."
        )

    def failure_bound_s(self) -> float:
        """The longest one request may take, all attempts and waits together (`bench.core.http_deadline`):
        every attempt's timeout plus the client's backoff between attempts (at most its maximum delay
        each); a Retry-After is honoured only within it."""
        return failure_bound_s(self.timeout, self.max_retries)

    def _error(self, e: Exception, budget: RequestBudget) -> Exception:
        """One clear line for an API failure (after the client's retries), with no credentials in it; it
        says how many attempts were really made (`budget`), and why the retries stopped early if they did."""
        import openai

        where = f"{self.endpoint} (model {self.model_id})"
        if isinstance(e, openai.APITimeoutError):
            return EncodingError(
                f"{where} timed out: no answer within {self.timeout:g} s per attempt, {budget.attempts} attempt(s)"
                f"{budget.stopped_early()}. Check that the server is up and --base-url is right, or allow more time "
                f"with --model-args timeout=SECONDS."
            )
        if isinstance(e, openai.AuthenticationError):
            return ConfigError(f"{where} rejected the API key (401). Set a valid key in {API_KEY_ENV}.")
        if isinstance(e, openai.PermissionDeniedError):
            return ConfigError(f"{where}: the key in {API_KEY_ENV} may not use this model (403): {_message(e)}")
        if isinstance(e, openai.NotFoundError):
            return ModelLoadError(f"{where}: not found (404): {_message(e)}. Check the model id and --base-url.")
        if isinstance(e, openai.RateLimitError):
            fewer = f" or lower --max-concurrency ({self.max_concurrency})" if self.max_concurrency > 1 else ""
            return EncodingError(
                f"{where} still rate-limited (429) after {budget.summary()}: {_message(e)}. Rerun later to "
                f"resume (finished groups are cached), raise --max-retries{fewer}."
            )
        if isinstance(e, openai.APIStatusError):
            after = f" after {budget.summary()}" if budget.attempts > 1 or budget.refused_wait is not None else ""
            return EncodingError(f"{where} answered HTTP {e.status_code}{after}: {_message(e)}")
        if isinstance(e, openai.APIConnectionError):
            return EncodingError(
                f"Could not reach {where} after {budget.summary()} ({type(e).__name__}). Check --base-url and the network."
            )
        return EncodingError(f"{where}: {type(e).__name__}: {_message(e)}")


def _message(e: Exception) -> str:
    """The server's error message, one line, short, with any credential from the environment masked."""
    body = getattr(e, "body", None)
    return _short(body.get("message") if isinstance(body, dict) and body.get("message") else str(e))


def _short(text: object) -> str:
    """`text` on one line, the key of the environment masked, then cut to 200 characters (the mask first,
    so no cut can leave part of the key)."""
    text = " ".join(str(text).split())
    key = os.environ.get(API_KEY_ENV)
    return (text.replace(key, "***") if key else text)[:200]


def _error_body(http_response: Any) -> str | None:
    """The message of a JSON `{"error": ...}` body (a string or `{"message": ...}`), short; None for any
    other body."""
    try:
        body = http_response.json()
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    if not error:
        return None
    message = error.get("message") if isinstance(error, dict) else None
    return _short(message or error)


def _index_problem(indices: list[Any], n: int) -> str | None:
    """What is wrong with a reply's `index` fields for `n` inputs (missing, repeated, out of range, not
    whole numbers), in words; None when they are 0..n-1 once each, in any order."""
    if len(indices) != n:
        return f"{len(indices)} embeddings"
    if any(type(i) is not int for i in indices):
        return f"indices that are not whole numbers ({_listing([i for i in indices if type(i) is not int])})"
    if sorted(indices) == list(range(n)):
        return None
    seen = Counter(indices)
    parts = [
        f"{label} {_listing(found)}"
        for label, found in (
            ("repeated", sorted(i for i, times in seen.items() if times > 1)),
            ("missing", [i for i in range(n) if i not in seen]),
            ("out of range", sorted(i for i in seen if not 0 <= i < n)),
        )
        if found
    ]
    return f"embeddings with wrong indices ({'; '.join(parts)})"


def _items(data: list[object]) -> list[SimpleNamespace]:
    """A reply's `data` items as objects with `index` and `embedding` (None where an item lacks them)."""
    return [
        SimpleNamespace(index=d.get("index"), embedding=d.get("embedding"))
        if isinstance(d, dict)
        else SimpleNamespace(index=None, embedding=None)
        for d in data
    ]


def _listing(values: Sequence[object], most: int = 5) -> str:
    shown = ", ".join(map(repr, values[:most]))
    return shown + (f" and {len(values) - most} more" if len(values) > most else "")


def _numbers(embedding: object) -> np.ndarray | None:
    """One embedding as float32 values (a value past float32's range becomes inf, and is refused as such);
    None when it is not a non-empty flat list of JSON numbers. numpy alone would take "0.1" and true for
    numbers: an endpoint sending strings (all one vector, say) would be scored, and cached, as a model."""
    if not isinstance(embedding, list) or not set(map(type, embedding)) <= {float, int}:  # bool is not int here
        return None
    try:
        with np.errstate(over="ignore"):
            row = np.asarray(embedding, dtype=np.float64).astype(np.float32)
    except (TypeError, ValueError, OverflowError):  # OverflowError: a JSON integer past float64's range
        return None
    return row if row.ndim == 1 and row.size else None


def public_url(url: str) -> str:
    """`url` without user:password@ and without a query string (which may carry a key)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def endpoint_query(url: str) -> str:
    """The part of `url`'s query string that selects what answers (`deployment=a`, `api-version=...`): its
    parameters sorted, those named like a credential (`bench.core.redact.credential_param`: api-key, sig, token,
    ...) left out: they authorise, they do not select, and a key must not reach the cache file even hashed.
    Empty when nothing is left."""
    pairs = parse_qsl(urlsplit(url).query, keep_blank_values=True)
    return urlencode(sorted((k, v) for k, v in pairs if not credential_param(k)))


def plan_requests(
    inputs: list[str], *, max_inputs: int, max_tokens: int, count: Callable[[str], int]
) -> Iterator[list[str]]:
    """Split `inputs`, in order, into requests of at most `max_inputs` texts and `max_tokens` tokens.

    An input larger than the whole budget goes alone (the endpoint then says what it allows).
    """
    batch: list[str] = []
    used = 0
    for text in inputs:
        n = count(text)
        if batch and (len(batch) >= max_inputs or used + n > max_tokens):
            yield batch
            batch, used = [], 0
        batch.append(text)
        used += n
    if batch:
        yield batch


@lru_cache(maxsize=8)
def _tiktoken_encoding(model_id: str) -> Any:
    """tiktoken's encoding for the model (cl100k_base for unknown ones), or None if tiktoken is unusable."""
    try:
        import tiktoken  # type: ignore[import-not-found, unused-ignore]  # optional; typed where it is installed
    except ImportError:
        return None
    try:
        try:
            return tiktoken.encoding_for_model(model_id)
        except KeyError:
            return tiktoken.get_encoding("cl100k_base")
    except Exception as e:  # noqa: BLE001 - an optional component: any failure (offline fetch, cache, its own) means the heuristic
        logger.info(
            "tiktoken is installed but its encoding is unavailable (%s); counting tokens by heuristic.",
            type(e).__name__,
        )
        return None


def token_method(model_id: str) -> str:
    encoding = _tiktoken_encoding(model_id)
    return f"tiktoken {encoding.name}" if encoding is not None else f"heuristic: ceil(characters / {CHARS_PER_TOKEN})"


def count_tokens(model_id: str, text: str) -> int:
    """Tokens of one text: tiktoken when available, else ceil(len(text) / 4) (the documented heuristic)."""
    encoding = _tiktoken_encoding(model_id)
    if encoding is not None:
        return len(encoding.encode(text, disallowed_special=()))
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def budget_tokens(model_id: str, text: str) -> int:
    """Tokens of one text for the request budget: exact with tiktoken, else its UTF-8 byte count.

    A byte-level BPE never yields more tokens than bytes, so without tiktoken a request stays within
    the budget, at the price of some extra requests.
    """
    encoding = _tiktoken_encoding(model_id)
    if encoding is not None:
        return len(encoding.encode(text, disallowed_special=()))
    return len(text.encode("utf-8"))


def _count(value: object) -> int:
    """A count of an earlier ledger (`usage(since=...)`): 0 where it has none."""
    return int(value) if isinstance(value, int | float | str) and value else 0
