"""What one robustness task costs: inputs requested, encoded, and time, per instruction template.

    python benchmarks/robustness_encode_once.py [--size 128] [--templates none prefix] [--raw ../shared/data/raw]

Builds a FewRelClustering corpus of `--size` real texts (stratified over the 64 relations) with the
`few-rel-clustering` builder, then runs the task through `bench run` with the default MiniLM and the
embedding cache off, once per template. An instruction-blind template must encode each text once
(encoded = size) although 30 x size inputs are requested; `prefix` encodes all 30 x size. Prints the
counts, encode seconds, evaluation seconds and texts per second from each run record.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=128, help="corpus size (>= 128 keeps 2 texts per relation)")
    parser.add_argument("--templates", nargs="+", default=["none", "prefix"])
    parser.add_argument("--raw", type=Path, default=ROOT.parent / "shared" / "data" / "raw")
    args = parser.parse_args()

    from tabulate import tabulate

    from bench.dataset_builders.clustering_sets import build_few_rel
    from bench.run.runner import RunOptions, run

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        build_few_rel(source_dir=args.raw, out_dir=data, seed=42, size=args.size)
        for template in args.templates:
            (outcome,) = run(
                RunOptions(
                    tasks=["FewRelClustering"],
                    data_dir=str(data),
                    template=template,
                    use_cache=False,
                    output_dir=str(Path(tmp) / template),
                    show_progress_bar=False,
                )
            )
            enc = outcome.record["encode"]
            rate = enc["texts_encoded"] / enc["encode_seconds"] if enc["encode_seconds"] else float("nan")
            rows.append(
                [
                    template,
                    args.size,
                    enc["texts_requested"],
                    enc["unique_inputs"],
                    enc["texts_encoded"],
                    f"{enc['encode_seconds']:.1f}",
                    f"{outcome.record['evaluation_seconds']:.1f}",
                    f"{rate:.0f}",
                    f"{100 * outcome.scores['correct_mean_v_measure']:.2f}",
                    f"{100 * outcome.main_score:.2f}",
                ]
            )
    print(
        tabulate(
            rows,
            headers=[
                "template",
                "corpus",
                "requested",
                "unique",
                "encoded",
                "encode s",
                "eval s",
                "texts/s",
                "correct V",
                "ci-gap(mean)",
            ],
            tablefmt="github",
        )
    )


if __name__ == "__main__":
    main()
