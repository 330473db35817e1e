"""`bench run --save-predictions` (lm-eval's `--log_samples`): each task's per-sample outcomes, in MTEB's file.

Where: `<result folder>/predictions/<Task>_predictions.json` (bench/results/store.py `predictions_folder`), the
file name MTEB's `AbsTask.prediction_file_name` gives, one folder below the result so that neither MTEB's
loader nor `bench results` reads it as a result. The run record names the file (`predictions`, relative to
the result's folder).

MTEB's tasks write their own: the runner hands `mteb.evaluate` the folder (`prediction_folder`) and each task
type's `_evaluate_subset` saves its outputs (`AbsTask._save_task_predictions`), so the file is MTEB's, read back
by MTEB's own scoring (e.g. `AbsTaskSTS._calculate_scores(file[subset][split], gold)`). MTEB's layout:

    {"mteb_model_meta": {"model_name": NAME, "revision": REV}, "<hf_subset>": {"<split>": PAYLOAD}}

with PAYLOAD per task type (STS: `cosine_scores`, `manhattan_distances`, `euclidean_distances`,
`similarity_scores`, one per pair; retrieval: query id -> document id -> score; classification: the predicted
labels of each experiment; clustering: the assignments per level; ...). The gold stays in the task's data.

The harness's own tasks (bench/tasks/abstasks: instruction triplets, instruction-conditioned and multi-aspect
STS, multi-aspect clustering, instruction robustness) score what MTEB's payloads cannot hold (per criterion
or aspect, per instruction set), so this module writes them in the same layout with the harness's PAYLOAD:
the per-item outcomes the run record keeps (`items`, bench/core/run_record.py `Items`), in full even where
the record leaves them out for size (`bounded_items`), and carrying their gold:

* ``{"kind": "triplet", "groups": {CRITERION: {"success": [0|1, ...]}}}``: main score = harmonic mean over
  the criteria of each one's mean success;
* ``{"kind": "sts", "groups": {ASPECT: {"similarity": [cosine, ...], "gold": [normalised score, ...]}}}``:
  main score = Spearman's rho of gold and similarity, one group as is, several by their mean;
* ``{"kind": "clustering", "groups": {ASPECT: {"labels": [...], "assignments": [cluster, ...]}}}``: main
  score = harmonic mean over the aspects of the V-measure of labels and assignments;
* ``{"kind": "robustness", "labels": [...], "assignments": {SET: [[cluster, ...] per instruction]}}``: main
  score = mean V-measure under the `correct` set's instructions minus under the `incorrect` set's.

`bench.core.bootstrap.score_items(PAYLOAD)` computes each main score from the file alone.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from bench.core.fileio import atomic_write_text, ensure_dir
from bench.core.run_record import Items
from bench.results.store import PREDICTIONS

if TYPE_CHECKING:
    from mteb.models import ModelMeta

PREDICTION_FILES = {"what": "predictions", "option": "--output-dir"}  # how a storage error names them


def prediction_file_name(task_name: str) -> str:
    """MTEB's name for a task's prediction file (`AbsTask.prediction_file_name`)."""
    return f"{task_name}_predictions.json"


def write_item_predictions(
    folder: Path, task_name: str, meta: ModelMeta, items: Items, *, hf_subset: str, hf_split: str
) -> Path:
    """A harness task's per-item outcomes as `<folder>/<Task>_predictions.json`, in MTEB's layout; its path."""
    document = {
        "mteb_model_meta": {"model_name": meta.name, "revision": meta.revision},
        hf_subset: {hf_split: dict(items)},
    }
    path = folder / prediction_file_name(task_name)
    atomic_write_text(path, json.dumps(document, ensure_ascii=False), **PREDICTION_FILES)  # compact, as MTEB's
    return path


def scratch_folder(folder: Path, task_name: str) -> Path:
    """An empty hidden folder beside `folder` for MTEB to write one task's predictions into (its `prediction_folder`).

    Why not `folder` itself: MTEB merges into a file already there (a subset an earlier run wrote would stay), and a
    failed rerun must leave the earlier file as it was. Hidden, so nothing reads a leftover one as a result."""
    scratch = folder.parent / f".{PREDICTIONS}-{task_name}"
    shutil.rmtree(scratch, ignore_errors=True)
    return scratch


def keep_predictions(
    scratch: Path, folder: Path, task_name: str, meta: ModelMeta, items: Items | None, *, hf_subset: str, hf_split: str
) -> str | None:
    """Put the task's prediction file in `folder` (MTEB's from `scratch`, or the harness task's `items`); its path
    relative to the result's folder (the run record's `predictions`), or None where the task type saves none."""
    if items is not None:
        write_item_predictions(scratch, task_name, meta, items, hf_subset=hf_subset, hf_split=hf_split)
    made = scratch / prediction_file_name(task_name)
    try:
        if not made.is_file():
            return None
        ensure_dir(folder, **PREDICTION_FILES)
        os.replace(made, folder / made.name)
        return f"{PREDICTIONS}/{made.name}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


__all__ = [
    "PREDICTION_FILES",
    "keep_predictions",
    "prediction_file_name",
    "scratch_folder",
    "write_item_predictions",
]
