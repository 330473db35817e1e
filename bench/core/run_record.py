"""The run record (`<results>/<model>/<revision>/run_records/<task>.json`) as types: what `bench run` writes.

Why here: the run writes it, and the results and leaderboard layers read it; a type below all of them
lets each say which keys it relies on, and lets mypy check the writer (bench/run/runner.py `_run_record`).
Every class is `total=False`: records written by older versions lack keys (`encode.usage`, `variant`,
`model.facts`, ...), so a reader must use `.get` for anything but the keys every version wrote.
Key order in the writer is the file's key order; these classes do not change it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypedDict

from bench.core.json_types import JSON, JSONObject


class DatasetBlock(TypedDict, total=False):
    path: str
    revision: str | None
    source: str
    stand_in: bool  # whether the local data stands in for another data set (bench/tasks/data.py `stand_in_of`)
    stand_in_note: str | None


class TaskBlock(TypedDict, total=False):
    name: str
    version: str
    type: str
    main_score: str
    dataset: DatasetBlock
    instructions: JSONObject
    instructions_sha256: str
    limit: int | None
    seed: int
    metric_version: str  # the main score's declared metric version (bench/core/metric_specs.py)


class ModelBlock(TypedDict, total=False):
    spec: str
    name: str
    revision: str | None
    content: str | None
    family: str
    experiment: JSONObject
    settings: JSONObject
    identity_check: JSONObject | None
    device: str
    instruction_use: JSONObject
    facts: JSONObject


class RankBusy(TypedDict):
    """One rank's share of a task in a launched run (`encode.ranks`)."""

    rank: int
    encode_seconds: float
    score_seconds: float
    encode_busy: float


class EncodeBlock(TypedDict, total=False):
    texts_requested: int
    unique_inputs: int
    cache_hits: int
    texts_encoded: int
    processes: int
    texts_encoded_by_other_ranks: int
    encode_seconds: float
    oom_splits: int
    device_batches: JSON
    gguf_cache: Literal["hit", "built", "off"]  # where a local GGUF file's weights came from
    cache: str | None
    usage: JSONObject
    ranks: list[RankBusy]


class ResumeKey(TypedDict, total=False):
    """What must match for a finished task to be reused (compared as a whole, never read key by key)."""

    record_version: int
    model: str
    model_revision: str | None
    model_fingerprint: JSONObject
    settings: JSONObject
    task_version: str
    dataset_revision: str | None
    instructions_sha256: str
    limit: int | None
    seed: int


class VariantSource(TypedDict):
    name: str
    sha256: str


class VariantBlock(TypedDict, total=False):
    """The `variant` block of an instruction variant's record (bench/core/variants.py `Variant.record`)."""

    label: str
    set: str | None
    index: int
    instruction: str | dict[str, str]  # bench/core/variants.py `Instruction`
    instruction_sha256: str
    file: VariantSource
    sets: list[str]


ItemKind = Literal["triplet", "sts", "clustering", "robustness"]


class Items(TypedDict, total=False):
    """A task's per-item outcomes as its run record keeps them (bench/core/bootstrap.py says what each holds)."""

    kind: ItemKind
    groups: dict[str, dict[str, list[JSON]]]  # triplet: success; sts: similarity, gold; clustering: labels, assignments
    labels: list[JSON]  # robustness
    assignments: dict[str, list[list[int]]]  # robustness: set -> one cluster list per instruction
    omitted: str  # set instead of the rest when the task had too many items


class ShiftBlock(TypedDict, total=False):
    """`instruction_shift`: how far the task's embeddings move with its instruction (bench/run/shift.py)."""

    sample: int  # texts measured (N, or fewer where the task has fewer instructed texts)
    population: int  # distinct instructed texts the task embedded
    mean_cosine_distance: float | None  # None where nothing could be measured (see `note`)
    seed: int | None
    note: str


class RunRecord(TypedDict, total=False):
    record_version: int
    task: TaskBlock
    model: ModelBlock
    encode: EncodeBlock
    evaluation_seconds: float
    started_at: str
    versions: dict[str, str | None]
    python: str
    platform: str
    command: list[str]
    resume_key: ResumeKey
    instruction_shift: ShiftBlock
    variant: VariantBlock
    items: Items  # per-item outcomes of a harness task (bench/core/bootstrap.py `Items`)
    predictions: str | None  # `--save-predictions`: the prediction file, relative to the result's folder; None: none


# A run record as a reader that walks it key by key holds it: a `RunRecord`, or the parsed JSON of one (the
# leaderboard's entries keep it as read). Each block is taken with `bench.core.json_types.object_at` and each
# value narrowed with isinstance, as an older record may lack a block or hold null there.
RecordView = Mapping[str, object]


__all__ = [
    "DatasetBlock",
    "EncodeBlock",
    "ItemKind",
    "Items",
    "ModelBlock",
    "RankBusy",
    "RecordView",
    "ResumeKey",
    "RunRecord",
    "ShiftBlock",
    "TaskBlock",
    "VariantBlock",
    "VariantSource",
]
