"""Instruction use is measured from each setting's own rendering (bench/adapters/base.py `instruction_use`).

One text rendered under two different instructions: the same model input means the setting is
instruction-blind. Known settings have known verdicts (CASES); every family of bench/adapters, read from
the registry, is measured too (`test_every_family_is_measured`), so a new family file is covered with no
edit here. A run writes the verdict into its run record, where tables and the leaderboard read it
(bench/results/marks.py).
"""

from __future__ import annotations

import json

import pytest

from bench.adapters.base import PROBE_INSTRUCTIONS, PROBE_TEXT
from bench.adapters.registry import FAMILIES, discover, family_name, load_model
from bench.results.marks import follows_instructions, is_baseline


@pytest.fixture(scope="module")
def sts_metadata():
    from bench import tasks

    return tasks.TASKS["DemoInstructSTS"]().metadata


CASES = [
    ("st:{minilm}", {"template": "prefix"}, True),
    ("st:{minilm}", {"template": "none"}, False),
    pytest.param(
        "st:{minilm}", {"template": "model"}, False, marks=pytest.mark.slow
    ),  # MiniLM has no prompts (read from the loaded model)
    ("st:{minilm}", {"template": "Instruct: {instruction}\nQuery: {text}"}, True),
    ("prompteol:{minilm}", {}, False),  # PromptEOL's prompt has no slot for an instruction
    ("prompteol:{minilm}", {"instruction_template": "{instruction} "}, True),
    ("metaeol:{minilm}", {}, False),
    ("inbedder:{minilm}", {}, True),  # InBedder's qa pattern holds the instruction
    ("instructor:{minilm}", {}, True),
    ("openai:text-embedding-3-small", {}, True),
    ("openai:text-embedding-3-small", {"template": "none"}, False),
    ("standin:probe", {}, True),
]
# Families whose input path needs more than a spec: each has a test of its own below.
OWN_TESTS = {
    "mteb": "test_mteb_implementation_is_probed_through_its_own_loader",
    "gstransform": "test_gstransform_routes_by_instruction",
}


def harness_families() -> list[str]:
    """The families bench/adapters registers (tests register toy ones in the same process)."""
    discover()
    return sorted(f for f, cls in FAMILIES.items() if cls.__module__.startswith("bench.adapters."))


@pytest.mark.registry
@pytest.mark.parametrize(("spec", "options", "follows"), CASES)
def test_a_setting_is_blind_exactly_when_its_input_ignores_the_instruction(
    spec, options, follows, minilm_path, sts_metadata
):
    model = load_model(spec.format(minilm=minilm_path), **options)
    use = model.instruction_use(sts_metadata)
    assert use["follows_instructions"] is follows
    assert use["method"] == "render" and len(set(use["probe"]["instructions"])) == 2


def unmeasured_families() -> list[str]:
    """Families with neither a known case nor a test of their own (a new family file, until it gets one)."""
    specs = [case.values[0] if hasattr(case, "values") else case[0] for case in CASES]  # a pytest.param too
    known = {family_name(spec.partition(":")[0]) for spec in specs}
    return [f for f in harness_families() if f not in known and f not in OWN_TESTS]


@pytest.mark.registry
def test_every_family_has_a_known_verdict_or_a_measurement():
    assert set(OWN_TESTS.values()) <= set(globals())
    assert set(harness_families()) >= {"mteb", "sentence-transformers", "openai", "inbedder"}


@pytest.mark.registry
@pytest.mark.parametrize("family", unmeasured_families())
def test_every_family_is_measured(family, minilm_path, sts_metadata):
    """A family without a known case is built from a model path (MiniLM's files) with its defaults: its
    verdict must be the comparison of its own two renderings, and both must be JSON (the cache key)."""
    model = load_model(f"{family}:{minilm_path}")
    first, second = (model.probe_input(PROBE_TEXT, i, sts_metadata) for i in PROBE_INSTRUCTIONS)
    use = model.instruction_use(sts_metadata)
    assert use["method"] == "render"
    assert use["follows_instructions"] is (json.dumps(first) != json.dumps(second)), (
        f"family {family}: add a case to CASES in {__file__} if it cannot be built from a model path"
    )


@pytest.mark.slow
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


@pytest.mark.slow
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
