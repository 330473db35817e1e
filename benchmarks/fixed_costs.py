"""Fixed costs: a fully reused rerun of the demo beside `bench results` on the same folder, and the embedding
cache's bytes on disk beside the raw float32 bytes of its vectors.

    python benchmarks/fixed_costs.py

One fresh cache root and output folder (temporary): `bench run` once (computes, keeps its plan), then
`bench run` again (every task reused) and `bench results OUT`, each a fresh process; the CPU seconds (user +
system) and peak RSS of each come from the OS (`resource.getrusage(RUSAGE_CHILDREN)`, per child). Then the
embedding cache the first run wrote: file bytes (with any `-wal`/`-shm` left beside it) / (vectors x dim x 4).
Targets (issue 41): a reused rerun at most 1 CPU s and 80 MB; the cache at most 1.1x raw, no `-wal` left.

    python benchmarks/fixed_costs.py --cache-only

The cache's bytes / raw for 3,000 vectors of each of 384, 768, 1,024 and 4,096 dimensions, committed in groups of
256 (the encoder's group: 8 batches of 32) and closed, with the seconds to commit them all and to read them all back
(one `get_many`) in this process.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
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
    if "--cache-only" not in sys.argv:
        demo()
    cache_sizes()


def demo() -> None:
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
            from bench.adapters.cache import cache_files  # here: `_isolated`'s parent imports this module

            (info,) = cache_files(path.parent)
            n, raw = info.entries, info.entries * (info.dim or 0) * 4
            print(
                f"cache {path.name}: {n} vectors, {size:,} bytes on disk / {raw:,} raw = {size / raw:.2f}x"
                f"{', left beside it: ' + ', '.join(left) if left else ', no -wal left'}"
            )


def cache_sizes(n: int = 3000, group: int = 256) -> None:
    """Bytes on disk / raw float32 bytes, commit and read seconds, per dimension."""
    import numpy as np

    sys.path.insert(0, str(ROOT))
    from bench.adapters.cache import EmbeddingCache

    for dim in (384, 768, 1024, 4096):
        vectors = np.random.default_rng(dim).standard_normal((n, dim)).astype(np.float32)
        keys = [f"{i:040x}" for i in np.random.default_rng(1).integers(0, 2**62, n)]  # hex keys, random order
        with tempfile.TemporaryDirectory() as tmp:
            cache = EmbeddingCache(Path(tmp), {"model": f"bench/{dim}"})
            tick = time.perf_counter()
            for start in range(0, n, group):
                cache.put_many(keys[start : start + group], vectors[start : start + group])
            put = time.perf_counter() - tick
            cache.close()
            files = [cache.path, Path(f"{cache.path}-wal"), Path(f"{cache.path}-shm")]
            size = sum(p.stat().st_size for p in files if p.exists())
            again = EmbeddingCache(Path(tmp), {"model": f"bench/{dim}"})
            tick = time.perf_counter()
            found = again.get_many(keys)
            get = time.perf_counter() - tick
            again.close()
            assert len(found) == n
            print(
                f"cache {n} x {dim}: {size:,} bytes / {vectors.nbytes:,} raw = {size / vectors.nbytes:.3f}x; "
                f"commit {put:.2f} s, read {get:.2f} s"
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
