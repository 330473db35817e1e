"""`bench build-data NAME --source-dir DIR --out DIR`: regenerate a test set in the local-directory schema."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench.errors import DataError

EPILOG = """examples:
  python -m bench build-data list
  python -m bench build-data few-rel-clustering --source-dir ../shared/data/raw --out data/
  python -m bench build-data intent-emotion --llm-model gpt-4-0613 --source-dir raw/ --out data/ --dry-run

The output directory drops into `bench run --data-dir`. Every build writes a manifest.json next to its
files (sources and their sha256, row counts, seed).
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("build-data", help="build a local copy of a test set from raw public files",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", help="builder name, or `list` to show them all")
    p.add_argument("--source-dir", help="folder holding the raw files (e.g. ../shared/data/raw)")
    p.add_argument("--out", help="data directory to write into (one sub-folder per task)")
    p.add_argument("--seed", type=int, default=42, help="sampling seed (default %(default)s)")
    p.add_argument("--size", type=int, help="how many items to sample (builder-specific default)")
    llm = p.add_argument_group("LLM builders (OpenAI-compatible endpoint; key from $OPENAI_API_KEY)")
    llm.add_argument("--llm-model", help="model name on the endpoint (default $INSTRUCT_BENCH_LLM_MODEL)")
    llm.add_argument("--base-url", help="endpoint base URL (default $OPENAI_BASE_URL, else OpenAI)")
    llm.add_argument("--temperature", type=float, help="sampling temperature (default 0)")
    llm.add_argument("--concurrency", type=int, help="requests in flight at once")
    llm.add_argument("--max-retries", type=int, help="retries per request on 429/5xx or an invalid reply")
    llm.add_argument("--llm-cache-dir", help="response cache (default under $INSTRUCT_BENCH_CACHE)")
    llm.add_argument("--dry-run", action="store_true", help="print requests, tokens and cost; send nothing")
    p.set_defaults(func=_cmd_build)


def _cmd_build(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from dataset_builders.registry import LLM_OPTIONS, builders, get_builder

    if args.name == "list":
        rows = [[n, "LLM" if b.uses_llm else "labels", b.description] for n, b in builders().items()]
        print(tabulate(rows, headers=["Builder", "Kind", "About"], tablefmt="github"))
        return 0
    builder = get_builder(args.name)
    for flag in ("source_dir", "out"):
        if getattr(args, flag) is None:
            raise DataError(f"build-data {args.name} needs --{flag.replace('_', '-')}")
    source = Path(args.source_dir)
    if not source.is_dir():
        raise DataError(f"--source-dir {source} is not a directory")
    kwargs = {"source_dir": source, "out_dir": Path(args.out), "seed": args.seed, "size": args.size}
    if builder.uses_llm:
        kwargs.update({k: getattr(args, k) for k in LLM_OPTIONS if getattr(args, k) is not None})
    manifest = builder.function()(**kwargs)
    print(json.dumps(manifest.get("summary", manifest), indent=2, ensure_ascii=False))
    return 0
