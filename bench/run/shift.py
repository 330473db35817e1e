"""Instruction shift: how far a task's instruction moves a text's embedding (`bench run --shift-sample N`).

Whether a model uses its instruction at all is the first question of an instruction-following benchmark;
the ∅ mark (`instruction_use`) answers it yes/no from the model's input. The shift measures it: on a fixed
sample of the task's instructed texts, the mean cosine distance between each text's embedding with the
task's instruction and without it (the instruction-blind rendering, `render(text, None, ...)`, the input
`--template none` gives every text). A blind setting renders both alike, so its shift is exactly 0.

How it is taken, so that nothing is encoded twice and every encode is counted:
- while `mteb.evaluate` runs the task, `collecting` notes each (text, instruction, prompt type) the model is
  asked to embed with an instruction, exactly as `BaseEncoder.encode` resolves it (a row's own instruction,
  else the task's);
- `sample` picks N of them with a seed derived from the task's name and those texts (not from the run's
  `--seed` nor the rank count: rank 0 sees every text of a launched run, so the sample is the same however
  many processes run it);
- `measure` asks the model for each picked text's inputs with and without its instruction (`shift_inputs`:
  the family's `render`; MTEB's implementation reads what its own call sent, bench/adapters/mteb_model.py)
  and embeds both through the model's own `encode_inputs` under the task's memo scope: the instructed inputs
  are the vectors the task just used (memo or cache hits), the blind ones are new encodes, counted in the
  run record's `encode` block.

Off by default (N = 0): the issue asked for 256 on every run, but the blind encodes change every run's encode
and API-request counts (an API model pays for them; `--dry-run` counts them the same way, bench/run/dry_run.py),
so a run without the flag is exactly what it was. The flag is not part of the resume key: a finished task is reused as it is
(without a shift); `--overwrite` recomputes it from the embedding cache and measures the shift.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from bench.adapters.cache import input_key
from bench.adapters.encoding import task_instruction, texts_and_instructions
from bench.core.errors import ConfigError
from bench.core.fileio import sha256_json
from bench.core.run_record import ShiftBlock as InstructionShift

if TYPE_CHECKING:
    from mteb import TaskMetadata
    from mteb.types import PromptType
    from torch.utils.data import DataLoader


logger = logging.getLogger(__name__)

PART = "instruction shift"  # the progress label of the blind encodes


@dataclass(frozen=True, order=True)
class Instructed:
    """One text the task had the model embed with an instruction, and as what (`prompt_type`: MTEB's value)."""

    text: str
    instruction: str
    prompt_type: str | None
    from_row: bool = False  # the row's own instruction (else the task's): how MTEB's implementations get it


def sample_seed(task_name: str, items: Sequence[Instructed]) -> int:
    """A seed from the task's name and its instructed texts (in any order): same data, same sample."""
    keys = sorted({(i.text, i.instruction, i.prompt_type or "") for i in items})
    return int(sha256_json({"task": task_name, "texts": keys})[:15], 16)


def sample(task_name: str, items: Sequence[Instructed], n: int) -> tuple[int, list[Instructed]]:
    """(seed, up to `n` distinct items): a pure function of the task's name, its items (as a set) and `n`."""
    population = sorted(set(items))
    seed = sample_seed(task_name, population)
    if n >= len(population):
        return seed, population
    picked = np.random.default_rng(seed).choice(len(population), size=n, replace=False)
    return seed, [population[i] for i in sorted(int(p) for p in picked)]


@contextmanager
def collecting(model: Any, n: int) -> Iterator[list[Instructed] | None]:
    """Within the block, the model's `encode` also notes its instructed texts (None, and nothing wrapped, when
    `n` is 0: a run without the flag goes exactly as before)."""
    if n <= 0:
        yield None
        return
    seen: list[Instructed] = []
    encode = model.encode

    def noting(
        inputs: DataLoader,
        *,
        task_metadata: TaskMetadata,
        prompt_type: PromptType | None = None,
        **kwargs: Any,
    ) -> np.ndarray:
        try:
            texts, instructions = texts_and_instructions(inputs)
        except (KeyError, TypeError):  # rows that are not texts (images, audio): nothing to note
            texts, instructions = [], []
        default = task_instruction(task_metadata, prompt_type)
        kind = prompt_type.value if prompt_type is not None else None
        seen.extend(
            Instructed(t, i, kind, bool(r))
            for t, r in zip(texts, instructions, strict=True)
            if isinstance(t, str) and (i := r or default)
        )
        return encode(inputs, task_metadata=task_metadata, prompt_type=prompt_type, **kwargs)

    model.encode = noting
    try:
        yield seen
    finally:
        del model.encode


def cosine_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """1 - cos(a_i, b_i) per row (0 for a zero vector against anything but itself)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    norms = np.linalg.norm(a64, axis=1) * np.linalg.norm(b64, axis=1)
    dots = np.einsum("ij,ij->i", a64, b64)
    return 1.0 - np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def measure(model: Any, task_metadata: TaskMetadata, seen: list[Instructed] | None, n: int) -> InstructionShift | None:
    """The task's instruction shift on a sample of `seen` (None when the flag is off)."""
    if seen is None or n <= 0:
        return None
    task_name = task_metadata.name
    seed, picked = sample(task_name, seen, n)
    result: InstructionShift = {"sample": 0, "population": len(set(seen)), "mean_cosine_distance": None, "seed": seed}
    if not picked:
        return {**result, "note": "the task gave no text an instruction"}
    from mteb.types import PromptType

    try:
        pairs = [
            model.shift_inputs(i.text, i.instruction, task_metadata, kind, from_row=i.from_row)
            for i in picked
            for kind in [PromptType(i.prompt_type) if i.prompt_type else None]
        ]
    except ConfigError as e:  # an implementation with no text input to render (MTEB's, without a SentenceTransformer)
        logger.warning("%s: instruction shift not measured: %s", task_name, e)
        return {**result, "note": f"not measured: {e}"}
    same = np.array([input_key(a) == input_key(b) for a, b in pairs])
    vectors = model.encode_inputs([a for a, _ in pairs] + [b for _, b in pairs], desc=task_name, part=PART)
    distances = cosine_distances(vectors[: len(pairs)], vectors[len(pairs) :])
    distances[same] = 0.0  # the same input: no shift, exactly (not a float's rounding of it)
    return {**result, "sample": len(pairs), "mean_cosine_distance": float(distances.mean())}
