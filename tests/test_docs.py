"""The documentation says what the code does.

* The generated reference pages (docs/hooks/reference.py) name every command, subcommand and option of
  the CLI's parsers and every model family and option of the constructors; the expected sets are read
  here from the parsers and the registry themselves, so a page that drops one fails.
* Every shell and Python example in README.md and docs/ runs as written, offline, from a copy of the
  working tree, unless the line before its fence says why not: `<!-- example: skip (reason) -->`.
  A block made only of plain `bench ...` / `python -m bench ...` lines (no pipes, redirections,
  variables or other commands) runs them through `bench.cli.main.main` in this process, in that copy:
  the same program without paying a fresh interpreter's torch and MTEB imports per line, which would
  cost CI a minute and a half. Python blocks run one after another in one python subprocess, each in a
  fresh `__main__` namespace (as cells of one notebook would), apart from pytest's own process; any
  other block runs in bash as a subprocess.
* Where a page shows what an example prints (a `text` block after it, with only prose between, no
  heading or other block), the output must hold that block's lines in order: numbers and table rows
  exact, while times, dates and absolute paths are masked (`masked`). A `text` block that is not an
  output (a folder layout) says so on the line before it: `<!-- output: none (reason) -->`.

`mkdocs build --strict` itself runs in .ci/run (once; the site build is not repeated here).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import copy_working_tree, missing_output

ROOT = Path(__file__).resolve().parents[1]
HOOK = ROOT / "docs" / "hooks" / "reference.py"
EXAMPLE_LANGS = {"bash": "shell", "sh": "shell", "console": "console", "python": "python"}
SKIP_MARKER = re.compile(r"<!--\s*example:\s*skip\s*\((?P<reason>[^()]*\S[^()]*)\)\s*-->")
NOT_OUTPUT = re.compile(r"<!--\s*output:\s*none\s*\([^()]*\S[^()]*\)\s*-->")
ANY_MARKER = re.compile(r"<!--\s*example:")
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)[^`]*$")
EXAMPLE_TIMEOUT_S = 1500  # a generous bound per block: a slow example is reported, never cut short
OUTPUT_TAIL = 6000
# Blocks that would change what runs the tests: each needs a skip marker (checked before anything runs).
CHANGES_THE_TEST_ENVIRONMENT = (
    (r"\bpytest\b", "runs the test suite"),
    (r"\b(pip3?|uv pip|conda|apt-get|apt|brew)\s+install\b", "installs packages"),
    (r"^\s*sudo\b", "needs root"),
)


def _hook():
    spec = importlib.util.spec_from_file_location("docs_reference_hook", HOOK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ----------------------------------------------------------------------------- generated reference
def _sections(markdown: str) -> dict[str, str]:
    """Heading text (code spans unwrapped) -> the text up to the next heading."""
    out: dict[str, str] = {}
    current = None
    for line in markdown.splitlines():
        heading = re.match(r"^#{1,6}\s+(.*)$", line)
        if heading:
            current = heading.group(1).strip().strip("`").strip()
            out[current] = ""
        elif current is not None:
            out[current] += line + "\n"
    return out


def _all_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                found += _all_parsers(sub)
    return found


@pytest.fixture(scope="module")
def hook():
    return _hook()


@pytest.mark.registry
def test_cli_reference_names_every_command_and_option(hook) -> None:
    from bench.cli.main import build_parser

    parser = build_parser(full_run=True)
    parsers = _all_parsers(parser)
    progs = [p.prog for p in parsers]
    assert {
        "bench",
        "bench run",
        "bench list",
        "bench leaderboard build",
        "bench leaderboard verify",
        "bench gstransform train",
        "bench build-data",
    } <= set(progs)
    sections = _sections(hook.cli_reference())
    missing = [prog for prog in progs if prog not in sections]
    assert not missing, f"commands missing from the CLI reference: {missing}"
    for p in parsers:
        text = sections[p.prog]
        for action in p._actions:
            if action.help == argparse.SUPPRESS:
                continue
            if isinstance(action, argparse._SubParsersAction):
                names = [f"`{p.prog} {name}`" for name in action.choices]
            elif action.option_strings:
                names = [f"`{s}`" for s in action.option_strings]
            else:
                names = [f"`{action.metavar or action.dest}`", *(action.choices or ())]
            absent = [n for n in names if n not in text]
            assert not absent, f"`{p.prog}` section of the CLI reference lacks {absent}"
    run_flags = {s for a in next(x for x in parsers if x.prog == "bench run")._actions for s in a.option_strings}
    assert {"--template", "--pooling", "--dtype"} <= run_flags  # the families' flags are part of the page


@pytest.mark.registry
def test_families_reference_names_every_family_and_option(hook) -> None:
    from bench.adapters.options import family_options, runtime_options
    from bench.adapters.registry import FAMILIES, discover

    discover()
    assert {"mteb", "sentence-transformers", "openai", "inbedder"} <= set(FAMILIES)
    sections = _sections(hook.families_reference())
    for family, cls in FAMILIES.items():
        assert family in sections, f"family {family} missing from the families reference"
        rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `(\w+)` \|.*$", sections[family], re.MULTILINE)}
        options = family_options(cls)
        assert set(rows) == set(options), f"{family}: table options {sorted(rows)} != constructor {sorted(options)}"
        for option in options:
            kind = "runtime" if option in runtime_options(cls) else "**vector**"
            assert f"| {kind} |" in rows[option], f"{family}.{option} should be listed as {kind}"
        assert f"{cls.__module__}.{cls.__qualname__}" in sections[family]


def test_markdown_escaping(hook) -> None:
    assert hook.md_text("a|b <x> & *y* `c|<d>`") == r"a\|b &lt;x&gt; &amp; \*y\* `c|<d>`"
    assert hook.md_code("has ` tick") == "``has ` tick``"
    assert hook.md_code("`x`") == "`` `x` ``"
    assert hook.docstring_args(
        "Summary.\n\nArgs:\n    pooling: how to\n        read out.\n    layer (int): index\n"
        "\nReturns:\n    x: not an option\n"
    ) == {"pooling": "how to read out.", "layer": "index"}


@pytest.mark.parametrize(
    ("page", "marker"),
    [
        ("docs/reference/cli.md", "<!-- generated: cli -->"),
        ("docs/reference/families.md", "<!-- generated: families -->"),
    ],
)
def test_reference_pages_hold_their_marker(page: str, marker: str, hook) -> None:
    assert marker in (ROOT / page).read_text(encoding="utf-8")
    assert marker in hook.MARKERS


# ----------------------------------------------------------------------------- examples run as written
@dataclass(frozen=True)
class Example:
    file: str
    line: int  # the opening fence's line (1-based)
    kind: str  # shell, console or python
    code: str
    skip: str | None  # the reason given in the skip marker
    marker_error: str | None = None
    expected: str | None = None  # the `text` block that shows what it prints
    expected_line: int | None = None

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}"


def doc_files() -> list[Path]:
    files = [ROOT / "README.md"] if (ROOT / "README.md").is_file() else []
    return files + sorted(p for p in (ROOT / "docs").rglob("*.md") if "hooks" not in p.relative_to(ROOT / "docs").parts)


def _blocks(lines: list[str]) -> list[tuple[int, int, str, int]]:
    """(opening line, closing line, language, indent) of each top-level fenced block (0-based)."""
    found = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, indent, lang = opening.group("fence"), len(opening.group("indent")), opening.group("lang").lower()
        j = i + 1
        while j < len(lines) and not re.match(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$", lines[j]):
            j += 1
        found.append((i, j, lang, indent))
        i = j + 1
    return found


def _body(lines: list[str], start: int, end: int, indent: int) -> str:
    return "\n".join(re.sub(rf"^ {{0,{indent}}}", "", line) for line in lines[start + 1 : end])  # a fence in a list


def extract_examples(path: Path) -> list[Example]:
    """The fenced bash/sh/console/python blocks of a Markdown file (not those nested in a longer fence),
    each with the `text` block that shows its output, if one follows it (see the module docstring)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    rel = path.relative_to(ROOT).as_posix()
    blocks = _blocks(lines)
    out: list[Example] = []
    for n, (i, j, lang, indent) in enumerate(blocks):
        if lang not in EXAMPLE_LANGS:
            continue
        before = lines[i - 1].strip() if i > 0 else ""
        skip = SKIP_MARKER.fullmatch(before)
        error = (
            f"{rel}:{i}: write the skip marker as `<!-- example: skip (reason) -->`, with a reason"
            if ANY_MARKER.match(before) and not skip
            else None
        )
        expected = expected_line = None
        if n + 1 < len(blocks) and blocks[n + 1][2] == "text":
            k, end, _, text_indent = blocks[n + 1]
            between = lines[j + 1 : k]
            if not any(re.match(r"^#{1,6}\s", line) for line in between) and not NOT_OUTPUT.fullmatch(
                lines[k - 1].strip()
            ):
                expected, expected_line = _body(lines, k, end, text_indent), k + 1
        out.append(
            Example(
                rel,
                i + 1,
                EXAMPLE_LANGS[lang],
                _body(lines, i, j, indent),
                skip.group("reason").strip() if skip else None,
                error,
                expected,
                expected_line,
            )
        )
    return out


def shell_script(example: Example) -> str:
    """The commands of a shell block: `$ ` prompts stripped; in a console block, output lines dropped."""
    kept: list[str] = []
    continued = False
    for line in example.code.splitlines():
        prompt = re.match(r"^\s*\$(?: (.*)|$)", line)  # `$ cmd`, not `$(cmd)` or `$VAR`
        if prompt:
            command = prompt.group(1) or ""
        elif example.kind == "console" and not continued:
            continue  # output
        else:
            command = line
        kept.append(command)
        continued = command.rstrip().endswith("\\")
    return "\n".join(kept) + "\n"


EXAMPLES = [e for f in doc_files() for e in extract_examples(f)]


def test_example_extraction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir()
    page.write_text(
        "\n".join(
            [
                "```console",
                "$ python -m bench list suites",
                "| Suite | Tasks |",
                "$ echo a \\",
                "  b",
                "output",
                "```",
                "<!-- example: skip (needs a GPU) -->",
                "```bash",
                "nvidia-smi",
                "```",
                "<!-- example: skip -->",
                "```sh",
                "echo no reason",
                "```",
                "````markdown",
                "```bash",
                "echo nested, not an example",
                "```",
                "````",
                "- a list item:",
                "",
                "    ```python",
                "    print('indented')",
                "    ```",
                "```text",
                "not code",
                "```",
                "```bash",
                "$(python -c 'print(1)') && $HOME/x",
                "$ echo prompt",
                "```",
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    found = extract_examples(page)
    assert [(e.line, e.kind, e.skip) for e in found] == [
        (1, "console", None),
        (9, "shell", "needs a GPU"),
        (13, "shell", None),
        (23, "python", None),
        (29, "shell", None),
    ]
    assert shell_script(found[4]) == "$(python -c 'print(1)') && $HOME/x\necho prompt\n"
    assert shell_script(found[0]) == "python -m bench list suites\necho a \\\n  b\n"
    assert found[2].marker_error and "reason" in found[2].marker_error and found[0].marker_error is None
    assert found[3].code == "print('indented')"
    assert found[0].id == "docs/page.md:1"


def test_a_text_block_after_an_example_is_its_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir()
    page.write_text(
        "\n".join(
            [
                "```bash",
                "bench run",
                "```",
                "",
                "It prints:",
                "",
                "```text",
                "shown",
                "```",
                "```bash",
                "bench list",
                "```",
                "## Next",
                "```text",
                "a heading between: not its output",
                "```",
                "```bash",
                "bench results",
                "```",
                "<!-- output: none (a layout) -->",
                "```text",
                "layout",
                "```",
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert [(e.line, e.expected, e.expected_line) for e in extract_examples(page)] == [
        (1, "shown", 7),
        (10, None, None),
        (17, None, None),
    ]


def test_shown_output_masks_times_dates_and_paths_only() -> None:
    shown = "| Task | Score | Seconds |\n|---|---|---|\n| A | 1.00 | 4.9 |\n\nwrote /tmp/x/out on 2026-11-01 in 3.2 s"
    printed = (
        "[1/1] A (0.7s)\n| Task  | Score   | Seconds   |\n|-------|---------|-----------|\n| A     | 1.00    | 0.7       |\n"
        "wrote /home/u/y on 2026-11-27T10:00:00Z in 12 s\n"
    )
    assert missing_output(shown, printed) is None
    assert "| A | 1.01 | <T> |" in missing_output(shown.replace("1.00", "1.01"), printed)
    assert missing_output("second\nfirst", "first\nsecond") is not None  # in order


@pytest.fixture(scope="module")
def example_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One copy of the working tree (tracked files and new ones git does not ignore), shared by every
    example in order, so a command written for the repository root works and later blocks see earlier
    blocks' outputs; the repository itself is never written to."""
    return copy_working_tree(tmp_path_factory.mktemp("docs-examples") / "repo")


def _example_env(work: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "INSTRUCT_BENCH_DATA_DIR", "PYTEST_CURRENT_TEST")
    }
    env.update(
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        PYTHONPATH=os.pathsep.join([str(work), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
    )
    # one embedding cache for every example, and theirs alone: a text encoded once is not again, and the pages'
    # printed encode counts (the README's first run encodes every text) do not depend on what other tests ran first
    env["INSTRUCT_BENCH_CACHE"] = str(work.parent / "cache")
    return env


_PLAIN_BENCH = re.compile(r"^\s*(?:python3? -m bench|bench)(?P<args>(?:\s+[^|&;<>$`()\\]*)?)\s*$")


def bench_command_lines(example: Example) -> list[list[str]] | None:
    """The argument lists of a shell block that holds only plain `bench` commands, else None."""
    lines = [line for line in shell_script(example).splitlines() if line.strip() and not line.lstrip().startswith("#")]
    plain = [_PLAIN_BENCH.match(line) for line in lines]
    if not lines or not all(plain):
        return None
    return [shlex.split(m.group("args"), comments=True) for m in plain]


def run_in_process(
    argvs: list[list[str]], work: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    """Each `bench ARGS` of a block through the CLI's own entry point, in `work` with `env`; stops at the first failure."""
    from bench.cli.main import main

    monkeypatch.chdir(work)
    for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "INSTRUCT_BENCH_DATA_DIR"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("INSTRUCT_BENCH_CACHE", env["INSTRUCT_BENCH_CACHE"])
    out = io.StringIO()
    for argv in argvs:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                code = main(argv)
            except SystemExit as e:  # --help, --version: argparse exits
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
        if code:
            return code, out.getvalue()
    return 0, out.getvalue()


# Runs the python blocks it is sent (a JSON line: script path) in fresh `__main__` namespaces, answering
# a JSON line per block: its exit code and output. One interpreter pays the imports once.
_PYTHON_WORKER = r"""
import contextlib, io, json, runpy, sys, traceback
answer = sys.stdout
for line in sys.stdin:
    script = json.loads(line)
    out, code = io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except Exception:  # the block failed: its traceback is the report, as `python script.py` would print it
            traceback.print_exc()
            code = 1
    answer.write(json.dumps({"code": code, "output": out.getvalue()[-20000:]}) + "\n")
    answer.flush()
"""


@pytest.fixture(scope="module")
def python_worker(example_dir: Path):
    """One interpreter for every python block, in the examples' copy of the tree and environment."""
    worker = subprocess.Popen(
        [sys.executable, "-c", _PYTHON_WORKER],
        cwd=example_dir,
        env=_example_env(example_dir),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    yield worker
    worker.stdin.close()
    worker.wait(timeout=EXAMPLE_TIMEOUT_S)


def run_python_block(worker: subprocess.Popen, script: Path) -> tuple[int, str]:
    import json

    worker.stdin.write(json.dumps(str(script)) + "\n")
    worker.stdin.flush()
    line = worker.stdout.readline()
    if not line:
        return worker.wait(timeout=EXAMPLE_TIMEOUT_S) or 1, "the python worker exited (a block ended the interpreter)"
    answer = json.loads(line)
    return answer["code"], answer["output"]


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=[e.id for e in EXAMPLES])
def test_example_runs_as_written(
    example: Example, example_dir: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    if example.marker_error:
        pytest.fail(example.marker_error)
    if example.skip is not None:
        pytest.skip(example.skip)
    for pattern, what in CHANGES_THE_TEST_ENVIRONMENT:
        if re.search(pattern, example.code, re.MULTILINE):
            pytest.fail(f"{example.id} {what}, which a test must not do; mark it `<!-- example: skip ({what}) -->`")
    env = _example_env(example_dir)
    argvs = bench_command_lines(example) if example.kind != "python" else None
    if argvs is not None:
        started = time.monotonic()
        code, output = run_in_process(argvs, example_dir, env, monkeypatch)
        assert code == 0, (
            f"the example at {example.id} exited {code} after {time.monotonic() - started:.1f} s:\n"
            f"{example.code}\n--- output (tail) ---\n{output[-OUTPUT_TAIL:]}"
        )
        check_shown_output(example, output)
        return
    if example.kind == "python":
        script = example_dir.parent / f"example_{example.file.replace('/', '_')}_{example.line}.py"
        script.write_text(example.code + "\n", encoding="utf-8")
        started = time.monotonic()
        code, output = run_python_block(request.getfixturevalue("python_worker"), script)
        assert code == 0, (
            f"the example at {example.id} (python) exited {code} after {time.monotonic() - started:.1f} s:\n"
            f"{example.code}\n--- output (tail) ---\n{output[-OUTPUT_TAIL:]}"
        )
        check_shown_output(example, output)
        return
    command = ["bash", "-e", "-o", "pipefail", "-c", shell_script(example)]
    started = time.monotonic()
    done = subprocess.run(
        command, cwd=example_dir, env=env, capture_output=True, text=True, timeout=EXAMPLE_TIMEOUT_S, check=False
    )
    took = time.monotonic() - started
    output = done.stdout + done.stderr
    assert done.returncode == 0, (
        f"the example at {example.id} ({example.kind}) exited {done.returncode} after {took:.1f} s:\n"
        f"{example.code}\n--- output (tail) ---\n{output[-OUTPUT_TAIL:]}"
    )
    check_shown_output(example, output)


def check_shown_output(example: Example, output: str) -> None:
    """The output the page shows after the example is what it printed (see `masked`)."""
    if example.expected is None:
        return
    problem = missing_output(example.expected, output)
    assert problem is None, (
        f"{example.file}:{example.expected_line} shows output that the example at {example.id} no longer prints "
        f"(update the page):\n{problem}"
    )


def test_only_plain_bench_blocks_run_in_process() -> None:
    def block(code: str, kind: str = "shell") -> Example:
        return Example("x.md", 1, kind, code, None, None)

    assert bench_command_lines(block("# a comment\nbench list suites\npython -m bench run --limit 2 -t 'A B'")) == [
        ["list", "suites"],
        ["run", "--limit", "2", "-t", "A B"],
    ]
    assert bench_command_lines(block("$ bench --version  # which\nbench 0.1.0", "console")) == [["--version"]]
    for other in (
        "bench run --out $HOME/x",
        "bench results | head",
        "bench run > log",
        "cd x && bench run",
        "bench list \\\n  suites",
        "echo bench",
        "benchmarks/x.py",
    ):
        assert bench_command_lines(block(other)) is None, other


def test_a_failing_block_fails(python_worker, example_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The two runners report failure: a python block that raises or exits non-zero, a bench line that errs."""
    scripts = {"ok": "print('fine')", "raises": "raise ValueError('planted')", "exits": "import sys; sys.exit(3)"}
    codes = {}
    for name, code in scripts.items():
        path = example_dir.parent / f"probe_{name}.py"
        path.write_text(code + "\n", encoding="utf-8")
        codes[name] = run_python_block(python_worker, path)
    assert codes["ok"] == (0, "fine\n")
    assert codes["raises"][0] == 1 and "ValueError: planted" in codes["raises"][1]
    assert codes["exits"][0] == 3
    code, output = run_in_process(
        [["list", "suites"], ["run", "--tasks", "NoSuchTask"]], example_dir, _example_env(example_dir), monkeypatch
    )
    assert code == 2 and "error:" in output
