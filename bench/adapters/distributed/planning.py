"""What a team needs of an encoder (`Encoder`), how ranks name one (`encoder_key`), and how inputs become
jobs: exactly the batches a one-process run forms (`plan_jobs`), so vectors equal its vectors."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from bench.adapters.cache import EmbeddingCache
    from bench.adapters.model_input import ModelInput
    from bench.core.json_types import JSONObject

if TYPE_CHECKING:  # numpy and torch load with the model, not with `bench --help` (which asks `is_worker`)
    import numpy as np


class Encoder(Protocol):
    """What a team needs of an encoder (bench/adapters/base.py's BaseEncoder is one): named here, not imported,
    because the encoder base uses this module, and a module pair importing each other is a circle."""

    show_progress_bar: bool | None
    batch_size: int
    max_tokens: int | None
    _progress: Any

    @property
    def distributes(self) -> bool: ...  # a class variable, or a property where it depends on the model

    @property
    def fingerprint(self) -> JSONObject: ...

    def sub_encoders(self) -> Sequence[Encoder]: ...

    def group_batches(self) -> int: ...

    def token_lengths(self, inputs: Sequence[ModelInput]) -> list[int]: ...

    def encode_share(self, inputs: list[ModelInput], batch_size: int) -> np.ndarray: ...

    def encode_for_team(
        self, inputs: list[ModelInput], batch_size: int, tag: int
    ) -> tuple[np.ndarray, EmbeddingCache | None]: ...

    def use_cache_shard(self, rank: int | None) -> None: ...


def encoder_key(encoder: Encoder) -> str:
    """How ranks name one encoder: its cache fingerprint, identical on every rank."""
    from bench.core.fileio import sha256_json

    return sha256_json(encoder.fingerprint)


def all_encoders(encoder: Encoder) -> Iterator[Encoder]:
    """`encoder` and, recursively, the encoders it holds (GSTransform's base)."""
    yield encoder
    for sub in encoder.sub_encoders():
        yield from all_encoders(sub)


def plan_jobs(encoder: Encoder, inputs: Sequence[ModelInput], batch_size: int) -> list[tuple[int, int]]:
    """(start, stop) of each batch of length-sorted `inputs`: the batches a one-process run forms (groups
    of `group_batches` batches, each cut by `plan_batches` under the token budget), one job each."""
    from bench.adapters.batching import plan_batches

    span = batch_size * encoder.group_batches()
    jobs = []
    for group in range(0, len(inputs), span):
        part = inputs[group : group + span]
        lengths = encoder.token_lengths(part) if encoder.max_tokens else [0] * len(part)
        start = group
        for size in plan_batches(lengths, batch_size, encoder.max_tokens):
            jobs.append((start, start + size))
            start += size
    return jobs
