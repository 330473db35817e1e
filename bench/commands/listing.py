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
        from adapters.registry import MODELS, describe_families

        rows = [[n, e.family, e.description] for n, e in MODELS.items()]
        print(tabulate(rows, headers=["Model", "Family", "About"], tablefmt="github"))
        print()
        rows = [
            [f"{f['family']}:", ", ".join(f"{a}:" for a in f["aliases"]), f["description"], _options_text(f)]
            for f in describe_families()
        ]
        print(tabulate(rows, headers=["Family (spec prefix)", "Aliases", "About", "Options (default)"], tablefmt="github"))
        print("\nGive options as family flags (--template none), --model-args key=value,key=value, "
              "or a --model-config YAML/JSON file.")
    return 0


def _options_text(family: dict) -> str:
    text = ", ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in family["options"].items())
    return f"{text}; {family['notes']}" if family.get("notes") else text
