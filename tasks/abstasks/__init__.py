"""One abstract task per instruction-aware task type; concrete tasks only declare metadata."""

from tasks.abstasks.base import InstructionTask
from tasks.abstasks.instruction_robustness import AbsTaskInstructionRobustness
from tasks.abstasks.instruction_sts import AbsTaskInstructionSTS
from tasks.abstasks.instruction_triplet import AbsTaskInstructionTriplet
from tasks.abstasks.multi_aspect_clustering import AbsTaskMultiAspectClustering

__all__ = [
    "AbsTaskInstructionRobustness",
    "AbsTaskInstructionSTS",
    "AbsTaskInstructionTriplet",
    "AbsTaskMultiAspectClustering",
    "InstructionTask",
]
