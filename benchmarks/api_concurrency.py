"""Requests/s of the OpenAI-compatible family, sequential (max_concurrency=1) vs concurrent, against the
local fake server (tests/fake_openai.py) with an artificial per-request latency; prints the ratio.

    python benchmarks/api_concurrency.py [--latency 0.05] [--requests 64] [--concurrency 4] [--repeats 3]

Each request carries `--per-request` synthetic texts (batch_size), so a group (batch_size x 8 inputs,
bench/adapters/base.py) is 8 requests; the cache is off, so every text is sent. Variants run interleaved so
machine noise hits each alike; the best of `--repeats` runs of each is reported. With latency L, the
sequential ceiling is 1/L requests/s and the concurrent one min(concurrency, 8)/L.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds the server waits per request")
    parser.add_argument("--requests", type=int, default=64, help="requests per run (a multiple of 8 fills groups)")
    parser.add_argument("--per-request", type=int, default=4, help="texts per request (batch_size)")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    from bench.adapters.openai_api import OpenAIEmbeddingEncoder
    from fake_openai import FakeOpenAI

    server = FakeOpenAI(api_key=None).start()
    server.latency = args.latency
    n = args.requests * args.per_request
    best: dict[int, float] = {}
    in_flight: dict[int, int] = {}
    try:
        for repeat in range(args.repeats):
            for limit in (1, args.concurrency):
                texts = [f"run {repeat} limit {limit} text {i:05d}" for i in range(n)]  # one length: plan order kept
                enc = OpenAIEmbeddingEncoder(
                    "fake",
                    base_url=server.base_url,
                    batch_size=args.per_request,
                    max_concurrency=limit,
                    use_cache=False,
                    show_progress_bar=False,
                )
                enc.ensure_loaded()  # the client's import and set-up are not request time
                server.max_in_flight = 0
                tick = time.perf_counter()
                enc.encode_inputs(texts, show=False)
                seconds = time.perf_counter() - tick
                assert enc.usage()["requests"] == args.requests, enc.usage()
                rate = args.requests / seconds
                best[limit] = max(best.get(limit, 0.0), rate)
                in_flight[limit] = max(in_flight.get(limit, 0), server.max_in_flight)
                print(
                    f"repeat {repeat + 1}: max_concurrency={limit:<3} {rate:7.1f} requests/s "
                    f"(max in flight {server.max_in_flight})"
                )
    finally:
        server.close()
    seq, conc = best[1], best[args.concurrency]
    print(
        f"\n{args.requests} requests of {args.per_request} texts, {args.latency * 1000:g} ms server latency, "
        f"best of {args.repeats}:"
    )
    print(f"  max_concurrency=1: {seq:7.1f} requests/s (ceiling {1 / args.latency:.1f})")
    print(
        f"  max_concurrency={args.concurrency}: {conc:7.1f} requests/s (ceiling "
        f"{min(args.concurrency, 8) / args.latency:.1f}; max in flight {in_flight[args.concurrency]})"
    )
    print(f"  ratio: {conc / seq:.2f}x")


if __name__ == "__main__":
    main()
