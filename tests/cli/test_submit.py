"""`mteb submit-results` on a `bench run` output folder, against a local stand-in of MTEB's results repository.

The stand-in is a bare git repository holding two public files of github.com/embeddings-benchmark/results
(tests/fixtures/mteb_results: all-MiniLM-L6-v2's STSBenchmark.json and model_meta.json), reached through
`git config --global url.<file:///bare>.insteadOf https://github.com/embeddings-benchmark/results` in a
throw-away HOME (GIT_CONFIG_GLOBAL too): the real global git config is never touched, nothing goes online.

What MTEB 2.26.24 does (mteb/cache/result_cache.py), which this test relies on:
* `submit-results --output-folder OUT` is `ResultCache(OUT).submit_results(None, create_pr=False)`
  (cli/build_cli.py `_submit_results`). No HTTP request: `download_from_remote()` runs
  `git clone --depth 1 https://github.com/embeddings-benchmark/results remote` with cwd=OUT, so the clone
  lives at OUT/remote (`remote_repo_path` = cache_path / "remote"), not under MTEB_CACHE.
* `_normalize_models(None)` takes every `OUT/results/<model>/<revision>/` with a model_meta.json that
  `ModelMeta.model_validate_json_resolved` accepts.
* `_get_unsubmitted_results` takes every `<Task>.json` there (`get_cache_paths`: `*/*/*.json`, plus
  experiments) and keeps it when `_has_unsubmitted_scores(local, remote)`: True when the repository has no
  file of that name, so a task outside MTEB's registry is committed as well (no registry check anywhere);
  when the repository has one, False if `remote.is_mergeable(local)` fails (another dataset revision: a
  warning "Skipping ...") or if the repository already has every (split, subset).
* `CopyResultsAction` copies those files, model_meta.json (overwriting the repository's) and
  run_settings.jsonl (merged with the repository's), then `CommitAction` commits on a new branch
  `mteb-results-<timestamp>`.

(b) holds because the default `bench run` goes through MTEB's own implementation of
sentence-transformers/all-MiniLM-L6-v2 and writes MTEB's registry ModelMeta unchanged; (a) because the
harness files its own tasks' results, and anything on local data, under OUTPUT/instruct-bench, where
`submit-results` does not look.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from results_repo_check import result_file_problems

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
RAW = ROOT.parent / "shared" / "data" / "raw"
FIXTURES = Path(__file__).parent.parent / "fixtures" / "mteb_results"
REMOTE = "https://github.com/embeddings-benchmark/results"  # MTEB's default `remote`
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
REVISION = "8b3219a92973c328a8e22fadcfa821b5dc75636a"
MODEL_DIR = f"results/{MODEL.replace('/', '__')}/{REVISION}"
RUN_TIMEOUT = 1800


def _run(cmd: list[str], *, env: dict[str, str], cwd: Path = ROOT, timeout: int = RUN_TIMEOUT) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n{output[-4000:]}"
    return output


def _git(*args: str, cwd: Path, env: dict[str, str]) -> str:
    return _run(["git", *args], env=env, cwd=cwd, timeout=1200)


def _mimic_repository(tmp: Path, env: dict[str, str]) -> Path:
    """A bare repository on branch main holding the public files under results/ (a clone of GitHub's, in small)."""
    work = tmp / "results-work"
    shutil.copytree(FIXTURES / MODEL.replace("/", "__"), work / "results" / MODEL.replace("/", "__"))
    (work / "README.md").write_text("Local stand-in of embeddings-benchmark/results for tests.\n", encoding="utf-8")
    _git("init", "-q", "-b", "main", cwd=work, env=env)
    _git("add", "-A", cwd=work, env=env)
    _git("commit", "-q", "-m", "public files", cwd=work, env=env)
    bare = tmp / "results.git"
    _git("clone", "-q", "--bare", str(work), str(bare), cwd=tmp, env=env)
    return bare


HUB_STAND_IN = """
import sys
import mteb.abstasks.abstask as abstask
from datasets import Dataset, DatasetDict

def load_dataset(path, revision=None, **kwargs):
    assert path == "mteb/sts12-sts" and revision == mteb.get_task("STS12").metadata.revision, (path, revision)
    return DatasetDict({"test": Dataset.from_json(sys.argv[1])})

import mteb
abstask.load_dataset = load_dataset
from bench.cli.main import main
sys.exit(main(["run", "-q", "-t", "STS12", "--output-dir", sys.argv[2]]))
"""


@pytest.fixture(scope="module")
def submission(tmp_path_factory: pytest.TempPathFactory, session_cache: Path) -> dict:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    if not RAW.is_dir():  # an MTEB task's data is needed for anything to be submitted at all
        pytest.skip(f"real data not found at {RAW}")
    tmp = tmp_path_factory.mktemp("submit")
    home = tmp / "home"
    home.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "MTEB_CACHE": str(tmp / "mteb-cache"),
        "INSTRUCT_BENCH_CACHE": str(session_cache),  # vectors other tests encoded are not encoded again
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        # MTEB writes a ModelMeta's training_datasets (a set) in set order, which follows the string hash
        # seed: byte equality between two processes needs the same seed.
        "PYTHONHASHSEED": "0",
    }
    env.pop("INSTRUCT_BENCH_DATA_DIR", None)
    for key, value in (
        ("user.name", "bench test"),
        ("user.email", "bench@example.invalid"),
        ("init.defaultBranch", "main"),
    ):
        _git("config", "--global", key, value, cwd=tmp, env=env)
    bare = _mimic_repository(tmp, env)
    _git("config", "--global", f"url.{bare.as_uri()}.insteadOf", REMOTE, cwd=tmp, env=env)

    out = tmp / "out"
    logs = {"demo": _run([sys.executable, "-m", "bench", "run", "--output-dir", str(out)], env=env)}
    sts = RAW.is_dir()
    if sts:  # STSBenchmark from local files: a local-… dataset revision, unlike the repository's
        data = tmp / "data"
        _run(
            [sys.executable, "-m", "bench", "build-data", "sts-senteval", "--source-dir", str(RAW), "--out", str(data)],
            env=env,
        )
        logs["sts"] = _run(
            [
                sys.executable,
                "-m",
                "bench",
                "run",
                "-t",
                "STSBenchmark",
                "--data-dir",
                str(data),
                "--output-dir",
                str(out),
            ],
            env=env,
        )
        # MTEB's STS12 at MTEB's dataset revision, as a run that can reach the hub (or has a filled datasets
        # cache) makes it: this offline test serves MTEB's `load_dataset` call from the same rows.
        logs["sts12"] = _run(
            [sys.executable, "-c", HUB_STAND_IN, str(data / "STS12" / "test.jsonl"), str(out)], env=env
        )
    logs["submit"] = _run([sys.executable, "-m", "mteb", "submit-results", "--output-folder", str(out)], env=env)

    clone = out / "remote"
    changed = _git("diff", "--name-status", "HEAD~1", "HEAD", cwd=clone, env=env).splitlines()
    return {
        "tmp": tmp,
        "env": env,
        "out": out,
        "clone": clone,
        "sts": sts,
        "logs": logs,
        "changed": dict(reversed(line.split("\t", 1)) for line in changed),  # path -> A/M
        "branch": _git("rev-parse", "--abbrev-ref", "HEAD", cwd=clone, env=env).strip(),
        "message": _git("log", "-1", "--format=%B", cwd=clone, env=env),
    }


def _committed_results(sub: dict) -> list[str]:
    return sorted(p for p in sub["changed"] if p.endswith(".json") and not p.endswith("/model_meta.json"))


def _mteb_alone(sub: dict, code: str, *args: str) -> str:
    """Python run with MTEB alone imported (no harness task registered into MTEB's registry)."""
    return _run([sys.executable, "-c", code, *args], env=sub["env"], cwd=sub["tmp"])


def test_mtebs_clone_is_in_the_output_folder_and_holds_one_new_commit(submission):
    sub = submission
    assert (sub["clone"] / ".git").is_dir() and not (Path(sub["env"]["MTEB_CACHE"]) / "remote").exists()
    assert sub["branch"].startswith("mteb-results-") and "Submitted by MTEB ResultCache" in sub["message"]
    remote = _git("config", "--get", "remote.origin.url", cwd=sub["clone"], env=sub["env"]).strip()
    assert remote == REMOTE  # as MTEB cloned it; git rewrote it to the local stand-in
    assert _committed_results(sub), sub["changed"]


def test_a_only_results_mteb_would_accept_are_committed(submission):
    """(a) No result of a task outside MTEB's registry, and none on another dataset revision than MTEB's task.

    MTEB's `ResultCache._get_unsubmitted_results` takes every `<Task>.json` of a model folder and
    `_has_unsubmitted_scores` is True for any file the repository lacks, with no check that the task is
    MTEB's (mteb/cache/result_cache.py): so the harness files its own tasks' results, and results on local
    data, under OUTPUT/instruct-bench/, where MTEB does not look (bench/results/store.py).
    """
    sub = submission
    committed = _committed_results(sub)
    names = [Path(p).stem for p in committed]
    verdicts = json.loads(
        _mteb_alone(
            sub,
            (
                "import json, sys, mteb\n"
                "out = {}\n"
                "for name in sys.argv[1:]:\n"
                "    try:\n"
                "        out[name] = mteb.get_task(name).metadata.revision\n"
                "    except (KeyError, ValueError):\n"
                "        out[name] = None\n"
                "print(json.dumps(out))\n"
            ),
            *names,
        )
        .strip()
        .splitlines()[-1]
    )
    outside = [n for n in names if verdicts[n] is None]
    assert not outside, (
        f"MTEB's submit-results committed results of tasks outside MTEB's registry: {outside} "
        f"(mteb/cache/result_cache.py: _get_unsubmitted_results -> _has_unsubmitted_scores is True "
        f"for any file the results repository lacks)"
    )
    for path in committed:
        data = json.loads((sub["clone"] / path).read_text(encoding="utf-8"))
        assert data["dataset_revision"] == verdicts[Path(path).stem], path
    assert not [n for n in names if n.startswith("Demo")]
    assert (sub["out"] / "instruct-bench" / "results" / MODEL_DIR.split("/", 1)[1] / "DemoInstructSTS.json").is_file()
    if sub["sts"]:  # local data: filed where MTEB does not look; MTEB's STS12 on MTEB's revision is sent
        assert f"{MODEL_DIR}/STSBenchmark.json" not in sub["changed"]
        assert names == ["STS12"]


def test_b_model_meta_is_what_mteb_writes_for_its_registry_entry(submission):
    """(b) model_meta.json is MTEB's registry ModelMeta, byte for byte as MTEB writes it."""
    sub = submission
    assert f"{MODEL_DIR}/model_meta.json" in sub["changed"]
    committed = (sub["clone"] / MODEL_DIR / "model_meta.json").read_bytes()
    reference = sub["tmp"] / "reference"
    _mteb_alone(
        sub,
        (
            "import sys, mteb\n"
            "from pathlib import Path\n"
            "result = mteb.TaskResult.from_disk(Path(sys.argv[1]))\n"
            f"mteb.ResultCache(sys.argv[2]).save_to_cache(result, mteb.get_model_meta({MODEL!r}))\n"
        ),
        str(sub["clone"] / _committed_results(sub)[0]),
        str(reference),
    )
    assert committed == (reference / MODEL_DIR / "model_meta.json").read_bytes()
    ours = json.loads(committed)
    public = json.loads(
        (FIXTURES / MODEL.replace("/", "__") / REVISION / "model_meta.json").read_text(encoding="utf-8")
    )
    assert (ours["name"], ours["revision"]) == (public["name"], public["revision"])
    assert set(ours["training_datasets"]) == set(public["training_datasets"])  # a list of names now, a dict then
    for key in ("languages", "open_weights", "use_instructions"):
        assert ours[key] == public[key], key


def test_c_run_settings_lie_beside_every_committed_result(submission):
    """(c) run_settings.jsonl is committed beside every result (bench/results/store.py writes it as MTEB does)."""
    sub = submission
    tracked = set(_git("ls-tree", "-r", "--name-only", "HEAD", cwd=sub["clone"], env=sub["env"]).splitlines())
    for path in _committed_results(sub):
        assert f"{Path(path).parent.as_posix()}/run_settings.jsonl" in tracked, path
    assert f"{MODEL_DIR}/run_settings.jsonl" in sub["changed"]


def test_d_the_results_repositorys_run_settings_check_passes(submission):
    """(d) The check of tests/run_settings_check.py (embeddings-benchmark/results @ 8e2207ce), on every committed result."""
    sub = submission
    problems = [p for path in _committed_results(sub) for p in result_file_problems(sub["clone"] / path, path)]
    assert problems == []
