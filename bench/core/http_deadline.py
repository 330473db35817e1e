"""A deadline for one whole HTTP attempt (connect, send, every read) of the `openai` client.

Why: the `timeout` of httpx (and httpx2, which `openai` uses) bounds each socket operation, not the
request: an endpoint that trickles one byte a second answers every read in time and holds a request
for ever, so "fails within 2 minutes" would not hold. `deadline_client(seconds)` is the `openai`
package's default HTTP client with each `send` bounded by `seconds` in total. One `send` is one attempt
of the `openai` client's retry loop (redirects and the reading of the body included, as nothing is
streamed); every socket operation inside it waits at most what is left of its deadline, and none starts
after it. A missed deadline is the transport's own timeout error, so the `openai` client retries it and
finally raises `APITimeoutError`, exactly as for an endpoint that sends nothing.

How: the deadline is per thread (requests run on several), and the connection pools' network backend is
wrapped to clamp each operation's timeout to it. The backend sits on a private attribute of the
transport (`_pool._network_backend`, the same in httpx and httpx2); where a future version lacks it, the
client still works with per-operation timeouts only, and says so once in the log.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

logger = logging.getLogger(__name__)

_local = threading.local()


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


class _Stream:
    """A network stream whose every read, write and TLS handshake respects the thread's deadline."""

    def __init__(self, stream: Any, errors: Any) -> None:
        self._stream = stream
        self._errors = errors  # the httpcore module whose exceptions the transport maps

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _left(timeout, self._errors.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _left(timeout, self._errors.WriteTimeout))

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> _Stream:
        tls = self._stream.start_tls(ssl_context, server_hostname, _left(timeout, self._errors.ConnectTimeout))
        return _Stream(tls, self._errors)

    def __getattr__(self, name: str) -> Any:  # close, get_extra_info, ...
        return getattr(self._stream, name)


class _Backend:
    """A network backend whose connections are `_Stream`s."""

    def __init__(self, backend: Any, errors: Any) -> None:
        self._backend = backend
        self._errors = errors

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> _Stream:
        left = _left(timeout, self._errors.ConnectTimeout)
        return _Stream(self._backend.connect_tcp(host, port, left, local_address, socket_options), self._errors)

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> _Stream:
        left = _left(timeout, self._errors.ConnectTimeout)
        return _Stream(self._backend.connect_unix_socket(path, left, socket_options), self._errors)

    def __getattr__(self, name: str) -> Any:  # sleep, ...
        return getattr(self._backend, name)


def _install(client: Any) -> bool:
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


def deadline_client(seconds: float) -> Any:
    """The `openai` package's default HTTP client with each attempt bounded by `seconds` in total."""
    import openai

    class DeadlineClient(openai.DefaultHttpxClient):
        def send(self, request: Any, **kwargs: Any) -> Any:
            with attempt_deadline(seconds):
                return super().send(request, **kwargs)

    client = DeadlineClient()
    if not _install(client):
        logger.warning(
            "This httpx version hides its network backend: an endpoint that answers slowly but "
            "steadily is bounded per read (%g s), not per attempt.",
            seconds,
        )
    return client
