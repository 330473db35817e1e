"""Bounded HTTP requests for the `openai` client: each attempt, each whole request, and Ctrl-C.

Why: the `timeout` of httpx (and httpx2, which `openai` uses) bounds each socket operation, not the
request: an endpoint that trickles one byte a second answers every read in time and holds a request
for ever, so "fails within 2 minutes" would not hold. Nor would it with the client's retries alone: it
honours a server's Retry-After up to 2 minutes a wait, and `Retry-After: 119` held one request 676 s
over 6 attempts. Nor with a host name: the C resolver behind `getaddrinfo` has no timeout at all.

* Each attempt: `deadline_client(seconds)` is the `openai` package's default HTTP client with each `send`
  bounded by `seconds` in total. One `send` is one attempt of the `openai` client's retry loop
  (redirects and the reading of the body included, as nothing is streamed); every socket operation
  inside it, the look-up of the host name included, waits at most what is left of its deadline, and
  none starts after it. A missed deadline is the transport's own timeout error, so the `openai` client
  retries it and finally raises `APITimeoutError`, exactly as for an endpoint that sends nothing.
* Each request: `request_budget(timeout, max_retries)`, around one call of the `openai` client, gives all
  its attempts and the waits between them `failure_bound_s` in total (the attempts' timeouts plus the
  client's own backoff, the bound the docs state). A retry is let happen only when its wait ends within
  that deadline, and a wait longer than the client's own backoff (a Retry-After) only when one whole
  attempt fits after it; otherwise the client gets its final error at once (`x-should-retry: false` on
  the reply, the header its retry rule obeys, or the error it would raise after its last attempt). The
  budget counts the attempts really made, and the wait a server asked for that did not fit, for the
  error line.
* Ctrl-C: `run_in_order` runs requests on daemon threads that the calling thread waits for in short
  steps, so a KeyboardInterrupt stops the process at once, whatever the endpoint does.

How: the deadlines are per thread (requests run on several), and the connection pools' network backend
is wrapped to clamp each operation's timeout to the attempt's deadline and to look the host up on a
daemon thread waited for no longer. The backend sits on a private attribute of the transport
(`_pool._network_backend`, the same in httpx and httpx2); where a future version lacks it, the client
still works with per-operation timeouts only, and says so once in the log.
"""

from __future__ import annotations

import contextlib
import email.utils
import functools
import importlib
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    import ssl
    from types import ModuleType

    import openai

logger = logging.getLogger(__name__)

WAIT_STEP_S = 0.2  # the calling thread waits for requests in steps this long, so Ctrl-C reaches it at once
RETRIED_STATUSES = (408, 409, 429)  # and every 5xx: what the `openai` client retries
T = TypeVar("T")
R = TypeVar("R")

_local = threading.local()


class _Reply(Protocol):
    """What the retry decision reads of an HTTP response (httpx's, or httpx2's)."""

    status_code: int

    @property
    def headers(self) -> MutableMapping[str, str]: ...


Reply = TypeVar("Reply", bound=_Reply)


@contextlib.contextmanager
def attempt_deadline(seconds: float) -> Iterator[None]:
    """Socket operations of this thread end `seconds` from now at the latest (nested: the earlier wins)."""
    outer = getattr(_local, "deadline", None)
    mine = time.monotonic() + seconds
    _local.deadline = mine if outer is None else min(outer, mine)
    try:
        yield
    finally:
        _local.deadline = outer


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    """`timeout` clamped to this thread's deadline; `error` (a timeout of the transport) once it has passed."""
    deadline = getattr(_local, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise error("the attempt's deadline passed")
    return left if timeout is None else min(timeout, left)


# ---------------------------------------------------------------------------------------------- requests
def backoff_s(retry: int) -> float:
    """The longest the `openai` client sleeps before retry number `retry` (0-based) when no Retry-After
    is honoured: exponential, capped (its jitter only shortens it)."""
    from openai._constants import INITIAL_RETRY_DELAY, MAX_RETRY_DELAY

    return float(min(INITIAL_RETRY_DELAY * 2**retry, MAX_RETRY_DELAY))


def failure_bound_s(timeout: float, max_retries: int) -> float:
    """The longest one request may take, all attempts and waits together: every attempt's `timeout`
    plus the client's backoff between them. A Retry-After is honoured only within it."""
    return (max_retries + 1) * timeout + sum(backoff_s(k) for k in range(max_retries))


@dataclass
class RequestBudget:
    """One request's limits, and what happened to it: the attempts sent, and a server's wait that did
    not fit in what was left (so the error line can say why the retries stopped)."""

    timeout: float
    max_retries: int
    bound_s: float
    deadline: float
    attempts: int = 0
    refused_wait: float | None = None  # seconds a server asked to wait, beyond what was left
    cut_short: bool = False  # the deadline, not max_retries, ended the retries

    def left(self) -> float:
        return self.deadline - time.monotonic()

    @property
    def retries_left(self) -> bool:
        """Whether the `openai` client would retry after the attempt just made (it makes 1 + max_retries)."""
        return self.attempts <= self.max_retries

    def allows(self, wait: float) -> bool:
        """Whether a retry after `wait` seconds keeps the request within its deadline: the client's own
        backoff needs only to end before it; a longer wait (a Retry-After), one whole attempt after it too."""
        left = self.left()
        return wait < left and (wait <= backoff_s(self.attempts - 1) or wait + self.timeout <= left)

    def summary(self) -> str:
        """`N retries (M attempt(s))`, as made, and why the retries stopped early when they did."""
        return f"{max(self.attempts - 1, 0)} retries ({self.attempts} attempt(s)){self.stopped_early()}"

    def stopped_early(self) -> str:
        """Why the retries stopped before `max_retries` ("; ..."), or "" when they did not."""
        if self.refused_wait is not None:
            return f"; it asked to wait {self.refused_wait:g} s more, past this request's limit of {self.bound_s:g} s"
        if self.cut_short:
            return f"; another would pass this request's limit of {self.bound_s:g} s"
        return ""


@contextlib.contextmanager
def request_budget(timeout: float, max_retries: int) -> Iterator[RequestBudget]:
    """One request of this thread (all its attempts and waits) within `failure_bound_s`; see module docstring."""
    bound = failure_bound_s(timeout, max_retries)
    budget = RequestBudget(timeout, max_retries, bound, time.monotonic() + bound)
    outer = getattr(_local, "budget", None)
    _local.budget = budget
    try:
        yield budget
    finally:
        _local.budget = outer


def _retry_after_s(headers: Mapping[str, str]) -> float | None:
    """The wait a reply asks for, in seconds, as the `openai` client reads it (Retry-After-Ms first, then
    Retry-After as seconds or an HTTP date); None when it asks none."""
    for name, divisor in (("retry-after-ms", 1000), ("retry-after", 1)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) / divisor
        except ValueError:
            continue
    when = email.utils.parsedate_tz(headers.get("retry-after") or "")
    return None if when is None else float(email.utils.mktime_tz(when) - time.time())


def _retry_after_limit() -> tuple[float, bool]:
    """(the longest Retry-After the `openai` client honours, whether it refuses to retry after a longer
    one): its MAX_RETRY_AFTER_DELAY (120 s) and yes; 60 s and no (it backs off instead) in versions before it."""
    from openai import _constants

    limit = getattr(_constants, "MAX_RETRY_AFTER_DELAY", None)
    return (float(limit), True) if limit is not None else (60.0, False)


def _client_retries(response: _Reply, asked: float | None) -> bool:
    """Whether the `openai` client retries after `response` (its `_should_retry`, retries left aside)."""
    limit, refuses_longer = _retry_after_limit()
    if refuses_longer and asked is not None and asked > limit:
        return False
    flag = response.headers.get("x-should-retry")
    if flag in ("true", "false"):
        return bool(flag == "true")
    return bool(response.status_code in RETRIED_STATUSES or response.status_code >= 500)


def _hold_within(response: _Reply, budget: RequestBudget) -> None:
    """Tell the client not to retry after `response` when the wait it would take does not fit the budget."""
    if response.status_code < 400 or not budget.retries_left:
        return
    asked = _retry_after_s(response.headers)
    limit, _ = _retry_after_limit()
    if not _client_retries(response, asked):
        budget.refused_wait = asked if asked is not None and asked > limit else None
        return
    honoured = asked if asked is not None and 0 < asked <= limit else None
    if not budget.allows(backoff_s(budget.attempts - 1) if honoured is None else honoured):
        response.headers["x-should-retry"] = "false"
        budget.refused_wait, budget.cut_short = honoured, True


def _attempt(budget: RequestBudget, seconds: float, send: Callable[[], Reply], request: Any, http: ModuleType) -> Reply:
    """One attempt of a request within its budget. A failure after which the client would back off
    past the deadline is handed over as the client's final error (an `OpenAIError`, which it raises as
    it is, with no further retry or sleep)."""
    import openai

    budget.attempts += 1
    try:
        with attempt_deadline(min(seconds, budget.left())):
            response = send()
    except (http.RequestError, OSError) as e:  # what the client retries after its backoff
        if budget.retries_left and not budget.allows(backoff_s(budget.attempts - 1)):
            budget.cut_short = True
            timed_out = isinstance(e, http.TimeoutException)
            raise (openai.APITimeoutError if timed_out else openai.APIConnectionError)(request=request) from e
        raise
    _hold_within(response, budget)
    return response


# ---------------------------------------------------------------------------------------------- sockets
class _Stream:
    """A network stream whose every read, write and TLS handshake respects the thread's deadline."""

    def __init__(self, stream: Any, errors: ModuleType) -> None:
        self._stream = stream
        self._errors = errors  # the httpcore module whose exceptions the transport maps

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _left(timeout, self._errors.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _left(timeout, self._errors.WriteTimeout))

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> _Stream:
        tls = self._stream.start_tls(ssl_context, server_hostname, _left(timeout, self._errors.ConnectTimeout))
        return _Stream(tls, self._errors)

    def __getattr__(self, name: str) -> Any:  # close, get_extra_info, ...
        return getattr(self._stream, name)


def _resolve(host: str, port: int, seconds: float | None, errors: ModuleType) -> list[str]:
    """`host`'s addresses, in the resolver's order. Looked up on a daemon thread waited for at most
    `seconds`: `getaddrinfo` has no timeout, and a resolver that never answers would hold the attempt
    (and the process, at exit) for ever; an abandoned look-up ends with the process."""
    found: list[Any] = []

    def look_up() -> None:
        try:
            found.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except OSError as e:  # handed to the caller's thread
            found.append(e)

    thread = threading.Thread(target=look_up, name=f"resolve-{host}", daemon=True)
    thread.start()
    thread.join(seconds)
    if not found:
        raise errors.ConnectTimeout(f"looking up {host} took longer than the attempt's deadline")
    if isinstance(found[0], OSError):
        raise errors.ConnectError(str(found[0]))
    return list(dict.fromkeys(str(info[4][0]) for info in found[0]))


class _Backend:
    """A network backend whose connections are `_Stream`s, and whose host look-ups keep the deadline."""

    def __init__(self, backend: Any, errors: ModuleType) -> None:
        self._backend = backend
        self._errors = errors

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: object = None,
    ) -> _Stream:
        """Like `socket.create_connection`, which the backend uses: each address in turn until one
        connects, the look-up and every try within the deadline."""
        addresses = _resolve(host, port, _left(timeout, self._errors.ConnectTimeout), self._errors)
        failure: Exception | None = None
        for address in addresses:
            left = _left(timeout, self._errors.ConnectTimeout)
            try:
                stream = self._backend.connect_tcp(address, port, left, local_address, socket_options)
            except (self._errors.ConnectError, self._errors.ConnectTimeout) as e:
                failure = e
                continue
            return _Stream(stream, self._errors)
        raise failure or self._errors.ConnectError(f"{host} has no address")

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: object = None) -> _Stream:
        left = _left(timeout, self._errors.ConnectTimeout)
        return _Stream(self._backend.connect_unix_socket(path, left, socket_options), self._errors)

    def __getattr__(self, name: str) -> Any:  # sleep, ...
        return getattr(self._backend, name)


def _install(client: object) -> bool:
    """Wrap the network backend of every connection pool of `client` (its transport and proxy mounts)."""
    transports = [getattr(client, "_transport", None), *getattr(client, "_mounts", {}).values()]
    pools: list[Any] = [getattr(t, "_pool", None) for t in transports if t is not None]
    if not pools or not all(hasattr(pool, "_network_backend") for pool in pools):
        return False
    for pool in pools:
        if not isinstance(pool._network_backend, _Backend):
            errors = importlib.import_module(type(pool).__module__.split(".")[0])  # httpcore or httpcore2
            pool._network_backend = _Backend(pool._network_backend, errors)
    return True


def deadline_client(seconds: float) -> openai.DefaultHttpxClient:
    """The `openai` package's default HTTP client with each attempt bounded by `seconds` in total, and,
    inside a `request_budget`, each request by its budget (see module docstring)."""
    import openai

    http = importlib.import_module(openai.DefaultHttpxClient.__mro__[1].__module__.split(".")[0])  # httpx(2)

    class DeadlineClient(openai.DefaultHttpxClient):
        def send(self, request: Any, **kwargs: Any) -> Any:
            budget: RequestBudget | None = getattr(_local, "budget", None)
            if budget is None:
                with attempt_deadline(seconds):
                    return super().send(request, **kwargs)
            return _attempt(budget, seconds, functools.partial(super().send, request, **kwargs), request, http)

    client = DeadlineClient()
    if not _install(client):
        logger.warning(
            "This httpx version hides its network backend: an endpoint that answers slowly but "
            "steadily is bounded per read (%g s), not per attempt.",
            seconds,
        )
    return client


# ---------------------------------------------------------------------------------------------- Ctrl-C
def run_in_order(fn: Callable[[T], R], items: Sequence[T], workers: int, *, name: str = "request") -> list[R]:
    """`fn(item)` for every item, at most `workers` at once, each on a daemon thread; results in item order.

    Why not a ThreadPoolExecutor: the interpreter joins an executor's threads at exit, so a Ctrl-C with
    requests in flight waited for each to end (over a minute against a slow endpoint, for ever against
    one that trickles). Daemon threads end with the process, and the calling thread waits in short steps
    (`WAIT_STEP_S`), so a KeyboardInterrupt reaches it at once: nothing more is started and the calls in
    flight are abandoned. A failure also starts nothing more, but the calls in flight are awaited (each
    is bounded by its deadline), so what they did (a usage ledger, a cache) is complete; then the error
    of the earliest failed item is raised, the one a sequential loop would have raised. Used by every
    client of an OpenAI-compatible endpoint (`openai:` models, the LLM client of the data builders).
    """
    results: dict[int, R] = {}  # item index -> its result (every index, when no call failed)
    errors: dict[int, BaseException] = {}
    queue = iter(range(len(items)))
    take = threading.Lock()
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            with take:
                i = next(queue, None)
            if i is None:
                return
            try:
                results[i] = fn(items[i])
            except BaseException as e:  # noqa: BLE001 - raised again in the calling thread, traceback and all
                errors[i] = e
                stop.set()

    threads = [threading.Thread(target=work, name=f"{name}-{k}", daemon=True) for k in range(min(workers, len(items)))]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(WAIT_STEP_S)
    except BaseException:  # Ctrl-C: start nothing more; the daemon threads in flight end with the process
        stop.set()
        raise
    if errors:
        raise errors[min(errors)]
    return [results[i] for i in range(len(items))]
