"""Instruction use is measured from each setting's own rendering (bench/adapters/base.py `instruction_use`).

One text rendered under two different instructions: the same model input means the setting is
instruction-blind. Every registered family is covered here (a new family fails `test_every_family_is_covered`
until it has a case), and a run writes the verdict into its run record, where tables and the leaderboard
read it (bench/results/marks.py).
"""

from __future__ import annotations

import json

import pytest

from bench.adapters.registry import load_model
from bench.results.marks import follows_instructions, is_baseline

FAMILIES = {
    "mteb",
    "sentence-transformers",
    "gstransform",
    "inbedder",
    "instructor",
    "metaeol",
    "openai",
    "prompteol",
    "standin",
}


@pytest.fixture(scope="module")
def sts_metadata():
    from bench import tasks

    return tasks.TASKS["DemoInstructSTS"]().metadata


def test_every_family_is_covered():
    """The harness's own families (tests register toy ones in the same process)."""
    from bench.adapters.registry import FAMILIES as REGISTERED, discover

    discover()
    assert {f for f, cls in REGISTERED.items() if cls.__module__.startswith("bench.adapters.")} == FAMILIES


@pytest.mark.parametrize(
    ("spec", "options", "follows"),
    [
        ("st:{minilm}", {"template": "prefix"}, True),
        ("st:{minilm}", {"template": "none"}, False),
        ("st:{minilm}", {"template": "model"}, False),  # MiniLM has no prompts: the instruction never reaches it
        ("st:{minilm}", {"template": "Instruct: {instruction}\nQuery: {text}"}, True),
        ("prompteol:{minilm}", {}, False),  # PromptEOL's prompt has no slot for an instruction
        ("prompteol:{minilm}", {"instruction_template": "{instruction} "}, True),
        ("metaeol:{minilm}", {}, False),
        ("inbedder:{minilm}", {}, True),  # InBedder's qa pattern holds the instruction
        ("instructor:{minilm}", {}, True),
        ("openai:text-embedding-3-small", {}, True),
        ("openai:text-embedding-3-small", {"template": "none"}, False),
        ("standin:probe", {}, True),
    ],
)
def test_a_setting_is_blind_exactly_when_its_input_ignores_the_instruction(
    spec, options, follows, minilm_path, sts_metadata
):
    model = load_model(spec.format(minilm=minilm_path), **options)
    use = model.instruction_use(sts_metadata)
    assert use["follows_instructions"] is follows
    assert use["method"] == "render" and len(set(use["probe"]["instructions"])) == 2


def test_mteb_implementation_is_probed_through_its_own_loader(sts_metadata):
    """MTEB's query loader puts the instruction after the text (`text + " " + instruction`), so MiniLM as
    MTEB runs it does see the instruction: measured through MTEB's wrapper, not read from its registry
    flag (`use_instructions` is False for MiniLM)."""
    model = load_model("all-MiniLM-L6-v2")
    use = model.instruction_use(sts_metadata)
    assert use == {**use, "follows_instructions": True, "method": "render"}
    assert model.registry_meta is None or model.registry_meta.use_instructions is False
    assert model.stats.encoded == 0  # the probe encodes nothing


def test_gstransform_routes_by_instruction():
    from bench.adapters.gstransform import GSTransformEncoder

    bare = GSTransformEncoder.__new__(GSTransformEncoder)  # its rendering needs no transforms
    assert bare.instruction_use()["follows_instructions"] is True


def test_run_records_the_verdict_and_tables_read_it(tmp_path):
    from bench.run.runner import RunOptions, run

    outcomes = run(
        RunOptions(
            model="all-MiniLM-L6-v2",
            tasks=["DemoInstructSTS"],
            template="none",
            output_dir=str(tmp_path / "out"),
            cache_dir=str(tmp_path / "cache"),
        )
    )
    record = outcomes[0].record
    assert record["model"]["instruction_use"]["follows_instructions"] is False
    assert is_baseline(json.loads(json.dumps(record)))


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"model": {"instruction_use": {"follows_instructions": True}, "settings": {"template": "none"}}}, True),
        ({"model": {"settings": {"instruction_template": "none"}}}, False),  # before the measurement
        ({"model": {"settings": {"template": "prefix"}}}, None),
        (None, None),
    ],
)
def test_older_records_fall_back_to_the_template(record, expected):
    assert follows_instructions(record) is expected
