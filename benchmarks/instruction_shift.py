"""The instruction shift's extra cost: a demo run with `--shift-sample N` beside the same run without it.

    python benchmarks/instruction_shift.py [--sample 256] [-- BENCH RUN ARGS ...]

    # the demo (120-192 texts a task: a sample of 256 is every text, so the share is large by construction)
    python benchmarks/instruction_shift.py
    # a task of realistic size: GSTransform's AG News clustering (7,600 texts, one instruction)
    python -m bench build-data gst-agnews --source-dir ../shared/data/raw --out scratch/shift-data
    python benchmarks/instruction_shift.py -- --tasks GSTAGNews --data-dir scratch/shift-data

Two fresh processes, each with its own fresh embedding cache and output folder (temporary), on the demo suite
(or what the arguments after `--` select; they go to both runs as they are):
`bench run` without the flag, then `bench run --shift-sample N`. From each run's records (the `encode` block the
harness writes for every task) it prints the texts encoded, and from the OS the CPU seconds (user + system) of
each process; then the shift's extra encodes and CPU as a share of the run without it. Issue 44's goal: at most
10% extra. Both runs are in one invocation, so the ratio compares like with like on a loaded machine.

The shift encodes only each sampled text without its instruction: the instructed vectors are the ones the task
just used (memo hits), so the extra is at most N blind encodes per task, fewer where a blind input is a text the
task already embedded without an instruction.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(args: list[str], env: dict[str, str]) -> float:
    """CPU seconds of `python -m bench run ARGS` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "bench", "run", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        sys.exit(f"bench run {' '.join(args)} failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def records(out: Path) -> dict[str, dict]:
    """Each task's run record under `out`, by task name."""
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(out.glob("**/run_records/*.json"))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=256, help="the texts sampled per task (default 256)")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    args, passed = parser.parse_args(argv[:cut]), argv[cut + 1 :]  # after `--`: `bench run`'s own arguments
    with tempfile.TemporaryDirectory() as tmp:
        base = {**os.environ, "HF_HUB_OFFLINE": "1"}
        runs = {}
        for label, extra in (("plain", []), ("shift", ["--shift-sample", str(args.sample)])):
            out, cache = Path(tmp) / label, Path(tmp) / f"{label}-cache"
            cpu = run([*passed, "--output-dir", str(out), "--cache-dir", str(cache), "-q", *extra], base)
            runs[label] = (cpu, records(out))
    (plain_cpu, plain), (shift_cpu, shifted) = runs["plain"], runs["shift"]
    print(f"{'task':<28} {'encoded':>8} {'+shift':>7} {'share':>7} {'shift (mean cos. dist.)':>24}")
    for task, record in shifted.items():
        base_n = plain[task]["encode"]["texts_encoded"]
        extra_n = record["encode"]["texts_encoded"] - base_n
        shift = record.get("instruction_shift", {})
        measured = shift.get("mean_cosine_distance")
        shown = f"{measured:.4f} on {shift.get('sample')}" if measured is not None else shift.get("note", "-")
        print(f"{task:<28} {base_n:>8} {extra_n:>7} {extra_n / base_n:>7.1%} {shown:>24}")
    total = sum(r["encode"]["texts_encoded"] for r in plain.values())
    total_extra = sum(r["encode"]["texts_encoded"] for r in shifted.values()) - total
    print(f"{'all tasks':<28} {total:>8} {total_extra:>7} {total_extra / total:>7.1%}")
    print(f"CPU s: {plain_cpu:.1f} without, {shift_cpu:.1f} with --shift-sample {args.sample}: ")
    print(f"extra CPU share {shift_cpu / plain_cpu - 1:.1%} (goal: at most 10%)")


if __name__ == "__main__":
    main()
