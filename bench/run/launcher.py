"""How this process was launched: the one-line warning when `accelerate launch` started a single process
where more were asked for (`bench run` logs it before it imports anything heavy).

Imports only the standard library, so the command can call it first."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

# Set in the process `accelerate launch` starts, whichever launcher (accelerate/utils/launch.py); its simple
# launcher, which runs ONE process, sets no WORLD_SIZE (a multi-process launch does, through torchrun).
ACCELERATE_CHILD_VARS = ("ACCELERATE_DYNAMO_BACKEND", "ACCELERATE_MIXED_PRECISION", "ACCELERATE_USE_CPU")


def single_process_launch_warning(
    environ: Mapping[str, str] | None = None, launcher_argv: list[str] | None = None
) -> str | None:
    """One line when `accelerate launch` started this run as its only process: without `--multi_gpu` (or an
    `accelerate config` that says multi-GPU) accelerate runs `--num_processes 2` as one plain process, on CPU
    always (it spreads CPU processes over MPI only), and says nothing. Seen from here: accelerate's variables
    and no WORLD_SIZE above 1. N is the launcher's `--num_processes` when its command line can be read (no
    line when it asked for one process)."""
    env = os.environ if environ is None else environ
    if not any(name in env for name in ACCELERATE_CHILD_VARS) or env.get("WORLD_SIZE", "1").strip() not in (
        "",
        "0",
        "1",
    ):
        return None
    asked = num_processes(_launcher_argv() if launcher_argv is None else launcher_argv)
    if asked is not None and asked <= 1:
        return None
    n = "N" if asked is None else str(asked)
    return (
        f"warning: accelerate launch started one process; for {n} processes add --multi_gpu (GPUs) "
        f"or use torchrun --nproc_per_node {n}"
    )


def _launcher_argv() -> list[str]:
    """The parent process's command line (`accelerate launch ...`), where the system shows it (Linux)."""
    try:
        with open(f"/proc/{os.getppid()}/cmdline", "rb") as f:
            return [part.decode(errors="replace") for part in f.read().split(b"\0") if part]
    except OSError:
        return []


def num_processes(argv: list[str]) -> int | None:
    """`--num_processes N` (or `--num-processes=N`, accelerate takes both) from `accelerate launch`'s arguments."""
    for i, arg in enumerate(argv):
        match = re.fullmatch(r"--num[_-]processes(?:=(.*))?", arg)
        if match:
            value = match.group(1) if match.group(1) is not None else (argv[i + 1] if i + 1 < len(argv) else "")
            return int(value) if value.strip().isdigit() else None
    return None
