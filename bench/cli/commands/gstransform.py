"""`bench gstransform train`: fit a GSTransform for one instruction; evaluate it with `--model gstransform:DIR`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench.core.errors import ConfigError, DataError

EPILOG = """examples:
  python -m bench gstransform train --texts news.csv --column text \\
      --instruction "What is the topic category of this news? Just tell me the category name." \\
      --out transforms/agnews --llm-model gpt-4o-mini
  python -m bench gstransform train --texts utterances.txt --instruction "What is the emotion of the user?" \\
      --applies-to "How does the customer feel?" --out transforms/intemo --base-url http://127.0.0.1:8765/v1 \\
      --llm-model smollm2
  python -m bench run --model gstransform:transforms/intemo --tasks IntentEmotion --data-dir data/

A transform directory holds one transform per instruction (safetensors + config.json). At run time each row's
instruction picks its transform (exact match with --instruction or an --applies-to string); the base model's
instruction-free vectors come from the embedding cache, so a new instruction needs no re-encoding.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "gstransform",
        help="train embedding transforms as in GSTransform (Feng et al., 2025)",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="action", required=True)
    t = actions.add_parser(
        "train",
        help="label a text sample with an LLM and train a transform",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    t.add_argument(
        "--texts", required=True, help="texts: .txt (one per line), .csv/.jsonl/.json/.parquet with --column"
    )
    t.add_argument("--column", default="text", help="text column of a table file (default %(default)s)")
    t.add_argument("--instruction", required=True, help="the instruction the transform serves (used in the prompts)")
    t.add_argument(
        "--applies-to",
        action="append",
        default=[],
        metavar="INSTRUCTION",
        help="another instruction string this transform serves at run time (repeatable)",
    )
    t.add_argument("--out", required=True, help="transform directory (one sub-folder per instruction)")
    t.add_argument("--base-model", default="all-MiniLM-L6-v2", help="generic encoder spec (default %(default)s)")
    t.add_argument("--sample-size", type=int, default=3000, help="texts labelled by the LLM (default %(default)s)")
    t.add_argument("--clusters", type=int, default=50, help="k of k-means on the summaries (default %(default)s)")
    t.add_argument("--seed", type=int, default=42)
    t.add_argument("--cache-dir", help="embedding cache of the base model (default $INSTRUCT_BENCH_CACHE)")
    llm = t.add_argument_group("LLM (OpenAI-compatible endpoint; key from $OPENAI_API_KEY)")
    llm.add_argument("--llm-model", help="default $INSTRUCT_BENCH_LLM_MODEL")
    llm.add_argument("--base-url", help="default $OPENAI_BASE_URL, else OpenAI")
    llm.add_argument("--temperature", type=float)
    llm.add_argument("--concurrency", type=int)
    llm.add_argument("--max-retries", type=int)
    llm.add_argument("--llm-cache-dir")
    llm.add_argument("--dry-run", action="store_true", help="print the number of LLM requests; send nothing")
    t.add_argument("--json", action="store_true", help="print the report (or the dry run's estimate) as JSON")
    t.set_defaults(func=_cmd_train)


def read_texts(path: Path, column: str) -> list[str]:
    """Texts from a .txt file (one per line) or a table file's column."""
    if not path.is_file():
        raise DataError(f"--texts {path} does not exist.")
    if path.suffix == ".txt":
        return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    from bench.tasks.data import read_local_rows

    rows = read_local_rows(path, [column])
    return [str(r[column]) for r in rows if r[column] is not None and str(r[column]).strip()]


def _cmd_train(args: argparse.Namespace) -> int:
    from bench.adapters.gstransform import TrainSettings, train_transform
    from bench.cli.report import print_summary
    from bench.core.llm_client import LLMClient, LLMConfig

    if args.sample_size < 10 or args.clusters < 2:
        raise ConfigError("--sample-size must be at least 10 and --clusters at least 2.")
    texts = read_texts(Path(args.texts), args.column)
    config = LLMConfig.from_options(
        llm_model=args.llm_model,
        base_url=args.base_url,
        temperature=args.temperature,
        seed=args.seed,
        concurrency=args.concurrency,
        max_retries=args.max_retries,
        llm_cache_dir=args.llm_cache_dir,
    )
    n = min(args.sample_size, len(set(texts)))
    if args.dry_run:
        print_summary(
            {
                "texts": len(texts),
                "sampled": n,
                "requests_at_most": 2 * n + args.clusters,
                "breakdown": {"summaries": n, "cluster_labels": f"<= {args.clusters}", "classifications": n},
                "endpoint": config.base_url,
                "model": config.model,
            },
            args.json,
        )
        return 0
    client = LLMClient(config)
    try:
        folder = train_transform(
            texts,
            instruction=args.instruction,
            out_dir=Path(args.out),
            client=client,
            base_model=args.base_model,
            runtime_options={"cache_dir": args.cache_dir} if args.cache_dir else None,
            applies_to=args.applies_to,
            settings=TrainSettings(sample_size=args.sample_size, n_clusters=args.clusters, seed=args.seed),
            source={"path": str(args.texts), "column": args.column},
        )
    finally:
        client.close()
    cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    print_summary(
        {
            "transform": str(folder),
            "taxonomy_size": len(cfg["taxonomy"]),
            "labelled": cfg["sample"]["labelled"],
            "failures": cfg["failures"],
            "training": {k: cfg["training"][k] for k in ("epochs_run", "best_epoch", "best_val_loss")},
            "llm_ledger": client.ledger.as_dict(),
        },
        args.json,
    )
    return 0
