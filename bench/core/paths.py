"""Where the harness keeps what it can recompute: one cache root for every cache.

`$INSTRUCT_BENCH_CACHE`, else `~/.cache/instruct-bench`. Each cache has its folder below it
(`embeddings/`, `llm/`, `catalog/`), so one variable moves them all and one `rm -r` clears them.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "INSTRUCT_BENCH_CACHE"


def cache_root() -> Path:
    """`$INSTRUCT_BENCH_CACHE`, else `~/.cache/instruct-bench` (read at each call: tests and runs may set it)."""
    return Path(os.environ.get(CACHE_ENV) or os.path.join(os.path.expanduser("~"), ".cache", "instruct-bench"))
