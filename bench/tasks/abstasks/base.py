"""What every instruction-aware task shares: where its data comes from, `--limit`, and its instructions.

A task never knows how a model encodes: it hands (text, instruction) pairs to `model.encode` through
MTEB's query dataloader, whose batches carry `text`, `query` and `instruction`, so any
instruction-aware MTEB encoder can use them.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Generic, TypedDict, TypeVar, cast

import numpy as np
from datasets import Dataset, DatasetDict
from mteb.abstasks import AbsTask
from mteb.types.statistics import SplitDescriptiveStatistics

from bench.core.bootstrap import Items
from bench.core.errors import ConfigError, DataError, EncodingError, MissingDataError
from bench.core.fileio import sha256_json
from bench.core.json_types import JSONObject
from bench.core.metric_specs import Metric
from bench.tasks.data import (
    Schema,
    default_data_dir,
    find_local_file,
    load_hub_rows,
    local_revision,
    read_local_rows,
    stratified_indices,
    validate_rows,
)
from bench.tasks.rows import Label, RowT, SplitRow

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mteb.models.models_protocols import EncoderProtocol
    from mteb.timing import TimingStack
    from mteb.types import EncodeKwargs

Prompt = str | dict[str, str]  # a task-level instruction, or {"query", "document"} ones (retrieval, reranking)

logger = logging.getLogger(__name__)

_Row = TypeVar("_Row")
PACKAGED_DATA_DIR = Path(__file__).resolve().parents[1] / "demo_data"


class SampleCount(SplitDescriptiveStatistics):
    """The descriptive statistics of a harness task's split: its number of rows."""

    num_samples: int


class TaskOptions(TypedDict, total=False):
    """The keywords every harness task's constructor takes (`InstructionTask.__init__`)."""

    data_dir: str | Path | None
    limit: int | None
    seed: int


class MetadataUpdate(TypedDict, total=False):
    """The `TaskMetadata` fields an instruction variant changes (`InstructionTask.instruction_update`)."""

    prompt: Prompt
    main_score: str


class VariantAttributes(TypedDict, total=False):
    """The task attributes an instruction variant sets on its copy (`bench/tasks/variants.py`)."""

    aspects: dict[str, str]
    criteria: dict[str, str]
    single_instruction: str
    instruction: Prompt
    instruction_source: str
    row_instruction_template: str | None


class InstructionTask(AbsTask, Generic[RowT]):
    """Base of the harness's tasks.

    Attributes:
        schema: columns of one published data file and their kinds; `RowT` is the TypedDict of a
            validated row (bench/tasks/rows.py).
        hub_configs: the dataset's configs (one file each); None when the dataset has one config,
            whose local file is then named after the split (`test.jsonl`).
        task_version: bumped whenever scoring or data handling changes a number.
        packaged: True for the demo tasks, whose data ships inside this package.
        data_folder: local folder when the corpus is another task's (NYTTopicClustering reads
            NYTClustering's files); None means the task's own name.
        suites: the suites this task belongs to (`bench.tasks.registry`); "all" is implied.
        metrics: the metrics `_evaluate_subset` writes (bench/core/metric_specs.py): every range check,
            description, detail and ×100 format reads them. MTEB's type's metrics are added to them.
        run_items: the per-item outcomes of the last evaluation (bench/core/bootstrap.py `Items`), which
            `bench run` keeps in the run record for bootstrap intervals; not part of MTEB's scores, so the
            result file MTEB writes is unchanged. None before an evaluation (or for a task that keeps none).

    A subclass whose body defines `metadata` registers itself (`bench.tasks.registry.register_task`).
    """

    schema: Schema[RowT]  # a class attribute (ClassVar cannot hold a type variable)
    hub_configs: ClassVar[tuple[str, ...] | None] = None
    task_version: ClassVar[str] = "1"
    packaged: ClassVar[bool] = False
    data_folder: ClassVar[str | None] = None
    suites: ClassVar[tuple[str, ...]] = ()
    metrics: ClassVar[tuple[Metric, ...]] = ()
    run_items: Items | None = None

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "metadata" in cls.__dict__:
            from bench.tasks.registry import register_task
            from bench.tasks.task_statistics import packaged_stats_metadata

            cls.metadata = packaged_stats_metadata(cls.metadata)  # statistics read and written in this package
            register_task(cls)

    def __init__(
        self, *, data_dir: str | Path | None = None, limit: int | None = None, seed: int = 42, **kwargs: object
    ) -> None:
        super().__init__(seed=seed, **kwargs)
        if limit is not None and limit <= 0:
            raise DataError(f"--limit must be a positive number of examples, got {limit}.")
        self.limit = limit
        self.data_dir = PACKAGED_DATA_DIR if self.packaged else (Path(data_dir) if data_dir else default_data_dir())
        self.local_files = self._find_local_files() if self.data_dir else None
        self._apply_local_revision()

    def _apply_local_revision(self) -> None:
        """Local data is identified by its content, so results never mix with the hub revision's."""
        if self.local_files:
            dataset = {**type(self).metadata.dataset, "revision": local_revision(list(self.local_files.values()))}
            self.metadata = type(self).metadata.model_copy(update={"dataset": dataset})

    def unload_data(self) -> None:
        # MTEB drops instance metadata on unload; a reload reads the same local files, so restore it.
        super().unload_data()
        self._apply_local_revision()

    # ----------------------------------------------------------------- data
    @property
    def parts(self) -> tuple[str, ...]:
        """Configs, or the single split, each one file in the published layout."""
        return self.hub_configs or (self.metadata.eval_splits[0],)

    @property
    def data_source(self) -> str:
        if self.packaged:
            return "package"
        # The folder's name only: a result never carries a local path.
        return f"local:{self.data_dir.name}" if self.local_files and self.data_dir else "hub"

    def _find_local_files(self) -> dict[str, Path]:
        assert self.data_dir is not None  # __init__ looks for local files only with a data directory
        folder = self.data_folder or self.metadata.name
        task_dir = self.data_dir / folder
        if not task_dir.is_dir():
            shared = f" (the corpus is shared with {folder})" if self.data_folder else ""
            raise MissingDataError(
                f"No folder for task {self.metadata.name} in the data directory {self.data_dir}{shared}: "
                f"expected {task_dir}/ with {', '.join(f'{p}.jsonl|.csv' for p in self.parts)} holding the "
                f"columns {','.join(self.schema.names)} (see docs/guides/local-data.md; "
                f"`bench build-data list` shows the builders)."
            )
        return {part: find_local_file(task_dir, part) for part in self.parts}

    def load_data(self, num_proc: int | None = None, *, timer: TimingStack | None = None, **kwargs: object) -> None:
        if self.data_loaded:
            return
        rows_by_part = {part: self._read_part(part) for part in self.parts}
        rows = self._assemble(rows_by_part)
        split = self.metadata.eval_splits[0]
        self.dataset = DatasetDict({split: Dataset.from_list(list(rows))})
        self.data_loaded = True

    def _read_part(self, part: str) -> list[RowT]:
        if self.local_files:
            path = self.local_files[part]
            return validate_rows(read_local_rows(path, self.schema.names), self.schema, str(path))
        meta = self.metadata.dataset
        config = part if self.hub_configs else None
        rows = load_hub_rows(meta["path"], revision=meta["revision"], config=config, split=self.metadata.eval_splits[0])
        return validate_rows(rows, self.schema, f"{meta['path']}" + (f"[{config}]" if config else ""))

    def _assemble(self, rows_by_part: dict[str, list[RowT]]) -> Sequence[SplitRow]:
        """Turn the validated rows of each part into the rows of the evaluated split (and apply --limit)."""
        raise NotImplementedError

    # ----------------------------------------------------------------- provenance
    def instruction_set(self) -> JSONObject:
        """The instructions this task gives the model, as recorded in every result."""
        raise NotImplementedError

    def instruction_set_sha256(self) -> str:
        return sha256_json(self.instruction_set())

    def instruction_update(self, instruction: Prompt) -> tuple[MetadataUpdate, VariantAttributes]:
        """(TaskMetadata update, attributes) that make a copy of this task give the model `instruction`
        instead of its own (`bench/tasks/variants.py`). A task whose instructions cannot vary alone says why."""
        raise ConfigError(f"{self.metadata.name} takes no instruction variants: {self.no_variants_reason}")

    no_variants_reason: ClassVar[str] = "it has no task-level instruction."

    def _calculate_descriptive_statistics_from_split(
        self, split: str, *, hf_subset: str | None = None, compute_overall: bool = False, num_proc: int | None = None
    ) -> SplitDescriptiveStatistics:
        dataset = cast("DatasetDict", self.dataset)  # the harness's tasks are monolingual: {split: Dataset}
        return SampleCount(num_samples=len(dataset[split]))


def encode_pairs(
    model: EncoderProtocol,
    texts: Sequence[str],
    instructions: Sequence[str],
    *,
    task: AbsTask,
    hf_split: str,
    hf_subset: str,
    encode_kwargs: EncodeKwargs,
) -> np.ndarray:
    """Embed (text, instruction) pairs, each distinct pair once, in one `model.encode` call.

    Triplet and STS sets reuse the same utterances across rows; sending each distinct pair once
    makes any MTEB model, not only the harness's, skip the repeats.
    """
    from mteb.types import PromptType

    from bench.tasks.mteb_compat import create_query_dataloader

    pairs = list(zip(texts, instructions, strict=True))
    unique = list(dict.fromkeys(pairs))
    loader = create_query_dataloader(
        [t for t, _ in unique], [i for _, i in unique], task_metadata=task.metadata, **encode_kwargs
    )
    emb = model.encode(
        loader,
        task_metadata=task.metadata,
        hf_split=hf_split,
        hf_subset=hf_subset,
        prompt_type=PromptType.query,
        **encode_kwargs,
    )
    emb = _to_numpy(emb)
    if emb.ndim != 2 or emb.shape[0] != len(unique):
        raise EncodingError(f"model returned embeddings of shape {emb.shape} for {len(unique)} inputs.")
    if not np.isfinite(emb).all():
        bad = int((~np.isfinite(emb)).any(axis=1).sum())
        raise EncodingError(f"model returned NaN or inf for {bad} of {len(unique)} inputs of {task.metadata.name}.")
    if len(unique) == len(pairs):  # no repeats: the rows are already in order (no copy)
        return emb
    position = {pair: i for i, pair in enumerate(unique)}
    return emb[[position[p] for p in pairs]]


def _to_numpy(emb: object) -> np.ndarray:
    if hasattr(emb, "detach"):
        emb = emb.detach().float().cpu().numpy()
    return np.asarray(emb)


def limited(rows: list[_Row], labels: Sequence[Label], limit: int | None, seed: int) -> list[_Row]:
    """The stratified `--limit` subset of `rows` (all rows when limit is None)."""
    if limit is None:
        return rows
    return [rows[i] for i in stratified_indices(labels, limit, seed=seed)]
