"""Data-parallel runs on torch.distributed (gloo on CPU): the split, every family on two ranks, and
`torchrun -m bench run` against one process (scores, encode counts, resume after a rank dies)."""

from __future__ import annotations

import functools
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import dist_ranks
from adapters.distributed import deal, world_from_env

ROOT = Path(__file__).resolve().parents[1]
TORCHRUN = shutil.which("torchrun") or str(Path(sys.executable).with_name("torchrun"))


# ------------------------------------------------------------------------------------------ the split
@pytest.mark.parametrize(("n", "batch", "ranks"), [(10, 2, 2), (7, 2, 3), (1, 4, 2), (64, 4, 2), (33, 5, 4), (0, 3, 2)])
def test_deal_gives_disjoint_whole_batches_covering_every_input(n, batch, ranks):
    shares = deal(n, batch, ranks)
    flat = sorted(i for share in shares for i in share)
    assert flat == list(range(n))  # disjoint and complete
    one_process = [list(range(s, min(n, s + batch))) for s in range(0, n, batch)]
    dealt = [share[k : k + batch] for share in shares for k in range(0, len(share), batch)]
    assert sorted(dealt) == sorted(one_process)  # every batch is the one a single process forms


def test_deal_balances_long_and_short_inputs():
    # inputs sorted longest first: length n - i. A snake order gives each rank nearly the same total.
    shares = deal(64, 4, 2)
    totals = [sum(64 - i for i in share) for share in shares]
    assert len(shares[0]) == len(shares[1]) == 32
    assert abs(totals[0] - totals[1]) <= 4 * 4  # at most one batch's length step apart
    plain = [sum(64 - i for b in range(r, 16, 2) for i in range(4 * b, 4 * b + 4)) for r in range(2)]
    assert abs(totals[0] - totals[1]) < abs(plain[0] - plain[1])  # better than round robin


def test_another_ranks_failure_keeps_its_kind():
    from adapters.distributed import _assemble
    from bench.core.errors import ConfigError

    ok = ("ok", np.zeros((1, 2), dtype=np.float32))
    with pytest.raises(ConfigError, match="rank 1: no transform serves"):  # an expected error: one error line
        _assemble(2, [[0], [1]], [ok, ("error", "ConfigError", "no transform serves it")])
    with pytest.raises(RuntimeError, match="(?s)rank 1 failed.*Traceback.*ZeroDivisionError"):  # a bug: its traceback
        _assemble(2, [[0], [1]], [ok, ("error", "", "Traceback (most recent call last):\nZeroDivisionError: x")])


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
    from adapters.gstransform import FORMAT_VERSION, save_transform
    from adapters.registry import load_model

    base = load_model(f"st:{minilm}", use_cache=False)  # not the mteb entry's setting: its own cache file
    rng = np.random.default_rng(0)
    config = {"format": "gstransform", "format_version": FORMAT_VERSION, "instruction": INSTRUCTION,
              "applies_to": [INSTRUCTION], "base_model": f"st:{minilm}", "base_options": {}, "base_fingerprint": base.fingerprint}
    weights = {"encoder_weight": rng.standard_normal((8, 384)), "encoder_bias": rng.standard_normal(8)}
    save_transform(tmp / "gst", weights=weights, config=config, sample=None)
    return str(tmp / "gst")


@pytest.mark.slow
def test_every_family_encodes_each_input_once_across_two_ranks(tmp_path, minilm_path, smollm2_path):
    import torch.multiprocessing as mp

    from adapters.distributed import all_encoders
    from adapters.registry import load_model

    specs = [
        (minilm_path, {}),  # MTEB's implementation (family mteb)
        (f"st:{minilm_path}", {}),
        (f"instructor:{minilm_path}", {}),
        (f"inbedder:{smollm2_path}", {"pooling": "1st-gen"}),
        (f"inbedder:{smollm2_path}", {"pooling": "avg-gen", "max_new_tokens": 3}),
        (f"inbedder:{smollm2_path}", {"pooling": "re-encode", "max_new_tokens": 3, "reencoder": minilm_path}),
        (f"prompteol:{smollm2_path}", {}),
        (f"metaeol:{smollm2_path}", {}),
        (f"gstransform:{_gst_dir(tmp_path, minilm_path)}", {}),
    ]
    builders = [functools.partial(load_model, spec, batch_size=4, cache_dir=str(tmp_path / "cache"), **opts)
                for spec, opts in specs]
    out = tmp_path / "out"
    out.mkdir()
    mp.start_processes(
        dist_ranks.rank_main, args=(2, _free_port(), builders, TEXTS, INSTRUCTION, str(out)),
        nprocs=2, start_method="spawn",
    )
    stats = json.loads((out / "stats.json").read_text())
    for i, (spec, opts) in enumerate(specs):
        one = load_model(spec, batch_size=4, use_cache=False, **opts)
        given = None if one.family == "mteb" else INSTRUCTION
        expected = one.encode_inputs([one.render(t, given, None) for t in TEXTS], show=False)
        np.testing.assert_allclose(np.load(out / f"{i}.npy"), expected, atol=2e-4, err_msg=spec)
        heavy = [e.family for e in all_encoders(one) if e.distributes][0]
        counts = stats[i][heavy]
        assert counts["encoded"] == len(TEXTS), (spec, counts)  # each input once, over both ranks
        assert 0 < counts["encoded_by_other_ranks"] < len(TEXTS), (spec, counts)


# ------------------------------------------------------------------------------------------ torchrun
def _bench(args: list[str], cwd: Path, *, ranks: int = 1, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    launcher = [TORCHRUN, "--nproc_per_node", str(ranks), "--master_port", str(_free_port())] if ranks > 1 else [sys.executable]
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([*launcher, "-m", "bench", "run", *args], cwd=cwd, env=full_env, capture_output=True,
                          text=True, timeout=3600)


def _records(out: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in out.glob("instruct-bench/results/*/*/run_records/*.json")}


def _scores(out: Path) -> dict[str, dict]:
    found = {}
    for p in out.glob("instruct-bench/results/*/*/*.json"):
        if p.name != "model_meta.json":
            found[p.stem] = json.loads(p.read_text())["scores"]["test"][0]
    return found


def _assert_same_scores(a: dict[str, dict], b: dict[str, dict]) -> None:
    assert a.keys() == b.keys() and a
    for task, scores in a.items():
        for key, value in scores.items():
            if isinstance(value, float):
                assert b[task][key] == pytest.approx(value, abs=1e-6), (task, key)


@pytest.fixture(scope="module")
def one_process(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("one")
    done = _bench(["--suite", "demo", "--output-dir", "out", "--cache-dir", "cache", "--batch-size", "4"], work)
    assert done.returncode == 0, done.stderr
    return work / "out"


@pytest.mark.slow
def test_torchrun_two_processes_equal_one(tmp_path, one_process):
    done = _bench(["--suite", "demo", "--output-dir", "out", "--cache-dir", "cache", "--batch-size", "4"], tmp_path, ranks=2)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("| Task ") == 1  # rank 0 alone prints the table
    _assert_same_scores(_scores(one_process), _scores(tmp_path / "out"))
    one, two = _records(one_process), _records(tmp_path / "out")
    for task, record in two.items():
        encode, reference = record["encode"], one[task]["encode"]
        assert encode["processes"] == 2
        assert encode["texts_encoded"] == reference["texts_encoded"] == reference["unique_inputs"]
        assert 0 < encode["texts_encoded_by_other_ranks"] < encode["texts_encoded"]
    (cache,) = (tmp_path / "cache").glob("*.sqlite")  # one cache file, written by rank 0 alone
    with sqlite3.connect(cache) as conn:
        assert conn.execute("SELECT COUNT(*) FROM emb").fetchone()[0] == sum(r["encode"]["unique_inputs"] for r in one.values())


DIE_ON_SECOND_SHARE = textwrap.dedent('''
    import importlib.abc, importlib.util, os, sys

    class _KillRankOne(importlib.abc.MetaPathFinder):
        """Rank 1 exits abruptly on its second share (a crash, not an error it could report)."""
        def find_spec(self, name, path, target=None):
            if name != "adapters.base":
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(name)
            run_module = spec.loader.exec_module
            def exec_module(module):
                run_module(module)
                original, calls = module.BaseEncoder.encode_share, []
                def encode_share(self, inputs, batch_size):
                    calls.append(len(inputs))
                    if len(calls) == 2:
                        os._exit(7)
                    return original(self, inputs, batch_size)
                module.BaseEncoder.encode_share = encode_share
            spec.loader.exec_module = exec_module
            return spec

    if os.environ.get("RANK") == "1":
        sys.meta_path.insert(0, _KillRankOne())
''')


@pytest.mark.slow
def test_a_dead_rank_loses_only_the_round_in_flight_and_a_rerun_resumes(tmp_path, one_process):
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(DIE_ON_SECOND_SHARE)
    args = ["-t", "DemoIntentEmotion", "--output-dir", "out", "--cache-dir", "cache", "--batch-size", "4"]
    crashed = _bench(args, tmp_path, ranks=2, env={"PYTHONPATH": f"{hooks}{os.pathsep}{ROOT}"})
    assert crashed.returncode != 0
    assert not _scores(tmp_path / "out")  # no result from a run that did not finish
    (cache,) = (tmp_path / "cache").glob("*.sqlite")
    with sqlite3.connect(cache) as conn:
        kept = conn.execute("SELECT COUNT(*) FROM emb").fetchone()[0]
    assert kept == 4 * 8 * 2  # the first round (a group of 8 batches of 4 per rank) was committed

    resumed = _bench(args, tmp_path, ranks=2)
    assert resumed.returncode == 0, resumed.stderr
    encode = _records(tmp_path / "out")["DemoIntentEmotion"]["encode"]
    assert encode["cache_hits"] == kept
    assert encode["texts_encoded"] == encode["unique_inputs"] - kept  # nothing encoded twice
    reference = _scores(one_process)
    _assert_same_scores({"DemoIntentEmotion": reference["DemoIntentEmotion"]}, _scores(tmp_path / "out"))
