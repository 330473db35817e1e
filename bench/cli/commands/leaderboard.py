"""`bench leaderboard build --results DIR... --out SITE`: a static leaderboard from validated submissions.

`bench leaderboard verify SUBMISSION --out FILE` re-runs a submission's results and writes the
verification file that `build --verification FILE` reads to mark results verified.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from bench.results.marks import UNREGISTERED

if TYPE_CHECKING:
    from bench.leaderboard.external import Excluded
    from bench.leaderboard.row_types import LeaderboardJson, ModelJson
    from bench.leaderboard.site import BuildResult
    from bench.leaderboard.verify import Verdict

EPILOG = """examples:
  python -m bench leaderboard build --results results/ --out site/
  python -m bench leaderboard build --results a.zip b.zip results/ --data-dir data/ --out site/
  python -m bench leaderboard build --results results/ --out site/ --strict     exit 1 if any is rejected
  python -m bench leaderboard build --results a.zip b.zip --verification a.verification.json b.verification.json --out site/
  python -m bench leaderboard build --results results/ --mteb-results ~/mteb-results --out site/   with MTEB's published rows

Each --results path is one submission: a zip from `bench submit`, its unpacked folder, or a `bench
run` output folder. Invalid submissions are left out and listed (here and on the site) with every
problem. A re-run of a result another submission gave (every score and the identity equal: model
content, dataset revision, instructions, settings, model_meta.json; dates and timings aside) is merged;
differing results for one model, setting and task are a conflict, decided by trust, not order: a verified one is shown, else all are held back and listed. Open SITE/index.html in a browser; SITE/leaderboard.json and .csv hold the same data.
Results are shown as self-reported unless a --verification file (from `bench leaderboard verify`)
reproduced them exactly as submitted. The rows the source papers reported (`bench list reported`) are
shown in their suites' tables beside the submitted ones, marked "reported in <paper>, Table N" and
ranked with them, never verified; --no-reported leaves them out.
"""

VERIFY_EPILOG = """examples:
  python -m bench leaderboard verify my-model.zip --out my-model.verification.json
  python -m bench leaderboard verify my-model.zip --data-dir data/ --no-cache --out v.json
  python -m bench leaderboard build --results my-model.zip --verification my-model.verification.json --out site/

Re-runs every result on its task with this harness and compares every score: a result is verified
when all agree within 1e-4 absolute (0.01 on the site's x100 scale), and the re-run gives the same
model name, revision, content (sha256 of its files) and model_meta.json facts. The re-run loads the
model by what it is (registered name or hub id at its recorded revision), never under the submitted
name, and takes from the submission only the options that change vectors: never endpoints, keys,
timeouts, retries, cache or paths. An API result (openai:...) is re-run only against the endpoint you
name with --base-url (key from $OPENAI_API_KEY); without it, it stays self-reported. The file records
each result's sha256 (result, run record, model_meta.json), so a result edited after verification is
shown as self-reported. Exit status 1 when any result is not verified.
"""


def add_allow_mixed_script(parser: argparse.ArgumentParser) -> None:
    """`--allow-mixed-script NAME`, on every command that checks model names (build, verify, submit)."""
    parser.add_argument(
        "--allow-mixed-script",
        action="append",
        default=[],
        metavar="NAME",
        help="accept this exact model name though a word of it mixes scripts (Latin and Greek in one word: "
        "refused by default, as look-alikes are built that way); look-alikes of other names are refused all the "
        "same (repeatable)",
    )


def register(sub: argparse._SubParsersAction) -> None:
    lb = sub.add_parser("leaderboard", help="build the static leaderboard site")
    actions = lb.add_subparsers(dest="action", required=True)
    p = actions.add_parser(
        "build",
        help="validate submissions and write the site",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--results", nargs="+", required=True, metavar="PATH", help="submissions: zips or folders")
    p.add_argument("--out", default="site", help="folder to write the site into (default %(default)s)")
    p.add_argument(
        "--data-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="local data folder whose dataset revisions count as the harness's own (repeatable)",
    )
    p.add_argument("--strict", action="store_true", help="exit with status 1 when any submission is rejected")
    p.add_argument(
        "--verification",
        nargs="+",
        action="extend",
        default=[],
        metavar="FILE",
        help="verification files from `bench leaderboard verify` (several, or repeat the option); "
        "their results are shown as verified",
    )
    p.add_argument(
        "--no-reported",
        action="store_true",
        help="leave out the rows the source papers reported (`bench list reported`), shown by default beside "
        "the submitted ones, marked and never verified",
    )
    p.add_argument(
        "--mteb-results",
        metavar="PATH",
        help="a local clone of MTEB's results repository (github.com/embeddings-benchmark/results) or an "
        "mteb.ResultCache folder: adds, to each suite made of MTEB tasks (generic, generic-sts), every model "
        "it has all the suite's tasks for, marked 'published by MTEB', and also 'not in MTEB's registry' for a "
        "model MTEB does not list, such as your own run (bench/leaderboard/mteb_published.py)",
    )
    add_allow_mixed_script(p)
    p.set_defaults(func=_cmd_build)
    v = actions.add_parser(
        "verify",
        help="re-run a submission's results and write a verification file",
        epilog=VERIFY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    v.add_argument("submission", help="a zip from `bench submit`, its folder, or a `bench run` output folder")
    v.add_argument("--out", default="verification.json", help="verification file to write (default %(default)s)")
    v.add_argument(
        "--data-dir", metavar="DIR", help="local data directory for the re-run (and its revisions count as known)"
    )
    v.add_argument(
        "--cache-dir", help="embedding cache for the re-run (default $INSTRUCT_BENCH_CACHE or ~/.cache/instruct-bench)"
    )
    v.add_argument("--no-cache", action="store_true", help="encode every text afresh")
    v.add_argument(
        "--base-url",
        metavar="URL",
        help="your OpenAI-compatible endpoint for re-running API results (the submission's is never used)",
    )
    v.add_argument(
        "--trust-remote-code",
        action="append",
        default=[],
        metavar="MODEL",
        help="let this registered model's own hub code run (MTEB's loader asks for trust_remote_code), at MTEB's "
        "revision only; repeat for each model (default: such results stay self-reported)",
    )
    add_allow_mixed_script(v)
    v.set_defaults(func=_cmd_verify)


def _cmd_build(args: argparse.Namespace) -> int:
    from bench.leaderboard.external import reported_rows
    from bench.leaderboard.site import build

    external = [] if args.no_reported else reported_rows()
    excluded: list[Excluded] = []
    if args.mteb_results:
        from bench.leaderboard.mteb_published import published

        found = published(Path(args.mteb_results))
        external += found.rows
        excluded += found.excluded
    result = build(
        args.results,
        args.out,
        data_dirs=[Path(d) for d in args.data_dir],
        verifications=args.verification,
        external=external,
        excluded=excluded,
        allow_mixed_script=frozenset(args.allow_mixed_script),
    )
    for report in result.reports:
        print(report.summary())
    suites = ", ".join(f"{s['name']} ({len(s['rows'])})" for s in result.data["suites"]) or "none"
    print(f"\n{len(result.data['models'])} model setting(s); tables: {suites}")
    print(f"{len(result.rejected)} of {len(result.reports)} submission(s) rejected")
    print(_verified_line(result.data))
    print(_external_line(result.data))
    _print_conflicts(result)
    _print_flags(result.data["models"])
    print(f"Site: {(result.out / 'index.html').resolve()}")
    return 1 if args.strict and result.rejected else 0


def _verified_line(data: LeaderboardJson) -> str:
    """How many results are verified: the model rows' and the instruction variants' (leaderboard.json `sensitivity`)."""
    rows = [r["verification"] for m in data["models"] for r in m["results"].values()]
    variants = [v["verification"] for t in data["sensitivity"] for m in t["models"] for v in m["variants"]]
    verified, total = (rows + variants).count("verified"), len(rows) + len(variants)
    if not variants:
        return f"{verified} of {total} result(s) verified (the rest self-reported)"
    return (
        f"{verified} of {total} result(s) verified: {rows.count('verified')} of {len(rows)} in the tables, "
        f"{variants.count('verified')} of {len(variants)} instruction variants (the rest self-reported)"
    )


def _external_line(data: LeaderboardJson) -> str:
    """How many rows the board shows that it did not compute, by source (bench/leaderboard/external.py)."""
    rows = data.get("external", [])
    if not rows:
        return "no reported or published rows (--no-reported, or none on these suites)"
    reported = [x for x in rows if x["source"] == "reported"]
    mteb = len(rows) - len(reported)
    tables = len({x["table"] for x in reported})
    parts = [f"{len(reported)} reported row(s) from {tables} paper table(s)"] if reported else []
    unregistered = sum(bool(x.get("unregistered")) for x in rows)  # UNREGISTERED.key
    not_listed = f" ({unregistered} {UNREGISTERED.symbol} {UNREGISTERED.label})" if unregistered else ""
    parts += [f"{mteb} row(s) published by MTEB{not_listed}"] if mteb else []
    left_out = len(data.get("excluded_models", []))
    listed = f"; {left_out} MTEB model(s) left out, each listed on the site with why" if left_out else ""
    return f"{' and '.join(parts)}: shown beside the submitted ones, marked, never verified{listed}"


def _print_conflicts(result: BuildResult) -> None:
    """Differing results for one key across submissions (bench/leaderboard/trust.py `settle_conflicts`):
    kept when one is verified, else all held back; each listed once, as on the site."""
    found = result.conflicts
    if found:
        held = sum(len(c.held) for c in found)
        print(f"{len(found)} conflict(s): {held} result(s) held back, not shown (listed on the site):")
    for conflict in found:
        print(f"  - {conflict.summary()}")


def _print_flags(models: list[ModelJson]) -> None:
    """Rows whose scores equal other rows' (bench/leaderboard/same_scores.py `same_scores`): shown, never rejected.
    One line per group of rows with the same scores (its first row's note, which counts the others)."""
    from bench.core.bounded import printable

    flagged = [m for m in models if m["flags"]]
    if flagged:
        print(f"{len(flagged)} model setting(s) flagged (published, marked on the site):")
    groups: set[str | None] = set()
    for m in flagged:
        if m["same_scores_group"] not in groups:
            groups.add(m["same_scores_group"])
            print(f"  - {printable(m['label'])}: {printable(m['flags'][0], 400)}")


def verdict_line(v: Verdict) -> str:
    """One verified result: its verdict, task, model setting, and the main score claimed and recomputed as
    every CLI number is shown (x100, two decimals: `format_score`); the file keeps the raw 0-1 values."""
    from bench.core.bounded import printable
    from bench.results.tables import format_score

    recomputed = "-" if v.recomputed is None else format_score(v.recomputed)
    label = v.model if v.setting == "default" else f"{v.model} [{v.setting}]"
    return (
        f"{'verified' if v.verified else 'NOT verified':12} {v.task} · {printable(label, 200)}: claimed "
        f"{format_score(v.claimed)}, recomputed {recomputed}; {printable(v.note, 400)}"
    )


def _cmd_verify(args: argparse.Namespace) -> int:
    from bench.core.errors import BenchError
    from bench.core.fileio import atomic_write_json
    from bench.leaderboard.submission import read_submission
    from bench.leaderboard.validate import validate
    from bench.leaderboard.verify import verification_file, verify_report

    out = Path(args.out)
    if out.is_dir():
        raise BenchError(f"--out {out} is a folder; give a file name such as verification.json")
    report = validate(
        read_submission(args.submission),
        data_dirs=[Path(args.data_dir)] if args.data_dir else [],
        allow_mixed_script=frozenset(args.allow_mixed_script),
    )
    if not report.valid:
        print(report.summary())
        raise BenchError(
            f"{args.submission} is rejected by validation ({len(report.problems)} problem(s), listed above); "
            "only an accepted submission can be verified."
        )
    verdicts = verify_report(
        report,
        data_dir=args.data_dir,
        cache_dir=args.cache_dir,
        use_cache=not args.no_cache,
        base_url=args.base_url,
        trusted=args.trust_remote_code,
    )
    for v in verdicts:
        print(verdict_line(v))
    atomic_write_json(out, verification_file(args.submission, verdicts))
    good = sum(v.verified for v in verdicts)
    print(f"\n{good} of {len(verdicts)} result(s) verified. Wrote {out.resolve()}")
    return 0 if good == len(verdicts) else 1
