"""`bench leaderboard build`: validate submissions, then write a static site and the exports.

    SITE/index.html               one sortable, filterable table per suite, plots, rejected submissions
    SITE/models/<id>.html          one page per model: every task's scores and its run records
    SITE/leaderboard.json|.csv     the same data for machines
    SITE/assets/leaderboard.css|js

Plain HTML, CSS and a little JavaScript (sorting and filtering only; the tables are complete without
it), relative links only, no CDN: it works from file:// and from any static host. Pages are rendered
with Jinja2 with autoescaping on, so every string from a submission (model names, settings, run
records) is shown as text, never interpreted as HTML.
"""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from bench.errors import BenchError
from bench.fileio import atomic_write_text
from leaderboard.plots import robustness_svg, robustness_values
from leaderboard.reference import metric_range
from leaderboard.submission import read_submission
from leaderboard.table import by_id, leaderboard_data, size_label, write_exports
from leaderboard.validate import Report, validate
from leaderboard.verify import load_verifications

logger = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"
PLOT_MODELS = 12  # models per robustness plot on the index page (best mean Δci first)


@dataclass
class BuildResult:
    out: Path
    reports: list[Report]
    data: dict[str, Any]

    @property
    def rejected(self) -> list[Report]:
        return [r for r in self.reports if not r.valid]


def validate_all(inputs: Sequence[str | Path], *, data_dirs: Iterable[Path] = ()) -> list[Report]:
    """One report per input, in order; a result repeated across inputs is a duplicate of the first."""
    taken: dict[tuple, str] = {}
    data_dirs = tuple(data_dirs)
    return [validate(read_submission(p), data_dirs=data_dirs, taken=taken) for p in inputs]


def build(
    inputs: Sequence[str | Path], out: str | Path, *, data_dirs: Iterable[Path] = (),
    verifications: Iterable[str | Path] = (),
) -> BuildResult:
    """Validate `inputs` and write the site; results reproduced in `verifications` files are shown as verified."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise BenchError(f"--out {out} exists and is not a folder")
    verified = load_verifications(verifications)
    reports = validate_all(inputs, data_dirs=data_dirs)
    data = leaderboard_data(reports, verified)
    render(data, out)
    return BuildResult(out, reports, data)


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("leaderboard", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["x100"] = lambda v: "" if v is None else f"{v:.2f}"  # a score already ×100
    env.filters["times100"] = lambda v: "" if v is None else f"{100 * v:.2f}"  # a raw MTEB score
    env.filters["size"] = size_label
    env.filters["pretty_json"] = lambda v: json.dumps(v, indent=2, ensure_ascii=False, sort_keys=False, default=str)
    env.filters["score"] = _score_cell
    return env


def _score_cell(value: Any, key: str) -> str:
    """A score as the papers print it: metrics ×100 with two decimals, counts as they are."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "" if value is None else str(value)
    bounds = metric_range(key)
    if bounds and bounds[1] <= 1:
        return f"{100 * value:.2f}"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def render(data: dict[str, Any], out: Path) -> None:
    env = _environment()
    models = by_id(data)
    (out / "models").mkdir(parents=True, exist_ok=True)
    assets = out / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    for name in ("leaderboard.css", "leaderboard.js"):
        shutil.copyfile(STATIC / name, assets / name)
    write_exports(data, out)
    plots = {s["name"]: _suite_plots(s, models) for s in data["suites"]}
    atomic_write_text(out / "index.html", env.get_template("index.html").render(data=data, models=models, plots=plots, root="."))
    keep = {f"{m['id']}.html" for m in data["models"]}
    for m in data["models"]:
        page = env.get_template("model.html").render(model=m, data=data, plots=_model_plots(m), root="..")
        atomic_write_text(out / "models" / f"{m['id']}.html", page)
    for stale in (out / "models").glob("*.html"):
        if stale.name not in keep:
            stale.unlink()


def _suite_plots(suite: dict[str, Any], models: dict[str, dict[str, Any]]) -> list[Any]:
    """Robustness plots for a suite's tasks (only those whose scores hold per-instruction V-measures)."""
    ranked = sorted(suite["rows"], key=lambda r: (r["average"] is None, -(r["average"] or 0)))[:PLOT_MODELS]
    plots = []
    for col in suite["columns"]:
        groups = []
        for row in ranked:
            result = models[row["model_id"]]["results"].get(col["task"])
            values = robustness_values(result["scores"]) if result else None
            if values:
                groups.append((models[row["model_id"]]["label"], values))
        if groups:
            plots.append(robustness_svg(f"{col['label']}: V-measure per instruction", groups))
    return plots


def _model_plots(model: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for task, result in model["results"].items():
        values = robustness_values(result["scores"])
        if values:
            out[task] = robustness_svg("V-measure per instruction", [(model["label"], values)])
    return out
