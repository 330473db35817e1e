"""How the harness scales: processes, its own overhead, cached reruns and memory (ratios from ONE run).

    python benchmarks/scaling.py [--quick] [--raw ../shared/data/raw] [--repo PATH] [--only a b c d]

Every measurement is a fresh `python -m bench run ...` subprocess with the default MiniLM
(all-MiniLM-L6-v2), offline, on a FewRelClustering corpus built from the raw files:

(a) wall time of 1 process vs `torchrun --nproc_per_node 2` on a CPU robustness set with
    `--template prefix` (30 x N real encodes), a fresh cache dir each; with more than one CUDA device,
    also 1 vs k processes for every k up to `torch.cuda.device_count()` (`--device cuda`). torchrun gives
    each rank one thread, so a one-thread single process is timed too.
(b) the harness's non-encode share on an instruction-blind robustness set (`--template none
    --no-cache`, so 30 x N pairs requested and N encoded): measured with cProfile in the child as
    cumtime(`_evaluate_subset`) minus the model's forward passes (`_encode_group`), the weight load
    (`ensure_loaded`) and k-means + V-measure (`cluster_v_measure`), divided by the forward passes.
    cProfile inflates Python-heavy code, so this overstates the harness's share; a second, unprofiled
    run times the same parts with perf_counter wrappers (forward passes = the run record's encode
    seconds) and is printed beside it.
(c) the demo suite cold (fresh output and cache dirs), then rerun with the same dirs (every task
    reused), then with a fresh output dir and the warm embedding cache (every vector a cache hit).
(d) peak RSS (ru_maxrss of the child) of a blind robustness run (`--template none --no-cache`) at
    two corpus sizes, to show whether memory grows with texts or with texts x instructions. FewRel
    has 4,480 texts: a larger corpus appends FewEvent's texts (labels prefixed, so clusters stay
    apart), and the output says so.

(e) accelerator utilisation, with the stand-in accelerator (bench/adapters/standin.py: a forward pass that
    sleeps like a GPU's, --tokens-per-s padded tokens a second per rank, and 4,096-d vectors), on
    FewRelClustering (4,480 texts x 30 instructions) and STSBenchmark (1,379 pairs), for 1, 2 and 4
    ranks (torchrun, gloo, one CPU thread each): per rank, the seconds its forward passes slept divided
    by the task's wall time (the run record's evaluation seconds). The stand-in measures its own busy
    time, so `--baseline-repo PATH` (a checkout of an earlier design; the stand-in file is copied in if
    it lacks it) is measured the same way, beside it. Scores are checked equal across rank counts.

`--repo PATH` runs the children in another checkout (e.g. one of main, for before/after figures);
the corpora are built with this checkout's builders.
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
ENV.pop("INSTRUCT_BENCH_DATA_DIR", None)

_RSS_CHILD = (
    "import resource, subprocess, sys; rc = subprocess.run(sys.argv[1:]).returncode; "
    "print('MAXRSS_KB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(rc)"
)


def sh(cmd: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> tuple[float, str]:
    """Wall seconds and stdout of a command that must succeed."""
    tick = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env={**ENV, **(env or {})}, capture_output=True, text=True)
    wall = time.perf_counter() - tick
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-3000:]}")
    return wall, proc.stdout


def bench_args(data: Path, out: Path, *extra: str) -> list[str]:
    return ["run", "-t", "FewRelClustering", "--data-dir", str(data), "--output-dir", str(out), "-q", *extra]


def run_record(out: Path, task: str = "FewRelClustering") -> dict:
    (path,) = out.rglob(f"run_records/{task}.json")
    return json.loads(path.read_text(encoding="utf-8"))


# ----------------------------------------------------------------------------------- corpora
def build_corpus(raw: Path, out_dir: Path, size: int) -> str:
    """A FewRelClustering folder of `size` texts under out_dir; returns what it holds, in words."""
    from bench.dataset_builders.clustering_sets import build_few_event, build_few_rel

    if size <= 4480:
        build_few_rel(source_dir=raw, out_dir=out_dir, seed=42, size=size)
        return f"FewRel {size}"
    with tempfile.TemporaryDirectory() as tmp:
        build_few_rel(source_dir=raw, out_dir=Path(tmp) / "rel", seed=42)
        build_few_event(source_dir=raw, out_dir=Path(tmp) / "event", seed=42)
        rel = _rows(Path(tmp) / "rel" / "FewRelClustering" / "test.jsonl", "rel")
        event = _rows(Path(tmp) / "event" / "FewEventClustering" / "test.jsonl", "event")
    random.Random(42).shuffle(event)
    seen = {r["text"] for r in rel}
    rows = rel + [r for r in event if r["text"] not in seen][: size - len(rel)]
    if len(rows) < size:
        raise SystemExit(f"only {len(rows)} distinct texts in FewRel + FewEvent; ask for fewer")
    folder = out_dir / "FewRelClustering"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return f"FewRel 4480 + FewEvent {size - len(rel)}"


def _rows(path: Path, prefix: str) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [{"text": r["text"], "cluster": f"{prefix}:{r['cluster']}"} for r in rows]


# ----------------------------------------------------------------------------------- sections
def processes(args, tmp: Path) -> list[list]:
    """Wall time of 1 process vs torchrun ranks. torchrun gives each rank one thread (OMP_NUM_THREADS=1),
    so a one-process run with one thread is printed too: on a small CPU machine the default
    one-process run already uses every core, and the per-rank scaling is the second comparison."""
    data = tmp / "data-a"
    what = build_corpus(args.raw, data, args.parallel_size)
    counts = [("cpu", 1, {}), ("cpu", 1, {"OMP_NUM_THREADS": "1"}), ("cpu", 2, {})]
    gpus = _gpu_count()
    counts += [("cuda", k, {}) for k in range(1, gpus + 1)] if gpus > 1 else []
    rows, base = [], {}
    torchrun = shutil.which("torchrun") or str(Path(sys.executable).with_name("torchrun"))
    for i, (device, k, env) in enumerate(counts):
        out, cache = tmp / f"a-{i}", tmp / f"a-{i}-cache"
        cmd = bench_args(data, out, "--template", "prefix", "--cache-dir", str(cache), "--device", device)
        full = (
            [sys.executable, "-m", "bench", *cmd]
            if k == 1
            else [torchrun, "--nproc_per_node", str(k), "-m", "bench", *cmd]
        )
        wall, _ = sh(full, cwd=args.repo, env=env)
        record = run_record(out)["encode"]
        threads = env.get("OMP_NUM_THREADS", "1" if k > 1 else "default")
        base.setdefault((device, threads), wall)
        speedup = [f"{base[key] / wall:.2f}" for key in ((device, "default"), (device, "1")) if key in base]
        rows.append(
            [
                device,
                k,
                threads,
                what,
                record["texts_encoded"],
                record.get("texts_encoded_by_other_ranks", 0),
                f"{wall:.1f}",
                " / ".join(speedup),
            ]
        )
    return rows


def _gpu_count() -> int:
    try:
        import torch

        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    except ImportError:
        return 0


# Times, without a profiler, the robustness evaluation and the parts of it that are not the harness's
# own work: the weight load and k-means (the forward passes are the run record's encode seconds).
_TIMED_CHILD = """
import json, sys, time
import sentence_transformers  # mteb.evaluate imports it first thing; keep that import out of the timing
import bench.tasks.abstasks.instruction_robustness as robustness
from bench.adapters.base import BaseEncoder
spent = {"eval": 0.0, "load": 0.0, "kmeans": 0.0}
def timed(fn, key):
    def wrapper(*a, **k):
        tick = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            spent[key] += time.perf_counter() - tick
    return wrapper
robustness.cluster_v_measure = timed(robustness.cluster_v_measure, "kmeans")
BaseEncoder.ensure_loaded = timed(BaseEncoder.ensure_loaded, "load")
cls = robustness.AbsTaskInstructionRobustness
cls._evaluate_subset = timed(cls._evaluate_subset, "eval")
from bench.cli.main import main
rc = main(sys.argv[1:])
print("SPENT", json.dumps(spent))
sys.exit(rc)
"""


def overhead(args, tmp: Path) -> list[list]:
    data = tmp / "data-b"
    what = build_corpus(args.raw, data, args.blind_size)
    out, prof = tmp / "b-out", tmp / "b.prof"
    _wall, _ = sh(
        [
            sys.executable,
            "-m",
            "cProfile",
            "-o",
            str(prof),
            "-m",
            "bench",
            *bench_args(data, out, "--template", "none", "--no-cache"),
        ],
        cwd=args.repo,
    )
    stats = pstats.Stats(str(prof)).stats  # (file, line, name) -> (cc, nc, tottime, cumtime, callers)

    def cum(name: str, file_part: str = "") -> float:
        return sum(v[3] for (f, _, n), v in stats.items() if n == name and file_part in f)

    total = cum("_evaluate_subset", "instruction_robustness")
    model = cum("_encode_group", "sentence_transformers")
    load = cum("ensure_loaded", "adapters")
    scoring = cum("cluster_v_measure")
    harness = total - model - load - scoring
    out2 = tmp / "b-out2"
    _, stdout = sh(
        [sys.executable, "-c", _TIMED_CHILD, *bench_args(data, out2, "--template", "none", "--no-cache")], cwd=args.repo
    )
    spent = json.loads(next(line for line in stdout.splitlines() if line.startswith("SPENT")).split(" ", 1)[1])
    enc = run_record(out2)["encode"]
    forward = enc["encode_seconds"]
    rest = spent["eval"] - forward - spent["load"] - spent["kmeans"]
    return [
        [
            "cProfile",
            what,
            f"{model:.2f}",
            f"{harness:.2f}",
            f"{100 * harness / model:.1f}%",
            f"{load:.2f}",
            f"{scoring:.2f}",
        ],
        [
            "wall clock",
            what,
            f"{forward:.2f}",
            f"{rest:.2f}",
            f"{100 * rest / forward:.1f}%",
            f"{spent['load']:.2f}",
            f"{spent['kmeans']:.2f}",
        ],
    ]


def cached_demo(args, tmp: Path) -> list[list]:
    out, cache = tmp / "c-out", tmp / "c-cache"
    cmd = [sys.executable, "-m", "bench", "run", "--output-dir", str(out), "--cache-dir", str(cache), "-q"]
    cold, _ = sh(cmd, cwd=args.repo)
    reused, _ = sh(cmd, cwd=args.repo)
    cmd_hits = [
        sys.executable,
        "-m",
        "bench",
        "run",
        "--output-dir",
        str(tmp / "c-out2"),
        "--cache-dir",
        str(cache),
        "-q",
    ]
    hits, _ = sh(cmd_hits, cwd=args.repo)
    return [
        ["cold (fresh output and cache dirs)", f"{cold:.1f}", "1.00"],
        ["rerun, results reused", f"{reused:.1f}", f"{reused / cold:.2f}"],
        ["rerun, new output dir, every vector a cache hit", f"{hits:.1f}", f"{hits / cold:.2f}"],
    ]


def memory(args, tmp: Path) -> list[list]:
    rows = []
    for size in args.rss_sizes:
        data = tmp / f"data-d{size}"
        what = build_corpus(args.raw, data, size)
        out = tmp / f"d-out-{size}"
        _, stdout = sh(
            [
                sys.executable,
                "-c",
                _RSS_CHILD,
                sys.executable,
                "-m",
                "bench",
                *bench_args(data, out, "--template", "none", "--no-cache"),
            ],
            cwd=args.repo,
        )
        kb = int(next(line.split()[1] for line in stdout.splitlines() if line.startswith("MAXRSS_KB")))
        rec = run_record(out)["encode"]
        rows.append(
            [
                what,
                size,
                rec["texts_requested"],
                rec["texts_encoded"],
                f"{kb / 1024:.0f}",
                f"{30 * size * 384 * 4 / 2**20:.0f}",
            ]
        )
    if len(rows) == 2:
        rows.append(
            [
                "ratio",
                f"{args.rss_sizes[1] / args.rss_sizes[0]:.1f}x",
                "",
                "",
                f"{float(rows[1][4]) / float(rows[0][4]):.2f}x",
                "",
            ]
        )
    return rows


def utilisation(args, tmp: Path) -> list[list]:
    """Per rank: stand-in forward seconds / task wall seconds (see (e) in the module docstring)."""
    from bench.dataset_builders.sts_senteval import build_sts_senteval

    data = tmp / "data-e"
    what = build_corpus(args.raw, data, args.util_size)
    build_sts_senteval(source_dir=args.raw, out_dir=data)
    designs = [("pipeline", args.repo, args.ranks)]
    if args.baseline_repo is not None:
        designs.append(("baseline", args.baseline_repo, args.baseline_ranks))
    torchrun = shutil.which("torchrun") or str(Path(sys.executable).with_name("torchrun"))
    rows, main_scores = [], {}
    for design, repo, rank_counts in designs:
        # a baseline checkout may predate the one package (adapters/ at its top level)
        standin = next(d for d in (repo / "bench" / "adapters", repo / "adapters") if d.is_dir()) / "standin.py"
        if not standin.exists():
            shutil.copy(ROOT / "bench" / "adapters" / "standin.py", standin)
        for task in ("FewRelClustering", "STSBenchmark"):
            for k in rank_counts:
                tag = f"e-{design}-{task}-{k}"
                out, log = tmp / tag, tmp / f"{tag}-log"
                log.mkdir()
                cmd = [
                    "run",
                    "--model",
                    "standin:7b",
                    "--model-args",
                    f"tokens_per_s={args.tokens_per_s},dim=4096",
                    "-t",
                    task,
                    "--data-dir",
                    str(data),
                    "--output-dir",
                    str(out),
                    "--cache-dir",
                    str(tmp / f"{tag}-cache"),
                    "-q",
                ]
                launcher = [sys.executable] if k == 1 else [torchrun, "--nproc_per_node", str(k)]
                sh([*launcher, "-m", "bench", *cmd], cwd=repo, env={"INSTRUCT_BENCH_STANDIN_LOG": str(log)})
                shutil.rmtree(tmp / f"{tag}-cache")  # 4,096-d vectors: ~2 GB a FewRel run
                record = run_record(out, task)
                wall = record["evaluation_seconds"]
                busy = [json.loads((log / f"rank{r}.json").read_text())["forward_s"] / wall for r in range(k)]
                (result,) = [p for p in out.rglob(f"{task}.json") if p.parent.name != "run_records"]
                score = json.loads(result.read_text())["scores"]["test"][0]["main_score"]
                main_scores.setdefault(task, set()).add(round(score, 9))
                rows.append(
                    [
                        design,
                        what if task == "FewRelClustering" else "STSBenchmark",
                        k,
                        f"{wall:.1f}",
                        f"{100 * min(busy):.1f}%",
                        f"{100 * sum(busy) / k:.1f}%",
                        " ".join(f"{100 * b:.0f}" for b in busy),
                        f"{score:.6f}",
                    ]
                )
                print("  ", rows[-1], flush=True)
    for task, found in main_scores.items():
        if len(found) != 1:
            raise SystemExit(f"{task}: main scores differ across rank counts or designs: {sorted(found)}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes (a few minutes on 2 CPU cores)")
    parser.add_argument("--raw", type=Path, default=ROOT.parent / "shared" / "data" / "raw")
    parser.add_argument("--repo", type=Path, default=ROOT, help="checkout the children run in (default: this one)")
    parser.add_argument("--only", nargs="+", choices=["a", "b", "c", "d", "e"], default=["a", "b", "c", "d", "e"])
    parser.add_argument("--baseline-repo", type=Path, help="(e): also measure this checkout (an earlier design)")
    parser.add_argument("--baseline-ranks", type=int, nargs="+", default=[4], help="(e): rank counts for the baseline")
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4], help="(e): rank counts")
    parser.add_argument(
        "--tokens-per-s",
        type=float,
        default=20000.0,
        help="(e): the stand-in's speed per rank (a 7B model in bf16 on an H100: ~10-20k)",
    )
    args = parser.parse_args()
    if args.baseline_repo is not None:
        args.baseline_repo = args.baseline_repo.resolve()
    args.repo = args.repo.resolve()
    args.parallel_size = 128 if args.quick else 512
    args.blind_size = 512 if args.quick else 2048
    args.rss_sizes = (500, 2000) if args.quick else (2000, 8000)
    args.util_size = 1120 if args.quick else 4480

    from tabulate import tabulate

    print(f"children run in {args.repo}; MiniLM all-MiniLM-L6-v2 (384-d), {os.cpu_count()} CPU cores\n")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        if "a" in args.only:
            print("(a) processes: robustness set, --template prefix, fresh cache dir each")
            print(
                tabulate(
                    processes(args, tmp),
                    headers=[
                        "device",
                        "processes",
                        "threads each",
                        "corpus",
                        "encoded",
                        "by other ranks",
                        "wall s",
                        "speed-up vs 1 (default / 1 thread)",
                    ],
                    tablefmt="github",
                ),
                "\n",
                flush=True,
            )
        if "b" in args.only:
            print(
                "(b) harness's own work: blind robustness set (--template none --no-cache): cProfile, then wall clock"
            )
            print(
                tabulate(
                    overhead(args, tmp),
                    headers=[
                        "measured by",
                        "corpus (x 30 instructions)",
                        "forward s",
                        "harness s",
                        "harness/forward",
                        "load s",
                        "k-means s",
                    ],
                    tablefmt="github",
                ),
                "\n",
                flush=True,
            )
        if "c" in args.only:
            print("(c) demo suite, cold vs rerun (wall of `python -m bench run`, process start included)")
            print(
                tabulate(cached_demo(args, tmp), headers=["run", "wall s", "of cold"], tablefmt="github"),
                "\n",
                flush=True,
            )
        if "d" in args.only:
            print("(d) peak RSS of a blind robustness run (--template none --no-cache)")
            print(
                tabulate(
                    memory(args, tmp),
                    headers=["corpus", "texts", "requested", "encoded", "peak RSS MiB", "30 x N x 384 x 4 B (MiB)"],
                    tablefmt="github",
                ),
                "\n",
                flush=True,
            )
        if "e" in args.only:
            print(
                f"(e) accelerator utilisation: stand-in at {args.tokens_per_s:,.0f} tokens/s per rank, 4,096-d; "
                "busy = forward seconds / task wall seconds"
            )
            print(
                tabulate(
                    utilisation(args, tmp),
                    headers=[
                        "design",
                        "task",
                        "ranks",
                        "wall s",
                        "busy (least busy rank)",
                        "busy (mean)",
                        "busy % per rank",
                        "main score",
                    ],
                    tablefmt="github",
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
