"""Is a submission acceptable? Every check, and every reason a submission can be turned away.

A submission is accepted whole or not at all: one bad file rejects it, and the leaderboard build
lists it with every problem found (file, field, reason), so nothing is dropped silently. The checks,
in the order they run for each result file:

    unreadable -> schema -> unpaired -> record_mismatch -> variant -> unknown_task -> task_version
    -> main_score -> dataset_revision -> instructions_sha256 -> limited -> score_range -> duplicate

then, over the accepted results' model names, `lookalike_name` (a name that imitates an ASCII name or
a name already on the board: bench/leaderboard/names.py), plus `manifest` (files changed, missing or
unlisted since `bench submit` packed them) and `empty`. Before any of these, limits on hostile input
(bench/leaderboard/limits.py): `link` (a symbolic link anywhere in the submission: never followed),
`too_many_files`, `too_large` and `unsafe_path` from the folder listing or the archive's directory
before a file is read, `json_depth` before a file is parsed. Every message quotes the submission
through a bounded view (bench/leaderboard/schema.py `Problem.of`), since the rejected list is published.
The reference values (task versions, main metrics, revisions, instruction hashes) come from the
harness's own task classes (bench/leaderboard/reference.py).

Instruction-variant results (`bench run --instruction-variants`: the run record has a `variant` block
and the experiment an `instruction` key naming its label) are accepted like any result, except that
their instructions are by design not the task's: instead of matching the task's instruction hash,
the variant must agree with itself (label, instruction hash) and with its experiment (`variant`).
The site shows them apart from the model rows (table.py `sensitivity`).

Submissions merge: a result that an earlier submission of the same build already gave, with the same
result file and run record (`result_sha256`: sha256 of each as canonical JSON, key order ignored), is
the same result, not a `duplicate`: the later submission is accepted and the copy is not added twice
(`Report.merged`). So a run folder that repeats the default results beside its instruction variants can
be submitted after the default run. A *different* result for the same (model, revision, setting, task),
or a repeat within one submission, is a `duplicate`.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from bench.core.bounded import printable
from bench.core.fileio import sha256_json
from bench.core.variants import EXPERIMENT_KEY, variant_label
from bench.leaderboard import names, schema
from bench.leaderboard.limits import (
    MAX_ARCHIVE_BYTES,
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_JSON_DEPTH,
    MAX_TOTAL_BYTES,
    json_depth,
)
from bench.leaderboard.reference import TaskReference, metric_range, task_reference
from bench.leaderboard.schema import Plain, Problem
from bench.leaderboard.submission import (
    MANIFEST,
    Submission,
    model_meta_of,
    record_path_of,
    result_path_of,
    role,
)
from bench.results.sensitivity import base_experiment

REASONS: dict[str, str] = {
    "unreadable": "a file is not valid UTF-8 JSON, or the archive cannot be opened",
    "empty": "the submission holds no result files",
    "schema": "a result file, run record or manifest does not follow its JSON Schema (bench/leaderboard/schemas/)",
    "unpaired": "a result file without its run record (run_records/<Task>.json beside it), or the reverse",
    "record_mismatch": "a result file, its file name and its run record disagree (task name, dataset revision)",
    "unknown_task": "the task is not one of the harness's tasks (`python -m bench list tasks`)",
    "task_version": "the result was made with another version of the task than the harness's",
    "main_score": "the main score is not the task's main metric, or differs from that metric's value",
    "dataset_revision": "the dataset revision is not one the harness produces (pinned, packaged, or a --data-dir copy)",
    "instructions_sha256": "the instructions used differ from the task's, or do not match their recorded hash",
    "limited": "made with --limit: a subset, not comparable with full runs",
    "score_range": "a score is not a finite number within its metric's range",
    "duplicate": (
        "the same (model, revision, setting, task) appears twice within a submission, or an earlier "
        "submission gave a different result for it (an identical result and run record is merged)"
    ),
    "variant": (
        "an instruction-variant result whose variant block disagrees with itself (label, instruction hash) "
        "or with its experiment's `instruction` key, or an `instruction` experiment without a variant block"
    ),
    "manifest": "a file differs from, is missing from, or is not listed in the submission's manifest.json",
    # hostile input, bounded before it is read or parsed (bench/leaderboard/limits.py)
    "json_depth": f"a JSON file nests arrays/objects more than {MAX_JSON_DEPTH} levels deep",
    "too_many_files": f"more than {MAX_FILES:,} files (counted from the zip directory, before reading)",
    "too_large": (
        f"a file over {MAX_FILE_BYTES // 2**20} MiB, all files over {MAX_TOTAL_BYTES // 2**20} MiB, or an "
        f"archive over {MAX_ARCHIVE_BYTES // 2**20} MiB (declared sizes checked before reading, reads capped)"
    ),
    "unsafe_path": "an archive member name that is absolute, contains '..' (path traversal) or appears twice",
    "link": "a symbolic link in the submission (the path given, a file or folder in it, or an archive member): never followed",
    "lookalike_name": (
        "a model name that is not NFKC-normalised, holds an invisible character, or imitates an ASCII name or "
        "a name already on the board with look-alike characters (Unicode confusables, UTS #39)"
    ),
}


@dataclass(frozen=True, order=True)
class ModelKey:
    """One leaderboard row: a model at a revision under one setting (MTEB experiment)."""

    name: str
    revision: str
    experiment: str  # "default", or the options that differ from the family's defaults

    @property
    def label(self) -> str:
        return self.name if self.experiment == "default" else f"{self.name} [{self.experiment}]"


@dataclass
class Entry:
    """One accepted result: a model's scores on one task, with the run record that says how."""

    submission: str
    file: str
    task: str
    model: ModelKey
    result: dict[str, Any]
    record: dict[str, Any]
    model_meta: dict[str, Any] | None = None


@dataclass
class Report:
    """The verdict on one submission."""

    submission: str
    entries: list[Entry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)  # files identical to a result an earlier submission gave

    @property
    def valid(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        if self.valid:
            variants = sum(1 for e in self.entries if e.record.get("variant"))
            models = sorted({printable(base_key(e).label) for e in self.entries})  # no terminal escapes from a setting
            extra = f" ({variants} of them under instruction variants)" if variants else ""
            if self.merged:
                extra += (
                    f"; {len(self.merged)} identical to results an earlier submission gave (merged, not added twice)"
                )
            given = f"{len(self.entries)} results of {', '.join(models)}" if self.entries else "no new results"
            return f"accepted {self.submission}: {given}{extra}"
        lines = [f"REJECTED {self.submission}: {len(self.problems)} problem(s)"]
        lines += [f"  - {p}" for p in self.problems]
        return "\n".join(lines)


def experiment_label(experiment: dict[str, Any] | None) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted((experiment or {}).items())) or "default"


def model_key(record: dict[str, Any]) -> ModelKey:
    m = record["model"]
    return ModelKey(str(m["name"]), str(m["revision"]), experiment_label(m.get("experiment")))


def base_key(entry: Entry) -> ModelKey:
    """The model row an entry belongs to; for an instruction-variant result, the row of its siblings
    (its experiment without the `instruction` key)."""
    if not entry.record.get("variant"):
        return entry.model
    return ModelKey(entry.model.name, entry.model.revision, base_experiment(entry.record["model"].get("experiment")))


def result_sha256(entry: Entry) -> str:
    """The identity of a result for merging submissions: its result file and run record as canonical JSON."""
    return sha256_json({"result": entry.result, "record": entry.record})


def validate(
    submission: Submission, *, data_dirs: Iterable[Path] = (), taken: dict[tuple, tuple[str, str]] | None = None
) -> Report:
    """Check every file of `submission`.

    Args:
        data_dirs: local data folders whose files' revisions count as the harness's own.
        taken: (model, revision, setting, task) -> (file, `result_sha256`) of results accepted earlier in
            the same build; the same result again is merged (`Report.merged`), a different one is a
            `duplicate`. Filled in with this submission's results when it is accepted.
    """
    report = Report(submission.source)
    if submission.problems:
        report.problems += submission.problems
        return report
    data_dirs = tuple(Path(d) for d in data_dirs)
    files = submission.files
    report.problems += _check_manifest(submission)
    results = [p for p in files if role(p) == "result"]
    records = [p for p in files if role(p) == "run_record"]
    if not results:
        report.problems.append(Problem("empty", submission.source, "", "no result files (<Task>.json) found"))
    for path in records:
        if result_path_of(path) not in files:
            report.problems.append(
                Problem.of("unpaired", path, "", "run record without its result file {}", result_path_of(path))
            )
    seen: dict[tuple, tuple[str, str]] = {}
    merged: dict[tuple, str] = {}
    for path in results:
        entry, problems = _check_result(path, files, data_dirs)
        report.problems += problems
        if entry is None:
            continue
        key = (*_key_tuple(entry.model), entry.task)
        digest = result_sha256(entry)
        given = (taken or {}).get(key)
        earlier, earlier_digest = given if isinstance(given, tuple) else (given, None)
        if key in seen or key in merged:  # twice within this submission
            earlier, why = seen[key][0] if key in seen else merged[key], ""
        elif earlier and earlier_digest == digest:  # the very result an earlier submission gave: accepted once
            report.merged.append(path)
            merged[key] = f"{submission.source}:{path}"
            continue
        else:
            why = " with other scores or another run record"
        if earlier:
            report.problems.append(
                Problem.of(
                    "duplicate",
                    path,
                    "task_name",
                    "{} @ {} on {} is already given by {}{}",
                    entry.model.label,
                    entry.model.revision,
                    Plain(entry.task),
                    Plain(printable(earlier)),
                    Plain(why),
                )
            )
            continue
        seen[key] = (f"{submission.source}:{path}", digest)
        entry.submission = submission.source
        report.entries.append(entry)
    model_names = {e.model.name: record_path_of(e.file) for e in reversed(report.entries)}  # first file naming each
    report.problems += names.problems(model_names, board=(key[0] for key in (taken or {})))
    if report.valid and taken is not None:
        taken.update(seen)
    return report


def _key_tuple(key: ModelKey) -> tuple[str, str, str]:
    return (key.name, key.revision, key.experiment)


def _load(path: str, files: dict[str, bytes]) -> tuple[Any, Problem | None]:
    depth = json_depth(files[path])
    if depth > MAX_JSON_DEPTH:
        return None, Problem(
            "json_depth", path, "", f"nested {depth:,} levels deep; at most {MAX_JSON_DEPTH} are parsed"
        )
    try:
        return json.loads(files[path].decode("utf-8")), None
    except ValueError as e:  # UnicodeDecodeError, JSONDecodeError, or an integer past Python's 4,300 digits
        return None, Problem.of("unreadable", path, "", "not valid UTF-8 JSON ({})", _error_text(e))


def _error_text(error: ValueError) -> str:
    """What the parser said, without the text it choked on (a UnicodeDecodeError holds the bytes)."""
    if isinstance(error, UnicodeDecodeError):
        return f"byte 0x{error.object[error.start]:02x} at {error.start:,} is not UTF-8: {error.reason}"
    return str(error)


def _check_manifest(submission: Submission) -> list[Problem]:
    raw = submission.manifest
    if raw is None:
        return []
    manifest, problem = _load(MANIFEST, submission.files)
    if problem:
        return [problem]
    problems = schema.check("manifest", manifest, MANIFEST)
    if problems:
        return problems
    listed = {f["path"]: f for f in manifest["files"]}
    for i, item in enumerate(manifest["files"]):
        data = submission.files.get(item["path"])
        if data is None:
            problems.append(
                Problem.of(
                    "manifest", MANIFEST, f"files[{i}].path", "lists {}, which is not in the submission", item["path"]
                )
            )
        elif hashlib.sha256(data).hexdigest() != item["sha256"]:
            problems.append(
                Problem(
                    "manifest",
                    item["path"],
                    "",
                    f"content changed since packing (sha256 differs from manifest files[{i}])",
                )
            )
    for path in submission.files:
        if path != MANIFEST and path not in listed:
            problems.append(Problem("manifest", path, "", "file is not listed in manifest.json (added after packing?)"))
    return problems


def _check_result(
    path: str, files: dict[str, bytes], data_dirs: tuple[Path, ...]
) -> tuple[Entry | None, list[Problem]]:
    result, problem = _load(path, files)
    if problem:
        return None, [problem]
    problems = schema.check("result", result, path)
    if problems:
        return None, problems
    record_file = record_path_of(path)
    if record_file not in files:
        return None, [Problem.of("unpaired", path, "", "no run record beside it (expected {})", record_file)]
    record, problem = _load(record_file, files)
    if problem:
        return None, [problem]
    problems = schema.check("run_record", record, record_file)
    if problems:
        return None, problems
    problems = _check_pair(path, result, record_file, record)
    if problems:
        return None, problems
    problems = _check_variant(record_file, record)
    if problems:
        return None, problems
    ref = task_reference(result["task_name"], data_dirs)
    if ref is None:
        from bench.tasks import TASKS

        close = difflib.get_close_matches(result["task_name"][:100], sorted(TASKS), n=3)
        hint = Plain(f"close: {', '.join(close)}; " if close else "")
        return None, [
            Problem.of(
                "unknown_task",
                path,
                "task_name",
                "{} is not a harness task ({}`python -m bench list tasks` lists them)",
                result["task_name"],
                hint,
            )
        ]
    problems = _check_against_reference(path, result, record_file, record, ref, data_dirs)
    problems += _check_scores(path, result, ref)
    if problems:
        return None, problems
    entry = Entry("", path, ref.name, model_key(record), result, record, model_meta_of(path, files))
    return entry, []


def _check_pair(path: str, result: dict[str, Any], record_file: str, record: dict[str, Any]) -> list[Problem]:
    problems = []
    stem = PurePosixPath(path).stem
    if stem != result["task_name"]:
        problems.append(
            Problem.of(
                "record_mismatch",
                path,
                "task_name",
                "the file is {} but holds task {}",
                f"{stem}.json",
                result["task_name"],
            )
        )
    if record["task"]["name"] != result["task_name"]:
        problems.append(
            Problem.of(
                "record_mismatch",
                record_file,
                "task.name",
                "run record is for {}, its result file for {}",
                record["task"]["name"],
                result["task_name"],
            )
        )
    if record["task"]["dataset"]["revision"] != result["dataset_revision"]:
        problems.append(
            Problem.of(
                "record_mismatch",
                record_file,
                "task.dataset.revision",
                "{} but the result file says {}",
                record["task"]["dataset"]["revision"],
                result["dataset_revision"],
            )
        )
    return problems


def _check_variant(record_file: str, record: dict[str, Any]) -> list[Problem]:
    """A variant result names its instruction consistently: label, hash and experiment agree (bench/core/variants.py)."""
    variant = record.get("variant")
    experiment = record["model"].get("experiment") or {}
    if not variant:
        if EXPERIMENT_KEY in experiment:
            return [
                Problem.of(
                    "variant",
                    record_file,
                    f"model.experiment.{EXPERIMENT_KEY}",
                    "experiment names instruction variant {} but the run record has no variant block",
                    experiment[EXPERIMENT_KEY],
                )
            ]
        return []
    problems = []
    if experiment.get(EXPERIMENT_KEY) != variant["label"]:
        problems.append(
            Problem.of(
                "variant",
                record_file,
                f"model.experiment.{EXPERIMENT_KEY}",
                "{}, but the variant block's label is {}",
                experiment.get(EXPERIMENT_KEY),
                variant["label"],
            )
        )
    if sha256_json(variant["instruction"]) != variant["instruction_sha256"]:
        problems.append(
            Problem(
                "variant",
                record_file,
                "variant.instruction_sha256",
                "the variant's instruction does not hash to variant.instruction_sha256 (edited?)",
            )
        )
    elif variant_label(variant["set"], variant["index"], variant["instruction"]) != variant["label"]:
        problems.append(
            Problem.of(
                "variant",
                record_file,
                "variant.label",
                "{} is not the label of this instruction, set and index ({})",
                variant["label"],
                variant_label(variant["set"], variant["index"], variant["instruction"]),
            )
        )
    return problems


def _check_against_reference(
    path: str,
    result: dict[str, Any],
    record_file: str,
    record: dict[str, Any],
    ref: TaskReference,
    data_dirs: tuple[Path, ...],
) -> list[Problem]:
    task = record["task"]
    problems = []
    if task["version"] != ref.version:
        problems.append(
            Problem.of(
                "task_version",
                record_file,
                "task.version",
                "{}, the harness's {} is version {}",
                task["version"],
                Plain(ref.name),
                ref.version,
            )
        )
    if task["main_score"] != ref.main_score:
        problems.append(
            Problem.of(
                "main_score",
                record_file,
                "task.main_score",
                "{}, the harness's main score of {} is {}",
                task["main_score"],
                Plain(ref.name),
                ref.main_score,
            )
        )
    revision = result["dataset_revision"]
    if revision not in ref.revisions:
        accepted = "; ".join(f"{r} ({why})" for r, why in ref.revisions.items())
        hint = (
            "" if data_dirs else " A result on a local copy is accepted when the build gets that copy with --data-dir."
        )
        problems.append(
            Problem.of(
                "dataset_revision",
                path,
                "dataset_revision",
                "{} is not a revision the harness produces for {}: {}.{}",
                revision,
                Plain(ref.name),
                Plain(accepted),
                Plain(hint),
            )
        )
    if task["instructions_sha256"] not in ref.instructions_sha256 and not record.get("variant"):
        accepted = ", ".join(f"{h[:12]}… ({why})" for h, why in ref.instructions_sha256.items())
        problems.append(
            Problem.of(
                "instructions_sha256",
                record_file,
                "task.instructions_sha256",
                "{} is not the hash of the harness's {} instructions: {}",
                task["instructions_sha256"][:12] + "…",
                Plain(ref.name),
                Plain(accepted),
            )
        )
    elif sha256_json(task["instructions"]) != task["instructions_sha256"]:
        problems.append(
            Problem(
                "instructions_sha256",
                record_file,
                "task.instructions",
                "the recorded instructions do not hash to task.instructions_sha256 (edited?)",
            )
        )
    if task["limit"] is not None:
        problems.append(
            Problem.of(
                "limited",
                record_file,
                "task.limit",
                "run with --limit {}; rerun without --limit to submit",
                task["limit"],
            )
        )
    return problems


def _check_scores(path: str, result: dict[str, Any], ref: TaskReference) -> list[Problem]:
    problems = []
    for split, entries in result["scores"].items():
        for i, scores in enumerate(entries):
            where = f"scores.{split}[{i}]"
            for key, value in scores.items():
                if isinstance(value, bool) or not isinstance(value, int | float):
                    continue
                bounds = metric_range(ref.main_score if key == "main_score" else key)
                if not math.isfinite(value):
                    problems.append(
                        Problem.of("score_range", path, f"{where}.{key}", "{} is not a finite number", value)
                    )
                elif bounds and not bounds[0] <= value <= bounds[1]:
                    problems.append(
                        Problem.of("score_range", path, f"{where}.{key}", "{} is outside [{}, {}]", value, *bounds)
                    )
            main = scores.get(ref.main_score)
            if isinstance(main, int | float) and math.isfinite(main) and abs(main - scores["main_score"]) > 1e-6:
                problems.append(
                    Problem.of(
                        "main_score",
                        path,
                        f"{where}.main_score",
                        "{} but {} is {}",
                        scores["main_score"],
                        Plain(ref.main_score),
                        main,
                    )
                )
            elif ref.main_score not in scores:
                problems.append(
                    Problem.of(
                        "main_score",
                        path,
                        f"{where}.{ref.main_score}",
                        "the task's main metric {} is missing",
                        Plain(ref.main_score),
                    )
                )
    return problems
