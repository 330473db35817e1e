"""A task under another instruction: how each kind of task takes an instruction variant.

`variant_task(task, instruction)` returns a new task object that differs from `task` only in the
instruction(s) it gives the model. The task decides what that means (`InstructionTask.instruction_update`):

* MTEB tasks with a task-level instruction (STS, pair classification, classification, clustering,
  and the harness's generic tasks): `TaskMetadata.prompt` becomes the variant.
* Retrieval and reranking: a string variant is the QUERY instruction; documents keep theirs, so a
  variant run embeds the corpus once and only the queries again. A {query, document} mapping sets both.
  Where queries carry their own instructions (FollowIR, InstructIR), a variant holding `{instruction}`
  is a template filled with each query's instruction; one without it replaces them.
* Harness tasks with one instruction per criterion or aspect (IntentEmotion, NYTClustering, the
  GSTransform tasks): a mapping with exactly those keys (a string when there is one aspect).
* The robustness tasks: one instruction, clustered and scored by V-measure (the task's 30-instruction
  evaluation on a single instruction), so the mean difference between a file's `correct` and
  `incorrect` sets is the task's own Δci.
* InstructSTSB: none; its instructions belong to the rows (the gold scores depend on them).

Why a copy made before any evaluation, of a subclass: MTEB draws its subsampling from the task's
seeded random state, so every variant must start from the state the default run started from
(a variant run under the default instruction scores exactly as the default run); and MTEB drops an
instance's metadata when it unloads data, so the variant's metadata lives on a class of its own
(created without a `metadata` in its body, so it does not register as a task).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Protocol

from bench.core.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Callable

    from mteb import TaskMetadata
    from mteb.abstasks import AbsTask

    from bench.tasks.abstasks.base import MetadataUpdate, VariantAttributes

Instruction = str | dict[str, str]
RETRIEVAL_TYPES = ("Retrieval", "Reranking", "InstructionRetrieval", "InstructionReranking")
ROW_TEMPLATE_FIELD = "{instruction}"


class _Named(Protocol):
    """A task as `mapping_update` reads it: its metadata (the name), the slots by attribute name."""

    @property
    def metadata(self) -> TaskMetadata: ...


def variant_task(task: AbsTask, instruction: Instruction) -> AbsTask:
    """A fresh copy of `task` (not yet loaded) that gives the model `instruction` instead of its own."""
    if getattr(task, "data_loaded", False):
        raise RuntimeError("variant_task needs a task that has not loaded its data yet (see module docstring)")
    hook = getattr(task, "instruction_update", None)
    metadata_update, attrs = hook(instruction) if callable(hook) else prompt_update(task, instruction)
    cls = type(task)
    body: dict[str, object] = {"__module__": cls.__module__, "__qualname__": cls.__qualname__, "__doc__": cls.__doc__}
    if attrs.get("row_instruction_template"):
        body["load_data"] = _load_then_template_queries
    sub: type[AbsTask] = type(cls.__name__, (cls,), body)
    sub.metadata = cls.metadata.model_copy(update=metadata_update)
    new = copy.deepcopy(task)
    new.__class__ = sub
    if "metadata" in new.__dict__:  # instance metadata (a local copy's revision) keeps its own fields
        new.metadata = new.__dict__["metadata"].model_copy(update=metadata_update)
    for name, value in attrs.items():
        setattr(new, name, value)
    return new


def prompt_update(task: AbsTask, instruction: Instruction) -> tuple[MetadataUpdate, VariantAttributes]:
    """(metadata update, attributes) putting `instruction` in the task's `TaskMetadata.prompt`."""
    meta = task.metadata
    current = meta.prompt
    if meta.type in RETRIEVAL_TYPES:
        document = current.get("document") if isinstance(current, dict) else current
        if isinstance(instruction, str):
            instruction = {"query": instruction}
        unknown = set(instruction) - {"query", "document"}
        if unknown:
            raise ConfigError(
                f"{meta.name} ({meta.type}) takes a query instruction, or a mapping of query and "
                f"document instructions; the variant names {sorted(unknown)}."
            )
        prompt = {
            k: v
            for k, v in {"query": instruction.get("query"), "document": instruction.get("document", document)}.items()
            if v
        }
        attrs: VariantAttributes = (
            {"row_instruction_template": prompt.get("query")} if meta.type.startswith("Instruction") else {}
        )
        return {"prompt": prompt}, attrs
    if not isinstance(instruction, str):
        raise ConfigError(
            f"{meta.name} ({meta.type}) has one task instruction; give each variant as a string, "
            f"not a mapping ({sorted(instruction)})."
        )
    return {"prompt": instruction}, {}


def _load_then_template_queries(self: AbsTask, *args: object, **kwargs: object) -> None:
    """Load as the task does, then rewrite each query's own instruction with the variant's template."""
    super(type(self), self).load_data(*args, **kwargs)  # type: ignore[misc]  # the variant's class: its task's load_data
    template: str = getattr(self, "row_instruction_template", "")
    for subset in (self.dataset or {}).values():
        for split in subset.values():
            queries = split.get("queries") if isinstance(split, dict) else None
            if queries is not None and "instruction" in queries.column_names:
                split["queries"] = queries.map(_templated(template))


def _templated(template: str) -> Callable[[dict[str, str | None]], dict[str, str]]:
    """The `Dataset.map` function that fills `template` with a query row's own instruction."""
    return lambda row: {"instruction": fill_row_instruction(template, row["instruction"])}


def fill_row_instruction(template: str, own: str | None) -> str:
    """`template` with `{instruction}` replaced by the query's own instruction; without it, the template alone."""
    return template.replace(ROW_TEMPLATE_FIELD, own or "") if ROW_TEMPLATE_FIELD in template else template


def mapping_update(task: _Named, attribute: str, instruction: Instruction) -> dict[str, str]:
    """The new {criterion|aspect: instruction} of a multi-slot task, checked against its slots."""
    slots = dict(getattr(task, attribute))
    if isinstance(instruction, str):
        if len(slots) != 1:
            kind = {"criteria": "criterion", "aspects": "aspect"}.get(attribute, attribute)
            raise ConfigError(
                f"{task.metadata.name} has one instruction per {kind} ({', '.join(slots)}); "
                f"give each variant as a mapping of {', '.join(slots)} to its instruction."
            )
        return {next(iter(slots)): instruction}
    if set(instruction) != set(slots):
        raise ConfigError(
            f"{task.metadata.name}: a variant must give exactly the {attribute} "
            f"{', '.join(slots)}; it gives {', '.join(instruction)}."
        )
    return {name: instruction[name] for name in slots}


__all__ = ["fill_row_instruction", "mapping_update", "prompt_update", "variant_task"]
