"""`bench leaderboard build --results DIR... --out SITE`: a static leaderboard from validated submissions."""

from __future__ import annotations

import argparse
from pathlib import Path

EPILOG = """examples:
  python -m bench leaderboard build --results results/ --out site/
  python -m bench leaderboard build --results a.zip b.zip results/ --data-dir data/ --out site/
  python -m bench leaderboard build --results results/ --out site/ --strict     exit 1 if any is rejected

Each --results path is one submission: a zip from `bench submit`, its unpacked folder, or a `bench
run` output folder. Invalid submissions are left out and listed (here and on the site) with every
problem. Open SITE/index.html in a browser; SITE/leaderboard.json and .csv hold the same data.
"""


def register(sub: argparse._SubParsersAction) -> None:
    lb = sub.add_parser("leaderboard", help="build the static leaderboard site")
    actions = lb.add_subparsers(dest="action", required=True)
    p = actions.add_parser("build", help="validate submissions and write the site",
                           epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--results", nargs="+", required=True, metavar="PATH", help="submissions: zips or folders")
    p.add_argument("--out", default="site", help="folder to write the site into (default %(default)s)")
    p.add_argument("--data-dir", action="append", default=[], metavar="DIR",
                   help="local data folder whose dataset revisions count as the harness's own (repeatable)")
    p.add_argument("--strict", action="store_true", help="exit with status 1 when any submission is rejected")
    p.set_defaults(func=_cmd_build)


def _cmd_build(args: argparse.Namespace) -> int:
    from leaderboard.site import build

    result = build(args.results, args.out, data_dirs=[Path(d) for d in args.data_dir])
    for report in result.reports:
        print(report.summary())
    suites = ", ".join(f"{s['name']} ({len(s['rows'])})" for s in result.data["suites"]) or "none"
    print(f"\n{len(result.data['models'])} model setting(s); tables: {suites}")
    print(f"{len(result.rejected)} of {len(result.reports)} submission(s) rejected")
    print(f"Site: {(result.out / 'index.html').resolve()}")
    return 1 if args.strict and result.rejected else 0
