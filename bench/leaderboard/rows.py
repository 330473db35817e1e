"""The leaderboard's model rows: one model at one revision under one setting, with every accepted result.

A row is a **baseline** when every one of its results' run records is instruction-blind
(`bench.results.marks.is_baseline`: measured by the run, `model.instruction_use`; `--template none` for
older records): shown marked, never ranked (`rank`, `borda_rank`), never shaded `best`, left out of rank
stability. Its `template` shows "none"; otherwise the instruction template the setting used
(`template_label`: `instruction_template`, `template`, InBedder's `pattern`, INSTRUCTOR's
`instruction_format`; "mteb" for MTEB's own implementation).

`model_json` is a row as leaderboard.json gives it (bench/leaderboard/table.py `leaderboard_data`), each
result with its verification: "verified" when a verification file from `bench leaderboard verify`
reproduced that exact result (for a row: every one of its results), else "self-reported"
(bench/leaderboard/verify.py).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Container
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bench.core.json_types import JSON, JSONObject
from bench.leaderboard.entries import Entry, ModelKey, identity
from bench.leaderboard.external import SUBMITTED
from bench.leaderboard.facts import (
    HUB_ID,
    iso_date,
    positive_int,
    positive_number,
    registry_facts,
    short_text,
    size_bucket,
)
from bench.leaderboard.reference import metric_range, task_reference
from bench.leaderboard.row_types import ModelFacts, ModelJson, RecordFacts, ResultDetail
from bench.leaderboard.verify import SELF_REPORTED, VERIFIED
from bench.results import marks, store
from bench.results.marks import follows_instructions, is_baseline

if TYPE_CHECKING:
    from bench.leaderboard.same_scores import Twins

BASELINE_TEMPLATE = "none"  # the template column of an instruction-blind setting (a baseline)
# Settings that name the instruction template a family used, in order; present with None: no template.
TEMPLATE_KEYS = ("instruction_template", "template", "pattern", "instruction_format")
READOUT_KEYS = ("readout", "output_value", "pooling", "pooling_mode", "layer", "prompt_method")


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
    def instruction_use(self) -> JSONObject | None:
        """The run record's measurement (`model.instruction_use`), of the first task that has one."""
        for _, e in sorted(self.results.items()):
            use = e.record["model"].get("instruction_use")
            if isinstance(use, dict):
                return use
        return None

    @property
    def first(self) -> Entry:
        return next(iter(self.results.values()))

    def metadata(self) -> ModelFacts:
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
            "baseline": self.baseline,  # marks.BASELINE.key
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


def model_card(name: str, meta: JSONObject) -> str | None:
    """The model card's address for a hub model (from model_meta.json's `reference`, else its hub id); None for local ones."""
    if name.startswith("local/") or not HUB_ID.match(name):
        return None
    card = f"https://huggingface.co/{name}"
    reference = meta.get("reference")
    # only a page of this very model: a submission's model_meta.json must not link its row to another model's card
    if isinstance(reference, str) and (reference == card or reference.startswith(card + "/")):
        return reference
    return card


def template_label(record: JSONObject) -> str | None:
    """The instruction template a run used, as the template column shows it.

    "none" for an instruction-blind setting (`marks.is_baseline`), "mteb" for MTEB's own implementation
    (its prompts are its own), else the first of TEMPLATE_KEYS the settings hold ("none" when it is
    there but unset, as PromptEOL/MetaEOL without `instruction_template`); None when no setting says.
    Only these keys: a prompt set (`prompts`) or readout is not an instruction template.
    """
    model = _dict(record.get("model"))
    if is_baseline(record):
        return BASELINE_TEMPLATE
    if model.get("family") == "mteb":
        return "mteb"
    settings = _dict(model.get("settings"))
    for key in TEMPLATE_KEYS:
        if key in settings:
            value = settings[key]
            return BASELINE_TEMPLATE if value is None else str(value)
    return None


def record_facts(record: JSONObject) -> RecordFacts:
    """Facts of the model file the run recorded (`model.facts`, from `bench.adapters.identity.gguf_record_facts`):
    `quantisation` and `base_model` of a GGUF file; an older record's quantisation from its identity check."""
    model = _dict(record.get("model"))
    facts = _dict(model.get("facts"))
    check = _dict(_dict(model.get("identity_check")).get("gguf"))
    return {
        "quantisation": short_text(facts.get("quantisation")) or short_text(check.get("file_type")),
        "base_model": short_text(facts.get("base_model"), 200),
    }


def _dict(value: JSON) -> JSONObject:
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


def verification_of(entry: Entry, verified: Container[str] | None) -> str:
    """VERIFIED when this exact result is in a loaded verification file (bench/leaderboard/verify.py's
    rule), with its sha256 computed once per entry (`identity`), else SELF_REPORTED."""
    return VERIFIED if verified and identity(entry) in verified else SELF_REPORTED


def all_verified(entries: list[Entry], verified: Container[str] | None) -> str:
    ok = bool(entries) and all(verification_of(e, verified) == VERIFIED for e in entries)
    return VERIFIED if ok else SELF_REPORTED


def local_copy(entry: Entry) -> bool:
    """True when the result was computed on a local copy of the data (accepted with --data-dir), other than a
    paper's own split built locally (`marks.paper_split`: that copy is the paper's data)."""
    ref = task_reference(entry.task)
    revised = ref is not None and entry.result["dataset_revision"] not in ref.revisions
    return revised and not marks.paper_split(entry.task)


def model_json(row: ModelRow, verified: Container[str] | None = None, twins: Twins | None = None) -> ModelJson:
    return {
        "id": row.id,
        "source": SUBMITTED,
        "name": row.key.name,
        "revision": row.key.revision,
        "setting": row.key.experiment,
        "label": row.key.label,
        **row.metadata(),
        "submissions": sorted({c.submission for e in row.results.values() for c in e.seen_in or [e]}),
        "verification": all_verified(list(row.results.values()), verified),
        "flags": [twins.note()] if twins else [],
        "same_scores_as": [other.id for other, _ in twins.shown] if twins else [],
        "same_scores_count": twins.count if twins else 0,
        "same_scores_group": twins.group if twins else None,
        "results": {
            task: {
                "main_score_name": e.record["task"]["main_score"],
                "main_score": main_score(e),
                "scores": e.result["scores"]["test"][0],
                "dataset_revision": e.result["dataset_revision"],
                "local_copy": local_copy(e),  # marks.LOCAL_COPY.key
                "stand_in": marks.stand_in(e.record) is not None,  # marks.STAND_IN.key
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


def details(task: str, scores: JSONObject, main_score_name: str) -> list[ResultDetail]:
    """The per-criterion / per-aspect scores `bench run` prints beside the main score, ×100, for the model page.

    Scores and gaps only (a metric in [0, 1] or [-1, 1]): shares and counts would need another axis.
    """
    from bench.results.summary import detail_values

    return [
        {"key": k, "label": label, "value": 100 * v}
        for k, label, v in detail_values(task, scores, main_score_name)
        if (metric_range(k) or (0, 2))[1] <= 1
    ]
