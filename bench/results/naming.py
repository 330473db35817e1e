"""What a result is called in a table: its model, revision and experiment, wherever its folder is.

`result_name` reads the run record, else MTEB's `model_meta.json` beside the result, else MTEB's
folder layout; `readable_experiment` writes a setting as the Experiment column shows it (short on screen, whole
in CSV and LaTeX's row legend). Both `bench results`' comparison table (bench/results/comparison.py) and
its instruction-variant tables (bench/results/variant_tables.py) name rows this way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bench.core.bounded import printable
from bench.core.errors import DataError
from bench.core.json_types import JSONObject, object_at
from bench.core.run_record import RecordView
from bench.results.store import load_result_json

EXPERIMENTS = "experiments"  # MTEB's folder of experiment results under a model revision (mteb.cache)
SHORT_REVISION = 12  # revision characters shown unless --full-revisions
_VALUE_WIDTH = 20  # an experiment setting's value in the Experiment column


@dataclass(frozen=True)
class ResultName:
    """How a result is named in a table: its row's key (model, revision, experiment as `key=value` text) and
    its Experiment cell, short for the screen and whole (CSV, LaTeX's row legend)."""

    model: str
    revision: str
    experiment: str
    shown: str  # `readable_experiment`
    whole: str  # `readable_experiment(..., whole=True)`

    @property
    def key(self) -> tuple[str, str, str]:
        return self.model, self.revision, self.experiment


def result_name(path: Path, record: RecordView | None) -> ResultName:
    """The name of a TaskResult file, wherever the folder given to `bench results` is, reading its
    `model_meta.json` at most once (a table names every result).

    From the run record when there is one; else from `model_meta.json` beside the file (what
    `mteb.evaluate(..., cache=ResultCache(DIR))` writes); else from MTEB's layout
    `<org>__<model>/<revision>/[experiments/<name>/]<Task>.json`, read upwards from the file, so the
    folder passed may be DIR, DIR/results or a model's folder.
    """
    if record:
        m = object_at(record["model"])  # store.record_problem: name and revision are texts
        setting, settings = object_at(m.get("experiment")), object_at(m.get("settings"))
        return ResultName(
            str(m["name"]),
            str(m["revision"]),
            _experiment_text(setting),
            readable_experiment(setting, settings),
            readable_experiment(setting, settings, whole=True),
        )
    folder = path.parent
    experiment = "default"
    if folder.parent.name == EXPERIMENTS:
        experiment, folder = folder.name, folder.parent.parent
    meta = _model_meta(path.parent / "model_meta.json")
    if not meta.get("name"):
        return ResultName(folder.parent.name.replace("__", "/"), folder.name, experiment, experiment, experiment)
    name, revision = str(meta["name"]), str(meta.get("revision") or folder.name)
    kwargs = meta.get("experiment_kwargs")
    if kwargs and isinstance(kwargs, dict):
        text = _experiment_text(kwargs)
        return ResultName(name, revision, text, readable_experiment(kwargs), readable_experiment(kwargs, whole=True))
    return ResultName(name, revision, experiment, experiment, experiment)


def model_of(path: Path, record: RecordView | None) -> tuple[str, str, str]:
    """(model, revision, experiment) of a TaskResult file (`result_name`)."""
    return result_name(path, record).key


def _experiment_text(experiment: Mapping[str, object] | None) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted((experiment or {}).items())) or "default"


_DIGEST = re.compile(r"-[0-9a-f]{8}$")  # what bench.adapters.options.experiment_label / fit_experiment append


def readable_experiment(
    experiment: Mapping[str, object] | None, settings: Mapping[str, object] | None = None, *, whole: bool = False
) -> str:
    """The Experiment column: `key=value` per experiment key, where a hash-bearing label (`query-3fa2c1d0`,
    a custom template; `sentenc-1f2e3d4c`, one cut to fit MTEB's folder name) shows the run's setting
    instead when that is short (`template=Q: {text}`), else the label without its hash; each value at most
    _VALUE_WIDTH characters. "default" for a family's default setting.

    `whole` (CSV, LaTeX's row legend): every value in full, a hash-bearing label as the run's setting
    whatever its length (control characters written as escapes, `\n`), so two custom settings never
    print alike."""
    parts = []
    for key, label in sorted((experiment or {}).items()):
        shown = str(label)
        if isinstance(label, str) and _DIGEST.search(label):
            value = (settings or {}).get(key)
            if isinstance(value, str) and value and whole:
                shown = printable(value, limit=10 * len(value))  # whole: an escape is at most 10 characters
            elif isinstance(value, str) and 0 < len(value) <= _VALUE_WIDTH and value.isprintable():
                shown = value
            else:
                shown = _DIGEST.sub("", label) or "custom"
        cut = not whole and len(shown) > _VALUE_WIDTH
        parts.append(f"{key}={shown[: _VALUE_WIDTH - 1] + '…' if cut else shown}")
    return ", ".join(parts) or "default"


def _model_meta(path: Path) -> JSONObject:
    """MTEB's `model_meta.json`, or {} when it is missing or damaged (the folder names then say)."""
    try:
        data = load_result_json(path)
    except (FileNotFoundError, DataError):
        return {}
    return data if isinstance(data, dict) else {}
