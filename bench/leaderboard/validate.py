"""Is a submission acceptable? Every check, and every reason a submission can be turned away.

A submission is accepted whole or not at all: one bad file rejects it, and the leaderboard build
lists it with every problem found (file, field, reason), so nothing is dropped silently. The checks,
in the order they run for each result file:

    unreadable -> out_of_range -> schema -> unpaired -> record_mismatch -> variant -> unknown_task
    -> task_version -> main_score -> dataset_revision -> instructions_sha256 -> limited -> subsets
    -> score_range -> duplicate

then, over the accepted results' model names, `lookalike_name` (a name that imitates an ASCII name or
a name already on the board, or mixes scripts within a word: bench/leaderboard/names.py), plus `manifest` (files changed, missing or
unlisted since `bench submit` packed them) and `empty`. Before any of these, limits on hostile input
(bench/leaderboard/limits.py): `link` (a symbolic link anywhere in the submission, a second hard link, a
swap while reading: never followed), `too_many_files`, `too_large` and `unsafe_path` from the folder
listing or the archive's directory
before a file is read, `json_depth` before a file is parsed. Every number parsed (result file, run
record, model_meta.json, manifest) is range-checked as it is parsed, before anything uses it
(`out_of_range`: an integer no float can hold, such as one of 4,001 digits, or NaN/Infinity, which JSON
does not allow but Python's parser reads), and any exception a check did not foresee becomes the
submission's `internal_error`, so one submission never stops a build, `verify` or `submit` with a
traceback. Every message quotes the submission through a bounded view (bench/leaderboard/schema.py
`Problem.of`), since the rejected list is published. The reference values (task versions, main metrics,
revisions, instruction hashes, splits and subsets) come from the harness's own task classes
(bench/leaderboard/reference.py; the splits and subsets from MTEB's metadata, `task_subsets`).

Instruction-variant results (`bench run --instruction-variants`: the run record has a `variant` block
and the experiment an `instruction` key naming its label) are accepted like any result, except that
their instructions are by design not the task's: instead of matching the task's instruction hash,
the variant must agree with itself (label, instruction hash) and with its experiment (`variant`).
The site shows them apart from the model rows (table.py `sensitivity`).

Across submissions, conflicts are decided by trust, not by order (bench/leaderboard/trust.py
`settle_conflicts`); what a result is (`Entry`, `ModelKey`) and the verdict (`Report`) are
bench/leaderboard/entries.py. A repeat within one submission is a `duplicate`.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import logging
import math
import sys
from collections.abc import Container, Iterable, Iterator
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any

from bench.core.bounded import printable
from bench.core.fileio import sha256_json
from bench.core.variants import EXPERIMENT_KEY, variant_label
from bench.leaderboard import names, schema
from bench.leaderboard.entries import Entry, Report, model_key, result_key
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
from bench.results import task_catalog

logger = logging.getLogger(__name__)

MAX_RANGE_PROBLEMS = 10  # out-of-range numbers named per file; the rest are counted

REASONS: dict[str, str] = {
    "unreadable": "a file is not valid UTF-8 JSON, or the archive cannot be opened",
    "out_of_range": (
        "a number no float can hold (an integer beyond ±1.8e308, such as one of 4,001 digits) or NaN/Infinity "
        "(not JSON), in a result file, run record, model_meta.json or manifest; checked as the file is parsed"
    ),
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
    "subsets": (
        "the scores' splits and hf_subsets are not exactly the task's (a split or subset the task does not "
        "have, one missing, or one given twice): an extra subset would change the mean that is shown"
    ),
    "score_range": "a score is outside its metric's range (NaN and Infinity are `out_of_range`)",
    "duplicate": "the same (model, revision, setting, task) appears twice within one submission",
    "conflict": (
        "submissions give differing results for one (model, revision, setting, task): another score (to the last "
        "digit), or another identity (model content, dataset revision, instructions, a setting, model_meta.json); "
        "a verified one is shown over self-reported ones; when no one result is verified, all are held back and "
        "listed (the rest of each submission is still shown). A re-run with equal scores and identity merges"
    ),
    "internal_error": (
        "checking the submission raised an error the checks did not foresee (a harness bug, named by its "
        "type): the submission is left out and the build goes on with the others"
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
    "link": (
        "a symbolic link in the submission (the path given, a file or folder in it, or an archive member), a file with "
        "a second hard link, or a file or folder swapped while it was read: never followed"
    ),
    "lookalike_name": (
        "a model name that is not NFKC-normalised, holds an invisible character, imitates an ASCII name or "
        "a name already on the board with look-alike characters (Unicode confusables, UTS #39 skeleton, marks and "
        "signs aside), or mixes scripts within a word without the maintainer's --allow-mixed-script"
    ),
}


def validate(
    submission: Submission,
    *,
    data_dirs: Iterable[Path] = (),
    board: set[str] | None = None,
    allow_mixed_script: Container[str] = frozenset(),
) -> Report:
    """Check every file of `submission`; whatever a check did not foresee is the submission's `internal_error`.

    Args:
        data_dirs: local data folders whose files' revisions count as the harness's own.
        board: model names accepted earlier in the same build, which a look-alike name may not imitate;
            filled in with this submission's names when it is accepted. Results that differ from another
            submission's are settled afterwards, over all submissions at once (`settle_conflicts`).
        allow_mixed_script: model names whose words may mix scripts (`--allow-mixed-script`: the
            maintainer knows them to be genuine; bench/leaderboard/names.py rule 4).
    """
    try:
        return _validate(submission, tuple(Path(d) for d in data_dirs), board, allow_mixed_script)
    except Exception as e:  # one submission's problem must not stop the build of the others
        logger.debug("validating %s raised", submission.source, exc_info=True)
        return Report(submission.source, problems=[internal_error(submission.source, e)])


def internal_error(source: str, error: BaseException) -> Problem:
    """An exception no check foresaw, as the submission's rejection: its type and a bounded message."""
    return Problem(
        "internal_error",
        source,
        "",
        f"checking stopped on an unexpected {type(error).__name__} ({printable(str(error), 200)}); "
        "the submission is left out, the other submissions are built",
    )


def _validate(
    submission: Submission, data_dirs: tuple[Path, ...], board: set[str] | None, allow_mixed_script: Container[str]
) -> Report:
    report = Report(submission.source)
    if submission.problems:
        report.problems += submission.problems
        return report
    files = submission.files
    report.problems += _check_manifest(submission)
    report.problems += _check_model_meta(files)
    results = [p for p in files if role(p) == "result"]
    records = [p for p in files if role(p) == "run_record"]
    if not results:
        report.problems.append(Problem("empty", submission.source, "", "no result files (<Task>.json) found"))
    for path in records:
        if result_path_of(path) not in files:
            report.problems.append(
                Problem.of("unpaired", path, "", "run record without its result file {}", result_path_of(path))
            )
    seen: dict[tuple[str, str, str, str], str] = {}
    for path in results:
        entry, problems = _check_result(path, files, data_dirs)
        report.problems += problems
        if entry is None:
            continue
        key = result_key(entry)
        if key in seen:
            report.problems.append(
                Problem.of(
                    "duplicate",
                    path,
                    "task_name",
                    "{} @ {} on {} is already given by {} in this submission",
                    entry.model.label,
                    entry.model.revision,
                    Plain(entry.task),
                    seen[key],
                )
            )
            continue
        seen[key] = path
        entry.submission = submission.source
        report.entries.append(entry)
    model_names = {e.model.name: record_path_of(e.file) for e in reversed(report.entries)}  # first file naming each
    report.problems += names.problems(model_names, board=board or (), allowed=allow_mixed_script)
    if report.valid and board is not None:
        board.update(model_names)
    return report


def _load(path: str, files: dict[str, bytes]) -> tuple[Any, list[Problem]]:
    """The parsed file, or the problems that stop it being used: too deep, not UTF-8 JSON, a number out of range."""
    depth = json_depth(files[path])
    if depth > MAX_JSON_DEPTH:
        return None, [
            Problem("json_depth", path, "", f"nested {depth:,} levels deep; at most {MAX_JSON_DEPTH} are parsed")
        ]
    try:
        data = json.loads(files[path].decode("utf-8"))
    except ValueError as e:  # UnicodeDecodeError, JSONDecodeError, or an integer past Python's 4,300 digits
        return None, [Problem.of("unreadable", path, "", "not valid UTF-8 JSON ({})", _error_text(e))]
    problems = out_of_range(path, data)
    return (None if problems else data), problems


def out_of_range(path: str, data: object) -> list[Problem]:
    """Every number of `data` that no float holds (an integer beyond ±1.8e308) or that is NaN or infinite,
    named by field; the first MAX_RANGE_PROBLEMS, then a count. Runs before any check reads a number, so
    none of them (nor the table, nor verify) meets an OverflowError."""
    bad = _bad(data)
    found = [
        Problem.of("out_of_range", path, schema.field_path(where), "{}", Plain(_why(v)))
        for where, v in itertools.islice(bad, MAX_RANGE_PROBLEMS)
    ]
    more = sum(1 for _ in bad)
    if more:
        found.append(Problem("out_of_range", path, "", f"and {more:,} more such numbers"))
    return found


def _bad(value: object, where: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], int | float]]:
    """(path, number) for each number of a parsed JSON value a float cannot hold (recursive: depth is bounded
    by MAX_JSON_DEPTH before parsing)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _bad(v, (*where, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _bad(v, (*where, i))
    elif isinstance(value, int | float) and not _float_holds(value):
        yield where, value


def _float_holds(value: int | float) -> bool:
    """True for a finite float, a bool, or an integer within a float's range (compared exactly, never converted)."""
    return math.isfinite(value) if isinstance(value, float) else abs(value) <= sys.float_info.max


def _why(value: int | float) -> str:
    """What is wrong with an out-of-range number, without formatting a huge integer whole."""
    if isinstance(value, float):
        return f"{value} is not a number JSON allows, nor a score"
    digits = int(abs(value).bit_length() * math.log10(2))  # a lower bound, then exact: never formatted
    while 10**digits <= abs(value):
        digits += 1
    return f"an integer of {digits:,} digits: no float holds it (at most ±1.8e308)"


def _error_text(error: ValueError) -> str:
    """What the parser said, without the text it choked on (a UnicodeDecodeError holds the bytes)."""
    if isinstance(error, UnicodeDecodeError):
        return f"byte 0x{error.object[error.start]:02x} at {error.start:,} is not UTF-8: {error.reason}"
    return str(error)


def _check_manifest(submission: Submission) -> list[Problem]:
    raw = submission.manifest
    if raw is None:
        return []
    manifest, problems = _load(MANIFEST, submission.files)
    if problems:
        return problems
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


def _check_model_meta(files: dict[str, bytes]) -> list[Problem]:
    """Out-of-range numbers in each model_meta.json (the size and memory the site shows are read from it).

    A model_meta.json that is not JSON is ignored, as before (the row's facts then come from MTEB's
    registry); one that parses is held to the same number range as every other file.
    """
    problems = []
    for path in (p for p in files if role(p) == "model_meta"):
        if json_depth(files[path]) > MAX_JSON_DEPTH:
            continue
        try:
            meta = json.loads(files[path].decode("utf-8"))
        except ValueError:
            continue
        problems += out_of_range(path, meta)
    return problems


@cache
def task_subsets(task: str) -> dict[str, tuple[str, ...]]:
    """The splits the harness evaluates `task` on, each with its hf_subsets (MTEB's TaskMetadata, read
    through the task catalogue, so without importing MTEB): what a result's `scores` must hold, exactly."""
    facts = task_catalog.facts(task)
    assert facts is not None  # asked only for a task `task_reference` found
    return {split: tuple(subsets) for split, subsets in facts["subsets"].items()}


def _check_subsets(path: str, result: dict[str, Any], task: str) -> list[Problem]:
    """Exactly the task's splits, and in each exactly its subsets, each once: the site averages a split's
    subsets, so an extra one (a fake `hf_subset` at 0.99) would move the score shown."""
    expected = task_subsets(task)
    scores = result["scores"]
    problems = [
        Problem.of(
            "subsets",
            path,
            f"scores.{split}",
            "{} has no split {}; its splits: {}",
            Plain(task),
            split,
            Plain(", ".join(expected)),
        )
        for split in scores
        if split not in expected
    ]
    for split, subsets in expected.items():
        given = [s.get("hf_subset") for s in scores.get(split, [])]
        for i, name in enumerate(given):
            if name not in subsets:
                problems.append(
                    Problem.of(
                        "subsets",
                        path,
                        f"scores.{split}[{i}].hf_subset",
                        "{} is not a subset of {}; its subsets: {}",
                        name,
                        Plain(task),
                        Plain(", ".join(subsets)),
                    )
                )
            elif name in given[:i]:
                problems.append(
                    Problem.of("subsets", path, f"scores.{split}[{i}].hf_subset", "{} is given twice", name)
                )
        missing = [name for name in subsets if name not in given]
        if missing:
            problems.append(
                Problem.of(
                    "subsets",
                    path,
                    f"scores.{split}",
                    "no scores for subset(s) {} of {}",
                    Plain(", ".join(missing)),
                    Plain(task),
                )
            )
    return problems


def _check_result(
    path: str, files: dict[str, bytes], data_dirs: tuple[Path, ...]
) -> tuple[Entry | None, list[Problem]]:
    result, problems = _load(path, files)
    if problems:
        return None, problems
    problems = schema.check("result", result, path)
    if problems:
        return None, problems
    record_file = record_path_of(path)
    if record_file not in files:
        return None, [Problem.of("unpaired", path, "", "no run record beside it (expected {})", record_file)]
    record, problems = _load(record_file, files)
    if problems:
        return None, problems
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
        close = difflib.get_close_matches(result["task_name"][:100], sorted(task_catalog.task_names()), n=3)
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
    problems += _check_subsets(path, result, ref.name)
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
