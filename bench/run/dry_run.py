"""`bench run --dry-run` (and `bench reproduce --dry-run`'s count per row): what each task would send to the
model, and what a real run would meet that a count does not show.

`dry_run` runs each task through `mteb.evaluate` with an encoder stand-in that renders inputs exactly as the
model would, looks them up in the embedding cache (read only), counts the misses and returns placeholder
vectors, so it loads no weights, calls no model and writes nothing. Besides the counts it notes, per task:
- that its data is not here (every such task, not the first one only: a task is built, and its data loaded,
  one at a time);
- that its data is a stand-in (a builder's label-derived proxy, `manifest.json` `"proxy": true`), whose
  numbers are not comparable with a paper's;
- that the model gets a prompt per text (the rows carry their own instruction: each text is rendered with
  its own, not one per task);
- with `--shift-sample N`, the instruction-blind encodes the shift measurement adds (`bench/run/shift.py`),
  counted the same way, so the estimate is what the run then records.
`dry_run_table` prints it: the table, then one line per fact; `gated_weights` adds the model's gated hub
repositories.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

from bench.core.errors import DataError, MissingDataError
from bench.run.gated_weights import gated_line, gated_weights
from bench.run.run_options import RunOptions
from bench.run.runner import build_model, build_tasks, given_model_options, load_run_variants, task_jobs
from bench.run.usage import total_usage

if TYPE_CHECKING:
    import numpy as np

    from bench.core.variants import VariantFile
    from bench.run.protocols import RunModel, RunTask


@dataclass
class DryRunEstimate:
    """What one task would send to the model: unique inputs the cache lacks, plus the family's estimate, and
    what the run would meet (its data missing or a stand-in, a prompt per text, the shift's extra encodes)."""

    task: str
    texts: int
    estimate: dict[str, Any] = field(default_factory=dict)  # the family's own ledger
    unavailable: str | None = None  # why the task's data is not here (nothing counted)
    stand_in: str | None = None  # the stand-in note of the task's data
    per_text: str | None = None  # the data column each row's own instruction is read from: a prompt per text
    shift_texts: int = 0  # of `texts`: the instruction-blind renderings `--shift-sample` encodes

    @property
    def counted(self) -> bool:
        return self.unavailable is None


def dry_run(options: RunOptions) -> list[DryRunEstimate]:
    """Count, per task, the inputs a real run would encode; load no weights, call no model, write nothing.

    An input counted for an earlier task is not counted again (the real run would have cached it). MTEB's
    wrapper renders the inputs of an `mteb` model around a weightless SentenceTransformer
    (`bench.adapters.mteb_zoo.weightless`): no weight file is opened and nothing is downloaded. An API family
    estimates its tokens and cost (`estimate_usage`); any other model counts tokens with its tokenizer when
    that is local, else estimates them from characters (`dry_run_tokens`), and the estimate says which. A task
    whose data is not here is an estimate with `unavailable` set, and the others are still counted.
    """
    import mteb

    from bench.adapters.mteb_zoo import dry_run_tokens, weightless
    from bench.run import shift
    from bench.tasks.data import stand_in_of

    variants = load_run_variants(options)
    tasks, missing_data = _tasks_here(options, variants)
    jobs = task_jobs(tasks, variants) if tasks else []
    model = build_model(options)
    seen: set[str] = set()
    estimates = [DryRunEstimate(name, 0, unavailable=why) for name, why in missing_data.items()]
    failed: set[str] = set()
    for task, variant in jobs:
        name = task.metadata.name
        shown = f"{name} [{variant.label}]" if variant is not None else name
        if name in failed:  # a variant of a task whose data did not load
            continue
        missing: list[object] = []
        try:
            with (
                weightless(model),
                _counting_encoder(model, seen, missing),
                shift.collecting(model, options.shift_sample) as instructed,
            ):
                mteb.evaluate(
                    model,
                    task,
                    cache=None,
                    encode_kwargs={"batch_size": model.batch_size},
                    show_progress_bar=False,
                    co2_tracker=False,
                )
                before_shift = len(missing)
                shift.measure(model, task.metadata, instructed, options.shift_sample)  # its blind encodes: misses
        except DataError as e:  # the hub copy cannot be loaded here (offline, no datasets cache)
            failed.add(name)
            estimates.append(DryRunEstimate(shown, 0, unavailable=" ".join(str(e).split())))
            continue
        estimator = getattr(model, "estimate_usage", None)
        estimate = dict(estimator(missing)) if callable(estimator) else dry_run_tokens(model, missing)
        stand_in = stand_in_of(getattr(task, "local_files", None))
        estimates.append(
            DryRunEstimate(
                shown,
                len(missing),
                estimate,
                stand_in=stand_in["stand_in_note"] if stand_in["stand_in"] else None,
                per_text=per_row_column(task),
                shift_texts=len(missing) - before_shift,
            )
        )
    return estimates


def per_row_column(task: RunTask) -> str | None:
    """The column a task's rows carry their own instruction in, as its instruction set declares (`per_row`)."""
    declared = task.instruction_set()
    if not declared.get("per_row"):
        return None
    return str(declared.get("column") or "instruction")


def _tasks_here(options: RunOptions, variants: VariantFile | None) -> tuple[list[RunTask], dict[str, str]]:
    """The run's tasks whose data is here, built one at a time, and {task: why its data is not} for the others
    (a real run stops at the first of a named list, and skips them in a suite)."""
    from bench.tasks import task_names

    if variants is not None and not options.tasks and not options.suite:  # the file's tasks
        options = replace(options, tasks=list(variants.variants))
    tasks: list[RunTask] = []
    missing: dict[str, str] = {}
    for name in task_names(tasks=options.tasks, suite=options.suite):
        try:
            tasks += build_tasks(replace(options, tasks=[name], suite=None), variants)
        except MissingDataError as e:
            missing[name] = " ".join(str(e).split())
    return tasks, missing


@contextmanager
def _counting_encoder(model: RunModel, seen: set[str], missing: list[object]) -> Iterator[None]:
    """Within the block, `model.encode_inputs` counts cache misses into `missing` instead of encoding."""
    import numpy as np

    from bench.adapters.cache import input_key

    cache = model.cache

    def encode_inputs(model_inputs: Sequence[object], **_: object) -> np.ndarray:
        keys = [input_key(x) for x in model_inputs]
        unique = {k: x for k, x in zip(keys, model_inputs, strict=True) if k not in seen}
        cached = cache.get_many(list(unique)) if cache is not None and unique else {}
        for k, x in unique.items():
            if k not in cached:
                missing.append(x)
        seen.update(unique)
        return np.stack([_placeholder_vector(k) for k in keys])

    model.encode_inputs = encode_inputs  # type: ignore[method-assign]  # undone below
    try:
        yield
    finally:
        del model.encode_inputs


def _placeholder_vector(key: str, dim: int = 32) -> np.ndarray:
    import numpy as np

    v = np.random.default_rng(int(key[:15], 16)).standard_normal(dim).astype(np.float32)
    return v / max(float(np.linalg.norm(v)), math.ulp(1.0))


# ---------------------------------------------------------------------------------------- what it prints
def dry_run_table(estimates: Sequence[DryRunEstimate], options: RunOptions | None = None) -> str:
    """Per task: texts the cache lacks, and the family's token/request/cost estimate; then one line per fact
    (`dry_run_facts`, and with `options` the model's gated weights and the shift's extra encodes)."""
    from tabulate import tabulate

    counted = [e for e in estimates if e.counted]
    rows = [
        [
            e.task,
            _count(e.texts),
            _count(e.estimate.get("tokens")),
            _count(e.estimate.get("requests")),
            _usd(e.estimate) if "usd" in e.estimate else "",  # a priced (API) family only
        ]
        for e in counted
    ]
    total = total_usage([{"texts": e.texts, **e.estimate} for e in counted])
    rows.append(
        [
            "Total",
            _count(total.get("texts", 0)),
            _count(total.get("tokens")),
            _count(total.get("requests")),
            _usd(total) if "usd" in total else "",
        ]
    )
    table = tabulate(
        rows,
        headers=["Task", "Texts to encode", "Est. tokens", "Requests", "Est. USD"],
        tablefmt="github",
        disable_numparse=True,
    )
    lines = [f"Dry run of {len(counted)} task(s): no model was called, nothing was written.", table]
    if total.get("tokens_method"):
        lines.append(f"Tokens counted with {total['tokens_method']}.")
    if "usd" in total and total["usd"] is None:
        lines.append("Cost unknown: no price for this model; give --price USD_PER_1M_TOKENS.")
    lines += dry_run_facts(estimates)
    if options is not None:
        lines += shift_lines(estimates, options.shift_sample)
        lines += gated_lines(options)
    return "\n".join(lines)


def dry_run_facts(estimates: Sequence[DryRunEstimate]) -> list[str]:
    """One line per fact a count does not show: every task whose data is not here, every stand-in, every task
    whose texts carry their own instruction (each line once, in the tasks' order)."""
    lines = [f"Data not local: {e.unavailable}" for e in estimates if e.unavailable is not None]
    lines += [f"Stand-in data: {e.task}: {e.stand_in}" for e in estimates if e.stand_in]
    lines += [
        f"Prompt per text: {e.task}: each row carries its own instruction (its {e.per_text!r} column), so the "
        "model renders a prompt per text, not one per task."
        for e in estimates
        if e.per_text
    ]
    return list(dict.fromkeys(lines))


def shift_lines(estimates: Sequence[DryRunEstimate], shift_sample: int) -> list[str]:
    """With `--shift-sample N`: how many of the texts to encode are the shift measurement's blind renderings."""
    if shift_sample <= 0:
        return []
    extra = sum(e.shift_texts for e in estimates if e.counted)
    line = (
        f"Instruction shift (--shift-sample {shift_sample}): {extra:,} of the texts to encode are instruction-blind "
        "renderings, encoded only to measure it."
    )
    return [line]


def gated_lines(options: RunOptions) -> list[str]:
    """One line per gated hub repository the run's model would download (bench/run/gated_weights.py)."""
    return [gated_line(hub_id, gate) for hub_id, gate in gated_weights(options.model, given_model_options(options))]


def _count(value: object) -> str:
    """A count as every CLI table shows it (`format_count`: `1,106`); blank when unknown."""
    from bench.results.tables import format_count

    return "" if value is None or value == "" else format_count(value)


def _usd(usage: Mapping[str, object]) -> str:
    return "unknown" if usage.get("usd") is None else f"{cast(float, usage['usd']):.6f}"
