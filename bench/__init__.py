"""instruct-bench: evaluate instruction-following text embeddings on MTEB tasks.

    from bench import RunOptions, run
    outcomes = run(RunOptions(model="all-MiniLM-L6-v2", suite="demo"))

The names below are imported on first use (PEP 562), so `bench --version`, `bench --help` and
`bench list ...` start without importing MTEB or torch.
"""

from __future__ import annotations

from importlib import metadata as _metadata
from typing import Any

try:
    __version__ = _metadata.version("instruct-bench")
except _metadata.PackageNotFoundError:  # a source checkout that was never installed
    __version__ = "0+unknown"

_LAZY = {"RunOptions": "bench.run.runner", "TaskOutcome": "bench.results.outcome", "run": "bench.run.runner"}
__all__ = ["RunOptions", "TaskOutcome", "__version__", "run"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'bench' has no attribute {name!r}")
