"""`bench run`: evaluate a model on tasks or a suite.

The model is a spec (`--model family:ID`, a registered name, a path) plus options for its family's
constructor, from three places, later ones winning: a `--model-config` YAML/JSON file, `--model-args
key=value,...` (lm-eval style), and the family flags below (`--template`, `--pooling`, ...).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

EPILOG = """examples:
  python -m bench run                                   demo suite, default model, offline
  python -m bench run --model all-MiniLM-L6-v2 --template none --suite demo
  python -m bench run --tasks IntentEmotion InstructSTSB --data-dir ./data --limit 200
  python -m bench run --model st:intfloat/e5-large-v2 --model-args template="query: {instruction} {text}",dtype=auto
  python -m bench run --model openai:text-embedding-3-small --dimensions 256 --dry-run
  python -m bench run --model-config my_model.yaml --batch-size 64
  python -m bench list models                           families and their options
  python -m bench results results/
"""

# Flags that are model options: each one given goes to the family's constructor under its dest
# (a family that does not take it fails with its list of options). Add a family's flag here.
MODEL_FLAGS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("--template", {"help": "instruction template: none, prefix, model, or a string with {instruction} and {text}"}),
    ("--batch-size", {"type": int, "help": "texts per forward pass, or per API request (family default)"}),
    ("--device", {"help": "cpu, cuda, cuda:1, mps or auto (default auto)"}),
    ("--dtype", {"choices": ["float32", "float16", "bfloat16", "auto"], "help": "weights' dtype (default float32)"}),
    ("--max-seq-length", {"type": int, "help": "truncate inputs to N tokens (sentence-transformers)"}),
    ("--pooling", {"help": "how an LLM-based family reads out the embedding, e.g. 1st-gen (see `bench list models`)"}),
    ("--dimensions", {"type": int, "help": "shortened output size, for API models that support it"}),
    ("--base-url", {"help": "OpenAI-compatible endpoint (default $OPENAI_BASE_URL, else api.openai.com); "
                    "the key is read from $OPENAI_API_KEY only"}),
    ("--price", {"type": float, "help": "USD per 1M input tokens for the API cost ledger (overrides the price table)"}),
    ("--max-retries", {"type": int, "help": "API retries per request on 429/5xx/connection errors"}),
)


def register(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser("run", help="evaluate a model", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("--model", help="registered name, family:ID (st:, openai:, ...), path or hub id "
                                     "(default all-MiniLM-L6-v2; see `bench list models`)")
    run.add_argument("--model-args", metavar="K=V,...", help="family options, e.g. pooling=1st-gen,dtype=float16")
    run.add_argument("--model-config", metavar="FILE", help="YAML/JSON file: `model: SPEC` and family options; "
                                                              "--model, --model-args and flags override it")
    which = run.add_mutually_exclusive_group()
    which.add_argument("--tasks", nargs="+", metavar="TASK", help="task names (see `bench list tasks`)")
    which.add_argument("--suite", help="suite name (default: demo; see `bench list suites`)")
    family = run.add_argument_group("model options (passed to the model family when given; see `bench list models`)")
    for flag, kwargs in MODEL_FLAGS:
        family.add_argument(flag, **kwargs)
    run.add_argument("--data-dir", help="local data directory (default $INSTRUCT_BENCH_DATA_DIR, else the hub)")
    run.add_argument("--output-dir", default="results", help="where result files go (default %(default)s)")
    run.add_argument("--cache-dir", help="embedding cache (default $INSTRUCT_BENCH_CACHE or ~/.cache/instruct-bench)")
    run.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    run.add_argument("--limit", type=int, help="at most N examples per criterion/aspect, stratified by label")
    run.add_argument("--overwrite", action="store_true", help="recompute tasks that already have results")
    run.add_argument("--seed", type=int, default=42, help="seed for k-means and --limit sampling (default %(default)s)")
    run.add_argument("--instruction-style", choices=["auto", "question", "command", "gstransform"], default="auto",
                     help="instructions for tasks that offer several styles (GSTransform): command for INSTRUCTOR, "
                          "question for others; auto picks by model (default %(default)s)")
    run.add_argument("--dry-run", action="store_true",
                     help="count what would be encoded (API models: tokens, requests, cost); call no model, write nothing")
    run.set_defaults(func=_cmd_run)


def model_spec_and_options(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The model spec and its options: config file, then --model-args, then family flags."""
    from adapters.registry import DEFAULT_MODEL, parse_model_args, read_model_config

    spec, options = read_model_config(args.model_config) if args.model_config else (None, {})
    options.update(parse_model_args(args.model_args or ""))
    for flag, _ in MODEL_FLAGS:
        dest = flag.lstrip("-").replace("-", "_")
        if getattr(args, dest, None) is not None:
            options[dest] = getattr(args, dest)
    return args.model or spec or DEFAULT_MODEL, options


def _cmd_run(args: argparse.Namespace) -> int:
    from bench.runner import RunOptions, dry_run, run
    from bench.summary import run_table

    spec, model_options = model_spec_and_options(args)
    options = RunOptions(
        model=spec, model_options=model_options, tasks=args.tasks, suite=args.suite, data_dir=args.data_dir,
        output_dir=args.output_dir, cache_dir=args.cache_dir, use_cache=not args.no_cache, limit=args.limit,
        overwrite=args.overwrite, seed=args.seed, show_progress_bar=False if args.quiet else None,
        instruction_style=args.instruction_style,
    )
    if args.dry_run:
        print(dry_run_table(dry_run(options)))
        return 0
    outcomes = run(options)
    print(run_table(outcomes))
    usage = total_usage([o.record.get("encode", {}).get("usage") for o in outcomes if o.status == "computed"])
    if usage:
        print(f"\nAPI usage: {format_usage(usage)}")
    print(f"\nResults: {os.path.abspath(args.output_dir)}")
    return 0


USAGE_COUNTERS = ("requests", "retries", "texts", "tokens", "tokens_estimated", "usd")


def total_usage(parts: list[dict[str, Any] | None]) -> dict[str, Any]:
    """Per-task usage ledgers added up: counters summed (a cost unknown anywhere stays unknown)."""
    total: dict[str, Any] = {}
    for part in parts:
        for k, v in (part or {}).items():
            if k not in total:
                total[k] = v
            elif k in USAGE_COUNTERS:
                total[k] = None if total[k] is None or v is None else total[k] + v
    return total


def format_usage(usage: dict[str, Any]) -> str:
    """One line: requests, retries, tokens, cost (or why the cost is unknown)."""
    parts = []
    for key, label in (("requests", "requests"), ("retries", "retries"), ("texts", "texts"), ("tokens", "tokens")):
        if usage.get(key) is not None:
            parts.append(f"{usage[key]:,} {label}")
    if usage.get("tokens_method"):
        parts[-1] += f" ({usage['tokens_method']})"
    usd = usage.get("usd")
    if usd is not None:
        parts.append(f"${usd:.6f} at ${usage.get('usd_per_1m_tokens')}/1M tokens ({usage.get('price_source')})")
    elif "usd" in usage:
        parts.append("cost unknown (no price for this model; give --price USD_PER_1M_TOKENS)")
    return ", ".join(parts)


def dry_run_table(estimates: list[Any]) -> str:
    """Per task: texts the cache lacks, and the family's token/request/cost estimate."""
    from tabulate import tabulate

    rows = [[e.task, e.texts, e.estimate.get("tokens", ""), e.estimate.get("requests", ""),
             _usd(e.estimate) if e.estimate else ""] for e in estimates]
    total = total_usage([{"texts": e.texts, **e.estimate} for e in estimates])
    rows.append(["Total", total.get("texts", 0), total.get("tokens", ""), total.get("requests", ""),
                 _usd(total) if "usd" in total else ""])
    table = tabulate(rows, headers=["Task", "Texts to encode", "Est. tokens", "Requests", "Est. USD"],
                     tablefmt="github", disable_numparse=True)
    lines = [f"Dry run of {len(estimates)} task(s): no model was called, nothing was written.", table]
    if total.get("tokens_method"):
        lines.append(f"Tokens counted with {total['tokens_method']}.")
    if "usd" in total and total["usd"] is None:
        lines.append("Cost unknown: no price for this model; give --price USD_PER_1M_TOKENS.")
    return "\n".join(lines)


def _usd(usage: dict[str, Any]) -> str:
    return "unknown" if usage.get("usd") is None else f"{usage['usd']:.6f}"
