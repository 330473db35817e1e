"""`bench build-data instruction-variants`: N LLM-written paraphrases of each task's instruction, as a variants file.

The output is a file `bench run --instruction-variants FILE` reads (format: `bench/core/variants.py`):

    name: generic-sts-paraphrases
    description: ...
    source: 5 paraphrases per task by gpt-4o at https://api.openai.com/v1 (...)
    tasks:
      STS12: ["Represent the statement: ", "<paraphrase 1>", ..., "<paraphrase N>"]
      SciDocsRR: [{query: "Represent the Scientific title: ", document: "..."}, {query: ..., document: ...}]

Each task's own instruction is its first variant, so the default wording is one of the variants and the
sensitivity statistics measure the paraphrases against it. Only tasks with one task-level instruction
qualify (the generic MTEB tasks, `bench/tasks/generic.py`); a reranking task's query and corpus instructions
are paraphrased separately and paired by position ({query: p_i, document: q_i}).

One request per distinct instruction text, not per task: STS12 and STS14 share "Represent the statement: ",
so they get the same paraphrases, and their sensitivities compare like with like (and it costs less).
A reply must hold exactly N distinct paraphrases, none equal to the original (case, spacing and end
punctuation ignored), ending in a colon where the original does; else it is asked again (the client's
retries: seed + k). Each paraphrase then gets the original's leading and trailing whitespace, so the
INSTRUCTOR convention of a trailing space after the colon survives a model that trims it.

Like the other LLM builders (`bench/dataset_builders/llm_sets.py`): every request goes through
`bench.core.llm_client` (cache, retries, ledger), `--dry-run` sends nothing and writes nothing, the output
and its manifest are written atomically at the end and depend on nothing but the replies, the options
and the tasks' instructions, so a rebuild from the cache is byte-identical and free. The key is never
written; the endpoint is recorded redacted (`bench.core.redact.redact_url`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.core.errors import ConfigError, DataError
from bench.core.fileio import sha256_json
from bench.core.llm_client import STRING, ChatRequest, LLMClient, LLMConfig, object_schema
from bench.core.redact import redact_url
from bench.core.variants import SUFFIXES, Instruction
from bench.dataset_builders import llm_prompts as P
from bench.dataset_builders.common import atomic_write_bytes, sha256_bytes
from bench.dataset_builders.llm_sets import Plan, _announce, _norm, _tokens

DEFAULT_SUITE = "generic-sts"
DEFAULT_SIZE = 5
FILE_NAME = "instruction_variants.yaml"  # what `--out DIR` gets
MANIFEST = "manifest.json"
TEMPLATE = "instruction_variants.paraphrase"
SLOT_NAMES = {"corpus": "document"}  # bench/tasks/generic.py's reranking key -> the variants file's slot name

NOTE = (
    "Instruction variants for `bench run --instruction-variants`: each task's own instruction first, then N "
    "paraphrases written by the LLM (one request per distinct instruction text, so tasks sharing an instruction "
    "share its paraphrases; a reranking task's query and document instructions are paraphrased separately and "
    "paired by position). A reply must hold exactly N distinct paraphrases, none equal to the original (case, "
    "spacing and end punctuation ignored), ending in a colon where the original does, else it is asked again; "
    "each paraphrase gets the original's leading/trailing whitespace. The prompt is project-written."
)


def build_instruction_variants(
    *,
    source_dir: Path | None = None,
    out_dir: Path,
    seed: int = 42,
    size: int | None = None,
    tasks: list[str] | None = None,
    suite: str | None = None,
    llm_model: str | None = None,
    base_url: str | None = None,
    temperature: float | None = None,
    concurrency: int | None = None,
    llm_cache_dir: str | Path | None = None,
    dry_run: bool = False,
    max_retries: int | None = None,
) -> dict[str, object]:
    """Write the variants file (and its manifest) for `tasks`, else `suite` (default generic-sts).

    `size` = paraphrases per task (default 5); each task gets size + 1 variants. `out_dir` is a folder
    (gets instruction_variants.yaml and manifest.json) or a .yaml/.yml/.json file path (gets that file
    and `<stem>.manifest.json` beside it). `source_dir` is not read: the instructions come from the tasks.
    """
    n = DEFAULT_SIZE if size is None else size
    if n < 1:
        raise ConfigError(f"--size (paraphrases per task) must be a positive number, got {n}.")
    names, label = _task_selection(tasks, suite)
    originals = {name: task_instruction(name) for name in names}
    out_file, manifest_path = output_paths(Path(out_dir))
    config = LLMConfig.from_options(
        llm_model=llm_model,
        base_url=base_url,
        temperature=temperature,
        seed=seed,
        concurrency=concurrency,
        llm_cache_dir=llm_cache_dir,
        max_retries=max_retries,
    )
    texts = list(dict.fromkeys(t for inst in originals.values() for t in _slots(inst).values()))
    requests = [
        ChatRequest.user(
            P.fill(P.INSTRUCTION_PARAPHRASE, instruction=t, n=str(n)),
            paraphrase_schema(n),
            name="paraphrases",
            max_tokens=64 + 48 * n,
            check=paraphrase_check(t),
        )
        for t in texts
    ]
    plan = Plan()
    for req, text in zip(requests, texts, strict=True):
        plan.add(req.messages[0]["content"], n * (len(text) // 4 + 8) + 10)
    report = _announce("instruction-variants", config, plan)
    if dry_run:
        return {"summary": {"dry_run": True, "tasks": len(names), "paraphrases_per_task": n, **report}}

    client = LLMClient(config)
    try:
        results = client.run(requests, desc="Instruction paraphrases")
    finally:
        client.close()
    by_text = dict(zip(texts, results, strict=True))
    variants: dict[str, list[Instruction]] = {}
    failures: list[dict[str, object]] = []
    for name, inst in originals.items():
        slots = _slots(inst)
        failed = {slot: by_text[t] for slot, t in slots.items() if not by_text[t].ok}
        if failed:
            failures += [
                {"task": name, "slot": slot, "instruction": slots[slot], "attempts": r.attempts, "error": r.error}
                for slot, r in failed.items()
            ]
            continue
        shaped = {slot: [reshape(p, t) for p in by_text[t].value["paraphrases"]] for slot, t in slots.items()}
        para: Sequence[Instruction] = (
            [{slot: shaped[slot][i] for slot in slots} for i in range(n)]
            if isinstance(inst, dict)
            else shaped["instruction"]
        )
        variants[name] = [inst, *para]
    if not variants:
        first = failures[0]
        raise DataError(
            f"instruction-variants: no task got {n} valid paraphrases from {config.model}; {first['task']}: "
            f"{first['error']}. Try another --llm-model, or more --max-retries."
        )
    document = {
        "name": (
            out_file.stem
            if out_file != Path(out_dir) / FILE_NAME  # --out FILE names it
            else f"{label}-paraphrases"
            if label
            else "instruction-paraphrases"
        ),
        "description": (
            f"The {label or 'selected'} tasks' own instructions (first), then {n} paraphrases each "
            f"written by an LLM to keep their meaning and form; for `bench run --instruction-variants`."
        ),
        "source": (
            f"{n} paraphrases per task by {config.model} at {redact_url(config.base_url)} (bench build-data "
            f"instruction-variants, seed {seed}, temperature {config.temperature:g}); first variant: the "
            f"task's own instruction"
        ),
        "tasks": variants,
    }
    data = variants_bytes(document, json_format=out_file.suffix.lower() == ".json")
    atomic_write_bytes(out_file, data)
    manifest = {
        "builder": "bench.dataset_builders.instruction_variants:build_instruction_variants",
        "proxy": False,
        "note": NOTE,
        "seed": seed,
        "size": n,
        "llm": {**config.record(), "json_mode_used": client.json_mode},
        "prompts": P.template_records([TEMPLATE]),
        "sources": [_task_source(name, inst) for name, inst in originals.items()],
        "counts": {
            "tasks": len(names),
            "tasks_written": len(variants),
            "requests": len(requests),
            "variants_per_task": n + 1,
        },
        "failures": failures,
        "tokens": _tokens(results),
        "outputs": {out_file.name: {"rows": len(variants), "sha256": sha256_bytes(data), "bytes": len(data)}},
    }
    atomic_write_bytes(manifest_path, (json.dumps(manifest, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    summary = {
        "file": str(out_file),
        "manifest": str(manifest_path),
        "tasks": len(variants),
        "variants_per_task": n + 1,
        "failures": len(failures),
        "ledger": client.ledger.as_dict(),
    }
    return {**manifest, "summary": summary}


# ---------------------------------------------------------------------------------------------- tasks
def _task_selection(tasks: list[str] | None, suite: str | None) -> tuple[list[str], str | None]:
    """Task names, and the suite they came from (None for --tasks), which names the file."""
    from bench import tasks as registry

    if tasks:
        return registry.task_names(tasks=tasks), None
    suite = registry.suite_named(suite or DEFAULT_SUITE)  # an MTEB benchmark name names the suite's file
    return registry.task_names(suite=suite), suite


def task_instruction(name: str) -> Instruction:
    """The task's own instruction as a variant: a string, or a mapping with the variants file's slot names
    (a reranking task's `corpus` instruction is its `document` slot). ConfigError where there is none."""
    from bench import tasks as registry
    from bench.core.errors import UnknownNameError

    if name not in registry.TASKS:
        raise UnknownNameError("task", name, registry.TASKS)
    cls = registry.TASKS[name]
    inst = getattr(cls, "instruction", None)
    if isinstance(inst, str) and inst.strip():
        return inst
    if isinstance(inst, dict) and inst and all(isinstance(v, str) and v.strip() for v in inst.values()):
        slots: dict[str, str] = inst
        return {SLOT_NAMES.get(k, k): v for k, v in slots.items()}
    raise ConfigError(
        f"build-data instruction-variants: {name} has no single task-level instruction to paraphrase: "
        f"{_why_none(cls)}. Choose tasks that have one (e.g. --suite generic-sts; `bench list tasks`)."
    )


def _why_none(cls: type) -> str:
    """Why a task has no one instruction, in the task's own terms."""
    from bench.tasks.abstasks.instruction_sts import AbsTaskInstructionSTS

    if isinstance(getattr(cls, "instructions", None), dict):
        sets = cls.instructions  # type: ignore[attr-defined]
        counts = ", ".join(f"{len(v)} {k}" for k, v in sets.items())
        return f"it is already run under its own instruction lists ({counts})"
    if isinstance(cls, type) and issubclass(cls, AbsTaskInstructionSTS):
        return "its instructions are per row (one question per sentence pair)"
    if isinstance(getattr(cls, "criteria", None), dict):
        return f"it has one instruction per criterion ({', '.join(cls.criteria)})"  # type: ignore[attr-defined]
    if isinstance(getattr(cls, "aspects", None), dict):
        return f"it has one instruction per aspect ({', '.join(cls.aspects)})"  # type: ignore[attr-defined]
    return "it defines no task-level instruction"


def _slots(inst: Instruction) -> dict[str, str]:
    """The texts to paraphrase, by slot; a plain instruction is the one slot `instruction`."""
    return dict(inst) if isinstance(inst, dict) else {"instruction": inst}


def _task_source(name: str, inst: Instruction) -> dict[str, object]:
    from bench import tasks as registry

    return {
        "task": name,
        "instruction": inst,
        "sha256": sha256_json(inst),
        "instruction_source": getattr(registry.TASKS[name], "instruction_source", None),
    }


# ---------------------------------------------------------------------------------------------- replies
def paraphrase_schema(n: int) -> dict[str, object]:
    return object_schema(paraphrases={"type": "array", "items": STRING, "minItems": n, "maxItems": n})


def paraphrase_check(original: str) -> Any:
    """A reply check beyond the schema: distinct paraphrases, not the original, the original's colon ending."""

    def check(value: Any) -> None:
        texts = value["paraphrases"]
        normed = [_norm(t) for t in texts]
        if len(set(normed)) != len(normed):
            raise ValueError("the list repeats a paraphrase")
        if _norm(original) in normed:
            raise ValueError("the list repeats the original instruction")
        if original.rstrip().endswith(":"):
            open_ended = [t for t in texts if not t.rstrip().endswith(":")]
            if open_ended:
                raise ValueError(f"a paraphrase does not end with ':' as the original does: {open_ended[0][:60]!r}")

    return check


def reshape(text: str, original: str) -> str:
    """`text` with the original's leading and trailing whitespace ("Represent the X:" -> "Represent the X: ")."""
    core = text.strip()
    lead = original[: len(original) - len(original.lstrip())]
    trail = original[len(original.rstrip()) :]
    return f"{lead}{core}{trail}"


# ---------------------------------------------------------------------------------------------- output
def output_paths(out: Path) -> tuple[Path, Path]:
    """(variants file, manifest): a folder gets instruction_variants.yaml + manifest.json; a file path with a
    variants suffix is the file, its manifest `<stem>.manifest.json` beside it."""
    if out.suffix.lower() in SUFFIXES and not out.is_dir():
        return out, out.with_name(f"{out.stem}.{MANIFEST}")
    if out.exists() and not out.is_dir():
        raise ConfigError(
            f"--out {out} is a file without a .yaml/.yml/.json suffix; give a folder or a variants file path."
        )
    return out / FILE_NAME, out / MANIFEST


def variants_bytes(document: Mapping[str, object], *, json_format: bool = False) -> bytes:
    """The file's bytes: fixed key order, strings quoted where YAML needs it (trailing spaces survive)."""
    if json_format:
        return (json.dumps(document, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    import yaml

    header = "# Written by `bench build-data instruction-variants`; settings and hashes in the manifest beside it.\n"
    body = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=1000, default_flow_style=False)
    return (header + body).encode("utf-8")
