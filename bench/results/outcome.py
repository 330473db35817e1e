"""What one task of a run gave: read by the run's summary table and returned by `bench.run`.

A plain record of the results layer, so that the tables which print it need not import the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bench.core.run_record import VariantBlock


@dataclass
class TaskOutcome:
    """One row of the summary: the task's scores and how they were obtained."""

    task: str
    main_score_name: str
    main_score: float
    scores: dict[str, Any]
    status: str  # "computed" or "reused"
    record: dict[str, Any] = field(default_factory=dict)
    result_path: str | None = None  # the TaskResult file (printed, never recorded: it is a local path)

    @property
    def variant(self) -> VariantBlock | None:
        """The run record's `variant` block when this outcome is an instruction variant's, else None."""
        return self.record.get("variant")
