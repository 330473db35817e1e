"""Generic (instruction-independent) MTEB tasks, run by MTEB's own task classes with a task-level instruction.

Two sets:
* InBedder's generic controls (paper §3.2): TwentyNewsgroupsClustering, AskUbuntuDupQuestions,
  SciDocsRR, StackOverflowDupQuestions.
* MTEB's STS set STS12-16, STSBenchmark, SICK-R (suite `generic-sts`), and MetaEOL's STS evaluation
  (paper Table 1, through SentEval): the same STS12-16 plus SentEval's lower-cased STSBenchmark and
  test-only SICK-R, kept under their own names (`STSBenchmark-SentEval`, `SICK-R-SentEval`; suite
  `metaeol-sts`) because MTEB's tasks of those names hold other pairs.

Each class subclasses MTEB's own class (looked up by name with `mteb.get_task`), so loading from the hub (pinned revision, MTEB's
`dataset_transform`) and scoring (MTEB's evaluator, e.g. `AbsTaskSTS` with `AnySTSEvaluator`) are
MTEB's. What this module adds: the instruction, put in `TaskMetadata.prompt` (which the harness's
encoders use for every text of the task), and a local directory:

    DATA_DIR/<TaskName>/test.{jsonl,csv,...}   the STS tasks only: columns sentence1, sentence2, score
                                                (SentEval-derived; built by `bench build-data sts-senteval`)
    DATA_DIR/<TaskName>/                        any task whose MTEB loader is `load_dataset` (classification,
                                                clustering, STS, pair classification, ...): a `datasets`
                                                save_to_disk folder of `load_dataset(**metadata.dataset)`,
    DATA_DIR/<TaskName>/<subset>/               one per subset for a multilingual task (those present run),
                                                loaded in place of the hub, then MTEB's own `dataset_transform`

A task with a local copy is filed under a `local-<hash>` dataset revision (bench.tasks.data.saved_revision).
Retrieval and reranking tasks (MTEB's corpus/queries/qrels loader) and MTEB's deprecated fast-loading
tasks take no local copy: a folder for one is an error. With a data directory but no folder for it, a
task of MTEB's registry (and the generic tasks without the jsonl layout) loads as MTEB does, from the
hub or a filled datasets cache; the STS tasks raise MissingDataError (a suite run skips them).

`prompt_source` (`GenericMTEBTask.prompt_sources`): "harness" (default) puts the instruction below in
`TaskMetadata.prompt`; "mteb" keeps MTEB's own metadata, prompt included, so that a task under an MTEB
name is MTEB's task for MTEB's own model implementations (which read `TaskMetadata.prompt`).

Where the instructions come from:
* STS and reranking: INSTRUCTOR's MTEB evaluation code, hkunlp/instructor-large entries of its
  `DEFINITIONS` (instructor-embedding/derived/mteb_instruction_DEFINITIONS.json); reranking keeps
  its separate query and corpus instructions.
* TwentyNewsgroupsClustering: InBedder's default instruction for the task
  (InBedder/derived/task_descriptions_and_instructions.json, "instruction").
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Self, TypeVar, Unpack, cast

import mteb
from datasets import Dataset
from mteb.abstasks import AbsTask

from bench.core.errors import ConfigError, DataError
from bench.core.json_types import JSON, JSONObject
from bench.tasks.abstasks.base import (
    InstructionTask,
    MetadataUpdate,
    Prompt,
    TaskOptions,
    VariantAttributes,
    limited,
)
from bench.tasks.data import (
    DATA_DIR_ENV,
    SAVED_MARKERS,
    Schema,
    is_saved_dataset,
    read_saved_dataset,
    saved_dataset_files,
    saved_revision,
)
from bench.tasks.rows import STSRow

if TYPE_CHECKING:
    from datasets import DatasetDict
    from mteb.abstasks.task_metadata import MetadataDatasetDict
    from mteb.timing import TimingStack
    from mteb.types.statistics import SplitDescriptiveStatistics

logger = logging.getLogger(__name__)

INSTRUCTOR_SOURCE = "INSTRUCTOR evaluation DEFINITIONS, hkunlp/instructor-large (xlang-ai/instructor-embedding)"
INBEDDER_SOURCE = "InBedder default task instruction (zhang-yu-wei/InBedder, task_descriptions_and_instructions.json)"
MTEB_PROMPT_SOURCE = "MTEB's task metadata (prompt)"


class GenericMTEBTask(InstructionTask[STSRow]):
    """Mixin placed before an MTEB task class: adds the instruction, the local directory and `--limit`.

    Attributes:
        instruction: the task-level instruction (a string, or {"query", "document"} for reranking).
        instruction_source: where the instruction string comes from.
        local_layout: whether the task can read the jsonl/csv layout (only the STS tasks can); any task
            whose MTEB loader is `load_dataset` reads a `datasets` save_to_disk folder.
        prompt_sources: the values of the constructor's `prompt_source`: "harness" (the instruction above
            in `TaskMetadata.prompt`) or "mteb" (MTEB's own metadata, prompt included).
        saved_folders: per subset ("default" for a monolingual task), the save_to_disk folder the task
            reads, or None (the jsonl layout, or MTEB's own loading).
    """

    instruction: ClassVar[Prompt | None]  # None: an MTEB task without a prompt (its own metadata)
    instruction_source: ClassVar[str]
    local_layout: ClassVar[bool] = False
    local_only: ClassVar[bool] = False  # another split of MTEB's corpus: the hub copy holds other pairs
    prompt_sources: ClassVar[tuple[str, ...]] = ("mteb", "harness")
    schema = Schema(STSRow, {"sentence1": "text", "sentence2": "text", "score": "score"})
    saved_folders: dict[str, Path] | None = None
    _saved_revision: str | None = None

    def __new__(cls, *args: object, prompt_source: str = "harness", **kwargs: object) -> Self:
        # "mteb": an instance of the class's twin with MTEB's metadata (`_prompt_class`), so that
        # everything reading the class's metadata (unload, instruction variants) sees MTEB's prompt.
        return super().__new__(_prompt_class(cls, prompt_source))

    def __init__(self, *, prompt_source: str = "harness", **kwargs: Unpack[TaskOptions]) -> None:
        self.prompt_source = prompt_source
        super().__init__(**kwargs)

    # ----------------------------------------------------------------- local data
    def _find_local_files(self) -> dict[str, Path]:
        assert self.data_dir is not None  # __init__ looks for local files only with a data directory
        task_dir = self.data_dir / self.metadata.name
        folders = self._find_saved_folders(task_dir)
        if folders:
            self.saved_folders = folders
            return saved_dataset_files(task_dir, list(folders.values()))
        if self.local_layout:
            try:
                return super()._find_local_files()
            except DataError as e:  # MissingDataError stays one (a suite run skips the task)
                raise type(e)(f"{e} Or make {task_dir} a `datasets` save_to_disk copy of MTEB's dataset.") from None
        if task_dir.exists():
            raise DataError(self._not_saved_message(task_dir))
        logger.warning(
            "%s has no folder in the data directory %s; it loads as MTEB does, from the hub or a filled "
            "datasets cache.",
            self.metadata.name,
            self.data_dir,
        )
        return {}

    def _find_saved_folders(self, task_dir: Path) -> dict[str, Path] | None:
        """{subset: save_to_disk folder} of the task's local copy; None when `task_dir` holds none."""
        if not task_dir.is_dir():
            return None
        name = self.metadata.name
        why = _no_local_copy_reason(type(self))
        if why:
            raise DataError(
                f"{task_dir}: {name} takes no local copy ({why}). Remove the folder to load it from the "
                f"hub or a filled datasets cache."
            )
        if not self.metadata.is_multilingual:
            return {"default": task_dir} if is_saved_dataset(task_dir) else None
        subsets = list(self.metadata.hf_subsets)
        if is_saved_dataset(task_dir):
            raise DataError(
                f"{task_dir} is one save_to_disk folder, but {name} is multilingual: give one folder per "
                f"subset, {task_dir}/<subset>/ (subsets: {_listing(subsets)}), each "
                f"{_load_call(self.metadata.dataset, '<subset>')}.save_to_disk(...)."
            )
        found = {p.name: p for p in task_dir.iterdir() if p.is_dir() and not p.name.startswith(".")}
        unknown = sorted(set(found) - set(subsets))
        if unknown:
            raise DataError(
                f"{task_dir}: {_listing(unknown)} is no subset of {name} (its subsets: {_listing(subsets)})."
            )
        present = [s for s in self.hf_subsets if s in found]
        if not present:
            return None
        for subset in present:
            if not is_saved_dataset(found[subset]):
                raise DataError(self._not_saved_message(found[subset], subset))
        missing = [s for s in self.hf_subsets if s not in found]
        if missing:
            logger.warning(
                "%s: evaluating only the subsets with a folder in %s (%s); none for %s.",
                name,
                task_dir,
                ", ".join(present),
                ", ".join(missing),
            )
        self.hf_subsets = present
        return {s: found[s] for s in present}

    def _not_saved_message(self, folder: Path, subset: str | None = None) -> str:
        meta = self.metadata
        if meta.is_multilingual and subset is None:
            return (
                f"{folder} holds no save_to_disk folder of a subset of {meta.name}: expected {folder}/<subset>/ "
                f"(subsets: {_listing(meta.hf_subsets)}), each {_load_call(meta.dataset, '<subset>')}"
                f".save_to_disk(...) (see docs/guides/local-data.md)."
            )
        return (
            f"{folder} is not a `datasets` save_to_disk folder (no {' or '.join(SAVED_MARKERS)}); make it on a "
            f"connected machine with {_load_call(meta.dataset, subset)}.save_to_disk(...) (see "
            f"docs/guides/local-data.md), or remove it to load {meta.name} from the hub or a filled datasets cache."
        )

    def _apply_local_revision(self) -> None:
        if not self.saved_folders:
            super()._apply_local_revision()
            return
        if self._saved_revision is None:  # once: unloading restores the metadata without hashing again
            self._saved_revision = saved_revision(self.local_files or {})
        dataset = {**type(self).metadata.dataset, "revision": self._saved_revision}
        self.metadata = type(self).metadata.model_copy(update={"dataset": dataset})

    def _load_saved(self, num_proc: int | None) -> None:
        """The local copy in place of `load_dataset` (as MTEB's `AbsTask.load_data`), then MTEB's transform."""
        assert self.saved_folders
        if self.metadata.is_multilingual:
            self.dataset = {s: read_saved_dataset(folder) for s, folder in self.saved_folders.items()}
        else:
            self.dataset = read_saved_dataset(self.saved_folders["default"])
        self.dataset_transform(num_proc=num_proc)
        self._check_saved_splits()
        self.data_loaded = True

    def _check_saved_splits(self) -> None:
        """Every split MTEB will read is there: one DataError naming the folder, not a KeyError mid-run."""
        assert self.saved_folders is not None and self.dataset is not None  # set by _load_saved, the only caller
        needed = list(self.eval_splits)
        train = getattr(self, "train_split", None)  # classification and regression train on it
        if isinstance(train, str) and train not in needed:
            needed.append(train)
        for subset in self.hf_subsets:
            if self.metadata.is_multilingual:
                folder, data = self.saved_folders[subset], self.dataset.get(subset)
            else:  # as MTEB's `AbsTask.evaluate` reads it: dataset[split], or dataset["default"][split]
                folder, data = self.saved_folders["default"], self.dataset
                if isinstance(data, Mapping) and isinstance(data.get("default"), Mapping):
                    data = data["default"]
            if not isinstance(data, Mapping):
                call = _load_call(self.metadata.dataset, subset if self.metadata.is_multilingual else None)
                raise DataError(
                    f"{folder} holds one split, not a DatasetDict with the splits {_listing(needed)} that "
                    f"MTEB's {self.metadata.name} reads; save {call} without `split=`."
                )
            lacking = [s for s in needed if s not in data]
            if lacking:
                raise DataError(
                    f"{folder} lacks the split(s) {_listing(lacking)} (it has {_listing(list(data))}); "
                    f"MTEB's {self.metadata.name} reads {_listing(needed)}."
                )

    # ----------------------------------------------------------------- instructions
    def instruction_set(self) -> JSONObject:
        instruction: JSON = dict(self.instruction) if isinstance(self.instruction, dict) else self.instruction
        return {"task_instruction": instruction, "source": self.instruction_source}

    def instruction_update(self, instruction: Prompt) -> tuple[MetadataUpdate, VariantAttributes]:
        from bench.tasks.variants import prompt_update

        update, attrs = prompt_update(self, instruction)
        prompt = update["prompt"]
        own = (
            {"query": prompt.get("query", ""), "corpus": prompt.get("document", "")}
            if isinstance(prompt, dict)
            else prompt
        )
        return update, {**attrs, "instruction": own, "instruction_source": "instruction variant"}

    def load_data(self, num_proc: int | None = None, *, timer: TimingStack | None = None, **kwargs: object) -> None:
        if self.data_loaded:
            return
        if self.saved_folders:
            self._load_saved(num_proc)
            self._limit_hub_data()
            return
        if self.local_files:
            super().load_data(num_proc=num_proc, timer=timer, **kwargs)
            return
        if self.local_only:
            raise DataError(
                f"{self.metadata.name} has no hub copy of its own; build it with `bench build-data sts-senteval "
                f"--source-dir RAW --out DATA` and pass --data-dir DATA."
            )
        try:
            super(InstructionTask, self).load_data(num_proc=num_proc, timer=timer, **kwargs)  # MTEB's own loading
        except Exception as e:  # noqa: BLE001  # datasets raises many types; all mean "not available"
            meta, name = self.metadata.dataset, self.metadata.name
            why = _no_local_copy_reason(type(self))
            if self.local_layout:
                fix = f"Pass --data-dir DIR (or set {DATA_DIR_ENV}) with {name}/test.jsonl or {name}/ a save_to_disk copy."
            elif why:
                fix = f"This task takes no local copy ({why}); it needs the hub or a filled datasets cache."
            else:
                fix = (
                    f"Pass --data-dir DIR (or set {DATA_DIR_ENV}) with {name}/ a `datasets` save_to_disk copy "
                    f"(see docs/guides/local-data.md), or fill the datasets cache."
                )
            raise DataError(
                f"Could not load {meta['path']} at revision {meta['revision'][:12]} for {name} "
                f"({type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}). Offline? " + fix
            ) from None
        self._limit_hub_data()

    def _limit_hub_data(self) -> None:
        if self.limit is None:
            return
        if not self.local_layout:
            logger.warning(
                "--limit is not applied to %s (MTEB's data layout for it is kept as is).", self.metadata.name
            )
            return
        split = self.metadata.eval_splits[0]
        dataset = cast("DatasetDict", self.dataset)  # a local-layout task is monolingual: {split: Dataset}
        rows = self._assemble({split: dataset[split].to_list()})
        dataset[split] = Dataset.from_list(rows)

    def _assemble(self, rows_by_part: dict[str, list[STSRow]]) -> list[STSRow]:
        """STS rows: gold scores checked against the task's range; `--limit` stratified by rounded score."""
        (rows,) = rows_by_part.values()
        for i, row in enumerate(rows, start=1):
            if not self.min_score <= row["score"] <= self.max_score:  # type: ignore[attr-defined]
                raise DataError(
                    f"{self.metadata.name} row {i}: score {row['score']} outside [{self.min_score}, {self.max_score}]."  # type: ignore[attr-defined]
                )
        return limited(rows, [round(r["score"]) for r in rows], self.limit, self.seed)

    def _calculate_descriptive_statistics_from_split(
        self, split: str, *, hf_subset: str | None = None, compute_overall: bool = False, num_proc: int | None = None
    ) -> SplitDescriptiveStatistics:
        # super(InstructionTask, ...) is the MTEB task class mixed in after it, not AbsTask's abstract method.
        return super(InstructionTask, self)._calculate_descriptive_statistics_from_split(  # type: ignore[safe-super]
            split, hf_subset=hf_subset, compute_overall=compute_overall, num_proc=num_proc
        )


def mteb_task_class(name: str) -> type[GenericMTEBTask]:
    """Any task of MTEB's registry as the harness runs it: MTEB's own class (data, scoring, prompt),
    plus `--limit` refusal and instruction variants; made on demand and not registered (no suite, and
    `bench list tasks` keeps to the harness's own). It loads as MTEB does, from the hub or, offline,
    from a filled `datasets` cache."""
    base = _mteb_class(name)
    cls: type[GenericMTEBTask] = type(
        f"MTEB{re.sub(r'[^A-Za-z0-9]', '', name)}",
        (GenericMTEBTask, base),
        {
            "instruction": base.metadata.prompt,
            "instruction_source": MTEB_PROMPT_SOURCE,
            "__module__": __name__,
            "__doc__": f"MTEB's {name}, run by the harness.",
        },
    )
    cls.metadata = base.metadata  # after class creation: a class body with `metadata` would register it
    return cls


def _mteb_class(name: str) -> type[AbsTask]:
    """MTEB's registered task class of that name (public API: `mteb.get_task` returns an instance)."""
    return type(mteb.get_task(name))


def mteb_base_class(cls: type) -> type[AbsTask]:
    """The MTEB task class a harness class runs (the first class of MTEB's with a metadata of its own)."""
    for klass in cls.__mro__:
        if klass.__module__.startswith("mteb.") and "metadata" in klass.__dict__ and issubclass(klass, AbsTask):
            return klass
    raise TypeError(f"{cls.__qualname__} runs no MTEB task class")


def _no_local_copy_reason(cls: type) -> str | None:
    """Why the task's MTEB class cannot read a save_to_disk copy in place of `load_dataset`, or None."""
    base = mteb_base_class(cls)
    if base.load_data is not AbsTask.load_data:
        return (
            f"MTEB loads this {base.metadata.type} task with its own loader (e.g. the corpus/queries/qrels "
            f"configs of retrieval), not `load_dataset`"
        )
    if base.fast_loading:
        return "MTEB loads it with its deprecated fast loading (all subsets from one config)"
    return None


_MTEB_PROMPT_CLASSES: dict[type, type] = {}
_Task = TypeVar("_Task", bound=GenericMTEBTask)


def _prompt_class(cls: type[_Task], prompt_source: str) -> type[_Task]:
    """The class an instance of `cls` under `prompt_source` belongs to (see `GenericMTEBTask.__new__`)."""
    if prompt_source not in cls.prompt_sources:
        raise ConfigError(f"Unknown prompt source {prompt_source!r}; one of {', '.join(cls.prompt_sources)}.")
    if prompt_source == "harness" or cls.local_only:
        return cls
    base = mteb_base_class(cls)
    if cls.metadata == base.metadata:  # already MTEB's metadata (mteb_task_class, or the twin itself)
        return cls
    if cls not in _MTEB_PROMPT_CLASSES:
        twin: type[_Task] = type(
            cls.__name__,
            (cls,),
            {
                "instruction": base.metadata.prompt,
                "instruction_source": MTEB_PROMPT_SOURCE,
                "__module__": cls.__module__,
                "__qualname__": cls.__qualname__,
                "__doc__": f"MTEB's {base.metadata.name} with MTEB's own metadata (prompt source 'mteb').",
            },
        )
        twin.metadata = base.metadata  # after class creation: a class body with `metadata` would register it
        _MTEB_PROMPT_CLASSES[cls] = twin
    return _MTEB_PROMPT_CLASSES[cls]


def _load_call(dataset: MetadataDatasetDict, subset: str | None) -> str:
    """`load_dataset(...)` as a user types it to make the local copy of a task (subset, revision)."""
    args = [repr(dataset["path"])] + ([f"name={subset!r}"] if subset else [])
    args += [f"{k}={v!r}" for k, v in dataset.items() if k != "path" and not (subset and k == "name")]
    return f"load_dataset({', '.join(args)})"


def _listing(items: Iterable[object], limit: int = 8) -> str:
    items = list(items)
    return ", ".join(map(str, items[:limit])) + (f" ... ({len(items)} in all)" if len(items) > limit else "")


def _generic(
    base_name: str,
    instruction: Prompt,
    source: str,
    *,
    suites: tuple[str, ...],
    local_layout: bool = False,
    name: str | None = None,
    description: str | None = None,
) -> type[GenericMTEBTask]:
    """MTEB's task class `base_name` with `instruction` in its metadata's prompt.

    With `name`, the class is a task of its own (another split of the same corpus) and not MTEB's.
    """
    base = _mteb_class(base_name)
    prompt = (
        {"query": instruction["query"], "document": instruction["corpus"]}
        if isinstance(instruction, dict)
        else instruction
    )
    update: dict[str, object] = {"prompt": prompt}
    if name:
        update |= {"name": name, "description": description, "superseded_by": None}  # a task of its own
    metadata = base.metadata.model_copy(update=update)
    attrs = {
        "metadata": metadata,
        "instruction": instruction,
        "instruction_source": source,
        "local_layout": local_layout,
        "suites": suites,
        "local_only": bool(name),
        "__module__": __name__,
        "__doc__": f"{'' if name else 'MTEB' + chr(39) + 's '}{metadata.name} with the task instruction {instruction!r} ({source}).",
    }
    return type(f"Instructed{(name or base_name).replace('-', '')}", (GenericMTEBTask, base), attrs)


# hkunlp/instructor-large, STSEvaluator.py DEFINITIONS (verbatim, trailing space included).
STS_INSTRUCTIONS: dict[str, str] = {
    "STS12": "Represent the statement: ",
    "STS13": "represent the statement: ",
    "STS14": "Represent the statement: ",
    "STS15": "Represent the statement: ",
    "STS16": "Represent the statement: ",
    "STSBenchmark": "represent the statement: ",
    "SICK-R": "Represent the statement: ",
}
# hkunlp/instructor-large, RerankingEvaluator.py DEFINITIONS (verbatim).
RERANKING_INSTRUCTIONS: dict[str, dict[str, str]] = {
    "AskUbuntuDupQuestions": {
        "query": "Represent the Ubuntu question for reranking: ",
        "corpus": "Represent the Ubuntu question for reranking: ",
    },
    "SciDocsRR": {"query": "Represent the Scientific title: ", "corpus": "Represent the Scientific document: "},
    "StackOverflowDupQuestions": {
        "query": "Represent the StackOverflow question: ",
        "corpus": "Represent the StackOverflow question: ",
    },
}

INBEDDER_GENERIC_TASKS = (
    _generic(
        "TwentyNewsgroupsClustering",
        "Categorize the topic of the news article.",
        INBEDDER_SOURCE,
        suites=("generic", "inbedder"),
    ),
    *(
        _generic(base, prompt, INSTRUCTOR_SOURCE, suites=("generic", "inbedder"))
        for base, prompt in RERANKING_INSTRUCTIONS.items()
    ),
)
STS_TASKS = tuple(
    _generic(
        base,
        text,
        INSTRUCTOR_SOURCE,
        local_layout=True,
        suites=("generic-sts", "generic") + (("metaeol-sts",) if base.startswith("STS1") else ()),
    )
    for base, text in STS_INSTRUCTIONS.items()
)
# SentEval's splits, which MetaEOL reports: local data only (`bench build-data sts-senteval`).
SENTEVAL_STS_TASKS = (
    _generic(
        "STSBenchmark",
        STS_INSTRUCTIONS["STSBenchmark"],
        INSTRUCTOR_SOURCE,
        local_layout=True,
        suites=("metaeol-sts",),
        name="STSBenchmark-SentEval",
        description="STS-B test pairs as SentEval reads them (tokenised, lower-cased), as MetaEOL evaluates.",
    ),
    _generic(
        "SICK-R",
        STS_INSTRUCTIONS["SICK-R"],
        INSTRUCTOR_SOURCE,
        local_layout=True,
        suites=("metaeol-sts",),
        name="SICK-R-SentEval",
        description="SICK relatedness, the 4,927 SemEval-2014 test pairs only (SentEval's SICK-R, as MetaEOL "
        "evaluates); MTEB's SICK-R holds all 9,927 pairs.",
    ),
)
GENERIC_TASKS = INBEDDER_GENERIC_TASKS + STS_TASKS + SENTEVAL_STS_TASKS
