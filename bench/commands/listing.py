"""`bench list tasks|models|suites`: what can be named on the command line."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    ls = sub.add_parser("list", help="list tasks, models or suites")
    ls.add_argument("what", choices=["tasks", "models", "suites"])
    ls.set_defaults(func=_cmd_list)


def _cmd_list(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    if args.what == "tasks":
        from tasks import TASKS

        rows = [[n, c.metadata.type, c.metadata.main_score, c.metadata.dataset["path"]] for n, c in TASKS.items()]
        print(tabulate(rows, headers=["Task", "Type", "Main score", "Dataset"], tablefmt="github"))
    elif args.what == "suites":
        from tasks import SUITE_DESCRIPTIONS, SUITES

        rows = [[n, ", ".join(t), SUITE_DESCRIPTIONS[n]] for n, t in SUITES.items()]
        print(tabulate(rows, headers=["Suite", "Tasks", "About"], tablefmt="github"))
    else:
        from adapters.registry import FAMILIES, FAMILY_ALIASES, FAMILY_OPTIONS, MODELS

        rows = [[n, e.family, e.description] for n, e in MODELS.items()]
        print(tabulate(rows, headers=["Model", "Family", "About"], tablefmt="github"))
        print()
        aliases = {f: [a for a, t in FAMILY_ALIASES.items() if t == f] for f in FAMILIES}
        rows = [[f, ", ".join(aliases[f]), FAMILY_OPTIONS.get(f, "")] for f in FAMILIES]
        print(tabulate(rows, headers=["Family (spec prefix)", "Aliases", "Options"], tablefmt="github"))
    return 0
