"""Real result files for the leaderboard tests: the demo suite run by `bench run` with the default model.

Two settings (instruction template `prefix`, the default, and `none`), so tables have two rows whose
order differs by column. Made once per test session; tests copy the folder before changing it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.run.runner import RunOptions, run


@pytest.fixture(scope="session")
def demo_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lb-results")
    cache = root.parent / "lb-cache"
    for template in (None, "none"):
        run(RunOptions(suite="demo", template=template, output_dir=str(root), cache_dir=str(cache), show_progress_bar=False))
    return root


def copy_results(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def result_files(root: Path, task: str, *, experiment: bool = False, model: str | None = None) -> tuple[Path, Path]:
    """(result file, run record) of `task` in the default setting (or in the experiment), never an
    instruction variant's (`add_variants`); of the model `model` (org/name) when given."""
    for path in sorted(root.rglob(f"{task}.json")):
        if path.parent.name == "run_records" or ("experiments" in path.parts) != experiment:
            continue
        if model is not None and model.replace("/", "__") not in path.parts:
            continue
        record = path.parent / "run_records" / path.name
        if record.is_file() and "variant" in json.loads(record.read_text(encoding="utf-8")):
            continue
        return path, record
    raise FileNotFoundError(task)


# What `bench run --instruction-variants` adds (bench/core/variants.py): one result per variant, in an experiment
# folder whose experiment is the setting's plus `instruction: <label>`, with a `variant` block in its record.
VARIANTS = (("correct", 0, "Represent the sentence for retrieving sentences of similar meaning: "),
            ("correct", 1, "Represent the meaning of the sentence: "),
            ("incorrect", 0, "Represent the number of words in the sentence: "))


def add_variants(src: tuple[Path, Path], scores: list[float], variants: tuple = VARIANTS) -> list[tuple[Path, Path]]:
    """Copies of the result and run record `src` as instruction-variant results, the main score of the
    i-th set to `scores[i]`; returns their (result, run record) paths."""
    from bench.core.variants import Variant, VariantFile, variant_label

    result, record = src
    source = VariantFile(name="test-variants", sha256="f" * 64, variants={})
    written = []
    for (set_name, index, instruction), score in zip(variants, scores, strict=True):
        variant = Variant(result.stem, instruction, set_name, index, variant_label(set_name, index, instruction))
        folder = result.parent / "experiments" if "experiments" not in result.parts else result.parent.parent
        folder = folder / f"{result.parent.name if 'experiments' in result.parts else 'default'}__{variant.label}"
        (folder / "run_records").mkdir(parents=True)
        shutil.copy(result, folder / result.name)
        shutil.copy(record, folder / "run_records" / record.name)
        new_record = folder / "run_records" / record.name

        main = json.loads(record.read_text(encoding="utf-8"))["task"]["main_score"]

        def rescore(d: Any, score: float = score, main: str = main) -> None:
            d["scores"]["test"][0].update({"main_score": score, main: score})

        def relabel(d: Any, variant: Variant = variant) -> None:
            d["model"]["experiment"] = {**(d["model"].get("experiment") or {}), "instruction": variant.label}
            d["variant"] = variant.record(source)

        edit_json(folder / result.name, rescore)
        edit_json(new_record, relabel)
        written.append((folder / result.name, new_record))
    return written


def copy_model(root: Path, name: str) -> None:
    """The default setting's results again, as those of another model `name` (org/model)."""
    src, _ = result_files(root, "DemoInstructSTS")
    revision = src.parent
    dst = revision.parent.parent / name.replace("/", "__") / revision.name
    dst.mkdir(parents=True)
    for path in revision.glob("*.json"):
        if path.name != "model_meta.json":
            shutil.copy(path, dst / path.name)
    shutil.copytree(revision / "run_records", dst / "run_records")
    for record in (dst / "run_records").glob("*.json"):
        edit_json(record, lambda d: d["model"].update(name=name))


def edit_json(path: Path, change: Callable[[Any], Any]) -> None:
    """Apply `change` (which mutates the parsed JSON in place) and write the file back."""
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
