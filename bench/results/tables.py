"""Tables in three formats: `Cell` and `Table`, and their markdown, CSV and booktabs LaTeX renderers.

Every table the CLI prints (`bench run`'s in bench/results/summary.py, `bench results`' comparison in
bench/results/comparison.py, the instruction-variant tables in bench/results/variant_tables.py) is built
as `Table`s of `Cell`s and rendered here, so the formats never disagree. One number format everywhere in
the CLI (tables and progress lines): scores ×100 with two decimals, as the papers and the leaderboard
print them (`format_score`).

`bench results --format markdown|csv|latex`: markdown (GitHub style, the default), CSV (one header row,
scores ×100 with two decimals, marks in a `marks` column, every value whole) or a booktabs LaTeX table per
table (`render_latex`) that fits an article's text width (`latex_layout`): the site's short column labels,
each row's settings (model id, revision, experiment) in a legend under it instead of columns, footnotes
whole. Marks come from `bench.results.marks`; each mark used is explained once under the table
(`marks_footnote`).
"""

from __future__ import annotations

import csv
import io
import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from tabulate import tabulate

from bench.results.literature import RECOMPUTED
from bench.results.marks import MARKS, Mark, legend

FORMATS = ("markdown", "csv", "latex")


def format_score(value: float) -> str:
    """A score as every table and log line of the CLI shows it: ×100, two decimals."""
    return f"{100 * value:.2f}"


def format_count(value: object) -> str:
    """A count as every CLI table shows it: thousands separated (`1,106`); '-' when unknown."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return "-" if value is None or value == "" else str(value)


def marks_footnote(used: Iterable[Mark | str], notes: dict[str, dict[str, str]] | None = None) -> list[str]:
    """Lines under a table: one per mark used (`bench.results.marks.legend`), each followed by its notes
    (mark key -> what -> note: each stand-in task's note, each limited row's subset, each reported table),
    whole."""
    keys = {u.key if isinstance(u, Mark) else u for u in used}
    lines: list[str] = []
    for mark in MARKS:
        if mark.key in keys:
            lines += [
                textwrap.fill(line, width=110, subsequent_indent="  ", break_on_hyphens=False)
                for line in legend([mark])
            ]
            lines += [
                textwrap.fill(
                    f"{what}: {note}",
                    width=110,
                    initial_indent="  - ",
                    subsequent_indent="    ",
                    break_on_hyphens=False,
                )
                for what, note in sorted((notes or {}).get(mark.key, {}).items())
            ]
    return lines


# ---------------------------------------------------------------------------------------- tables in three formats
class Latex(str):
    """A cell or note already written in LaTeX: `render_latex` does not escape it again."""


@dataclass
class Cell:
    """A cell: its text (no marks), the raw 0-1 value of a score, its marks, whether it is a partial average
    (present, total), whether it is its column's best (bold in LaTeX), its whole text where `text` is
    shortened for the screen (CSV and LaTeX's row legend write `full`), a row label's LaTeX text, and for
    an average a paper printed, the mean of its printed cells where that differs (`recomputed`, shown
    beside it: "78.54 (78.52 recomputed)"; in CSV a `recomputed:<column>=78.52` mark)."""

    text: str
    value: float | None = None
    marks: tuple[Mark, ...] = ()
    partial: tuple[int, int] | None = None
    best: bool = False
    full: str | None = None
    short: str | None = None
    recomputed: str | None = None
    unranked: str | None = None  # a rank cell's: why the row is not ranked (bench/results/comparability.py)

    @property
    def whole(self) -> str:
        return self.full if self.full is not None else self.text


@dataclass
class Table:
    """One table as every format renders it: a title (markdown) or caption (LaTeX), headers, rows of
    `Cell`s or plain strings, one alignment letter per column (`l` text, `r` numbers), the marks used
    (explained once under it) with their notes (mark key -> what -> note), and any further plain notes.

    For LaTeX: `latex_headers` (the site's short labels) and `settings`, the columns that LaTeX writes
    into one legend line per row (tagged a, b, ... on the row's `label` cell) instead of the table, so
    that a wide setting never widens a paper's table. `key` is the table's `\\label` (`bench results --label`)."""

    title: str | None
    headers: list[str]
    rows: list[list[Cell | str]]
    align: str
    caption: str = ""
    used: set[str] = field(default_factory=set)
    mark_notes: dict[str, dict[str, str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    latex_headers: list[str] | None = None
    settings: tuple[int, ...] = ()
    label: int = 1
    key: str = ""  # LaTeX's \label (`latex_key` when empty: one from the title)


def _plain(cell: Cell | str) -> str:
    if not isinstance(cell, Cell):
        return cell
    partial = f" ({cell.partial[0]} of {cell.partial[1]}, partial)" if cell.partial else ""
    gap = " " if cell.marks and cell.value is None else ""  # `org/model ∅`, but `12.84‡`
    return cell.text + gap + "".join(m.symbol for m in cell.marks) + partial + _recomputed(cell)


def _recomputed(cell: Cell) -> str:
    return f" ({cell.recomputed} {RECOMPUTED})" if cell.recomputed else ""


def render_markdown(table: Table) -> str:
    """GitHub-style: the title, the table, then the marks' legend and the notes."""
    body = tabulate(
        [[_plain(c) for c in row] for row in table.rows],
        headers=table.headers,
        tablefmt="github",
        disable_numparse=True,
    )
    marks = "\n".join(marks_footnote(table.used, table.mark_notes))
    notes = "\n".join(textwrap.fill(n, width=110, break_on_hyphens=False) for n in table.notes)
    return "\n\n".join(p for p in (table.title, body, marks, notes) if p)


def render_csv(table: Table) -> str:
    """One header row (`#` is `rank`), scores ×100 with two decimals, every value whole (never cut for the
    screen), '' where there is none, and a `marks` column: `;`-separated mark keys (`baseline`, `subset`,
    `reported` for the row, `stand_in:<column>` for a cell, `partial:<column>` for a partial average, and
    `unranked=<reason>` for a row the comparability rule leaves unranked)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([("rank" if h == "#" else h) for h in table.headers] + ["marks"])
    for row in table.rows:
        marks = []
        for header, cell, align in zip(table.headers, row, table.align, strict=True):
            if isinstance(cell, Cell):
                marks += [m.key if align == "l" else f"{m.key}:{header}" for m in cell.marks]
                marks += [f"partial:{header}"] if cell.partial else []
                marks += [f"{RECOMPUTED}:{header}={cell.recomputed}"] if cell.recomputed else []
                marks += [f"unranked={cell.unranked.replace(';', ',')}"] if cell.unranked else []
        writer.writerow([("" if t == "-" else t) for t in map(_whole, row)] + [";".join(marks)])
    return out.getvalue().rstrip("\n")


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "Δ": r"$\Delta$",
    "τ": r"$\tau$",
    "…": r"\ldots{}",
    "×": r"$\times$",
    "−": "-",
    "\n": r"\textbackslash{}n",
    "\t": r"\textbackslash{}t",
    **{m.symbol: m.latex for m in MARKS},
}


def latex_escape(text: str) -> str:
    """Plain text as LaTeX: the special characters escaped, `--` kept two hyphens, the marks and Δ, τ, …
    as LaTeX symbols."""
    if isinstance(text, Latex):
        return text
    return re.sub(r"-(?=-)", "-{}", "".join(_LATEX_SPECIAL.get(c, c) for c in str(text)))


def _latex_cell(cell: Cell | str, tag: str = "") -> str:
    if not isinstance(cell, Cell):
        return "--" if cell == "-" else latex_escape(cell)
    if cell.text == "-":
        return "--"
    text = latex_escape(cell.short if cell.short is not None else cell.text)
    if cell.value is not None and text.startswith("-"):
        text = "$-$" + text[1:]  # a minus sign, not a hyphen
    text = rf"\textbf{{{text}}}" if cell.best else text
    partial = f" ({cell.partial[0]}/{cell.partial[1]})" if cell.partial else ""
    marks = "".join(m.latex for m in cell.marks) + (rf"$^{{\mathrm{{{tag}}}}}$" if tag else "")
    return text + marks + partial + latex_escape(_recomputed(cell))


def row_tags(n: int) -> list[str]:
    """a, b, ..., z, aa, ab, ...: the tags of LaTeX's row legend."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [letters[i] if i < 26 else letters[i // 26 - 1] + letters[i % 26] for i in range(n)]


def _row_legend(table: Table) -> list[str]:
    """One line per row: its label in full, then each settings column (`revision 0123...`), whole."""
    lines = []
    for row in table.rows:
        parts = [f"{table.headers[i].lower()} {_whole(row[i])}" for i in table.settings if _whole(row[i]) != "-"]
        lines.append(f" {', '.join([_whole(row[table.label]), *parts])}.")
    return lines


def _whole(cell: Cell | str) -> str:
    return cell.whole if isinstance(cell, Cell) else cell


def _latex_plain(cell: Cell | str, tagged: bool) -> str:
    """What a LaTeX cell prints, as plain text (for `text_width`): a row label's short text, a tag."""
    if isinstance(cell, Cell) and cell.short is not None:
        cell = Cell(cell.short, cell.value, cell.marks, cell.partial)
    text = _plain(cell).replace(", partial)", ")").replace(" of ", "/")
    return text + ("a" if tagged else "")


def _latex_notes(table: Table, tags: list[str]) -> list[str]:
    legend = _row_legend(table) if tags else []
    lines = [rf"$^{{\mathrm{{{tag}}}}}${latex_escape(line)}" for tag, line in zip(tags, legend, strict=True)]
    for mark in MARKS:
        if mark.key in table.used:
            lines.append(f"{mark.latex} {latex_escape(f'{mark.label}: {mark.meaning}.')}")
            lines += [
                r"\quad " + latex_escape(f"{what}: {note}")
                for what, note in sorted(table.mark_notes.get(mark.key, {}).items())
            ]
    if any(isinstance(c, Cell) and c.partial for row in table.rows for c in row):
        lines.append(
            latex_escape("(k/n): an average over k of its n tasks (partial): not comparable with the paper's.")
        )
    return lines + [latex_escape(n) for n in table.notes]


# ---------------------------------------------------------------------------------------- LaTeX width
TEXT_WIDTH_PT = 345.0  # \textwidth of a standard `article` at 10pt: the width a pasted table must fit
_SIZES = (  # font command, its width relative to 10pt (small sizes are cut wider), \tabcolsep: tried in order
    ("", 1.0, 6.0),
    (r"\small", 0.93, 4.0),
    (r"\footnotesize", 0.86, 3.0),
    (r"\scriptsize", 0.78, 2.0),
)
RESIZE = r"\resizebox{\textwidth}{!}{%"  # past every size: the one layout that scales (needs graphicx)


def text_width(text: str) -> float:
    """A plain text's width in points in Computer Modern 10pt, estimated per character class (lower case
    5pt, digits 5.75pt as in bold, capitals 7.2pt, narrow signs 3pt, a mark's superscript 4pt): a little
    over pdflatex's own measure, so a layout chosen by it fits (the tests compile it)."""
    width = 0.0
    for c in text:
        if c in "ijlt.,:;'!|()[]/ -":
            width += 3.0
        elif c in "mwMW%":
            width += 8.5
        elif c in {m.symbol for m in MARKS}:
            width += 4.0
        elif c.isupper():
            width += 7.2
        elif c.isdigit():
            width += 5.75
        else:
            width += 5.0
    return width


def split_header(header: str) -> list[str]:
    """A header as two lines for a narrow column: at the space, hyphen or case change nearest its middle
    ("Big Patent", "AG-News", "PaperCode" -> "Paper" / "Code"); a header with none stays one line."""
    cuts = [m.end() for m in re.finditer(r" |-|(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", header)]
    if not cuts:
        return [header]
    cut = min(cuts, key=lambda i: abs(len(header) / 2 - i))
    return [header[:cut].strip(), header[cut:].strip()]


def _column_widths(headers: list[list[str]], body: list[list[str]]) -> list[float]:
    return [max(text_width(t) for t in [*head, *(row[i] for row in body)]) for i, head in enumerate(headers)]


def latex_layout(headers: list[str], body: list[list[str]]) -> tuple[list[list[str]], str, float, bool]:
    """The header lines of each column, the font command, the \\tabcolsep (pt) and whether to scale, so
    that the table fits TEXT_WIDTH_PT: one-line headers at the text's size when they fit; else headers on
    two lines; else smaller type (\\small, \\footnotesize, \\scriptsize); only a table too wide for
    all of them (a dozen columns of long model names) is scaled to the text width, the last resort. The
    estimated width is that of the plain texts (`text_width`)."""
    single = [[h] for h in headers]
    split = [split_header(h) for h in headers]
    for font, scale, sep in _SIZES:
        for heads in (single, split):
            width = scale * sum(_column_widths(heads, body)) + 2 * sep * len(headers)
            if width <= 0.95 * TEXT_WIDTH_PT:  # a margin for the estimate
                return heads, font, sep, False
    return split, *_SIZES[0][::2], True  # scaled down from the text's own size


def _latex_header(lines: list[str], align: str) -> str:
    if len(lines) == 1:
        return latex_escape(lines[0])
    stacked = r"\\".join(latex_escape(x) for x in lines)
    return rf"\shortstack[{align}]{{{stacked}}}"


def render_latex(table: Table) -> str:
    """A booktabs table a paper can paste: `table` float, `tabular` with toprule / midrule / bottomrule,
    sized to fit an article's text width (`latex_layout`), the settings of each row, the marks' legend
    and notes whole in footnote size under it, then the caption and the `\\label` (`latex_key`)."""
    keep = [i for i in range(len(table.headers)) if i not in table.settings]
    tags = row_tags(len(table.rows)) if table.settings else []
    headers = [(table.latex_headers or table.headers)[i] for i in keep]
    body = [
        [_latex_cell(row[i], tags[r] if tags and i == table.label else "") for i in keep]
        for r, row in enumerate(table.rows)
    ]
    plain = [[_latex_plain(row[i], bool(tags) and i == table.label) for i in keep] for row in table.rows]
    heads, font, sep, scale = latex_layout(headers, plain)
    align = "".join(table.align[i] for i in keep)
    lines = [r"\begin{table}[t]", r"\centering"]
    if font:
        lines.append(rf"{font}\setlength{{\tabcolsep}}{{{sep:g}pt}}")
    lines += [
        *([RESIZE] if scale else []),
        rf"\begin{{tabular}}{{{align}}}",
        r"\toprule",
        " & ".join(_latex_header(h, a) for h, a in zip(heads, align, strict=True)) + r" \\",
        r"\midrule",
    ]
    lines += [" & ".join(row) + r" \\" for row in body]
    lines += [r"\bottomrule", r"\end{tabular}", *(["}"] if scale else [])]
    notes = _latex_notes(table, tags)
    if notes:
        lines += [r"{\par\smallskip\raggedright\footnotesize", *(f"{n}\\par" for n in notes), "}"]
    lines.append(rf"\caption{{{latex_escape(table.caption or table.title or '')}}}")
    if key := latex_key(table):
        lines.append(rf"\label{{{key}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines)


LABEL_KEY = re.compile(r"[A-Za-z0-9:._/-]+")  # what a `\label` key may hold, unescaped, in every LaTeX setup


def label_slug(text: str) -> str:
    """A text as the tail of a `\\label` key: lower case, runs of other characters as one hyphen
    ("Rank stability" -> "rank-stability")."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def latex_key(table: Table) -> str:
    """The table's `\\label`: its `key`, else `tab:` and its title's slug; '' for an untitled table without one."""
    if table.key:
        return table.key
    slug = label_slug(table.title or "")
    return f"tab:{slug}" if slug else ""


def render(tables: Sequence[Table], fmt: str = "markdown") -> str:
    """The tables in one format; LaTeX starts with a comment naming the packages it needs."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    if fmt == "csv":
        return "\n\n".join(render_csv(t) for t in tables)
    if fmt == "markdown":
        return "\n\n".join(render_markdown(t) for t in tables)
    used = set().union(*(t.used for t in tables)) if tables else set()
    rendered = [render_latex(t) for t in tables]
    amssymb = (
        " and \\usepackage{amssymb} (for $\\checkmark$ / $\\varnothing$)" if used & {"verified", "baseline"} else ""
    )
    graphicx = " and \\usepackage{graphicx} (for \\resizebox)" if any(RESIZE in t for t in rendered) else ""
    head = f"% bench results: needs \\usepackage{{booktabs}}{amssymb}{graphicx} in the preamble."
    return "\n\n".join([head, *rendered])
