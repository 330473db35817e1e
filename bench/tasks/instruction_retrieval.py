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

These tasks load as MTEB does, from the hub or a filled datasets cache: MTEB reads their qrels and the
changed-relevance list (`qrel_diff`) with its own loaders, so they take no local copy.
"""

from __future__ import annotations

from bench.tasks.generic import MTEB_PROMPT_SOURCE, GenericMTEBTask, _mteb_class

FOLLOWIR_TASKS = ("Core17InstructionRetrieval", "News21InstructionRetrieval", "Robust04InstructionRetrieval")
INSTRUCTIR_TASKS = ("InstructIR",)


def _mtebs_task(name: str, suites: tuple[str, ...]) -> type[GenericMTEBTask]:
    """MTEB's task class `name`, unchanged (MTEB's metadata and prompt), registered in `suites`."""
    base = _mteb_class(name)
    return type(
        f"MTEB{name}",
        (GenericMTEBTask, base),
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
    *(_mtebs_task(name, ("followir", "instruction-retrieval")) for name in FOLLOWIR_TASKS),
    *(_mtebs_task(name, ("instruction-retrieval",)) for name in INSTRUCTIR_TASKS),
)
