"""API usage ledgers added up over a run's tasks, and the one line `bench run` prints of them.

Each task's ledger is its run record's `encode.usage` (an API family's `usage()`) or, in a dry run, the
family's `estimate_usage`; both are read here the same way."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import cast

USAGE_COUNTERS = ("requests", "retries", "texts", "tokens", "tokens_estimated", "usd")


def total_usage(parts: Iterable[Mapping[str, object] | None]) -> dict[str, object]:
    """Per-task usage ledgers added up: counters summed (a cost unknown anywhere stays unknown)."""
    total: dict[str, object] = {}
    for part in parts:
        for k, v in (part or {}).items():
            if k not in total:
                total[k] = v
            elif k in USAGE_COUNTERS:
                total[k] = None if total[k] is None or v is None else cast(float, total[k]) + cast(float, v)
    return total


def format_usage(usage: Mapping[str, object]) -> str:
    """One line: requests, retries, tokens, cost (or why the cost is unknown)."""
    parts = []
    for key, label in (("requests", "requests"), ("retries", "retries"), ("texts", "texts"), ("tokens", "tokens")):
        if usage.get(key) is not None:
            parts.append(f"{usage[key]:,} {label}")
    if usage.get("tokens_method"):
        parts[-1] += f" ({usage['tokens_method']})"
    usd = usage.get("usd")
    if usd is not None:
        parts.append(
            f"${cast(float, usd):.6f} at ${usage.get('usd_per_1m_tokens')}/1M tokens ({usage.get('price_source')})"
        )
    elif "usd" in usage:
        parts.append("cost unknown (no price for this model; give --price USD_PER_1M_TOKENS)")
    return ", ".join(parts)
