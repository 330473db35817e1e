"""Instruction-variant files: which instructions each task is run under by `bench run --instruction-variants`.

A variants file is YAML or JSON. Its tasks sit under `tasks:` (beside optional `name:`, `description:`
and `source:`), or at the top level when there is nothing else:

    name: generic-sts-paraphrases
    source: hand-written paraphrases of INSTRUCTOR's STS instruction, checked by ...
    tasks:
      STSBenchmark:                       # a list: variants v01, v02, ...
        - "Represent the statement: "
        - "Represent the sentence for semantic similarity: "
      FewRelClustering:                   # named sets: variants correct01, ..., implicit01, ...
        correct: ["...", "..."]
        incorrect: ["..."]
      SciDocsRR:                          # a mapping per variant where the task has several slots
        - {query: "Represent the title: ", document: "Represent the document: "}

An instruction is a string, or a mapping of the task's instruction slots (retrieval/reranking: query,
document; multi-criterion tasks: one per criterion/aspect). How a task takes a variant is the task's
business (`bench/tasks/variants.py`); this module only reads, checks and names.

Why the label carries a hash: a variant's label names its MTEB experiment folder and its cache of
results, so editing an instruction in the file gives a new folder instead of silently reusing (or
overwriting) the old instruction's result.

Built-in files (`bench list variants`) live in `bench/tasks/instruction_variants/` and are named without
their suffix: `--instruction-variants inbedder-robustness`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from bench.core.bounded import brief, is_blank
from bench.core.config_files import read_yaml_or_json
from bench.core.errors import ConfigError
from bench.core.fileio import sha256_json
from bench.core.run_record import VariantBlock

BUILTIN_DIR = Path(__file__).resolve().parents[1] / "tasks" / "instruction_variants"
SUFFIXES = (".yaml", ".yml", ".json")
FILE_KEYS = ("name", "description", "source", "tasks")
MAX_NAME = 200  # characters of a task or set name
EXPERIMENT_KEY = "instruction"  # the experiment kwarg a variant adds to the model's experiment

Instruction = str | dict[str, str]


@dataclass(frozen=True)
class Variant:
    """One instruction (or mapping of instructions) a task is run under.

    Attributes:
        task: the task's name.
        instruction: what the task's instruction slot(s) become.
        set: the named set it belongs to (`correct`, `implicit`, ...), None for a plain list.
        index: its position within its set (or list), from 0.
        label: `<set|v><index+1, 2 digits>-<8 hex of sha256(instruction)>`, unique in its task.
    """

    task: str
    instruction: Instruction
    set: str | None
    index: int
    label: str

    @property
    def instruction_sha256(self) -> str:
        return sha256_json(self.instruction)

    def record(self, source: VariantFile) -> VariantBlock:
        """The `variant` block of a run record: enough to rerun it and to group it with its siblings."""
        return {
            "label": self.label,
            "set": self.set,
            "index": self.index,
            "instruction": self.instruction,
            "instruction_sha256": self.instruction_sha256,
            "file": {"name": source.name, "sha256": source.sha256},
            "sets": list(source.sets.get(self.task, ())),  # the file's set order: which difference is which
        }


@dataclass
class VariantFile:
    """A parsed variants file: its tasks' variants in file order, and what identifies the file."""

    name: str
    sha256: str
    variants: dict[str, list[Variant]]
    description: str | None = None
    source: str | None = None
    sets: dict[str, tuple[str, ...]] = field(default_factory=dict)  # task -> its named sets, in file order

    def for_task(self, task: str) -> list[Variant]:
        return self.variants.get(task, [])


def variant_label(set_name: str | None, index: int, instruction: Instruction) -> str:
    digest = hashlib.sha256(json.dumps(instruction, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:8]
    return f"{set_name or 'v'}{index + 1:02d}-{digest}"


def builtin_variant_files() -> dict[str, Path]:
    """Built-in variants files by name (file stem); a builder's manifest beside one (`*manifest.json`) is not one."""
    if not BUILTIN_DIR.is_dir():
        return {}
    return {
        p.stem: p
        for p in sorted(BUILTIN_DIR.iterdir())
        if p.suffix in SUFFIXES and not p.name.endswith("manifest.json")
    }


def resolve_variants_path(spec: str | Path) -> Path:
    """A path, or the name of a built-in file (`inbedder-robustness`)."""
    path = Path(spec).expanduser()
    if path.is_file():
        return path
    builtin = builtin_variant_files()
    if str(spec) in builtin:
        return builtin[str(spec)]
    known = ", ".join(builtin) or "none"
    raise ConfigError(
        f"--instruction-variants {spec}: no such file, and not a built-in variants file "
        f"(built-in: {known}). Give a YAML/JSON file of task: [instructions]."
    )


def load_variants(spec: str | Path, *, known_tasks: Collection[str] | None = None) -> VariantFile:
    """Read and check a variants file; `known_tasks` (names) makes an unknown task name an error here."""
    path = resolve_variants_path(spec)
    where = f"--instruction-variants {path.name}"
    data, raw = read_yaml_or_json(path, "--instruction-variants")
    meta, tasks = _split(data, where)
    variants: dict[str, list[Variant]] = {}
    sets: dict[str, tuple[str, ...]] = {}
    for task, entry in tasks.items():
        task = str(task)
        if len(task) > MAX_NAME:  # every message below names the task: a 1 MB key would be a 1 MB error line
            raise ConfigError(f"{where}: {brief(task)} ({len(task):,} characters) is not a task name.")
        if known_tasks is not None and task not in known_tasks:
            from bench.core.errors import UnknownNameError

            raise UnknownNameError("task", task, known_tasks)
        variants[task], sets[task] = _task_variants(task, entry, where)
    return VariantFile(
        name=str(meta.get("name") or path.stem),
        sha256=hashlib.sha256(raw).hexdigest(),
        variants=variants,
        description=meta.get("description"),
        source=meta.get("source"),
        sets={t: s for t, s in sets.items() if s},
    )


def _split(data: object, where: str) -> tuple[dict[str, str | None], dict[object, object]]:
    """(file metadata, task mapping)."""
    if not isinstance(data, dict) or not data:
        raise ConfigError(f"{where} must hold a mapping of task name -> list of instructions (or named sets).")
    if "tasks" in data:
        extra = [k for k in data if k not in FILE_KEYS]
        if extra:
            raise ConfigError(
                f"{where}: unknown top-level key(s) {brief(extra)}; allowed beside tasks: name, description, source."
            )
        tasks = data["tasks"]
        if not isinstance(tasks, dict) or not tasks:
            raise ConfigError(f"{where}: tasks must be a non-empty mapping of task name -> instructions.")
        meta = {k: data.get(k) for k in FILE_KEYS if k != "tasks"}
        wrong = [k for k, v in meta.items() if v is not None and not isinstance(v, str)]
        if wrong:
            raise ConfigError(f"{where}: {wrong[0]} must be a text, not {type(meta[wrong[0]]).__name__}.")
        return meta, tasks
    return {}, data


def _task_variants(task: str, entry: object, where: str) -> tuple[list[Variant], tuple[str, ...]]:
    if isinstance(entry, list):
        groups: list[tuple[str | None, list[object]]] = [(None, entry)]
    elif isinstance(entry, dict) and entry and all(isinstance(v, list) for v in entry.values()):
        groups = [(str(k), v) for k, v in entry.items()]
        for name in map(str, entry):
            if not name.isidentifier() or not name.isascii() or len(name) > MAX_NAME:
                raise ConfigError(f"{where}: {task}: set name {brief(name)} must be a plain word (letters, digits, _).")
    else:
        raise ConfigError(f"{where}: {task} must be a list of instructions or a mapping of set name -> list.")
    out: list[Variant] = []
    seen: dict[str, str] = {}
    for set_name, items in groups:
        if not items:
            raise ConfigError(f"{where}: {task}{f' set {set_name}' if set_name else ''} has no instructions.")
        for index, item in enumerate(items):
            place = f"{set_name or 'list'} #{index + 1}"
            instruction = _instruction(f"{task}: instruction {place}", item, where)
            key = json.dumps(instruction, sort_keys=True, ensure_ascii=False)
            if key in seen:
                raise ConfigError(
                    f"{where}: {task}: instruction {place} repeats {seen[key]}: each variant must "
                    "differ, or the statistics would count one instruction twice."
                )
            seen[key] = place
            out.append(Variant(task, instruction, set_name, index, variant_label(set_name, index, instruction)))
    return out, tuple(name for name, _ in groups if name is not None)


def _instruction(which: str, item: object, where: str) -> Instruction:
    """An instruction as the file gives it (`which` names it: task, set, number). Blank means invisible
    too (only spaces or zero-width characters), which a model would see as no instruction at all."""
    if isinstance(item, str):
        if is_blank(item):
            raise ConfigError(
                f"{where}: {which} is empty (only spaces or invisible characters such as U+200B); "
                "write the instruction or remove the item."
            )
        return item
    if (
        isinstance(item, dict)
        and item
        and all(isinstance(k, str) and isinstance(v, str) and not is_blank(v) for k, v in item.items())
    ):
        return dict(item)
    raise ConfigError(
        f"{where}: {which}: each instruction must be a non-empty string, or a mapping of "
        f"slot -> non-empty string (query/document, or one per criterion); got {brief(item)}."
    )


__all__ = ["EXPERIMENT_KEY", "Variant", "VariantFile", "builtin_variant_files", "load_variants", "variant_label"]
