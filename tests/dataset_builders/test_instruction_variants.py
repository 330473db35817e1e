"""`bench build-data instruction-variants` (bench/dataset_builders/instruction_variants.py) against the fake OpenAI
server, and the hand-checked built-in variants file bench/tasks/instruction_variants/generic-sts.yaml."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from bench import tasks
from bench.core.errors import BenchError, ConfigError, DataError, UnknownNameError
from bench.core.variants import builtin_variant_files, load_variants
from bench.dataset_builders import llm_prompts as P
from bench.dataset_builders.instruction_variants import build_instruction_variants
from bench.dataset_builders.registry import get_builder
from bench.tasks.generic import RERANKING_INSTRUCTIONS, STS_INSTRUCTIONS

CHAT = "/v1/chat/completions"
STS = ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICK-R")


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


def asked(req) -> tuple[str, int]:
    """(the instruction to paraphrase, how many paraphrases) from the prompt."""
    m = re.search(r'task: "(.*)"\n\nWrite (\d+) paraphrases', req["messages"][0]["content"], re.DOTALL)
    return m.group(1), int(m.group(2))


def paraphraser(req) -> str:
    """A stand-in LLM: N distinct paraphrases, colon kept, trailing space trimmed (as models do)."""
    original, n = asked(req)
    core = original.strip().rstrip(":")
    return json.dumps({"paraphrases": [f"{core} (wording {i + 1}):" for i in range(n)]})


def build(server, out, cache, **kw):
    kw.setdefault("size", 3)
    return build_instruction_variants(
        out_dir=out, seed=7, llm_model="fake", base_url=server.base_url, llm_cache_dir=cache, max_retries=1, **kw
    )


def test_registered_as_an_llm_builder_without_raw_files():
    builder = get_builder("instruction-variants")
    assert builder.uses_llm and not builder.needs_source and builder.options == ("tasks", "suite")
    assert builder.function() is build_instruction_variants


def test_default_suite_file_loads_with_the_original_first(fake_openai, tmp_path):
    fake_openai.chat_handler = paraphraser
    result = build(fake_openai, tmp_path / "out", tmp_path / "cache")
    path = tmp_path / "out" / "instruction_variants.yaml"
    vf = load_variants(path, known_tasks=tasks.TASKS)
    assert list(vf.variants) == list(tasks.SUITES["generic-sts"]) == list(STS)
    for task in STS:
        texts = [v.instruction for v in vf.for_task(task)]
        assert len(texts) == 4 and texts[0] == STS_INSTRUCTIONS[task]
        original = STS_INSTRUCTIONS[task]
        assert texts[1:] == [f"{original.strip().rstrip(':')} (wording {i}): " for i in (1, 2, 3)]  # space restored
    # One request per distinct instruction: "Represent the statement: " and "represent the statement: ".
    calls = fake_openai.calls(CHAT)
    assert sorted(asked(c)[0] for c in calls) == ["Represent the statement: ", "represent the statement: "]
    assert calls[0]["messages"][0]["content"] == P.fill(P.INSTRUCTION_PARAPHRASE, instruction=asked(calls[0])[0], n="3")
    assert vf.name == "generic-sts-paraphrases" and "fake" in vf.source and "test-key" not in vf.source
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["llm"]["model"] == "fake" and manifest["llm"]["endpoint"] == fake_openai.base_url
    assert manifest["seed"] == 7 and manifest["size"] == 3 and manifest["failures"] == []
    assert (
        manifest["prompts"]["instruction_variants.paraphrase"]["sha256"]
        == hashlib.sha256(P.INSTRUCTION_PARAPHRASE.encode()).hexdigest()
    )
    assert manifest["outputs"]["instruction_variants.yaml"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert [s["task"] for s in manifest["sources"]] == list(STS) and manifest["counts"]["variants_per_task"] == 4
    assert "test-key" not in json.dumps(manifest) + path.read_text()
    assert result["summary"]["ledger"]["requests_sent"] == 2


def test_reranking_slots_are_paraphrased_separately_and_paired(fake_openai, tmp_path):
    fake_openai.chat_handler = paraphraser
    build(fake_openai, tmp_path / "v.yaml", tmp_path / "cache", tasks=["SciDocsRR", "AskUbuntuDupQuestions"], size=2)
    vf = load_variants(tmp_path / "v.yaml", known_tasks=tasks.TASKS)
    assert (tmp_path / "v.manifest.json").is_file() and vf.name == "v"
    sci = [v.instruction for v in vf.for_task("SciDocsRR")]
    assert sci[0] == {
        "query": RERANKING_INSTRUCTIONS["SciDocsRR"]["query"],
        "document": RERANKING_INSTRUCTIONS["SciDocsRR"]["corpus"],
    }
    assert sci[2] == {
        "query": "Represent the Scientific title (wording 2): ",
        "document": "Represent the Scientific document (wording 2): ",
    }
    ubuntu = [v.instruction for v in vf.for_task("AskUbuntuDupQuestions")]
    assert len(ubuntu) == 3 and all(v["query"] == v["document"] for v in ubuntu)  # one text, one request
    assert len(fake_openai.calls(CHAT)) == 3


def test_rebuild_from_cache_sends_nothing_and_is_byte_identical(fake_openai, tmp_path):
    fake_openai.chat_handler = paraphraser
    build(fake_openai, tmp_path / "a", tmp_path / "cache")
    sent = len(fake_openai.requests)
    again = build(fake_openai, tmp_path / "b", tmp_path / "cache")
    assert len(fake_openai.requests) == sent and again["summary"]["ledger"]["cache_hits"] == 2
    assert again["summary"]["ledger"]["requests_sent"] == 0
    for name in ("instruction_variants.yaml", "manifest.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_dry_run_sends_and_writes_nothing(fake_openai, tmp_path, capsys):
    result = build(fake_openai, tmp_path / "out", tmp_path / "cache", size=5, dry_run=True)
    assert fake_openai.requests == [] and not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()
    assert result["summary"]["dry_run"] and result["summary"]["requests"] == 2 and result["summary"]["tasks"] == 7
    assert "2 requests to fake" in capsys.readouterr().err


def test_a_bad_reply_is_asked_again(fake_openai, tmp_path):
    def duplicates_first(req):  # retry k is sent with seed + k
        if req["seed"] == 7:
            return json.dumps({"paraphrases": ["Represent the text:"] * asked(req)[1]})
        return paraphraser(req)

    fake_openai.chat_handler = duplicates_first
    result = build(fake_openai, tmp_path / "out", tmp_path / "cache", tasks=["STS12"])
    assert len(fake_openai.calls(CHAT)) == 2 and result["failures"] == []
    assert result["summary"]["ledger"]["invalid_replies"] == 1
    assert len(load_variants(tmp_path / "out" / "instruction_variants.yaml").for_task("STS12")) == 4


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (lambda n: ["Represent the sentence:"] * (n - 1), "does not match the schema"),  # wrong count
        (
            lambda n: (
                ["Represent the sentence:", "represent the  sentence: "] + [f"Represent it {i}:" for i in range(n - 2)]
            ),
            "repeats a paraphrase",
        ),
        (lambda n: ["Represent the statement:"] + [f"Represent it {i}:" for i in range(n - 1)], "repeats the original"),
        (lambda n: [f"Represent sentence {i}." for i in range(n)], "does not end with ':'"),
    ],
)
def test_replies_that_stay_invalid_give_a_clear_error(fake_openai, tmp_path, reply, error):
    fake_openai.chat_handler = lambda req: json.dumps({"paraphrases": reply(asked(req)[1])})
    with pytest.raises(DataError, match=f"no task got 3 valid paraphrases from fake; STS12: attempt 2: .*{error}"):
        build(fake_openai, tmp_path / "out", tmp_path / "cache", tasks=["STS12"])
    assert len(fake_openai.calls(CHAT)) == 2 and not (tmp_path / "out").exists()


def test_tasks_whose_replies_fail_are_left_out_and_listed(fake_openai, tmp_path):
    def lower_case_fails(req):
        return "I cannot help." if asked(req)[0].startswith("represent") else paraphraser(req)

    fake_openai.chat_handler = lower_case_fails
    result = build(fake_openai, tmp_path / "out", tmp_path / "cache")
    vf = load_variants(tmp_path / "out" / "instruction_variants.yaml")
    assert set(vf.variants) == set(STS) - {"STS13", "STSBenchmark"}
    assert [f["task"] for f in result["failures"]] == ["STS13", "STSBenchmark"]
    assert "not JSON" in result["failures"][0]["error"] and result["summary"]["failures"] == 2


@pytest.mark.parametrize(
    ("task", "why"),
    [
        ("FewRelClustering", "already run under its own instruction lists (10 correct, 10 implicit, 10 incorrect)"),
        ("InstructSTSB", "per row"),
        ("IntentEmotion", "per criterion"),
    ],
)
def test_a_task_without_one_instruction_is_a_config_error(fake_openai, tmp_path, task, why):
    with pytest.raises(ConfigError, match=re.escape(why)) as info:
        build(fake_openai, tmp_path / "out", tmp_path / "cache", tasks=["STS12", task])
    assert task in str(info.value) and fake_openai.requests == []


def test_an_unknown_task_is_an_error_with_suggestions(fake_openai, tmp_path):
    with pytest.raises(UnknownNameError, match=r"Unknown task 'STS99'. Did you mean: STS1") as info:
        build(fake_openai, tmp_path / "out", tmp_path / "cache", tasks=["STS99"])
    assert isinstance(info.value, BenchError) and fake_openai.requests == []


def test_size_must_be_positive(fake_openai, tmp_path):
    with pytest.raises(ConfigError, match="--size"):
        build(fake_openai, tmp_path / "out", tmp_path / "cache", size=0)


def test_cli_builds_without_source_dir_and_prints_one_line(fake_openai, tmp_path, capsys):
    from bench.cli.main import main

    fake_openai.chat_handler = paraphraser
    out = tmp_path / "variants.json"
    code = main(
        [
            "build-data",
            "instruction-variants",
            "-t",
            "STS12",
            "SICK-R",
            "--size",
            "2",
            "--out",
            str(out),
            "--llm-model",
            "fake",
            "--base-url",
            fake_openai.base_url,
            "--llm-cache-dir",
            str(tmp_path / "c"),
        ]
    )
    stdout, _ = capsys.readouterr()
    assert code == 0 and len(stdout.strip().splitlines()) == 1
    assert f"Built instruction-variants into {out}: 2 task(s) x 3 variants" in stdout
    assert set(json.loads(out.read_text())["tasks"]) == {"STS12", "SICK-R"}
    assert set(load_variants(out).variants) == {"STS12", "SICK-R"}


def test_cli_errors_are_one_line(fake_openai, tmp_path, capsys, raw_dir):
    from bench.cli.main import main

    argv = ["--out", str(tmp_path / "o"), "--llm-model", "fake", "--base-url", fake_openai.base_url]
    assert main(["build-data", "instruction-variants", "-t", "InstructSTSB", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: build-data instruction-variants: InstructSTSB has no single task-level")
    assert main(["build-data", "instruct-stsb", "--source-dir", str(raw_dir), "--suite", "generic-sts", *argv]) == 2
    assert "takes no --suite" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- built-in file
def test_builtin_generic_sts_file():
    assert "generic-sts" in builtin_variant_files()
    vf = load_variants("generic-sts", known_tasks=tasks.TASKS)
    assert vf.name == "generic-sts" and vf.source.startswith("hand-written paraphrases of INSTRUCTOR's STS")
    assert set(tasks.SUITES["generic-sts"]) <= set(vf.variants)
    for task in tasks.SUITES["generic-sts"]:
        variants = vf.for_task(task)
        assert len(variants) == 3 and variants[0].instruction == tasks.TASKS[task].instruction
        for v in variants:  # INSTRUCTOR's form: an imperative ending in a colon and one space
            assert v.instruction.lower().startswith("represent") and v.instruction.endswith(": ")


def test_credentials_in_the_endpoint_are_never_printed(fake_openai, tmp_path, capsys):
    """A credential in the query string is printed masked; one in user:pass@ (which the client would send as
    HTTP Basic auth instead of the API key) is refused, its error naming the endpoint redacted."""

    build_instruction_variants(
        out_dir=tmp_path / "out",
        llm_model="fake",
        base_url=f"{fake_openai.base_url}?api-key=s3cret",
        llm_cache_dir=tmp_path / "c",
        dry_run=True,
    )
    err = capsys.readouterr().err
    assert "2 requests to fake at http://127.0.0.1" in err and "api-key=***" in err and "s3cret" not in err
    url = fake_openai.base_url.replace("http://", "http://user:s3cret@")
    with pytest.raises(ConfigError, match=r"--base-url http://\*\*\*@127\.0\.0\.1.*HTTP Basic auth") as refused:
        build_instruction_variants(
            out_dir=tmp_path / "out", llm_model="fake", base_url=url, llm_cache_dir=tmp_path / "c", dry_run=True
        )
    assert "s3cret" not in str(refused.value) + capsys.readouterr().err


def test_a_manifest_beside_a_builtin_file_is_not_a_variants_file(fake_openai, tmp_path, monkeypatch):
    import bench.core.variants

    fake_openai.chat_handler = paraphraser
    build(fake_openai, tmp_path / "mine.yaml", tmp_path / "cache", tasks=["STS12"])
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["mine.manifest.json", "mine.yaml"]
    monkeypatch.setattr(bench.core.variants, "BUILTIN_DIR", tmp_path)
    assert list(builtin_variant_files()) == ["mine"]
    assert load_variants("mine").name == "mine"
