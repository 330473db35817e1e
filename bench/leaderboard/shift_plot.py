"""The shift-vs-gain plot of a suite (bench/leaderboard/shift_gain.py), drawn as inline SVG like the other plots
(bench/leaderboard/plots.py: no plotting library, no CDN, every label escaped).

x: the instruction shift (mean cosine distance, three decimals); y: the gain (×100, two decimals). A dashed
line at gain 0 and one at the median shift cut the plot into four labelled quadrants. Each dot carries its
number, and the list under the plot names each number's model, shift and gain, so the plot reads on a touch
screen (no hover needed). The plot is one fixed, narrow size (`WIDTH`) and shrinks with the window.
"""

from __future__ import annotations

from markupsafe import Markup, escape

from bench.leaderboard.plots import svg_open
from bench.leaderboard.shift_gain import ShiftGain

WIDTH, HEIGHT = 380, 300
LEFT, RIGHT, TOP, BOTTOM = 48, 14, 30, 40
QUADRANTS = (  # (label, right half?, top half?)
    ("moves, gains", True, True),
    ("moves, no gain", True, False),
    ("barely moves, gains", False, True),
    ("barely moves, no gain", False, False),
)


def _span(low: float, high: float, pad: float) -> tuple[float, float]:
    """An axis range holding [low, high] with `pad` of its width on each side (a flat range gets room too)."""
    width = high - low or max(abs(high), 1.0)
    return low - pad * width, high + pad * width


def shift_gain_svg(title: str, data: ShiftGain) -> Markup:
    """The plot and its numbered list, as one <figure>; `data["points"]` must not be empty."""
    points = data["points"]
    split = data["split"] if data["split"] is not None else 0.0
    shifts = [p["shift"] for p in points]
    gains = [p["gain"] for p in points]
    x_lo, x_hi = _span(min(0.0, *shifts), max(*shifts, split), 0.08)
    y_lo, y_hi = _span(min(0.0, *gains), max(0.0, *gains), 0.12)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(v: float) -> float:
        return LEFT + (v - x_lo) / (x_hi - x_lo) * plot_w

    def y(v: float) -> float:
        return TOP + plot_h - (v - y_lo) / (y_hi - y_lo) * plot_h

    parts = svg_open(title, max(WIDTH, int(LEFT + 7.5 * len(title) + 12)), HEIGHT, title_x=8, css_class="plot shift")
    parts.append(f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" class="frame"/>')
    for v in (y_lo, 0.0, y_hi):
        parts.append(f'<text x="{LEFT - 5}" y="{y(v) + 4:.1f}" class="tick" text-anchor="end">{v:+.1f}</text>')
    for v in (x_lo if x_lo >= 0 else 0.0, split, x_hi):
        parts.append(f'<text x="{x(v):.1f}" y="{TOP + plot_h + 14}" class="tick" text-anchor="middle">{v:.3f}</text>')
    parts.append(
        f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y(0):.1f}" y2="{y(0):.1f}" class="quadrant-line">'
        "<title>gain 0: the instruction neither helps nor hurts</title></line>"
    )
    parts.append(
        f'<line x1="{x(split):.1f}" x2="{x(split):.1f}" y1="{TOP}" y2="{TOP + plot_h}" class="quadrant-line">'
        f"<title>median shift of the plotted rows: {split:.3f}</title></line>"
    )
    for label, right, top in QUADRANTS:
        tx = LEFT + plot_w - 4 if right else LEFT + 4
        ty = TOP + 13 if top else TOP + plot_h - 5
        anchor = "end" if right else "start"
        parts.append(f'<text x="{tx}" y="{ty}" class="quadrant" text-anchor="{anchor}">{escape(label)}</text>')
    parts.append(
        f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 6}" class="axis" text-anchor="middle">'
        "instruction shift (mean cosine distance)</text>"
    )
    parts.append(
        f'<text transform="translate(12 {TOP + plot_h / 2}) rotate(-90)" class="axis" text-anchor="middle">'
        "gain over ∅ (×100)</text>"
    )
    for i, p in enumerate(points, 1):
        cx, cy = x(p["shift"]), y(p["gain"])
        parts.append(
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="5" class="shift-dot" data-model-id="{escape(p["model_id"])}">'
            f"<title>{escape(p['label'])}: shift {p['shift']:.3f}, gain {p['gain']:+.2f}</title></circle>"
        )
        above = cy - 8 if cy - 8 > TOP + 16 else cy + 16
        parts.append(f'<text x="{cx:.1f}" y="{above:.1f}" class="point-num" text-anchor="middle">{i}</text>')
    parts.append("</svg>")
    one_task = ' <span class="muted">(one task)</span>'
    key = "".join(
        f"<li>{escape(p['label'])}: shift <strong>{p['shift']:.3f}</strong>, gain <strong>{p['gain']:+.2f}</strong>"
        f"{one_task if p['tasks'] == 1 else ''}</li>"
        for p in points
    )
    return Markup(f'<figure class="shift-plot">{"".join(parts)}<ol class="plot-key">{key}</ol></figure>')
