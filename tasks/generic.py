"""Generic (instruction-independent) MTEB tasks, run by MTEB's own task classes with a task-level instruction.

Two sets:
* InBedder's generic controls (paper §3.2): TwentyNewsgroupsClustering, AskUbuntuDupQuestions,
  SciDocsRR, StackOverflowDupQuestions.
* MTEB's STS set STS12-16, STSBenchmark, SICK-R (suite `generic-sts`), and MetaEOL's STS evaluation
  (paper Table 1, through SentEval): the same STS12-16 plus SentEval's lower-cased STSBenchmark and
  test-only SICK-R, kept under their own names (`STSBenchmark-SentEval`, `SICK-R-SentEval`; suite
  `metaeol-sts`) because MTEB's tasks of those names hold other pairs.

Each class subclasses MTEB's own class (looked up by name with `mteb.get_task`), so loading from the hub (pinned revision, MTEB's
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
import re
from typing import Any, ClassVar

import mteb
from datasets import Dataset

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
    local_only: ClassVar[bool] = False  # another split of MTEB's corpus: the hub copy holds other pairs
    schema = Schema({"sentence1": "text", "sentence2": "text", "score": "score"})

    def _find_local_files(self):  # type: ignore[override]
        if not self.local_layout:
            logger.warning("%s has no local layout; it loads from the hub even with a data directory.", self.metadata.name)
            return {}
        return super()._find_local_files()

    def instruction_set(self) -> dict[str, Any]:
        return {"task_instruction": self.instruction, "source": self.instruction_source}

    def instruction_update(self, instruction: Prompt) -> tuple[dict[str, Any], dict[str, Any]]:
        from tasks.variants import prompt_update

        update, attrs = prompt_update(self, instruction)
        prompt = update["prompt"]
        own = {"query": prompt.get("query", ""), "corpus": prompt.get("document", "")} if isinstance(prompt, dict) else prompt
        return update, {**attrs, "instruction": own, "instruction_source": "instruction variant"}

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        if self.data_loaded:
            return
        if self.local_files:
            super().load_data(num_proc=num_proc, **kwargs)
            return
        if self.local_only:
            raise DataError(
                f"{self.metadata.name} has no hub copy of its own; build it with `bench build-data sts-senteval "
                f"--source-dir RAW --out DATA` and pass --data-dir DATA."
            )
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


def mteb_task_class(name: str) -> type[GenericMTEBTask]:
    """Any task of MTEB's registry as the harness runs it: MTEB's own class (data, scoring, prompt),
    plus `--limit` refusal and instruction variants; made on demand and not registered (no suite, and
    `bench list tasks` keeps to the harness's own). It loads as MTEB does, from the hub or, offline,
    from a filled `datasets` cache."""
    base = _mteb_class(name)
    cls = type(f"MTEB{re.sub(r'[^A-Za-z0-9]', '', name)}", (GenericMTEBTask, base), {
        "instruction": base.metadata.prompt,
        "instruction_source": "MTEB's task metadata (prompt)",
        "__module__": __name__,
        "__doc__": f"MTEB's {name}, run by the harness.",
    })
    cls.metadata = base.metadata  # after class creation: a class body with `metadata` would register it
    return cls


def _mteb_class(name: str) -> type:
    """MTEB's registered task class of that name (public API: `mteb.get_task` returns an instance)."""
    return type(mteb.get_task(name))


def _generic(
    base_name: str,
    instruction: Prompt,
    source: str,
    *,
    suites: tuple[str, ...],
    local_layout: bool = False,
    name: str | None = None,
    description: str | None = None,
) -> type[GenericMTEBTask]:
    """MTEB's task class `base_name` with `instruction` in its metadata's prompt.

    With `name`, the class is a task of its own (another split of the same corpus) and not MTEB's.
    """
    base = _mteb_class(base_name)
    prompt = {"query": instruction["query"], "document": instruction["corpus"]} if isinstance(instruction, dict) else instruction
    update: dict[str, Any] = {"prompt": prompt}
    if name:
        update |= {"name": name, "description": description}
    metadata = base.metadata.model_copy(update=update)
    attrs = {
        "metadata": metadata,
        "instruction": instruction,
        "instruction_source": source,
        "local_layout": local_layout,
        "suites": suites,
        "local_only": bool(name),
        "__module__": __name__,
        "__doc__": f"{'' if name else 'MTEB' + chr(39) + 's '}{metadata.name} with the task instruction {instruction!r} ({source}).",
    }
    return type(f"Instructed{(name or base_name).replace('-', '')}", (GenericMTEBTask, base), attrs)


# hkunlp/instructor-large, STSEvaluator.py DEFINITIONS (verbatim, trailing space included).
STS_INSTRUCTIONS: dict[str, str] = {
    "STS12": "Represent the statement: ",
    "STS13": "represent the statement: ",
    "STS14": "Represent the statement: ",
    "STS15": "Represent the statement: ",
    "STS16": "Represent the statement: ",
    "STSBenchmark": "represent the statement: ",
    "SICK-R": "Represent the statement: ",
}
# hkunlp/instructor-large, RerankingEvaluator.py DEFINITIONS (verbatim).
RERANKING_INSTRUCTIONS: dict[str, dict[str, str]] = {
    "AskUbuntuDupQuestions": {
        "query": "Represent the Ubuntu question for reranking: ",
        "corpus": "Represent the Ubuntu question for reranking: ",
    },
    "SciDocsRR": {"query": "Represent the Scientific title: ", "corpus": "Represent the Scientific document: "},
    "StackOverflowDupQuestions": {
        "query": "Represent the StackOverflow question: ",
        "corpus": "Represent the StackOverflow question: ",
    },
}

INBEDDER_GENERIC_TASKS = (
    _generic("TwentyNewsgroupsClustering", "Categorize the topic of the news article.", INBEDDER_SOURCE,
             suites=("generic", "inbedder")),
    *(_generic(base, prompt, INSTRUCTOR_SOURCE, suites=("generic", "inbedder"))
      for base, prompt in RERANKING_INSTRUCTIONS.items()),
)
STS_TASKS = tuple(
    _generic(base, text, INSTRUCTOR_SOURCE, local_layout=True,
             suites=("generic-sts", "generic") + (("metaeol-sts",) if base.startswith("STS1") else ()))
    for base, text in STS_INSTRUCTIONS.items()
)
# SentEval's splits, which MetaEOL reports: local data only (`bench build-data sts-senteval`).
SENTEVAL_STS_TASKS = (
    _generic("STSBenchmark", STS_INSTRUCTIONS["STSBenchmark"], INSTRUCTOR_SOURCE, local_layout=True,
             suites=("metaeol-sts",), name="STSBenchmark-SentEval",
             description="STS-B test pairs as SentEval reads them (tokenised, lower-cased), as MetaEOL evaluates."),
    _generic("SICK-R", STS_INSTRUCTIONS["SICK-R"], INSTRUCTOR_SOURCE, local_layout=True,
             suites=("metaeol-sts",), name="SICK-R-SentEval",
             description="SICK relatedness, the 4,927 SemEval-2014 test pairs only (SentEval's SICK-R, as MetaEOL "
                         "evaluates); MTEB's SICK-R holds all 9,927 pairs."),
)
GENERIC_TASKS = INBEDDER_GENERIC_TASKS + STS_TASKS + SENTEVAL_STS_TASKS
