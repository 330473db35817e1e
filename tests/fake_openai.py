"""A local OpenAI-compatible HTTP server for tests: real HTTP, scripted failures, recorded requests.

The `openai` client talks to it exactly as it talks to api.openai.com, so retries, status codes and
JSON parsing are exercised for real. Default replies:
  POST /v1/embeddings        deterministic unit vectors from a hash of each input; usage counts words
  POST /v1/chat/completions  `chat_handler(request_json) -> str` (default: echo of the last user message)
  GET  /v1/models            one model
Queue failures with `fail(path, status, times)`, or fail every request carrying a given input with
`fail_input(text, status)`; a wrong bearer key gets 401 when `api_key` is set. 429s carry `retry_after`
(a Retry-After value, "0" by default: the client's own backoff) and `retry_after_ms` when set.
`latency` (seconds) delays every reply; `max_in_flight` is the most requests it was handling at once.
`spoil(body, items)` (None by default) may spoil an embeddings reply's items in place (vectors as
strings, wrong indices), for the requests whose body it chooses.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

EMBED_DIM = 16
# How often the serving loop looks for `shutdown()`: `close()` waits up to this long. socketserver's default,
# 0.5 s, made each test that closes a server half a second longer (about 150 tests do).
POLL_INTERVAL = 0.01


def fake_vector(text: str, dim: int = EMBED_DIM) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    v = np.random.default_rng(seed).standard_normal(dim)
    return (v / np.linalg.norm(v)).tolist()


class FakeOpenAI:
    def __init__(self, *, api_key: str | None = "test-key", dim: int = EMBED_DIM) -> None:
        self.api_key = api_key
        self.dim = dim
        self.requests: list[dict[str, Any]] = []
        self.chat_handler: Callable[[dict[str, Any]], str] = lambda req: req["messages"][-1]["content"]
        self.spoil: Callable[[dict[str, Any], list[dict[str, Any]]], None] | None = None
        self._failures: dict[str, deque[int]] = defaultdict(deque)
        self._input_failures: dict[str, int] = {}
        self.latency = 0.0
        self.retry_after = "0"
        self.retry_after_ms: str | None = None
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": POLL_INTERVAL}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def fail(self, path: str, status: int, times: int = 1) -> None:
        """The next `times` requests to `path` (e.g. "/v1/embeddings") get `status`."""
        self._failures[path].extend([status] * times)

    def fail_input(self, text: str, status: int | None) -> None:
        """Every request whose input list holds `text` gets `status` (retried requests too); None: no more."""
        if status is None:
            self._input_failures.pop(text, None)
        else:
            self._input_failures[text] = status

    def calls(self, path: str) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["path"] == path]

    # -- replies ------------------------------------------------------------------------------------
    def _reply(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if path == "/v1/embeddings":
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            data = [
                {"object": "embedding", "index": i, "embedding": fake_vector(str(t), self.dim)}
                for i, t in enumerate(inputs)
            ]
            if self.spoil is not None:
                self.spoil(body, data)
            tokens = sum(len(str(t).split()) for t in inputs)
            return 200, {
                "object": "list",
                "data": data,
                "model": body.get("model", "fake"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        if path == "/v1/chat/completions":
            text = self.chat_handler(body)
            prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
            completion_tokens = len(text.split())
            return 200, {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "fake"),
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            }
        if path == "/v1/models":
            return 200, {
                "object": "list",
                "data": [{"id": "fake", "object": "model", "created": 0, "owned_by": "test"}],
            }
        return 404, {"error": {"message": f"unknown path {path}", "type": "invalid_request_error"}}

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _respond(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                path = self.path.split("?")[0]
                with server._lock:
                    server.requests.append({"path": path, "body": body, "headers": dict(self.headers)})
                    failure = server._failures[path].popleft() if server._failures[path] else None
                    inputs = body.get("input") if isinstance(body, dict) else None
                    for text in inputs if isinstance(inputs, list) else [inputs]:
                        if failure is None and isinstance(text, str) and text in server._input_failures:
                            failure = server._input_failures[text]
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    if server.latency:
                        time.sleep(server.latency)
                finally:  # out of flight before the reply leaves, so a client's next request never overlaps it
                    with server._lock:
                        server.in_flight -= 1
                self._answer(path, body, failure)

            def _answer(self, path: str, body: Any, failure: int | None) -> None:
                if server.api_key and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    status, payload = (
                        401,
                        {
                            "error": {
                                "message": "Incorrect API key provided",
                                "type": "invalid_request_error",
                                "code": "invalid_api_key",
                            }
                        },
                    )
                elif failure is not None:
                    status, payload = (
                        failure,
                        {"error": {"message": f"scripted failure {failure}", "type": "server_error"}},
                    )
                else:
                    status, payload = server._reply(path, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 429:
                    self.send_header("Retry-After", server.retry_after)
                    if server.retry_after_ms is not None:
                        self.send_header("Retry-After-Ms", server.retry_after_ms)
                self.end_headers()
                self.wfile.write(data)

            do_POST = _respond
            do_GET = _respond

        return Handler
