"""GSTransform on AG News: held-out clustering and triplet scores of the base encoder vs the transformed one.

    python benchmarks/gstransform_agnews.py                      # rule-based oracle LLM (gold labels)
    python benchmarks/gstransform_agnews.py --base-url http://127.0.0.1:8765/v1 --llm-model smollm2

Without --base-url the LLM is the local fake server answering from the gold topics (tests/gstransform_oracle.py),
which measures the transform given perfect labels; with --base-url it measures the whole method with that LLM.
Prints V-measure (k-means, k = 4, mean of 3 seeds) and triplet accuracy (cosine; anchor and positive share the
topic) on texts not in the training sample.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

AG_NEWS = ROOT.parent / "shared" / "data" / "raw" / "CharCnn_Keras" / "data" / "ag_news_csv" / "test.csv"
TOPICS = {"1": "World", "2": "Sports", "3": "Business", "4": "Sci/Tech"}
INSTRUCTION = "What is the topic category of this news? Just tell me the category name."  # paper 003, table 7


def load_ag_news(path: Path = AG_NEWS) -> list[tuple[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return [(f"{title}. {desc}".replace("\\", " "), TOPICS[c]) for c, title, desc in csv.reader(f)]


def split(rows: list[tuple[str, str]], n_train: int, n_eval: int, seed: int) -> tuple[list, list]:
    order = np.random.default_rng(seed).permutation(len(rows))
    return [rows[i] for i in order[:n_train]], [rows[i] for i in order[n_train : n_train + n_eval]]


def v_measure(emb: np.ndarray, labels: list[str], seeds: int = 3) -> float:
    from sklearn.cluster import KMeans
    from sklearn.metrics import v_measure_score

    k = len(set(labels))
    return float(
        np.mean([v_measure_score(labels, KMeans(k, random_state=s, n_init=10).fit_predict(emb)) for s in range(seeds)])
    )


def triplet_accuracy(emb: np.ndarray, labels: list[str], n: int = 3000, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    lab = np.asarray(labels)
    e = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    wins = 0
    for _ in range(n):
        a = int(rng.integers(len(lab)))
        pos = np.flatnonzero((lab == lab[a]) & (np.arange(len(lab)) != a))
        neg = np.flatnonzero(lab != lab[a])
        p, q = int(rng.choice(pos)), int(rng.choice(neg))
        wins += float(e[a] @ e[p]) > float(e[a] @ e[q])
    return wins / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", type=int, default=600, help="texts labelled by the LLM (default %(default)s)")
    ap.add_argument("--eval", type=int, default=1000, help="held-out texts scored (default %(default)s)")
    ap.add_argument("--clusters", type=int, default=50)
    ap.add_argument("--base-url")
    ap.add_argument("--llm-model", default="fake")
    ap.add_argument("--work", help="folder for the transform and caches (default: a temporary one)")
    args = ap.parse_args()

    import os

    from bench.adapters.gstransform import GSTransformEncoder, TrainSettings, train_transform
    from bench.adapters.registry import load_model
    from bench.core.llm_client import LLMClient, LLMConfig

    work = Path(args.work or tempfile.mkdtemp(prefix="gst-bench-"))
    os.environ.setdefault("INSTRUCT_BENCH_CACHE", str(work / "cache"))
    rows = load_ag_news()
    train, held = split(rows, args.train, args.eval, seed=0)
    server = None
    if args.base_url is None:
        from fake_openai import FakeOpenAI
        from gstransform_oracle import oracle_handler

        server = FakeOpenAI(api_key=None).start()
        server.chat_handler = oracle_handler(dict(train))
    client = LLMClient(
        LLMConfig.from_options(
            llm_model=args.llm_model,
            base_url=args.base_url or server.base_url,
            llm_cache_dir=work / "llm",
            concurrency=4,
        )
    )
    tick = time.perf_counter()
    folder = train_transform(
        [t for t, _ in train],
        instruction=INSTRUCTION,
        out_dir=work / "transforms",
        client=client,
        settings=TrainSettings(sample_size=args.train, n_clusters=args.clusters),
    )
    train_s = time.perf_counter() - tick
    if server is not None:
        server.close()
    base = load_model("all-MiniLM-L6-v2")
    texts, labels = [t for t, _ in held], [lab for _, lab in held]
    x = base.encode_inputs([base.render(t, None, None) for t in texts], show=False)
    gst = GSTransformEncoder(str(work / "transforms"))
    tick = time.perf_counter()
    z = gst.encode_inputs([gst.render(t, INSTRUCTION, None) for t in texts], show=False)
    apply_s = time.perf_counter() - tick
    import json

    config = json.loads((folder / "config.json").read_text())
    print(f"transform: {folder}  taxonomy={config['taxonomy']}  failures={config['failures']}")
    print(
        f"training: {config['training']['epochs_run']} epochs, best {config['training']['best_epoch']}, "
        f"{train_s:.1f} s incl. LLM; apply to {len(texts)} cached texts: {apply_s:.3f} s "
        f"(base re-encoded: {gst.base.stats.encoded})"
    )
    print(f"{'held-out AG News':<22}{'V-measure':>10}{'triplet acc':>13}")
    print(f"{'all-MiniLM-L6-v2':<22}{v_measure(x, labels):>10.4f}{triplet_accuracy(x, labels):>13.4f}")
    print(f"{'+ GSTransform':<22}{v_measure(z, labels):>10.4f}{triplet_accuracy(z, labels):>13.4f}")


if __name__ == "__main__":
    main()
