"""The leaderboard's data: accepted results grouped into model rows and suite tables, and its exports.

Everything the site shows is in `leaderboard_data(...)`, which is also written as `leaderboard.json`
(and, one row per model and task, `leaderboard.csv`), so the site and the exports cannot disagree.
Scores in suite tables are ×100, as in the papers; per-task score dicts keep MTEB's raw values.
Each result, suite row and model carries `verification`: "verified" when a verification file from
`bench leaderboard verify` reproduced that exact result (for a row or model: every one of its
results), else "self-reported" (leaderboard/verify.py).
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from leaderboard import suites as suite_styles
from leaderboard.reference import task_reference
from leaderboard.validate import REASONS, Entry, ModelKey, Report
from leaderboard.verify import SELF_REPORTED, VERIFIED, verification_of

OTHER_SUITE = "other"
READOUT_KEYS = ("readout", "output_value", "pooling", "pooling_mode", "layer", "prompt_method")
CSV_COLUMNS = (
    "model", "revision", "setting", "family", "n_parameters", "readout", "template", "task", "task_type",
    "main_score_name", "main_score", "main_score_x100", "dataset_revision", "local_copy", "instructions_sha256",
    "submission", "file", "verification",
)


@dataclass
class ModelRow:
    """One model at one revision under one setting, with every accepted result."""

    key: ModelKey
    results: dict[str, Entry] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """File-name-safe and unique: a readable stem plus a hash of the full key."""
        digest = hashlib.sha256("\x00".join((self.key.name, self.key.revision, self.key.experiment)).encode()).hexdigest()[:10]
        stem = re.sub(r"[^A-Za-z0-9._-]+", "-", self.key.label).strip("-.")[:60] or "model"
        return f"{stem}-{digest}"

    @property
    def first(self) -> Entry:
        return next(iter(self.results.values()))

    def metadata(self) -> dict[str, Any]:
        model = self.first.record["model"]
        settings = model.get("settings") or {}
        meta = next((e.model_meta for e in self.results.values() if e.model_meta), None) or {}
        known = _mteb_meta(self.key.name)
        n_parameters, size_source = _int(meta.get("n_parameters")), "submission's model_meta.json"
        if n_parameters is None and known.get("n_parameters"):
            n_parameters, size_source = known["n_parameters"], "MTEB's model registry, by model name"
        return {
            "family": model.get("family"),
            "n_parameters": n_parameters,
            "size_source": size_source if n_parameters else None,
            "embed_dim": _int(meta.get("embed_dim")) or known.get("embed_dim"),
            "readout": ", ".join(f"{k}={settings[k]}" for k in READOUT_KEYS if settings.get(k) is not None) or None,
            "template": _template(settings),
            "template_format": settings.get("instruction_template_format"),
            "spec": model.get("spec"),
            "dtype": settings.get("dtype"),
        }


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _mteb_meta(name: str) -> dict[str, Any]:
    """Size and dimension MTEB's registry gives for a model of this name (empty when it has none)."""
    import mteb

    try:
        meta = mteb.get_model_meta(name)
    except Exception:  # noqa: BLE001 - any lookup failure means "unknown", never a build failure
        return {}
    return {"n_parameters": _int(meta.n_parameters), "embed_dim": _int(meta.embed_dim)}


def _template(settings: dict[str, Any]) -> str | None:
    if "instruction_template" in settings:
        return str(settings["instruction_template"])
    for key, value in settings.items():
        if ("template" in key or "prompt" in key) and isinstance(value, str) and not key.endswith("sha256"):
            return value
    return None


def model_rows(entries: list[Entry]) -> list[ModelRow]:
    rows: dict[ModelKey, ModelRow] = {}
    for e in entries:
        rows.setdefault(e.model, ModelRow(e.model)).results[e.task] = e
    return sorted(rows.values(), key=lambda r: r.key)


def main_score(entry: Entry) -> float:
    """Mean main score over the test split's subsets (one subset for the harness's tasks)."""
    subsets = entry.result["scores"]["test"]
    return sum(s["main_score"] for s in subsets) / len(subsets)


def size_label(n: int | None) -> str:
    if not n:
        return ""
    for unit, scale in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g}{unit}"
    return str(n)


def suite_tables(rows: list[ModelRow], verified: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One table per suite in tasks.SUITES (plus 'other' for tasks in no suite), only where results exist."""
    from tasks import SUITE_DESCRIPTIONS, SUITES

    suites: dict[str, tuple[str, ...]] = dict(SUITES)
    in_suites = {t for tasks in SUITES.values() for t in tasks}
    other = tuple(sorted({t for r in rows for t in r.results if t not in in_suites}))
    if other:
        suites[OTHER_SUITE] = other
    tables = []
    for name, tasks in suites.items():
        style = suite_styles.style(name)
        columns = suite_styles.columns(name, tasks)
        table_rows = []
        for row in rows:
            if not any(t in row.results for t, _ in columns):
                continue
            scores = {t: 100 * main_score(row.results[t]) if t in row.results else None for t, _ in columns}
            averages = suite_styles.averages(name, scores)
            local = sorted(t for t, _ in columns if t in row.results and _local_copy(row.results[t]))
            table_rows.append({
                "model_id": row.id, "scores": scores, "averages": averages, "average": next(iter(averages.values())),
                "local_copy": local,
                "verification": _all_verified([row.results[t] for t, _ in columns if t in row.results], verified),
            })
        if not table_rows:
            continue
        table_rows.sort(key=lambda r: (r["average"] is None, -(r["average"] or 0)))
        tables.append({
            "name": name,
            "description": SUITE_DESCRIPTIONS.get(name, "tasks that belong to no suite"),
            "source": style.source,
            "averages": [{"label": a.label, "note": a.note, "tasks": list(a.tasks) if a.tasks else None} for a in style.averages],
            "average_label": style.averages[0].label,
            "columns": [_column(t, label) for t, label in columns],
            "rows": table_rows,
            "best": _best(table_rows),
        })
    return tables


def _all_verified(entries: list[Entry], verified: dict[str, Any] | None) -> str:
    ok = bool(entries) and all(verification_of(e, verified or {}) == VERIFIED for e in entries)
    return VERIFIED if ok else SELF_REPORTED


def _local_copy(entry: Entry) -> bool:
    """True when the result was computed on a local copy of the data (accepted with --data-dir)."""
    ref = task_reference(entry.task)
    return ref is not None and entry.result["dataset_revision"] not in ref.revisions


def _best(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The highest score of each column (highlighted on the site)."""
    best: dict[str, float] = {}
    for row in rows:
        for task, value in row["scores"].items():
            if value is not None and (task not in best or value > best[task]):
                best[task] = value
    return best


def _column(task: str, label: str) -> dict[str, Any]:
    ref = task_reference(task)
    return {"task": task, "label": label, "main_score": ref.main_score if ref else "", "type": ref.type if ref else ""}


def leaderboard_data(reports: list[Report], verified: dict[str, Any] | None = None) -> dict[str, Any]:
    """Everything the site shows, as one JSON-ready dict.

    Args:
        verified: entry sha256 -> verdict, from `leaderboard.verify.load_verifications`.
    """
    from bench.runner import package_versions

    entries = [e for r in reports if r.valid for e in r.entries]
    rows = model_rows(entries)
    return {
        "generated_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "harness_version": package_versions().get("instruct-bench"),
        "suites": suite_tables(rows, verified),
        "models": [_model_json(r, verified) for r in rows],
        "accepted": [{"submission": r.submission, "results": len(r.entries)} for r in reports if r.valid],
        "rejected": [
            {"submission": r.submission, "problems": [{**p.__dict__, "explanation": REASONS.get(p.reason, "")} for p in r.problems]}
            for r in reports if not r.valid
        ],
    }


def _model_json(row: ModelRow, verified: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "id": row.id,
        "name": row.key.name,
        "revision": row.key.revision,
        "setting": row.key.experiment,
        "label": row.key.label,
        **row.metadata(),
        "submissions": sorted({e.submission for e in row.results.values()}),
        "verification": _all_verified(list(row.results.values()), verified),
        "results": {
            task: {
                "main_score_name": e.record["task"]["main_score"],
                "main_score": main_score(e),
                "scores": e.result["scores"]["test"][0],
                "dataset_revision": e.result["dataset_revision"],
                "local_copy": _local_copy(e),
                "file": e.file,
                "submission": e.submission,
                "verification": verification_of(e, verified or {}),
                "record": e.record,
            }
            for task, e in sorted(row.results.items())
        },
    }


def csv_text(data: dict[str, Any]) -> str:
    """One row per (model, task): the main score and where it came from."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for m in data["models"]:
        for task, r in m["results"].items():
            writer.writerow({
                "model": m["name"], "revision": m["revision"], "setting": m["setting"], "family": m["family"],
                "n_parameters": m["n_parameters"] or "", "readout": m["readout"] or "", "template": m["template"] or "",
                "task": task, "task_type": r["record"]["task"]["type"], "main_score_name": r["main_score_name"],
                "main_score": f"{r['main_score']:.6f}", "main_score_x100": f"{100 * r['main_score']:.2f}",
                "dataset_revision": r["dataset_revision"], "local_copy": r["local_copy"], "instructions_sha256": r["record"]["task"]["instructions_sha256"],
                "submission": r["submission"], "file": r["file"], "verification": r["verification"],
            })
    return buffer.getvalue()


def write_exports(data: dict[str, Any], out: Path) -> tuple[Path, Path]:
    from bench.fileio import atomic_write_json, atomic_write_text

    json_path, csv_path = out / "leaderboard.json", out / "leaderboard.csv"
    atomic_write_json(json_path, data)
    atomic_write_text(csv_path, csv_text(data))
    return json_path, csv_path


def by_id(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["id"]: m for m in data["models"]}
