"""`bench submit DIR`: validate a model's result files and pack them, with a manifest, into one zip."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from bench.cli.commands.leaderboard import add_allow_mixed_script
from bench.core.errors import BenchError, DataError

if TYPE_CHECKING:
    from bench.leaderboard.submission import ManifestModel

EPILOG = """examples:
  python -m bench submit results/                                   writes ./submission.zip
  python -m bench submit results/ --out minilm.zip --data-dir data/ accept results on local copies in data/

The zip holds the result files, their run records, model_meta.json files and manifest.json (each
file's sha256). Give it to `bench leaderboard build --results`. Nothing is written when a check fails;
every problem is printed with its file, field and reason.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "submit",
        help="validate result files and pack them as a leaderboard submission",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("directory", help="results folder written by `bench run --output-dir`")
    p.add_argument("--out", default="submission.zip", help="zip to write (default %(default)s)")
    p.add_argument(
        "--data-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="local data folder the results were computed on (repeatable); its revisions count as known",
    )
    add_allow_mixed_script(p)
    p.set_defaults(func=_cmd_submit)


def _cmd_submit(args: argparse.Namespace) -> int:
    from bench.leaderboard.submission import pack, read_submission
    from bench.leaderboard.validate import validate

    source = Path(args.directory)
    if not source.is_dir():
        raise DataError(f"No results folder at {source}: give the --output-dir of `bench run`.")
    submission = read_submission(source)
    links = [p for p in submission.problems if p.reason == "link"]
    if links:  # never followed, so never packed: the zip would otherwise carry whatever a link points at
        more = f", and {len(links) - 1} more" if len(links) > 1 else ""
        first = links[0]
        where = (
            "is a symbolic link"
            if [p.file for p in links] == [str(source)]
            else f"holds a link ({first.file}: {first.message}{more})"  # a symbolic or a second hard link, a swap
        )
        raise DataError(
            f"{source} {where}; a submission never follows links, so nothing was packed: "
            "put a copy of the file itself in its place."
        )
    report = validate(
        submission, data_dirs=[Path(d) for d in args.data_dir], allow_mixed_script=frozenset(args.allow_mixed_script)
    )
    if not report.valid:
        print(report.summary())
        raise BenchError(f"{len(report.problems)} problem(s) in {source}; nothing was packed (see the list above).")
    models: dict[tuple, list[str]] = {}
    for e in report.entries:
        models.setdefault((e.model.name, e.model.revision, e.model.experiment), []).append(e.task)
    listing: list[ManifestModel] = [
        {"name": n, "revision": r, "experiment": x, "tasks": sorted(t)} for (n, r, x), t in sorted(models.items())
    ]
    manifest = pack(submission, Path(args.out), listing)
    print(report.summary())
    print(f"Packed {len(manifest['files'])} files into {Path(args.out).resolve()}")
    return 0
