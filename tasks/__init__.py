"""The harness's MTEB tasks and the suites that group them.

Each task is an MTEB task class: pass instances to `mteb.evaluate(model, tasks=[IntentEmotion()])`.
`get_tasks` resolves names (with close-match suggestions) and passes `data_dir`, `limit` and `seed`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bench.errors import UnknownNameError
from tasks.demo import DemoInstructSTS, DemoIntentEmotion, DemoNYTClustering
from tasks.generic import INBEDDER_GENERIC_TASKS, STS_TASKS
from tasks.gstransform import GSTRANSFORM_TASKS
from tasks.instruct_stsb import InstructSTSB
from tasks.intent_emotion import IntentEmotion
from tasks.nyt_clustering import NYTClustering
from tasks.robustness_clustering import (
    FeedbacksClustering,
    FewEventClustering,
    FewNerdClustering,
    FewRelClustering,
    NYTTopicClustering,
    RateMyProfClustering,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from tasks.abstasks import InstructionTask

TASKS: dict[str, type[InstructionTask]] = {
    cls.metadata.name: cls
    for cls in (IntentEmotion, InstructSTSB, NYTClustering, DemoIntentEmotion, DemoInstructSTS, DemoNYTClustering)
}
# InBedder robustness tests (paper §3.3), in the order of its robust_evaluation.py.
ROBUSTNESS_TASKS = (
    NYTTopicClustering, FeedbacksClustering, RateMyProfClustering, FewRelClustering, FewEventClustering, FewNerdClustering,
)
TASKS.update({cls.metadata.name: cls for cls in ROBUSTNESS_TASKS})
# GSTransform's nine datasets (paper §4.2) and the generic MTEB controls (InBedder §3.2, MetaEOL STS).
TASKS.update({cls.metadata.name: cls for cls in (*GSTRANSFORM_TASKS, *INBEDDER_GENERIC_TASKS, *STS_TASKS)})

SUITES: dict[str, tuple[str, ...]] = {
    "demo": ("DemoIntentEmotion", "DemoInstructSTS", "DemoNYTClustering"),
    "awareness": ("IntentEmotion", "InstructSTSB", "NYTClustering"),
    "robustness": tuple(cls.metadata.name for cls in ROBUSTNESS_TASKS),
    "gstransform": tuple(cls.metadata.name for cls in GSTRANSFORM_TASKS),
    "generic": tuple(cls.metadata.name for cls in (*INBEDDER_GENERIC_TASKS, *STS_TASKS)),
    "generic-sts": tuple(cls.metadata.name for cls in STS_TASKS),
}
# Every evaluation of the InBedder paper (Tables 1-2, Fig. 4), and every non-demo task once.
SUITES["inbedder"] = (*SUITES["awareness"], *SUITES["robustness"], *(c.metadata.name for c in INBEDDER_GENERIC_TASKS))
SUITES["all"] = tuple(dict.fromkeys(n for suite, names in SUITES.items() if suite != "demo" for n in names))
SUITE_DESCRIPTIONS: dict[str, str] = {
    "demo": "small offline demo data shipped with the package (default)",
    "awareness": "InBedder instruction-awareness tests (paper §3.2, Table 1)",
    "robustness": "InBedder instruction-robustness tests: 6 clustering sets x 30 instructions (paper §3.3, Fig. 4)",
    "gstransform": "GSTransform's 9 datasets: clustering, STS and triplets sampled from labels (paper §4.2, Table 1)",
    "generic": "MTEB's own tasks with a task instruction: InBedder's generic controls + MetaEOL's STS set",
    "generic-sts": "MetaEOL's STS set (STS12-16, STSBenchmark, SICK-R) as MTEB tasks; runs from local SentEval data",
    "inbedder": "every InBedder evaluation: awareness, robustness and the generic controls",
    "all": "every task of every suite except the demo",
}
DEFAULT_SUITE = "demo"


def task_names(*, tasks: Iterable[str] | None = None, suite: str | None = None) -> list[str]:
    """Resolve `--tasks` / `--suite` to registered task names, failing on the first unknown one."""
    if tasks:
        names = list(dict.fromkeys(tasks))
        for name in names:
            if name not in TASKS:
                raise UnknownNameError("task", name, TASKS)
        return names
    suite = suite or DEFAULT_SUITE
    if suite not in SUITES:
        raise UnknownNameError("suite", suite, SUITES)
    return list(SUITES[suite])


def get_tasks(
    names: Iterable[str],
    *,
    data_dir: str | Path | None = None,
    limit: int | None = None,
    seed: int = 42,
    instruction_style: str | None = None,
) -> list[InstructionTask]:
    """Task instances ready for `mteb.evaluate`; local files are located (and checked) here.

    `instruction_style` goes only to tasks that offer several instruction styles (`instruction_styles`,
    e.g. the GSTransform tasks); None means each task's default.
    """
    out = []
    for name in names:
        if name not in TASKS:
            raise UnknownNameError("task", name, TASKS)
        cls = TASKS[name]
        options = {"instruction_style": instruction_style} if getattr(cls, "instruction_styles", None) else {}
        out.append(cls(data_dir=data_dir, limit=limit, seed=seed, **options))
    return out


__all__ = [
    "SUITES",
    "TASKS",
    "DemoInstructSTS",
    "DemoIntentEmotion",
    "DemoNYTClustering",
    "FeedbacksClustering",
    "FewEventClustering",
    "FewNerdClustering",
    "FewRelClustering",
    "InstructSTSB",
    "IntentEmotion",
    "NYTClustering",
    "NYTTopicClustering",
    "RateMyProfClustering",
    "get_tasks",
    "task_names",
]
