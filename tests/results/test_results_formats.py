"""`bench results` as a paper takes it: several folders, rows sorted and ranked by the suite average with
baselines marked and unranked, readable experiments, short revisions, markdown / CSV / booktabs LaTeX;
`bench run`'s two tables; rank stability saying which pairs of variants had no τ (bench/results/summary.py)."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from bench.cli.main import main
from bench.results.comparison import results_table
from bench.results.naming import readable_experiment
from bench.results.outcome import TaskOutcome
from bench.results.sensitivity import rank_stability
from bench.results.summary import DETAILS_WIDTH, run_table, shorten_list
from bench.results.tables import format_count, latex_escape
from helpers import compile_latex

DEMO = ("DemoInstructSTS", "DemoIntentEmotion", "DemoNYTClustering")  # the demo suite: "Average (demo)"
REVISION = "0123456789abcdef0123456789abcdef01234567"


def write(
    root: Path,
    model: str,
    task: str,
    score: float,
    *,
    experiment: dict | None = None,
    settings: dict | None = None,
    dataset: dict | None = None,
    variant: str | None = None,
) -> None:
    """A TaskResult and its run record where `bench run` files them."""
    experiment = {**(experiment or {}), **({"instruction": variant} if variant else {})}
    folder = root / model.replace("/", "__") / REVISION
    if experiment:
        folder = folder / "experiments" / "__".join(f"{k}_{v}" for k, v in sorted(experiment.items()))
    (folder / "run_records").mkdir(parents=True, exist_ok=True)
    result = {"task_name": task, "dataset_revision": "r", "scores": {"test": [{"main_score": score}]}}
    record = {
        "task": {"name": task, "main_score": "main", "dataset": dataset or {}},
        "model": {"name": model, "revision": REVISION, "experiment": experiment, "settings": settings or {}},
        **({"variant": {"label": variant, "set": None}} if variant else {}),
    }
    (folder / f"{task}.json").write_text(json.dumps(result), encoding="utf-8")
    (folder / "run_records" / f"{task}.json").write_text(json.dumps(record), encoding="utf-8")


@pytest.fixture
def board(tmp_path: Path) -> Path:
    """Averages 90 (instruction-blind), 50 and 50 (a tie), 30, and a partial one; one stand-in score, one
    on a local copy, a hash-bearing custom template, a task name with an underscore."""
    root = tmp_path / "board"
    scores = {
        "org/blind": (0.9, 0.9, 0.9),
        "org/a": (0.5, 0.5, 0.5),
        "org/b_#1": (0.6, 0.4, 0.5),
        "org/c": (0.3, 0.3, 0.3),
    }
    for model, values in scores.items():
        blind = {"template": "none"} if model == "org/blind" else {}
        for task, value in zip(DEMO, values, strict=True):
            dataset = (
                {"stand_in": True, "stand_in_note": "a small proxy"}
                if (model, task) == ("org/a", DEMO[0])
                else ({"source": "local:data", "revision": "local-abc"} if (model, task) == ("org/c", DEMO[1]) else {})
            )
            write(root, model, task, value, experiment=blind, settings=blind, dataset=dataset)
    for task in DEMO[:2]:
        write(
            root,
            "org/partial",
            task,
            0.99,
            experiment={"template": "q-text-3fa2c1d0"},
            settings={"template": "Q: {text}"},
        )
    write(root, "org/a", "My_Task", -0.25)
    return root


def _markdown_rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.split("|")[1:-1]] for line in text.split("\n\n")[0].splitlines()]


def test_rows_sorted_by_average_baseline_marked_and_unranked(board):
    header, _, *rows = _markdown_rows(results_table(board))
    assert header[:4] == ["#", "Model", "Revision", "Experiment"] and header[-1] == "Average (demo)"
    # The comparability rule (issue 42): org/a (a stand-in score) and org/c (a local copy) are on other data than
    # org/b's, so they keep their place unranked, with their reason under the table (before: 1, 1, 3).
    assert [r[:2] for r in rows] == [
        ["-", "org/blind ∅"],
        ["-", "org/a"],
        ["1", "org/b_#1"],
        ["-", "org/c"],
        ["-", "org/partial"],
    ]
    notes = " ".join(results_table(board).split())  # the notes under the table, lines joined
    assert (
        "Not ranked: org/a (default): not the same data: stand-in data (‡) on DemoInstructSTS (never ranked "
        "against rows on the published data)." in notes
    )
    assert "Not ranked: org/partial" in notes and "partial: 2 of the 3 tasks of Average (demo)" in notes
    assert {r[2] for r in rows} == {REVISION[:12]}
    assert rows[0][3] == "template=none" and rows[4][3] == "template=Q: {text}"  # the setting, not its hash
    assert (
        rows[1][header.index("DemoInstructSTS")] == "50.00‡" and rows[3][header.index("DemoIntentEmotion")] == "30.00†"
    )
    assert rows[4][-1] == "99.00 (2 of 3, partial)" and rows[1][header.index("My_Task")] == "-25.00"


def test_partial_averages_are_never_ranked_even_when_no_row_is_complete(tmp_path):
    # The comparability rule (issue 42): before, the partial averages over the same tasks were ranked (1, 2).
    for model, values, tasks in (
        ("org/x", (0.2, 0.4), DEMO[:2]),
        ("org/y", (0.5, 0.5), DEMO[:2]),
        ("org/z", (0.9, 0.9), DEMO[1:]),
    ):
        for task, value in zip(tasks, values, strict=True):
            write(tmp_path, model, task, value)
    rows = _markdown_rows(results_table(tmp_path))[2:]
    assert [r[:2] for r in rows] == [["-", "org/z"], ["-", "org/y"], ["-", "org/x"]]


def test_legend_explains_each_mark_used_once(board):
    out = results_table(board)
    legend = out.split("\n\n")[1]
    assert [line[0] for line in legend.splitlines() if not line.startswith(" ")] == ["†", "‡", "∅"]
    assert "  - DemoInstructSTS: a small proxy" in legend


def test_several_folders_merge_and_a_file_reached_twice_counts_once(board, tmp_path):
    assert results_table([board, board / "org__a", board]) == results_table(board)
    other = tmp_path / "other"
    write(other, "org/new", DEMO[0], 0.7)
    merged = _markdown_rows(results_table([board, other]))
    assert "org/new" in [r[1] for r in merged] and len(merged) == len(_markdown_rows(results_table(board))) + 1
    write(other, "org/c", DEMO[0], 0.35)  # the same model, revision, experiment and task in another file
    out = results_table([board, other])
    assert "35.00" in out and "Note: 1 result(s) repeat a model, revision, experiment and task" in out
    copy = tmp_path / "copy"
    shutil.copytree(board, copy)  # a copied run folder: the same results in other files, merged silently
    assert results_table([board, copy]) == results_table(board)


def test_csv_has_one_header_numbers_and_a_marks_column(board, capsys):
    assert main(["results", str(board), "--format", "csv", "--full-revisions"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert list(rows[0])[:4] == ["rank", "Model", "Revision", "Experiment"] and list(rows[0])[-1] == "marks"
    by_model = {r["Model"]: r for r in rows}
    assert by_model["org/blind"]["marks"] == "baseline" and by_model["org/blind"]["rank"] == ""
    # an unranked row's reason leads its marks (issue 42's comparability rule; before, the marks alone)
    assert by_model["org/a"]["DemoInstructSTS"] == "50.00" and by_model["org/a"]["marks"] == (
        "unranked=not the same data: stand-in data (‡) on DemoInstructSTS (never ranked against rows on the "
        "published data);stand_in:DemoInstructSTS"
    )
    assert by_model["org/c"]["marks"].endswith(";local_copy:DemoIntentEmotion")
    assert (
        by_model["org/partial"]["marks"].endswith(";partial:Average (demo)")
        and by_model["org/partial"]["DemoNYTClustering"] == ""
    )
    assert by_model["org/a"]["Revision"] == REVISION


def check_booktabs(tex: str) -> list[str]:
    """The structural checks a paper's LaTeX needs; returns each tabular's column spec."""
    stack = []
    for kind, env in re.findall(r"\\(begin|end)\{(\w+)\}", tex):
        if kind == "begin":
            stack.append(env)
        else:
            assert stack and stack.pop() == env, f"\\end{{{env}}} without its \\begin"
    assert not stack, f"unclosed {stack}"
    specs = []
    for spec, body in re.findall(r"\\begin\{tabular\}\{([lrc]+)\}\n(.*?)\\end\{tabular\}", tex, re.DOTALL):
        lines = body.splitlines()
        assert [x for x in lines if x in (r"\toprule", r"\midrule", r"\bottomrule")] == [
            r"\toprule",
            r"\midrule",
            r"\bottomrule",
        ]
        assert lines[0] == r"\toprule" and lines[-1] == r"\bottomrule"
        for row in (x for x in lines if x not in (r"\toprule", r"\midrule", r"\bottomrule")):
            assert row.endswith(r" \\"), row
            assert len(re.split(r"(?<!\\)&", row)) == len(spec), row
        specs.append(spec)
    for line in tex.splitlines():
        if not line.startswith("%"):
            assert len(re.findall(r"(?<!\\)\$", line)) % 2 == 0, line  # math mode closed on each line
    depth = 0
    for brace in re.findall(r"(?<!\\)[{}]", "\n".join(x for x in tex.splitlines() if not x.startswith("%"))):
        depth += 1 if brace == "{" else -1
        assert depth >= 0, "a } closes nothing"
    assert depth == 0, "unbalanced braces"
    return specs


def test_latex_is_a_booktabs_table_with_escapes_bold_and_legend(board):
    tex = results_table(board, fmt="latex")
    assert tex.startswith("% ") and r"\usepackage{booktabs}" in tex.splitlines()[0] and "amssymb" in tex.splitlines()[0]
    assert check_booktabs(tex) == ["rl" + "r" * 5]  # revision and experiment: in the row legend under it
    assert r"My\_Task" in tex and r"org/b\_\#1" in tex and "My_Task" not in tex
    rows = {
        re.sub(r"\$\^\{\\mathrm\{\w+\}\}\$", "", r.split(" & ")[1]): r.split(" & ")
        for r in tex.splitlines()
        if r.endswith(r" \\") and " & " in r and not r.startswith(r"\# ")
    }
    assert rows[r"blind$^\varnothing$"][0] == "--"  # the baseline: no rank, never bold
    assert not any(r"\textbf" in c for c in rows[r"blind$^\varnothing$"])
    # The comparability rule (issue 42): only comparable rows are bold; org/partial (a partial average), org/a
    # (a stand-in score) and org/c (a local copy) never are (before: 99.00 and org/a's cells were bold).
    assert rows["partial"][2] == r"99.00" and rows["a"][2] == r"50.00$^\ddagger$"
    # Issue 43: org/b is the one row that may be ranked, and one row alone is no column's best: nothing is bold
    # (before: each of org/b's cells was).
    assert rows["a"][4] == r"50.00" and rows[r"b\_\#1"][4] == r"50.00"
    assert rows["a"][-1] == r"50.00 \\" and rows[r"b\_\#1"][-1] == r"50.00 \\"
    assert rows["partial"][-1] == r"99.00 (2/3) \\"  # a partial average is never the best
    assert rows["a"][5] == r"$-$25.00"  # a minus sign
    assert not any(r"\textbf" in c for c in [*rows["a"], *rows["partial"], *rows["c"]])
    assert r"org/partial, revision 0123456789abcdef0123456789abcdef01234567, experiment template=Q: \{text\}." in tex
    assert r"$^\ddagger$ stand-in:" in tex and r"$^\dagger$ local copy:" in tex and r"-{}-data-dir" in tex
    assert tex.index(r"\end{tabular}") < tex.index(r"\caption{") < tex.index(r"\end{table}")


def test_latex_escape_covers_every_special_character():
    assert latex_escape(r"a_b&c%d$e#f{g}h~i^j\k") == (
        r"a\_b\&c\%d\$e\#f\{g\}h\textasciitilde{}i\textasciicircum{}j\textbackslash{}k"
    )
    assert latex_escape("Mean Δci --x") == r"Mean $\Delta$ci -{}-x"


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_latex_compiles(board, tmp_path):
    compile_latex(results_table(board, fmt="latex"), tmp_path)


def test_experiment_names_are_the_settings_not_hashes():
    assert readable_experiment({}) == "default"
    assert readable_experiment({"pooling": "1st-gen", "dtype": "bfloat16"}, {"dtype": "auto"}) == (
        "dtype=bfloat16, pooling=1st-gen"
    )  # a readable label is the setting as run (auto resolved)
    assert readable_experiment({"template": "q-text-3fa2c1d0"}, {"template": "Q: {text}"}) == "template=Q: {text}"
    long = "Represent the query for retrieval: {instruction} {text}"
    assert readable_experiment({"template": "Represent-the-query-for-retri-1a2b3c4d"}, {"template": long}) == (
        "template=Represent-the-query…"
    )


# ----------------------------------------------------------------------------------------- bench run
def test_run_prints_scores_then_diagnostics_with_short_details():
    scores = {f"{k}_success_rate": 0.5 for k in ("emotion", "intent", "topic", "style", "length", "tone")}
    outcome = TaskOutcome(
        "DemoIntentEmotion",
        "hmean_success_rate",
        0.5,
        {"main_score": 0.5, **scores},
        "computed",
        {"encode": {"texts_encoded": 1106, "cache_hits": 12345}, "evaluation_seconds": 2.0},
    )
    reused = TaskOutcome("DemoInstructSTS", "cosine_spearman", 0.25, {"main_score": 0.25}, "reused", {})
    scores_part, details, diagnostics = run_table([outcome, reused]).split("\n\n")
    assert _markdown_rows(scores_part)[0] == ["Task", "Metric", "Score", "Details"]
    cell = _markdown_rows(scores_part)[2][3]
    assert (
        len(cell) <= DETAILS_WIDTH and cell.endswith(", …") and "Average (demo, 2 of 3 tasks, partial)" in scores_part
    )
    assert details.startswith("Details in full:\n  DemoIntentEmotion: emotion 50.00,") and "tone 50.00" in details
    header, _, computed, skipped = _markdown_rows(diagnostics)
    assert header == ["Task", "Status", "Encoded", "Cache hits", "Seconds"]
    assert computed == ["DemoIntentEmotion", "computed", "1,106", "12,345", "2.0"]
    assert skipped == ["DemoInstructSTS", "reused", "0", "-", "-"]


def test_one_count_format_and_list_shortening():
    assert [format_count(n) for n in (0, 1106, 1234567, None)] == ["0", "1,106", "1,234,567", "-"]
    assert shorten_list(["a 1.00", "b 2.00"]) == "a 1.00, b 2.00"
    assert shorten_list([f"label{i} 10.00" for i in range(9)], width=40) == "label0 10.00, label1 10.00, …"


# ----------------------------------------------------------------------------------------- rank stability
def test_rank_stability_says_how_many_pairs_had_no_tau(tmp_path):
    """Both models tie under v1: τ is undefined for v1|v2 and v1|v3; -1.00 is the one pair left."""
    tied = {"org/a": {"v1": 0.5, "v2": 0.5, "v3": 0.4}, "org/b": {"v1": 0.5, "v2": 0.4, "v3": 0.5}}
    r = rank_stability(tied)
    assert (r["pairs"], r["pairs_compared"], r["pairs_undefined"], r["mean_tau"]) == (3, 1, 2, -1.0)
    for model, scores in tied.items():
        write(tmp_path, model, DEMO[0], 0.5)
        for label, score in scores.items():
            write(tmp_path, model, DEMO[0], score, variant=label)
    out = results_table(tmp_path)
    row = next(line for line in out.split("Rank stability\n\n")[1].splitlines() if line.startswith(f"| {DEMO[0]}"))
    assert "| -1.00 (1 of 3 pairs; 2 undefined: tied scores) | -1.00 " in row
    assert "undefined" in out.split("Rank stability\n\n")[1].split("\n\n")[1]  # STABILITY_NOTE explains it
    assert check_booktabs(results_table(tmp_path, fmt="latex")) == ["rl" + "r", "lllrrrrrr", "lrrrrlr"]
