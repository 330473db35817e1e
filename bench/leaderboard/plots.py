"""Inline SVG plots, drawn here so the site needs no plotting library and no CDN.

Every value is a score ×100 printed with two decimals, as in the tables. Each SVG is as wide as its
title needs (`_title_width`), so no title is clipped.

Score against size (one per suite): each model's suite average against its parameter count (log
axis), each dot numbered and listed under the plot (model, setting, score); the instruction-blind
baseline is a hollow marker. Per-aspect bars (model page): one bar per
criterion / aspect score of a task (`bench run`'s detail scores).

Robustness (InBedder Figure 4): for each task, every model's V-measures under the 10 correct, 10
implicit and 10 incorrect instructions, one dot per instruction and a bar at each set's mean, with
Δci and Δii (mean correct/implicit minus mean incorrect) written above. A task is plotted whenever its
scores hold `v_measure_<set>_<i>` keys (bench/tasks/abstasks/instruction_robustness.py writes them), so
the plot follows the score keys, not task names. Every label is escaped.

Instruction sensitivity (one per task with instruction-variant results): one row per model, the main
score under each variant as a dot (coloured by its named set), a bar from mean - std to mean + std
with a tick at the mean, and a hollow ring at the score under the task's own instruction. Rows are
stacked, not side by side, so the plot keeps one narrow width (`SENSITIVITY_WIDTH`) however many
models it holds and stays legible on a phone.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from markupsafe import Markup, escape

from bench.leaderboard.row_types import SensitivityModel
from bench.results.marks import BASELINE

SETS = ("correct", "implicit", "incorrect")
COLORS = {"correct": "#1b7837", "implicit": "#2166ac", "incorrect": "#b2182b"}
_KEY = re.compile(r"^v_measure_(correct|implicit|incorrect)_(\d+)$")


def svg_open(title: str, width: int, height: int, *, title_x: float, css_class: str = "plot") -> list[str]:
    """The opening of every plot: a scalable, labelled <svg>, its <title> for screen readers, the visible title."""
    return [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" class="{css_class}" role="img" viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}" aria-label="{escape(title)}">'
        ),
        f"<title>{escape(title)}</title>",
        f'<text x="{title_x}" y="16" class="plot-title">{escape(title)}</text>',
    ]


def robustness_values(scores: Mapping[str, object]) -> dict[str, list[float]] | None:
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


def robustness_svg(
    title: str, groups: list[tuple[str, dict[str, list[float]]]], *, width_per_group: int = 150
) -> Markup:
    """One task: a group of three columns (correct, implicit, incorrect) per model, V-measure ×100."""
    left, right, top, bottom = 46, 12, 34, 62
    plot_h = 190
    width = max(400, left + right + max(1, len(groups)) * width_per_group, _title_width(title, left))
    height = top + plot_h + bottom
    top_value = max((v for _, sets in groups for vs in sets.values() for v in vs), default=0.0) * 100
    step = next(s for s in (2, 5, 10, 20, 25) if math.ceil(max(top_value, 1e-9) / s) <= 5)
    y_max = float(max(1, math.ceil(top_value / step)) * step)

    def y(value: float) -> float:
        return top + plot_h - (value * 100 / y_max) * plot_h

    parts = svg_open(title, width, height, title_x=left)
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
            mean = means[s]
            if mean is not None:
                my = y(mean)
                parts.append(
                    f'<line x1="{cx - 14}" x2="{cx + 14}" y1="{my:.1f}" y2="{my:.1f}" stroke="{COLORS[s]}" stroke-width="3">'
                    f"<title>{escape(label)} · mean {s}: {100 * mean:.2f}</title></line>"
                )
        gaps = []
        for name, a in (("Δci", "correct"), ("Δii", "implicit")):
            mean, incorrect = means[a], means["incorrect"]
            if mean is not None and incorrect is not None:
                gaps.append(f"{name} {100 * (mean - incorrect):+.2f}")
        parts.append(
            f'<text x="{x0 + 70}" y="{top - 6}" class="gap" text-anchor="middle">{escape("  ".join(gaps))}</text>'
        )
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


def _title_width(title: str, left: int) -> int:
    """Width a 13 px bold title needs (about 7.5 px a character), so it is never clipped."""
    return int(left + 7.5 * len(title) + 12)


def _nice_range(low: float, high: float) -> tuple[float, float, float]:
    """(start, stop, step) of an axis holding [low, high] with at most about six ticks."""
    span = max(high - low, 1e-9)
    step = next(s for s in (0.5, 1, 2, 5, 10, 20, 25, 50) if span / s <= 6)
    return math.floor(low / step) * step, math.ceil(high / step) * step, step


def size_svg(title: str, points: list[tuple[str, int, float, bool]]) -> Markup:
    """Score ×100 against parameter count (log axis); `points` are (label, n_parameters, score, baseline).

    Each dot carries its number (1, 2, ... in the order given), and the list under the plot gives each
    number's model, setting and score, so the plot reads on a touch screen too (no hover needed). Dots
    are translucent, and one that would cover another is nudged sideways (`_spread`); a number that
    would overlap a dot or another number moves to another side of its dot (`_place_labels`).
    """
    left, right, top, bottom, plot_w, plot_h = 52, 28, 30, 44, 420, 200
    width, height = max(left + plot_w + right, _title_width(title, left)), top + plot_h + bottom
    xs = [math.log10(n) for _, n, _, _ in points]
    x_lo, x_hi = math.floor(min(xs)), math.ceil(max(xs))
    if x_hi == x_lo:  # every model of one power of ten
        x_hi += 1
    y_lo, y_hi, step = _nice_range(min(0.0, *(v for *_, v, _ in points)), max(1.0, *(v for *_, v, _ in points)))

    def x(n: int) -> float:
        return left + (math.log10(n) - x_lo) / (x_hi - x_lo) * plot_w

    def y(v: float) -> float:
        return top + plot_h - (v - y_lo) / (y_hi - y_lo) * plot_h

    parts = svg_open(title, width, height, title_x=left)
    tick = y_lo
    while tick <= y_hi + 1e-9:
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" class="grid"/>')
        parts.append(f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" class="tick" text-anchor="end">{tick:g}</text>')
        tick += step
    for e in range(x_lo, x_hi + 1):
        tx = x(10**e)
        parts.append(f'<line x1="{tx:.1f}" x2="{tx:.1f}" y1="{top}" y2="{top + plot_h}" class="grid"/>')
        parts.append(
            f'<text x="{tx:.1f}" y="{top + plot_h + 15}" class="tick" text-anchor="middle">{_size_tick(10**e)}</text>'
        )
    parts.append(
        f'<text x="{left + plot_w / 2}" y="{height - 6}" class="axis" text-anchor="middle">parameters (log scale)</text>'
    )
    parts.append(
        f'<text transform="translate(12 {top + plot_h / 2}) rotate(-90)" class="axis" text-anchor="middle">score ×100</text>'
    )
    centres = _spread([(x(n), y(value)) for _, n, value, _ in points], POINT_R)
    for (label, _, value, baseline), (cx, cy) in zip(points, centres, strict=True):
        fill = (
            'fill="#fff" stroke="#636c76" stroke-width="1.5" fill-opacity="0.6"'
            if baseline
            else 'fill="#0969da" fill-opacity="0.55" stroke="#0969da" stroke-width="1"'
        )
        kind = " (baseline)" if baseline else ""
        parts.append(
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{POINT_R}" {fill} class="point">'
            f"<title>{escape(label)}{kind}: {value:.2f}</title></circle>"
        )
    for i, (lx, ly, anchor) in enumerate(_place_labels(centres, POINT_R)):
        parts.append(f'<text x="{lx:.1f}" y="{ly:.1f}" text-anchor="{anchor}" class="point-num">{i + 1}</text>')
    parts.append("</svg>")
    key = "".join(
        (
            f'<li class="base">{escape(label)} {BASELINE.symbol} {BASELINE.label}: '
            if baseline
            else f"<li>{escape(label)}: "
        )
        + f'<strong>{value:.2f}</strong> <span class="muted">{n / 10 ** (3 * _thousands(n)):.3g}{" KMB"[_thousands(n)].strip()}</span></li>'
        for label, n, value, baseline in points
    )
    return Markup(f'<figure class="size-plot">{"".join(parts)}<ol class="plot-key">{key}</ol></figure>')


POINT_R = 5  # the size plot's dot radius


def _thousands(n: int) -> int:
    """0 for n < 1e3, 1 for thousands, 2 for millions, 3 for billions and more (as the tables print sizes)."""
    return min(3, max(0, int(math.log10(n)) // 3)) if n > 0 else 0


def _spread(centres: list[tuple[float, float]], r: float) -> list[tuple[float, float]]:
    """Dot centres with each one that would overlap an earlier dot nudged sideways (r + 1 px steps, right
    then left, then up and down), so every dot shows; the nudge is small next to an axis decade (210 px)."""
    placed: list[tuple[float, float]] = []
    steps = (
        [(0.0, 0.0)]
        + [(s * k * (r + 1), 0.0) for k in range(1, 4) for s in (1, -1)]
        + [(0.0, s * k * (r + 1)) for k in range(1, 3) for s in (-1, 1)]
    )
    for cx, cy in centres:
        for dx, dy in steps:
            if all(math.hypot(cx + dx - px, cy + dy - py) >= 1.6 * r for px, py in placed):
                placed.append((cx + dx, cy + dy))
                break
        else:
            placed.append((cx, cy))  # a crowd: translucent dots still show each other
    return placed


def _place_labels(centres: list[tuple[float, float]], r: float) -> list[tuple[float, float, str]]:
    """For each dot, where its number goes (x, y baseline, text-anchor): right of the dot unless that
    overlaps a dot or an earlier number, then left, above, below (an 11 px digit is about 7 px wide)."""
    boxes: list[tuple[float, float, float, float]] = []
    dots = [(cx - r, cy - r, cx + r, cy + r) for cx, cy in centres]
    out = []
    for i, (cx, cy) in enumerate(centres):
        w = 7 * len(str(i + 1))
        options = [
            (cx + r + 2, cy + 4, "start", (cx + r + 2, cy - 6, cx + r + 2 + w, cy + 4)),
            (cx - r - 2, cy + 4, "end", (cx - r - 2 - w, cy - 6, cx - r - 2, cy + 4)),
            (cx, cy - r - 3, "middle", (cx - w / 2, cy - r - 13, cx + w / 2, cy - r - 3)),
            (cx, cy + r + 12, "middle", (cx - w / 2, cy + r + 2, cx + w / 2, cy + r + 12)),
        ]
        others = boxes + [d for j, d in enumerate(dots) if j != i]
        chosen = next((o for o in options if not any(_overlap(o[3], b) for b in others)), options[0])
        boxes.append(chosen[3])
        out.append(chosen[:3])
    return out


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _size_tick(n: float) -> str:
    for unit, scale in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= scale:
            return f"{n / scale:g}{unit}"
    return f"{n:g}"


def bars_svg(title: str, bars: list[tuple[str, float]]) -> Markup:
    """Horizontal bars, one per (label, score ×100); negative scores (gaps) extend left of zero."""
    left, right, top, row_h, plot_w = 120, 60, 28, 22, 300
    width, height = max(left + plot_w + right, _title_width(title, 8)), top + row_h * len(bars) + 10
    lo, hi = min(0.0, *(v for _, v in bars)), max(0.0, *(v for _, v in bars))
    span = (hi - lo) or 1.0

    def x(v: float) -> float:
        return left + (v - lo) / span * plot_w

    parts = [
        *svg_open(title, width, height, title_x=8),
        f'<line x1="{x(0):.1f}" x2="{x(0):.1f}" y1="{top - 4}" y2="{height - 6}" class="axis-line"/>',
    ]
    for i, (label, value) in enumerate(bars):
        by = top + i * row_h
        x0, x1 = sorted((x(0), x(value)))
        parts.append(
            f'<text x="{left - 6}" y="{by + 14}" class="tick" text-anchor="end">{escape(_clip(label, 18))}<title>{escape(label)}</title></text>'
        )
        parts.append(
            f'<rect x="{x0:.1f}" y="{by + 3}" width="{max(x1 - x0, 1):.1f}" height="{row_h - 8}" class="bar"/>'
        )
        parts.append(f'<text x="{x1 + 4:.1f}" y="{by + 14}" class="value">{value:.2f}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


SENSITIVITY_WIDTH = 360  # fits a 320 px phone at about 0.85 scale, as the other plots shrink (max-width: 100%)
OTHER_SET_COLORS = ("#8c510a", "#762a83", "#01665e", "#c51b7d")
LIST_COLOR = "#0969da"


def set_color(name: str | None, order: list[str]) -> str:
    """InBedder's colours for its sets, others from a small palette in order of appearance; plain lists blue."""
    if name is None:
        return LIST_COLOR
    if name in COLORS:
        return COLORS[name]
    others = [s for s in order if s not in COLORS]
    return OTHER_SET_COLORS[others.index(name) % len(OTHER_SET_COLORS)] if name in others else LIST_COLOR


def sensitivity_svg(title: str, axis: str, models: Sequence[SensitivityModel]) -> Markup:
    """One task: a row per model (dicts as in leaderboard.json's `sensitivity`: label, variants with
    label/set/score, mean, std, default; scores ×100), each variant a dot."""
    left, right, top, row_h, label_h = 12, 14, 30, 46, 14
    width = max(SENSITIVITY_WIDTH, _title_width(title, left))
    sets = list(dict.fromkeys(v["set"] for m in models for v in m["variants"] if v["set"] is not None))
    legend_rows = math.ceil((max(len(sets), 1) + 2) / 3)
    height = top + row_h * len(models) + 46 + 18 * (legend_rows - 1) + 10
    values = [v["score"] for m in models for v in m["variants"]]
    values += [default for m in models if (default := m.get("default")) is not None]
    values += [x for m in models if (std := m.get("std")) is not None for x in (m["mean"] - std, m["mean"] + std)]
    lo, hi, step = _nice_range(min(values), max(values))
    if hi - lo < step:  # every score equal (an instruction-blind model): give the dots room on both sides
        lo, hi = lo - step, hi + step
    plot_w = width - left - right
    bottom = top + row_h * len(models)

    def x(value: float) -> float:
        return left + (value - lo) / ((hi - lo) or 1.0) * plot_w

    parts = svg_open(title, width, height, title_x=left, css_class="plot sensitivity")
    tick = lo
    while tick <= hi + 1e-9:
        parts.append(f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{top}" y2="{bottom}" class="grid"/>')
        parts.append(f'<text x="{x(tick):.1f}" y="{bottom + 13}" class="tick" text-anchor="middle">{tick:g}</text>')
        tick += step
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{bottom + 28}" class="axis" text-anchor="middle">{escape(axis)}</text>'
    )
    for r, m in enumerate(models):
        y0 = top + r * row_h
        cy = y0 + label_h + (row_h - label_h) / 2
        kind = " (baseline)" if m.get("baseline") else ""
        parts.append(
            f'<text x="{left}" y="{y0 + 11}" class="group">{escape(_clip(m["label"], 52 - len(kind)) + kind)}'
            f"<title>{escape(m['label'])}{kind}</title></text>"
        )
        if (std := m.get("std")) is not None:
            a, b = x(m["mean"] - std), x(m["mean"] + std)
            parts.append(
                f'<line x1="{a:.1f}" x2="{b:.1f}" y1="{cy:.1f}" y2="{cy:.1f}" class="spread">'
                f"<title>{escape(m['label'])}: mean {m['mean']:.2f} ± std {std:.2f}</title></line>"
            )
        parts.append(
            f'<line x1="{x(m["mean"]):.1f}" x2="{x(m["mean"]):.1f}" y1="{cy - 9:.1f}" y2="{cy + 9:.1f}" class="mean">'
            f"<title>{escape(m['label'])}: mean {m['mean']:.2f} over {len(m['variants'])} variants</title></line>"
        )
        count = len(m["variants"])
        for i, v in enumerate(m["variants"]):
            jitter = ((i % 5) - 2) * 2.5 if count > 1 else 0.0  # five lanes, so equal scores stay apart
            parts.append(
                f'<circle cx="{x(v["score"]):.1f}" cy="{cy + jitter:.1f}" r="3.5" fill="{set_color(v["set"], sets)}" '
                f'fill-opacity="0.6" class="variant-dot"><title>{escape(m["label"])} · {escape(v["label"])}: '
                f"{v['score']:.2f}</title></circle>"
            )
        if (default := m.get("default")) is not None:
            parts.append(
                f'<circle cx="{x(default):.1f}" cy="{cy:.1f}" r="6" class="default-ring">'
                f"<title>{escape(m['label'])} · the task's own instruction: {default:.2f}</title></circle>"
            )
    keys = [(set_color(name, sets), name) for name in sets] or [(LIST_COLOR, "variant")]
    legend_top = bottom + 46
    items = [
        *(("dot", color, name) for color, name in keys),
        ("mean", "", "mean ± std"),
        ("ring", "", "own instruction"),
    ]
    for i, (shape, color, name) in enumerate(items):
        lx, ly = left + (i % 3) * 112, legend_top + 18 * (i // 3)
        if shape == "dot":
            parts.append(f'<circle cx="{lx + 5}" cy="{ly - 4}" r="4" fill="{color}"/>')
        elif shape == "mean":
            parts.append(
                f'<line x1="{lx}" x2="{lx + 12}" y1="{ly - 4}" y2="{ly - 4}" class="spread"/>'
                f'<line x1="{lx + 6}" x2="{lx + 6}" y1="{ly - 10}" y2="{ly + 2}" class="mean"/>'
            )
        else:
            parts.append(f'<circle cx="{lx + 5}" cy="{ly - 4}" r="5" class="default-ring"/>')
        parts.append(f'<text x="{lx + 16}" y="{ly}" class="legend">{escape(_clip(name, 16))}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))
