"""Instruction robustness: one corpus clustered under 30 instructions (correct, implicit, incorrect)."""

from __future__ import annotations

import functools
import hashlib
from concurrent.futures import Future
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from sklearn.metrics import v_measure_score

from bench.core import parallel
from bench.core.errors import DataError
from bench.core.json_types import JSONObject
from bench.core.metric_specs import SIGNED, Metric
from bench.tasks.abstasks.base import InstructionTask, MetadataUpdate, Prompt, VariantAttributes, encode_pairs, limited
from bench.tasks.data import Schema
from bench.tasks.metrics import cluster_assignment, robustness_gaps
from bench.tasks.rows import ClusterRow, CorpusItem

if TYPE_CHECKING:
    from mteb.types import ScoresDict

INSTRUCTION_SETS = ("correct", "implicit", "incorrect")
INSTRUCTIONS_PER_SET = 10


class AbsTaskInstructionRobustness(InstructionTask[ClusterRow]):
    """Clustering robustness to how the instruction is phrased (InBedder paper §3.3, appendix B, Fig. 4/7).

    The corpus (texts with gold clusters) is clustered once per instruction: 10 paraphrases of the task
    instruction ("correct"), 10 that convey it implicitly ("implicit") and 10 that ask for something
    else ("incorrect"), verbatim from InBedder. Per instruction: embed every text under it,
    `MiniBatchKMeans(k = #gold clusters, batch_size=500, n_init="auto")` on the raw embeddings,
    V-measure, exactly as InBedder's `ClusteringEvaluator` (our shared `cluster_v_measure`). One
    deliberate difference: InBedder left k-means unseeded, so its 30 runs also differ by k-means
    randomness; here every instruction uses the same seed, so any difference between two
    instructions comes from their embeddings alone, and an instruction-blind model gets 30 equal
    V-measures and gaps of exactly 0.

    Scores (all flat floats, MTEB TaskResult style):
        v_measure_<set>_<i>          V-measure under instruction i (0-9) of each set
        <set>_mean_v_measure         mean over the set's 10 instructions (also _min_ / _max_)
        delta_ci_mean, delta_ii_mean             mean(correct|implicit) − mean(incorrect): the paper's
                                                 text and Figure 4 caption
        delta_ci_worst_case, delta_ii_worst_case min(correct|implicit) − max(incorrect): the released
                                                 code (`MTEB.robustness_test`, keys dci / dii)

    Main score: `delta_ci_mean`. The suite asks whether a model's clusters follow what the instruction
    asks for; Δci is the quantity the paper defines and plots for that, it is exactly 0 for a model
    that ignores instructions (so it measures instruction-following, not embedding quality), and,
    averaging 10 + 10 runs, it is far less noisy than the worst-case margin, which hangs on the single
    most extreme of 20 clusterings. Quality under correct instructions (`correct_mean_v_measure`) and
    the other gaps are printed beside it (the `detail` metrics, in their order).

    Each instruction is one `encode_pairs` call of N (text, instruction) pairs, handed to
    `bench.core.parallel.submit` for clustering and dropped. In a plain run a scoring thread clusters
    it while the next instruction is encoded; with two views waiting for it the task waits for room,
    so peak memory holds a few views' vectors plus what the encoder keeps, never 30 × N
    (FewEvent with 4,096-d vectors: ~78 MB a view instead of ~2.3 GB). In a launched run another rank's
    scoring thread clusters it while the ranks encode the next instruction (a few views per rank may wait
    in memory for one). Either way no accelerator idles through 30 k-means fits. The
    harness's encoder (`BaseEncoder`) keeps a bounded in-memory memo of the distinct vectors of the
    task, so an encoder that renders every instruction to the same input (e.g. `--template none`)
    still embeds each text once per run even without the on-disk cache; the 29 later calls cost a
    lookup per text.

    Attributes:
        instructions: set name ("correct", "implicit", "incorrect") -> its 10 instructions.
        metrics: the scores above (bench/core/metric_specs.py); those marked `detail`, with their short
            labels, are the sub-scores `bench run` prints beside the main score, in this order.
    """

    instructions: ClassVar[dict[str, tuple[str, ...]]]
    schema = Schema(ClusterRow, {"text": "text", "cluster": "label"})
    metrics: ClassVar[tuple[Metric, ...]] = (
        *(
            Metric(f"{s}_mean_v_measure", f"mean V-measure under the {s} instructions", detail=True, label=s)
            for s in INSTRUCTION_SETS
        ),
        Metric(
            "delta_ci_mean",
            (
                "Δci: mean V-measure of the clusters under the 10 correct instructions minus under the 10 incorrect ones "
                "(a difference of two scores, 0 for a model that ignores the instruction)"
            ),
            range=SIGNED,
            kind="gap",
            detail=True,
            label="ci-gap(mean)",
            mteb_type="InstructionReranking",  # a V-measure gap: joins p-MRR (instruction-following change), not V-measures
        ),
        *(
            Metric(f"delta_{g}_{how}", f"Δ{g} ({how})", range=SIGNED, kind="gap", detail=True, label=f"{g}-gap({word})")
            for g, how, word in (("ii", "mean", "mean"), ("ci", "worst_case", "worst"), ("ii", "worst_case", "worst"))
        ),
    )

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "instructions" in cls.__dict__:
            _check_instruction_sets(cls.__name__, cls.instructions)

    # A variant copy (`bench run --instruction-variants`, bench/tasks/variants.py) clusters under this one
    # instruction only and scores its V-measure; None is the task's own 30-instruction evaluation.
    single_instruction: str | None = None

    def instruction_set(self) -> JSONObject:
        if self.single_instruction is not None:
            return {"single_instruction": self.single_instruction}
        return {"robustness": {name: list(self.instructions[name]) for name in INSTRUCTION_SETS}}

    def instruction_update(self, instruction: Prompt) -> tuple[MetadataUpdate, VariantAttributes]:
        from bench.core.errors import ConfigError

        if not isinstance(instruction, str):
            raise ConfigError(f"{self.metadata.name} clusters under one instruction per variant; give strings.")
        return {"main_score": "v_measure"}, {"single_instruction": instruction}

    def _assemble(self, rows_by_part: dict[str, list[ClusterRow]]) -> list[CorpusItem]:
        (part,) = rows_by_part.values()
        # Labels become strings so that int and str labels behave alike (and fit one Arrow column).
        rows: list[CorpusItem] = [{"text": r["text"], "cluster": str(r["cluster"])} for r in part]
        clusters = {r["cluster"] for r in rows}
        if len(clusters) < 2:
            raise DataError(
                f"{self.metadata.name}: the corpus has {len(clusters)} gold cluster(s); clustering needs at least 2."
            )
        return limited(rows, [r["cluster"] for r in rows], self.limit, self.seed)

    def _evaluate_subset(self, model, data_split, *, hf_split, hf_subset, encode_kwargs, **kwargs) -> ScoresDict:
        texts = list(data_split["text"])
        labels = list(data_split["cluster"])
        if self.single_instruction is not None:
            emb = encode_pairs(
                model,
                texts,
                [self.single_instruction] * len(texts),
                task=self,
                hf_split=hf_split,
                hf_subset=hf_subset,
                encode_kwargs=encode_kwargs,
            )
            assignment = cluster_assignment(np.ascontiguousarray(emb), labels, seed=self.seed)
            self.run_items = {
                "kind": "clustering",
                "groups": {"default": {"labels": labels, "assignments": assignment.tolist()}},
            }
            return {
                "v_measure": float(v_measure_score(list(labels), assignment)),  # as cluster_v_measure
                "num_texts": len(texts),
                "num_clusters": len(set(labels)),
            }
        runs = [(name, i, inst) for name in INSTRUCTION_SETS for i, inst in enumerate(self.instructions[name])]
        n = len(texts)
        score = functools.partial(cluster_assignment, labels=labels, seed=self.seed)
        jobs: dict[str, Future[np.ndarray]] = {}  # identical embeddings (a blind model) are clustered once
        digests: list[str] = []
        try:
            for _name, _i, inst in runs:  # each view is scored as soon as it is encoded (bench.core.parallel)
                emb = np.ascontiguousarray(
                    encode_pairs(
                        model,
                        texts,
                        [inst] * n,
                        task=self,
                        hf_split=hf_split,
                        hf_subset=hf_subset,
                        encode_kwargs=encode_kwargs,
                    )
                )
                digest = hashlib.sha256(emb.data).hexdigest()  # the array's own buffer, uncopied
                if digest not in jobs:
                    jobs[digest] = parallel.submit(score, emb)
                del emb
                digests.append(digest)
            clusters = dict(zip(jobs, parallel.gather(list(jobs.values())), strict=True))
        finally:
            parallel.discard(jobs.values())  # a failed encode leaves no queued job behind
        found = {d: float(v_measure_score(list(labels), a)) for d, a in clusters.items()}  # as cluster_v_measure
        by_set: dict[str, list[float]] = {name: [] for name in INSTRUCTION_SETS}
        kept: dict[str, list[list[int]]] = {name: [] for name in INSTRUCTION_SETS}
        scores: dict[str, float] = {}
        for (name, i, _inst), digest in zip(runs, digests, strict=True):
            scores[f"v_measure_{name}_{i}"] = found[digest]
            by_set[name].append(found[digest])
            kept[name].append(np.asarray(clusters[digest]).tolist())
        self.run_items = {"kind": "robustness", "labels": labels, "assignments": kept}
        for name, values in by_set.items():
            scores[f"{name}_mean_v_measure"] = float(np.mean(values))
            scores[f"{name}_min_v_measure"] = float(np.min(values))
            scores[f"{name}_max_v_measure"] = float(np.max(values))
        scores.update(robustness_gaps(by_set["correct"], by_set["implicit"], by_set["incorrect"]))
        scores["num_texts"] = n
        scores["num_clusters"] = len(set(labels))
        return scores


def _check_instruction_sets(owner: str, sets: dict[str, tuple[str, ...]]) -> None:
    """10 distinct instructions per set, no instruction in two sets: a typo here would skew every gap."""
    if tuple(sets) != INSTRUCTION_SETS:
        raise TypeError(f"{owner}.instructions must have the sets {INSTRUCTION_SETS} in that order, got {tuple(sets)}")
    everything = [inst for name in INSTRUCTION_SETS for inst in sets[name]]
    for name in INSTRUCTION_SETS:
        if len(sets[name]) != INSTRUCTIONS_PER_SET:
            raise TypeError(f"{owner}.instructions['{name}'] has {len(sets[name])} instructions, expected 10")
    if len(set(everything)) != len(everything):
        raise TypeError(f"{owner}.instructions repeat an instruction within or across sets")
