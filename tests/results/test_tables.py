"""`bench results` tables that tell the truth (issue 32 items 1, 5, 6; issue 31 item 6): a `--limit` run is
marked ⊂ with what it was scored on and never ranked, in every format and in `bench run`'s table; LaTeX fits
an article's text width (short labels, settings in a row legend, footnotes whole); CSV cells are whole;
`--columns` chooses columns; `--reported` puts a paper's printed rows into the table (bench/results/comparison.py)."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from test_results_formats import DEMO, REVISION, _markdown_rows, check_booktabs, write

from bench.cli.main import main
from bench.results.comparison import find_all, results_table
from bench.results.outcome import TaskOutcome
from bench.results.summary import run_table
from bench.results.tables import TEXT_WIDTH_PT, latex_layout, text_width
from bench.results.task_catalog import suites
from bench.results.variant_tables import sensitivity_table_list
from helpers import compile_latex

REPORTED = Path(__file__).parent.parent / "fixtures" / "results-reported-demo.yaml"
FULL_TEXTS = {DEMO[0]: 96, DEMO[1]: 300, DEMO[2]: 90}  # texts a full run sends, per task


def _record(folder: Path, task: str, **task_fields) -> None:
    """Add `task_fields` and an `encode` block to a run record `write` left."""
    path = folder / "run_records" / f"{task}.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    record["task"].update(task_fields)
    limit = task_fields.get("limit")
    record["encode"] = {"texts_requested": 8 * 3 if limit else FULL_TEXTS[task]}
    path.write_text(json.dumps(record), encoding="utf-8")


@pytest.fixture
def limited(tmp_path: Path) -> Path:
    """Two full runs (averages 50 and 40) and, in a scratch folder, a `--limit 8` run of the first model
    whose subset scores 90: the README's quick look, which `bench results` used to rank #1."""
    for model, value in (("org/a", 0.5), ("org/b", 0.4)):
        for task in DEMO:
            write(tmp_path / "full", model, task, value)
            _record(
                tmp_path / "full" / model.replace("/", "__") / "0123456789abcdef0123456789abcdef01234567",
                task,
                limit=None,
            )
    for task in DEMO:
        write(tmp_path / "scratch", "org/a", task, 0.9)
        _record(tmp_path / "scratch" / "org__a" / "0123456789abcdef0123456789abcdef01234567", task, limit=8)
    return tmp_path


WORDS = "subset: 72 of 486 texts (--limit 8)"  # 3 tasks x 24 texts of 96 + 300 + 90


def test_a_limited_run_is_marked_and_never_ranked_in_markdown_csv_and_latex(limited, capsys):
    roots = [limited / "full", limited / "scratch"]
    header, _, *rows = _markdown_rows(results_table(roots))
    assert [r[:2] for r in rows] == [["-", "org/a ⊂"], ["1", "org/a"], ["2", "org/b"]]  # sorted first, unranked
    assert rows[0][header.index("Experiment")] == f"default; {WORDS}"
    out = results_table(roots)
    assert "⊂ subset: a limited run" in out

    assert main(["results", *map(str, roots), "--format", "csv"]) == 0
    by_rank = {(r["Model"], r["marks"]): r for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    subset = by_rank[("org/a", "subset")]
    assert subset["rank"] == "" and subset["Experiment"] == f"default; {WORDS}" and subset["Average (demo)"] == "90.00"
    assert by_rank[("org/a", "")]["rank"] == "1"

    tex = results_table(roots, fmt="latex")
    row = next(line for line in tex.splitlines() if line.startswith("-- & a$^\\subset$"))
    assert r"\textbf" not in row and "90.00" in row  # shown, never bold
    assert "1 & a$^{" in tex and WORDS.replace("--", "-{}-") in tex and r"$^\subset$ subset:" in tex


def test_a_limited_run_without_a_full_one_says_subset_of_the_texts(limited):
    header, _, *rows = _markdown_rows(results_table(limited / "scratch"))
    assert (
        rows[0][:2] == ["-", "org/a ⊂"]
        and rows[0][header.index("Experiment")] == "default; subset of the texts (72, --limit 8)"
    )


def test_a_full_result_without_a_count_does_not_hide_another_s(limited):
    """The subset's total comes from any full run of the task that says how many texts it sent: a result
    whose record has no count (read first here) leaves the total to the next one."""
    for task in DEMO:
        path = limited / "full" / "org__a" / REVISION / "run_records" / f"{task}.json"
        record = json.loads(path.read_text(encoding="utf-8"))
        del record["encode"]
        path.write_text(json.dumps(record), encoding="utf-8")
    header, _, *rows = _markdown_rows(results_table([limited / "full", limited / "scratch"]))
    assert rows[0][:2] == ["-", "org/a ⊂"] and rows[0][header.index("Experiment")] == f"default; {WORDS}"


def test_a_limited_variant_run_is_a_group_of_its_own_beside_the_full_one(tmp_path):
    """Variant runs of org/a and org/b, and in a scratch folder a `--limit 8` variant run of org/a on the same
    task: the limited variants are their own ⊂ row, never mixed into org/a's full statistics, and the rank
    stability still compares the two full runs."""
    for model, step in (("org/a", 0.01), ("org/b", -0.01)):
        for i, variant in enumerate(("v1", "v2", "v3")):
            write(tmp_path / "full", model, DEMO[0], 0.45 + step * i, variant=variant)
    for i, variant in enumerate(("v1", "v2", "v3")):
        write(tmp_path / "scratch", "org/a", DEMO[0], 0.9 - 0.1 * i, variant=variant)
    for path in (tmp_path / "scratch").rglob("run_records/*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        record["task"]["limit"] = 8
        path.write_text(json.dumps(record), encoding="utf-8")

    tables = sensitivity_table_list(find_all([tmp_path / "full", tmp_path / "scratch"]))
    assert [t.title for t in tables] == ["Instruction sensitivity", "Rank stability"]
    variants = tables[0].headers.index("Variants")
    rows = [(r[1], r[variants], r[variants + 2]) for r in tables[0].rows]
    assert rows == [("org/a", "3", "46.00"), ("org/a ⊂", "3", "80.00"), ("org/b", "3", "44.00")]
    assert tables[1].rows[0][1] == "2"  # models compared: the two full runs


def test_bench_run_marks_limited_tasks_and_their_average():
    record = {"task": {"limit": 8}, "encode": {"texts_requested": 44}}
    outcomes = [TaskOutcome(t, "main", 0.5, {"main_score": 0.5}, "computed", record) for t in DEMO]
    scores, legend, _ = run_table(outcomes).split("\n\n")
    assert all(f"| {t}⊂ " in scores for t in DEMO) and "| Average (demo)⊂ " in scores
    assert legend.startswith("⊂ subset:") and f"  - {DEMO[0]}: subset of the texts (44, --limit 8)" in legend


# ----------------------------------------------------------------------------------------- LaTeX width
def _gst(root: Path, tasks: tuple[str, ...]) -> Path:
    """Three models with long names, one custom template and one baseline on the GSTransform tasks."""
    models = (
        "sentence-transformers/all-MiniLM-L6-v2",
        "HuggingFaceTB/SmolLM2-135M-Instruct",
        "intfloat/e5-mistral-7b-instruct",
    )
    long = "Represent the query for retrieval: {instruction} {text}"
    for i, model in enumerate(models):
        custom = {"template": "Represent-the-query-for-retri-1a2b3c4d"} if i == 1 else None
        for j, task in enumerate(tasks):
            write(
                root,
                model,
                task,
                0.4 + 0.01 * i + 0.013 * j,
                experiment=custom,
                settings={"template": long} if custom else None,
            )
    write(root, models[2], tasks[0], 0.5, experiment={"template": "none"}, settings={"template": "none"})
    return root


@pytest.fixture
def gst_partial(tmp_path: Path) -> Path:
    return _gst(tmp_path / "gst5", suites()["gstransform"][1:6])  # 5 of 9 tasks, as offline


@pytest.fixture
def gst_full(tmp_path: Path) -> Path:
    return _gst(tmp_path / "gst9", suites()["gstransform"])


@pytest.fixture
def demo_board(tmp_path: Path) -> Path:
    from test_results_formats import board

    return board.__wrapped__(tmp_path)  # the formats test's board: marks, a partial row, a custom template


def _header(tex: str) -> str:
    return next(line for line in tex.splitlines() if line.startswith(r"\# & "))


def test_latex_uses_the_sites_short_labels_and_puts_settings_in_a_row_legend(gst_partial):
    tex = results_table(gst_partial, fmt="latex")
    assert check_booktabs(tex) == ["rl" + "r" * 6]  # #, Model, 5 tasks, Mean: no Revision or Experiment column
    header = _header(tex)
    assert "GSTAmzCF" not in header and "Amz" in header and header.endswith(r"& Mean \\")
    assert (
        "all-MiniLM-L6-v2$^{" in tex
        and "sentence-transformers/all-MiniLM-L6-v2" not in tex.split(r"\midrule")[1].split(r"\bottomrule")[0]
    )
    legend = tex.split(r"\bottomrule")[1]
    assert "sentence-transformers/all-MiniLM-L6-v2, revision 0123456789abcdef0123456789abcdef01234567" in legend
    assert r"template=Represent the query for retrieval: \{instruction\} \{text\}" in legend  # whole, not cut
    assert r"\resizebox" not in tex


def _plain_latex(cell: str) -> str:
    """A LaTeX cell as the text it prints: bold, superscript marks and tags, stacked headers undone."""
    cell = re.sub(r"\\textbf\{(.*?)\}|\\shortstack\[\w\]\{(.*?)\}", lambda m: m.group(1) or m.group(2), cell)
    return re.sub(r"\$\^\{\\mathrm\{(\w+)\}\}\$|\$\^\\\w+\$", "x", cell.replace("\\_", "_"))


@pytest.mark.parametrize("name", ["demo_board", "gst_partial", "gst_full"])
def test_latex_width_budget_from_label_and_value_lengths(name, request):
    """Without pdflatex: each column as wide as its longest label line or value (`text_width`), at the
    chosen type size, plus the column separation, fits an article's \\textwidth; only the 9-task table of
    long model names is scaled (the last resort), and it says it needs graphicx."""
    tex = results_table(request.getfixturevalue(name), fmt="latex")
    lines = (
        tex.split(r"\midrule")[0].splitlines()[-1:] + tex.split(r"\midrule")[1].split(r"\bottomrule")[0].splitlines()
    )
    cells = [[_plain_latex(c) for c in re.split(r"(?<!\\)&", line.removesuffix(r" \\"))] for line in lines if line]
    widths = [max(text_width(part) for row in cells for part in row[i].split("\\\\")) for i in range(len(cells[0]))]
    font = re.search(r"\\(small|footnotesize|scriptsize)\\setlength\{\\tabcolsep\}\{(\d+)pt\}", tex)
    scale = {"small": 0.93, "footnotesize": 0.86, "scriptsize": 0.78}[font.group(1)] if font else 1.0
    width = scale * sum(widths) + 2 * (int(font.group(2)) if font else 6) * len(widths)
    if name == "gst_full":
        assert r"\resizebox{\textwidth}{!}{%" in tex and "graphicx" in tex.splitlines()[0]
    else:
        assert r"\resizebox" not in tex and "graphicx" not in tex
        assert width <= 1.03 * TEXT_WIDTH_PT, (width, font)  # text_width errs wide (every digit bold, a tag a letter)


def test_layout_steps_down_only_as_far_as_it_must():
    assert latex_layout(["Avg"], [["50.00"]])[1:] == ("", 6.0, False)  # a small table: untouched
    heads, font, _, scaled = latex_layout(["Big Patent"] * 8, [["47.89"] * 8])
    assert heads[0] == ["Big", "Patent"] and font == "" and not scaled  # two-line headers before smaller type
    assert text_width("47.89") >= 22.7  # pdflatex: 22.78pt for bold digits (never under the real width)


@pytest.mark.skipif(
    shutil.which("pdflatex") is None, reason="pdflatex is not installed (apt-get install texlive-latex-recommended)"
)
@pytest.mark.parametrize("name", ["demo_board", "gst_partial", "gst_full"])
def test_latex_compiles_with_no_overfull_box_in_an_article(name, request, tmp_path):
    log = compile_latex(results_table(request.getfixturevalue(name), fmt="latex"), tmp_path)
    assert "Overfull \\hbox" not in log, [line for line in log.splitlines() if "Overfull" in line]


# ----------------------------------------------------------------------------------------- whole values
def test_footnotes_and_csv_values_are_whole(tmp_path, capsys):
    note = "A label-derived proxy of the published set, " + "built from the public labels; " * 8 + "END."
    for i, template in enumerate(
        ("Instruct: {instruction} with care\nQuery: {text}", "Instruct: {instruction} with care, please: {text}")
    ):
        write(
            tmp_path,
            f"org/m{i}",
            DEMO[0],
            0.5,
            experiment={"template": f"Instruct-instructio-{i}a2b3c4d"},
            settings={"template": template},
            dataset={"stand_in": True, "stand_in_note": note},
        )
    assert "END." in results_table(tmp_path) and "END." in results_table(tmp_path, fmt="latex")
    assert main(["results", str(tmp_path), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["Experiment"] for r in rows} == {
        "template=Instruct: {instruction} with care\\nQuery: {text}",
        "template=Instruct: {instruction} with care, please: {text}",
    }  # two custom templates stay distinct, never cut to `template=Instruct-instructio…`


# ----------------------------------------------------------------------------------------- --columns
def test_columns_choose_and_order_the_score_columns(demo_board, capsys):
    assert main(["results", str(demo_board), "--columns", "NYT (demo),DemoInstructSTS,Avg"]) == 0
    header, _, *rows = _markdown_rows(capsys.readouterr().out)
    assert header == ["#", "Model", "Revision", "Experiment", "DemoNYTClustering", "DemoInstructSTS", "Average (demo)"]
    # ranked by the average, as without --columns; by the comparability rule (issue 42) only the row on the
    # published data of every task (before: "-", "1", "1", "3", "-")
    assert [r[0] for r in rows] == ["-", "-", "1", "-", "-"]
    assert main(["results", str(demo_board), "--columns", "DemoInstructSTS"]) == 0
    out = capsys.readouterr().out
    assert "No average column: no row is ranked." in out
    assert main(["results", str(demo_board), "--columns", "Avgg"]) == 2
    assert capsys.readouterr().err.startswith("error: Unknown column 'Avgg'. Did you mean: Avg")


def test_a_hidden_column_s_stand_in_note_is_not_listed(tmp_path, capsys):
    for task, note in zip(DEMO[:2], ("the first proxy", "the second proxy"), strict=True):
        write(tmp_path, "org/x", task, 0.5, dataset={"stand_in": True, "stand_in_note": note})
    assert main(["results", str(tmp_path), "--columns", DEMO[1]]) == 0
    out = capsys.readouterr().out
    assert f"  - {DEMO[1]}: the second proxy" in out and "the first proxy" not in out


# ----------------------------------------------------------------------------------------- --reported
def test_reported_rows_are_marked_with_their_printed_values_in_every_format(demo_board, capsys):
    assert main(["results", str(demo_board), "--reported", str(REPORTED)]) == 0
    out = capsys.readouterr().out
    header, _, *rows = _markdown_rows(out)
    by_model = {r[1]: r for r in rows}
    a = by_model["paper-model-a §"]
    assert [a[header.index(t)] for t in DEMO] == ["47.90", "62.35", "30.10"]  # as printed (YAML read 47.9, 30.1)
    # ranked by the same rule: 50 (stand-in, unranked), 50, 46.78, 30 (local copy, unranked), 21.25 (issue 42's
    # comparability rule; before: 3 and 5)
    assert a[0] == "2" and by_model["paper-model-b §"][0] == "3"
    assert a[header.index("Experiment")] == "DemoResults (Example et al., TestConf 2098), Table 3"
    assert "§ reported:" in out and "https://example.org/results-paper" in out and "Invented numbers" in out

    assert main(["results", str(demo_board), "--reported", str(REPORTED), "--format", "csv"]) == 0
    rows_csv = {r["Model"]: r for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    assert rows_csv["paper-model-a"]["marks"] == "reported" and rows_csv["paper-model-a"]["DemoInstructSTS"] == "47.90"
    assert rows_csv["paper-model-a"]["rank"] == "2"

    tex = results_table(demo_board, fmt="latex", reported=[REPORTED])
    line = next(x for x in tex.splitlines() if x.startswith("2 & paper-model-a"))
    # 62.35 is now its column's best: the stand-in and local-copy rows above it are never bold (issue 42)
    assert r"paper-model-a$^\S$" in line and r" & 47.90 & \textbf{62.35} & 30.10 & " in line
    assert r"$^\S$ reported:" in tex and "https://example.org/results-paper" in tex


def test_reported_rows_of_one_name_at_two_sizes_are_two_rows(demo_board, tmp_path):
    """MetaEOL prints Echo-LLAMA2 at 7B and at 13B: each is a row (by its label), neither hides the other."""
    table = tmp_path / "two-sizes.yaml"
    text = REPORTED.read_text(encoding="utf-8")
    text = text.replace("  - name: paper-model-a\n", "  - name: paper-model-a\n    params: 1B\n")
    table.write_text(text.replace("  - name: paper-model-b\n", "  - name: paper-model-a\n    params: 7B\n"))
    _, _, *rows = _markdown_rows(results_table(demo_board, reported=[table]))
    assert sorted(r[1] for r in rows if "§" in r[1]) == ["paper-model-a (1B) §", "paper-model-a (7B) §"]


def test_a_paper_s_average_is_shown_as_printed_with_a_differing_mean_beside_it(tmp_path, capsys):
    """Issue 42, item 3: `bench results --reported metaeol-2024-table1` shows PromptBERT's Avg. as MetaEOL
    prints it, 78.54, with the mean of its seven printed cells (78.52) beside it, marked; a printed Avg.
    that is its row's mean (SimCSE-BERT, 76.25) stands alone; an average over other tasks (generic-sts's,
    5 of 7 here) is computed. CSV keeps the number whole and names the recomputed mean in `marks`; LaTeX
    shows both."""
    assert main(["results", str(tmp_path), "--reported", "metaeol-2024-table1"]) == 0
    out = capsys.readouterr().out
    header, _, *rows = _markdown_rows(out)
    by_model = {r[1]: r for r in rows}
    own = header.index("Average (metaeol-sts)")
    assert by_model["PromptBERT (110M) §"][own] == "78.54 (78.52 recomputed)"
    assert by_model["PromptEOL-LLAMA2 (13B) §"][own] == "68.83 (68.88 recomputed)"
    assert by_model["SimCSE-BERT (110M) §"][own] == "76.25"
    assert by_model["PromptBERT (110M) §"][header.index("STS Avg. (MetaEOL; generic)")] == "79.64 (5 of 7, partial)"
    assert "shown as printed, with the mean of the printed cells beside it" in " ".join(out.split())

    assert main(["results", str(tmp_path), "--reported", "metaeol-2024-table1", "--format", "csv"]) == 0
    bert = next(r for r in csv.DictReader(io.StringIO(capsys.readouterr().out)) if r["Model"] == "PromptBERT (110M)")
    assert bert["Average (metaeol-sts)"] == "78.54"
    assert "recomputed:Average (metaeol-sts)=78.52" in bert["marks"].split(";")

    tex = results_table(tmp_path, fmt="latex", reported=["metaeol-2024-table1"])
    line = next(x for x in tex.splitlines() if "PromptBERT" in x)
    assert "78.54 (78.52 recomputed)" in line


# ----------------------------------------------------------------------------------------- comparability (issue 42)
AWARENESS = ("InstructSTSB", "IntentEmotion", "NYTClustering")


def _stand_in_run(root: Path) -> None:
    """A MiniLM-like run on the awareness tasks whose average (59.23) beats every InBedder row, two of its three
    scores on label-derived stand-ins and one on a local copy, as issue 42 measured it."""
    for task, value in zip(AWARENESS, (0.6, 0.57, 0.6069), strict=True):
        dataset = (
            {"source": "local:nyt", "revision": "local-abc"}
            if task == "NYTClustering"
            else {"stand_in": True, "stand_in_note": "labels derived from the published set's fields"}
        )
        write(root, "org/minilm", task, value, dataset=dataset)


def test_a_stand_in_run_is_never_ranked_nor_bold_against_a_paper_s_table(tmp_path, capsys):
    _stand_in_run(tmp_path)
    args = ["results", str(tmp_path), "--reported", "inbedder-2024-table1"]
    assert main(args) == 0
    out = capsys.readouterr().out
    _, _, *rows = _markdown_rows(out)
    (ours,) = [r for r in rows if r[1] == "org/minilm"]
    assert rows[0] is ours and ours[0] == "-"  # sorted first by its average, and not ranked
    ranked = [int(r[0]) for r in rows if r[0] != "-"]
    assert ranked and ranked[0] == 1 and len(ranked) == len(rows) - 1  # every paper row ranked, from 1
    notes = " ".join(out.split())
    assert "Not ranked: org/minilm (default): not the same data: stand-in data (‡) on InstructSTSB, IntentEmotion" in (
        notes
    )
    assert "a local copy (†) of another set on NYTClustering (never ranked against published numbers)" in notes

    assert main([*args, "--format", "csv"]) == 0
    by_model = {r["Model"]: r for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    assert by_model["org/minilm"]["rank"] == "" and "unranked=not the same data" in by_model["org/minilm"]["marks"]

    assert main([*args, "--format", "latex"]) == 0
    tex = capsys.readouterr().out
    line = next(x for x in tex.splitlines() if "minilm" in x and x.endswith(r" \\"))
    assert line.startswith("-- & ") and r"\textbf" not in line  # before issue 42: #1, its cells bold
    assert "Not ranked: org/minilm" in " ".join(tex.split())


def test_a_table_ranks_by_its_own_complete_average_never_a_partial_one(tmp_path, capsys):
    # MetaEOL's rows have 5 of the 7 tasks of the generic STS average and all of metaeol-sts': the table
    # ranks by the complete one (before issue 42: the first average column, 5 of 7, partial).
    assert main(["results", str(tmp_path), "--reported", "metaeol-2024-table1"]) == 0
    out = capsys.readouterr().out
    header, _, *rows = _markdown_rows(out)
    assert "Rows sorted by Average (metaeol-sts), best first." in " ".join(out.split())
    assert all(r[0] != "-" for r in rows)
    column = next(i for i, h in enumerate(header) if h == "Average (metaeol-sts)")
    values = [float(r[column].split()[0].rstrip("§")) for r in rows]
    assert values == sorted(values, reverse=True)
    ranks = [int(r[0]) for r in rows]
    assert ranks == [1 + sum(v > x for v in values) for x in values]


# ----------------------------------------------------------------------------------------- LaTeX label, caption, bold
def _latex_rows(tex: str) -> dict[str, list[str]]:
    """The body rows of the first LaTeX table, by model cell (its row tag dropped)."""
    first = tex.split(r"\end{table}")[0]
    return {
        re.sub(r"\$\^\{\\mathrm\{\w+\}\}\$", "", r.split(" & ")[1]): r.split(" & ")
        for r in first.splitlines()
        if r.endswith(r" \\") and " & " in r and not r.startswith(r"\# ")
    }


def test_one_ranked_row_is_bold_nowhere_not_even_its_negative_score(tmp_path):
    for task, value in zip(DEMO, (-0.0982, 0.4, 0.2), strict=True):
        write(tmp_path, "org/alone", task, value)
    tex = results_table(tmp_path, fmt="latex")
    assert _latex_rows(tex)["alone"][0] == "1"  # ranked, and alone
    assert r"\textbf" not in tex and "$-$9.82" in tex  # before: every cell bold, -9.82 too
    assert "Bold:" not in tex  # the caption explains no bold that is not there


def test_two_ranked_rows_bold_each_column_s_best_but_not_a_column_only_one_has(tmp_path):
    for model, values in (("org/a", (0.5, 0.2, 0.3)), ("org/b", (0.4, 0.6, 0.3))):
        for task, value in zip(DEMO, values, strict=True):
            write(tmp_path, model, task, value)
    write(tmp_path, "org/a", "My_Task", 0.7)  # no rival in its column
    tex = results_table(tmp_path, fmt="latex")
    rows = _latex_rows(tex)
    assert rows["a"][2] == r"\textbf{50.00}" and rows["b"][3] == r"\textbf{60.00}"
    assert rows["a"][4] == rows["b"][4] == r"\textbf{30.00}"  # a tie: both best
    assert rows["a"][5] == "70.00"  # My_Task: one row alone is no one's best
    assert "Bold: the best score of each column" in tex


def test_latex_label_defaults_to_the_suite_and_caption_and_label_are_options(tmp_path, capsys):
    for task in DEMO:
        write(tmp_path, "org/a", task, 0.5)
        for variant in ("v1", "v2"):
            write(tmp_path, "org/a", task, 0.4, variant=variant)
    tex = results_table(tmp_path, fmt="latex")
    main_table = tex.split(r"\end{table}")[0]
    caption = "\\caption{Main score of each task ($\\times$100); averages as each suite defines them.}"
    assert main_table.rstrip().endswith(f"{caption}\n\\label{{tab:results-demo}}")  # one row: no bold to explain
    assert r"\label{tab:instruction-sensitivity}" in tex  # each further table: tab: and its title
    assert main(["results", str(tmp_path), "--format", "latex", "--caption", "Demo & 100%", "--label", "tab:demo"]) == 0
    out = capsys.readouterr().out
    assert "\\caption{Demo \\& 100\\%}\n\\label{tab:demo}\n\\end{table}" in out
    assert r"\label{tab:demo-instruction-sensitivity}" in out and r"\label{tab:results-demo}" not in out
    assert out.count(r"\caption{Demo") == 1  # the caption is the main table's; the others keep theirs


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--caption", "x"], "error: --caption is for LaTeX tables only; add --format latex."),
        (["--format", "csv", "--caption", "x", "--label", "t"], "error: --caption and --label are for LaTeX"),
        (["--format", "latex", "--label", "tab:a b"], "error: --label 'tab:a b': a LaTeX label key holds only"),
        (["--format", "latex", "--label", "tab:{x}"], "error: --label 'tab:{x}'"),
    ],
)
def test_caption_and_label_misuse_is_one_error_line(tmp_path, capsys, argv, message):
    write(tmp_path, "org/a", DEMO[0], 0.5)
    assert main(["results", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(message) and len(err.splitlines()) == 1, err


@pytest.mark.skipif(
    shutil.which("pdflatex") is None, reason="pdflatex is not installed (apt-get install texlive-latex-recommended)"
)
def test_a_label_and_caption_compile_and_resolve(tmp_path):
    for task in DEMO:
        write(tmp_path / "r", "org/a", task, 0.5)
    tex = results_table(tmp_path / "r", fmt="latex", caption="Demo_scores & more", label="tab:demo")
    compile_latex(tex + "\n\nSee Table~\\ref{tab:demo}.", tmp_path)
    log = compile_latex(tex + "\n\nSee Table~\\ref{tab:demo}.", tmp_path)  # the second pass resolves the reference
    assert "undefined" not in log.lower(), [line for line in log.splitlines() if "ndefined" in line]


# ----------------------------------------------------------------------------------------- issue 42 leftovers
def test_a_reported_row_s_name_is_never_cut_in_any_format(tmp_path, capsys):
    """Issue 42: LaTeX cut `e5-large-v2(w/o instruction)` at its '/' ("o instruction)"), as it drops a hub
    id's org; a paper's row name is shown whole as printed, in markdown, CSV and LaTeX."""
    name = "e5-large-v2(w/o instruction)"
    tex = results_table(tmp_path, fmt="latex", reported=["inbedder-2024-table2"])
    line = next(x for x in tex.splitlines() if "instruction)" in x and x.endswith(r" \\"))
    assert r" & e5-large-v2(w/o instruction)$^\S$" in line  # before: `-- & o instruction)$^\S$...`
    _, _, *rows = _markdown_rows(results_table(tmp_path, reported=["inbedder-2024-table2"]))
    assert f"{name} §" in [r[1] for r in rows]
    table = csv.DictReader(io.StringIO(results_table(tmp_path, fmt="csv", reported=["inbedder-2024-table2"])))
    assert name in [r["Model"] for r in table]


STS_GENERIC = ("STS12", "STS13", "STS14", "STS15", "STS16", "SICK-R", "STSBenchmark")


def test_a_reported_table_ranks_by_its_own_average_beside_a_run_complete_on_another(tmp_path, capsys):
    """Issue 42: beside a run complete on generic's STS average (the first average column), `--reported
    metaeol-2024-table1` still ranks by the table's own complete average, Average (metaeol-sts); before, by
    generic's, on which every MetaEOL row is partial (5 of 7) and so none was ranked."""
    for task in STS_GENERIC:
        write(tmp_path, "org/sts", task, 0.7)
    assert main(["results", str(tmp_path), "--reported", "metaeol-2024-table1"]) == 0
    out = capsys.readouterr().out
    _, _, *rows = _markdown_rows(out)
    assert "Rows sorted by Average (metaeol-sts), best first." in " ".join(out.split())
    assert all(r[0] != "-" for r in rows if "§" in r[1])
    (ours,) = [r for r in rows if r[1] == "org/sts"]
    assert ours[0] == "-"  # its own average is over other tasks: shown, not ranked


def test_a_reported_table_ranks_by_its_own_average_beside_the_demo_run(tmp_path, capsys):
    """Issue 42's demo: `bench results DEMO --reported inbedder-2024-table2` sorted by Average (demo), which no
    InBedder row has, so none was ranked; it ranks by the table's own, Avg (InBedder; generic)."""
    for task in DEMO:
        write(tmp_path, "org/demo", task, 0.5)
    assert main(["results", str(tmp_path), "--reported", "inbedder-2024-table2"]) == 0
    out = capsys.readouterr().out
    _, _, *rows = _markdown_rows(out)
    assert "Rows sorted by Avg (InBedder; generic), best first." in " ".join(out.split())
    assert next(r[0] for r in rows if "§" in r[1]) == "1"


def _table4_with(tmp_path: Path, old: str, new: str) -> Path:
    from bench.results.literature import REPORTED_DIR

    path = tmp_path / "metaeol-2024-table4.yaml"
    text = (REPORTED_DIR / "metaeol-2024-table4.yaml").read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def test_one_model_s_rows_of_two_tables_of_one_suite_are_one_row_unless_a_cell_conflicts(tmp_path, capsys):
    """Issue 42: MetaEOL's Table 4 row TC+SA+PI+IE is Table 1's MetaEOL-LLAMA2 (Ours) 7B (same spec, same
    cells): with both tables it is one row, ranked once, from "Tables 1 and 4"; where a cell differs the two
    stay apart, and a note says which cell."""
    args = ["results", str(tmp_path), "--reported", "metaeol-2024-table1", "--reported"]
    assert main([*args, "metaeol-2024-table4"]) == 0
    out = capsys.readouterr().out
    _, _, *rows = _markdown_rows(out)
    names = [r[1] for r in rows]
    assert len(rows) == 21 + 3 and "TC+SA+PI+IE §" not in names  # before: 25 rows, the model ranked twice
    (llama,) = [r for r in rows if r[1] == "MetaEOL-LLAMA2 (Ours) (7B) §"]
    assert llama[3] == "MetaEOL (Lei et al., ACL 2024), Tables 1 and 4" and llama[0] != "-"
    assert "is Table 1's 'MetaEOL-LLAMA2 (Ours) (7B)' and Table 4's 'TC+SA+PI+IE'" in " ".join(out.split())

    conflicting = _table4_with(tmp_path, "STS12: 64.16, STS13: 81.61", "STS12: 64.10, STS13: 81.61")
    assert main([*args, str(conflicting)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "TC+SA+PI+IE §" in out and "MetaEOL-LLAMA2 (Ours) (7B) §" in out
    assert "are the same model but are not merged: STS12 is 64.16 in Table 1 and 64.10 in Table 4." in out
