"""What the runner needs of a model (`RunModel`) and of a task (`RunTask`), for mypy only.

Why: the runner once took model, task and store as `Any`, so nothing checked that an encoder or a task
offers what the run record reads. `RunModel` is MTEB's `EncoderProtocol` (what `mteb.evaluate` calls),
the distributed team's `Encoder` (what `serve` and `all_encoders` call) and the facts the run record
and resume key read. bench/adapters/base.py's `BaseEncoder` is one; the check at the bottom makes mypy
say so, and say which member is missing when it stops being one.

A task is the harness's `InstructionTask` (every task `bench.tasks.get_tasks` builds, MTEB's tasks
included, and their variant copies), named as `RunTask`; the store is `AtomicResultCache`.

Only annotations name these (the runner imports this module under TYPE_CHECKING), because importing
it imports MTEB: a run that reuses every task must not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Protocol, TypeAlias

from mteb.models import EncoderProtocol, ModelMeta

from bench.adapters.distributed.planning import Encoder as TeamEncoder
from bench.core.json_types import JSONObject
from bench.tasks.abstasks.base import InstructionTask

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    from mteb import TaskMetadata

    from bench.adapters.base import BaseEncoder, EncodeStats
    from bench.adapters.cache import EmbeddingCache

RunTask: TypeAlias = InstructionTask


class RunModel(EncoderProtocol, TeamEncoder, Protocol):
    """An encoder as `bench run` uses it: evaluated by MTEB, shared with a team, described in the run record."""

    name: str
    revision: str
    family: ClassVar[str]
    batch_size: int
    stats: EncodeStats
    identity_check: JSONObject | None
    mteb_model_meta: ModelMeta  # settable: a variant's experiment is set on it for the variant's task

    @property
    def device(self) -> str: ...

    @property
    def cache(self) -> EmbeddingCache | None: ...

    def content_id(self) -> str | None: ...

    def settings(self) -> JSONObject: ...

    def instruction_use(self, task_metadata: TaskMetadata | None = None) -> JSONObject: ...

    def record_facts(self) -> JSONObject: ...

    def encode_inputs(
        self,
        model_inputs: Sequence[object],
        *,
        batch_size: int | None = None,
        desc: str = "Encoding",
        show: bool | None = None,
        part: str | None = None,
        subset: str | None = None,
    ) -> np.ndarray: ...


if TYPE_CHECKING:

    def _base_encoder_is_a_run_model(encoder: BaseEncoder) -> RunModel:
        return encoder  # mypy: BaseEncoder has every member RunModel names


__all__ = ["RunModel", "RunTask"]
