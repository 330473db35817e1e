"""What instruction variants cost next to the default run: inputs encoded and seconds, per template.

    python benchmarks/instruction_variants.py [--pairs 400] [--variants 3] [--templates none prefix]
                                              [--raw ../shared/data/raw]

Builds STSBenchmark's local copy (`sts-senteval` builder, the first `--pairs` test pairs) and runs it
through `bench run --instruction-variants` with the default MiniLM and the embedding cache off, once per
template, with the first `--variants` wordings of the built-in `generic-sts` file (or of three
hand-written ones when that file is absent). Prints, from one run each: inputs the default run encoded,
inputs all variants encoded together, seconds of each, and the ratios variants/default. An
instruction-blind template must encode nothing for the variants (ratio 0); an instruction-aware one
encodes each new wording's sentences once (a variant under the task's own wording costs nothing).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
FALLBACK = [
    "represent the statement: ",
    "Represent the sentence for semantic similarity: ",
    "Represent this statement to compare its meaning: ",
]


def variant_file(folder: Path, count: int) -> Path:
    """A variants file with the first `count` STSBenchmark wordings (built-in generic-sts, else FALLBACK)."""
    import yaml

    from bench.core.variants import builtin_variant_files, load_variants

    builtin = builtin_variant_files().get("generic-sts")
    wordings = [v.instruction for v in load_variants(builtin).for_task("STSBenchmark")] if builtin else FALLBACK
    path = folder / "variants.yaml"
    path.write_text(yaml.safe_dump({"tasks": {"STSBenchmark": wordings[:count]}}), encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=400, help="STSBenchmark test pairs to use")
    parser.add_argument("--variants", type=int, default=3)
    parser.add_argument("--templates", nargs="+", default=["none", "prefix"])
    parser.add_argument("--raw", type=Path, default=ROOT.parent / "shared" / "data" / "raw")
    args = parser.parse_args()

    from tabulate import tabulate

    from bench.dataset_builders.sts_senteval import build_sts_senteval
    from bench.run.runner import RunOptions, run

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        build_sts_senteval(source_dir=args.raw, out_dir=data, size=args.pairs)
        variants = variant_file(Path(tmp), args.variants)
        for template in args.templates:
            default, *varied = run(
                RunOptions(
                    tasks=["STSBenchmark"],
                    data_dir=str(data),
                    template=template,
                    use_cache=False,
                    instruction_variants=str(variants),
                    output_dir=str(Path(tmp) / template),
                    show_progress_bar=False,
                )
            )
            d_enc = default.record["encode"]["texts_encoded"]
            v_enc = sum(o.record["encode"]["texts_encoded"] for o in varied)
            d_s = default.record["evaluation_seconds"]
            v_s = sum(o.record["evaluation_seconds"] for o in varied)
            scores = [100 * o.main_score for o in varied]
            rows.append(
                [
                    template,
                    len(varied),
                    d_enc,
                    v_enc,
                    f"{v_enc / d_enc:.2f}",
                    f"{d_s:.1f}",
                    f"{v_s:.1f}",
                    f"{v_s / d_s:.2f}",
                    f"{min(scores):.2f}-{max(scores):.2f}",
                ]
            )
    print(
        tabulate(
            rows,
            headers=[
                "template",
                "variants",
                "default encoded",
                "variants encoded",
                "ratio",
                "default s",
                "variants s",
                "ratio",
                "variant scores",
            ],
            tablefmt="github",
        )
    )


if __name__ == "__main__":
    main()
