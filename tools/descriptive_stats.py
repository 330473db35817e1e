"""Regenerate the descriptive statistics the package ships (bench/tasks/descriptive_stats/<type>/<task>.json).

    python tools/descriptive_stats.py                     # the demo tasks (their data ships in the package)
    python tools/descriptive_stats.py --data-dir DIR -t STSBenchmark-SentEval SICK-R-SentEval

Each file is what MTEB's own `AbsTask.calculate_descriptive_statistics(overwrite_results=True)` computes on the
task's local data and writes to `metadata.descriptive_stat_path`, which for the harness's tasks is inside this
package (bench/tasks/task_statistics.py). A task whose local data is not provably its pinned data is refused:
statistics of a stand-in would describe the wrong set. The SentEval splits are built first with
`bench build-data sts-senteval --out DIR`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.core.errors import BenchError
from bench.tasks import TASKS
from bench.tasks.task_statistics import provably_pinned


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "-t", "--tasks", nargs="+", default=[n for n, c in TASKS.items() if getattr(c, "packaged", False)]
    )
    parser.add_argument("--data-dir", type=Path, help="folder of the local data (one sub-folder per task)")
    args = parser.parse_args(argv)
    for name in args.tasks:
        cls = TASKS.get(name)
        if cls is None:
            print(f"error: {name!r} is not a harness task; see `bench list tasks`.", file=sys.stderr)
            return 2
        if not provably_pinned(cls):
            print(
                f"error: {name}'s local data is not provably its pinned data; its statistics are not shipped "
                "(docs/guides/mteb.md says why).",
                file=sys.stderr,
            )
            return 2
        try:
            task = cls(data_dir=args.data_dir)
            task.calculate_descriptive_statistics(overwrite_results=True)
        except BenchError as exc:  # no local data, a malformed file: the harness's own one-line message
            print(f"error: {exc}", file=sys.stderr)
            return 2
        samples = sum((task.metadata.n_samples or {}).values())  # read back from the file MTEB wrote
        print(f"{name}: {task.metadata.descriptive_stat_path} ({samples:,} samples)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
