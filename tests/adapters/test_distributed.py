"""Data-parallel runs on torch.distributed (gloo on CPU): the split, every family on two ranks, and
`torchrun -m bench run` against one process (scores, encode counts, resume after a rank dies)."""

from __future__ import annotations

import functools
import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import dist_ranks
from bench.adapters.distributed import world_from_env
from bench.adapters.prompteol import METAEOL
from cache_entries import keys

ROOT = Path(__file__).resolve().parents[2]
TORCHRUN = shutil.which("torchrun") or str(Path(sys.executable).with_name("torchrun"))


# ------------------------------------------------------------------------------------------ the split
class _Planned:
    """What `plan_jobs` reads of an encoder."""

    def __init__(self, max_tokens=None, groups=8):
        self.max_tokens, self.groups = max_tokens, groups

    def group_batches(self):
        return self.groups

    def token_lengths(self, inputs):
        return [len(x) for x in inputs]


@pytest.mark.parametrize(
    ("n", "batch", "groups"), [(10, 2, 8), (7, 2, 1), (1, 4, 8), (64, 4, 2), (33, 5, 3), (0, 3, 8)]
)
def test_jobs_are_the_batches_one_process_forms(n, batch, groups):
    from bench.adapters.base import plan_batches
    from bench.adapters.distributed import plan_jobs

    inputs = ["x" * (n - i) for i in range(n)]
    jobs = plan_jobs(_Planned(groups=groups), inputs, batch)
    assert [i for a, b in jobs for i in range(a, b)] == list(range(n))  # in order, disjoint, complete
    assert all(b - a == batch for a, b in jobs[:-1])
    budget = _Planned(max_tokens=3 * n + 1, groups=groups)  # under a token budget: plan_batches within each group
    span = batch * groups
    expected = [
        size
        for g in range(0, n, span)
        for size in plan_batches([len(x) for x in inputs[g : g + span]], batch, 3 * n + 1)
    ]
    assert [b - a for a, b in plan_jobs(budget, inputs, batch)] == expected


def test_vectors_travel_in_half_precision_only_when_nothing_changes():
    import torch

    from bench.adapters.distributed import compact

    bf16 = torch.randn(4, 8).to(torch.bfloat16).float()
    assert compact(bf16).dtype == torch.bfloat16 and torch.equal(compact(bf16).float(), bf16)
    full = torch.randn(4, 8)
    assert compact(full).dtype == torch.float32
    with_nan = bf16.clone()
    with_nan[0, 0] = float("nan")
    assert compact(with_nan).dtype == torch.float32  # a NaN must reach rank 0's check as it is


def test_another_ranks_failure_keeps_its_kind():
    from bench.adapters.distributed import failure_error
    from bench.core.errors import ConfigError

    with pytest.raises(ConfigError, match="rank 1: no transform serves"):  # an expected error: one error line
        raise failure_error(1, "encoding its share", ("ConfigError", "no transform serves it"))
    with pytest.raises(RuntimeError, match=r"(?s)rank 1 failed.*Traceback.*ZeroDivisionError"):  # a bug: its traceback
        raise failure_error(1, "scoring", ("", "Traceback (most recent call last):\nZeroDivisionError: x"))


def test_a_failed_task_leaves_no_job_queued_for_the_other_ranks():
    """`parallel.discard` in a launched run: jobs no rank has taken are dropped and cancelled."""
    from bench.adapters.distributed import Team, World
    from bench.core import parallel

    team = Team(World(rank=0, size=1, local_rank=0), heartbeat=60.0)
    team.peers = {1: None}  # type: ignore[dict-item]  # a rank that takes nothing: jobs stay queued
    parallel.set_executor(team)
    try:
        futures = [parallel.submit(divmod, n, 3) for n in range(3)]
        parallel.discard(futures[1:])
    finally:
        parallel.set_executor(None)
    assert [j.future for j in team.calls] == futures[:1]
    assert [f.cancelled() for f in futures] == [False, True, True]


def test_world_comes_from_the_launchers_variables():
    assert world_from_env({}) is None
    assert world_from_env({"WORLD_SIZE": "1", "RANK": "0"}) is None
    world = world_from_env({"WORLD_SIZE": "4", "RANK": "2", "LOCAL_RANK": "0"})
    assert (world.rank, world.size, world.local_rank, world.is_main) == (2, 4, 0, False)


# ------------------------------------------------------------------------------------------ every family
TEXTS = [("word " * (1 + (7 * i) % 23)).strip() + f" {i}" for i in range(25)]
INSTRUCTION = "What is the topic?"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _gst_dir(tmp: Path, minilm: str) -> str:
    """A GSTransform folder with a random 384 -> 8 map over MiniLM (the base is what ranks share)."""
    from bench.adapters.gstransform import FORMAT_VERSION, save_transform
    from bench.adapters.registry import load_model

    base = load_model(f"st:{minilm}", use_cache=False)  # not the mteb entry's setting: its own cache file
    rng = np.random.default_rng(0)
    config = {
        "format": "gstransform",
        "format_version": FORMAT_VERSION,
        "instruction": INSTRUCTION,
        "applies_to": [INSTRUCTION],
        "base_model": f"st:{minilm}",
        "base_options": {},
        "base_fingerprint": base.fingerprint,
    }
    weights = {"encoder_weight": rng.standard_normal((8, 384)), "encoder_bias": rng.standard_normal(8)}
    save_transform(tmp / "gst", weights=weights, config=config, sample=None)
    return str(tmp / "gst")


@pytest.mark.slow
def test_every_family_encodes_each_input_once_across_two_ranks(tmp_path, minilm_path, smollm2_path):
    import torch.multiprocessing as mp

    from bench.adapters.distributed import all_encoders
    from bench.adapters.registry import load_model

    specs = [
        (minilm_path, {}),  # MTEB's implementation (family mteb)
        (f"st:{minilm_path}", {}),
        (f"instructor:{minilm_path}", {}),
        (f"inbedder:{smollm2_path}", {"pooling": "1st-gen"}),
        (f"inbedder:{smollm2_path}", {"pooling": "avg-gen", "max_new_tokens": 3}),
        (f"inbedder:{smollm2_path}", {"pooling": "re-encode", "max_new_tokens": 3, "reencoder": minilm_path}),
        (f"prompteol:{smollm2_path}", {}),
        # several prompts per text, their states averaged: two of MetaEOL's eight take the same path (the
        # eight cost CI a minute: ~50 s for 25 texts on one CPU core, and the reference encodes them again)
        (f"metaeol:{smollm2_path}", {"prompts": METAEOL[:2]}),
        (f"gstransform:{_gst_dir(tmp_path, minilm_path)}", {}),
    ]
    builders = [
        functools.partial(load_model, spec, batch_size=4, cache_dir=str(tmp_path / "cache"), **opts)
        for spec, opts in specs
    ]
    out = tmp_path / "out"
    out.mkdir()
    mp.start_processes(
        dist_ranks.rank_main,
        args=(2, _free_port(), builders, TEXTS, INSTRUCTION, str(out)),
        nprocs=2,
        start_method="spawn",
    )
    stats = json.loads((out / "stats.json").read_text())
    for i, (spec, opts) in enumerate(specs):
        one = load_model(spec, batch_size=4, use_cache=False, **opts)
        given = None if one.family == "mteb" else INSTRUCTION
        expected = one.encode_inputs([one.render(t, given, None) for t in TEXTS], show=False)
        np.testing.assert_allclose(np.load(out / f"{i}.npy"), expected, atol=2e-4, err_msg=spec)
        heavy = next(e.family for e in all_encoders(one) if e.distributes)
        counts = stats[i][heavy]
        assert counts["encoded"] == len(TEXTS), (spec, counts)  # each input once, over both ranks
        assert 0 < counts["encoded_by_other_ranks"] < len(TEXTS), (spec, counts)


# ------------------------------------------------------------------------------------------ torchrun
def _bench(
    args: list[str], cwd: Path, *, ranks: int = 1, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    launcher = (
        [TORCHRUN, "--nproc_per_node", str(ranks), "--master_port", str(_free_port())]
        if ranks > 1
        else [sys.executable]
    )
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [*launcher, "-m", "bench", "run", *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=3600
    )


def _records(out: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in out.glob("instruct-bench/results/**/run_records/*.json")}


def _scores(out: Path) -> dict[str, dict]:
    found = {}
    for p in out.glob("instruct-bench/results/**/*.json"):
        if p.name != "model_meta.json" and p.parent.name != "run_records":
            found[p.stem] = json.loads(p.read_text())["scores"]["test"][0]
    return found


def _assert_same_scores(a: dict[str, dict], b: dict[str, dict]) -> None:
    assert a.keys() == b.keys() and a
    for task, scores in a.items():
        for key, value in scores.items():
            if isinstance(value, float):
                assert b[task][key] == pytest.approx(value, abs=1e-6), (task, key)


# The instruction shift rides along: its sample must not depend on the rank count (bench/run/shift.py).
DEMO_OPTIONS = ["--batch-size", "4", "--shift-sample", "16"]


@pytest.fixture(scope="module")
def one_process(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("one")
    done = _bench(["--suite", "demo", "--output-dir", "out", "--cache-dir", "cache", *DEMO_OPTIONS], work)
    assert done.returncode == 0, done.stderr
    return work / "out"


@pytest.mark.slow
def test_torchrun_two_processes_equal_one(tmp_path, one_process):
    done = _bench(["--suite", "demo", "--output-dir", "out", "--cache-dir", "cache", *DEMO_OPTIONS], tmp_path, ranks=2)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("| Task ") == 2  # rank 0 alone prints the tables (scores, run diagnostics)
    _assert_same_scores(_scores(one_process), _scores(tmp_path / "out"))
    one, two = _records(one_process), _records(tmp_path / "out")
    for task, record in two.items():
        encode, reference = record["encode"], one[task]["encode"]
        assert encode["processes"] == 2
        assert encode["texts_encoded"] == reference["texts_encoded"] == reference["unique_inputs"]
        assert 0 < encode["texts_encoded_by_other_ranks"] < encode["texts_encoded"]
        shift, alone = record["instruction_shift"], one[task]["instruction_shift"]
        assert shift["sample"] == alone["sample"] == 16 and shift["seed"] == alone["seed"]  # the same sample
        assert shift["mean_cosine_distance"] == pytest.approx(alone["mean_cosine_distance"], abs=1e-6)
        assert alone["mean_cosine_distance"] > 0
    # each rank committed what it encoded: rank 0 to the main file, rank 1 to its shard, nothing twice
    by_rank_1 = sum(r["encode"]["texts_encoded_by_other_ranks"] for r in two.values())
    main, shards = _cache_rows(tmp_path / "cache")
    assert list(shards) == ["rank1.sqlite"] and len(shards["rank1.sqlite"]) == by_rank_1
    assert len(main) == sum(r["encode"]["unique_inputs"] for r in one.values()) - by_rank_1
    assert not main & shards["rank1.sqlite"]


def _cache_rows(folder: Path) -> tuple[set[str], dict[str, set[str]]]:
    """The keys of the one cache under `folder`: its main file's, and each shard's by file name."""
    (main,) = folder.glob("*.sqlite")
    shards = {shard.name: keys(shard) for shard in sorted(main.with_suffix(".shards").glob("*.sqlite"))}
    return keys(main), shards


def on_rank_one(module: str, why: str, patch: str) -> str:
    """A `sitecustomize.py` that, on rank 1 only, runs `patch` (code indented by 16 spaces, with `module`
    bound) right after `module` is imported: a fault injected into one rank of a torchrun launch."""
    return textwrap.dedent(f'''
    import importlib.abc, importlib.util, os, sys, time

    class _Fault(importlib.abc.MetaPathFinder):
        """{why}"""
        def find_spec(self, name, path, target=None):
            if name != "{module}":
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(name)
            run_module = spec.loader.exec_module
            def exec_module(module):
                run_module(module)
{patch}
            spec.loader.exec_module = exec_module
            return spec

    if os.environ.get("RANK") == "1":
        sys.meta_path.insert(0, _Fault())
    ''')


FAULT_ON_RANK_ONE = on_rank_one(
    "bench.adapters.base",
    "Rank 1 crashes (os._exit) or hangs (sleeps in its model) on its third batch.",
    """\
                original, calls = module.BaseEncoder.encode_share, []
                def encode_share(self, inputs, batch_size):
                    calls.append(len(inputs))
                    if len(calls) == 3:
                        if os.environ["FAULT"] == "die":
                            os._exit(7)
                        time.sleep(600)
                    return original(self, inputs, batch_size)
                module.BaseEncoder.encode_share = encode_share""",
)

STANDIN = [
    "--model",
    "standin:tiny",
    "--model-args",
    "dim=16,tokens_per_s=200000",
    "-t",
    "FewRelClustering",
    "--batch-size",
    "4",
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """A small robustness corpus (FewRelClustering's schema): 3 clusters of 12 texts."""
    data = tmp_path_factory.mktemp("corpus")
    (data / "FewRelClustering").mkdir()
    rows = [
        {"text": f"{topic} sentence number {i} " + "word " * (i % 5), "cluster": topic}
        for topic in ("sports", "music", "cooking")
        for i in range(12)
    ]
    (data / "FewRelClustering" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return data


@pytest.fixture(scope="module")
def one_process_robustness(tmp_path_factory, corpus) -> Path:
    work = tmp_path_factory.mktemp("one-robustness")
    done = _bench([*STANDIN, "--data-dir", str(corpus), "--output-dir", "out", "--cache-dir", "cache"], work)
    assert done.returncode == 0, done.stderr
    return work / "out"


@pytest.mark.slow
def test_a_dead_rank_ends_with_an_error_line_and_a_rerun_resumes(tmp_path, corpus, one_process_robustness):
    """Rank 1 dies on its third batch; the rerun resumes from the cache, clusters on rank 1, and scores
    exactly what one process scores."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(FAULT_ON_RANK_ONE)
    args = [*STANDIN, "--data-dir", str(corpus), "--output-dir", "out", "--cache-dir", "cache"]
    crashed = _bench(args, tmp_path, ranks=2, env={"PYTHONPATH": f"{hooks}{os.pathsep}{ROOT}", "FAULT": "die"})
    assert crashed.returncode != 0
    assert "error:" in crashed.stderr and "rerun the same command to resume" in crashed.stderr, crashed.stderr[-3000:]
    assert not _scores(tmp_path / "out")  # no result from a run that did not finish
    main, shards = _cache_rows(tmp_path / "cache")
    kept = len(main.union(*shards.values()))
    assert kept >= 2 * 4  # at least rank 1's two finished batches were committed (its shard, or rank 0 for it)

    resumed = _bench(args, tmp_path, ranks=2)
    assert resumed.returncode == 0, resumed.stderr
    encode = _records(tmp_path / "out")["FewRelClustering"]["encode"]
    assert encode["cache_hits"] == kept
    assert encode["texts_encoded"] == encode["unique_inputs"] - kept  # nothing encoded twice
    _assert_same_scores(_scores(one_process_robustness), _scores(tmp_path / "out"))
    ranks = encode["ranks"]
    assert [r["rank"] for r in ranks] == [0, 1]
    assert ranks[1]["score_seconds"] > 0 and ranks[1]["encode_seconds"] > 0  # rank 1 clustered and encoded
    assert all(0 < r["encode_busy"] <= 1 for r in ranks)


@pytest.mark.slow
def test_a_hung_rank_is_found_by_its_missing_heartbeat(tmp_path, corpus):
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(FAULT_ON_RANK_ONE)
    args = [*STANDIN, "--data-dir", str(corpus), "--output-dir", "out", "--cache-dir", "cache"]
    env = {"PYTHONPATH": f"{hooks}{os.pathsep}{ROOT}", "FAULT": "hang", "INSTRUCT_BENCH_HEARTBEAT_S": "3"}
    hung = _bench(args, tmp_path, ranks=2, env=env)  # found in seconds; the hang itself lasts 600 s
    assert hung.returncode != 0
    assert "error: rank 1 sent nothing for 3 s (no heartbeat): it is hung" in hung.stderr, hung.stderr[-3000:]


# ------------------------------------------------------------------------------------------ a rank's own errors
@pytest.mark.slow
def test_a_job_that_cannot_travel_fails_as_itself_and_the_team_goes_on(tmp_path):
    """A scoring job whose argument cannot be pickled (rank 0), unpickled (rank 1) or whose result cannot be
    pickled (rank 1) fails with that exception, where the task gathers it, not as "rank 1 stopped"; the
    next job still runs on the same team."""
    import torch.multiprocessing as mp

    mp.start_processes(
        dist_ranks.job_failures_main, args=(2, _free_port(), str(tmp_path)), nprocs=2, start_method="spawn"
    )
    outcomes = json.loads((tmp_path / "rank0.json").read_text())
    assert outcomes["unpicklable argument"][0] == "TypeError", outcomes  # raised on rank 0, as itself
    assert "pickle" in outcomes["unpicklable argument"][1]
    kind, message = outcomes["argument rank 1 cannot unpickle"]
    assert kind == "RuntimeError" and "ValueError: this object cannot be rebuilt here" in message, outcomes
    kind, message = outcomes["unpicklable result"]
    assert kind == "RuntimeError" and "rank 1 failed while scoring" in message and "pickle" in message, outcomes
    assert outcomes["a job that works"] == ["result", 3]
    assert not any("stopped" in str(m) for _, m in outcomes.values()), outcomes


FAIL_LOAD_ON_RANK_ONE = on_rank_one(
    "bench.run.runner",
    "Rank 1's model build raises an error of its own (a harness error, or a bug).",
    """\
                def build_model(options):
                    if os.environ["FAULT"] == "config":
                        from bench.core.errors import ConfigError
                        raise ConfigError("rank one cannot load this model here")
                    return {}["a bug on rank one"]
                module.build_model = build_model""",
)


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["config", "bug"])
def test_a_ranks_own_exception_is_reported_as_itself(tmp_path, corpus, fault):
    """Rank 1 fails before it serves (its model load): rank 0 reports that exception, not "rank 1 stopped"
    or the launcher's SIGTERM."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(FAIL_LOAD_ON_RANK_ONE)
    args = [*STANDIN, "--data-dir", str(corpus), "--output-dir", "out", "--cache-dir", "cache"]
    failed = _bench(args, tmp_path, ranks=2, env={"PYTHONPATH": f"{hooks}{os.pathsep}{ROOT}", "FAULT": fault})
    assert failed.returncode != 0
    rank0 = failed.stderr  # torchrun interleaves the ranks' output; rank 0's lines are what the user reads
    if fault == "config":
        assert "error: rank 1: rank one cannot load this model here" in rank0, rank0[-3000:]
    else:
        assert "RuntimeError: rank 1 failed while running" in rank0 and "KeyError: 'a bug on rank one'" in rank0, rank0[
            -3000:
        ]
    assert "rank 1 stopped" not in rank0 and "the launcher stopped this run" not in rank0, rank0[-3000:]
