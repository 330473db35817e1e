"""`bench --version`, `bench list builders|cache|models` (wrapped to the terminal), and build-data's one line."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata

import numpy as np
import pytest

from bench.adapters.cache import EmbeddingCache, cache_files
from bench.cli.commands.listing import human_size, wrapped_table
from bench.cli.main import main
from bench.dataset_builders.registry import builders


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_version_from_metadata_without_mteb_or_torch():
    code = (
        "import sys\nfrom bench.cli.main import main\ntry:\n    main(['--version'])\nexcept SystemExit as e:\n"
        "    assert e.code == 0\nprint(sorted(m for m in ('mteb', 'torch', 'numpy', 'bench.tasks', 'bench.adapters') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=1000)
    assert proc.returncode == 0, proc.stderr
    first, modules = proc.stdout.splitlines()
    assert first.startswith(f"bench {metadata.version('instruct-bench')} (mteb {metadata.version('mteb')}, Python ")
    assert modules == "[]"


def test_list_builders_names_every_builder(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "90")
    code, out, _ = _run(capsys, "list", "builders")
    assert code == 0 and max(len(line) for line in out.splitlines()) <= 90
    names = {line.split("|")[1].strip() for line in out.splitlines()[2:] if line.split("|")[1].strip()}
    assert names == set(builders())
    assert _run(capsys, "build-data", "list")[1] == out  # one table, two ways to ask


@pytest.mark.registry
@pytest.mark.parametrize("columns", [80, 120, 200])
def test_list_models_wraps_to_the_terminal_width(capsys, monkeypatch, columns):
    from bench.adapters.mteb_zoo import instruction_models
    from bench.adapters.registry import FAMILIES

    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = _run(capsys, "list", "models")
    assert code == 0 and "all-MiniLM-L6-v2" in out and "inbedder:" in out
    assert max(len(line) for line in out.splitlines()) <= columns
    family_rows = out.split("| Family prefix")[1].split("\n\n")[0].splitlines()[2:]
    assert {f"{f}:" for f in FAMILIES} <= {line.split("|")[1].strip() for line in family_rows}  # prefixes whole
    options = out.split("Options of each family")[1].split("Give options")[0]
    assert "revision=None, template='prefix', max_seq_length=None," in " ".join(options.split())  # nothing lost
    assert sum(w.startswith("show_progress_bar=None") for w in options.split()) == len(FAMILIES)  # none broken
    words = {w.rstrip(":") for w in out.split()}
    ids = {m["model"].split()[0] for m in instruction_models()}  # a variant's "(option=...)" after its id may wrap
    assert ids <= words  # every MTEB model id whole, on one line (a model not probed offline says so)


@pytest.mark.registry
@pytest.mark.parametrize("columns", [80, 200])
def test_list_tasks_never_breaks_a_name(capsys, monkeypatch, columns):
    from bench.tasks import TASKS

    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = _run(capsys, "list", "tasks")
    assert code == 0 and max(len(line) for line in out.splitlines()) <= columns
    words = {w.strip("|:,") for w in out.split()}
    assert set(TASKS) <= words and {c.metadata.dataset["path"] for c in TASKS.values()} <= words


@pytest.mark.parametrize("width", [70, 50])
def test_wrapped_table_wraps_text_at_spaces_only(width):
    rows = [["org/a-very-long-model-name", "max_tokens_per_request=300000, a-hyphenated-word and more words here"]]
    table = wrapped_table(rows, ["Model", "About"], width=width, wrap=[1])
    cells = [line.split("|")[2].strip() for line in table.splitlines()[2:]]
    assert "org/a-very-long-model-name" in table and len(cells) > 1  # the name whole, the text wrapped
    assert " ".join(cells).split() == rows[0][1].split()  # the words, each whole, in order
    # within the width when the longest word fits (at 50 it cannot: the table is wider, no word broken)
    assert all(len(line) <= width for line in table.splitlines()) == (width == 70)


def test_wrapped_table_keeps_short_columns_and_wraps_the_long_one():
    rows = [["short", "word " * 30], ["x", "y"]]
    table = wrapped_table(rows, ["Name", "About"], width=40, wrap=[1])
    lines = table.splitlines()
    assert all(len(line) <= 40 for line in lines) and lines[2].startswith("| short  | word")
    assert " ".join(c.strip() for line in lines[2:] for c in line.split("|")[2:3]).split() == ["word"] * 30 + ["y"]
    assert (
        wrapped_table(rows[1:], ["Name", "About"], width=40)
        == "| Name   | About   |\n|--------|---------|\n| x      | y       |"
    )


def test_list_cache_counts_entries_and_sizes(capsys, tmp_path):
    root = tmp_path / "embeddings"
    a = EmbeddingCache(
        root, {"family": "sentence-transformers", "model": "org/a", "revision": "r1", "template": "none"}
    )
    a.put_many([f"k{i}" for i in range(5)], np.ones((5, 8), dtype=np.float32))
    a.close()
    b = EmbeddingCache(root, {"family": "inbedder", "model": "org/b", "revision": "r2", "pooling": "1st-gen"})
    b.put_many(["x", "y"], np.zeros((2, 16), dtype=np.float32))
    b.close()
    (root / "junk.sqlite").write_bytes(b"not a database at all, " * 100)
    info = {f.fingerprint.get("model"): f for f in cache_files(root)}
    assert info["org/a"].entries == 5 and info["org/a"].dim == 8 and info["org/b"].entries == 2
    assert info["org/a"].size == a.path.stat().st_size > 0
    assert info[None].error  # the junk file is listed, with why it cannot be read
    code, out, _ = _run(capsys, "list", "cache", "--cache-dir", str(root))
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("| org/a"))
    assert "family=sentence-" in row and "| 5 " in row and "| 8 " in row
    assert "unreadable" in out and "3 file(s), 7 vectors, " in out
    assert _run(capsys, "list", "cache", "--cache-dir", str(tmp_path / "none"))[1].startswith(
        "No embedding cache files"
    )


def test_list_cache_reads_without_torch(tmp_path):
    code = (
        f"import sys\nfrom bench.cli.main import main\nmain(['list', 'cache', '--cache-dir', {str(tmp_path)!r}])\n"
        "print('torch' in sys.modules, 'mteb' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=1000)
    assert proc.returncode == 0 and proc.stdout.splitlines()[-1] == "False False", proc.stderr


def test_human_size():
    assert [human_size(n) for n in (512, 2048, 5 * 1024**2, 3 * 1024**3)] == ["512 B", "2.0 KB", "5.0 MB", "3.0 GB"]


def test_build_data_prints_one_summary_line(capsys, raw_dir, tmp_path):
    out_dir = tmp_path / "data"
    code, out, _ = _run(
        capsys, "build-data", "gstransform", "--source-dir", str(raw_dir), "--out", str(out_dir), "--size", "40"
    )
    assert code == 0 and len(out.strip().splitlines()) == 1
    manifest = json.loads((out_dir / "GSTToxic" / "manifest.json").read_text())  # the manifest stays in the file
    rows = manifest["outputs"]["toxic.csv"]["rows"]
    assert f"GSTToxic ({rows:,} rows, STAND-IN)" in out and "GSTAmzCF (40 rows)" in out
    code, out, _ = _run(
        capsys, "build-data", "gst-amzcf", "--source-dir", str(raw_dir), "--out", str(out_dir), "--size", "40"
    )
    assert "GSTAmzCF (40 rows)" in out and "GSTToxic" not in out  # only what this build wrote
    code, out, _ = _run(
        capsys, "build-data", "gst-amzcf", "--source-dir", str(raw_dir), "--out", str(out_dir), "--size", "40", "-v"
    )
    assert json.loads(out[: out.rindex("}") + 1])["tasks"]["GSTAmzCF"]["outputs"]["counterfactual.csv"]["rows"] == 40
