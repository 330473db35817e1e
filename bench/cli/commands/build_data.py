"""`bench build-data NAME --source-dir DIR --out DIR`: regenerate a test set in the local-directory schema."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench.core.errors import ConfigError, DataError

MANIFEST = "manifest.json"
BUILDER_OPTIONS = ("tasks", "suite")  # flags only some builders take (their Builder.options)

EPILOG = """examples:
  python -m bench build-data list
  python -m bench build-data few-rel-clustering --source-dir raw/ --out data/
  python -m bench build-data intent-emotion --llm-model gpt-4-0613 --source-dir raw/ --out data/ --dry-run
  python -m bench build-data instruction-variants --suite generic-sts --size 5 --llm-model gpt-4o --out variants/

The output directory drops into `bench run --data-dir`. Every build writes a manifest.json next to its
files (sources and their sha256, row counts, seed).
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "build-data",
        help="build a local copy of a test set from raw public files",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("name", help="builder name, or `list` to show them all")
    p.add_argument(
        "--source-dir",
        help="folder of the public repositories' checkouts the builder reads (the docs' Data guide lists them)",
    )
    p.add_argument(
        "--out",
        help="data directory to write into (one sub-folder per task); instruction-variants: "
        "a folder or a .yaml/.json file",
    )
    p.add_argument("--seed", type=int, default=42, help="sampling seed (default %(default)s)")
    p.add_argument(
        "--size",
        type=int,
        help="how many items to sample (builder-specific default; "
        "instruction-variants: paraphrases per task, default 5)",
    )
    which = p.add_argument_group("tasks (instruction-variants)")
    which.add_argument("-t", "--tasks", nargs="+", metavar="TASK", help="task names (see `bench list tasks`)")
    which.add_argument("--suite", help="suite name (default generic-sts; see `bench list suites`)")
    llm = p.add_argument_group("LLM builders (OpenAI-compatible endpoint; key from $OPENAI_API_KEY)")
    llm.add_argument("--llm-model", help="model name on the endpoint (default $INSTRUCT_BENCH_LLM_MODEL)")
    llm.add_argument("--base-url", help="endpoint base URL (default $OPENAI_BASE_URL, else OpenAI)")
    llm.add_argument("--temperature", type=float, help="sampling temperature (default 0)")
    llm.add_argument("--concurrency", type=int, help="requests in flight at once")
    llm.add_argument("--max-retries", type=int, help="retries per request on 429/5xx or an invalid reply")
    llm.add_argument("--llm-cache-dir", help="response cache (default under $INSTRUCT_BENCH_CACHE)")
    llm.add_argument("--dry-run", action="store_true", help="print requests, tokens and cost; send nothing")
    p.add_argument("--json", action="store_true", help="print the dry run's estimate as JSON")
    p.set_defaults(func=_cmd_build)


def _cmd_build(args: argparse.Namespace) -> int:
    from bench.cli.commands.listing import builders_table
    from bench.dataset_builders.registry import LLM_OPTIONS, get_builder

    if args.name == "list":
        print(builders_table())
        return 0
    builder = get_builder(args.name)
    for flag in ("source_dir", "out") if builder.needs_source else ("out",):
        if getattr(args, flag) is None:
            raise DataError(f"build-data {args.name} needs --{flag.replace('_', '-')}")
    source = None if args.source_dir is None else Path(args.source_dir)
    if source is not None and not source.is_dir():
        raise DataError(f"--source-dir {source} is not a directory")
    kwargs = {"source_dir": source, "out_dir": Path(args.out), "seed": args.seed, "size": args.size}
    if builder.uses_llm:
        kwargs.update({k: getattr(args, k) for k in LLM_OPTIONS if getattr(args, k) is not None})
    for option in BUILDER_OPTIONS:
        value = getattr(args, option, None)
        if value is None:
            continue
        if option not in builder.options:
            raise ConfigError(f"build-data {args.name} takes no --{option} (it builds a fixed set of tasks).")
        kwargs[option] = value
    before = {task: mtime for task, (mtime, _) in _manifests(kwargs["out_dir"]).items()}
    result = builder.function()(**kwargs)
    summary = result.get("summary") or {}
    if summary.get("dry_run"):
        from bench.cli.report import print_summary

        print_summary({k: v for k, v in summary.items() if k != "dry_run"}, getattr(args, "json", False))
        return 0
    if getattr(args, "verbose", False):
        print(json.dumps(result, indent=2, ensure_ascii=False))
    if summary.get("file"):  # one output file, not task folders (instruction-variants)
        print(file_summary(args.name, summary))
        return 0
    written = {task: m for task, m in _manifests(kwargs["out_dir"]).items() if before.get(task) != m[0]}
    print(build_summary(args.name, kwargs["out_dir"], {task: m[1] for task, m in sorted(written.items())}, summary))
    return 0


def _manifests(out_dir: Path) -> dict[str, tuple[tuple[int, int], dict[str, Any]]]:
    """Task folder -> ((inode, modification time), manifest) for every manifest.json under `out_dir`."""
    from bench.core.bounded import MAX_SOURCE_BYTES, load_json_bounded, read_at_most
    from bench.core.errors import BenchError

    found = {}
    for path in sorted(Path(out_dir).glob(f"*/{MANIFEST}")):
        try:  # a folder the user points --out at may hold anything: read within bounds, pass over what is not ours
            stat = path.stat()  # a rebuild replaces the file (atomic write): new inode and time
            manifest = load_json_bounded(
                read_at_most(path, MAX_SOURCE_BYTES), str(path), max_bytes=MAX_SOURCE_BYTES, unique_keys=False
            )
        except (OSError, BenchError):
            continue
        if isinstance(manifest, dict):
            found[path.parent.name] = ((stat.st_ino, stat.st_mtime_ns), manifest)
    return found


def build_summary(name: str, out_dir: Path, manifests: dict[str, dict[str, Any]], summary: dict[str, Any]) -> str:
    """One line for a finished build: each task folder written, its rows, stand-ins, failures, what is missing.

    Everything else (sources and their sha256, seeds, prompts) is in each folder's manifest.json, which
    `-v` also prints.
    """
    parts = []
    for task, manifest in manifests.items():
        outputs = manifest.get("outputs") or {}
        rows = sum(int(o.get("rows", 0)) for o in outputs.values() if isinstance(o, dict))
        files = f" in {len(outputs)} files" if len(outputs) > 1 else ""
        parts.append(f"{task} ({rows:,} rows{files}{', STAND-IN' if manifest.get('proxy') else ''})")
    line = f"Built {name} into {out_dir}: " + (", ".join(parts) or "no task folder written")
    if summary.get("failures"):
        line += f"; {summary['failures']} LLM failure(s) left out"
    if summary.get("not_built"):
        line += f"; not built: {'; '.join(summary['not_built'])}"
    return f"{line}. Sources, hashes and settings: {MANIFEST} in each folder (-v prints them)."


def file_summary(name: str, summary: dict[str, Any]) -> str:
    """One line for a builder that writes one file (a variants file) and its manifest."""
    line = (
        f"Built {name} into {summary['file']}: {summary.get('tasks', 0)} task(s) x "
        f"{summary.get('variants_per_task', '?')} variants (the task's own instruction first)"
    )
    if summary.get("failures"):
        line += f"; {summary['failures']} LLM failure(s) left out"
    return f"{line}. Settings, prompt and hashes: {summary.get('manifest', MANIFEST)} (-v prints them)."
