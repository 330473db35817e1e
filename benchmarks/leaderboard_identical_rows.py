"""What one submission of many rows with identical scores costs the leaderboard build.

    python benchmarks/leaderboard_identical_rows.py [--rows 1000] [--results DIR]

Builds one zip of `--rows` model rows whose scores are all the same (the demo suite's default-setting
results, copied under names org/copy-0000, ...; the demo suite is run once with the default MiniLM
unless `--results` names a `bench run` output folder), then runs `bench leaderboard build` on it in a
child process and prints: the zip's size, the build's wall seconds and peak RSS (the child's own
`resource.getrusage` maximum resident set size), which heavy modules the build imported, the site's size
on disk, the number of "same scores" flag lines the build printed, and the number of flags in
leaderboard.json. Identical rows must be grouped (one note per row naming a few others, one printed
line per group), so the flags grow as the rows, not as their square.

The children share a fresh cache (`$INSTRUCT_BENCH_CACHE` in the temporary folder). The first build,
under that cold cache, imports MTEB once to write the task catalogue and MTEB's model facts
(bench/results/task_catalog.py, model_catalog.py; `bench run` also writes the former); its figures are
the "cold caches" ones. The timed builds after it find both cached, as every build does until the task
files or MTEB change, and import neither MTEB nor the tasks.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

TASKS = ("DemoIntentEmotion", "DemoInstructSTS", "DemoNYTClustering")


def demo_results(folder: Path) -> Path:
    """The demo suite run once with the default model into `folder` (default setting only)."""
    from bench.run.runner import RunOptions, run

    run(RunOptions(suite="demo", output_dir=str(folder), cache_dir=str(folder / "cache"), show_progress_bar=False))
    return folder


def default_revision(results: Path) -> Path:
    """The revision folder holding the default setting's result files."""
    found = next(p for p in sorted(results.rglob(f"{TASKS[0]}.json")) if "run_records" not in p.parts)
    if "experiments" in found.parts:
        raise SystemExit(f"{results}: no default-setting results")
    return found.parent


def identical_zip(revision: Path, rows: int, out: Path) -> Path:
    """`rows` copies of the default setting's results, each under another model name, in one zip."""
    meta = (revision / "model_meta.json").read_bytes() if (revision / "model_meta.json").is_file() else None
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for i in range(rows):
            name = f"org/copy-{i:04d}"
            base = f"{name.replace('/', '__')}/{revision.name}"
            for task in TASKS:
                z.writestr(f"{base}/{task}.json", (revision / f"{task}.json").read_bytes())
                record = json.loads((revision / "run_records" / f"{task}.json").read_text(encoding="utf-8"))
                record["model"]["name"] = name
                z.writestr(f"{base}/run_records/{task}.json", json.dumps(record))
            if meta is not None:
                z.writestr(f"{base}/model_meta.json", meta)
    return out


HEAVY = ("mteb", "bench.tasks", "torch")  # what a build with warm caches must not import


def child(zip_path: str, site: str, report: str, trace: str) -> None:
    """Run the build in this process (the child), then write its output, memory and imports to `report`.

    With `trace` == "1", the harness's build modules are imported first and the build alone runs under
    tracemalloc: the peak of what the build allocates, without its imports.
    """
    import contextlib
    import importlib
    import io
    import tracemalloc

    from bench.cli.main import main

    if trace == "1":
        importlib.import_module("bench.leaderboard.site")
        tracemalloc.start()
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["leaderboard", "build", "--results", zip_path, "--out", site])
    traced = tracemalloc.get_traced_memory()[1] if tracemalloc.is_tracing() else None
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    Path(report).write_text(
        json.dumps(
            {
                "code": code,
                "out": buffer.getvalue(),
                "peak_kib": peak_kib,
                "traced": traced,
                "imported": [m for m in HEAVY if m in sys.modules],
            }
        )
    )


def _run_child(zip_path: Path, site: Path, *, trace: bool) -> tuple[float, dict]:
    report = site.parent / "child.json"
    start = time.perf_counter()
    argv = [sys.executable, __file__, "--child", str(zip_path), str(site), str(report), "1" if trace else "0"]
    subprocess.run(argv, check=True)
    return time.perf_counter() - start, json.loads(report.read_text())


def measure(zip_path: Path, site: Path, *, traced: bool = True) -> dict:
    """The build's figures: wall seconds, peak RSS and imports from one plain run, allocations from a
    traced one."""
    wall, found = _run_child(zip_path, site, trace=False)
    data = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    figures = {
        "wall_s": wall,
        "peak_rss_mb": found["peak_kib"] / 1024,
        "site_mb": sum(p.stat().st_size for p in site.rglob("*") if p.is_file()) / 2**20,
        "flag_lines": sum("same scores as" in line for line in found["out"].splitlines()),
        "json_flags": sum(len(m["flags"]) for m in data["models"]),
        "models": len(data["models"]),
        "code": found["code"],
        "imported": found["imported"],
    }
    if not traced:
        return figures
    _, run = _run_child(zip_path, site.parent / "site-traced", trace=True)
    return {**figures, "traced_mb": run["traced"] / 2**20}


def _imports(found: dict) -> str:
    return ", ".join(found["imported"]) or "none of " + ", ".join(HEAVY)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1000, help="model rows with identical scores")
    parser.add_argument("--results", type=Path, help="a `bench run --suite demo` output folder (else run it)")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory(prefix="lb-identical-") as tmp:
        os.environ["INSTRUCT_BENCH_CACHE"] = str(Path(tmp) / "cache")  # cold, then warmed by the first build
        results = args.results or demo_results(Path(tmp) / "demo")
        revision = default_revision(results)
        packed = identical_zip(revision, args.rows, Path(tmp) / "identical.zip")
        zip_mb = packed.stat().st_size / 2**20
        (Path(tmp) / "cold").mkdir()
        cold = measure(packed, Path(tmp) / "cold" / "site", traced=False)
        found = measure(packed, Path(tmp) / "site")
        (Path(tmp) / "one").mkdir()
        one = measure(identical_zip(revision, 1, Path(tmp) / "one" / "one.zip"), Path(tmp) / "one" / "site")
    print(f"rows with identical scores  {args.rows:,} ({found['models']:,} model rows built, exit {found['code']})")
    print(f"submission zip              {zip_mb:.1f} MB")
    print(
        f"build wall seconds          {found['wall_s']:.1f}  (one row: {one['wall_s']:.1f}; cold caches: {cold['wall_s']:.1f})"
    )
    print(
        f"build peak RSS              {found['peak_rss_mb']:.0f} MB  (one row: {one['peak_rss_mb']:.0f} MB, imports;"
        f" cold caches: {cold['peak_rss_mb']:.0f} MB)"
    )
    print(f"heavy modules imported      {_imports(found)}  (cold caches: {_imports(cold)})")
    print(f"build allocations, peak     {found['traced_mb']:.0f} MB  (tracemalloc, after imports)")
    print(f"site size                   {found['site_mb']:.1f} MB")
    print(f"'same scores' lines printed {found['flag_lines']:,}")
    print(f"flags in leaderboard.json   {found['json_flags']:,}")


if __name__ == "__main__":
    main()
