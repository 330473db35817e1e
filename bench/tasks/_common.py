"""TaskMetadata fields shared by the harness's tasks, so each task file declares only what is its own."""

from __future__ import annotations

from typing import Any

from bench.tasks.citations import INBEDDER_CITATION, INBEDDER_REFERENCE


def common_metadata(**overrides: Any) -> dict[str, Any]:
    """Defaults for an English, text-only, test-split task; `overrides` wins."""
    fields: dict[str, Any] = dict(
        category="t2t",
        modalities=["text"],
        eval_splits=["test"],
        eval_langs=["eng-Latn"],
        date=("2023-01-01", "2024-02-14"),
        task_subtypes=[],
        dialect=[],
        reference=INBEDDER_REFERENCE,
        bibtex_citation=INBEDDER_CITATION,
    )
    fields.update(overrides)
    return fields
