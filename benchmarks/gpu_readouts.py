"""What a real accelerator does where `bench/adapters/standin.py` sleeps: forward-pass throughput on one GPU.

    python benchmarks/gpu_readouts.py [--out results.json]

Random-weight models built from configs (no hub needed; speed does not depend on the weights):

(1) 1st-gen readouts of causal LMs (InBedder's pooling: the last prompt token's hidden state after one
    forward pass of the base model, left padding): a ~1.1B model (TinyLlama's shape) and a 6.7B one
    (Llama-2-7B's shape), bf16, prompts of 40-80 tokens (a FewRel text under an instruction is ~55),
    batch 32 and 128. Reported: prompts/s, padded tokens/s, and MFU = 2 x parameters x tokens/s over the
    card's dense bf16 peak (989 TFLOP/s for an H100/H200 SXM); attention at these lengths adds ~2%.
    The 6.7B tokens/s is what `--tokens-per-s` of benchmarks/scaling.py (e) stands for.
(2) a 335M encoder (BERT-large's shape, mean pooling, as a sentence-transformers model runs), float32
    vs bfloat16, batch 128 at 32 and 128 tokens: texts/s and the mean cosine between the two dtypes'
    vectors (what bf16 changes in the vectors; the harness files a bf16 run as its own experiment).

Only the model's forward pass is timed (CUDA-synchronised, after warm-up): the harness's own work
around it is what benchmarks/scaling.py measures. Needs torch with CUDA and transformers.
"""

from __future__ import annotations

import argparse
import functools
import json
import time

import torch

PEAK_BF16 = 989e12


def timed(fn, repeats: int) -> float:
    """Seconds per call, after two warm-up calls."""
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    tick = time.perf_counter()
    for _ in range(repeats):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - tick) / repeats


def last_token_states(model, ids, mask, positions):
    """The readout: the last (prompt) token's hidden state after one forward pass."""
    with torch.inference_mode():
        return model(input_ids=ids, attention_mask=mask, position_ids=positions).last_hidden_state[:, -1]


def causal_lm(name: str, shape: dict, batches: list[int]) -> list[dict]:
    from transformers import LlamaConfig, LlamaModel

    torch.manual_seed(0)
    config = LlamaConfig(**shape, vocab_size=32000, max_position_embeddings=2048)
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model = LlamaModel(config).eval()
    torch.set_default_dtype(torch.float32)
    params = sum(p.numel() for p in model.parameters())
    rows = []
    for batch in batches:
        lengths = torch.randint(40, 81, (batch,), generator=torch.Generator().manual_seed(batch))
        width = int(lengths.max())
        mask = (torch.arange(width)[None, :] >= width - lengths[:, None]).long().cuda()  # left padding
        ids = torch.randint(3, 32000, (batch, width), device="cuda") * mask
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        # a partial, not a closure: nothing keeps the model alive past `del model` below
        seconds = timed(functools.partial(last_token_states, model, ids, mask, positions), 10)
        tokens = batch * width / seconds
        rows.append(
            {
                "model": name,
                "params_b": round(params / 1e9, 2),
                "dtype": "bfloat16",
                "batch": batch,
                "prompts_per_s": round(batch / seconds, 1),
                "padded_tokens_per_s": round(tokens),
                "mfu": round(2 * params * tokens / PEAK_BF16, 3),
            }
        )
        print(rows[-1], flush=True)
    del model
    torch.cuda.empty_cache()
    return rows


def encoder(batch: int, lengths: list[int]) -> list[dict]:
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
    with torch.device("cuda"):
        model32 = BertModel(config).eval()
    model16 = BertModel(config).eval().to("cuda", torch.bfloat16)
    model16.load_state_dict({k: v.to(torch.bfloat16) for k, v in model32.state_dict().items()})
    params = sum(p.numel() for p in model32.parameters())
    rows = []
    for length in lengths:
        ids = torch.randint(1000, 30000, (batch, length), device="cuda")
        mask = torch.ones_like(ids)
        out = {}
        for dtype, model in (("float32", model32), ("bfloat16", model16)):

            def forward(model=model, ids=ids, mask=mask):
                with torch.inference_mode():
                    hidden = model(input_ids=ids, attention_mask=mask).last_hidden_state
                    return (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)

            seconds = timed(forward, 10)
            out[dtype] = (forward().float(), seconds)
            rows.append(
                {
                    "model": "BERT-large shape",
                    "params_b": round(params / 1e9, 3),
                    "dtype": dtype,
                    "batch": batch,
                    "tokens": length,
                    "texts_per_s": round(batch / seconds, 1),
                }
            )
        cosine = torch.nn.functional.cosine_similarity(out["float32"][0], out["bfloat16"][0]).mean().item()
        rows[-1]["speedup_vs_float32"] = round(out["float32"][1] / out["bfloat16"][1], 2)
        rows[-1]["mean_cosine_vs_float32"] = round(cosine, 5)
        print(rows[-2], rows[-1], sep="\n", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="write the rows as JSON here")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("error: no CUDA device; this benchmark measures a GPU (run it where one is).")
    torch.backends.cuda.matmul.allow_tf32 = False  # float32 means float32
    facts = {"device": torch.cuda.get_device_name(), "gpus": torch.cuda.device_count(), "torch": torch.__version__}
    print(facts, flush=True)
    rows = causal_lm(
        "1.1B (TinyLlama shape)",
        dict(
            hidden_size=2048,
            intermediate_size=5632,
            num_hidden_layers=22,
            num_attention_heads=32,
            num_key_value_heads=4,
        ),
        [32, 128],
    )
    rows += causal_lm(
        "6.7B (Llama-2-7B shape)",
        dict(
            hidden_size=4096,
            intermediate_size=11008,
            num_hidden_layers=32,
            num_attention_heads=32,
            num_key_value_heads=32,
        ),
        [32, 128],
    )
    rows += encoder(128, [32, 128])
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump({"facts": facts, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
