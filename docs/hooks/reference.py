"""MkDocs hook: the reference pages that are generated from the code, so they cannot drift from it.

A page marker is replaced by generated Markdown when the site is built:

    <!-- generated: cli -->        every `bench` command and subcommand: usage, description, options
                                   (from the argparse parsers, `bench.cli.main.build_parser`)
    <!-- generated: families -->   every model family: class, summary, options with type, default and
                                   whether they change vectors (from the constructors, bench/adapters/options.py)

`cli_reference()` and `families_reference()` are pure functions of the code (tests/test_docs.py calls
them); mkdocs.yml names this file under `hooks:`.
"""

from __future__ import annotations

import argparse
import html
import inspect
import re
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `mkdocs build` from a checkout that is not installed
    sys.path.insert(0, str(ROOT))

USAGE_WIDTH = 100  # usage lines are wrapped at this width, whatever the terminal building the site
FIRST_FAMILIES = ("mteb", "sentence-transformers")  # listed first, as `bench list models` does

_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|#])")
_DOC_SECTION = re.compile(r"^(Args|Arguments|Keyword Args|Keyword Arguments|Options|Parameters):\s*$")


# ------------------------------------------------------------------------------------- Markdown
def md_text(text: str | None) -> str:
    """`text` as one line of Markdown prose or a table cell: code spans kept, everything else literal.

    Angle brackets and ampersands become entities (never raw HTML), and the characters Markdown would
    read as emphasis, links, headings or cell borders (`* _ [ ] # | \\` and a lone backtick) are escaped.
    Python-Markdown's tables do not split a cell at a pipe inside a code span, so code spans stay as written.
    """
    if not text:
        return ""
    out, pos = [], 0
    for match in _CODE_SPAN.finditer(text):
        out += [_escape(text[pos : match.start()]), match.group(0)]
        pos = match.end()
    out.append(_escape(text[pos:]))
    return " ".join("".join(out).split())


def _escape(text: str) -> str:
    return _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def md_code(text: str) -> str:
    """`text` as an inline code span (a fence longer than any backtick run inside it)."""
    text = " ".join(str(text).split())
    if not text:
        return ""
    ticks = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def md_block(text: str, lang: str = "text") -> str:
    """A fenced block holding `text` verbatim."""
    fence = "`" * max(3, max((len(run) + 1 for run in re.findall(r"`{3,}", text)), default=3))
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def md_table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell or " " for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def option_table(kind: str, headers: list[str], rows: list[list[str]]) -> str:
    """An options table in a `<div class="option-table KIND">` (md_in_html): docs/stylesheets/extra.css
    keeps option names whole and, on a phone, shows each option as a labelled block instead of a row."""
    return f'<div class="option-table {kind}" markdown>\n\n{md_table(headers, rows)}\n\n</div>'


# ------------------------------------------------------------------------------------------ CLI
def walk_parsers(
    parser: argparse.ArgumentParser, summary: str | None = None, depth: int = 0
) -> Iterator[tuple[argparse.ArgumentParser, str | None, int]]:
    """(parser, one-line help its parent gives it, depth) for `parser` and every subcommand below it,
    in the order `--help` lists them; an alias of a subcommand is not visited twice."""
    yield parser, summary, depth
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._get_subactions()}
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) not in seen:
                    seen.add(id(sub))
                    yield from walk_parsers(sub, helps.get(name), depth + 1)


def _formatter(parser: argparse.ArgumentParser) -> argparse.HelpFormatter:
    return argparse.HelpFormatter(prog=parser.prog, width=USAGE_WIDTH)


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = _formatter(parser)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def _value(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The metavar as `--help` shows it (`TASK [TASK ...]`, `{tasks,models}`); empty for a flag."""
    if action.nargs == 0 or (not action.option_strings and not action.choices):
        return ""  # a flag; a positional's name is its metavar already
    formatter = _formatter(parser)
    default = (
        formatter._get_default_metavar_for_optional(action)
        if action.option_strings
        else formatter._get_default_metavar_for_positional(action)
    )
    return md_code(formatter._format_args(action, default))


def _default(action: argparse.Action) -> str:
    if action.required and action.option_strings:
        return "required"
    value = action.default
    if value is None or value is argparse.SUPPRESS or action.nargs == 0 or value == []:
        return ""
    return md_code(" ".join(map(str, value)) if isinstance(value, list | tuple) else str(value))


def _option_rows(parser: argparse.ArgumentParser, actions: list[argparse.Action]) -> list[list[str]]:
    formatter = _formatter(parser)
    rows = []
    for action in actions:
        if action.help is argparse.SUPPRESS or isinstance(action, argparse._SubParsersAction):
            continue
        names = ", ".join(md_code(s) for s in action.option_strings) or md_code(action.metavar or action.dest)
        text = formatter._expand_help(action) if action.help else ""
        rows.append([names, _value(parser, action), _default(action), md_text(text)])
    return rows


def _command_section(parser: argparse.ArgumentParser, summary: str | None, depth: int) -> str:
    level = "#" * min(2 + max(depth - 1, 0), 6)
    parts = [f"{level} {md_code(parser.prog)}"]
    for text in dict.fromkeys(t for t in (summary, parser.description) if t):  # both, unless the same
        if "\n" in text.strip():
            parts.append(md_block(textwrap.dedent(text).strip("\n")))
        else:
            parts.append(md_text(text))
    parts.append(md_block(_usage(parser)))
    subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for action in subcommands:
        listed = [f"- {md_code(f'{parser.prog} {a.dest}')}: {md_text(a.help)}" for a in action._get_subactions()]
        parts.append("**Subcommands**\n\n" + "\n".join(listed))
    for group in parser._action_groups:
        rows = _option_rows(parser, group._group_actions)
        if rows:
            title = group.title or "options"
            parts.append(
                f"**{md_text(title[:1].upper() + title[1:])}**\n\n"
                + option_table("cli", ["Option", "Value", "Default", "Description"], rows)
            )
    if parser.epilog:
        parts.append(md_block(textwrap.dedent(parser.epilog).strip("\n")))
    return "\n\n".join(parts)


def cli_reference(parser: argparse.ArgumentParser | None = None) -> str:
    """Markdown for every command of `bench` (the parser with `run`'s model-option flags), in `--help` order."""
    if parser is None:
        from bench.cli.main import build_parser

        parser = build_parser(full_run=True)
    return "\n\n".join(_command_section(p, summary, depth) for p, summary, depth in walk_parsers(parser)) + "\n"


# ------------------------------------------------------------------------------------- families
def docstring_args(doc: str | None) -> dict[str, str]:
    """`name: text` entries of a Google-style `Args:` (or `Options:`, `Parameters:`) docstring section."""
    found: dict[str, str] = {}
    lines = inspect.cleandoc(doc or "").splitlines()
    inside, indent, current = False, None, None
    for line in lines:
        if _DOC_SECTION.match(line.strip()) and not line.startswith(" "):
            inside, indent, current = True, None, None
            continue
        if not inside:
            continue
        if not line.strip():
            current = None
            continue
        width = len(line) - len(line.lstrip())
        if width == 0:  # the next section
            inside = False
            continue
        indent = width if indent is None else indent
        entry = re.match(r"\*{0,2}(\w+)\*{0,2}\s*(\([^)]*\))?\s*:\s*(.*)", line.strip())
        if width == indent and entry:
            current = entry.group(1)
            found[current] = entry.group(3).strip()
        elif current is not None:
            found[current] = f"{found[current]} {line.strip()}".strip()
    return found


def option_help(cls: type) -> dict[str, str]:
    """Each option's help: its constructor's (or class's) docstring entry, else its `bench run` flag text,
    the most derived class first."""
    texts: dict[str, str] = {}
    for klass in cls.__mro__:
        for doc in (klass.__dict__.get("__doc__"), getattr(klass.__dict__.get("__init__"), "__doc__", None)):
            for name, text in docstring_args(doc).items():
                texts.setdefault(name, text)
    for klass in cls.__mro__:
        for name, text in (klass.__dict__.get("cli_flags") or {}).items():
            texts.setdefault(name, text)
    return texts


def _notes(cls: type, options: dict[str, Any]) -> tuple[dict[str, str], list[str]]:
    """A family's `notes` split into what it says of each option (`pooling: a|b|c; layer: ...`) and the rest
    (one line, as written, when it names no option)."""
    notes = (getattr(cls, "notes", "") or "").strip()
    values: dict[str, str] = {}
    rest: list[str] = []
    for part in (p.strip() for p in re.split(r";\s+", notes)):
        name, sep, text = part.partition(":")
        if sep and name.strip() in options and text.strip():
            values[name.strip()] = text.strip()
        elif part:
            rest.append(part)
    return values, (["; ".join(rest)] if rest else [])


def _flags(cls: type) -> set[str]:
    return {name for klass in cls.__mro__ for name in (klass.__dict__.get("cli_flags") or {})}


def _family_section(name: str, cls: type) -> str:
    from bench.adapters.options import family_options, runtime_options

    options = family_options(cls)
    runtime = runtime_options(cls)
    helps = option_help(cls)
    values, notes = _notes(cls, options)
    flags = _flags(cls)
    doc = (inspect.getdoc(cls) or "").strip().splitlines()
    aliases = ", ".join(md_code(f"{a}:") for a in getattr(cls, "aliases", ()))
    facts = [
        f"- Class: {md_code(f'{cls.__module__}.{cls.__qualname__}')}",
        f"- Spec prefix: {md_code(f'{name}:')}" + (f" (also {aliases})" if aliases else ""),
    ]
    facts += [f"- Note: {md_text(n)}" for n in notes]
    rows = []
    for option, info in options.items():
        text = helps.get(option, "")
        if option in values:
            note = f"values: {values[option]}" if "|" in values[option] else values[option]
            text = f"{text.rstrip('.')}; {note}" if text else note[:1].upper() + note[1:]
        flag = md_code(f"--{option.replace('_', '-')}") if option in flags else ""
        rows.append(
            [
                md_code(option),
                md_code(info.annotation),
                md_code(repr(info.default)),
                "runtime" if option in runtime else "**vector**",
                flag,
                md_text(text),
            ]
        )
    table = option_table(
        "families", ["Option", "Type", "Default", "Changes vectors", "`bench run` flag", "Description"], rows
    )
    return "\n\n".join([f"## {md_code(name)}", md_text(doc[0] if doc else name), "\n".join(facts), table])


def families_reference() -> str:
    """Markdown for every registered model family: class, summary, and its options from the constructor."""
    from bench.adapters.registry import FAMILIES, discover, family_class

    discover()
    names = sorted(
        FAMILIES, key=lambda n: (n not in FIRST_FAMILIES, FIRST_FAMILIES.index(n) if n in FIRST_FAMILIES else 0, n)
    )
    legend = (
        "In **Changes vectors**, *vector* options are part of the embedding cache's fingerprint and of "
        "the MTEB experiment a result is filed under; *runtime* options (batch size, device, endpoint, "
        "retries, ...) never change which vector a text gets. Give options with `--model-args "
        "key=value,...`, in a `--model-config` file, or with the `bench run` flag shown."
    )
    return "\n\n".join([legend, *(_family_section(n, family_class(n)) for n in names)]) + "\n"


# ------------------------------------------------------------------------------------------ hook
MARKERS: dict[str, Callable[[], str]] = {
    "<!-- generated: cli -->": cli_reference,
    "<!-- generated: families -->": families_reference,
}


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """MkDocs event: each marker on a page is replaced by its generated Markdown."""
    for marker, generate in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, generate())
    return markdown
