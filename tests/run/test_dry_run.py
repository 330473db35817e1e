"""`bench run --dry-run` (bench/run/dry_run.py): besides the counts, one line per fact a real run would meet:
every task whose data is not here, stand-in data, a prompt per text, gated weights, and the encodes
`--shift-sample` adds (counted as the run then counts them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.cli.main import main
from bench.run.dry_run import dry_run, dry_run_table
from bench.run.gated_weights import gated_weights, hub_ids
from bench.run.runner import RunOptions, run
from toy_encoders import HashEncoder

TASK = "DemoInstructSTS"


def _dry_run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["run", "--dry-run", *argv])
    return code, capsys.readouterr().out


def _sts_folder(root: Path, name: str, manifest: dict[str, object] | None) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    rows = [{"sentence1": f"a cat sat {i}", "sentence2": f"a cat sits {i}", "score": float(i % 5)} for i in range(6)]
    (folder / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if manifest is not None:
        (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_every_task_without_data_is_named_and_the_others_are_counted(tmp_path, capsys):
    """A named list with two tasks missing: both are named (a real run stops at the first), the third counted."""
    code, out = _dry_run(
        capsys, "-t", "STS12", "STS13", TASK, "--data-dir", str(tmp_path), "--cache-dir", str(tmp_path / "c")
    )
    assert code == 0
    missing = [line for line in out.splitlines() if line.startswith("Data not local: ")]
    assert [line.split("No folder for task ")[1].split()[0] for line in missing] == ["STS12", "STS13"]
    assert out.startswith("Dry run of 1 task(s)") and f"| {TASK}" in out


def test_stand_in_data_is_said(tmp_path, capsys):
    _sts_folder(tmp_path, "STSBenchmark", {"proxy": True, "note": "label-derived proxy of the published pairs"})
    _sts_folder(tmp_path, "SICK-R", None)  # a builder's copy without a manifest: not a stand-in
    code, out = _dry_run(
        capsys, "-t", "STSBenchmark", "SICK-R", "--data-dir", str(tmp_path), "--cache-dir", str(tmp_path / "c")
    )
    assert code == 0
    stand_ins = [line for line in out.splitlines() if line.startswith("Stand-in data: ")]
    assert stand_ins == ["Stand-in data: STSBenchmark: label-derived proxy of the published pairs"]


def test_a_prompt_per_text_is_said_for_the_task_whose_rows_carry_their_own(tmp_path, capsys):
    code, out = _dry_run(capsys, "--suite", "demo", "--cache-dir", str(tmp_path / "c"))
    assert code == 0
    expected = (
        f"Prompt per text: {TASK}: each row carries its own instruction (its 'instruction' column), so the model "
        "renders a prompt per text, not one per task."
    )
    assert [line for line in out.splitlines() if line.startswith("Prompt per text: ")] == [expected]


def test_gated_weights_are_the_declared_hub_ids_of_the_spec_and_its_options():
    assert hub_ids(
        "inbedder:meta-llama/Llama-2-7b-chat-hf", {"reencoder": "intfloat/e5-large-v2", "pooling": "1st-gen"}
    ) == [
        "meta-llama/Llama-2-7b-chat-hf",
        "intfloat/e5-large-v2",
    ]
    assert [h for h, _ in gated_weights("metaeol:meta-llama/Meta-Llama-3-8B", {})] == ["meta-llama/Meta-Llama-3-8B"]
    assert gated_weights("inbedder:BrandonZYW/llama-2-7b-InBedder", {"reencoder": "intfloat/e5-large-v2"}) == []
    assert gated_weights("all-MiniLM-L6-v2", {}) == []
    (line,) = dry_run_table([], RunOptions(model="prompteol:meta-llama/Llama-2-7b-hf")).splitlines()[-1:]
    assert line.startswith("Gated weights: meta-llama/Llama-2-7b-hf: the hub serves them only to an account")
    assert "source: the meta-llama model cards on huggingface.co" in line


@pytest.mark.parametrize("blind", [False, True])
def test_the_shift_estimate_is_what_the_run_then_encodes(tmp_path, monkeypatch, blind):
    """`--shift-sample N`: the dry run's texts are the run's `texts_encoded`, with and without the shift, and its
    shift count is the difference (none for a model that ignores its instruction: both renderings are one)."""

    def options(n: int, out: str) -> RunOptions:
        return RunOptions(tasks=[TASK], shift_sample=n, output_dir=str(tmp_path / out), show_progress_bar=False)

    counted = {}
    for n in (0, 16):
        monkeypatch.setattr("bench.run.dry_run.build_model", lambda _o: HashEncoder(blind=blind, use_cache=False))
        monkeypatch.setattr("bench.run.runner.build_model", lambda _o: HashEncoder(blind=blind, use_cache=False))
        [estimate] = dry_run(options(n, f"dry{n}"))
        [outcome] = run(options(n, f"run{n}"))
        assert estimate.texts == outcome.record["encode"]["texts_encoded"]
        counted[n] = estimate
    extra = counted[16].texts - counted[0].texts
    assert counted[16].shift_texts == extra and counted[0].shift_texts == 0
    assert extra == 0 if blind else 0 < extra <= 16  # a blind rendering the task already encoded is not new
    assert f"Instruction shift (--shift-sample 16): {extra:,} of the texts to encode are instruction-blind" in (
        dry_run_table([counted[16]], options(16, "x"))
    )
