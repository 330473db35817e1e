"""MTEB's instruction-retrieval tasks as suites: FollowIR's three (`followir`) and, with InstructIR, `instruction-retrieval`.

Each task here *is* MTEB's task: MTEB's registered class (loading from the hub at MTEB's pinned revision,
MTEB's evaluator and scores: p-MRR by `evaluate_p_mrr_change`, robustness@10 by `robustness_at_10`) with
MTEB's own metadata, prompt included (MTEB's is None: the instructions are in the queries, one per query).
So its result is filed under MTEB's canonical key (task name, dataset revision, main score), is one MTEB's
results repository can take (`bench.tasks.mteb_compat.is_mtebs_task`), and MTEB's published results for it
join the board (`bench leaderboard build --mteb-results`). What the harness adds is what
`bench run --tasks Core17InstructionRetrieval` already added (bench/tasks/generic.py `mteb_task_class`):
`--limit` refusal, instruction variants; registering the classes puts them in suites.

FollowIR (Weller et al., 2024, arXiv 2403.15246): TREC Core17, News21 and Robust04 queries, each with its
original narrative ("-og" queries) and a changed one that makes some relevant documents non-relevant
("-changed"); p-MRR says whether those documents drop in the ranking when the instruction changes (in
[-1, 1], 0 = no change; bench/core/metric_specs.py). MTEB's "FollowIR" benchmark names the `followir` suite
(`bench run --suite FollowIR`). InstructIR (Oh et al., 2024, arXiv 2402.14334; MTEB's `InstructIR`):
robustness@10 over user-persona instructions, another measure, never averaged with p-MRR
(bench/results/suites.py).

Data: as MTEB loads it, from the hub or a filled datasets cache; or, offline, a local FollowIR-format folder
(FollowIR's tasks only) in MTEB's column layout, one jsonl file per config of MTEB's dataset:

    DATA_DIR/<Task>/corpus.jsonl      id, title, text
    DATA_DIR/<Task>/queries.jsonl     id, text, instruction   (ids "<q>-og" and "<q>-changed")
    DATA_DIR/<Task>/qrels.jsonl       query-id, corpus-id, score
    DATA_DIR/<Task>/qrel_diff.jsonl   query-id, corpus-ids   (the documents the changed instruction removes)

read into MTEB's in-memory layout (`RetrievalSplitData`) and scored by MTEB's own evaluator
(`evaluate_p_mrr_change`, with the local `qrel_diff` in place of the hub's); the result is filed under a
`local-<hash>` dataset revision, never as MTEB's task.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from datasets import Dataset

from bench.core.errors import DataError
from bench.tasks.data import find_local_file, read_local_rows
from bench.tasks.generic import MTEB_PROMPT_SOURCE, GenericMTEBTask, _mteb_class
from bench.tasks.rows import RawRow

if TYPE_CHECKING:
    from mteb.timing import TimingStack

FOLLOWIR_FILES: dict[str, tuple[str, ...]] = {
    "corpus": ("id", "title", "text"),
    "queries": ("id", "text", "instruction"),
    "qrels": ("query-id", "corpus-id", "score"),
    "qrel_diff": ("query-id", "corpus-ids"),
}


class LocalFollowIRData(GenericMTEBTask):
    """A FollowIR task's local folder (module docstring) in place of MTEB's hub loading; without one, MTEB's."""

    def _find_local_files(self) -> dict[str, Path]:
        assert self.data_dir is not None  # __init__ looks for local files only with a data directory
        task_dir = self.data_dir / self.metadata.name
        if not task_dir.is_dir():
            return super()._find_local_files()  # no folder: MTEB's loading, from the hub or the datasets cache
        if not (task_dir / "corpus.jsonl").is_file():
            raise DataError(
                f"{task_dir} is no FollowIR-format folder: expected "
                f"{', '.join(f'{p}.jsonl' for p in FOLLOWIR_FILES)} (see bench/tasks/instruction_retrieval.py), "
                f"or remove it to load {self.metadata.name} from the hub or a filled datasets cache."
            )
        return {part: find_local_file(task_dir, part) for part in FOLLOWIR_FILES}

    def _local_rows(self, part: str) -> Sequence[RawRow]:
        assert self.local_files is not None
        return read_local_rows(self.local_files[part], FOLLOWIR_FILES[part])

    def load_data(self, num_proc: int | None = None, *, timer: TimingStack | None = None, **kwargs: object) -> None:
        if self.data_loaded or not self.local_files:
            super().load_data(num_proc=num_proc, timer=timer, **kwargs)
            return
        qrels: dict[str, dict[str, int]] = defaultdict(dict)
        for i, row in enumerate(self._local_rows("qrels"), start=1):
            score = row["score"]
            if not isinstance(score, (str, int, float)):
                raise DataError(
                    f"{self.local_files['qrels']} row {i}: score must be a number, got {type(score).__name__}."
                )
            qrels[str(row["query-id"])][str(row["corpus-id"])] = int(score)
        queries = [r for r in self._local_rows("queries") if r["id"] in qrels]
        for suffix in ("-og", "-changed"):
            if not any(q.endswith(suffix) for q in qrels):
                raise DataError(f"{self.local_files['qrels']}: no qrels for a query id ending in {suffix!r}.")
        split = {"corpus": Dataset.from_list(list(self._local_rows("corpus"))), "queries": Dataset.from_list(queries)}
        self.dataset = {
            "default": {self.metadata.eval_splits[0]: {**split, "relevant_docs": dict(qrels), "top_ranked": None}}
        }
        self.data_loaded = True

    def task_specific_scores(
        self,
        scores: dict[str, dict[str, float]],
        qrels: dict[str, dict[str, int]],
        results: dict[str, dict[str, float]],
        hf_split: str,
        hf_subset: str,
    ) -> dict[str, float | dict[str, float]]:  # MTEB's p-MRR scores nest (evaluate_p_mrr_change)
        if not self.local_files:
            return super().task_specific_scores(scores, qrels, results, hf_split, hf_subset)  # type: ignore[misc]
        from mteb._evaluators.retrieval_metrics import evaluate_p_mrr_change

        changed: dict[str, list[str]] = {}
        for i, r in enumerate(self._local_rows("qrel_diff"), start=1):
            ids = r["corpus-ids"]
            if not isinstance(ids, list):
                raise DataError(f"{self.local_files['qrel_diff']} row {i}: corpus-ids must be a list of document ids.")
            changed[str(r["query-id"])] = ids
        return evaluate_p_mrr_change(qrels, results, changed, self.k_values)  # type: ignore[attr-defined]


FOLLOWIR_TASKS = ("Core17InstructionRetrieval", "News21InstructionRetrieval", "Robust04InstructionRetrieval")
INSTRUCTIR_TASKS = ("InstructIR",)


def _mtebs_task(name: str, suites: tuple[str, ...], *, local_folder: bool = False) -> type[GenericMTEBTask]:
    """MTEB's task class `name`, unchanged (MTEB's metadata and prompt), registered in `suites`; with
    `local_folder`, a FollowIR-format folder may replace the hub (`LocalFollowIRData`)."""
    base = _mteb_class(name)
    return type(
        f"MTEB{name}",
        (LocalFollowIRData if local_folder else GenericMTEBTask, base),
        {
            "metadata": base.metadata,  # in the class body: the class registers itself (bench/tasks/registry.py)
            "instruction": base.metadata.prompt,
            "instruction_source": MTEB_PROMPT_SOURCE,
            "suites": suites,
            "__module__": __name__,
            "__doc__": f"MTEB's {name}, run by MTEB's own class (suites: {', '.join(suites)}).",
        },
    )


INSTRUCTION_RETRIEVAL_TASKS = (
    *(_mtebs_task(name, ("followir", "instruction-retrieval"), local_folder=True) for name in FOLLOWIR_TASKS),
    *(_mtebs_task(name, ("instruction-retrieval",)) for name in INSTRUCTIR_TASKS),
)
