"""A model's own hub code runs only where the user or the maintainer chose it (bench/adapters/remote_code.py).

`jinaai/jina-embeddings-v2-small-en` is registered in MTEB with a loader that passes
`trust_remote_code=True`. A local hub cache holds two revisions of it: MTEB's registered one and a
"pull request" someone else opened. Both are MiniLM's weights with an `auto_map` to a modeling file
that appends a line to a marker file when it is imported, so "its code ran" is measured, not assumed.
Everything runs in subprocesses: the hub cache and the modules cache are read from the environment
when `huggingface_hub` and `transformers` are imported.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.adapters.registry import MODELS
from bench.adapters.remote_code import is_api_client, registered_meta, runs_own_code
from bench.run.reproduce import Refused, rerun_plan

JINA = "jinaai/jina-embeddings-v2-small-en"
UNREGISTERED = "someone/marker-model"  # a hub model MTEB does not know, its repository holding code too
FORK = "c0ffee" * 6 + "c0ff"  # a revision of the submitter's choosing (a pull-request ref on the hub)
TASK = "DemoInstructSTS"
MODELING = """import os
from transformers import BertModel

with open(os.environ["BENCH_TEST_MARKER"], "a", encoding="utf-8") as f:
    f.write("the repository's code ran\\n")


class MarkerModel(BertModel):
    pass
"""


def registered_revision() -> str:
    meta = registered_meta(JINA)
    assert meta is not None and runs_own_code(meta)
    return meta.revision


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A hub cache with MTEB's revision of the model and a fork, both importing the marker code."""
    root = tmp_path_factory.mktemp("remote-code")
    for model, revision in ((JINA, registered_revision()), (JINA, FORK), (UNREGISTERED, FORK)):
        repo = root / "hub" / f"models--{model.replace('/', '--')}"
        snapshot = shutil.copytree(MODELS["all-MiniLM-L6-v2"].path(), repo / "snapshots" / revision)
        config = json.loads((snapshot / "config.json").read_text())
        config["auto_map"] = {"AutoModel": "modeling_marker.MarkerModel"}
        (snapshot / "config.json").write_text(json.dumps(config))
        (snapshot / "modeling_marker.py").write_text(MODELING)
    return root


def bench(hub: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_CACHE": str(hub / "hub"),
        "HF_MODULES_CACHE": str(hub / "modules"),
        "BENCH_TEST_MARKER": str(hub / "marker"),
        "INSTRUCT_BENCH_CACHE": str(hub / "bench-cache"),
    }
    return subprocess.run(
        [sys.executable, "-m", "bench", *argv], env=env, capture_output=True, text=True, timeout=900, check=False
    )


def marker(hub: Path) -> list[str]:
    """Lines the repository's code wrote, and a fresh start for the next step."""
    path = hub / "marker"
    lines = path.read_text().splitlines() if path.exists() else []
    path.unlink(missing_ok=True)
    return lines


def submission(hub: Path, revision: str, *flags: str, model: str = JINA) -> Path:
    """The submitter's `bench run` of `model` at `revision`."""
    out = hub / f"submitted-{model.split('/')[0]}-{revision[:6]}"
    done = bench(
        hub, "run", "--model", model, "--model-revision", revision, *flags, "-t", TASK, "--output-dir", str(out)
    )
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def pinned(hub: Path) -> tuple[Path, str]:
    """A user's plain `bench run` of the model (MTEB's revision, no flag): its output folder and stderr."""
    out = hub / "pinned"
    done = bench(hub, "run", "--model", JINA, "-t", TASK, "--output-dir", str(out))
    assert done.returncode == 0, done.stderr
    assert marker(hub), "MTEB's loader imports the repository's code"
    return out, done.stderr


def verify(hub: Path, root: Path, *flags: str) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    out = hub / "verification.json"
    done = bench(hub, "leaderboard", "verify", str(root), "--out", str(out), "--no-cache", *flags)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    return done, json.loads(out.read_text())["results"]


def test_registry_knows_which_loaders_run_their_own_code_or_an_api():
    """The registry facts the rules read, on models whose loaders are known (a kwarg, a class, an API)."""
    assert runs_own_code(registered_meta(JINA))
    assert runs_own_code(registered_meta("nomic-ai/nomic-embed-text-v1.5"))
    assert not runs_own_code(registered_meta("sentence-transformers/all-MiniLM-L6-v2"))
    assert is_api_client(registered_meta("openai/text-embedding-3-small"))
    assert is_api_client(registered_meta("cohere/embed-english-v3.0"))
    assert not is_api_client(registered_meta(JINA))
    assert registered_meta("someone/unregistered-model") is None


@pytest.mark.slow
def test_verify_runs_no_code_the_submitter_chose(hub, pinned):
    """Issue 30, probe 1: a fork's revision is never loaded, even when the maintainer trusts the model;
    MTEB's revision runs the repository's code only when the maintainer names the model."""
    forked = submission(hub, FORK, "--trust-remote-code")
    assert marker(hub), "the submitter's run imports the repository's code"
    done, verdicts = verify(hub, forked, "--trust-remote-code", JINA)
    assert done.returncode == 1 and not marker(hub), done.stdout
    assert {v["verified"] for v in verdicts} == {False}
    assert all("revision differs from the registry's" in v["note"] for v in verdicts), verdicts

    done, verdicts = verify(hub, pinned[0])
    assert done.returncode == 1 and not marker(hub), done.stdout
    assert all("runs its own code" in v["note"] and "--trust-remote-code" in v["note"] for v in verdicts), verdicts

    done, verdicts = verify(hub, pinned[0], "--trust-remote-code", JINA)  # the maintainer's explicit choice
    assert done.returncode == 0, done.stdout
    assert marker(hub) and {v["verified"] for v in verdicts} == {True}


@pytest.mark.slow
def test_bench_run_says_when_a_models_own_code_runs_and_refuses_another_revision(hub, pinned):
    """`bench run` names the repository and revision whose code it runs, and refuses a revision other than
    MTEB's unless `--trust-remote-code` is given (nothing is loaded before it refuses)."""
    out = hub / "refused"
    done = bench(hub, "run", "--model", JINA, "--model-revision", FORK, "-t", TASK, "--output-dir", str(out))
    assert done.returncode == 2 and not marker(hub), done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and FORK in errors[0] and "--trust-remote-code" in errors[0], done.stderr
    assert not out.exists()

    said = [line for line in pinned[1].splitlines() if "runs its own code" in line]
    line = (
        f"{JINA} runs its own code from its hub repository (https://huggingface.co/{JINA}) at revision "
        f"{registered_revision()[:12]}: MTEB's loader for it passes trust_remote_code=True"
    )
    assert said == [line], pinned[1]


@pytest.mark.slow
def test_an_unregistered_hub_model_runs_its_code_only_when_asked(hub):
    """Without `--trust-remote-code` the repository's `auto_map` is not followed (transformers' own class
    loads the weights), in `bench run` and in a verification; with it, the line names the repository."""
    plain = submission(hub, FORK, model=UNREGISTERED)
    assert not marker(hub)
    done, verdicts = verify(hub, plain)
    assert done.returncode == 0 and not marker(hub), done.stdout
    assert {v["verified"] for v in verdicts} == {True}

    done = bench(
        hub, "run", "--model", UNREGISTERED, "--model-revision", FORK, "--trust-remote-code", "-t", TASK,
        "--output-dir", str(hub / "asked"),
    )  # fmt: skip
    assert done.returncode == 0 and marker(hub), done.stderr
    assert f"{UNREGISTERED} runs its own code from its hub repository" in done.stderr


def _record(spec: str, revision: str, family: str = "mteb") -> dict:
    """The fields of a run record that decide a re-run (bench/results/store.py `run_settings`)."""
    model = {"spec": spec, "name": spec, "revision": revision, "family": family, "settings": {}}
    return {"model": model, "task": {"limit": None, "seed": 42, "instructions": None}}


@pytest.mark.parametrize("model", ["openai/text-embedding-3-small", "cohere/embed-english-v3.0"])
@pytest.mark.parametrize("base_url", [None, "http://127.0.0.1:9/v1"])
def test_mtebs_api_clients_are_never_re_run(model, base_url):
    """Issue 30, probe 2: MTEB's API loaders would call the provider with the maintainer's key."""
    meta = registered_meta(model)
    with pytest.raises(Refused, match="calls its provider's API directly"):
        rerun_plan(_record(model, meta.revision), base_url=base_url)


def test_a_registered_model_is_re_run_only_at_mtebs_revision_and_its_code_only_when_named():
    with pytest.raises(Refused, match="revision differs from the registry's"):
        rerun_plan(_record(JINA, FORK), trusted=[JINA])
    with pytest.raises(Refused, match=f"--trust-remote-code {JINA}"):
        rerun_plan(_record(JINA, registered_revision()))
    plan = rerun_plan(_record(JINA, registered_revision()), trusted=[JINA])
    assert (plan.revision, plan.options) == (registered_revision(), {"trust_remote_code": True})
    minilm = "sentence-transformers/all-MiniLM-L6-v2"
    plan = rerun_plan(_record(minilm, registered_meta(minilm).revision))
    assert plan.options == {} and plan.revision == registered_meta(minilm).revision
    with pytest.raises(Refused, match="revision differs"):
        rerun_plan(_record(minilm, FORK))
