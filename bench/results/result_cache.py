"""MTEB's ResultCache, written atomically (`AtomicResultCache`): where `bench run` files its results.

Its own module because it subclasses MTEB's ResultCache, so importing it imports MTEB: reading result
files (bench/results/store.py: `find_results`, `bench results`) does not, and the run imports this
module only when it stores a result.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from collections.abc import Mapping
from functools import partial
from pathlib import Path

from mteb import ResultCache, TaskResult
from mteb.models import ModelMeta

from bench.core.errors import storage_error
from bench.core.fileio import atomic_write, ensure_dir
from bench.results.store import MODEL_META, RESULTS, RUN_SETTINGS, SCRATCH_PREFIX, refuse_undefined_main_score

logger = logging.getLogger(__name__)


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
        encode_kwargs: Mapping[str, object] | None = None,
    ) -> None:
        """MTEB's `ResultCache.save_to_cache`, atomically: the same files, byte for byte; a result whose
        main score is NaN or infinite is refused (`refuse_undefined_main_score`), never written.

        MTEB writes the TaskResult, model_meta.json (a ModelMeta given) and run_settings.jsonl
        (merged with the existing one) in place, so a crash can leave any of them half written.
        Here MTEB's own method writes them into a scratch cache inside this one, after the existing
        run_settings.jsonl is copied there for it to merge; each file then replaces its
        destination through `atomic_write` (a temporary file beside it, one rename: the one place
        where the harness writes files, and where a storage error becomes one line),
        model_meta.json and run_settings.jsonl first and the result last, so a result never
        appears without them.
        """
        refuse_undefined_main_score(task_result.task_name, task_result.scores)
        path = self.get_task_result_path(task_result.task_name, model_name, model_revision)
        if not isinstance(model_name, ModelMeta) and model_revision is None:
            model_revision = path.parent.name  # the revision MTEB resolved here, not the scratch cache's
        folder = ensure_dir(path.parent, **RESULTS)
        scratch: Path | None = None
        try:
            scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir=self.cache_path))
            stage = ResultCache(scratch)
            staged = stage.get_task_result_path(task_result.task_name, model_name, model_revision)
            if (folder / RUN_SETTINGS).is_file():  # MTEB merges what is there
                staged.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(folder / RUN_SETTINGS, staged.parent / RUN_SETTINGS)
            stage.save_to_cache(task_result, model_name, model_revision, encode_kwargs=encode_kwargs)
            for name in (MODEL_META, RUN_SETTINGS, path.name):
                if (staged.parent / name).is_file():
                    atomic_write(folder / name, partial(shutil.copyfile, staged.parent / name), **RESULTS)
        except OSError as e:
            mapped = storage_error(e, path, **RESULTS)
            if mapped is None:
                raise
            raise mapped from e
        finally:
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)

    def load_task_result(
        self,
        task_name: str,
        model_name: str | ModelMeta,
        model_revision: str | None = None,
        raise_if_not_found: bool = False,
        prioritize_remote: bool = False,
        experiment_name: str | None = None,
    ) -> TaskResult | None:
        """MTEB's `ResultCache.load_task_result` (its arguments, MTEB 2.26), with an unreadable file as missing."""
        try:
            return super().load_task_result(
                task_name,
                model_name,
                model_revision,
                raise_if_not_found=raise_if_not_found,
                prioritize_remote=prioritize_remote,
                experiment_name=experiment_name,
            )
        except (json.JSONDecodeError, ValueError) as e:
            logger.warning("Result for %s is unreadable (%s); it will be recomputed.", task_name, e)
            return None
