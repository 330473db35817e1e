"""How the inputs the cache lacks get encoded: here, or shared among the ranks of a launched run.

`encoding_for(encoder)` picks one strategy per encode call. `LocalEncoding` runs the inputs a group at a time in
this process (`GROUP_BATCHES` batches: one cache commit, one progress step). `TeamEncoding` hands them to the
ranks of a `torchrun`/`accelerate launch` run (`bench.adapters.distributed`, rank 0 only): each rank encodes
batches on its own device and commits them to its own shard of the cache. Both hand every finished batch to the
same `keep(start, stop, vectors, landing)`, so the encoder's checking, caching and counting is one code path.

Also here: the counts a run record keeps (`EncodeStats`) and how texts and instructions are read from MTEB's
batches (`texts_and_instructions`, `task_instruction`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Protocol

from bench.adapters import distributed

if TYPE_CHECKING:
    import numpy as np
    from mteb import TaskMetadata
    from mteb.types import PromptType
    from torch.utils.data import DataLoader

    from bench.adapters.model_input import ModelInput
    from bench.core.progress import EncodeProgress

Keep = Callable[[int, int, "np.ndarray", "distributed.Landing | None"], None]


@dataclass
class EncodeStats:
    """Counts for the run record: what tasks asked for, what the cache served, what the model did."""

    requested: int = 0
    unique: int = 0
    cache_hits: int = 0
    encoded: int = 0  # by every rank of a launched run
    encoded_by_other_ranks: int = 0
    encode_seconds: float = 0.0
    oom_splits: int = 0  # batches split in halves after an out-of-memory error

    def minus(self, before: EncodeStats) -> EncodeStats:
        return EncodeStats(**{k: v - getattr(before, k) for k, v in asdict(self).items()})

    def copy(self) -> EncodeStats:
        return EncodeStats(**asdict(self))


class Encoder(distributed.Encoder, Protocol):
    """What a strategy needs of the encoder: what a team needs, and loading the model."""

    def ensure_loaded(self) -> None: ...


class Encoding(Protocol):
    """One way to encode an encode call's missing inputs (sorted longest first)."""

    def prepare(self, encoder: Encoder) -> None:
        """Before the cache is opened and progress starts (a local run loads the model here)."""

    def run(
        self, encoder: Encoder, inputs: list[ModelInput], batch_size: int, progress: EncodeProgress, keep: Keep
    ) -> int:
        """Encode `inputs`, handing each batch to `keep`; returns how many inputs other ranks encoded."""
        ...


class LocalEncoding:
    """Every input in this process, a group at a time."""

    def prepare(self, encoder: Encoder) -> None:
        encoder.ensure_loaded()

    def run(
        self, encoder: Encoder, inputs: list[ModelInput], batch_size: int, progress: EncodeProgress, keep: Keep
    ) -> int:
        span = batch_size * encoder.group_batches()
        for start in range(0, len(inputs), span):
            part = inputs[start : start + span]
            progress.start_group(len(part))
            keep(start, start + len(part), encoder.encode_share(part, batch_size), None)
        return 0


@dataclass(frozen=True)
class TeamEncoding:
    """The inputs shared among the ranks of a launched run (this process is rank 0)."""

    team: distributed.Team

    def prepare(self, encoder: Encoder) -> None:
        """Nothing: rank 0 loads its model when its first batch comes (`encode_share`)."""

    def run(
        self, encoder: Encoder, inputs: list[ModelInput], batch_size: int, progress: EncodeProgress, keep: Keep
    ) -> int:
        return self.team.encode(encoder, inputs, batch_size, keep)


def encoding_for(encoder: Encoder) -> Encoding:
    """The team of a launched run where this encoder's work is shared (`distributed.coordinator_for`), else local."""
    team = distributed.coordinator_for(encoder)
    return LocalEncoding() if team is None else TeamEncoding(team)


def texts_and_instructions(inputs: DataLoader) -> tuple[list[str], list[str | None]]:
    """Per-row texts and instructions from MTEB batches (query batches carry `query` and `instruction`)."""
    texts: list[str] = []
    instructions: list[str | None] = []
    for batch in inputs:
        if "instruction" in batch and "query" in batch:
            texts += list(batch["query"])
            instructions += [i or None for i in batch["instruction"]]
        else:
            texts += list(batch["text"])
            instructions += [None] * len(batch["text"])
    return texts, instructions


def task_instruction(task_metadata: TaskMetadata, prompt_type: PromptType | None) -> str | None:
    """A task-level instruction (TaskMetadata.prompt), used where rows carry none."""
    prompt = task_metadata.prompt
    if isinstance(prompt, dict):
        return prompt.get(prompt_type.value) if prompt_type is not None else None
    return prompt or None
