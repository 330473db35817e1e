"""`bench run`: evaluate a model on tasks or a suite.

The model is a spec (`--model family:ID`, a registered name, a path) plus options for its family's
constructor, from three places, later ones winning: a `--model-config` YAML/JSON file, `--model-args
key=value,...` (lm-eval style), and the family flags below (`--template`, `--pooling`, ...).
"""

from __future__ import annotations

import argparse
import logging
import os
from typing import TYPE_CHECKING, Any

from bench.run.instruction_style import AUTO, STYLE_CHOICES

if TYPE_CHECKING:
    from bench.adapters.option_values import OptionSource

logger = logging.getLogger(__name__)

EPILOG = """examples:
  python -m bench run                                   demo suite, default model, offline
  python -m bench run --model all-MiniLM-L6-v2 --template none --suite demo
  python -m bench run --tasks IntentEmotion InstructSTSB --data-dir ./data --limit 200
  python -m bench run --model st:intfloat/e5-large-v2 --model-args template="query: {instruction} {text}",max_seq_length=512
  python -m bench run --model openai:text-embedding-3-small --dimensions 256 --dry-run
  python -m bench run --model-config my_model.yaml --batch-size 64
  python -m bench run --tasks STSBenchmark --data-dir ./data --instruction-variants generic-sts
  python -m bench run --suite robustness --data-dir ./data --instruction-variants inbedder-robustness
  python -m bench list models                           families and their options
  python -m bench results results/
"""


class NameList(argparse.Action):
    """`-t A B`, `-t A,B` (MTEB's and lm-eval's habit) or both: one list of names, in order, blanks dropped."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        names = [name.strip() for value in values for name in str(value).split(",") if name.strip()]
        if not names:
            parser.error(f"{option_string} names no task; give e.g. {option_string} DemoInstructSTS,DemoNYTClustering")
        setattr(namespace, self.dest, names)


def register(sub: argparse._SubParsersAction, *, full: bool = True) -> None:
    """The `run` parser. Its model-option flags come from the families' own `cli_flags` declarations,
    through a cached table (`run_flags`: every family, and MTEB, is imported once per version of the
    families' files); `full=False` leaves them out, so other commands and `bench --help` never read or build
    it, and the CLI parses a `run` command again with `full=True`."""
    run = sub.add_parser(
        "run",
        help="evaluate a model",
        epilog=EPILOG,
        add_help=full,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "-m",
        "--model",
        help="registered name, family:ID (st:, openai:, inbedder:FILE.gguf, ...), path "
        "or hub id (default all-MiniLM-L6-v2; see `bench list models`)",
    )
    run.add_argument(
        "--model-name",
        metavar="ORG/NAME",
        help="file a local model's results under this MTEB model "
        "name (default: local/<folder>, or the hub id of "
        "published weights)",
    )
    run.add_argument(
        "--model-revision",
        metavar="REV",
        help="the model's revision (hub commit; for a local model, the revision to file it under)",
    )
    run.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="run a model's own hub code at a revision other than MTEB's registered one (a model whose MTEB loader "
        "asks for trust_remote_code; at the registered revision it runs without this flag, and says so)",
    )
    run.add_argument("--model-args", metavar="K=V,...", help="family options, e.g. pooling=1st-gen,dtype=float16")
    run.add_argument(
        "--model-config",
        metavar="FILE",
        help="YAML/JSON file: `model: SPEC` and family options; --model, --model-args and flags override it",
    )
    which = run.add_mutually_exclusive_group()
    which.add_argument(
        "-t",
        "--tasks",
        nargs="+",
        action=NameList,
        metavar="TASK",
        help="task names, space- or comma-separated (see `bench list tasks`)",
    )
    which.add_argument(
        "--suite",
        help="suite name or its MTEB benchmark name, e.g. demo or InstructBench-demo (default: demo; see "
        "`bench list suites`)",
    )
    if full:
        from bench.adapters.registry import run_flags

        family = run.add_argument_group(
            "model options (each goes to the model family's constructor; see `bench list models`)"
        )
        for option, (text, owners) in run_flags().items():
            family.add_argument(
                f"--{option.replace('_', '-')}", dest=f"family_{option}", metavar="V", help=f"{text} [{owners}]"
            )
    add_run_options(run)
    run.add_argument(
        "--instruction-variants",
        metavar="FILE",
        help="YAML/JSON file of task: [instructions] (or named sets of them), or a built-in name "
        "(`bench list variants`): each task also runs under each instruction, as its own MTEB "
        "experiment, and the table shows mean/std/min/max over them; without --tasks/--suite, "
        "the file's tasks run",
    )
    run.add_argument(
        "--shift-sample",
        type=int,
        default=0,
        metavar="N",
        help="measure each task's instruction shift on N of its instructed texts (a seeded sample, the same "
        "on any number of processes): the mean cosine distance between each text's embedding with the task's "
        "instruction and without it, in the run record's instruction_shift and as `bench results`' Shift "
        "column; the blind encodes are extra (counted in the record and in --dry-run's estimate). "
        "Default 0: off",
    )
    run.add_argument(
        "--save-predictions",
        "--log-samples",
        action="store_true",
        help="also write each task's per-sample predictions, MTEB's <Task>_predictions.json, in a predictions/ "
        "folder beside its result (MTEB's tasks: MTEB's own file; the harness's: its per-item outcomes); "
        "--log-samples is lm-eval's name for it",
    )
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="count what would be encoded and its tokens (by the model's tokenizer when it is local, else "
        "estimated from characters; API models: requests and cost too); load no weights, call no model, "
        "write nothing",
    )
    run.set_defaults(func=_cmd_run, needs_full_parser=not full)


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options of how a run is done (data, output, cache, limit, seed, instruction style): `bench run`'s,
    shared with `bench reproduce`, which runs a paper table's rows the same way."""
    parser.add_argument("--data-dir", help="local data directory (default $INSTRUCT_BENCH_DATA_DIR, else the hub)")
    parser.add_argument(
        "--output-dir",
        "--output-folder",
        dest="output_dir",
        default="results",
        help="where result files go (default %(default)s; --output-folder is MTEB's name for it)",
    )
    parser.add_argument(
        "--cache-dir",
        help="embedding cache folder (default $INSTRUCT_BENCH_CACHE/embeddings, "
        "else ~/.cache/instruct-bench/embeddings)",
    )
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    parser.add_argument("--limit", type=int, help="at most N examples per criterion/aspect, stratified by label")
    parser.add_argument("--overwrite", action="store_true", help="recompute tasks that already have results")
    parser.add_argument(
        "--seed", type=int, default=42, help="seed for k-means and --limit sampling (default %(default)s)"
    )
    parser.add_argument(
        "--instruction-style",
        choices=STYLE_CHOICES,
        default=AUTO,
        help="instructions for tasks that offer several styles (GSTransform): command for INSTRUCTOR, "
        "question for others; auto picks by model (default %(default)s)",
    )


def run_option_values(args: argparse.Namespace) -> dict[str, Any]:
    """`RunOptions` fields from the options `add_run_options` declares (and -q, which hides progress bars)."""
    return {
        "data_dir": args.data_dir,
        "output_dir": args.output_dir,
        "cache_dir": args.cache_dir,
        "use_cache": not args.no_cache,
        "limit": args.limit,
        "overwrite": args.overwrite,
        "seed": args.seed,
        "show_progress_bar": False if args.quiet else None,
        "instruction_style": args.instruction_style,
    }


def model_option_layers(args: argparse.Namespace) -> tuple[str, list[tuple[OptionSource, dict[str, Any]]]]:
    """The model spec, and its options as each place gave them, in the order later ones win: the config file,
    --model-args, each family flag. Nothing converted yet (that needs the families' constructors, hence MTEB:
    `convert_options` does it in `_cmd_run`), so parsing a run imports no MTEB."""
    from bench.adapters.option_values import MODEL_ARGS, OptionSource
    from bench.adapters.registry import DEFAULT_MODEL, parse_model_args, read_model_config

    layers: list[tuple[OptionSource, dict[str, Any]]] = []
    spec = None
    if args.model_config:
        spec, file_options = read_model_config(args.model_config)
        layers.append((OptionSource("file", str(args.model_config)), file_options))
    layers.append((MODEL_ARGS, parse_model_args(args.model_args or "")))
    for dest, value in vars(args).items():
        if dest.startswith("family_") and value is not None:
            option = dest.removeprefix("family_")
            layers.append((OptionSource("flag", f"--{option.replace('_', '-')}"), {option: value}))
    if getattr(args, "trust_remote_code", False):
        layers.append((OptionSource("flag", "--trust-remote-code"), {"trust_remote_code": True}))
    return args.model or spec or DEFAULT_MODEL, layers


def model_spec_and_options(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The model spec and its options as given: config file, then --model-args, then family flags."""
    spec, layers = model_option_layers(args)
    return spec, {key: value for _, options in layers for key, value in options.items()}


def _cmd_run(args: argparse.Namespace) -> int:
    from bench.run.launcher import single_process_launch_warning

    if (warning := single_process_launch_warning()) is not None:
        logger.warning(warning)
    from bench.cli.run_names import check_model_family, check_run_names

    args.suite = check_run_names(args.tasks, args.suite)  # before MTEB is imported: a typo answers at once
    spec, layers = model_option_layers(args)
    check_model_family(spec)
    from bench.adapters.distributed import is_worker
    from bench.adapters.registry import convert_options
    from bench.core.errors import ConfigError
    from bench.results.summary import run_table
    from bench.run.dry_run import dry_run, dry_run_table
    from bench.run.local_data import local_data_note
    from bench.run.runner import RunOptions, run
    from bench.run.usage import format_usage, total_usage

    model_options = convert_options(spec, layers)  # each value checked, an error naming its file or flag
    options = RunOptions(
        model=spec,
        model_options=model_options,
        model_name=args.model_name,
        model_revision=args.model_revision,
        tasks=args.tasks,
        suite=args.suite,
        instruction_variants=args.instruction_variants,
        shift_sample=args.shift_sample,
        save_predictions=args.save_predictions,
        **run_option_values(args),
    )
    if options.shift_sample < 0:
        raise ConfigError(f"--shift-sample {options.shift_sample}: give a number of texts, 0 (off) or more.")
    if args.dry_run:
        print(dry_run_table(dry_run(options), options))
        return 0
    outcomes = run(options)
    if not outcomes and is_worker():
        return 0  # another rank of a launched run: rank 0 prints the table
    print(run_table(outcomes))
    note = local_data_note(outcomes)
    if note:
        print(f"\n{note}")
    usage = total_usage([o.record.get("encode", {}).get("usage") for o in outcomes if o.status == "computed"])
    if usage:
        print(f"\nAPI usage: {format_usage(usage)}")
    folders = sorted({os.path.dirname(o.result_path) for o in outcomes if o.result_path and not o.variant})
    if folders:
        print("\nResults: " + "\n         ".join(folders))
    variant_folders = {os.path.dirname(o.result_path) for o in outcomes if o.result_path and o.variant}
    if variant_folders:
        parents = sorted({os.path.dirname(f) for f in variant_folders})
        print(f"Instruction variants: {len(variant_folders)} MTEB experiment folder(s) under " + ", ".join(parents))
    return 0
