"""What `bench run --dry-run` prints: per task, the texts the cache lacks and the family's token, request and
cost estimate, as one table with a total (the counting itself is `bench.run.runner.dry_run`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, cast

from bench.run.usage import total_usage

if TYPE_CHECKING:
    from bench.run.runner import DryRunEstimate


def dry_run_table(estimates: Sequence[DryRunEstimate]) -> str:
    """Per task: texts the cache lacks, and the family's token/request/cost estimate."""
    from tabulate import tabulate

    rows = [
        [
            e.task,
            _count(e.texts),
            _count(e.estimate.get("tokens")),
            _count(e.estimate.get("requests")),
            _usd(e.estimate) if "usd" in e.estimate else "",  # a priced (API) family only
        ]
        for e in estimates
    ]
    total = total_usage([{"texts": e.texts, **e.estimate} for e in estimates])
    rows.append(
        [
            "Total",
            _count(total.get("texts", 0)),
            _count(total.get("tokens")),
            _count(total.get("requests")),
            _usd(total) if "usd" in total else "",
        ]
    )
    table = tabulate(
        rows,
        headers=["Task", "Texts to encode", "Est. tokens", "Requests", "Est. USD"],
        tablefmt="github",
        disable_numparse=True,
    )
    lines = [f"Dry run of {len(estimates)} task(s): no model was called, nothing was written.", table]
    if total.get("tokens_method"):
        lines.append(f"Tokens counted with {total['tokens_method']}.")
    if "usd" in total and total["usd"] is None:
        lines.append("Cost unknown: no price for this model; give --price USD_PER_1M_TOKENS.")
    return "\n".join(lines)


def _count(value: object) -> str:
    """A count as every CLI table shows it (`format_count`: `1,106`); blank when unknown."""
    from bench.results.tables import format_count

    return "" if value is None or value == "" else format_count(value)


def _usd(usage: Mapping[str, object]) -> str:
    return "unknown" if usage.get("usd") is None else f"{cast(float, usage['usd']):.6f}"
