"""The versions of the packages that decide a score, recorded in every run record and verification.

It lives in the core because the run, the leaderboard's build and its verification all record them,
and none of those may import another to learn them.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
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
    return {name: installed_version(name) for name in names}


@cache
def installed_version(name: str) -> str | None:
    """One package's installed version, read once per process: each read scans the installed packages'
    metadata (~800 here), and a run record asks for nine per task."""
    try:
        return importlib_metadata.version(name)
    except importlib_metadata.PackageNotFoundError:
        return None
