"""Across submissions, conflicts are decided by trust, not by order (`settle_conflicts`).

Two results for one (model, revision, setting, task) are the same result when their scores and identity
are equal (`result_identity`, bench/leaderboard/rerun.py: every score exactly; model content, dataset
revision, instructions, every setting that is not a runtime one, model_meta.json; never dates, timings,
package versions or paths): a re-run merges, shown once and "seen in" every submission that gave it
(`Entry.seen_in`, `Report.merged`), so a run folder that repeats the default results beside its
instruction variants can be submitted after the default run. When they differ (a score in its last
digit, a dataset revision, a dtype, an inflated model_meta.json), a result verified by a `--verification`
file is kept over self-reported ones; when no one result is verified (none is, or two differing ones
are), all are held back (`Report.held`) and listed as a `Conflict` naming the first field they differ in
and each one's value. So a forgery listed first cannot push the genuine, verified result out, and a copy
with an inflated model_meta.json cannot replace the row it copies. Of a merged re-run the verified copy
is shown, if any: a verification names one exact copy (`entry_sha256`), so a re-run never makes another
copy verified.
"""

from __future__ import annotations

import json
from collections.abc import Container
from dataclasses import dataclass

from bench.core.bounded import printable
from bench.core.json_types import JSON
from bench.leaderboard.entries import Entry, ModelKey, Report, identity, result_key, same_result, view
from bench.leaderboard.rerun import first_difference


@dataclass
class Conflict:
    """Differing results that submissions give for one (model, revision, setting, task), and what trust decided."""

    model: ModelKey
    task: str
    kept: Entry | None  # the one verified result, shown; None when no one result is verified: all held back
    held: list[Entry]

    @property
    def results(self) -> list[Entry]:
        """Every result of the conflict: the one kept (if any) first, then those held back."""
        return ([self.kept] if self.kept is not None else []) + self.held

    def difference(self) -> tuple[str, list[tuple[Entry, JSON]], int] | None:
        """(field, (result, its value) for each result, how many fields differ) for the first field the
        results differ in, scores first (`rerun.first_difference`); None if they do not differ (never here)."""
        found = first_difference([view(e) for e in self.results])
        if found is None:
            return None
        path, values, count = found
        return path, list(zip(self.results, values, strict=True)), count

    def summary(self, limit: int = 3) -> str:
        """One line for the build's output: the key, the decision, a few of the results held back, and the
        first field they differ in with each one's value."""
        where = f"{printable(self.model.label)} @ {printable(self.model.revision, 60)} on {self.task}"
        named = ", ".join(_where(e) for e in self.held[:limit]) + (
            f" and {len(self.held) - limit} more" if len(self.held) > limit else ""
        )
        if self.kept is not None:
            line = f"{where}: kept the verified result of {_where(self.kept)}; held back (self-reported) {named}"
        else:
            line = f"{where}: {len(self.held)} differing results, no one of them verified: all held back ({named})"
        return f"{line}; {self.differs(limit)}"

    def differs(self, limit: int = 3) -> str:
        """The first field the results differ in and each one's value, exactly as submitted:
        `scores.test[0].main_score: -0.098163 (a.zip), -0.098164 (b.zip)`."""
        found = self.difference()
        if found is None:
            return "they differ in no compared field"
        path, values, count = found
        shown = ", ".join(f"{shown_value(v)} ({printable(e.submission, 80)})" for e, v in values[:limit])
        more = f" and {len(values) - limit} more" if len(values) > limit else ""
        other = f" (and {count - 1} more field(s))" if count > 1 else ""
        return f"they differ in {printable(path, 120)}: {shown}{more}{other}"


def shown_value(value: object) -> str:
    """A value as a conflict names it: exactly as submitted (JSON), never rounded, and bounded."""
    return printable(json.dumps(value, ensure_ascii=False), 80)


def _where(entry: Entry) -> str:
    return printable(f"{entry.submission}:{entry.file}", 200)


def settle_conflicts(reports: list[Report], verified: Container[str] = frozenset()) -> None:
    """Decide, over all accepted submissions at once, which result of each key is shown.

    Re-runs (results whose scores and identity are equal: `same_result`) merge: one copy is shown, the
    verified one if any (a verification names one exact copy), else the first; the others are counted in
    their report's `merged`, and every copy's `seen_in` lists them all. Differing results: the one verified
    (a copy's sha256 in `verified`, from the maintainer's verification files) is shown; when no one result
    is verified (none is, or two differing ones are), every one is held back (`Report.held`), since a
    self-reported result cannot outrank another by being listed first.
    """
    versions: dict[tuple[str, str, str, str], dict[str, list[tuple[Report, Entry]]]] = {}
    for report in reports:
        for entry in report.entries if report.valid else ():
            versions.setdefault(result_key(entry), {}).setdefault(same_result(entry), []).append((report, entry))
    dropped: set[int] = set()
    for found in versions.values():
        trusted = [same for same, copies in found.items() if any(identity(e) in verified for _, e in copies)]
        shown = next(iter(found)) if len(found) == 1 else trusted[0] if len(trusted) == 1 else None
        for same, copies in found.items():
            first = next((c for c in copies if identity(c[1]) in verified), copies[0])
            if same == shown and len(copies) > 1:  # the copy shown first, then the others in submission order
                seen_in = [first[1], *(e for _, e in copies if e is not first[1])]
                for _, entry in copies:
                    entry.seen_in = seen_in
            for report, entry in copies:
                if same == shown and entry is first[1]:
                    continue
                dropped.add(id(entry))
                if same == shown:
                    report.merged.append(entry)
                else:
                    report.held.append(entry)
    for report in reports:
        report.entries = [e for e in report.entries if id(e) not in dropped]


def conflicts(reports: list[Report]) -> list[Conflict]:
    """The conflicts `settle_conflicts` decided, one per key with results held back, in key order."""
    held: dict[tuple[str, str, str, str], list[Entry]] = {}
    for report in reports:
        for entry in report.held:
            held.setdefault(result_key(entry), []).append(entry)
    kept = {result_key(e): e for r in reports if r.valid for e in r.entries if result_key(e) in held}
    return [
        Conflict(entries[0].model, entries[0].task, kept.get(key), entries) for key, entries in sorted(held.items())
    ]
