"""Verification fault suite: a hostile submission that validation accepts must never be shown as verified.

`bench leaderboard verify` re-runs a submission on the maintainer's machine, so everything the run record
says is hostile input. Each probe of `PROBES` builds one submission from real `bench run` output, edits
it as an attacker would, runs the real CLI (`bench leaderboard verify`) and asserts the verdict and its
reason: the re-run loads the model by what it is (not under its claimed name), takes from the record
only the options that change vectors, contacts no endpoint the submitter chose, and compares the
model's published facts (model_meta.json) too. The servers count every request and the headers it
carried, so "the recorded endpoint got nothing and saw no key" is measured, not assumed.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bench.cli.main import main
from bench.leaderboard import build
from fake_openai import FakeOpenAI, fake_vector
from leaderboard_fixtures import edit_json

KEY = "sk-maintainer-SeCrEt-7f3a"  # the maintainer's $OPENAI_API_KEY: it must reach no submitter's server
DEMO_TASK = "DemoInstructSTS"


class OtherVectors(FakeOpenAI):
    """A submitter's endpoint: answers like a real one, with vectors of its own choosing."""

    def _reply(self, path, body):
        status, payload = super()._reply(path, body)
        if path == "/v1/embeddings":
            for item in payload.get("data", []):
                item["embedding"] = fake_vector(f"rigged {item['index']}", self.dim)
        return status, payload


@dataclass
class Servers:
    honest: FakeOpenAI  # the maintainer's endpoint (same model as the submitter's honest one)
    rigged: OtherVectors  # an endpoint the submitter controls

    def close(self) -> None:
        self.honest.close()
        self.rigged.close()


@pytest.fixture(scope="module")
def servers():
    s = Servers(FakeOpenAI(api_key=None).start(), OtherVectors(api_key=None).start())
    yield s
    s.close()


def _run(argv: list[str]) -> None:
    assert main(["run", "-q", *argv]) == 0


@dataclass
class Ctx:
    tmp: Path
    demo: Path
    servers: Servers
    cache: Path
    verify_args: list[str] = field(default_factory=list)


def _api_submission(ctx: Ctx, url: str) -> Path:
    out = ctx.tmp / "api"
    _run(
        [
            "--model",
            "openai:fake",
            "--base-url",
            url,
            "-t",
            DEMO_TASK,
            "DemoNYTClustering",
            "--output-dir",
            str(out),
            "--cache-dir",
            str(ctx.tmp / "api-cache"),
        ]
    )
    return out


def _set_settings(root: Path, **settings: object) -> None:
    for record in root.rglob("run_records/*.json"):
        edit_json(record, lambda d: d["model"]["settings"].update(settings))


def _set_meta(root: Path, **facts: object) -> None:
    for meta in root.rglob("model_meta.json"):
        edit_json(meta, lambda d: d.update(facts))


# ---------------------------------------------------------------------------------------- probes
def rigged_endpoint_no_url(ctx: Ctx) -> Path:
    """An API result made against the submitter's endpoint, with runtime settings that would hang or
    crash a re-run that took them (timeout 1e6, 100 retries, cache_dir, use_cache)."""
    root = _api_submission(ctx, ctx.servers.rigged.base_url)
    _set_settings(root, timeout=1e6, max_retries=100, cache_dir="/tmp/elsewhere", use_cache=False)
    return root


def rigged_endpoint_maintainer_url(ctx: Ctx) -> Path:
    """The same, verified against the maintainer's own endpoint: the rigged vectors' scores are not reproduced."""
    ctx.verify_args += ["--base-url", ctx.servers.honest.base_url]
    return rigged_endpoint_no_url(ctx)


def honest_api_hostile_runtime(ctx: Ctx) -> Path:
    """An honest API result whose record carries hostile runtime settings: verified against the
    maintainer's endpoint, the settings ignored (no hang, no TypeError)."""
    ctx.verify_args += ["--base-url", ctx.servers.honest.base_url]
    root = _api_submission(ctx, ctx.servers.honest.base_url)
    _set_settings(root, timeout=1e6, max_retries=100, cache_dir="/tmp/elsewhere", use_cache=False, max_concurrency=64)
    return root


def renamed_minilm(ctx: Ctx) -> Path:
    """all-MiniLM-L6-v2 run under a claimed name, its model_meta.json edited to 7B / 4096-d."""
    out = ctx.tmp / "renamed"
    _run(
        [
            "--model",
            "all-MiniLM-L6-v2",
            "--model-name",
            "bigcorp/SuperEmbed-7B",
            "-t",
            DEMO_TASK,
            "--output-dir",
            str(out),
            "--cache-dir",
            str(ctx.cache),
        ]
    )
    _set_meta(out, n_parameters=7_000_000_000, embed_dim=4096, reference="https://huggingface.co/bigcorp/SuperEmbed-7B")
    return out


def inflated_facts(ctx: Ctx) -> Path:
    """The true name, but model_meta.json claims 7B parameters and another model's card."""
    root = Path(shutil.copytree(ctx.demo, ctx.tmp / "facts"))
    _set_meta(root, n_parameters=7_000_000_000, reference="https://huggingface.co/intfloat/e5-mistral-7b-instruct")
    return root


def path_spec(ctx: Ctx) -> Path:
    """A spec naming a path on the maintainer's machine."""
    root = Path(shutil.copytree(ctx.demo, ctx.tmp / "path"))
    for record in root.rglob("run_records/*.json"):
        edit_json(record, lambda d: d["model"].update(spec="st:/root/.cache/some-model"))
    return root


def path_option(ctx: Ctx) -> Path:
    """A vector option naming a path elsewhere (a re-encoder, a template file)."""
    root = Path(shutil.copytree(ctx.demo, ctx.tmp / "path-option"))
    _set_settings(root, template="../../etc/passwd")
    return root


def hostile_local_settings(ctx: Ctx) -> Path:
    """Runtime settings of a local model (device, cache, batch size) are the maintainer's, not the record's."""
    root = Path(shutil.copytree(ctx.demo, ctx.tmp / "local-runtime"))
    _set_settings(
        root, device="cuda:7", cache_dir="/nonexistent", use_cache=False, batch_size=10**9, show_progress_bar=True
    )
    return root


@dataclass(frozen=True)
class Probe:
    make: Callable[[Ctx], Path]
    verified: bool
    note: str  # in every verdict's note
    rigged_requests: bool = False  # whether the submitter's endpoint may be contacted (never)


PROBES: dict[str, Probe] = {
    "openai result, submitter's endpoint, no --base-url": Probe(
        rigged_endpoint_no_url, False, "re-run only against an endpoint the maintainer names"
    ),
    "openai result, submitter's endpoint, maintainer's --base-url": Probe(
        rigged_endpoint_maintainer_url, False, "score(s) differ by more than"
    ),
    "openai result with hostile runtime settings": Probe(honest_api_hostile_runtime, True, "all scores agree"),
    "MiniLM renamed bigcorp/SuperEmbed-7B, 7B / 4096-d": Probe(
        renamed_minilm,
        False,
        "model name ('sentence-transformers/all-MiniLM-L6-v2', the submission says 'bigcorp/SuperEmbed-7B')",
    ),
    "model_meta.json claims 7B under the true name": Probe(inflated_facts, False, "model_meta.json n_parameters"),
    "spec names a path on the maintainer's machine": Probe(
        path_spec, False, "names a path outside the working directory"
    ),
    "a vector option names a path elsewhere": Probe(path_option, False, "names a path outside the working directory"),
    "local model, hostile runtime settings": Probe(hostile_local_settings, True, "all scores agree"),
}


@pytest.mark.parametrize("probe", list(PROBES))
def test_hostile_submission_is_judged_by_what_it_is(probe, servers, demo_results, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    spec = PROBES[probe]
    ctx = Ctx(tmp_path, demo_results, servers, demo_results.parent / "lb-cache")
    monkeypatch.delenv("OPENAI_API_KEY")  # the submitter's run: no key of the maintainer's
    submission = spec.make(ctx)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    before = len(servers.rigged.requests)
    out = tmp_path / "verification.json"
    code = main(
        ["leaderboard", "verify", str(submission), "--out", str(out), "--cache-dir", str(ctx.cache), *ctx.verify_args]
    )
    printed = "".join(capsys.readouterr())
    assert code == (0 if spec.verified else 1), printed
    assert "Traceback" not in printed
    verdicts = json.loads(out.read_text())["results"]
    assert verdicts and {v["verified"] for v in verdicts} == {spec.verified}, verdicts
    for verdict in verdicts:
        assert spec.note in verdict["note"], verdict["note"]
    # the submitter's endpoint got nothing: no request, so no key and no task text
    assert len(servers.rigged.requests) == before
    assert KEY not in out.read_text() + printed


def test_a_verified_row_that_edits_its_facts_is_self_reported(demo_results, tmp_path):
    """model_meta.json is in the verified hash: edited to 70B with another card after verification, the
    rows fall back to self-reported."""
    packed, verification = tmp_path / "minilm.zip", tmp_path / "v.json"
    assert main(["submit", str(demo_results), "--out", str(packed)]) == 0
    assert (
        main(
            [
                "leaderboard",
                "verify",
                str(packed),
                "--out",
                str(verification),
                "--cache-dir",
                str(demo_results.parent / "lb-cache"),
            ]
        )
        == 0
    )
    data = build([packed], tmp_path / "site", verifications=[verification]).data
    assert {m["verification"] for m in data["models"]} == {"verified"}
    edited = tmp_path / "edited"
    with zipfile.ZipFile(packed) as z:
        z.extractall(edited)
    (edited / "manifest.json").unlink()  # a forger drops the manifest (a plain folder is a valid submission)
    _set_meta(edited, n_parameters=70_000_000_000, reference="https://huggingface.co/meta-llama/Llama-3.1-70B")
    data = build([edited], tmp_path / "site2", verifications=[verification]).data
    assert {m["verification"] for m in data["models"]} == {"self-reported"}


def test_every_probe_is_a_distinct_attack():
    assert len(PROBES) >= 8 and len({p.make for p in PROBES.values()}) == len(PROBES)
