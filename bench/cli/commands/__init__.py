"""One module per `bench` subcommand; each exposes `register(subparsers)`.

The CLI adds the commands in the order listed here, so `bench --help` lists them in this order.
"""

COMMANDS: tuple[str, ...] = (
    "run",
    "reproduce",
    "listing",
    "results",
    "build_data",
    "gstransform",
    "submit",
    "leaderboard",
)
