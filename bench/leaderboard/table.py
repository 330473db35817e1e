"""The leaderboard's data: accepted results grouped into model rows and suite tables, as one JSON-ready dict.

Everything the site shows is in `leaderboard_data(...)`, which is also written as `leaderboard.json`
(and, one row per model and task, `leaderboard.csv`: bench/leaderboard/exports.py), so the site and the
exports cannot disagree. Per-task score dicts keep MTEB's raw values. Each part has its module:

* model rows, their facts, baselines and verification: bench/leaderboard/rows.py;
* suite tables (×100, averages, `rank` and `borda_rank`, best scores): bench/leaderboard/suite_tables.py,
  ranking by bench/results/comparability.py;
* rows with the same scores (flagged, not rejected): bench/leaderboard/same_scores.py;
* instruction sensitivity (results under instruction variants, never model rows):
  bench/leaderboard/sensitivity_table.py.

The marks (local copy, stand-in, verified, baseline) and their symbols and meanings are
`bench.results.marks.MARKS`, given as `marks`; `filters` lists the values the site filters models by.

`conflicts` lists the differing results submissions gave for one (model, revision, setting, task),
settled by trust (bench/leaderboard/validate.py `settle_conflicts`): which one is shown, if any, and
which are held back, and the first field they differ in with each one's value (`differs_in`). A re-run
(equal scores and identity, bench/leaderboard/rerun.py) is no conflict: it merges, and `accepted[].reruns`
and a result's `seen_in` name every submission that gave it.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from datetime import UTC, datetime

from bench.leaderboard.entries import Entry, Report
from bench.leaderboard.external import SOURCES, Excluded, ExternalRow, external_json, reproductions, suite_sources
from bench.leaderboard.facts import SIZE_BUCKETS
from bench.leaderboard.open_weights import external_open_weights, submitted_open_weights
from bench.leaderboard.row_types import (
    AcceptedJson,
    ConflictJson,
    ExternalJson,
    Filters,
    LeaderboardJson,
    ModelJson,
    Reproduction,
    SourceJson,
)
from bench.leaderboard.rows import main_score, model_json, model_rows, verification_of
from bench.leaderboard.same_scores import same_scores
from bench.leaderboard.sensitivity_table import sensitivity_data
from bench.leaderboard.shift_gain import shift_gain
from bench.leaderboard.suite_tables import suite_tables
from bench.leaderboard.trust import Conflict, conflicts
from bench.leaderboard.validate import REASONS
from bench.leaderboard.verify import SELF_REPORTED, VERIFIED
from bench.results import marks
from bench.results.sensitivity import is_variant


def leaderboard_data(
    reports: list[Report],
    verified: Container[str] | None = None,
    external: Sequence[ExternalRow] = (),
    excluded: Sequence[Excluded] = (),
) -> LeaderboardJson:
    """Everything the site shows, as one JSON-ready dict.

    Args:
        verified: entry sha256 -> verdict, from `bench.leaderboard.verify.load_verifications`.
        external: rows a paper reported or MTEB published (bench/leaderboard/external.py), shown beside
            the submitted ones with their `source`; never verified, never in conflicts or same-score groups.
        excluded: the models a source has results for that make no row, with why (`excluded_models`,
            listed on the site: bench/leaderboard/mteb_published.py `published`).
    """
    from bench.core.versions import package_versions

    entries = [e for r in reports if r.valid for e in r.entries]
    rows = model_rows([e for e in entries if not is_variant(e.record)])
    twins = same_scores(rows)
    reproduced = reproductions({r.key: r.results for r in rows}, external)
    models = [_with_reproductions(model_json(r, verified, twins.get(r.key)), reproduced.get(r.key, [])) for r in rows]
    for m in models:
        m["open_weights"] = submitted_open_weights(m)
    others = [external_json(x) for x in external]
    for x, row in zip(others, external, strict=True):
        x["open_weights"] = external_open_weights(row.facts)
    suites = suite_tables(rows, verified, twins, external)
    by_external = {x["id"]: x for x in others}
    for suite in suites:
        suite["sources"] = suite_sources(suite, by_external)
        suite["shift_gain"] = shift_gain(suite, rows)
    return {
        "generated_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "harness_version": package_versions().get("instruct-bench"),
        "marks": [{"key": m.key, "symbol": m.symbol, "label": m.label, "meaning": m.meaning} for m in marks.MARKS],
        "filters": filters([*models, *others]),
        "suites": suites,
        "models": models,
        "external": others,
        "excluded_models": list(excluded),
        "sensitivity": sensitivity_data(entries, rows, verified),
        "accepted": [_accepted_json(r, verified or {}) for r in reports if r.valid],
        "conflicts": [_conflict_json(c, verified or {}) for c in conflicts(reports)],
        "rejected": [
            {
                "submission": r.submission,
                "problems": [{**p.__dict__, "explanation": REASONS.get(p.reason, "")} for p in r.problems],
            }
            for r in reports
            if not r.valid
        ],
    }


def _with_reproductions(model: ModelJson, reproduces: list[Reproduction]) -> ModelJson:
    """The row with `reproduces` added last, as a new dict (the reported rows its results reproduce)."""
    return {**model, "reproduces": reproduces}


def _source_json(e: Entry, verified: Container[str]) -> SourceJson:
    """Where one submitted copy of a result came from, its main score (as submitted) and its verification."""
    return {
        "submission": e.submission,
        "file": e.file,
        "main_score": main_score(e),
        "verification": verification_of(e, verified),
    }


def _accepted_json(report: Report, verified: Container[str]) -> AcceptedJson:
    """An accepted submission: its counts, and each of its results that is a re-run of another submission's
    (same scores and identity: merged), "seen in" every submission that gave it, each copy with its own
    verification; `shown` says whether this submission's copy is the one shown."""
    return {
        "submission": report.submission,
        "results": len(report.entries),
        "merged": len(report.merged),
        "held": len(report.held),
        "reruns": [
            {
                "label": e.model.label,
                "revision": e.model.revision,
                "task": e.task,
                "file": e.file,
                "shown": shown,
                "seen_in": [_source_json(c, verified) for c in e.seen_in],
            }
            for shown, group in ((True, report.entries), (False, report.merged))
            for e in group
            if e.seen_in
        ],
    }


def _conflict_json(conflict: Conflict, verified: Container[str]) -> ConflictJson:
    """A conflict as leaderboard.json and the site list it: the key, what was decided, each result's source
    and main score, and the first field the results differ in with each one's value, as submitted."""
    found = conflict.difference()
    return {
        "model": conflict.model.name,
        "revision": conflict.model.revision,
        "setting": conflict.model.experiment,
        "label": conflict.model.label,
        "task": conflict.task,
        "decision": "kept the verified result" if conflict.kept else "all held back: no one result is verified",
        "kept": _source_json(conflict.kept, verified) if conflict.kept else None,
        "held": [_source_json(e, verified) for e in conflict.held],
        "differs_in": None
        if found is None
        else {
            "field": found[0],
            "fields": found[2],
            "values": [{"submission": e.submission, "file": e.file, "value": v} for e, v in found[1]],
            "text": conflict.differs(),
        },
    }


def filters(models: Sequence[ModelJson | ExternalJson]) -> Filters:
    """The values present of each model field the site filters by, in display order."""
    families = {m["family"] for m in models}
    aware = {m["instruction_aware"] for m in models}
    verification = {m["verification"] for m in models}
    return {
        "sources": [s for s in SOURCES if s in {m["source"] for m in models}],
        "families": sorted(f for f in families if isinstance(f, str)),
        "sizes": [label for label, _ in SIZE_BUCKETS if label in {m["size_bucket"] for m in models}],
        "instruction_aware": [v for v in (True, False, None) if v in aware],
        "verification": [v for v in (VERIFIED, SELF_REPORTED) if v in verification],
    }
