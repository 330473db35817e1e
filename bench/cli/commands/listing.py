"""`bench list tasks|models|suites|builders|variants|reported|cache`: what can be named on the command line, and what is cached.

Tables wrap to the terminal's width (`shutil.get_terminal_size`: the terminal, else $COLUMNS, else 100
columns): long cells (descriptions, option lists) wrap inside their column, at spaces only. Names (tasks,
models, family prefixes, datasets) are never wrapped, nor is any word broken: a table of names alone may
be wider than the terminal, which then folds whole lines, never a name in a cell. `bench list cache` reads
the embedding cache's SQLite files directly (`bench.adapters.cache.cache_files`), so it starts without torch.
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Sequence
from pathlib import Path

MIN_COLUMN = 10  # narrowest a wrapped column gets
FALLBACK_WIDTH = 100  # columns when neither a terminal nor $COLUMNS says


def register(sub: argparse._SubParsersAction) -> None:
    ls = sub.add_parser("list", help="list tasks, models, suites, data builders, or what the embedding cache holds")
    ls.add_argument("what", choices=["tasks", "models", "suites", "builders", "variants", "reported", "cache"])
    ls.add_argument(
        "--cache-dir",
        help="for `list cache`: the embedding cache, as given to `bench run --cache-dir` "
        "(default $INSTRUCT_BENCH_CACHE/embeddings or ~/.cache/instruct-bench/embeddings)",
    )
    ls.set_defaults(func=_cmd_list)


def _cmd_list(args: argparse.Namespace) -> int:
    if args.what == "tasks":
        from bench.results.task_catalog import catalog  # the cached catalogue: no MTEB, no task object

        rows = [[n, e["type"], e["main_score"], e["dataset_path"]] for n, e in catalog()["tasks"].items()]
        headers = ["Task", "Type", "Main score", "Dataset"]
        if table_fits(rows, headers, wrap=[]):  # names only: no column wraps
            print(wrapped_table(rows, headers, wrap=[]))
        else:  # too narrow for whole names in a table: a line per task
            print(
                "\n".join(
                    wrapped_text(f"{n}: {kind}, main score {score}, dataset {path}", indent="  ")
                    for n, kind, score, path in rows
                )
            )
    elif args.what == "suites":
        from bench.results.task_catalog import catalog

        found = catalog()
        rows = [[n, ", ".join(t), found["suite_descriptions"][n]] for n, t in found["suites"].items()]
        print(wrapped_table(rows, ["Suite", "Tasks", "About"], wrap=[1, 2]))
    elif args.what == "builders":
        print(builders_table())
    elif args.what == "variants":
        print(variants_table())
    elif args.what == "reported":
        print(reported_table())
    elif args.what == "cache":
        print(cache_table(Path(args.cache_dir) if args.cache_dir else None))
    else:
        print(models_table())
    return 0


def terminal_width() -> int:
    return shutil.get_terminal_size((FALLBACK_WIDTH, 24)).columns


def wrapped_table(
    rows: Sequence[Sequence[object]],
    headers: Sequence[str],
    width: int | None = None,
    wrap: Sequence[int] | None = None,
) -> str:
    """A GitHub-style table no wider than `width` (default: the terminal's), long cells wrapped in place.

    The columns in `wrap` (default: all; give only text columns, never names) are narrowed to one common
    width, the largest that fits, so names stay on one line and descriptions take the rest of the width.
    Cells wrap at spaces only: no word (an option `show_progress_bar=None`, a hyphenated name) is broken,
    so a column is never narrower than its longest word.
    """
    from tabulate import tabulate

    width = width or terminal_width()
    natural = [
        max(len(h) + 2, *(len(line) for r in rows for line in str(r[i]).splitlines() or [""]))
        for i, h in enumerate(headers)
    ]  # tabulate pads headers by 2
    wrap = range(len(headers)) if wrap is None else wrap
    fixed = sum(n for i, n in enumerate(natural) if i not in wrap)
    budget = width - (3 * len(headers) + 1) - fixed  # "| " before and " " after each cell, and the last "|"
    floors = [max(MIN_COLUMN, len(headers[i]) + 2, _longest_word(rows, i)) for i in wrap]  # nor below a header
    cap = _common_cap([natural[i] for i in wrap], floors, budget)
    cells = [list(r) for r in rows]
    for i, floor in zip(wrap, floors, strict=True):
        limit = max(floor, cap)
        if natural[i] > limit:
            for r in cells:
                r[i] = _wrap_cell(str(r[i]), limit)
    return tabulate(cells, headers=headers, tablefmt="github", disable_numparse=True)


def table_fits(
    rows: Sequence[Sequence[object]],
    headers: Sequence[str],
    width: int | None = None,
    wrap: Sequence[int] | None = None,
) -> bool:
    """Whether `wrapped_table` can keep the table within `width` without breaking a word."""
    wrap = range(len(headers)) if wrap is None else wrap
    needed = 3 * len(headers) + 1
    for i, h in enumerate(headers):
        longest_line = max((len(line) for r in rows for line in str(r[i]).splitlines()), default=0)
        needed += max(len(h) + 2, _longest_word(rows, i) if i in wrap else longest_line)
    return needed <= (width or terminal_width())


def _longest_word(rows: Sequence[Sequence[object]], column: int) -> int:
    return max((len(word) for r in rows for word in str(r[column]).split()), default=0)


def _wrap_cell(text: str, width: int) -> str:
    """`text` wrapped at spaces to `width`, its own line breaks kept; words are never split."""
    import textwrap

    return "\n".join(
        textwrap.fill(line, width=width, break_long_words=False, break_on_hyphens=False) or ""
        for line in text.splitlines() or [""]
    )


def _common_cap(natural: list[int], floors: list[int], budget: int) -> int:
    """The largest cap c with sum(max(floor, min(n, c))) <= budget (the smallest floor if none fits)."""

    def used(c: int) -> int:
        return sum(max(f, min(n, c)) for n, f in zip(natural, floors, strict=True))

    lo, hi = min(floors, default=MIN_COLUMN), max(natural, default=MIN_COLUMN)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if used(mid) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def wrapped_text(text: str, width: int | None = None, indent: str = "") -> str:
    """`text` wrapped at spaces (no word broken), its lines after the first indented by twice `indent`."""
    import textwrap

    return textwrap.fill(
        text,
        width=width or terminal_width(),
        initial_indent=indent,
        subsequent_indent=2 * indent,
        break_long_words=False,
        break_on_hyphens=False,
    )


# ------------------------------------------------------------------------------------------- models
def models_table() -> str:
    from bench.adapters.registry import MODELS, describe_families

    rows = [[n, e.family, e.description] for n, e in MODELS.items()]
    parts = [wrapped_table(rows, ["Model", "Family", "About"], wrap=[2]), ""]
    families = describe_families()
    rows = [[f"{f['family']}:", ", ".join(f"{a}:" for a in f["aliases"]), f["description"]] for f in families]
    parts.append(wrapped_table(rows, ["Family prefix", "Aliases", "About"], wrap=[1, 2]))
    # Options below the table, a paragraph per family: a fourth column would be too narrow for whole options.
    parts.append("\nOptions of each family (option=default) and notes:")
    parts += [wrapped_text(f"{f['family']}: {_options_text(f)}", indent="  ") for f in families]
    parts.append(
        "\n"
        + wrapped_text(
            "Give options as family flags (--template none), --model-args "
            "key=value,key=value, or a --model-config YAML/JSON file."
        )
    )
    parts += ["", zoo_table()]
    return "\n".join(parts)


def zoo_table() -> str:
    """MTEB's instruction-aware registry models: `--model ORG/NAME` runs each as MTEB does. The formats are
    what MTEB's wrapper sends for a probe text (`bench.adapters.mteb_zoo.probe_formats`), or why they
    could not be probed offline."""
    from bench.adapters.mteb_zoo import instruction_models

    models = instruction_models()
    rows = [[m["model"], _escaped(m["query"]), _escaped(m["document"])] for m in models]
    probed = sum(m["reason"] is None for m in models)
    head = wrapped_text(
        f"MTEB's registry: {len(models):,} instruction-aware text models. `--model ORG/NAME` runs one "
        "through MTEB's own implementation; the instruction reaches the model as shown, captured by "
        "sending a probe text through MTEB's wrapper for the model with no weights loaded "
        "({instruction} is the task's prompt, {text} the input):"
    )
    tail = wrapped_text(
        f"{probed:,} probed; {len(models) - probed:,} not probed offline (an implementation of their own, "
        "or prompts in a model config that is not in the local hub cache)."
    )
    headers = ["Model", "Query", "Document"]
    if table_fits(rows, headers, wrap=[1, 2]):
        body = wrapped_table(rows, headers, wrap=[1, 2])
    else:  # model ids are too long for a table this narrow: a paragraph per model, its id first and whole
        body = "\n".join(
            wrapped_text(
                f'{model}: query "{query}", document "{document}"' if document else f"{model}: {query}", indent="  "
            )
            for model, query, document in rows
        )
    return f"{head}\n{body}\n{tail}"


def _escaped(text: str) -> str:
    return text.replace("\n", "\\n")


def _options_text(family: dict) -> str:
    text = ", ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in family["options"].items())
    return f"{text}; {family['notes']}" if family.get("notes") else text


# ------------------------------------------------------------------------------------------- builders
def builders_table() -> str:
    """Every `bench build-data` builder: its name, whether it calls an LLM, and what it writes."""
    from bench.dataset_builders.registry import builders

    rows = [[n, "LLM" if b.uses_llm else "labels", b.description] for n, b in builders().items()]
    return wrapped_table(rows, ["Builder", "Kind", "About"], wrap=[2])


def variants_table() -> str:
    """The built-in instruction-variants files (`bench run --instruction-variants NAME`)."""
    from bench.core.variants import builtin_variant_files, load_variants

    rows = []
    for name, path in builtin_variant_files().items():
        vf = load_variants(path)
        counts = sorted({len(v) for v in vf.variants.values()})
        sets = sorted({s for names in vf.sets.values() for s in names})
        rows.append(
            [
                name,
                f"{len(vf.variants):,} tasks x {'/'.join(f'{c:,}' for c in counts)} variants"
                + (f" ({', '.join(sets)})" if sets else ""),
                vf.description or "",
            ]
        )
    return wrapped_table(rows, ["Variants file", "Holds", "About"], wrap=[1, 2])


def reported_table() -> str:
    """The papers' reported tables (`bench reproduce TABLE`, `bench results --reported TABLE`): id, source,
    the suite they feed, and how many of their rows the harness can run."""
    from bench.results.literature import all_tables

    rows = [
        [
            t.id,
            f"{t.label} ({t.url})",
            t.suite or "-",
            f"{sum(r.spec is not None for r in t.rows)} of {len(t.rows)}",
            ", ".join(c.task or c.label for c in t.task_columns()),
        ]
        for t in all_tables()
    ]
    return wrapped_table(rows, ["Table", "Source", "Suite", "Runnable rows", "Tasks"], wrap=[1, 4])


# ------------------------------------------------------------------------------------------- cache
def cache_table(root: Path | None = None) -> str:
    """One row per cache file (one model setting each): entries, dimension and size on disk."""
    from bench.adapters.cache import cache_files, default_cache_dir

    root = root or default_cache_dir()
    files = cache_files(root)
    if not files:
        return f"No embedding cache files in {root}."
    rows = []
    for f in sorted(files, key=lambda f: (str(f.fingerprint.get("model", "")), f.path.name)):
        fp = f.fingerprint
        setting = ", ".join(
            f"{k}={v}"
            for k, v in sorted(fp.items(), key=lambda kv: (kv[0] != "family", kv[0]))
            if k not in ("model", "revision") and v is not None
        )
        rows.append(
            [
                fp.get("model", "?"),
                str(fp.get("revision", "?"))[:12],
                f"unreadable: {f.error}" if f.error else setting,
                f"{f.entries:,}",
                f.dim or "-",
                human_size(f.size),
                f.path.stem.rsplit("-", 1)[-1],
            ]
        )
    headers = ["Model", "Revision", "Setting", "Entries", "Dim", "Size", "File id"]
    table = wrapped_table(rows, headers, wrap=[2])
    total = (
        f"{len(files)} file(s), {sum(f.entries for f in files):,} vectors, {human_size(sum(f.size for f in files))} "
        f"in {root} (files are <model>-<file id>.sqlite; deleting one forgets that setting's vectors)"
    )
    return f"{table}\n\n{wrapped_text(total)}"


def human_size(n: int) -> str:
    """Bytes as `512 B`, `3.4 KB`, `1.2 MB`, `2.0 GB` (powers of 1,024)."""
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"
