"""One abstract task per instruction-aware task type; concrete tasks only declare metadata."""

from bench.tasks.abstasks.base import InstructionTask
from bench.tasks.abstasks.instruction_robustness import AbsTaskInstructionRobustness
from bench.tasks.abstasks.instruction_sts import AbsTaskInstructionSTS
from bench.tasks.abstasks.instruction_triplet import AbsTaskInstructionTriplet
from bench.tasks.abstasks.multi_aspect_clustering import AbsTaskMultiAspectClustering

__all__ = [
    "AbsTaskInstructionRobustness",
    "AbsTaskInstructionSTS",
    "AbsTaskInstructionTriplet",
    "AbsTaskMultiAspectClustering",
    "InstructionTask",
]
