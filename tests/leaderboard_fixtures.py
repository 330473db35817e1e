"""Real result files for the leaderboard tests: the demo suite run by `bench run` with the default model.

Two settings (instruction template `prefix`, the default, and `none`), so tables have two rows whose
order differs by column. Made once per test session; tests copy the folder before changing it.
`add_settings` adds crafted settings beside them (copies of the `none` run's files with the record's
model block rewritten), among them the instruction-blind ones a leaderboard must never rank.
"""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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


@contextmanager
def served_site(folder: Path | str) -> Iterator[str]:
    """Serve the built site `folder` over HTTP on 127.0.0.1 (a free port, a daemon thread), as a user opens it
    (`python -m http.server` or any static host), so a browser test sees what `file://` hides: a missing file's
    404. Yields the base URL (ending in `/`); the server stops when the block ends."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="served-site", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """No request log on stderr (the test's output stays readable); the browser's console reports failures."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


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


# The GSTransform suite as it runs offline: 5 of its 9 tasks, on tiny local copies (no STS-free type is
# complete, so every task-type mean and the suite's Mean are partial for every row).
GST_PARTIAL = ("GSTAmzCF", "GSTMNews", "GSTMultiHate", "GSTToxic", "GSTAGNews")
_GST_TOPICS = {
    "sports": ["goal scored late", "team wins cup", "striker injured", "coach resigns", "league title race"],
    "money": ["shares fall sharply", "bank raises rates", "profits beat forecast", "bond yields climb", "merger ends"],
    "space": ["rocket launch delayed", "new planet found", "probe reaches mars", "telescope image out", "comet passes"],
}


@pytest.fixture(scope="session")
def gst_partial_results(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(results folder, data folder): the default model run on GST_PARTIAL, plus crafted rows (`gst_rows`).
    Build the site with `data_dirs=[data folder]` (the results are on local copies)."""
    import csv

    base = tmp_path_factory.mktemp("lb-gst")
    data, root = base / "data", base / "results"
    rows = [(text, topic) for topic, texts in _GST_TOPICS.items() for text in texts]
    files = {
        ("GSTAGNews", "topic", "label"): rows,
        ("GSTToxic", "toxic", "label"): rows,
        ("GSTMultiHate", "hateful", "label"): rows,
        ("GSTMultiHate", "language", "label"): [(t, "en" if i % 2 else "xx") for i, (t, _) in enumerate(rows)],
        ("GSTAmzCF", "counterfactual", "cluster"): rows,
        ("GSTMNews", "topic", "cluster"): rows,
    }
    for (task, aspect, column), lines in files.items():
        (data / task).mkdir(parents=True, exist_ok=True)
        with (data / task / f"{aspect}.csv").open("w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows([("text", column), *lines])
    run(
        RunOptions(
            tasks=list(GST_PARTIAL),
            data_dir=str(data),
            output_dir=str(root),
            cache_dir=str(base / "cache"),
            show_progress_bar=False,
        )
    )
    gst_rows(root)
    return root, data


def gst_rows(root: Path) -> None:
    """Beside the run (all five tasks): org/lower (its scores ×0.9), org/fewer (four tasks, each 0.99: the
    highest average, over fewer tasks), org/blind (instruction-blind, ×0.95: a baseline) and org/tie (the
    run's scores again: ties with it)."""
    src = next(p.parent for p in root.rglob("GSTAGNews.json") if p.parent.name != "run_records")
    for name, change, drop, follows in (
        ("org/lower", lambda s: s * 0.9, (), True),
        ("org/fewer", lambda s: 0.99, ("GSTAGNews",), True),
        ("org/blind", lambda s: s * 0.95, (), False),
        ("org/tie", lambda s: s, (), True),
    ):
        dst = src.parent.parent / name.replace("/", "__") / src.name
        (dst / "run_records").mkdir(parents=True)
        for task in GST_PARTIAL:
            if task in drop:
                continue
            record = json.loads((src / "run_records" / f"{task}.json").read_text(encoding="utf-8"))
            record["model"].update(name=name, instruction_use=_use(follows))
            (dst / "run_records" / f"{task}.json").write_text(json.dumps(record, indent=2), encoding="utf-8")
            result = json.loads((src / f"{task}.json").read_text(encoding="utf-8"))
            scores, main = result["scores"]["test"][0], record["task"]["main_score"]
            scores.update(main_score=change(scores["main_score"]), **{main: change(scores[main])})
            (dst / f"{task}.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
