"""`bench leaderboard verify`: recompute a submission's scores, and which results the site may call verified.

Threat model. Validation (leaderboard/validate.py) checks that a submission is consistent with the
harness, and its manifest catches files damaged or changed by accident since `bench submit`. Neither
stops forgery: whoever edits a score can delete the manifest or recompute its sha256. So a
submitted score is *self-reported* until the leaderboard's maintainer verifies it: re-runs each
result on its task with this harness, compares every score, and writes a verification file. The
build shows a result as *verified* only when the verification file holds that exact result (a sha256
of its result file, run record and model_meta.json) with a match; any later edit, of a score or of
the model's published facts, changes the hash, so an edited result falls back to self-reported. The
verification file is the maintainer's, kept apart from submissions.

A submission is hostile input, so the re-run takes from it only what the maintainer would choose to
run anyway (`rerun_plan`):
* the model by what it *is*: a registered name or hub id (at its recorded hub revision), never under
  the submission's claimed name. The re-run files the model under the name, revision and content
  (sha256 of its files, adapters/identity.py) that loading it gives, so a renamed model
  (`--model-name bigcorp/SuperEmbed-7B` on MiniLM) is caught as "the re-run differs in model name";
* of the recorded settings, only the family's declared vector options (those that change vectors,
  adapters/options.py): never endpoints, credentials, timeouts, retries, cache, device or paths; a
  value naming a path outside the working directory is refused;
* an API model (a family with an endpoint option) is re-run only against the endpoint the maintainer
  names (`--base-url`); without one it stays self-reported, and the recorded endpoint is never
  contacted, so no key and no task text reach a server the submitter controls.
The re-run's model_meta.json facts (parameters, dimension, max tokens, license, card, release date)
must equal the submission's: "verified" vouches for the model shown, not only for its numbers. Any
failure of one run group (a model that cannot load, data missing, a bug) is the reason on that group's
verdicts; the other groups still run.

Tolerance: |recomputed - claimed| <= 1e-4 for every numeric score of every split (the main score
and its parts). That is 0.01 on the site's ×100 scale, the last digit the site shows, so any forgery
that changes a shown number is caught; a re-run with the recorded settings and the same package
versions differs far less (float32 sums in another order or thread count; MTEB rounds scores to
1e-6), so honest results are not flagged.
"""

from __future__ import annotations

import json
import logging
import math
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.errors import BenchError, DataError
from bench.fileio import sha256_json
from leaderboard.limits import MAX_JSON_DEPTH, json_depth, unsafe_member_name
from bench.bounded import printable
from leaderboard.submission import MODEL_META
from leaderboard.validate import Entry, Report

logger = logging.getLogger(__name__)

FORMAT = "instruct-bench-verification"
TOLERANCE = 1e-4
VERIFIED, SELF_REPORTED = "verified", "self-reported"


@dataclass
class Verdict:
    """Whether one result's scores were reproduced, and how closely."""

    task: str
    model: str
    revision: str
    setting: str
    file: str
    sha256: str  # entry_sha256 of the result as submitted
    claimed: float
    recomputed: float | None
    max_abs_diff: float | None
    verified: bool
    note: str


def entry_sha256(entry: Entry) -> str:
    """The identity of a result as submitted: its result file, run record and model_meta.json (key order
    ignored). The model's facts are in it, so editing the size or card link after verification unverifies."""
    return sha256_json({"result": entry.result, "record": entry.record, "model_meta": entry.model_meta})


def numeric_scores(value: Any, path: str = "") -> Iterator[tuple[str, float]]:
    """(path, number) for every numeric leaf of a TaskResult's `scores` (booleans are not scores)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from numeric_scores(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from numeric_scores(v, f"{path}[{i}]")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield path, float(value)


def compare(claimed: dict[str, Any], recomputed: dict[str, Any], tolerance: float = TOLERANCE) -> tuple[float, list[str]]:
    """(largest |difference|, the scores that differ by more than `tolerance` or exist in one only)."""
    a, b = dict(numeric_scores(claimed["scores"])), dict(numeric_scores(recomputed["scores"]))
    differ = sorted(set(a) ^ set(b))
    worst = 0.0
    for key in sorted(set(a) & set(b)):
        diff = abs(a[key] - b[key])
        worst = max(worst, diff if math.isfinite(diff) else math.inf)
        if not diff <= tolerance:
            differ.append(f"{key}: claimed {a[key]:.6g}, recomputed {b[key]:.6g}")
    return worst, differ


# ------------------------------------------------------------------------------------ re-running
ENDPOINT_OPTIONS = ("base_url",)  # a family that takes one of these is remote: re-run only against the maintainer's
META_FACTS = ("name", "revision", "n_parameters", "embed_dim", "max_tokens", "license", "reference", "release_date")


class Refused(Exception):
    """Why a run group is not re-run (its results stay self-reported with this reason)."""


@dataclass(frozen=True)
class Rerun:
    """What the maintainer's re-run of one run group is: the model as it is, with allow-listed options."""

    spec: str
    revision: str | None
    options: dict[str, Any]


def run_groups(entries: Iterable[Entry]) -> dict[str, list[Entry]]:
    """Entries that one `bench run` can recompute together (same model spec, settings, limit, seed, style)."""
    groups: dict[str, list[Entry]] = {}
    for e in entries:
        groups.setdefault(sha256_json(_run_settings(e)), []).append(e)
    return groups


def _run_settings(entry: Entry) -> dict[str, Any]:
    model, task = entry.record["model"], entry.record["task"]
    instructions = task.get("instructions")
    style = instructions.get("style") if isinstance(instructions, dict) else None
    return {"spec": model["spec"], "name": model["name"], "revision": model["revision"], "family": model.get("family"),
            "settings": model.get("settings") or {}, "limit": task["limit"], "seed": task["seed"],
            "instruction_style": style}


def rerun_plan(entry: Entry, *, base_url: str | None = None) -> Rerun:
    """The maintainer's re-run of `entry`'s model; `Refused` says why there is none.

    Only the family's vector options come from the record (runtime options such as endpoints, timeouts,
    retries, cache, device are the maintainer's defaults); a hub model is loaded at its recorded revision
    and under its own name; an API model only against `base_url`.
    """
    from adapters.options import family_options, runtime_options
    from adapters.registry import MODELS, MTEB_FAMILY, ST_FAMILY, family_class, resolve

    run = _run_settings(entry)
    spec = run["spec"]
    _check_no_path(spec, "model spec")
    family, source, _ = resolve(spec)  # an unknown model or family: a BenchError, "could not re-run"
    if family in (MTEB_FAMILY, ST_FAMILY) and run.get("family") in (MTEB_FAMILY, ST_FAMILY):
        family = run["family"]  # one spec, two families: MTEB's implementation or the harness's templates
    cls = family_class(family)
    vector = set(family_options(cls)) - runtime_options(cls) - {"revision"}
    options = {k: v for k, v in run["settings"].items() if k in vector}
    for key, value in run["settings"].items():  # a template MTEB's implementation ignores too: refused
        if key in vector or key == "template":
            _check_no_path(value, f"option {key}")
    if set(ENDPOINT_OPTIONS) & set(family_options(cls)):
        if not base_url:
            raise Refused("an API result is re-run only against an endpoint the maintainer names "
                          "(`bench leaderboard verify --base-url URL`); the recorded endpoint is never contacted")
        options["base_url"] = base_url
    hub = spec not in MODELS and not Path(source).expanduser().exists()
    return Rerun(spec, run["revision"] if hub else None, options)


def _check_no_path(value: Any, what: str) -> None:
    """A recorded value may name a hub id or a file in the working directory, never a path elsewhere."""
    texts = [value] if isinstance(value, str) else [v for v in (value if isinstance(value, list) else []) if isinstance(v, str)]
    for text in texts:
        body = text.partition(":")[2] if ":" in text and not text.startswith(("/", "~")) else text
        if body.startswith("~") or unsafe_member_name(body):  # absolute, a drive, or climbing out with ..
            raise Refused(f"the recorded {what} names a path outside the working directory ({printable(text, 80)}); "
                          "a verification loads only models the maintainer controls")


def rerun_options(entries: list[Entry], *, data_dir: str | None, cache_dir: str | None, use_cache: bool,
                  output_dir: str, base_url: str | None = None) -> Any:
    """The RunOptions that recompute `entries` (one run group) as the maintainer's run (`rerun_plan`)."""
    from bench.runner import RunOptions

    plan, run = rerun_plan(entries[0], base_url=base_url), _run_settings(entries[0])
    return RunOptions(
        model=plan.spec, model_revision=plan.revision, model_options=plan.options,
        tasks=sorted({e.task for e in entries}), data_dir=data_dir, output_dir=output_dir, cache_dir=cache_dir,
        use_cache=use_cache, limit=run["limit"], seed=run["seed"], overwrite=True, show_progress_bar=False,
        instruction_style=run["instruction_style"], instruction_variants=variants_of(entries),
    )


def variants_of(entries: list[Entry]) -> Any:
    """The instruction variants the group's run records name, as a variants file (None when there are none).

    Each variant keeps its recorded set, position and label, so the re-run files it in the same experiment.
    """
    from bench.variants import Variant, VariantFile

    found: dict[str, dict[str, Variant]] = {}
    sets: dict[str, tuple[str, ...]] = {}
    for e in entries:
        v = e.record.get("variant")
        if v:
            sets.setdefault(e.task, tuple(v.get("sets") or ()))
            found.setdefault(e.task, {})[v["label"]] = Variant(e.task, v["instruction"], v.get("set"), v["index"],
                                                               v["label"])
    if not found:
        return None
    variants = {task: sorted(by_label.values(), key=lambda v: (v.set or "", v.index)) for task, by_label in found.items()}
    return VariantFile(name="recorded", sha256=sha256_json({t: [asdict(v) for v in vs.values()] for t, vs in found.items()}),
                       variants=variants, sets={t: s for t, s in sets.items() if s})


def _variant_label(record: dict[str, Any]) -> str | None:
    return (record.get("variant") or {}).get("label")


def verify_report(report: Report, *, data_dir: str | None = None, cache_dir: str | None = None,
                  use_cache: bool = True, tolerance: float = TOLERANCE, base_url: str | None = None) -> list[Verdict]:
    """Recompute every accepted result of `report` and judge it; one verdict per result, in order.

    A run group that cannot or may not be re-run (model not loadable here, data missing, an API result
    without the maintainer's `base_url`, a failure of any kind) gives its results unverified verdicts
    that say why; the other groups still run.
    """
    from bench.results import read_json
    from bench.runner import run

    verdicts: dict[int, Verdict] = {}
    with tempfile.TemporaryDirectory(prefix="bench-verify-") as out:
        for i, entries in enumerate(run_groups(report.entries).values()):
            try:
                outcomes = run(rerun_options(entries, data_dir=data_dir, cache_dir=cache_dir, use_cache=use_cache,
                                             output_dir=f"{out}/{i}", base_url=base_url))
            except (Refused, BenchError) as e:
                note = f"not re-run: {e}" if isinstance(e, Refused) else f"could not re-run: {e}"
                verdicts.update({id(entry): _verdict(entry, None, note, tolerance) for entry in entries})
                continue
            except Exception as e:  # noqa: BLE001 - a hostile group must not stop the others; its reason is kept
                logger.debug("re-run of group %d failed", i, exc_info=True)
                note = f"could not re-run: {type(e).__name__}: {printable(str(e), 200)}"
                verdicts.update({id(entry): _verdict(entry, None, note, tolerance) for entry in entries})
                continue
            by_task = {(o.task, _variant_label(o.record)): o for o in outcomes}
            for entry in entries:
                outcome = by_task.get((entry.task, _variant_label(entry.record)))
                if outcome is None:
                    verdicts[id(entry)] = _verdict(entry, None, "the re-run gave no result for this task", tolerance)
                    continue
                path = Path(outcome.result_path)
                rerun = (read_json(path), outcome.record, read_json(path.parent / MODEL_META))
                verdicts[id(entry)] = _verdict(entry, rerun, "", tolerance)
    return [verdicts[id(e)] for e in report.entries]


def _verdict(entry: Entry, rerun: tuple[Any, dict[str, Any], Any] | None, note: str, tolerance: float) -> Verdict:
    from bench.results import main_score  # imports MTEB; only a verify run needs it

    claimed = main_score(entry.result)
    recomputed = worst = None
    if rerun is not None:
        result, record, meta = rerun
        recomputed = main_score(result)
        worst, differ = compare(entry.result, result, tolerance)
        mismatch = _identity_mismatch(entry.record, record) or _facts_mismatch(entry.model_meta, meta)
        if mismatch:
            note = f"the re-run differs in {mismatch}"
        elif differ:
            note = f"{len(differ)} score(s) differ by more than {tolerance:g}: " + "; ".join(differ[:5])
    return Verdict(
        task=entry.task, model=entry.model.name, revision=entry.model.revision, setting=entry.model.experiment,
        file=entry.file, sha256=entry_sha256(entry), claimed=claimed, recomputed=recomputed, max_abs_diff=worst,
        verified=rerun is not None and not note, note=note or f"all scores agree within {tolerance:g}",
    )


def _identity_mismatch(claimed: dict[str, Any], rerun: dict[str, Any]) -> str:
    """The first of model name, revision, content, setting, dataset revision, instructions that the
    re-run did differently (the re-run names the model by what loading it gives, never by the claim)."""
    fields = {
        "model name": lambda r: r["model"]["name"], "model revision": lambda r: r["model"]["revision"],
        "model content": lambda r: r["model"].get("content"),
        "setting": lambda r: r["model"].get("experiment") or {}, "dataset revision": lambda r: r["task"]["dataset"]["revision"],
        "instructions": lambda r: r["task"]["instructions_sha256"],
    }
    for name, get in fields.items():
        if get(claimed) != get(rerun):
            return f"{name} ({_shown(get(rerun))}, the submission says {_shown(get(claimed))})"
    return ""


def _facts_mismatch(claimed: Any, rerun: Any) -> str:
    """The first model_meta.json fact the site shows (size, dimension, card ...) that the re-run's differs in."""
    claimed = claimed if isinstance(claimed, dict) else {}
    rerun = rerun if isinstance(rerun, dict) else {}
    for key in META_FACTS:
        if claimed.get(key) != rerun.get(key):
            return f"model_meta.json {key} ({_shown(rerun.get(key))}, the submission says {_shown(claimed.get(key))})"
    return ""


def _shown(value: Any) -> str:
    return printable(repr(value), 120)


# ------------------------------------------------------------------------------------ the file
def verification_file(submission: str, verdicts: list[Verdict], tolerance: float = TOLERANCE) -> dict[str, Any]:
    from bench.runner import package_versions

    return {
        "format": FORMAT,
        "format_version": 1,
        "submission": Path(submission).name,
        "verified_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "tolerance": {"absolute": tolerance, "applies_to": "every numeric score of every split"},
        "versions": package_versions(),
        "results": [asdict(v) for v in verdicts],
    }


def load_verifications(paths: Iterable[str | Path]) -> dict[str, dict[str, Any]]:
    """entry_sha256 -> verdict, for the verified results in the verification files at `paths`."""
    verified: dict[str, dict[str, Any]] = {}
    for path in paths:
        path = Path(path)
        try:
            raw = path.read_bytes()
            if json_depth(raw) > MAX_JSON_DEPTH:
                raise DataError(f"Verification file {path} nests deeper than {MAX_JSON_DEPTH} levels; it is not one "
                                "`bench leaderboard verify` wrote.")
            data = json.loads(raw.decode("utf-8"))
        except FileNotFoundError:
            raise DataError(f"No verification file at {path}: give a file written by `bench leaderboard verify --out`.") from None
        except (OSError, ValueError) as e:  # ValueError: not UTF-8, not JSON, an integer too long
            raise DataError(f"Verification file {path} is unreadable ({e}); rerun `bench leaderboard verify`.") from e
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("results"), list):
            raise DataError(f"{path} is not a verification file (format {FORMAT!r}); write one with `bench leaderboard verify`.")
        for item in data["results"]:
            if isinstance(item, dict) and item.get("verified") is True and isinstance(item.get("sha256"), str):
                verified[item["sha256"]] = {**item, "verification_file": path.name, "verified_at": data.get("verified_at")}
    return verified


def verification_of(entry: Entry, verified: dict[str, dict[str, Any]]) -> str:
    """VERIFIED when this exact result is verified in a loaded verification file, else SELF_REPORTED."""
    return VERIFIED if entry_sha256(entry) in verified else SELF_REPORTED
