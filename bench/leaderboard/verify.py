"""`bench leaderboard verify`: recompute a submission's scores, and which results the site may call verified.

Threat model. Validation (bench/leaderboard/validate.py) checks that a submission is consistent with the
harness, and its manifest catches files damaged or changed by accident since `bench submit`. Neither
stops forgery: whoever edits a score can delete the manifest or recompute its sha256. So a
submitted score is *self-reported* until the leaderboard's maintainer verifies it: re-runs each
result on its task with this harness, compares every score, and writes a verification file. The
build shows a result as *verified* only when the verification file holds that exact result (a sha256
of its result file, run record and model_meta.json) with a match; any later edit, of a score or of
the model's published facts, changes the hash, so an edited result falls back to self-reported. The
verification file is the maintainer's, kept apart from submissions.

A submission is hostile input, so the re-run takes from it only what the maintainer would choose to
run anyway (`rerun_plan` in bench/run/reproduce.py, the run layer's entry point for this):
* the model by what it *is*: a registered name or hub id (at its recorded hub revision), never under
  the submission's claimed name. The re-run files the model under the name, revision and content
  (sha256 of its files, bench/adapters/identity.py) that loading it gives, so a renamed model
  (`--model-name bigcorp/SuperEmbed-7B` on MiniLM) is caught as "the re-run differs in model name";
* of the recorded settings, only the family's declared vector options (those that change vectors,
  bench/adapters/options.py): never endpoints, credentials, timeouts, retries, cache, device or paths; a
  value naming a path outside the working directory is refused;
* an API model (a family with an endpoint option) is re-run only against the endpoint the maintainer
  names (`--base-url`); without one it stays self-reported, and the recorded endpoint is never
  contacted, so no key and no task text reach a server the submitter controls. MTEB's registered API
  clients (`openai/text-embedding-3-small`, `cohere/...`) call their provider directly and are never
  re-run;
* a model MTEB registers only at MTEB's registered revision (a recorded revision is the submitter's
  choice, and on the hub a pull-request ref anyone can open), and a model whose MTEB loader imports its
  repository's own code (`trust_remote_code`) only when the maintainer names it
  (`--trust-remote-code MODEL`); an unregistered hub model never with its own code
  (bench/adapters/remote_code.py).
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
from collections.abc import Collection, Container, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.core.bounded import printable
from bench.core.errors import BenchError, DataError
from bench.core.fileio import sha256_json
from bench.core.json_types import JSONObject
from bench.leaderboard.entries import Entry, Report, entry_sha256
from bench.leaderboard.limits import MAX_JSON_DEPTH, json_depth
from bench.leaderboard.submission import MODEL_META
from bench.results.store import run_settings

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


def numeric_scores(value: object, path: str = "") -> Iterator[tuple[str, float]]:
    """(path, number) for every numeric leaf of a TaskResult's `scores` (booleans are not scores)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from numeric_scores(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from numeric_scores(v, f"{path}[{i}]")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield path, float(value)


def compare(
    claimed: Mapping[str, object], recomputed: Mapping[str, object], tolerance: float = TOLERANCE
) -> tuple[float, list[str]]:
    """(largest |difference|, the scores that differ by more than `tolerance` or exist in one only)."""
    a, b = dict(numeric_scores(claimed["scores"])), dict(numeric_scores(recomputed["scores"]))
    differ = sorted(set(a) ^ set(b))
    worst = 0.0
    for key in sorted(set(a) & set(b)):
        diff = abs(a[key] - b[key])
        worst = max(worst, diff if math.isfinite(diff) else math.inf)
        if not diff <= tolerance:
            differ.append(f"{key}: claimed {_as_printed(key, a[key])}, recomputed {_as_printed(key, b[key])}")
    return worst, differ


def _as_printed(key: str, value: float) -> str:
    """A score as every table of the harness prints it (×100, two decimals) when its name says it is one
    (`metric_range`), marked "×100"; any other number (a count, seconds) as it is."""
    from bench.leaderboard.reference import metric_range
    from bench.results.tables import format_score

    name = key.rsplit(".", 1)[-1]
    bounds = (-1.0, 1.0) if name == "main_score" else metric_range(name)  # every main score of the harness is one
    return f"{format_score(value)} (×100)" if bounds and bounds[1] <= 1 and math.isfinite(value) else f"{value:.6g}"


# ------------------------------------------------------------------------------------ re-running
META_FACTS = ("name", "revision", "n_parameters", "embed_dim", "max_tokens", "license", "reference", "release_date")


def run_groups(entries: Iterable[Entry]) -> dict[str, list[Entry]]:
    """Entries that one `bench run` can recompute together (same model spec, settings, limit, seed, style)."""
    groups: dict[str, list[Entry]] = {}
    for e in entries:
        groups.setdefault(sha256_json(run_settings(e.record)), []).append(e)
    return groups


def _variant_label(record: Mapping[str, object]) -> str | None:
    variant = record.get("variant") or {}
    return variant.get("label") if isinstance(variant, dict) else None


def verify_report(
    report: Report,
    *,
    data_dir: str | None = None,
    cache_dir: str | None = None,
    use_cache: bool = True,
    tolerance: float = TOLERANCE,
    base_url: str | None = None,
    trusted: Collection[str] = (),
) -> list[Verdict]:
    """Recompute every accepted result of `report` and judge it; one verdict per result, in order.

    A run group that cannot or may not be re-run (model not loadable here, data missing, an API result
    without the maintainer's `base_url`, a failure of any kind) gives its results unverified verdicts
    that say why; the other groups still run. `trusted`: the registered models whose own hub code the
    maintainer allows to run (`--trust-remote-code MODEL`), at MTEB's revision only.
    """
    from bench.results.store import read_json
    from bench.run import reproduce  # imports the run (MTEB, the model stack): only a verify run needs it

    verdicts: dict[int, Verdict] = {}
    with tempfile.TemporaryDirectory(prefix="bench-verify-") as out:
        for i, entries in enumerate(run_groups(report.entries).values()):
            try:
                outcomes = reproduce.rerun(
                    [e.record for e in entries],
                    data_dir=data_dir,
                    cache_dir=cache_dir,
                    use_cache=use_cache,
                    output_dir=f"{out}/{i}",
                    base_url=base_url,
                    trusted=trusted,
                )
            except (reproduce.Refused, BenchError) as e:
                note = f"not re-run: {e}" if isinstance(e, reproduce.Refused) else f"could not re-run: {e}"
                verdicts.update({id(entry): _verdict(entry, None, note, tolerance) for entry in entries})
                continue
            except Exception as e:
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
                assert outcome.result_path is not None  # every outcome of a run names its result file
                path = Path(outcome.result_path)
                rerun = (read_json(path), outcome.record, read_json(path.parent / MODEL_META))
                verdicts[id(entry)] = _verdict(entry, rerun, "", tolerance)
    return [verdicts[id(e)] for e in report.entries]


def _verdict(entry: Entry, rerun: tuple[Any, dict[str, Any], Any] | None, note: str, tolerance: float) -> Verdict:
    from bench.results.store import main_score  # imports MTEB; only a verify run needs it

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
        task=entry.task,
        model=entry.model.name,
        revision=entry.model.revision,
        setting=entry.model.experiment,
        file=entry.file,
        sha256=entry_sha256(entry),
        claimed=claimed,
        recomputed=recomputed,
        max_abs_diff=worst,
        verified=rerun is not None and not note,
        note=note or f"all scores agree within {tolerance:g}",
    )


def _identity_mismatch(claimed: dict[str, Any], rerun: dict[str, Any]) -> str:
    """The first of model name, revision, content, setting, dataset revision, instructions that the
    re-run did differently (the re-run names the model by what loading it gives, never by the claim)."""
    fields = {
        "model name": lambda r: r["model"]["name"],
        "model revision": lambda r: r["model"]["revision"],
        "model content": lambda r: r["model"].get("content"),
        "setting": lambda r: r["model"].get("experiment") or {},
        "dataset revision": lambda r: r["task"]["dataset"]["revision"],
        "instructions": lambda r: r["task"]["instructions_sha256"],
    }
    for name, get in fields.items():
        if get(claimed) != get(rerun):
            return f"{name} ({_shown(get(rerun))}, the submission says {_shown(get(claimed))})"
    return ""


def _facts_mismatch(claimed: object, rerun: object) -> str:
    """The first model_meta.json fact the site shows (size, dimension, card ...) that the re-run's differs in."""
    ours = claimed if isinstance(claimed, dict) else {}
    theirs = rerun if isinstance(rerun, dict) else {}
    for key in META_FACTS:
        if ours.get(key) != theirs.get(key):
            return f"model_meta.json {key} ({_shown(theirs.get(key))}, the submission says {_shown(ours.get(key))})"
    return ""


def _shown(value: object) -> str:
    return printable(repr(value), 120)


# ------------------------------------------------------------------------------------ the file
def verification_file(submission: str, verdicts: list[Verdict], tolerance: float = TOLERANCE) -> dict[str, object]:
    from bench.core.versions import package_versions

    return {
        "format": FORMAT,
        "format_version": 1,
        "submission": Path(submission).name,
        "verified_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "tolerance": {"absolute": tolerance, "applies_to": "every numeric score of every split"},
        "versions": package_versions(),
        "results": [asdict(v) for v in verdicts],
    }


def load_verifications(paths: Iterable[str | Path]) -> dict[str, JSONObject]:
    """entry_sha256 -> verdict, for the verified results in the verification files at `paths`."""
    verified: dict[str, JSONObject] = {}
    for path in paths:
        path = Path(path)
        try:
            raw = path.read_bytes()
            if json_depth(raw) > MAX_JSON_DEPTH:
                raise DataError(
                    f"Verification file {path} nests deeper than {MAX_JSON_DEPTH} levels; it is not one "
                    "`bench leaderboard verify` wrote."
                )
            data = json.loads(raw.decode("utf-8"))
        except FileNotFoundError:
            raise DataError(
                f"No verification file at {path}: give a file written by `bench leaderboard verify --out`."
            ) from None
        except (OSError, ValueError) as e:  # ValueError: not UTF-8, not JSON, an integer too long
            raise DataError(f"Verification file {path} is unreadable ({e}); rerun `bench leaderboard verify`.") from e
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("results"), list):
            raise DataError(
                f"{path} is not a verification file (format {FORMAT!r}); write one with `bench leaderboard verify`."
            )
        for item in data["results"]:
            if isinstance(item, dict) and item.get("verified") is True and isinstance(item.get("sha256"), str):
                verified[item["sha256"]] = {
                    **item,
                    "verification_file": path.name,
                    "verified_at": data.get("verified_at"),
                }
    return verified


def verification_of(entry: Entry, verified: Container[str]) -> str:
    """VERIFIED when this exact result is verified in a loaded verification file, else SELF_REPORTED."""
    return VERIFIED if entry_sha256(entry) in verified else SELF_REPORTED
