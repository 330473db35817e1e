"""Fixed costs: a fully reused rerun of the demo beside `bench results` on the same folder, and the embedding
cache's bytes on disk beside the raw float32 bytes of its vectors.

    python benchmarks/fixed_costs.py

One fresh cache root and output folder (temporary): `bench run` once (computes, keeps its plan), then
`bench run` again (every task reused) and `bench results OUT`, each a fresh process; the CPU seconds (user +
system) and peak RSS of each come from the OS (`resource.getrusage(RUSAGE_CHILDREN)`, per child). Then the
embedding cache the first run wrote: file bytes (with any `-wal`/`-shm` left beside it) / (vectors x dim x 4).
Targets (issue 41): a reused rerun at most 1 CPU s and 80 MB; the cache at most 1.1x raw, no `-wal` left.
"""

from __future__ import annotations

import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measured(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, peak RSS in MB) of `python -m bench ARGS` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "bench", *args], cwd=ROOT, env=env, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, after.ru_maxrss / 1024  # Linux: KB (the largest child so far: run the small ones last)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "INSTRUCT_BENCH_CACHE": str(Path(tmp) / "cache"), "HF_HUB_OFFLINE": "1"}
        out = str(Path(tmp) / "out")
        first_cpu, _ = measured(["run", "--output-dir", out, "-q"], env)
        # ru_maxrss of RUSAGE_CHILDREN is the largest child's: measure each small process from its own parent
        rerun = _isolated(["run", "--output-dir", out, "-q"], env)
        results = _isolated(["results", out], env)
        print(f"first run (computes): {first_cpu:.2f} CPU s")
        print(f"reused rerun:         {rerun[0]:.2f} CPU s, {rerun[1]:.0f} MB peak RSS")
        print(f"bench results:        {results[0]:.2f} CPU s, {results[1]:.0f} MB peak RSS")
        print(f"ratio rerun/results:  {rerun[0] / results[0]:.2f}x CPU, {rerun[1] / results[1]:.2f}x RSS")
        for path in sorted((Path(tmp) / "cache" / "embeddings").glob("*.sqlite")):
            files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
            size = sum(p.stat().st_size for p in files if p.exists())
            left = [p.name.rsplit("-", 1)[-1] for p in files[1:] if p.exists()]  # before this reader makes a -shm
            conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            n, raw = conn.execute("SELECT COUNT(*), SUM(LENGTH(vec)) FROM emb").fetchone()
            conn.close()
            print(
                f"cache {path.name}: {n} vectors, {size:,} bytes on disk / {raw:,} raw = {size / raw:.2f}x"
                f"{', left beside it: ' + ', '.join(left) if left else ', no -wal left'}"
            )


def _isolated(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """`measured` from a fresh parent, so that the peak RSS is this command's alone."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from fixed_costs import measured; import json, os; "
        "print(json.dumps(measured(sys.argv[2:], dict(os.environ))))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(Path(__file__).parent), *args],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    cpu, rss = proc.stdout.strip().splitlines()[-1].strip("[]").split(",")
    return float(cpu), float(rss)


if __name__ == "__main__":
    main()
