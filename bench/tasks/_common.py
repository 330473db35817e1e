"""TaskMetadata fields shared by the harness's tasks, so each task file declares only what is its own."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict, Unpack

from bench.tasks.citations import INBEDDER_CITATION, INBEDDER_REFERENCE

if TYPE_CHECKING:
    from mteb.abstasks.task_metadata import TaskCategory, TaskSubtype
    from mteb.types import Languages, Modalities, StrDate, StrURL


class CommonFields(TypedDict, total=False):
    """The `TaskMetadata` fields `common_metadata` fills in (all of them), with MTEB's field types."""

    category: TaskCategory | None
    modalities: list[Modalities]
    eval_splits: list[str]
    eval_langs: Languages
    date: tuple[StrDate, StrDate] | None
    task_subtypes: list[TaskSubtype] | None
    dialect: list[str] | None
    reference: StrURL | None
    bibtex_citation: str | None


def common_metadata(**overrides: Unpack[CommonFields]) -> CommonFields:
    """Defaults for an English, text-only, test-split task; `overrides` wins."""
    fields: CommonFields = {
        "category": "t2t",
        "modalities": ["text"],
        "eval_splits": ["test"],
        "eval_langs": ["eng-Latn"],
        "date": ("2023-01-01", "2024-02-14"),
        "task_subtypes": [],
        "dialect": [],
        "reference": INBEDDER_REFERENCE,
        "bibtex_citation": INBEDDER_CITATION,
    }
    fields.update(overrides)
    return fields
