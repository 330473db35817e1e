"""Inline SVG plots, drawn here so the site needs no plotting library and no CDN.

Robustness (InBedder Figure 4): for each task, every model's V-measures under the 10 correct, 10
implicit and 10 incorrect instructions, one dot per instruction and a bar at each set's mean, with
Δci and Δii (mean correct/implicit minus mean incorrect) written above. A task is plotted whenever its
scores hold `v_measure_<set>_<i>` keys (tasks/abstasks/instruction_robustness.py writes them), so
the plot follows the score keys, not task names. Every label is escaped.
"""

from __future__ import annotations

import math
import re
from typing import Any

from markupsafe import Markup, escape

SETS = ("correct", "implicit", "incorrect")
COLORS = {"correct": "#1b7837", "implicit": "#2166ac", "incorrect": "#b2182b"}
_KEY = re.compile(r"^v_measure_(correct|implicit|incorrect)_(\d+)$")


def robustness_values(scores: dict[str, Any]) -> dict[str, list[float]] | None:
    """Per set, the V-measures by instruction index; None when the scores hold none."""
    found: dict[str, dict[int, float]] = {s: {} for s in SETS}
    for key, value in scores.items():
        m = _KEY.match(key)
        if m and isinstance(value, int | float):
            found[m.group(1)][int(m.group(2))] = float(value)
    if not any(found.values()):
        return None
    return {s: [v for _, v in sorted(found[s].items())] for s in SETS}


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def robustness_svg(title: str, groups: list[tuple[str, dict[str, list[float]]]], *, width_per_group: int = 150) -> Markup:
    """One task: a group of three columns (correct, implicit, incorrect) per model, V-measure ×100."""
    left, right, top, bottom = 46, 12, 34, 62
    plot_h = 190
    width = max(400, left + right + max(1, len(groups)) * width_per_group)
    height = top + plot_h + bottom
    top_value = max((v for _, sets in groups for vs in sets.values() for v in vs), default=0.0) * 100
    step = next(s for s in (2, 5, 10, 20, 25) if math.ceil(max(top_value, 1e-9) / s) <= 5)
    y_max = float(max(1, math.ceil(top_value / step)) * step)

    def y(value: float) -> float:
        return top + plot_h - (value * 100 / y_max) * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" role="img" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<text x="{left}" y="16" class="plot-title">{escape(title)}</text>',
    ]
    for tick in range(0, int(y_max) + 1, step):
        ty = top + plot_h - tick / y_max * plot_h
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{ty:.1f}" y2="{ty:.1f}" class="grid"/>')
        parts.append(f'<text x="{left - 6}" y="{ty + 4:.1f}" class="tick" text-anchor="end">{tick}</text>')
    parts.append(
        f'<text transform="translate(12 {top + plot_h / 2}) rotate(-90)" class="axis" text-anchor="middle">V-measure ×100</text>'
    )
    for g, (label, sets) in enumerate(groups):
        x0 = left + g * width_per_group
        means = {s: _mean(sets.get(s, [])) for s in SETS}
        for j, s in enumerate(SETS):
            cx = x0 + 30 + j * 40
            values = sets.get(s, [])
            for i, v in enumerate(values):
                jitter = (i - (len(values) - 1) / 2) * 2.2
                parts.append(
                    f'<circle cx="{cx + jitter:.1f}" cy="{y(v):.1f}" r="3" fill="{COLORS[s]}" fill-opacity="0.55">'
                    f"<title>{escape(label)} · {s} #{i + 1}: {100 * v:.2f}</title></circle>"
                )
            if means[s] is not None:
                my = y(means[s])
                parts.append(
                    f'<line x1="{cx - 14}" x2="{cx + 14}" y1="{my:.1f}" y2="{my:.1f}" stroke="{COLORS[s]}" stroke-width="3">'
                    f"<title>{escape(label)} · mean {s}: {100 * means[s]:.2f}</title></line>"
                )
        gaps = []
        for name, a in (("Δci", "correct"), ("Δii", "implicit")):
            if means[a] is not None and means["incorrect"] is not None:
                gaps.append(f"{name} {100 * (means[a] - means['incorrect']):+.1f}")
        parts.append(f'<text x="{x0 + 70}" y="{top - 6}" class="gap" text-anchor="middle">{escape("  ".join(gaps))}</text>')
        for line, text in enumerate(_group_lines(label)):
            parts.append(
                f'<text x="{x0 + 70}" y="{top + plot_h + 16 + 13 * line}" class="group" text-anchor="middle">'
                f"{escape(_clip(text))}<title>{escape(label)}</title></text>"
            )
    legend_y = height - 10
    for j, s in enumerate(SETS):
        lx = left + j * 85
        parts.append(f'<circle cx="{lx + 5}" cy="{legend_y - 4}" r="4" fill="{COLORS[s]}"/>')
        parts.append(f'<text x="{lx + 14}" y="{legend_y}" class="legend">{s}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


def _group_lines(label: str) -> list[str]:
    """'org/model [setting]' as two short lines: the model's own name, then the setting."""
    name, _, setting = label.partition(" [")
    lines = [name.rsplit("/", 1)[-1]]
    if setting:
        lines.append(setting.rstrip("]"))
    return lines


def _clip(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
