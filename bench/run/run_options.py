"""What `bench run` takes, in one dataclass: its own module so that the modules the runner calls (`reuse.py`)
can name it without importing the runner back."""

from __future__ import annotations

from dataclasses import dataclass, field

from bench.core.variants import VariantFile
from bench.run.instruction_style import InstructionStyle


@dataclass
class RunOptions:
    """Everything `bench run` takes; the CLI only fills this in."""

    model: str = "all-MiniLM-L6-v2"
    # MTEB's name and revision to file a local model under (`--model-name`, `--model-revision`).
    model_name: str | None = None
    model_revision: str | None = None
    tasks: list[str] | None = None
    suite: str | None = None
    # Family constructor options (`--model-args`, `--model-config`, family flags); see bench.adapters.registry.
    model_options: dict[str, object] = field(default_factory=dict)
    # Shorthands for common model options; None = the family's default. They override model_options.
    template: str | None = None
    batch_size: int | None = None
    device: str | None = None
    dtype: str | None = None
    data_dir: str | None = None
    output_dir: str = "results"
    cache_dir: str | None = None
    use_cache: bool = True
    limit: int | None = None
    overwrite: bool = False
    seed: int = 42
    show_progress_bar: bool | None = None
    # Instruction style for tasks that offer several (GSTransform): auto|question|command|gstransform.
    instruction_style: InstructionStyle | None = None
    # A variants file (or built-in name): each of its tasks is also run under each of its instructions,
    # each variant an MTEB experiment beside the default run (bench/core/variants.py, bench/tasks/variants.py).
    instruction_variants: str | VariantFile | None = None  # a path or built-in name, or one built in code
    # Texts per task whose instruction shift is measured (`--shift-sample`, bench/run/shift.py); 0: off.
    shift_sample: int = 0
    # Write each task's per-sample predictions beside its result (`--save-predictions`, bench/run/predictions.py).
    save_predictions: bool = False
