"""Result files: MTEB's TaskResult layout, written atomically, plus one run record per (model, task).

    OUTPUT/<org>__<model>/<revision>/[experiments/<name>/]<Task>.json        MTEB TaskResult
    OUTPUT/<org>__<model>/<revision>/[experiments/<name>/]run_records/<Task>.json

MTEB's own loaders (`mteb.ResultCache(OUTPUT).load_results()`) read the TaskResult files; the run
record says how the number was made (versions, revisions, instructions and their hashes, seed, encode
counts and time) and is what `bench run` checks before reusing a finished task.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.fileio import atomic_write, atomic_write_json, ensure_dir

if TYPE_CHECKING:
    from mteb import ResultCache, TaskResult
    from mteb.models import ModelMeta

logger = logging.getLogger(__name__)

RUN_RECORDS = "run_records"
RESULTS = {"what": "results", "option": "--output-dir"}  # how a storage error names what `bench run` writes


def __getattr__(name: str) -> Any:
    # `AtomicResultCache` subclasses MTEB's ResultCache, so it is defined on first use: reading result
    # files (`find_results`, `bench results`) does not import MTEB.
    if name == "AtomicResultCache":
        cls = _atomic_result_cache()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _atomic_result_cache() -> type:
    from mteb import ResultCache, TaskResult
    from mteb.models import ModelMeta

    class AtomicResultCache(ResultCache):
        """MTEB's ResultCache with atomic writes, and a damaged result file treated as missing."""

        def __init__(self, cache_path: str | Path | None = None) -> None:
            # MTEB creates the folder itself: a file in the way or a read-only parent becomes one error line.
            if cache_path is not None:
                ensure_dir(Path(cache_path), **RESULTS)
            super().__init__(cache_path)

        def save_to_cache(
            self,
            task_result: TaskResult,
            model_name: str | ModelMeta,
            model_revision: str | None = None,
            *,
            encode_kwargs: Any = None,
        ) -> None:
            path = self.get_task_result_path(task_result.task_name, model_name, model_revision)
            atomic_write(path, task_result.to_disk, **RESULTS)
            if isinstance(model_name, ModelMeta):
                atomic_write_json(path.parent / "model_meta.json", model_name.to_dict(), **RESULTS)

        def load_task_result(self, task_name: str, model_name: str | ModelMeta, *args: Any, **kwargs: Any) -> TaskResult | None:
            try:
                return super().load_task_result(task_name, model_name, *args, **kwargs)
            except (json.JSONDecodeError, ValueError) as e:
                logger.warning("Result for %s is unreadable (%s); it will be recomputed.", task_name, e)
                return None

    AtomicResultCache.__qualname__ = "AtomicResultCache"
    return AtomicResultCache


def result_path(cache: ResultCache, meta: ModelMeta, task_name: str) -> Path:
    return cache.get_task_result_path(task_name, meta)


def run_record_path(cache: ResultCache, meta: ModelMeta, task_name: str) -> Path:
    return result_path(cache, meta, task_name).parent / RUN_RECORDS / f"{task_name}.json"


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON file's content, or None when it is missing or unreadable (to be recomputed)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (json.JSONDecodeError, UnicodeDecodeError):
        logger.warning("%s is unreadable; it will be recomputed.", path)
        return None


def main_score(result: dict[str, Any], split: str = "test") -> float:
    """Mean main score over a TaskResult's subsets (one subset for the harness's tasks); a task MTEB
    evaluates on another split (dev, validation) gives that split's."""
    entries = result["scores"].get(split) or next(iter(result["scores"].values()))
    return sum(e["main_score"] for e in entries) / len(entries)


def find_results(root: Path) -> list[tuple[Path, dict[str, Any], dict[str, Any] | None]]:
    """(path, TaskResult JSON, run record or None) for every result under `root`."""
    found = []
    for path in sorted(Path(root).rglob("*.json")):
        if path.name == "model_meta.json" or path.parent.name == RUN_RECORDS or path.name.startswith("."):
            continue
        data = read_json(path)
        if not data or "task_name" not in data or "scores" not in data:
            continue
        record = read_json(path.parent / RUN_RECORDS / path.name)
        found.append((path, data, record))
    return found
