"""The leaderboard's data: accepted results grouped into model rows and suite tables, and its exports.

Everything the site shows is in `leaderboard_data(...)`, which is also written as `leaderboard.json`
(and, one row per model and task, `leaderboard.csv`), so the site and the exports cannot disagree.
Scores in suite tables are ×100, as in the papers; per-task score dicts keep MTEB's raw values.
Each result, suite row and model carries `verification`: "verified" when a verification file from
`bench leaderboard verify` reproduced that exact result (for a row or model: every one of its
results), else "self-reported" (bench/leaderboard/verify.py).

A row is a **baseline** when every one of its results' run records is instruction-blind
(`bench.results.marks.is_baseline`: measured by the run, `model.instruction_use`; `--template none` for
older records): shown marked, never ranked (`rank`, `borda_rank`), never shaded `best`, left out of rank
stability. Its `template` shows "none"; otherwise the instruction template the setting used
(`template_label`: `instruction_template`, `template`, InBedder's `pattern`, INSTRUCTOR's
`instruction_format`; "mteb" for MTEB's own implementation).

Suite tables rank two ways, as MTEB's leaderboard reads: `rank` (the default on the site) by the suite's
first average that some row has, under the one rule `bench results` and `bench run` also follow
(bench/results/ranking.py `RULE`, given as the table's `rank_rule`): rows whose average covers the ranked
task set (all of the average's tasks when any row has them; on a partial suite, such as GSTransform with
5 of its 9 tasks, the largest set most rows share), by the value as printed. `averages` holds complete
averages only (None otherwise); `partial` the rest ({"value", "present", "of"}: "47.89 (5 of 9)"), for
rows with two or more of an average's tasks. And `borda_rank` by Borda count over the task
columns (`borda`: per task, one point per ranked row with a lower score, half a point per tie; a row
missing a task gets nothing for it and costs the others nothing, so a row is ranked on what it has; MTEB
instead gives every row that ran a task n − rank points with n all rows, so there a row also beats each
row that did not run it). With two or more MTEB task types in a suite, `task_types` lists them and
each row has `type_means` (mean ×100 per type, None unless the row has every task of that type).
Columns no row of a table fills (task columns, averages, type means) are left out of it.

The marks (local copy, stand-in, verified, baseline) and their symbols and meanings are
`bench.results.marks.MARKS`, given as `marks`; `filters` lists the values the site filters models by.

Results run under instruction variants (`bench run --instruction-variants`) are never model rows:
they go to `sensitivity` (`sensitivity_data`), per task: each model's score under every variant, their
spread (`bench.results.sensitivity.summarize`, the same statistics `bench results` prints) and how stable the
ranking of the models is across variants (`rank_stability`; baselines are left out of it, as they are
never ranked). Its scores are ×100 like the suite tables'; each variant carries its own verification.

Two model rows (different name, revision or setting) whose scores are identical on every task both
have (at least one; every score of every split compared exactly, as submitted) are flagged, not
rejected (`same_scores`): each carries one note in `flags` ("same scores as <other row> ..." for a pair,
"same scores as N other rows ...: A, B, C …" for more), `same_scores_as` (the ids of the rows it names,
at most SHOWN_TWINS), `same_scores_count` and `same_scores_group`, and the site marks it. Rows with one
set of scores are grouped by hash, so 1,000 copies cost 1,000 short notes, not 999,000. A submission
copied under another name shows up so; a setting that ignores instructions can honestly score like
another, so readers judge.

`conflicts` lists the differing results submissions gave for one (model, revision, setting, task),
settled by trust (bench/leaderboard/validate.py `settle_conflicts`): which one is shown, if any, and
which are held back, and the first field they differ in with each one's value (`differs_in`). A re-run
(equal scores and identity, bench/leaderboard/rerun.py) is no conflict: it merges, and `accepted[].reruns`
and a result's `seen_in` name every submission that gave it.

leaderboard.csv is opened in spreadsheets, which run a cell starting with = + - @ (or tab, CR) as a
formula: such a text cell gets a leading "'" (OWASP's advice on CSV injection); the numeric columns
(`CSV_NUMBERS`) are written as numbers and left as they are, so a score of -10.59 stays -10.59.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.leaderboard.external import (
    SOURCES,
    SUBMITTED,
    ExternalRow,
    as_printed,
    external_json,
    joins,
    reproductions,
    suite_sources,
)
from bench.leaderboard.facts import (
    HUB_ID,
    SIZE_BUCKETS,
    iso_date,
    positive_int,
    positive_number,
    registry_facts,
    short_text,
    size_bucket,
)
from bench.leaderboard.reference import metric_range, task_reference
from bench.leaderboard.validate import REASONS, Conflict, Entry, ModelKey, Report, base_key, conflicts, identity
from bench.leaderboard.verify import SELF_REPORTED, VERIFIED
from bench.results import marks, store, task_catalog
from bench.results import suites as suite_styles
from bench.results.marks import follows_instructions, is_baseline
from bench.results.ranking import RULE, Candidate, ranks
from bench.results.sensitivity import collect, is_variant, stability_by_task

OTHER_SUITE = "other"
BASELINE_TEMPLATE = "none"  # the template column of an instruction-blind setting (a baseline)
# Settings that name the instruction template a family used, in order; present with None: no template.
TEMPLATE_KEYS = ("instruction_template", "template", "pattern", "instruction_format")
TYPE_LABELS = {  # MTEB task type -> a short column header
    "BitextMining": "Bitext",
    "Classification": "Class.",
    "Clustering": "Clust.",
    "InstructionReranking": "Instr. rerank.",
    "InstructionRetrieval": "Instr. retr.",
    "MultilabelClassification": "Multilabel",
    "PairClassification": "Pair class.",
    "Reranking": "Rerank.",
    "Retrieval": "Retr.",
    "STS": "STS",
    "Summarization": "Summ.",
}
READOUT_KEYS = ("readout", "output_value", "pooling", "pooling_mode", "layer", "prompt_method")
CSV_COLUMNS = (
    "model",
    "revision",
    "setting",
    "family",
    "n_parameters",
    "readout",
    "template",
    "task",
    "task_type",
    "main_score_name",
    "main_score",
    "main_score_x100",
    "dataset_revision",
    marks.LOCAL_COPY.key,
    marks.STAND_IN.key,
    "instructions_sha256",
    "submission",
    "file",
    "verification",
    marks.BASELINE.key,
    "instruction_aware",
    "variant",
    "variant_set",
    "source",  # submitted | reported | mteb (bench/leaderboard/external.py)
    "source_label",  # an external row's mark words: "reported in <paper>, Table N" / "published by MTEB"
    "source_url",
    marks.UNREGISTERED.key,  # an MTEB row of a model MTEB's registry does not know: True/False; empty for others
)
CSV_NUMBERS = frozenset({"n_parameters", "main_score", "main_score_x100"})  # written from numbers, never neutralised
SHOWN_TWINS = 3  # rows named in a "same scores" note; the rest are counted
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what makes a spreadsheet read a cell as a formula (OWASP)


@dataclass
class ModelRow:
    """One model at one revision under one setting, with every accepted result."""

    key: ModelKey
    results: dict[str, Entry] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """File-name-safe and unique: a readable stem plus a hash of the full key."""
        digest = hashlib.sha256(
            "\x00".join((self.key.name, self.key.revision, self.key.experiment)).encode()
        ).hexdigest()[:10]
        stem = re.sub(r"[^A-Za-z0-9._-]+", "-", self.key.label).strip("-.")[:60] or "model"
        return f"{stem}-{digest}"

    @property
    def baseline(self) -> bool:
        """Instruction-blind on every result (`marks.is_baseline`, measured): shown marked, never ranked or shaded best."""
        return bool(self.results) and all(is_baseline(e.record) for e in self.results.values())

    @property
    def instruction_aware(self) -> bool | None:
        """False for a baseline, True when any result's setting follows instructions, else None (unknown)."""
        if self.baseline:
            return False
        found = {follows_instructions(e.record) for e in self.results.values()}
        return True if True in found else None

    @property
    def instruction_use(self) -> dict[str, Any] | None:
        """The run record's measurement (`model.instruction_use`), of the first task that has one."""
        for _, e in sorted(self.results.items()):
            use = e.record["model"].get("instruction_use")
            if isinstance(use, dict):
                return use
        return None

    @property
    def first(self) -> Entry:
        return next(iter(self.results.values()))

    def metadata(self) -> dict[str, Any]:
        model = self.first.record["model"]
        settings = model.get("settings") or {}
        meta = next((e.model_meta for e in self.results.values() if e.model_meta), None) or {}
        known = registry_facts(self.key.name)
        n_parameters, size_source = positive_int(meta.get("n_parameters")), "submission's model_meta.json"
        if n_parameters is None and known.get("n_parameters"):
            n_parameters, size_source = known["n_parameters"], "MTEB's model registry, by model name"
        facts = record_facts(self.first.record)
        return {
            "family": model.get("family"),
            marks.BASELINE.key: self.baseline,
            "instruction_aware": self.instruction_aware,
            "instruction_use": self.instruction_use,
            "model_card": model_card(self.key.name, meta),
            "n_parameters": n_parameters,
            "size_source": size_source if n_parameters else None,
            "embed_dim": positive_int(meta.get("embed_dim")) or known.get("embed_dim"),
            "readout": ", ".join(f"{k}={settings[k]}" for k in READOUT_KEYS if settings.get(k) is not None) or None,
            "template": BASELINE_TEMPLATE if self.baseline else template_label(self.first.record),
            "template_format": settings.get("instruction_template_format"),
            "spec": model.get("spec"),
            "dtype": settings.get("dtype"),
            "max_tokens": positive_number(meta.get("max_tokens")) or known.get("max_tokens"),
            "license": short_text(meta.get("license")) or known.get("license"),
            "release_date": iso_date(meta.get("release_date")) or known.get("release_date"),
            "memory_usage_mb": positive_number(meta.get("memory_usage_mb")) or known.get("memory_usage_mb"),
            "quantisation": facts.get("quantisation"),
            "base_model": facts.get("base_model"),
            "size_bucket": size_bucket(n_parameters),
        }


def model_card(name: str, meta: dict[str, Any]) -> str | None:
    """The model card's address for a hub model (from model_meta.json's `reference`, else its hub id); None for local ones."""
    if name.startswith("local/") or not HUB_ID.match(name):
        return None
    card = f"https://huggingface.co/{name}"
    reference = meta.get("reference")
    # only a page of this very model: a submission's model_meta.json must not link its row to another model's card
    if isinstance(reference, str) and (reference == card or reference.startswith(card + "/")):
        return reference
    return card


def template_label(record: dict[str, Any]) -> str | None:
    """The instruction template a run used, as the template column shows it.

    "none" for an instruction-blind setting (`marks.is_baseline`), "mteb" for MTEB's own implementation
    (its prompts are its own), else the first of TEMPLATE_KEYS the settings hold ("none" when it is
    there but unset, as PromptEOL/MetaEOL without `instruction_template`); None when no setting says.
    Only these keys: a prompt set (`prompts`) or readout is not an instruction template.
    """
    model = record.get("model") or {}
    if is_baseline(record):
        return BASELINE_TEMPLATE
    if model.get("family") == "mteb":
        return "mteb"
    settings = model.get("settings") or {}
    for key in TEMPLATE_KEYS:
        if key in settings:
            value = settings[key]
            return BASELINE_TEMPLATE if value is None else str(value)
    return None


def record_facts(record: dict[str, Any]) -> dict[str, Any]:
    """Facts of the model file the run recorded (`model.facts`, from `bench.adapters.identity.gguf_record_facts`):
    `quantisation` and `base_model` of a GGUF file; an older record's quantisation from its identity check."""
    model = record.get("model") or {}
    facts = _dict(model.get("facts"))
    check = _dict(_dict(model.get("identity_check")).get("gguf"))
    return {
        "quantisation": short_text(facts.get("quantisation")) or short_text(check.get("file_type")),
        "base_model": short_text(facts.get("base_model"), 200),
    }


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def model_rows(entries: list[Entry]) -> list[ModelRow]:
    rows: dict[ModelKey, ModelRow] = {}
    for e in entries:
        rows.setdefault(e.model, ModelRow(e.model)).results[e.task] = e
    return sorted(rows.values(), key=lambda r: r.key)


def main_score(entry: Entry) -> float:
    """An accepted result's main score: `bench.results.store.main_score`, the mean over the test split's
    subsets (one subset for the harness's tasks; validation requires the test split)."""
    return store.main_score(entry.result)


def size_label(n: int | None) -> str:
    if not n:
        return ""
    for unit, scale in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g}{unit}"
    return str(n)


def suite_tables(
    rows: list[ModelRow],
    verified: dict[str, Any] | None = None,
    twins: dict[ModelKey, Twins] | None = None,
    external: Sequence[ExternalRow] = (),
) -> list[dict[str, Any]]:
    """One table per suite in tasks.SUITES (plus 'other' for tasks in no suite), only where results exist;
    `twins` (from `same_scores`) flags rows. `external` rows (reported, MTEB) join the suites
    `external.joins` names (a paper's row every suite holding one of its tasks, an MTEB row only the suites
    it has in full) and are ranked with the submitted ones."""
    all_suites = task_catalog.suites()  # the task classes' own, without importing them
    suites: dict[str, tuple[str, ...]] = {**task_catalog.ordered_suites(), **all_suites}
    descriptions = task_catalog.suite_descriptions()
    in_suites = {t for tasks in all_suites.values() for t in tasks}
    other = tuple(sorted({t for r in rows for t in r.results if t not in in_suites}))
    if other:
        suites[OTHER_SUITE] = other
    tables = []
    for name, tasks in suites.items():
        style = suite_styles.style(name)
        columns = suite_styles.columns(name, tasks)
        refs = {t: task_reference(t) for t, _ in columns}
        avgs = suite_styles.suite_averages(name, {t: r.main_score if r else "" for t, r in refs.items()})
        types = task_types(columns, refs)
        table_rows = [
            _suite_row(name, row, columns, avgs, verified, (twins or {}).get(row.key), types)
            for row in rows
            if any(t in row.results for t, _ in columns)
        ]
        covers = {a.label: a.tasks or tuple(t for t, _ in columns) for a in avgs}
        table_rows += [
            as_printed(
                _table_row(x.id, x.source, name, {t: x.scores.get(t) for t, _ in columns}, avgs, types), x, covers
            )
            for x in external
            if joins(x, [t for t, _ in columns])
        ]
        if not table_rows:
            continue
        filled = _partial_averages(table_rows, avgs)
        # the ranking average: the first one some row has, as in `bench results`; `average` is its complete value
        first = filled[0] if filled else avgs[0]
        for r in table_rows:
            r["average"] = r["averages"][first.label]
        table_rows.sort(key=lambda r: _order(r, first.label))
        _rank(table_rows, first.label, first.tasks or tuple(t for t, _ in columns))
        _borda(table_rows)
        # columns no row of this table can fill are not shown: task columns, averages, task-type means
        shown = [(t, label) for t, label in columns if any(r["scores"][t] is not None for r in table_rows)]
        types = [t for t in types if any(r["type_means"][t["type"]] is not None for r in table_rows)]
        labels = dict(columns)
        tables.append(
            {
                "name": name,
                "description": descriptions.get(name, "tasks that belong to no suite"),
                "measures": style.measures,
                "papers": [{"label": p.label, "url": p.url} for p in style.papers],
                "metrics": _metrics(shown, refs),
                "source": style.source,
                "averages": [
                    {
                        "label": a.label,
                        "note": a.note,
                        "tasks": list(a.tasks) if a.tasks else None,
                        "covers": [labels[t] for t in (a.tasks or tuple(labels))],
                    }
                    for a in filled
                ],
                "average_label": first.label,
                "rank_rule": RULE if any(r["rank"] is not None for r in table_rows) else None,
                "task_types": types,
                "columns": [_column(t, label) for t, label in shown],
                "missing": [label for t, label in columns if (t, label) not in shown],
                "rows": table_rows,
                "best": _best(table_rows),
            }
        )
    return tables


def verification_of(entry: Entry, verified: dict[str, Any] | None) -> str:
    """VERIFIED when this exact result is in a loaded verification file (bench/leaderboard/verify.py's
    rule), with its sha256 computed once per entry (`identity`), else SELF_REPORTED."""
    return VERIFIED if verified and identity(entry) in verified else SELF_REPORTED


def _all_verified(entries: list[Entry], verified: dict[str, Any] | None) -> str:
    ok = bool(entries) and all(verification_of(e, verified) == VERIFIED for e in entries)
    return VERIFIED if ok else SELF_REPORTED


def task_types(columns: list[tuple[str, str]], refs: dict[str, Any]) -> list[dict[str, Any]]:
    """The suite's MTEB task types ({"type", "label", "tasks", "columns"}, in column order) when it holds
    two or more; else [] (one type's mean is the suite's average)."""
    found: dict[str, list[tuple[str, str]]] = {}
    for task, label in columns:
        ref = refs.get(task)
        if ref is not None and ref.type:
            found.setdefault(ref.type, []).append((task, label))
    if len(found) < 2:
        return []
    return [
        {
            "type": kind,
            "label": TYPE_LABELS.get(kind, kind),
            "tasks": [t for t, _ in cols],
            "columns": [label for _, label in cols],
        }
        for kind, cols in found.items()
    ]


def _table_row(
    model_id: str,
    source: str,
    suite: str,
    scores: dict[str, float | None],
    avgs: tuple[suite_styles.Average, ...],
    types: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """A row of a suite table as every row starts, submitted or external: its scores (×100, None where
    missing), the suite's averages and task-type means of them, no rank and no mark. An external row
    (bench/leaderboard/external.py) stays so: never a baseline, never verified, no mark of a run record."""
    averages = suite_styles.averages(suite, scores, avgs)
    return {
        "model_id": model_id,
        "source": source,
        "scores": scores,
        "averages": averages,
        "average": next(iter(averages.values())),
        "printed_averages": {},  # a paper's own averages as it prints them: external.as_printed
        "type_means": {t["type"]: suite_styles.average([scores[task] for task in t["tasks"]]) for t in types},
        marks.BASELINE.key: False,
        "rank": None,
        "borda_rank": None,
        "borda": None,
        marks.LOCAL_COPY.key: [],
        marks.STAND_IN.key: [],
        marks.SUBSET.key: [],
        "verification": None,
        "flags": [],
    }


def _suite_row(
    suite: str,
    row: ModelRow,
    columns: list[tuple[str, str]],
    avgs: tuple[suite_styles.Average, ...],
    verified: dict[str, Any] | None = None,
    twins: Twins | None = None,
    types: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """A submitted row of a suite table: `_table_row` with what its run records say (baseline, marks,
    verification, same-scores flag)."""
    scores: dict[str, float | None] = {
        t: 100 * main_score(row.results[t]) if t in row.results else None for t, _ in columns
    }
    results = {t: row.results[t] for t, _ in columns if t in row.results}
    return _table_row(row.id, SUBMITTED, suite, scores, avgs, types) | {
        marks.BASELINE.key: row.baseline,
        marks.LOCAL_COPY.key: sorted(t for t, e in results.items() if _local_copy(e)),
        marks.STAND_IN.key: sorted(t for t, e in results.items() if marks.stand_in(e.record)),
        marks.SUBSET.key: sorted(t for t, e in results.items() if marks.limit_of(e.record) is not None),
        "verification": _all_verified(list(results.values()), verified),
        "flags": [_flag(twins)] if twins else [],
    }


def _partial_averages(rows: list[dict[str, Any]], avgs: Sequence[suite_styles.Average]) -> list[suite_styles.Average]:
    """Give each row `partial` (average label -> {"value", "present", "of"}) for every average it has only some
    tasks of (suites.PARTIAL_MIN or more, as `bench results` prints them: "47.89 (5 of 9)"); return the averages some
    row has a value of, complete or partial (a column no row fills is not shown)."""
    for r in rows:
        r["partial"] = {}
        for a in avgs:
            over = a.tasks or tuple(r["scores"])
            found = suite_styles.partial_average(r["scores"], over)
            if r["averages"][a.label] is None and found is not None:
                r["partial"][a.label] = {"value": found[0], "present": len(found[1]), "of": len(over)}
    return [a for a in avgs if any(r["averages"][a.label] is not None or a.label in r["partial"] for r in rows)]


def _order(row: dict[str, Any], label: str) -> tuple[int, float]:
    """The served order, as `bench results` sorts: complete averages best first, then partial ones, then rows without."""
    complete, partial = row["averages"].get(label), row["partial"].get(label)
    if complete is not None:
        return 0, -complete
    return (1, -partial["value"]) if partial else (2, 0.0)


def _rank(rows: list[dict[str, Any]], label: str, tasks: Sequence[str]) -> None:
    """`rank` by the average `label` over `tasks`, by the one rule of every table (bench/results/ranking.py `RULE`):
    rows whose average covers the ranked task set, competition ranks on the value as printed. Baselines and
    limited runs (`subset`, never accepted by validation) are candidates for nothing."""
    pool = []
    for i, r in enumerate(rows):
        value = r["averages"].get(label)
        value = (r["partial"].get(label) or {}).get("value") if value is None else value
        if value is None or r[marks.BASELINE.key] or r.get(marks.SUBSET.key):
            continue
        pool.append(Candidate(i, frozenset(t for t in tasks if r["scores"].get(t) is not None), value, scale=1.0))
    for i, rank in ranks(pool).items():
        rows[i]["rank"] = rank


def _borda(rows: list[dict[str, Any]]) -> None:
    """Borda count over the task columns among the rows that are not baselines (MTEB's "Rank (Borda)").

    Per task, each such row with a score gets one point per such row with a lower score and half a point
    per tie; `borda` is the total, `borda_rank` the competition rank (1, 2, 2, 4) by it. A row missing a
    task gets no point for it and costs no other row one (MTEB gives n − rank over all n rows, so there a
    row also beats every row that did not run the task). Baselines get neither.
    """
    ranked = [r for r in rows if not r[marks.BASELINE.key] and not r.get(marks.SUBSET.key)]
    if not ranked:
        return
    points = [0.0] * len(ranked)
    for task in ranked[0]["scores"]:
        have = [(i, r["scores"][task]) for i, r in enumerate(ranked) if r["scores"][task] is not None]
        for i, score in have:
            points[i] += sum(1.0 if score > other else 0.5 if score == other else 0.0 for j, other in have if j != i)
    for r, p in zip(ranked, points, strict=True):
        r["borda"] = p
        r["borda_rank"] = 1 + sum(q > p for q in points)


def _metrics(columns: list[tuple[str, str]], refs: dict[str, Any]) -> list[dict[str, Any]]:
    """How each main score of the shown columns is computed, once per metric, with the columns that use it."""
    found: dict[str, list[str]] = {}
    for task, label in columns:
        ref = refs.get(task)
        if ref is not None:
            found.setdefault(ref.main_score, []).append(label)
    return [{"main_score": m, "columns": labels, "note": suite_styles.metric_note(m)} for m, labels in found.items()]


def _local_copy(entry: Entry) -> bool:
    """True when the result was computed on a local copy of the data (accepted with --data-dir)."""
    ref = task_reference(entry.task)
    return ref is not None and entry.result["dataset_revision"] not in ref.revisions


def _best(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The highest score of each column among the models that are not the baseline (highlighted on the site)."""
    best: dict[str, float] = {}
    for row in rows:
        if row[marks.BASELINE.key]:
            continue
        for task, value in row["scores"].items():
            if value is not None and (task not in best or value > best[task]):
                best[task] = value
    return best


def _column(task: str, label: str) -> dict[str, Any]:
    ref = task_reference(task)
    return {
        "task": task,
        "label": label,
        "main_score": ref.main_score if ref else "",
        "type": ref.type if ref else "",
        "dataset": dataset_page(task),
    }


def dataset_page(task: str) -> dict[str, str] | None:
    """The task's dataset on the hub ({"path", "url"}, from its metadata); None for packaged demo data."""
    facts = task_catalog.facts(task)
    if facts is None or facts["packaged"]:
        return None
    path = facts["dataset_path"]
    return {"path": path, "url": f"https://huggingface.co/datasets/{path}"} if HUB_ID.match(path) else None


def leaderboard_data(
    reports: list[Report], verified: dict[str, Any] | None = None, external: Sequence[ExternalRow] = ()
) -> dict[str, Any]:
    """Everything the site shows, as one JSON-ready dict.

    Args:
        verified: entry sha256 -> verdict, from `bench.leaderboard.verify.load_verifications`.
        external: rows a paper reported or MTEB published (bench/leaderboard/external.py), shown beside
            the submitted ones with their `source`; never verified, never in conflicts or same-score groups.
    """
    from bench.core.versions import package_versions

    entries = [e for r in reports if r.valid for e in r.entries]
    rows = model_rows([e for e in entries if not is_variant(e.record)])
    twins = same_scores(rows)
    reproduced = reproductions({r.key: r.results for r in rows}, external)
    models = [_model_json(r, verified, twins.get(r.key)) | {"reproduces": reproduced.get(r.key, [])} for r in rows]
    others = [external_json(x) for x in external]
    suites = suite_tables(rows, verified, twins, external)
    by_external = {x["id"]: x for x in others}
    for suite in suites:
        suite["sources"] = suite_sources(suite, by_external)
    return {
        "generated_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "harness_version": package_versions().get("instruct-bench"),
        "marks": [{"key": m.key, "symbol": m.symbol, "label": m.label, "meaning": m.meaning} for m in marks.MARKS],
        "filters": filters([*models, *others]),
        "suites": suites,
        "models": models,
        "external": others,
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


def _source_json(e: Entry, verified: dict[str, Any]) -> dict[str, Any]:
    """Where one submitted copy of a result came from, its main score (as submitted) and its verification."""
    return {
        "submission": e.submission,
        "file": e.file,
        "main_score": main_score(e),
        "verification": verification_of(e, verified),
    }


def _accepted_json(report: Report, verified: dict[str, Any]) -> dict[str, Any]:
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


def _conflict_json(conflict: Conflict, verified: dict[str, Any]) -> dict[str, Any]:
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


def filters(models: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """The values present of each model field the site filters by, in display order."""
    keys = ("family", "size_bucket", "instruction_aware", "verification", "source")
    present = {key: {m[key] for m in models} for key in keys}
    return {
        "sources": [s for s in SOURCES if s in present["source"]],
        "families": sorted(f for f in present["family"] if isinstance(f, str)),
        "sizes": [label for label, _ in SIZE_BUCKETS if label in present["size_bucket"]],
        "instruction_aware": [v for v in (True, False, None) if v in present["instruction_aware"]],
        "verification": [v for v in (VERIFIED, SELF_REPORTED) if v in present["verification"]],
    }


@dataclass(frozen=True)
class Twins:
    """The rows whose scores equal one row's: how many, and the first few (named on the site)."""

    group: str  # the hash of the row's scores, task by task: rows with one group have the very same scores
    count: int
    shown: tuple[tuple[ModelRow, int], ...]  # (row, tasks shared), at most SHOWN_TWINS


def same_scores(rows: list[ModelRow]) -> dict[ModelKey, Twins]:
    """For each row with twins, the other rows with the same scores on every task both have (at least one).

    Every score of every split must be equal as submitted (MTEB rounds to 1e-6, so equal floats are no
    accident). Rows with the very same scores on the very same tasks are one group, found by hash; only
    groups that share a result are compared with each other, so 1,000 copies of one row cost one group,
    not 499,500 pairs, and each row's note names SHOWN_TWINS others and counts the rest (O(rows) notes).
    """
    groups: dict[str, list[ModelRow]] = {}
    prints: dict[str, dict[str, str]] = {}
    for r in rows:
        tasks = {task: json.dumps(e.result["scores"], sort_keys=True) for task, e in r.results.items()}
        digest = hashlib.sha256(json.dumps(tasks, sort_keys=True).encode()).hexdigest()
        groups.setdefault(digest, []).append(r)
        prints[digest] = tasks
    partners = _partner_groups(prints)
    twins: dict[ModelKey, Twins] = {}
    for digest, members in groups.items():
        pool = [(m, len(prints[digest])) for m in members[: SHOWN_TWINS + 1]]
        pool += [(m, shared) for other, shared in partners.get(digest, []) for m in groups[other][: SHOWN_TWINS + 1]]
        count = len(members) - 1 + sum(len(groups[other]) for other, _ in partners.get(digest, []))
        for m in members if count else ():
            twins[m.key] = Twins(digest[:12], count, tuple(t for t in pool if t[0] is not m)[:SHOWN_TWINS])
    return twins


def _partner_groups(prints: dict[str, dict[str, str]]) -> dict[str, list[tuple[str, int]]]:
    """Groups (by their score-set hash) that share a result and agree on every task both have: (group, tasks shared)."""
    by_result: dict[tuple[str, str], list[str]] = {}
    for digest, tasks in prints.items():
        for task, scores in tasks.items():
            by_result.setdefault((task, scores), []).append(digest)
    pairs = {pair for found in by_result.values() for pair in itertools.combinations(sorted(found), 2)}
    partners: dict[str, list[tuple[str, int]]] = {}
    for a, b in sorted(pairs):
        shared = prints[a].keys() & prints[b].keys()
        if all(prints[a][t] == prints[b][t] for t in shared):
            partners.setdefault(a, []).append((b, len(shared)))
            partners.setdefault(b, []).append((a, len(shared)))
    return partners


def _flag(twins: Twins) -> str:
    """One note per row: the one other row with its revision and the tasks shared, or a count and a few names."""
    if twins.count == 1:
        ((other, shared),) = twins.shown
        return f"same scores as {other.key.label} @ {other.key.revision} on every task both have ({shared})"
    named = ", ".join(f"{other.key.label} @ {other.key.revision}" for other, _ in twins.shown)
    more = " …" if twins.count > len(twins.shown) else ""
    return f"same scores as {twins.count:,} other rows on every task both have: {named}{more}"


def _model_json(row: ModelRow, verified: dict[str, Any] | None = None, twins: Twins | None = None) -> dict[str, Any]:
    return {
        "id": row.id,
        "source": SUBMITTED,
        "name": row.key.name,
        "revision": row.key.revision,
        "setting": row.key.experiment,
        "label": row.key.label,
        **row.metadata(),
        "submissions": sorted({c.submission for e in row.results.values() for c in e.seen_in or [e]}),
        "verification": _all_verified(list(row.results.values()), verified),
        "flags": [_flag(twins)] if twins else [],
        "same_scores_as": [other.id for other, _ in twins.shown] if twins else [],
        "same_scores_count": twins.count if twins else 0,
        "same_scores_group": twins.group if twins else None,
        "results": {
            task: {
                "main_score_name": e.record["task"]["main_score"],
                "main_score": main_score(e),
                "scores": e.result["scores"]["test"][0],
                "dataset_revision": e.result["dataset_revision"],
                marks.LOCAL_COPY.key: _local_copy(e),
                marks.STAND_IN.key: marks.stand_in(e.record) is not None,
                "stand_in_note": (e.record["task"].get("dataset") or {}).get("stand_in_note"),
                "details": details(task, e.result["scores"]["test"][0], e.record["task"]["main_score"]),
                "file": e.file,
                "submission": e.submission,
                "seen_in": [c.submission for c in e.seen_in],  # re-runs merged: every submission that gave it
                "verification": verification_of(e, verified),
                "record": e.record,
            }
            for task, e in sorted(row.results.items())
        },
    }


def sensitivity_data(
    entries: list[Entry], rows: list[ModelRow], verified: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Per task with variant results: every model's variants, their spread, and the rank stability.

    Models within a task are ordered by mean score (best first); `model_id` links a model's row (its
    run under the task's own instructions) where the leaderboard has one.
    """
    variant_entries = {(e.task, base_key(e), e.record["variant"]["label"]): e for e in entries if is_variant(e.record)}
    if not variant_entries:
        return []
    groups = collect((Path(e.file), e.result, e.record) for e in entries)
    ids = {r.key: r.id for r in rows}
    baseline: dict[tuple[str, ModelKey], bool] = {}  # instruction-blind under every variant (marks.is_baseline)
    for (task, key, _), e in variant_entries.items():
        baseline[(task, key)] = baseline.get((task, key), True) and is_baseline(e.record)
    stability = stability_by_task(g for g in groups if not baseline[(g.task, ModelKey(*g.model))])
    out: dict[str, dict[str, Any]] = {}
    for g in groups:
        key = ModelKey(*g.model)
        summary = g.summary()
        variants = []
        for v in g.scores:
            e = variant_entries[(g.task, key, v.label)]
            variants.append(
                {
                    "label": v.label,
                    "set": v.set,
                    "index": e.record["variant"].get("index"),
                    "instruction": v.instruction,
                    "score": 100 * v.score,
                    "file": e.file,
                    "submission": e.submission,
                    "verification": verification_of(e, verified),
                }
            )
        block = out.setdefault(g.task, {"task": g.task, "main_score_name": g.main_score_name, "models": []})
        block["models"].append(
            {
                "name": key.name,
                "revision": key.revision,
                "setting": key.experiment,
                "label": key.label,
                "model_id": ids.get(key),
                marks.BASELINE.key: baseline[(g.task, key)],
                "default": None if g.default is None else 100 * g.default,
                **{k: None if summary[k] is None else 100 * summary[k] for k in ("mean", "std", "min", "max")},
                "n": summary["n"],
                "set_means": {k: 100 * v for k, v in summary.get("set_means", {}).items()},
                "set_differences": {k: 100 * v for k, v in summary.get("set_differences", {}).items()},
                "verification": _all_verified([variant_entries[(g.task, key, v.label)] for v in g.scores], verified),
                "variants": variants,
            }
        )
    result = []
    for name in sorted(out):
        block = out[name]
        block["models"].sort(key=lambda m: (m[marks.BASELINE.key], -m["mean"]))
        block["set_differences"] = list(dict.fromkeys(d for m in block["models"] for d in m["set_differences"]))
        block["stability"] = _stability_json(stability.get(name), ids)
        result.append(block)
    return result


def _stability_json(found: dict[str, Any] | None, ids: dict[ModelKey, str]) -> dict[str, Any] | None:
    """`rank_stability`'s result with model labels (and row ids) in place of key tuples."""
    if found is None:
        return None
    top = ModelKey(*found["top_by_mean"])
    return {
        **found,
        "top_by_mean": top.label,
        "top_model_id": ids.get(top),
        "other_top": len(found["variants_with_other_top"]),
    }


def details(task: str, scores: dict[str, Any], main_score_name: str) -> list[dict[str, Any]]:
    """The per-criterion / per-aspect scores `bench run` prints beside the main score, ×100, for the model page.

    Scores and gaps only (a metric in [0, 1] or [-1, 1]): shares and counts would need another axis.
    """
    from bench.results.summary import detail_values

    return [
        {"key": k, "label": label, "value": 100 * v}
        for k, label, v in detail_values(task, scores, main_score_name)
        if (metric_range(k) or (0, 2))[1] <= 1
    ]


def csv_text(data: dict[str, Any]) -> str:
    """One row per (model, task): the main score and where it came from; then one per instruction
    variant (`variant`: its label, `variant_set`: its set), so the spread can be analysed from the CSV."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for m in data["models"]:
        for task, r in m["results"].items():
            _write_row(
                writer,
                {
                    "model": m["name"],
                    "revision": m["revision"],
                    "setting": m["setting"],
                    "family": m["family"],
                    "n_parameters": m["n_parameters"] or "",
                    "readout": m["readout"] or "",
                    "template": m["template"] or "",
                    "task": task,
                    "task_type": r["record"]["task"]["type"],
                    "main_score_name": r["main_score_name"],
                    "main_score": f"{r['main_score']:.6f}",
                    "main_score_x100": f"{100 * r['main_score']:.2f}",
                    "dataset_revision": r["dataset_revision"],
                    marks.LOCAL_COPY.key: r[marks.LOCAL_COPY.key],
                    marks.STAND_IN.key: r[marks.STAND_IN.key],
                    "instructions_sha256": r["record"]["task"]["instructions_sha256"],
                    "submission": r["submission"],
                    "file": r["file"],
                    "verification": r["verification"],
                    marks.BASELINE.key: m[marks.BASELINE.key],
                    "instruction_aware": _csv_bool(m["instruction_aware"]),
                    "source": SUBMITTED,
                },
            )
    models = by_id(data)
    for t in data["sensitivity"]:
        for entry in t["models"]:
            m = models.get(entry.get("model_id"), {})
            for v in entry["variants"]:
                _write_row(
                    writer,
                    {
                        "model": entry["name"],
                        "revision": entry["revision"],
                        "setting": entry["setting"],
                        "family": m.get("family") or "",
                        "n_parameters": m.get("n_parameters") or "",
                        "readout": m.get("readout") or "",
                        "template": m.get("template") or "",
                        "task": t["task"],
                        "main_score_name": t["main_score_name"],
                        "main_score": f"{v['score'] / 100:.6f}",
                        "main_score_x100": f"{v['score']:.2f}",
                        "submission": v["submission"],
                        "file": v["file"],
                        "verification": v["verification"],
                        marks.BASELINE.key: entry[marks.BASELINE.key],
                        "instruction_aware": _csv_bool(m.get("instruction_aware")),
                        "variant": v["label"],
                        "variant_set": v["set"] or "",
                        "source": SUBMITTED,
                    },
                )
    for x in data.get("external", []):
        for task, value in x["scores"].items():
            _write_row(writer, _external_csv_row(x, task, value))
    return buffer.getvalue()


def _external_csv_row(x: dict[str, Any], task: str, value: float) -> dict[str, Any]:
    """One external row's score on one task: the value as the source printed it (×100) and where it is from."""
    ref = task_reference(task)
    return {
        "model": x["name"],
        "revision": x["revision"] or "",
        "family": x["family"] or "",
        "n_parameters": x["n_parameters"] or "",
        "task": task,
        "task_type": ref.type if ref else "",
        "main_score_name": ref.main_score if ref else "",
        "main_score": f"{value / 100:.6f}",
        "main_score_x100": f"{value:.2f}",
        "instruction_aware": _csv_bool(x["instruction_aware"]),
        "source": x["source"],
        "source_label": x["source_label"],
        "source_url": x["url"],
        marks.UNREGISTERED.key: _csv_bool(x.get(marks.UNREGISTERED.key)) if x["source"] == "mteb" else "",
    }


def _csv_bool(value: bool | None) -> Any:
    """True/False as the csv module writes them; unknown (None) as an empty cell."""
    return "" if value is None else value


def _write_row(writer: csv.DictWriter, row: dict[str, Any]) -> None:
    """One CSV row with every text cell a spreadsheet would run as a formula neutralised; numbers kept."""
    writer.writerow({k: _cell(v) if k not in CSV_NUMBERS else v for k, v in row.items()})


def _cell(value: Any) -> Any:
    """A text cell starting with = + - @ tab or CR, with a leading "'" (OWASP CSV injection)."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_START) else value


def write_exports(data: dict[str, Any], out: Path) -> tuple[Path, Path]:
    """leaderboard.json (as `atomic_write_json` writes it, streamed: an indented dump built as one string
    takes ~5 times the file's size, ~100 MB for 1,000 rows) and leaderboard.csv."""
    from bench.core.fileio import atomic_write, atomic_write_text

    json_path, csv_path = out / "leaderboard.json", out / "leaderboard.csv"
    atomic_write(json_path, lambda tmp: _dump_json(data, tmp))
    atomic_write_text(csv_path, csv_text(data))
    return json_path, csv_path


def _dump_json(data: dict[str, Any], path: Path) -> None:
    with path.open("w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, ensure_ascii=False, default=str)
        f.write("\n")


def by_id(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["id"]: m for m in data["models"]}
