"""MTEB's published results as leaderboard rows: `bench leaderboard build --mteb-results PATH`.

PATH is a local clone of MTEB's results repository (https://github.com/embeddings-benchmark/results, with
its `results/` folder) or any `mteb.ResultCache` folder (`~/.cache/mteb`: `results/` and `remote/results/`).
It is read with MTEB's own loader, so a row holds exactly the numbers MTEB's leaderboard shows:

* `ResultCache.get_cache_paths` finds the result files of the suites' tasks in the revision folders
  (`results/<org__name>/<revision>/<Task>.json`), never in an `experiments/` folder, nor in a revision
  folder whose model_meta.json names experiment settings;
* `TaskResult.from_disk` reads each file (converting MTEB's older formats), and
  `BenchmarkResults.join_revisions` keeps one result per model and task as MTEB's leaderboard does (the
  revision MTEB's registry names, else the newest MTEB version);
* `TaskResult.validate_and_filter_scores(task).get_score()` is the task's score on MTEB's default
  splits and subsets (its main score), ×100.

A task MTEB gives no score for (an older file without the main score MTEB now reads, such as a
reranking file of MTEB < 1.0 holding only `map`; a default split or subset missing: NaN) counts as
missing **for that task only** (`ExternalRow.unscored`, with why, and one warning naming the model and
the task): the model keeps every suite it completes, and a suite whose tasks it has files of all of but
one or more MTEB cannot score shows it as a partial row ("10 of 11", unranked by the one comparability
rule), as MTEB's leaderboard shows a model with a missing task. Before, one such file dropped the model
from every suite (17 models of MTEB's repository, the OpenAI and Google ones among them, vanished from
`generic-sts` though all seven STS files were complete).

A suite gets the models that have every one of its tasks, or files of all of them with some unscored. Only suites made of MTEB's own tasks take
part (`mteb_suites`: every task is MTEB's, by name, main score and pinned dataset revision): `generic`
and `generic-sts`, not `metaeol-sts` (its SentEval copies hold other pairs). A model's row carries the
scores of the suites it completes, the facts of its ModelMeta (model_meta.json in its folder, else MTEB's
registry entry), and notes where MTEB's setting differs from the harness's task (`_task_notes`), also
per cell (`ExternalRow.cell_marks`: an older main score, an older or unrecorded dataset revision), the
revision folders its scores come from (`revisions`, each named when MTEB's join took tasks from several),
and the datasets MTEB's registry says it was trained on (`training`, as MTEB's leaderboard reads them for
its zero-shot column: bench/leaderboard/zero_shot.py).

Every model with result files of the suites' tasks that makes no row is listed with why (`published`'s
`excluded`: leaderboard.json `excluded_models`, the site's "left out" list), so a model is never missing
without a word: a folder that cannot be read, a model completing no suite (the tasks it lacks).

A model MTEB's registry does not know (a `ResultCache` folder holding the user's own run) is read as
`ResultCache.load_results` reads it: its name and revision from its model_meta.json, else from its folder's
names; its row is marked `marks.UNREGISTERED`, with no run spec and no link into MTEB's repository. Which
names are registered is read once from the whole registry (`registered_names`), never by asking MTEB for
the names found, which raises a KeyError for one it does not know.

Reading never trusts the folder, and nothing in one model folder stops the build: a missing or wrong PATH
is one error; a model folder with an unreadable, oversized, too deeply nested or malformed file (each
checked within bench/core/bounded.py's bounds before MTEB's loader reads it: a file is parsed twice, a KB
each, so that MTEB's own reader converts its older formats), a file or folder that is a link, a model name
that imitates another (bench/leaderboard/names.py, as for a submission), a score MTEB cannot read or one
outside its metric's range, or any other error MTEB's loader raises on it, is left out with one warning
naming the folder and the cause (all of them left out is an error). MTEB is imported here only, so a build
without --mteb-results never loads it.
"""

from __future__ import annotations

import logging
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from bench.core.bounded import load_json_bounded, printable, read_at_most
from bench.core.errors import BenchError, ConfigError, DataError
from bench.core.json_types import JSONObject
from bench.leaderboard import names
from bench.leaderboard.external import CellMark, Excluded, ExternalRow
from bench.leaderboard.reference import metric_range, task_reference
from bench.results import marks, task_catalog

if TYPE_CHECKING:
    from types import ModuleType

    from mteb.abstasks import AbsTask
    from mteb.models import ModelMeta
    from mteb.results import ModelResult, TaskResult

logger = logging.getLogger(__name__)

RESULTS_REPO = "https://github.com/embeddings-benchmark/results"
MAX_FILE_BYTES = 2_000_000  # a result file of these tasks is ~1 KB; MTEB's largest multilingual ones are < 1 MB
FACTS = (
    "n_parameters",
    "revision",
    "release_date",
    "license",
    "open_weights",
    "embed_dim",
    "max_tokens",
    "memory_usage_mb",
    "reference",
    "use_instructions",
)
SETTING_NOTE = (
    "published by MTEB: computed by MTEB with its own implementation of each model (the model's own prompts, "
    "not the harness's task instruction); not re-run by this harness"
)

UNREGISTERED_NOTE = (
    "not in MTEB's model registry: the model's name, revision and facts are its own folder's (model_meta.json, "
    "else the folder's name and revision), which MTEB has not checked; `bench run --model mteb:...` cannot run it"
)


class _Skip(Exception):
    """A model folder that cannot be read as MTEB publishes results: left out, with this reason."""


class _Unscored(Exception):
    """A task MTEB gives no score for in a model's file: missing for that task only, with this reason."""


NO_REVISION = "dataset revision not available"  # what MTEB's loader gives a file that names no dataset revision


class Published(NamedTuple):
    """What a results folder gives the board: the rows, and every model with results of the suites' tasks
    that makes no row, with why (`Excluded`)."""

    rows: list[ExternalRow]
    excluded: list[Excluded]


def published_rows(path: Path | str, suites: Mapping[str, Sequence[str]] | None = None) -> list[ExternalRow]:
    """One row per model of the results folder `path` that completes at least one suite, or has files of all
    of a suite's tasks with some MTEB cannot score (`published`'s rows).

    Args:
        path: a clone of embeddings-benchmark/results, or an `mteb.ResultCache` folder.
        suites: suite -> tasks to fill (default: the harness's suites made of MTEB tasks, `mteb_suites`).
    """
    return published(path, suites).rows


def published(path: Path | str, suites: Mapping[str, Sequence[str]] | None = None) -> Published:
    """`published_rows`' rows, and the models left out with why (a folder that cannot be read, a model
    completing no suite), for leaderboard.json's `excluded_models`."""
    root = _results_folder(Path(path))
    import mteb

    chosen = mteb_suites(suites)
    tasks = sorted({t for members in chosen.values() for t in members})
    if not tasks:
        return Published([], [])
    cache = mteb.ResultCache(cache_path=root)  # creates nothing: `root` is an existing folder
    files = cache.get_cache_paths(
        tasks=tasks, require_model_meta=False, include_remote=True, load_experiments="no_experiments"
    )
    folders: dict[Path, list[Path]] = defaultdict(list)
    for file in files:
        folders[file.parent].append(file)
    excluded: list[Excluded] = []
    loaded, skipped = _load_folders(folders, excluded)
    if skipped and not loaded:
        raise DataError(
            f"--mteb-results {path}: none of its {len(skipped)} model folder(s) with results of {', '.join(tasks)} "
            f"could be read; the first: {skipped[0]}"
        )
    if not files:
        logger.warning("--mteb-results %s holds no result of the tasks %s", path, ", ".join(tasks))
    task_objects = {t: mteb.get_task(t) for t in tasks}
    registered = registered_names()
    rows = []
    for name, (results, where) in _joined(mteb, loaded, excluded).items():
        try:
            row = _row(name, results, chosen, task_objects, name in registered)
        except Exception as e:  # noqa: BLE001 - one model's files never stop the build (see _load_folders)
            excluded.append(_left_out(where, name, e))
            continue
        if isinstance(row, str):
            excluded.append(_excluded(name, row))
        else:
            rows.append(row)
    return Published(sorted(rows, key=lambda r: r.model), sorted(excluded, key=lambda x: (x["model"], x["reason"])))


def _excluded(model: str, reason: str) -> Excluded:
    return {"source": "mteb", "model": printable(model, 200), "reason": printable(reason, 400)}


def registered_names() -> frozenset[str]:
    """The names MTEB's model registry holds, read once from the whole registry (`mteb.get_model_metas()`
    with no names, as `join_revisions` reads it), never by asking for the models found: MTEB raises a
    KeyError for a name it does not know, and a `ResultCache` folder may hold any model's results (the
    user's own run of a model MTEB does not list)."""
    import mteb

    return frozenset(m.name for m in mteb.get_model_metas() if m.name)


def mteb_suites(suites: Mapping[str, Sequence[str]] | None = None) -> dict[str, tuple[str, ...]]:
    """The suites made of MTEB's own tasks: each task is in MTEB's registry under its name, with the
    harness's main score and the dataset revision the harness pins (so MTEB's published score is a
    score of the harness's task). With `suites` None, every such suite of the harness (`generic`,
    `generic-sts`); a given suite with another task is an error naming it."""
    import mteb

    given = suites is not None
    candidates = suites if suites is not None else task_catalog.suites()
    known: dict[str, bool] = {}
    found: dict[str, tuple[str, ...]] = {}
    for suite, members in candidates.items():
        foreign = [t for t in members if not known.setdefault(t, _is_mteb_task(mteb, t))]
        if members and not foreign:
            found[suite] = tuple(members)
        elif given:
            raise ConfigError(
                f"suite '{suite}' holds {', '.join(foreign) or 'no task'}, not MTEB's own task(s) (same name, main "
                "score and dataset revision in MTEB's registry): MTEB publishes no result of them."
            )
    return found


def _is_mteb_task(mteb: ModuleType, name: str) -> bool:
    ref = task_reference(name)
    if ref is None:
        return False
    try:
        task = mteb.get_task(name)
    except KeyError:
        return False
    if type(task).__module__.startswith("bench."):
        return False  # the harness's own task, registered with MTEB once `bench.tasks` is imported
    meta = task.metadata
    return bool(meta.main_score == ref.main_score and meta.dataset.get("revision") in ref.revisions)


def _results_folder(path: Path) -> Path:
    """`path` when it is a results folder (has `results/` or `remote/results/`), else one error saying what to give."""
    give = (
        f"give a local clone of MTEB's results repository (git clone --depth 1 {RESULTS_REPO}) or an "
        "mteb.ResultCache folder such as ~/.cache/mteb"
    )
    if not path.exists():
        raise BenchError(f"--mteb-results {path}: no such folder; {give}.")
    if not path.is_dir():
        raise BenchError(f"--mteb-results {path} is a file, not a folder; {give}.")
    if not ((path / "results").is_dir() or (path / "remote" / "results").is_dir()):
        raise BenchError(
            f"--mteb-results {path} is not an MTEB results folder: it has no results/ (nor remote/results/) "
            f"folder of <org__model>/<revision>/<Task>.json files; {give}."
        )
    return path


def _load_folders(
    folders: Mapping[Path, list[Path]], excluded: list[Excluded]
) -> tuple[dict[Path, ModelResult], list[str]]:
    """Each revision folder's results as MTEB's loader reads them; a folder that cannot be read, whatever
    the error (MTEB's loader and pydantic raise many kinds on odd files), is skipped with one warning
    naming it and the cause, so that nothing in one folder stops the build."""
    loaded: dict[Path, ModelResult] = {}
    skipped: list[str] = []
    for folder, files in sorted(folders.items()):
        try:
            loaded[folder] = _folder_result(folder, files)
        except _Experiment:
            continue
        except Exception as e:  # noqa: BLE001 - see the docstring
            problem = f"{folder}: {_cause(e)}"
            skipped.append(problem)
            logger.warning("--mteb-results: model folder skipped: %s", printable(problem, 400))
            name = f"{folder.parent.name.replace('__', '/')} (revision folder {folder.name})"
            excluded.append(_excluded(name, f"its folder cannot be read: {_cause(e)}"))
    return loaded, skipped


def _joined(
    mteb: ModuleType, loaded: Mapping[Path, ModelResult], excluded: list[Excluded]
) -> dict[str, tuple[list[ModelResult], list[Path]]]:
    """Model name -> its results as `BenchmarkResults.join_revisions` keeps them, and the revision folders
    they were read from (what a warning names). Joined at once; should MTEB's join fail on some folder's
    values, each model is joined alone, and only the model it fails on is left out."""
    where: dict[str, list[Path]] = defaultdict(list)
    for folder, result in loaded.items():
        where[result.model_name].append(folder)

    def join(results: Iterable[ModelResult]) -> list[ModelResult]:
        found = mteb.BenchmarkResults.model_construct(model_results=list(results), benchmark=None)
        return list(found.join_revisions())

    try:
        joined = join(loaded.values())
    except Exception:  # noqa: BLE001 - which model's values MTEB's join fails on is found below
        joined = []
        for name, folders in where.items():
            try:
                joined += join(loaded[f] for f in folders)
            except Exception as e:  # noqa: BLE001 - one model's files never stop the build
                excluded.append(_left_out(folders, name, e))
    return {name: (results, where[name]) for name, results in _by_model(joined).items()}


def _left_out(folders: Iterable[Path], name: str, error: BaseException) -> Excluded:
    """The one warning for a model whose results cannot make a row (its folders, its name and the cause),
    and its entry in the list of excluded models."""
    shown = ", ".join(str(f) for f in sorted(folders))
    logger.warning(
        "--mteb-results: model folder %s (%s) left out: %s", printable(shown, 400), printable(name), _cause(error)
    )
    return _excluded(name, f"its results cannot be read: {_cause(error)}")


def _cause(error: BaseException) -> str:
    """A `_Skip`'s reason as given; any other error as its type and first line."""
    return printable(str(error), 400) if isinstance(error, _Skip) else f"{type(error).__name__}: {_first_line(error)}"


class _Experiment(Exception):
    """A revision folder whose model_meta.json names experiment settings: not MTEB's canonical result."""


def _folder_result(folder: Path, files: Iterable[Path]) -> ModelResult:
    """One revision folder as a `ModelResult`, identified as `ResultCache.load_results` does: by its
    model_meta.json (name, revision) when it has one, else by its path and MTEB's registry entry."""
    from mteb.results import ModelResult, TaskResult

    if folder.is_symlink() or folder.parent.is_symlink():  # as a linked file: what it reaches is not the clone's
        raise _Skip("the model or revision folder is a link")
    name, revision, meta = _identity(folder)
    imitation = names.problem(name, "model_meta.json")
    if imitation is not None:  # as a submission's name: no hidden character, no look-alike of an ASCII name
        raise _Skip(f"model name {imitation.message}")
    results = []
    for file in sorted(files):
        _check_json(file)
        try:
            results.append(TaskResult.from_disk(file))
        except (OSError, ValueError, LookupError, TypeError, AttributeError) as e:
            raise _Skip(f"{file.name} is not an MTEB result file ({type(e).__name__}: {_first_line(e)})") from None
    return ModelResult.model_construct(
        model_name=name, model_revision=revision, task_results=results, experiment_name=None, model_meta=meta
    )


def _check_json(file: Path, *, unique_keys: bool = False) -> Any:
    """`file` parsed within the bounds of bench/core/bounded.py (a regular file, at most MAX_FILE_BYTES,
    nested at most MAX_DEPTH, UTF-8 JSON): every file is checked so before MTEB's loader reads it, since
    `json.loads` is recursive and a file nested 100,000 deep would end the whole build with a
    RecursionError instead of skipping one folder. `unique_keys` refuses a key written twice (a result
    file is read as MTEB reads it: the last one kept)."""
    if file.is_symlink() or not file.is_file():  # a link or a device is never opened
        raise _Skip(f"{file.name} is a link or not a regular file")
    try:
        raw = read_at_most(file, MAX_FILE_BYTES)
        return load_json_bounded(raw, file.name, error=DataError, max_bytes=MAX_FILE_BYTES, unique_keys=unique_keys)
    except (BenchError, OSError) as e:
        raise _Skip(_first_line(e)) from None


def _identity(folder: Path) -> tuple[str, str, ModelMeta | None]:
    from mteb import get_model_meta
    from mteb.models import ModelMeta

    meta_file = folder / "model_meta.json"
    if not meta_file.exists() and not meta_file.is_symlink():
        name = folder.parent.name.replace("__", "/")
        try:
            return name, folder.name, get_model_meta(name, fetch_from_hf=False)
        except (KeyError, ValueError):
            return name, folder.name, None
    data = _check_json(meta_file, unique_keys=True)
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise _Skip("model_meta.json has no model name")
    if data.get("experiment_kwargs"):
        raise _Experiment
    revision = data.get("revision")
    try:
        meta = ModelMeta.model_construct(**data)  # unvalidated, as `ResultCache.load_results` reads it
    except TypeError as e:
        raise _Skip(f"model_meta.json: {_first_line(e)}") from None
    return str(data["name"]), revision if isinstance(revision, str) else folder.name, meta


def _by_model(joined: Iterable[ModelResult]) -> dict[str, list[ModelResult]]:
    """`join_revisions` keeps one result per model and task but may leave them in several revisions' ModelResults."""
    found: dict[str, list[ModelResult]] = defaultdict(list)
    for result in joined:
        found[result.model_name].append(result)
    return found


def _row(
    name: str,
    results: list[ModelResult],
    suites: Mapping[str, Sequence[str]],
    tasks: Mapping[str, AbsTask],
    registered: bool,
) -> ExternalRow | str:
    """The model's row for the suites it completes, or has files of all tasks of with some MTEB cannot
    score (`_Unscored`: missing for that task only); else why it makes no row."""
    scores: dict[str, float] = {}
    published: dict[str, TaskResult] = {}
    revision: dict[str, str] = {}
    unscored: dict[str, str] = {}
    for result in results:
        for task_result in result.task_results:
            if task_result.task_name in tasks:
                try:
                    scores[task_result.task_name] = _score(task_result, tasks[task_result.task_name])
                except _Unscored as e:
                    unscored[task_result.task_name] = str(e)
                    continue
                published[task_result.task_name] = task_result
                revision[task_result.task_name] = result.model_revision or ""
    complete = [s for s, members in suites.items() if all(t in scores for t in members)]
    partial = [
        s for s, members in suites.items() if s not in complete and all(t in scores or t in unscored for t in members)
    ]
    if not complete and not partial:
        return _why_no_row(suites, scores, unscored)
    shown = {t: why for t, why in sorted(unscored.items()) if any(t in suites[s] for s in partial)}
    if shown:  # a model with no row is listed with why instead (`published`'s excluded)
        logger.warning(
            "--mteb-results: %s: %s counted as missing (the model stays on the suites it completes): %s",
            printable(name),
            ", ".join(shown),
            "; ".join(f"{t}: {why}" for t, why in shown.items()),
        )
    kept = sorted({t for s in (*complete, *partial) for t in suites[s] if t in scores})
    main = max(results, key=lambda r: sum(t.task_name in kept for t in r.task_results))
    notes = [n for t in kept for n in _task_notes(t, published[t])]
    notes += [f"{t}: {why}" for t, why in shown.items()]
    if not registered:
        notes.insert(0, UNREGISTERED_NOTE)
    return ExternalRow(
        source="mteb",
        model=name,
        scores={t: 100 * scores[t] for t in kept},
        label=marks.PUBLISHED.label,
        # a model MTEB does not list is most likely the user's own run, not in MTEB's repository: no link
        url=f"{RESULTS_REPO}/tree/main/results/{name.replace('/', '__').replace(' ', '_')}" if registered else "",
        notes=(SETTING_NOTE, *notes),
        facts=_facts(main),
        spec={"model": f"mteb:{name}"} if registered else None,
        unregistered=not registered,
        unscored=shown,
        cell_marks={t: found for t in kept if (found := cell_marks(t, published[t]))},
        revisions=tuple(r for r, _ in Counter(revision[t] for t in sorted(kept)).most_common() if r),
        training=training_datasets(name) if registered else None,
    )


def _why_no_row(suites: Mapping[str, Sequence[str]], scores: Mapping[str, float], unscored: Mapping[str, str]) -> str:
    """Why a model completes no suite: for each suite it has a result file of some task of (the nearest
    first), the tasks it has no file of (a task MTEB cannot score counts as missing only where every other
    task of the suite has a file)."""
    lacking = {s: [t for t in members if t not in scores and t not in unscored] for s, members in suites.items()}
    near = sorted((s for s in suites if len(lacking[s]) < len(suites[s])), key=lambda s: (len(lacking[s]), s))
    return "completes no suite: " + "; ".join(
        f"{s} lacks {', '.join(lacking[s])} (has {len(suites[s]) - len(lacking[s])} of {len(suites[s])} tasks)"
        for s in near
    )


def _score(task_result: TaskResult, task: AbsTask) -> float:
    """MTEB's score of the task on its default splits and subsets; `_Unscored` (missing for this task only)
    when MTEB gives none for a file that holds no main score (an older MTEB's file: a reranking file of
    MTEB < 1.0 holds only `map`) or when it is NaN (a default split or subset missing); `_Skip` (the whole
    folder) for a main score MTEB cannot read or one outside the metric's range, which only a damaged or
    forged file holds."""
    try:
        value = float(task_result.validate_and_filter_scores(task).get_score())
    except (ValueError, KeyError, TypeError) as e:
        older = _older_file(task_result, task)
        if older is not None:
            raise _Unscored(older) from None
        raise _Skip(
            f"{task_result.task_name}: scores MTEB cannot read ({type(e).__name__}: {_first_line(e)})"
        ) from None
    if math.isnan(value):
        raise _Unscored("MTEB's score is NaN: a default split or subset of the task is missing from the file")
    ref = task_reference(task_result.task_name)
    low, high = (metric_range(ref.main_score) if ref else None) or (-math.inf, math.inf)
    if not math.isfinite(value) or not low <= value <= high:
        raise _Skip(f"{task_result.task_name}: main score {value!r} is outside its metric's range [{low}, {high}]")
    return value


def _older_file(task_result: TaskResult, task: AbsTask) -> str | None:
    """Why MTEB gives no score when the file holds no main score at all (none given, and not the metric
    MTEB reads now: an older MTEB's file), naming what the file holds; None for any other failure."""
    main = task.metadata.main_score
    subsets = [s for split in task_result.scores.values() for s in split]
    if not subsets or any(s.get("main_score") is not None or main in s for s in subsets):
        return None
    held = sorted({k for s in subsets for k in s if k not in ("main_score", "hf_subset", "languages", "mteb_version")})
    version = task_result.mteb_version if task_result.mteb_version != "mteb version not available" else "< 1.0"
    return (
        f"MTEB gives no main score ({main}): the file, written by MTEB {version}, holds "
        f"{', '.join(held[:6]) or 'no score'}{' …' if len(held) > 6 else ''} only"
    )


def _task_notes(task: str, result: TaskResult) -> list[str]:
    """Where MTEB's published result differs from the harness's task: another dataset revision, or a
    main score of an older MTEB named otherwise (the published value is shown as MTEB shows it)."""
    ref = task_reference(task)
    if ref is None:
        return []
    notes = []
    revision = result.dataset_revision
    if revision and revision not in ref.revisions:
        pinned = ", ".join(ref.revisions)
        notes.append(f"{task}: MTEB's result is on dataset revision {revision}; the harness pins {pinned}")
    subsets = next(iter(result.scores.values()), [])
    if subsets and ref.main_score not in subsets[0]:
        notes.append(
            f"{task}: MTEB's result is from an older MTEB whose main score for it is not {ref.main_score} "
            f"(shown as MTEB's leaderboard shows it)"
        )
    return notes


def cell_marks(task: str, result: TaskResult) -> dict[CellMark, str]:
    """The marks of one published cell that keep it from being compared with the harness's own runs of
    the task, each with its words: `older_metric` (the file's main score is not the metric the harness
    computes: an older MTEB's, e.g. `map` for `map_at_1000`) and `older_revision` (another dataset
    revision than the harness pins, or none recorded)."""
    ref = task_reference(task)
    if ref is None:
        return {}
    found: dict[CellMark, str] = {}
    subsets = next(iter(result.scores.values()), [])
    if subsets and ref.main_score not in subsets[0]:
        found["older_metric"] = f"an older MTEB's main score, not {ref.main_score}"
    revision = result.dataset_revision
    if revision == NO_REVISION or not revision:
        found["older_revision"] = "no dataset revision recorded (a file of an older MTEB)"
    elif revision not in ref.revisions:
        found["older_revision"] = (
            f"dataset revision {revision[:12]}, not the {', '.join(r[:12] for r in ref.revisions)} the harness pins"
        )
    return found


def training_datasets(name: str) -> frozenset[str] | None:
    """The datasets MTEB's registry says the model was trained on, similar tasks included
    (`ModelMeta.get_training_datasets`, what MTEB's leaderboard reads for its zero-shot column, by the
    model's registry entry); None when the registry does not say (MTEB shows "⚠️ NA")."""
    from mteb import get_model_meta

    try:
        found = get_model_meta(name, fetch_from_hf=False).get_training_datasets()
    except (KeyError, ValueError):
        return None
    return frozenset(found) if found is not None else None


def _facts(result: ModelResult) -> JSONObject:
    """The ModelMeta facts the site shows (model_meta.json's, else MTEB's registry's); the revision is the
    folder's the scores come from."""
    meta = result.model_meta
    facts: JSONObject = {key: getattr(meta, key, None) for key in FACTS} if meta is not None else {}
    facts["revision"] = result.model_revision
    return {k: v for k, v in facts.items() if v is not None}


def _first_line(error: BaseException) -> str:
    return printable(str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__, 200)
