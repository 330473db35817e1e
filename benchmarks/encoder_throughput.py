"""Sentences/s of the harness vs sentence-transformers' own encode, on a 335M roberta-large-sized
encoder (random weights from a config; speed does not depend on the values), fp32 and bf16, and a
1B-class causal LM readout (random Llama config, 1st-gen = one forward pass).

    python benchmarks/encoder_throughput.py [--n 256] [--lm-n 16] [--device cpu] [--skip-lm]

Both sides of each comparison run in the same process on the same model object and sentences
(STS-B test), interleaved. On CPU keep the samples small; bf16 on CPU is usually slower than fp32.
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
ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT.parent / "shared" / "data" / "raw"


def sentences(n: int) -> list[str]:
    seen: dict[str, None] = {}
    with (RAW / "SynWMD/data/downstream/STS/STSBenchmark/stsbenchmark/sts-test.csv").open(encoding="utf-8") as f:
        for row in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            if len(row) >= 7:
                seen.update(dict.fromkeys(s.strip() for s in row[5:7] if s.strip()))
    return list(seen)[:n]


def roberta_large_dir(minilm: str) -> str:
    """A roberta-large-sized encoder (24 layers, 1024 hidden, 335M params) with MiniLM's tokenizer."""
    from sentence_transformers import SentenceTransformer, models
    from transformers import AutoTokenizer, BertConfig, BertModel

    out = tempfile.mkdtemp(prefix="enc335m-")
    config = BertConfig(
        vocab_size=30522,
        hidden_size=1024,
        num_hidden_layers=24,
        num_attention_heads=16,
        intermediate_size=4096,
        max_position_embeddings=514,
    )
    BertModel(config).save_pretrained(out)
    AutoTokenizer.from_pretrained(minilm).save_pretrained(out)
    word = models.Transformer(out, max_seq_length=256)
    SentenceTransformer(modules=[word, models.Pooling(1024, "mean")]).save(out)
    return out


def timed(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        tick = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - tick)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--lm-n", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--skip-lm", action="store_true")
    args = parser.parse_args()

    import torch

    from bench.adapters.registry import MODELS
    from bench.adapters.sentence_transformers import SentenceTransformerEncoder

    texts = sentences(args.n)
    path = roberta_large_dir(MODELS["all-MiniLM-L6-v2"].path())
    print(f"torch {torch.__version__}, device {args.device}, {torch.get_num_threads()} threads; {len(texts)} sentences")
    for dtype in ("float32", "bfloat16"):
        enc = SentenceTransformerEncoder(
            path,
            template="none",
            dtype=dtype,
            device=args.device,
            use_cache=False,
            batch_size=args.batch_size,
            show_progress_bar=False,
        )
        enc.ensure_loaded()
        inputs = [enc.render(t, None, None) for t in texts]
        bare = timed(
            lambda enc=enc: enc.model.encode(texts, batch_size=args.batch_size, show_progress_bar=False), args.repeats
        )
        ours = timed(lambda enc=enc, inputs=inputs: enc.encode_inputs(inputs), args.repeats)
        print(
            f"335M encoder {dtype:8s}: sentence-transformers {len(texts) / bare:7.1f}/s, harness {len(texts) / ours:7.1f}/s, "
            f"harness/ST time {ours / bare:.3f}"
        )
        del enc
    if args.skip_lm:
        return
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from bench.adapters.generative import GenerativeEncoder

    config = LlamaConfig(
        vocab_size=32000,
        hidden_size=2048,
        intermediate_size=5632,
        num_hidden_layers=22,
        num_attention_heads=32,
        num_key_value_heads=4,
    )  # TinyLlama-1.1B shape
    lm = GenerativeEncoder(
        "random-llama-1.1b",
        revision="random",
        pooling="1st-gen",
        architecture="causal",
        device=args.device,
        use_cache=False,
        batch_size=8,
        show_progress_bar=False,
    )
    lm.model = LlamaForCausalLM(config).eval().to(args.device)  # random weights, built in memory
    lm.tokenizer = AutoTokenizer.from_pretrained(
        MODELS["all-MiniLM-L6-v2"].path(), padding_side="left", truncation_side="left"
    )
    lm._loaded = True
    prompts = [lm.render(t, "What is the sentence about?", None) for t in texts[: args.lm_n]]
    secs = timed(lambda: lm.encode_inputs(prompts), 1)
    print(f"1.1B causal LM 1st-gen float32: {len(prompts) / secs:.2f} prompts/s ({len(prompts)} prompts, {secs:.1f} s)")


if __name__ == "__main__":
    main()
