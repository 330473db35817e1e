"""Real result files for the leaderboard tests: the demo suite run by `bench run` with the default model.

Two settings (instruction template `prefix`, the default, and `none`), so tables have two rows whose
order differs by column. Made once per test session; tests copy the folder before changing it.
`add_settings` adds crafted settings beside them (copies of the `none` run's files with the record's
model block rewritten), among them the instruction-blind ones a leaderboard must never rank.
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
        run(
            RunOptions(
                suite="demo", template=template, output_dir=str(root), cache_dir=str(cache), show_progress_bar=False
            )
        )
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
VARIANTS = (
    ("correct", 0, "Represent the sentence for retrieving sentences of similar meaning: "),
    ("correct", 1, "Represent the meaning of the sentence: "),
    ("incorrect", 0, "Represent the number of words in the sentence: "),
)


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


SMOLLM = "HuggingFaceTB/SmolLM2-135M-Instruct"
SMOLLM_META = {
    "name": SMOLLM,
    "revision": "12fd25f77366fa6b3b4b768ec3050bf629380bac",
    "n_parameters": 134515008,
    "embed_dim": 576,
    "max_tokens": 8192,
    "license": "apache-2.0",
    "release_date": "2024-10-31",
    "memory_usage_mb": 513.0,
}


def _use(follows: bool) -> dict[str, Any]:
    """`model.instruction_use` as a run measures it (bench/adapters/base.py `instruction_use`)."""
    return {
        "follows_instructions": follows,
        "method": "render",
        "probe": {
            "text": "The hotel room was clean, but the staff at the front desk were rude.",
            "instructions": ["What is the sentiment of this review?", "Which topic does this review discuss?"],
        },
    }


def add_settings(root: Path) -> dict[str, bool]:
    """Beside the demo run's two settings: MiniLM (sentence-transformers) under `template=prefix` (follows
    instructions, scores ×0.95) and `template=model` (MiniLM has no prompts: blind, the `none` scores),
    and SmolLM2 under PromptEOL without an instruction template (blind, scores ×0.8). Each record carries
    `model.instruction_use` as the run measures it. Returns {row label: follows instructions} of the added rows."""
    src, _ = result_files(root, "DemoInstructSTS", experiment=True)
    folder = src.parent  # .../<model>/<revision>/experiments/template_none
    revision = folder.parent.parent
    minilm = json.loads((src.parent / "run_records" / src.name).read_text(encoding="utf-8"))["model"]["name"]
    added = {
        "template=prefix": (
            revision / "experiments" / "template_prefix",
            minilm,
            "sentence-transformers",
            {"template": "prefix"},
            {
                "template": "prefix",
                "instruction_template": "prefix",
                "instruction_template_format": "{instruction} {text}",
            },
            True,
            0.95,
        ),
        "template=model": (
            revision / "experiments" / "template_model",
            minilm,
            "sentence-transformers",
            {"template": "model"},
            {"template": "model", "instruction_template": "model", "instruction_template_format": "{text}"},
            False,
            1.0,
        ),
        "prompteol": (
            revision.parent.parent / SMOLLM.replace("/", "__") / SMOLLM_META["revision"],
            SMOLLM,
            "prompteol",
            {},
            {
                "prompts": "prompteol",
                "layer": -1,
                "instruction_template": None,
                "dtype": "float32",
                "batch_size": 32,
                "max_tokens": None,
            },
            False,
            0.8,
        ),
    }
    labels = {}
    for dst, name, family, experiment, settings, follows, factor in added.values():
        shutil.copytree(folder, dst)
        if name == SMOLLM:
            (dst / "model_meta.json").write_text(json.dumps(SMOLLM_META, indent=2), encoding="utf-8")
        for record in (dst / "run_records").glob("*.json"):
            edit_json(
                record,
                lambda d, name=name, family=family, experiment=experiment, settings=settings, follows=follows: d.update(
                    model={
                        **{k: v for k, v in d["model"].items() if k != "identity_check"},
                        "name": name,
                        "family": family,
                        "spec": f"{family}:{name}",
                        "experiment": experiment,
                        "settings": settings,
                        "instruction_use": _use(follows),
                        **({"revision": SMOLLM_META["revision"], "content": None} if name == SMOLLM else {}),
                    }
                ),
            )
            main = json.loads(record.read_text(encoding="utf-8"))["task"]["main_score"]

            def rescale(d: Any, main: str = main, factor: float = factor) -> None:
                scores = d["scores"]["test"][0]
                scores.update(main_score=scores["main_score"] * factor, **{main: scores[main] * factor})

            if factor != 1.0:
                edit_json(dst / record.name, rescale)
        label = ", ".join(f"{k}={v}" for k, v in sorted(experiment.items()))
        labels[f"{name} [{label}]" if label else name] = follows
    return labels
