"""Harness encoding vs. bare SentenceTransformer.encode on the same real sentences; prints the ratio.

    python benchmarks/encode_overhead.py [--n 5000] [--repeats 3] [--raw ../shared/data/raw]

Sentences: unique STS-B (train+dev+test) sentences, then BANKING77, in file order. Variants, run
interleaved so machine noise hits each alike:
    bare           SentenceTransformer.encode(texts, batch_size)
    harness        SentenceTransformerEncoder.encode_inputs, cache off (dedup, length sort, groups, checks)
    harness+cache  the same, writing every vector to a fresh on-disk cache (a cold first run)
    mteb           MTEB's own implementation of MiniLM (SentenceTransformerEncoderWrapper.encode on
                   MTEB's dataloader of the texts, for STSBenchmark)
    mteb family    the same call through the harness's `mteb` family (the default model), cache off:
                   MTEB's wrapper calling the harness in place of its SentenceTransformer
Target: harness overhead under 5% (harness vs bare, mteb family vs mteb).
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]


def real_sentences(raw: Path, n: int) -> list[str]:
    seen: dict[str, None] = {}
    sts = raw / "SynWMD/data/downstream/STS/STSBenchmark/stsbenchmark"
    for name in ("sts-train.csv", "sts-dev.csv", "sts-test.csv"):
        with (sts / name).open(encoding="utf-8") as f:
            for row in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
                if len(row) >= 7:
                    seen.update(dict.fromkeys(s.strip() for s in row[5:7] if s.strip()))
    with (raw / "task-specific-datasets/banking_data/train.csv").open(encoding="utf-8") as f:
        seen.update(dict.fromkeys(r["text"].strip() for r in csv.DictReader(f)))
    texts = list(seen)
    if len(texts) < n:
        raise SystemExit(f"only {len(texts)} unique sentences under {raw}")
    return texts[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--raw", type=Path, default=ROOT.parent / "shared" / "data" / "raw")
    args = parser.parse_args()

    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    from bench.adapters.registry import MODELS
    from bench.adapters.sentence_transformers import SentenceTransformerEncoder

    texts = real_sentences(args.raw, args.n)
    path = MODELS["all-MiniLM-L6-v2"].path()
    bare_model = SentenceTransformer(path, device=args.device)
    inputs = [["", t] for t in texts]

    def bare() -> np.ndarray:
        return bare_model.encode(texts, batch_size=args.batch_size, show_progress_bar=False)

    def harness(use_cache: bool) -> np.ndarray:
        with tempfile.TemporaryDirectory() as cache_dir:
            enc = SentenceTransformerEncoder(
                path,
                template="none",
                device=args.device,
                use_cache=use_cache,
                cache_dir=cache_dir,
                batch_size=args.batch_size,
                show_progress_bar=False,
            )
            enc.model, enc._loaded = bare_model, True  # same weights object: time the machinery, not loading
            return enc.encode_inputs(inputs)

    import mteb
    from datasets import Dataset
    from mteb._create_dataloaders import create_dataloader
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    from bench.adapters.registry import load_model

    sts = mteb.get_task("STSBenchmark").metadata
    call = {
        "task_metadata": sts,
        "hf_split": "test",
        "hf_subset": "default",
        "batch_size": args.batch_size,
        "show_progress_bar": False,
    }
    mtebs = SentenceTransformerEncoderWrapper(bare_model)

    def loader():  # MTEB's dataloader of the texts, made anew for each call as MTEB's evaluators do
        return create_dataloader(
            Dataset.from_dict({"text": texts}), task_metadata=sts, input_column="text", batch_size=args.batch_size
        )

    family = load_model(
        "all-MiniLM-L6-v2", use_cache=False, device=args.device, batch_size=args.batch_size, show_progress_bar=False
    )
    family.ensure_loaded()
    family.st = bare_model  # same weights object, as above

    def family_encode() -> np.ndarray:
        family._memo = None  # the in-process memo would serve every repeat after the first
        return np.asarray(family.encode(loader(), **call))

    variants = {
        "bare": bare,
        "harness": lambda: harness(False),
        "harness+cache": lambda: harness(True),
        "mteb": lambda: np.asarray(mtebs.encode(loader(), **call)),
        "mteb family": family_encode,
    }
    bare()  # warm-up
    times: dict[str, list[float]] = {k: [] for k in variants}
    outputs = {}
    for _ in range(args.repeats):
        for name, fn in variants.items():
            tick = time.perf_counter()
            outputs[name] = fn()
            times[name].append(time.perf_counter() - tick)

    drift = max(float(np.abs(outputs[k] - outputs["bare"]).max()) for k in variants)
    print(
        f"{len(texts)} unique real sentences, all-MiniLM-L6-v2, batch {args.batch_size}, device {args.device}, "
        f"torch threads {torch.get_num_threads()}, repeats {args.repeats}"
    )
    print(f"{'variant':<15}{'median s':>10}{'min s':>10}{'sent/s':>10}{'vs bare':>10}")
    base = statistics.median(times["bare"])
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:<15}{med:>10.2f}{min(ts):>10.2f}{len(texts) / med:>10.0f}{med / base:>10.3f}")
    print(f"mteb family vs mteb: {statistics.median(times['mteb family']) / statistics.median(times['mteb']):.3f}")
    print(f"max |harness - bare| = {drift:.2e}")


if __name__ == "__main__":
    main()
