"""The MTEB results repository's check on new result files, as our own test helper.

Mirrors `tests/run_settings_check.py` of github.com/embeddings-benchmark/results at commit
8e2207ce4c993bd1d8222eed76aa543b66267327 (used by its `tests/test_new_results_run_settings.py`, the CI
guard "test_new_results_have_run_settings_and_mteb_version"). Written from that file's rules, not copied:

* a result file must load as an MTEB `TaskResult`;
* its `mteb_version`, and each score block's (TaskResult fills a block's from the top level), must be
  parseable (a range "A-B" counts as A) and at least 2.14.0, the release that introduced run_settings.jsonl;
* a `run_settings.jsonl` must lie in the same folder, each non-blank line a JSON object naming a task
  and `split`/`splits` and `subset`/`subsets` (never both spellings of one), expanded to one
  (task, split, subset) per pair as MTEB expands them; at least one entry;
* every (task, split, subset) the result reports must be covered by an entry, and every covering
  entry's `version.mteb` must pass the version rule.

An older revision of `tests/test_new_results_run_settings.py` (commit 2bf3f8db453fd18004f134965b74f3276524028a)
read only the singular `split`/`subset` keys and required MTEB > 2.0.0; MTEB 2.18.17 and later write
`splits`/`subsets`, so that revision would refuse every file MTEB 2.26.24 writes. The newer rule is the one
mirrored here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

MIN_MTEB_VERSION = Version("2.14.0")
RUN_SETTINGS = "run_settings.jsonl"


def version_floor(value: Any) -> Version | None:
    """A recorded MTEB version, or the lower end of a range "A-B"; None if unusable."""
    if not isinstance(value, str):
        return None
    for candidate in (value, value.split("-", 1)[0]):
        try:
            return Version(candidate)
        except InvalidVersion:
            continue
    return None


def _version_problems(value: Any, where: str) -> list[str]:
    parsed = version_floor(value)
    if parsed is None:
        return [f"{where} must have a parseable MTEB version, got {value!r}."]
    if parsed < MIN_MTEB_VERSION:
        return [f"{where} must use MTEB >={MIN_MTEB_VERSION}, got {value!r}."]
    return []


def _as_list(entry: dict[str, Any], singular: str, plural: str) -> list[Any]:
    if plural in entry:
        values = entry[plural]
        return list(values) if isinstance(values, list) else []
    return [entry.get(singular)]


def run_settings_scopes(path: Path, shown: str) -> tuple[dict[tuple[str, str, str], list[dict]], list[str]]:
    """(task, split, subset) -> the run_settings.jsonl entries that cover it; and the problems found."""
    if not path.exists():
        return {}, [f"{shown} is missing {RUN_SETTINGS}."]
    scopes: dict[tuple[str, str, str], list[dict]] = {}
    problems = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{shown} {RUN_SETTINGS} line {number}"
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as e:
            problems.append(f"{where} is not valid JSON: {e}")
            continue
        if not isinstance(entry, dict):
            problems.append(f"{where} must be an object.")
            continue
        both = [f"{s}/{p}" for s, p in (("split", "splits"), ("subset", "subsets")) if s in entry and p in entry]
        if both:
            problems.append(f"{where} defines both {' and '.join(both)}.")
            continue
        keys = [
            (entry.get("task"), split, subset)
            for split in _as_list(entry, "split", "splits")
            if split is not None
            for subset in _as_list(entry, "subset", "subsets")
            if subset is not None
        ]
        if not keys:
            problems.append(f"{where} must define split(s) and subset(s).")
            continue
        if any(not isinstance(task, str) or not task for task, _, _ in keys):
            problems.append(f"{where} must define task.")
            continue
        for key in keys:
            scopes.setdefault(key, []).append(entry)
    if not scopes and not problems:
        problems.append(f"{shown} {RUN_SETTINGS} must contain at least one entry.")
    return scopes, problems


def result_file_problems(result_path: Path, shown: str | None = None) -> list[str]:
    """What the results repository's CI would say about one result file (empty: it passes)."""
    from mteb import TaskResult

    shown = shown or str(result_path)
    try:
        result = TaskResult.from_disk(Path(result_path))
    except Exception as e:  # noqa: BLE001 - whatever loading raises, the repository reports it
        return [f"{shown} is not a valid mteb TaskResult: {' '.join(str(e).split())[:200]}"]
    problems = _version_problems(result.mteb_version, f"{shown} mteb_version")
    covered = []
    for split, blocks in result.scores.items():
        for block in blocks:
            covered.append((result.task_name, split, block["hf_subset"]))
            problems += _version_problems(
                block.get("mteb_version"), f"{shown} scores[{split!r}][{block['hf_subset']!r}].mteb_version"
            )
    scopes, found = run_settings_scopes(Path(result_path).parent / RUN_SETTINGS, shown)
    problems += found
    if not scopes:
        return problems
    for key in covered:
        entries = scopes.get(key, [])
        if not entries:
            problems.append(
                f"{shown} has no matching {RUN_SETTINGS} entry for task={key[0]!r}, split={key[1]!r}, "
                f"subset={key[2]!r}."
            )
        for i, entry in enumerate(entries):
            version = entry.get("version")
            problems += _version_problems(
                version.get("mteb") if isinstance(version, dict) else None,
                f"{shown} run_settings entry {i} version.mteb",
            )
    return problems


def result_files(root: Path) -> list[Path]:
    """Task result files under a results folder as the repository's check picks them: `.json` files
    other than model_meta.json (run records and hidden files are the harness's, never submitted)."""
    return sorted(
        p
        for p in Path(root).rglob("*.json")
        if p.name != "model_meta.json"
        and p.parent.name != "run_records"
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def folder_problems(root: Path) -> list[str]:
    """The check over every result file under `root` (at least one must exist)."""
    files = result_files(root)
    if not files:
        return [f"no result file under {root}"]
    return [problem for path in files for problem in result_file_problems(path, str(path.relative_to(root)))]
