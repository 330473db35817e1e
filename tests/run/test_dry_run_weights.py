"""`bench run --dry-run` loads no weights: it counts from the data and the tokenizer, never the model.

Each dry run goes in one subprocess that records every weight file opened: Python's audit hook sees
`open` (torch.load, GGUF and `.bin` readers), and `safetensors.safe_open` is wrapped before transformers
binds it (safetensors reads through Rust, which the audit hook never sees). A local copy's files are
hashed once for the embedding cache's key (`bench/adapters/identity.py`, memoized); that hash is taken
before recording starts, since reading bytes to hash them loads nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow  # starts a Python process that imports MTEB and runs three dry runs

WEIGHTS = (".safetensors", ".bin", ".gguf", ".pt", ".pth", ".ckpt")
TASKS = ["DemoInstructSTS", "DemoIntentEmotion"]
# `bench run -t DemoInstructSTS DemoIntentEmotion --dry-run` of the packaged all-MiniLM-L6-v2 before dry runs
# stopped building the model (it loaded the weights then): the counts must not change.
MINILM_TEXTS = {"DemoInstructSTS": 120, "DemoIntentEmotion": 192}

_SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    recording, opened = False, []

    def hook(event, args):
        if recording and event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            opened.append(os.fsdecode(args[0]))

    sys.addaudithook(hook)
    import safetensors
    real_safe_open = safetensors.safe_open

    def safe_open(filename, *args, **kwargs):
        if recording:
            opened.append(os.fsdecode(filename))
        return real_safe_open(filename, *args, **kwargs)

    safetensors.safe_open = safe_open  # before transformers' `from safetensors import safe_open`
    from bench.adapters.registry import load_model
    from bench.run.dry_run import dry_run
    from bench.run.runner import RunOptions

    load_model("all-MiniLM-L6-v2")  # hashes the copy's files (memoized): reads bytes, loads nothing
    out = {}
    for model in sys.argv[2:]:
        recording, opened[:] = True, []
        options = RunOptions(model=model, tasks=TASKS, output_dir=sys.argv[1] + "/out", cache_dir=sys.argv[1] + "/c")
        found = [{"task": e.task, "texts": e.texts, **e.estimate} for e in dry_run(options)]
        recording = False
        out[model] = {"estimates": found, "weights": sorted({p for p in opened if p.endswith(WEIGHTS)})}
    print("RESULT " + json.dumps(out))
    """
)


@pytest.fixture(scope="module")
def dry_runs(tmp_path_factory):
    """{model: {estimates, weights opened}} of one process's dry runs of three models."""
    tmp = tmp_path_factory.mktemp("dry")
    script = f"TASKS = {TASKS!r}\nWEIGHTS = {WEIGHTS!r}\n" + _SCRIPT
    models = ["all-MiniLM-L6-v2", "intfloat/e5-mistral-7b-instruct", "mongodb/voyage-3"]
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "INSTRUCT_BENCH_CACHE": str(tmp / "bench-cache"),
        "MTEB_CACHE": str(tmp / "mteb-cache"),
        "HF_DATASETS_CACHE": str(tmp / "hf-datasets"),
        "TOKENIZERS_PARALLELISM": "false",
    }
    proc = subprocess.run(
        [sys.executable, "-c", script, str(tmp), *models],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


def test_local_model_dry_run_opens_no_weight_file_and_counts_as_before(dry_runs):
    run = dry_runs["all-MiniLM-L6-v2"]
    assert run["weights"] == []
    assert {e["task"]: e["texts"] for e in run["estimates"]} == MINILM_TEXTS
    for e in run["estimates"]:  # its tokenizer is local: real token counts, said so
        assert e["tokens_method"] == "the model's tokenizer" and e["tokens"] > e["texts"]


@pytest.mark.parametrize("model", ["intfloat/e5-mistral-7b-instruct", "mongodb/voyage-3"])
def test_zoo_model_dry_run_counts_offline_without_building_the_model(dry_runs, model):
    """Not in the local hub cache: building it would download its weights (14 GB for e5-mistral), and
    offline the dry run failed; now MTEB's wrapper renders every input (e5-mistral: a SentenceTransformer
    stood in for) or, for an implementation of its own (Voyage's API client), MTEB's rows are counted with
    the implementation never built; tokens are estimated from characters."""
    run = dry_runs[model]
    assert run["weights"] == []
    texts = {e["task"]: e["texts"] for e in run["estimates"]}
    assert set(texts) == set(MINILM_TEXTS) and all(n > 0 for n in texts.values())
    for e in run["estimates"]:
        assert e["tokens_method"].startswith("an estimate of 4 characters a token") and e["tokens"] > 0
