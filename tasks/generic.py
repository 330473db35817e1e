"""Generic (instruction-independent) MTEB tasks, run by MTEB's own task classes with a task-level instruction.

Two sets:
* InBedder's generic controls (paper §3.2): TwentyNewsgroupsClustering, AskUbuntuDupQuestions,
  SciDocsRR, StackOverflowDupQuestions.
* MetaEOL's STS set (paper Table 1): STS12-16, STSBenchmark, SICK-R.

Each class subclasses MTEB's own class, so loading from the hub (pinned revision, MTEB's
`dataset_transform`) and scoring (MTEB's evaluator, e.g. `AbsTaskSTS` with `AnySTSEvaluator`) are
MTEB's. What this module adds: the instruction, put in `TaskMetadata.prompt` (which the harness's
encoders use for every text of the task), and, for the STS tasks, a local directory:

    DATA_DIR/<TaskName>/test.{jsonl,csv,...}   columns sentence1, sentence2, score (SentEval-derived;
                                                built by `bench build-data sts-senteval`)

Where the instructions come from:
* STS and reranking: INSTRUCTOR's MTEB evaluation code, hkunlp/instructor-large entries of its
  `DEFINITIONS` (instructor-embedding/derived/mteb_instruction_DEFINITIONS.json); reranking keeps
  its separate query and corpus instructions.
* TwentyNewsgroupsClustering: InBedder's default instruction for the task
  (InBedder/derived/task_descriptions_and_instructions.json, "instruction").
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from datasets import Dataset
from mteb.tasks.clustering.eng.twenty_newsgroups_clustering import TwentyNewsgroupsClustering
from mteb.tasks.reranking.eng.ask_ubuntu_dup_questions import AskUbuntuDupQuestions
from mteb.tasks.reranking.eng.sci_docs_reranking import SciDocsReranking
from mteb.tasks.reranking.eng.stack_overflow_dup_questions import StackOverflowDupQuestions
from mteb.tasks.sts.eng.sickr_sts import SickrSTS
from mteb.tasks.sts.eng.sts12_sts import STS12STS
from mteb.tasks.sts.eng.sts13_sts import STS13STS
from mteb.tasks.sts.eng.sts14_sts import STS14STS
from mteb.tasks.sts.eng.sts15_sts import STS15STS
from mteb.tasks.sts.eng.sts16_sts import STS16STS
from mteb.tasks.sts.eng.sts_benchmark_sts import STSBenchmarkSTS

from bench.errors import DataError
from tasks.abstasks.base import InstructionTask, limited
from tasks.data import DATA_DIR_ENV, Schema

logger = logging.getLogger(__name__)

INSTRUCTOR_SOURCE = "INSTRUCTOR evaluation DEFINITIONS, hkunlp/instructor-large (xlang-ai/instructor-embedding)"
INBEDDER_SOURCE = "InBedder default task instruction (zhang-yu-wei/InBedder, task_descriptions_and_instructions.json)"

Prompt = str | dict[str, str]


class GenericMTEBTask(InstructionTask):
    """Mixin placed before an MTEB task class: adds the instruction, the local directory and `--limit`.

    Attributes:
        instruction: the task-level instruction (a string, or {"query", "document"} for reranking).
        instruction_source: where the instruction string comes from.
        local_layout: whether the task can read a local directory (only the STS tasks can).
    """

    instruction: ClassVar[Prompt]
    instruction_source: ClassVar[str]
    local_layout: ClassVar[bool] = False
    schema = Schema({"sentence1": "text", "sentence2": "text", "score": "score"})

    def _find_local_files(self):  # type: ignore[override]
        if not self.local_layout:
            logger.warning("%s has no local layout; it loads from the hub even with a data directory.", self.metadata.name)
            return {}
        return super()._find_local_files()

    def instruction_set(self) -> dict[str, Any]:
        return {"task_instruction": self.instruction, "source": self.instruction_source}

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        if self.data_loaded:
            return
        if self.local_files:
            super().load_data(num_proc=num_proc, **kwargs)
            return
        try:
            super(InstructionTask, self).load_data(num_proc=num_proc, **kwargs)  # MTEB's own loading
        except Exception as e:  # datasets raises many types; all mean "not available"
            meta = self.metadata.dataset
            raise DataError(
                f"Could not load {meta['path']} at revision {meta['revision'][:12]} for {self.metadata.name} "
                f"({type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}). Offline? "
                + (f"Pass --data-dir DIR (or set {DATA_DIR_ENV}) with {self.metadata.name}/test.jsonl."
                   if self.local_layout else "This task has no local layout; it needs the hub or a filled datasets cache.")
            ) from None
        self._limit_hub_data()

    def _limit_hub_data(self) -> None:
        if self.limit is None:
            return
        if not self.local_layout:
            logger.warning("--limit is not applied to %s (MTEB's data layout for it is kept as is).", self.metadata.name)
            return
        split = self.metadata.eval_splits[0]
        rows = self._assemble({split: self.dataset[split].to_list()})
        self.dataset[split] = Dataset.from_list(rows)

    def _assemble(self, rows_by_part: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
        """STS rows: gold scores checked against the task's range; `--limit` stratified by rounded score."""
        (rows,) = rows_by_part.values()
        for i, row in enumerate(rows, start=1):
            if not self.min_score <= row["score"] <= self.max_score:  # type: ignore[attr-defined]
                raise DataError(
                    f"{self.metadata.name} row {i}: score {row['score']} outside "
                    f"[{self.min_score}, {self.max_score}]."  # type: ignore[attr-defined]
                )
        return limited(rows, [round(r["score"]) for r in rows], self.limit, self.seed)

    def _calculate_descriptive_statistics_from_split(self, split: str, **kwargs: Any) -> Any:
        return super(InstructionTask, self)._calculate_descriptive_statistics_from_split(split, **kwargs)


def _generic(base: type, instruction: Prompt, source: str, *, local_layout: bool = False) -> type[GenericMTEBTask]:
    """MTEB's task class `base` with `instruction` in its metadata's prompt."""
    prompt = {"query": instruction["query"], "document": instruction["corpus"]} if isinstance(instruction, dict) else instruction
    metadata = base.metadata.model_copy(update={"prompt": prompt})
    attrs = {
        "metadata": metadata,
        "instruction": instruction,
        "instruction_source": source,
        "local_layout": local_layout,
        "__module__": __name__,
        "__doc__": f"MTEB's {metadata.name} with the task instruction {instruction!r} ({source}).",
    }
    return type(f"Instructed{base.__name__}", (GenericMTEBTask, base), attrs)


# hkunlp/instructor-large, STSEvaluator.py DEFINITIONS (verbatim, trailing space included).
STS_INSTRUCTIONS: dict[type, str] = {
    STS12STS: "Represent the statement: ",
    STS13STS: "represent the statement: ",
    STS14STS: "Represent the statement: ",
    STS15STS: "Represent the statement: ",
    STS16STS: "Represent the statement: ",
    STSBenchmarkSTS: "represent the statement: ",
    SickrSTS: "Represent the statement: ",
}
# hkunlp/instructor-large, RerankingEvaluator.py DEFINITIONS (verbatim).
RERANKING_INSTRUCTIONS: dict[type, dict[str, str]] = {
    AskUbuntuDupQuestions: {
        "query": "Represent the Ubuntu question for reranking: ",
        "corpus": "Represent the Ubuntu question for reranking: ",
    },
    SciDocsReranking: {"query": "Represent the Scientific title: ", "corpus": "Represent the Scientific document: "},
    StackOverflowDupQuestions: {
        "query": "Represent the StackOverflow question: ",
        "corpus": "Represent the StackOverflow question: ",
    },
}

STS_TASKS = tuple(_generic(base, text, INSTRUCTOR_SOURCE, local_layout=True) for base, text in STS_INSTRUCTIONS.items())
INBEDDER_GENERIC_TASKS = (
    _generic(TwentyNewsgroupsClustering, "Categorize the topic of the news article.", INBEDDER_SOURCE),
    *(_generic(base, prompt, INSTRUCTOR_SOURCE) for base, prompt in RERANKING_INSTRUCTIONS.items()),
)
GENERIC_TASKS = INBEDDER_GENERIC_TASKS + STS_TASKS
