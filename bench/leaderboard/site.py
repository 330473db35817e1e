"""`bench leaderboard build`: validate submissions, then write a static site and the exports.

    SITE/index.html               one sortable, filterable table per suite (the script shows one suite at a
                                  time), one line per row, plots, conflicts held back, rejected submissions
    SITE/models/<id>.html          one page per model: every task's scores and its run records
    SITE/leaderboard.json|.csv     the same data for machines
    SITE/assets/leaderboard.css|js

Plain HTML, CSS and a little JavaScript (sorting and filtering only; the tables are complete without
it), relative links only, no CDN: it works from file:// and from any static host. Pages are rendered
with Jinja2 with autoescaping on, so every string from a submission (model names, settings, run
records) is shown as text, never interpreted as HTML.

Every score on every page (tables, plots, model pages) is ×100 with two decimals, stated once per page.
Each plot appears once: a task's robustness strip plot in the first suite (in `bench list suites`
order) that holds the task, a score-against-size plot and a shift-vs-gain plot (bench/leaderboard/shift_plot.py,
where rows recorded a shift and have their ∅ run) in each suite, per-aspect bars on model pages,
and, in the "Instruction sensitivity" section after the suites, one strip plot per task with
instruction-variant results (leaderboard.json's `sensitivity`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from bench.core.errors import BenchError
from bench.core.fileio import atomic_write_text, ensure_dir
from bench.core.redact import redact_value
from bench.leaderboard.entries import Report
from bench.leaderboard.exports import by_id, write_exports
from bench.leaderboard.external import SUBMITTED, Excluded, ExternalRow
from bench.leaderboard.plots import bars_svg, robustness_svg, robustness_values, sensitivity_svg, size_svg
from bench.leaderboard.reference import metric_range
from bench.leaderboard.row_types import (
    ExternalJson,
    LeaderboardJson,
    ModelJson,
    SensitivityModel,
    SensitivityTask,
    SuiteRow,
    SuiteTable,
)
from bench.leaderboard.rows import size_label
from bench.leaderboard.shift_plot import shift_gain_svg
from bench.leaderboard.submission import read_submission
from bench.leaderboard.table import leaderboard_data
from bench.leaderboard.trust import Conflict, conflicts, settle_conflicts
from bench.leaderboard.validate import internal_error, validate
from bench.leaderboard.verify import load_verifications

logger = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"
PLOT_MODELS = 12  # models per robustness / sensitivity plot on the index page (best first)


@dataclass
class BuildResult:
    out: Path
    reports: list[Report]
    data: LeaderboardJson

    @property
    def rejected(self) -> list[Report]:
        return [r for r in self.reports if not r.valid]

    @property
    def conflicts(self) -> list[Conflict]:
        """Differing results for one key, held back unless one is verified (`settle_conflicts`)."""
        return conflicts(self.reports)


def validate_all(
    inputs: Sequence[str | Path],
    *,
    data_dirs: Iterable[Path] = (),
    verified: Container[str] = frozenset(),
    allow_mixed_script: Container[str] = frozenset(),
) -> list[Report]:
    """One report per input, in order, with conflicts across them settled by trust (`settle_conflicts`):
    identical results merge; of differing results for one key, the one sha256 in `verified` is kept, and
    when no one is, all are held back. Reading or checking one input never stops the others: whatever it
    raises (other than the maintainer's own usage errors, such as a path that does not exist) is its
    rejection reason. `allow_mixed_script`: model names whose words may mix scripts (the maintainer's
    `--allow-mixed-script`, bench/leaderboard/names.py)."""
    board: set[str] = set()
    data_dirs = tuple(data_dirs)
    reports = [_validate_one(p, data_dirs, board, allow_mixed_script) for p in inputs]
    settle_conflicts(reports, verified)
    return reports


def _validate_one(
    path: str | Path, data_dirs: tuple[Path, ...], board: set[str], allow_mixed_script: Container[str]
) -> Report:
    try:
        submission = read_submission(path)
    except BenchError:
        raise  # no such path: the maintainer's command line, one `error:` line
    except Exception as e:  # a reader bug on hostile input is this submission's problem, not the build's
        logger.debug("reading %s raised", path, exc_info=True)
        return Report(str(path), problems=[internal_error(str(path), e)])
    return validate(submission, data_dirs=data_dirs, board=board, allow_mixed_script=allow_mixed_script)


def build(
    inputs: Sequence[str | Path],
    out: str | Path,
    *,
    data_dirs: Iterable[Path] = (),
    verifications: Iterable[str | Path] = (),
    external: Sequence[ExternalRow] = (),
    excluded: Sequence[Excluded] = (),
    allow_mixed_script: Container[str] = frozenset(),
) -> BuildResult:
    """Validate `inputs` and write the site; results reproduced in `verifications` files are shown as
    verified, and win a conflict against self-reported ones. `external` rows (a paper's reported numbers,
    MTEB's published results: bench/leaderboard/external.py) are shown beside the submitted ones, marked
    with their source, never verified; `excluded` lists the models a source has results for that make no
    row, with why. A model name in `allow_mixed_script` may mix scripts within a word
    (bench/leaderboard/names.py rule 4)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise BenchError(f"--out {out} exists and is not a folder")
    verified = load_verifications(verifications)
    reports = validate_all(inputs, data_dirs=data_dirs, verified=verified, allow_mixed_script=allow_mixed_script)
    # A credential a run record should never have held (a URL's userinfo or query values, from an older
    # harness or an edited file) is masked before anything is published (bench/core/redact.py).
    data: LeaderboardJson = redact_value(leaderboard_data(reports, verified, external, excluded))
    render(data, out)
    return BuildResult(out, reports, data)


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("bench.leaderboard", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["x100"] = lambda v: "" if v is None else f"{v:.2f}"  # a score already ×100
    env.filters["times100"] = lambda v: "" if v is None else f"{100 * v:.2f}"  # a raw MTEB score
    env.filters["size"] = size_label
    env.filters["pretty_json"] = lambda v: json.dumps(v, indent=2, ensure_ascii=False, sort_keys=False, default=str)
    env.filters["score"] = _score_cell
    env.filters["breakable"] = _breakable
    env.filters["words"] = _words
    return env


def _breakable(text: str) -> Markup:
    """Escaped text that may wrap after each '/' (org/model), and nowhere inside a word."""
    return Markup(escape(text)).replace("/", Markup("/<wbr>"))


def _words(text: str) -> Markup:
    """Escaped text that wraps at spaces only (not after the hyphen of '1st-gen' or 'template=query-…')."""
    return Markup(" ").join(Markup('<span class="nw">%s</span>') % word for word in str(text).split())


def _score_cell(value: object, key: str) -> str:
    """A score as the papers print it: metrics ×100 with two decimals; counts as they are, other numbers (seconds) with two."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "" if value is None else str(value)
    bounds = metric_range(key)
    if bounds and bounds[1] <= 1:
        return f"{100 * value:.2f}"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def render(data: LeaderboardJson, out: Path) -> None:
    env = _environment()
    models = by_id(data)
    ensure_dir(out / "models", what="leaderboard site", option="--out")
    assets = ensure_dir(out / "assets", what="leaderboard site", option="--out")
    for name in ("leaderboard.css", "leaderboard.js"):
        atomic_write_text(
            assets / name, (STATIC / name).read_text(encoding="utf-8"), what="leaderboard site", option="--out"
        )
    write_exports(data, out)
    plotted: set[str] = set()
    plots = {s["name"]: _suite_plots(s, models, plotted) for s in data["suites"]}
    rows: dict[str, ModelJson | ExternalJson] = {**models, **{x["id"]: x for x in data.get("external", [])}}
    # (what a suite row's model_id names)
    sizes = {s["name"]: _size_plot(s, models) for s in data["suites"]}
    sensitivity = {t["task"]: _sensitivity_plot(t) for t in data["sensitivity"]}
    shifts = {s["name"]: _shift_plot(s) for s in data["suites"]}
    atomic_write_text(
        out / "index.html",
        env.get_template("index.html").render(
            data=data,
            models=rows,
            plots=plots,
            sizes=sizes,
            sensitivity=sensitivity,
            shifts=shifts,
            plot_models=PLOT_MODELS,
            root=".",
        ),
    )
    keep = {f"{m['id']}.html" for m in data["models"]}
    suite_rows, variants = _suite_rows_by_model(data), _variants_by_model(data)
    for m in data["models"]:
        page = env.get_template("model.html").render(
            model=m,
            data=data,
            plots=_model_plots(m),
            suite_rows=suite_rows.get(m["id"], []),
            variants=variants.get(m["id"], []),
            root="..",
        )
        atomic_write_text(out / "models" / f"{m['id']}.html", page)
    for stale in (out / "models").glob("*.html"):
        if stale.name not in keep:
            stale.unlink()


def _suite_plots(suite: SuiteTable, models: dict[str, ModelJson], plotted: set[str]) -> list[Markup]:
    """Robustness plots for a suite's tasks whose scores hold per-instruction V-measures, unless an
    earlier suite already showed the task (`plotted` collects the tasks shown)."""
    ranked = sorted(_submitted(suite), key=lambda r: (r["average"] is None, -(r["average"] or 0)))[:PLOT_MODELS]
    plots = []
    for col in suite["columns"]:
        if col["task"] in plotted:
            continue
        groups = []
        for row in ranked:
            result = models[row["model_id"]]["results"].get(col["task"])
            values = robustness_values(result["scores"]) if result else None
            if values:
                groups.append((models[row["model_id"]]["label"], values))
        if groups:
            plotted.add(col["task"])
            plots.append(robustness_svg(f"{col['label']}: V-measure per instruction", groups))
    return plots


def _submitted(suite: SuiteTable) -> list[SuiteRow]:
    """The suite's submitted rows: the plots draw from run results (per-instruction scores, the recorded
    size), which a reported or published row does not have."""
    return [r for r in suite["rows"] if r.get("source", SUBMITTED) == SUBMITTED]


def _size_plot(suite: SuiteTable, models: dict[str, ModelJson]) -> Markup | None:
    """The suite's first average against model size, for models with both; None when fewer than one."""
    points = [
        (models[r["model_id"]]["label"], n_parameters, r["average"], r["baseline"])
        for r in _submitted(suite)
        if r["average"] is not None and (n_parameters := models[r["model_id"]]["n_parameters"])
    ]
    return size_svg(f"{suite['name']}: {suite['average_label']} against model size", points) if points else None


def _shift_plot(suite: SuiteTable) -> Markup | None:
    """The suite's shift-vs-gain plot (bench/leaderboard/shift_gain.py); None without a point."""
    found = suite.get("shift_gain")
    if not found or not found["points"]:
        return None
    return shift_gain_svg(f"{suite['name']}: instruction shift against gain", found)


def _sensitivity_plot(task: SensitivityTask) -> Markup:
    """A task's strip plot of scores per instruction variant: the PLOT_MODELS best models by mean."""
    return sensitivity_svg(
        f"{task['task']}: score per instruction variant",
        f"{task['main_score_name']} ×100",
        task["models"][:PLOT_MODELS],
    )


def _variants_by_model(data: LeaderboardJson) -> dict[str, list[tuple[SensitivityTask, SensitivityModel]]]:
    """Per model id: (task, the model's entry) of each task in the sensitivity section it was varied on.
    Indexed once, so that each model page does not scan every model's variants (quadratic in models)."""
    found: dict[str, list[tuple[SensitivityTask, SensitivityModel]]] = {}
    for task in data["sensitivity"]:
        for m in task["models"]:
            if (model_id := m.get("model_id")) is not None:
                found.setdefault(model_id, []).append((task, m))
    return found


def _suite_rows_by_model(data: LeaderboardJson) -> dict[str, list[tuple[SuiteTable, SuiteRow, int]]]:
    """Per model id: (suite, its row, how many rows the suite ranks) for the model page's suite table,
    indexed once (a page scanning every suite's rows made 1,000 pages cost a million steps)."""
    found: dict[str, list[tuple[SuiteTable, SuiteRow, int]]] = {}
    for suite in data["suites"]:
        ranked = sum(r["rank"] is not None for r in suite["rows"])
        for row in suite["rows"]:
            found.setdefault(row["model_id"], []).append((suite, row, ranked))
    return found


def _model_plots(model: ModelJson) -> dict[str, list[Markup]]:
    """Per task: the per-criterion / per-aspect bars, and the per-instruction strip plot for robustness tasks."""
    out: dict[str, list[Markup]] = {}
    for task, result in model["results"].items():
        plots = out.setdefault(task, [])
        if result["details"]:
            plots.append(
                bars_svg(f"{task}: per criterion / aspect", [(d["label"], d["value"]) for d in result["details"]])
            )
        values = robustness_values(result["scores"])
        if values:
            plots.append(robustness_svg(f"{task}: V-measure per instruction", [(model["label"], values)]))
    return out
