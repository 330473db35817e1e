"""The papers' reported tables (bench/results/reported/*.yaml, `bench.results.literature`).

Two kinds of test:
* provenance (issue 31, item 2): every number of every packaged file is the one the paper prints, in
  that row (matched by its printed name) and in that column's position, with the caption verbatim and
  the same rows; read from the papers' text in ../shared/seeds (skipped, saying why, when it is absent).
  A copy with one value, one row name or the column order changed fails the same check.
* schema: the loader refuses a malformed file with one error naming the field, every column maps to a
  registered task and its main score, and every spec is one the harness can build.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from bench.core.errors import ConfigError, UnknownNameError
from bench.results import literature, task_catalog
from bench.results.literature import ReportedTable, all_tables, load_table, table_ids, tables_for_tasks

SEEDS = Path(__file__).resolve().parents[2].parent / "shared" / "seeds"
needs_seeds = pytest.mark.skipif(
    not SEEDS.is_dir(), reason=f"the papers' text is not here ({SEEDS}): provenance cannot be checked"
)
_NUMBER = re.compile(r"^[+-]?\d+(?:\.\d+)?(?: \([+-]?\d+(?:\.\d+)?\))?$")  # "75.96" or "75.96 (+5.93)"
_LEADING = re.compile(r"^[+-]?\d+(?:\.\d+)?")


# ---------------------------------------------------------------------------------------- the printed table
@dataclass
class Printed:
    header: list[str]
    rows: list[tuple[str, list[str]]]  # (leading cells joined: name or "name | params", value cells)
    caption_follows: bool


def _cells(line: str) -> list[str]:
    """A printed table line's non-empty cells (tab-separated, or pipe-separated as `| a | b |`)."""
    parts = line.strip().strip("|").split("|") if line.lstrip().startswith("|") else line.split("\t")
    return [c.strip() for c in parts if c.strip()]


def _is_table_line(line: str) -> bool:
    return line.lstrip().startswith("|") or "\t" in line


def seed_text(table: ReportedTable) -> str:
    found = sorted(SEEDS.glob(f"{table.paper.seed}_*.txt"))
    assert len(found) == 1, f"{table.id}: expected one seed file {table.paper.seed}_*.txt in {SEEDS}, found {found}"
    return found[0].read_text(encoding="utf-8")


def printed_table(table: ReportedTable, text: str) -> Printed:
    """The block of table lines in `text` whose header holds `table`'s column labels in order: the one
    right before the caption when the file has one, else the one whose first row is the file's."""
    labels = [c.label for c in table.columns]
    lines = text.splitlines()
    blocks: list[Printed] = []
    for i, line in enumerate(lines):
        cells = _cells(line) if _is_table_line(line) else []
        if not any(cells[k : k + len(labels)] == labels for k in range(len(cells))):
            continue
        end = i + 1
        while end < len(lines) and _is_table_line(lines[end]):
            end += 1
        after = next((x for x in lines[end:] if x.strip()), "")
        rows = []
        for row_line in lines[i + 1 : end]:
            row = _cells(row_line)
            if sum(bool(_NUMBER.match(c)) for c in row) < 2:
                continue  # a group header ("Without Contrastive Training")
            lead = max(len(row) - len(labels), 1)  # name (and size) cells, then one value per column
            rows.append((" | ".join(row[:lead]), row[lead:]))
        blocks.append(Printed(cells, rows, bool(table.caption) and after.strip() == table.caption))
    if table.caption:
        blocks = [b for b in blocks if b.caption_follows]
    elif len(blocks) > 1:  # no caption in the text (MetaEOL's ablations share Table 1's header): its first row
        blocks = [b for b in blocks if b.rows and b.rows[0][0].split(" | ")[0] == table.rows[0].name]
    assert len(blocks) == 1, f"{table.id}: found {len(blocks)} printed tables with header {labels}"
    return blocks[0]


# Misreadings in the papers' text here (PDF extractions), by seed: the text prints the first where the
# paper means the second. Each is checked to be in its text, so none can hide a wrong value.
MISREAD = {"004": {"INSTRUCTOI 1.5B": "INSTRUCTOR 1.5B"}}


@dataclass
class Transposed:
    """A table printed with one line per dataset and one column per model (INSTRUCTOR's Table 10)."""

    header: list[str]  # the model columns, misreadings corrected
    lines: list[tuple[str, list[str]]]  # (dataset name: the last leading cell, value cells)
    caption_follows: bool


def transposed_table(table: ReportedTable, text: str) -> Transposed | None:
    """The block of table lines whose header ends in the file's rows as `name params`, in order (the
    one right before the caption when the file has one, else the one holding the first column's line);
    None when no header does: the paper prints the table the file's way round."""
    heads = [" ".join([row.name] + ([row.params] if row.params else [])) for row in table.rows]
    fixes = MISREAD.get(table.paper.seed, {})
    lines = text.splitlines()
    blocks: list[Transposed] = []
    for i, line in enumerate(lines):
        cells = [fixes.get(c, c) for c in _cells(line)] if _is_table_line(line) else []
        if len(cells) <= len(heads) or cells[-len(heads) :] != heads:
            continue
        end = i + 1
        while end < len(lines) and _is_table_line(lines[end]):
            end += 1
        after = next((x for x in lines[end:] if x.strip()), "")
        found = [
            (row[: -len(heads)][-1] if len(row) > len(heads) else "", row[-len(heads) :])
            for row in map(_cells, lines[i + 1 : end])
        ]
        blocks.append(Transposed(cells[-len(heads) :], found, bool(table.caption) and after.strip() == table.caption))
    if table.caption:
        blocks = [b for b in blocks if b.caption_follows]
    elif len(blocks) > 1:
        blocks = [b for b in blocks if any(name == table.columns[0].label for name, _ in b.lines)]
    return blocks[0] if len(blocks) == 1 else None


def transposed_problems(table: ReportedTable, printed: Transposed) -> list[str]:
    """Every way `table` differs from a transposed printed table: each column is one printed line of
    that name, in the paper's order, with one value per row, each the stored one."""
    problems, positions = [], []
    for column in table.columns:
        found = [i for i, (name, _) in enumerate(printed.lines) if name == column.label]
        if len(found) != 1:
            problems.append(f"column {column.label!r}: printed on {len(found)} lines, not one")
            continue
        positions.append(found[0])
        values = printed.lines[found[0]][1]
        if not all(_NUMBER.match(v) for v in values):
            problems.append(f"column {column.label!r}: printed {values}, not one value per row")
            continue
        for row, value in zip(table.rows, values, strict=True):
            stored = row.cells.get(column.label)
            if stored is None or float(value) != stored:
                problems.append(f"row {row.label!r}, {column.label}: printed {value}, stored {stored}")
    if positions != sorted(positions):
        problems.append("columns not in the order the paper prints their lines")
    return problems


def provenance_problems(table: ReportedTable, text: str) -> list[str]:
    """Every way `table` differs from what the paper prints (empty when it is a faithful copy)."""
    problems = []
    if table.caption is not None and table.caption not in text:
        problems.append(f"caption not printed verbatim: {table.caption[:60]!r}...")
    if (transposed := transposed_table(table, text)) is not None:
        return problems + transposed_problems(table, transposed)
    try:
        printed = printed_table(table, text)
    except AssertionError as e:
        return [*problems, str(e)]
    rows = [(lead, values) for lead, values in printed.rows if lead.split(" | ")[0] not in table.omitted_rows]
    if len(rows) != len(table.rows):
        problems.append(f"{len(table.rows)} rows in the file, {len(rows)} printed")
    for row, (lead, values) in zip(table.rows, rows, strict=False):
        name = " | ".join([row.name] + ([row.params] if row.params else []))
        if name != lead:
            problems.append(f"row {row.label!r} is printed as {lead!r} at its position")
            continue
        if len(values) != len(table.columns):
            problems.append(f"row {row.label!r}: {len(values)} printed values for {len(table.columns)} columns")
            continue
        for column, value in zip(table.columns, values, strict=True):
            stored = row.cells.get(column.label)
            number = _LEADING.match(value)
            if number is None:
                if stored is not None:
                    problems.append(f"row {row.label!r}, {column.label}: printed {value!r}, stored {stored}")
            elif stored is None or float(number.group()) != stored:
                problems.append(f"row {row.label!r}, {column.label}: printed {value}, stored {stored}")
    return problems


# ---------------------------------------------------------------------------------------- provenance
@needs_seeds
@pytest.mark.parametrize("table_id", table_ids())
def test_every_number_is_the_one_the_paper_prints(table_id: str) -> None:
    table = load_table(table_id)
    assert provenance_problems(table, seed_text(table)) == []


def _copy(tmp_path: Path, table_id: str, edit) -> ReportedTable:
    data = yaml.safe_load((literature.REPORTED_DIR / f"{table_id}.yaml").read_text(encoding="utf-8"))
    edit(data)
    path = tmp_path / f"{table_id}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return load_table(path)


def _mutate_value(data: dict) -> None:
    data["rows"][-1]["cells"]["NYT"] = 64.56  # printed 64.65


def _mutate_name(data: dict) -> None:
    data["rows"][2]["name"] = "opt-1.3b-alpaca(avg-gen)"  # printed roberta-large-alpaca(avg-gen)
    data["rows"][4]["name"] = "roberta-large-alpaca(avg-gen)"


def _swap_columns(data: dict) -> None:
    data["columns"][0], data["columns"][1] = data["columns"][1], data["columns"][0]


def _drop_row(data: dict) -> None:
    del data["rows"][3]


def _reword_caption(data: dict) -> None:
    data["caption"] = data["caption"].replace("best", "top")


@needs_seeds
@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (_mutate_value, "NYT: printed 64.65, stored 64.56"),
        (_mutate_name, "is printed as 'roberta-large-alpaca(avg-gen)'"),
        (_swap_columns, "found 0 printed tables"),
        (_drop_row, "11 rows in the file, 12 printed"),
        (_reword_caption, "caption not printed verbatim"),
    ],
)
def test_a_typo_fails_the_provenance_check(tmp_path: Path, edit, expected: str) -> None:
    """The check is not vacuous: one changed value, two swapped names, two swapped columns, a dropped row
    or a reworded caption in a copy of InBedder Table 1 is each reported."""
    table = _copy(tmp_path, "inbedder-2024-table1", edit)
    problems = provenance_problems(table, seed_text(table))
    assert any(expected in p for p in problems), problems


@needs_seeds
def test_a_moved_value_fails_in_a_pipe_table(tmp_path: Path) -> None:
    """In a pipe-separated table too (MetaEOL's, with its size column): two values swapped between
    columns, or a row's size changed, is reported."""

    def swap(data: dict) -> None:
        cells = data["rows"][0]["cells"]
        cells["STS12"], cells["STS13"] = cells["STS13"], cells["STS12"]
        data["rows"][12]["params"] = "7B"  # the second Echo-LLAMA2 is 13B (now a duplicate label)

    with pytest.raises(ConfigError, match="Echo-LLAMA2 \\(7B\\)"):
        _copy(tmp_path, "metaeol-2024-table1", swap)

    def swap_values(data: dict) -> None:
        cells = data["rows"][0]["cells"]
        cells["STS12"], cells["STS13"] = cells["STS13"], cells["STS12"]

    table = _copy(tmp_path, "metaeol-2024-table1", swap_values)
    problems = provenance_problems(table, seed_text(table))
    assert "row 'SimCSE-BERT (110M)', STS12: printed 68.40, stored 82.41" in problems


def _rename_first_column(data: dict) -> None:
    data["columns"][0]["label"] = "AskUbuntu"
    for row in data["rows"]:  # its cells follow it
        row["cells"]["AskUbuntu"] = row["cells"].pop("AskUbuntuDupQuestions")


@needs_seeds
@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda d: d["rows"][1]["cells"].update(STS12=76.2),
            "row 'INSTRUCTOR (335M)', STS12: printed 76.3, stored 76.2",
        ),
        (lambda d: d["rows"].reverse(), "found 0 printed tables"),  # no header holds the rows in that order
        (lambda d: d["columns"].reverse(), "columns not in the order the paper prints their lines"),
        (_rename_first_column, "column 'AskUbuntu': printed on 0 lines, not one"),
        (lambda d: d.update(caption="Table 9: All Retrieval results in MTEB benchmark."), "printed on 0 lines"),
    ],
)
def test_a_typo_fails_the_provenance_check_of_a_transposed_table(tmp_path: Path, edit, expected: str) -> None:
    """INSTRUCTOR's Table 10 is printed one line per dataset: a changed value, the model columns in
    another order (names and sizes repeat, so only the values tell), the dataset lines in another order,
    a column named as no line is, or the caption of another table with the same header is each reported."""
    table = _copy(tmp_path, "instructor-2023-table10", edit)
    problems = provenance_problems(table, seed_text(table))
    assert any(expected in p for p in problems), problems


@needs_seeds
def test_every_misreading_the_check_corrects_is_in_the_text() -> None:
    """MISREAD corrects the seed's PDF-extraction errors only: each is printed in its paper's text (the
    table's own header), so the correction cannot hide a wrong row name."""
    for seed, fixes in MISREAD.items():
        (path,) = SEEDS.glob(f"{seed}_*.txt")
        lines = path.read_text(encoding="utf-8").splitlines()
        for wrong in fixes:
            assert any(wrong in _cells(line) for line in lines if _is_table_line(line)), (seed, wrong)


def _disagreements(table: ReportedTable) -> list[tuple[str, float, float]]:
    """(row label, printed average, mean of its printed cells) for every printed average that is not the
    mean of the cells it covers beyond print precision (the one rule: `ReportedTable.printed_average`)."""
    tasks = {c.task for c in table.columns if not c.average}
    found = []
    for row in table.rows:
        printed = table.printed_average(row, tasks) if None not in tasks else None
        if printed is not None and printed.recomputed is not None:
            found.append((row.label, printed.value, printed.recomputed))
    return found


@pytest.mark.parametrize("table_id", table_ids())
def test_a_printed_average_that_is_not_the_mean_is_named_in_the_notes(table_id: str) -> None:
    """Issue 42, item 9: each printed average that disagrees with the mean of its row's printed cells is
    named in its table's notes, with both numbers as printed."""
    table = load_table(table_id)
    notes = " ".join(" ".join(table.notes).split())
    for label, printed, mean in _disagreements(table):
        assert label in notes and table.printed(printed) in notes and table.printed(mean) in notes, label


def test_metaeol_prints_two_averages_that_are_not_their_means() -> None:
    """The two the issue counts: PromptBERT 78.54 (cells 78.52), PromptEOL-LLAMA2 13B 68.83 (68.88); every
    other printed average of the packaged tables is its row's mean to print precision (InBedder's 52.90 over
    a mean of 52.895 is rounding, not a disagreement)."""
    found = {t.id: _disagreements(t) for t in all_tables()}
    assert found.pop("metaeol-2024-table1") == [
        ("PromptBERT (110M)", 78.54, 78.52),
        ("PromptEOL-LLAMA2 (13B)", 68.83, 68.88),
    ]
    assert not any(found.values()), found


# ---------------------------------------------------------------------------------------- the data
def test_the_tables_of_issue_42_are_packaged() -> None:
    """INSTRUCTOR's Table 10 (the generic suite's eleven tasks, four models) and MetaEOL's Table 4 (the
    number of meta-tasks), found by their files alone."""
    instructor, metaeol = load_table("instructor-2023-table10"), load_table("metaeol-2024-table4")
    assert [c.task for c in instructor.task_columns()] and {c.task for c in instructor.task_columns()} == set(
        task_catalog.suites()["generic"]
    )
    assert [r.label for r in instructor.rows] == ["GTR (335M)", "INSTRUCTOR (335M)", "GTR (1.5B)", "INSTRUCTOR (1.5B)"]
    assert instructor.printed(instructor.row("INSTRUCTOR (335M)").cells["SciDocsRR"]) == "82.0"
    assert {c.task for c in metaeol.task_columns()} == set(task_catalog.suites()["metaeol-sts"])
    assert [r.name for r in metaeol.rows] == ["TC", "TC+SA", "TC+SA+PI", "TC+SA+PI+IE"]
    table1 = load_table("metaeol-2024-table1").row("MetaEOL-LLAMA2 (Ours) (7B)")
    assert metaeol.row("TC+SA+PI+IE").cells == table1.cells and metaeol.row("TC+SA+PI+IE").spec == table1.spec


def test_the_four_tables_of_the_issue_are_packaged() -> None:
    assert {"inbedder-2024-table1", "inbedder-2024-table2", "gstransform-2025-table1", "metaeol-2024-table1"} <= set(
        table_ids()
    )
    assert [len(load_table(t).rows) for t in ("inbedder-2024-table1", "inbedder-2024-table2")] == [12, 12]


@pytest.mark.parametrize("table_id", table_ids())
def test_each_table_feeds_its_suite(table_id: str) -> None:
    """Every task column is a task of the table's suite, so the rows land in that suite's table."""
    table = load_table(table_id)
    suite_tasks = task_catalog.suites()[table.suite or ""]
    assert table.task_columns() and all(c.task in suite_tasks for c in table.task_columns())
    assert table.id == table_id and table.label.endswith(f", Table {table.number}")
    assert all(row.spec is not None or row.why_not for row in table.rows)


def test_scores_map_cells_to_tasks_without_the_average() -> None:
    table = load_table("inbedder-2024-table1")
    row = table.row("llama-2-7b-INBEDDER (1st-gen)")
    assert row.scores(table) == {"InstructSTSB": 22.07, "IntentEmotion": 89.68, "NYTClustering": 64.65}
    assert row.cells["Avg"] == 58.80
    assert table.label == "InBedder (Peng et al., ACL 2024), Table 1"


def test_values_are_written_back_as_printed() -> None:
    """YAML reads the printed "0.00" and "50.60" as 0.0 and 50.6; the table writes the paper's two decimals."""
    table = load_table("inbedder-2024-table1")
    e5 = table.row("e5-large-v2(w/o instruction)")
    assert [table.printed(e5.cells[c]) for c in ("I.STSB", "NYT")] == ["0.00", "50.07"]
    assert table.printed(load_table("inbedder-2024-table2").rows[0].cells["StackO."]) == "50.60"


def test_rows_of_one_name_are_told_apart_by_their_size() -> None:
    table = load_table("metaeol-2024-table1")
    assert table.row("Echo-LLAMA2 (13B)").cells["STS12"] == 59.36
    with pytest.raises(UnknownNameError, match="Echo-LLAMA2 \\(7B\\)"):
        table.row("Echo-LLAMA2")  # two rows of that name: the label is needed


def test_tables_for_tasks() -> None:
    assert [t.id for t in tables_for_tasks(["NYTClustering"])] == ["inbedder-2024-table1"]
    assert {t.id for t in tables_for_tasks(["STS12", "SciDocsRR"])} == {
        "inbedder-2024-table2",
        "metaeol-2024-table1",
        "metaeol-2024-table4",
        "instructor-2023-table10",
    }
    assert tables_for_tasks(["DemoNYTClustering"]) == []


def test_every_spec_builds_an_encoder_offline() -> None:
    """Each runnable row's spec names a family and options the harness accepts (values checked by the
    family's constructor); no weights are loaded."""
    from bench.adapters.registry import load_model

    for table in all_tables():
        for row in table.rows:
            if row.spec is not None:
                assert load_model(row.spec["model"], **row.spec["model_args"]) is not None, row.label


# The dtype each runnable row's authors ran in, with where it is said (issue 42, item 8). A family's default
# dtype is `auto`, bfloat16 on a GPU: a row that sets none would not run as the authors did.
_SENTENCE_TRANSFORMERS = "SentenceTransformer's default load (no dtype in the authors' config): float32"
_INBEDDER_CONFIG = "InBedder configs/*.json (shared/research/seeds.md section 1.4)"
_METAEOL_CODE = "MetaEOL's from_pretrained sets no dtype: float32 (shared/research/seeds.md section 2.3)"
_INSTRUCTOR_EVAL = "INSTRUCTOR's evaluate_model.py: the INSTRUCTOR package's default load, float32"
AUTHORS_DTYPE: dict[tuple[str, str], tuple[str, str]] = {
    **{
        (table, label): dtype_and_source
        for table in ("inbedder-2024-table1", "inbedder-2024-table2")
        for label, dtype_and_source in {
            "e5-large-v2(w/o instruction)": (
                "float32",
                "configs/sentence-transformers_e5-large-v2.json; " + _SENTENCE_TRANSFORMERS,
            ),
            "instructor-large": (
                "float32",
                "configs/sentence-transformers_instructor-large.json; " + _SENTENCE_TRANSFORMERS,
            ),
            "roberta-large-INBEDDER (avg-gen)": ("float32", _INBEDDER_CONFIG),
            "opt-1.3b-INBEDDER (1st-gen)": ("float32", _INBEDDER_CONFIG),
            "opt-2.7b-INBEDDER (1st-gen)": ("float32", _INBEDDER_CONFIG),
            "llama-2-7b-chat(re-enc)": ("bfloat16", "causallm_llama-2-7b-chat-e5-large-v2-pretrain.json"),
            "llama-2-13b-chat(re-enc)": ("bfloat16", "causallm_llama-2-13b-chat-e5-large-v2-pretrain.json"),
            "llama-2-7b-INBEDDER (1st-gen)": ("bfloat16", "causallm_llama-2-7b-e5-large-v2-qa-ml=3.json"),
        }.items()
    },
    ("gstransform-2025-table1", "InstructOR"): ("float32", "paper section 4: default open-source configurations"),
    ("gstransform-2025-table1", "InBedder-Roberta"): ("float32", _INBEDDER_CONFIG),
    ("gstransform-2025-table1", "InBedder-Llama2"): ("bfloat16", _INBEDDER_CONFIG),
    ("instructor-2023-table10", "GTR (335M)"): ("float32", _SENTENCE_TRANSFORMERS),
    ("instructor-2023-table10", "INSTRUCTOR (335M)"): ("float32", _INSTRUCTOR_EVAL),
    ("instructor-2023-table10", "GTR (1.5B)"): ("float32", _SENTENCE_TRANSFORMERS),
    ("instructor-2023-table10", "INSTRUCTOR (1.5B)"): ("float32", _INSTRUCTOR_EVAL),
    **{
        ("metaeol-2024-table1", f"{method}-{model}{' (Ours)' if method == 'MetaEOL' else ''} ({size})"): (
            "float32",
            _METAEOL_CODE,
        )
        for method in ("PromptEOL", "MetaEOL")
        for model, size in (("LLAMA2", "7B"), ("Mistral", "7B"), ("LLAMA3", "8B"), ("LLAMA2", "13B"))
    },
    ("metaeol-2024-table4", "TC+SA+PI+IE"): ("float32", _METAEOL_CODE),
}


def _runnable_rows() -> dict[tuple[str, str], dict[str, object]]:
    return {(t.id, r.label): r.spec for t in all_tables() for r in t.rows if r.spec is not None}


def test_every_runnable_row_runs_in_the_authors_dtype() -> None:
    """Each runnable row's encoder resolves the dtype its authors ran, not the family's `auto` (bfloat16 on a GPU)."""
    from bench.adapters.registry import load_model

    assert set(_runnable_rows()) == set(AUTHORS_DTYPE)  # a new runnable row declares its authors' dtype here
    for key, spec in _runnable_rows().items():
        model = load_model(str(spec["model"]), **dict(spec.get("model_args") or {}))
        assert model.dtype_option == AUTHORS_DTYPE[key][0], (key, AUTHORS_DTYPE[key][1])


def test_inbedder_instructor_rows_are_one_string_as_the_authors_ran() -> None:
    """InBedder's INSTRUCTOR baseline: `"{instruction}: {input}"` as one string (every token pooled: no
    instruction part), with no second colon after an instruction that ends in one."""
    from bench.adapters.registry import load_model
    from bench.tasks.generic import RERANKING_INSTRUCTIONS

    reranking = RERANKING_INSTRUCTIONS["AskUbuntuDupQuestions"]["query"]  # the harness's instruction of the task
    for table_id in ("inbedder-2024-table1", "inbedder-2024-table2"):
        spec = load_table(table_id).row("instructor-large").spec
        assert spec is not None
        model = load_model(str(spec["model"]), **dict(spec.get("model_args") or {}))
        assert model.render("How do I mount a USB drive?", reranking, None) == [
            "",
            "Represent the Ubuntu question for reranking: How do I mount a USB drive?",
        ]
        assert model.render("Refund please", "What does the customer need?", None) == [
            "",
            "What does the customer need?: Refund please",
        ]


# ---------------------------------------------------------------------------------------- the loader
def test_unknown_table_id_suggests_the_close_one() -> None:
    with pytest.raises(UnknownNameError, match="Did you mean: inbedder-2024-table1") as e:
        load_table("inbedder-2024-tabel1")
    assert "bench list reported" in str(e.value)


_GOOD = {
    "paper": {
        "key": "demo-2024",
        "name": "Demo",
        "title": "A demo",
        "authors": "Ada Lovelace, Alan Turing",
        "venue": "ACL",
        "year": 2024,
        "arxiv": None,
        "acl": None,
        "bibtex_key": "lovelace2024demo",
        "url": "https://example.org",
        "seed": "999",
    },
    "number": 3,
    "caption": None,
    "suite": "demo",
    "columns": [
        {"label": "NYT", "task": "DemoNYTClustering", "metric": "hmean_v_measure"},
        {"label": "Avg", "average": True},
    ],
    "rows": [{"name": "m", "cells": {"NYT": 1.5, "Avg": 1.5}, "why_not": "closed model"}],
}


def _write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_a_valid_file_loads_by_path(tmp_path: Path) -> None:
    table = load_table(_write(tmp_path, _GOOD))
    assert table.id == "t" and table.paper.label == "Demo (Lovelace et al., ACL 2024)"
    assert table.rows[0].scores(table) == {"DemoNYTClustering": 1.5} and table.rows[0].spec is None


def _set(path: str, value: object):
    def edit(data: dict) -> None:
        *parents, last = path.split(".")
        target = data
        for key in parents:
            target = target[int(key)] if key.isdigit() else target[key]
        if value is KeyError:
            del target[last]
        else:
            target[last] = value

    return edit


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_set("colour", "red"), "the file has unknown key(s) colour"),
        (_set("paper.year", "2024"), "paper.year must be an integer"),
        (_set("paper.bibtex_key", KeyError), "paper lacks bibtex_key"),
        (_set("rows.0.cells.NYT", math.nan), "cells.NYT must be a finite number"),
        (_set("rows.0.cells.NYT", True), "cells.NYT must be a finite number"),
        (_set("rows.0.cells.Mean", 2.0), "names 'Mean', not a column"),
        (_set("columns.0.metric", "v_measure"), "DemoNYTClustering's main score is 'hmean_v_measure'"),
        (_set("columns.1.task", "DemoNYTClustering"), "is an average: it takes neither task nor metric"),
        (_set("columns.1.label", "NYT"), "repeats a label"),
        (_set("rows.0.spec", {"model": "st:x"}), "exactly one of spec"),
        (_set("rows.0.why_not", KeyError), "exactly one of spec"),
        (_set("rows.0.spec", {"model": "st:x", "args": {}}), "spec has unknown key(s) args"),
        (_set("rows.0.sizes", "7B"), "unknown key(s) sizes"),
        (_set("caption", KeyError), "the file lacks caption"),
        (_set("rows.0.cells.NYT", 30.125), "more decimals than the table's 2"),
        (_set("decimals", 9), "decimals must be between 0 and 6"),
    ],
)
def test_a_malformed_file_is_one_error_naming_the_field(tmp_path: Path, edit, message: str) -> None:
    data = yaml.safe_load(yaml.safe_dump(_GOOD))
    edit(data)
    with pytest.raises(ConfigError) as e:
        load_table(_write(tmp_path, data))
    assert message in str(e.value) and str(tmp_path / "t.yaml") in str(e.value)


def test_a_cell_naming_no_column_lists_the_columns_in_the_file_s_order(tmp_path: Path) -> None:
    data = yaml.safe_load(yaml.safe_dump(_GOOD))
    data["columns"] += [{"label": label, "average": True} for label in ("Mean", "Zeta", "Beta", "Alpha")]
    data["rows"][0]["cells"]["Gamma"] = 1.0
    with pytest.raises(ConfigError, match="the columns are NYT, Avg, Mean, Zeta, Beta, Alpha"):
        load_table(_write(tmp_path, data))


def test_a_missing_or_empty_file_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"Cannot read reported table .*missing\.yaml"):
        load_table(tmp_path / "missing.yaml")
    (tmp_path / "empty.yaml").write_text("", encoding="utf-8")
    with pytest.raises(ConfigError, match="the file must be a mapping, not None"):
        load_table(tmp_path / "empty.yaml")


def test_an_unknown_task_or_suite_is_named(tmp_path: Path) -> None:
    data = yaml.safe_load(yaml.safe_dump(_GOOD))
    data["columns"][0]["task"] = "DemoNYTClusterin"
    with pytest.raises(UnknownNameError, match=r"Unknown task 'DemoNYTClusterin'\. Did you mean: DemoNYTClustering"):
        load_table(_write(tmp_path, data))
    data = yaml.safe_load(yaml.safe_dump(_GOOD))
    data["suite"] = "dmeo"
    with pytest.raises(UnknownNameError, match="Unknown suite 'dmeo'"):
        load_table(_write(tmp_path, data))


def test_a_repeated_row_is_refused(tmp_path: Path) -> None:
    data = yaml.safe_load(yaml.safe_dump(_GOOD))
    data["rows"].append(dict(data["rows"][0]))
    with pytest.raises(ConfigError, match="hold 'm' more than once"):
        load_table(_write(tmp_path, data))


def test_a_repeated_yaml_key_is_refused(tmp_path: Path) -> None:
    """The project's bounded reader refuses a key written twice (the second would silently win)."""
    path = _write(tmp_path, _GOOD)
    path.write_text(path.read_text(encoding="utf-8") + "number: 4\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="number"):
        load_table(path)


def test_packaged_files_ship_with_the_package() -> None:
    """pyproject's package-data covers the YAML files (a wheel without them would list no tables)."""
    text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"results/reported/*.yaml"' in text


def test_the_reference_page_lists_every_table() -> None:
    """docs/reference/reported.md names each packaged table with its label and row counts (a table added
    without its line there fails)."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "reported.md").read_text(encoding="utf-8")
    for table in all_tables():
        runnable = sum(row.spec is not None for row in table.rows)
        assert f"`{table.id}`: {table.label} | {table.suite} | {len(table.rows)} ({runnable}) |" in page


def test_bench_list_reported(capsys: pytest.CaptureFixture[str]) -> None:
    from bench.cli.main import main

    assert main(["list", "reported"]) == 0
    out = capsys.readouterr().out
    for table_id in table_ids():
        assert table_id in out
    assert "8 of 12" in out  # InBedder Table 1: eight rows the harness can run
