"""The versions of the packages that decide a score, recorded in every run record and verification.

It lives in the core because the run, the leaderboard's build and its verification all record them,
and none of those may import another to learn them.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import metadata as importlib_metadata

VERSIONED_PACKAGES = (
    "instruct-bench",
    "mteb",
    "torch",
    "transformers",
    "sentence-transformers",
    "datasets",
    "numpy",
    "scipy",
    "scikit-learn",
)


def package_versions(names: Sequence[str] = VERSIONED_PACKAGES) -> dict[str, str | None]:
    """Installed version of each of `names` (default VERSIONED_PACKAGES); None for one that is not installed."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            out[name] = None
    return out
