"""MTEB's model zoo as `bench list models` shows it: which registered models take an instruction, and how.

Read from MTEB's registry (`mteb.get_model_metas()`), never from the hub: each model's loader and
loader options say how its implementation turns a task's instruction into the text the model sees.
The format shown is MTEB's own rendering (`format_instruction` of the loader class with the
registered template), so what is listed is what the `mteb` family sends (tests/test_mteb_model.py
checks that against each implementation's real call for a dozen models).
"""

from __future__ import annotations

from typing import Any

SAMPLE_INSTRUCTION = "{instruction}"
SAMPLE_TEXT = "{text}"


def instruction_models() -> list[dict[str, Any]]:
    """One row per instruction-aware registry model (`use_instructions`): name, revision, loader, and
    how a query and a document receive the instruction."""
    import mteb

    rows = []
    for meta in mteb.get_model_metas():
        if not meta.use_instructions or meta.loader is None or "text" not in (meta.modalities or ["text"]):
            continue
        query, document = instruction_format(meta)
        rows.append(
            {
                "model": meta.name,
                "revision": (meta.revision or "")[:12],
                "implementation": loader_name(meta.loader),
                "query": query,
                "document": document,
            }
        )
    return sorted(rows, key=lambda r: r["model"].lower())


def instruction_format(meta: Any) -> tuple[str, str]:
    """(query, document) as MTEB's implementation renders `{instruction}` and `{text}`."""
    from mteb.models.instruct_wrapper import InstructSentenceTransformerModel
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper
    from mteb.types import PromptType

    loader = meta.loader
    kwargs = meta.loader_kwargs or {}
    cls = _loader_class(loader)
    if cls is not None and issubclass(cls, InstructSentenceTransformerModel):
        template = kwargs.get("instruction_template")
        query = _formatted(cls, template, PromptType.query) + SAMPLE_TEXT
        passages = kwargs.get("apply_instruction_to_passages", True)
        document = _formatted(cls, template, PromptType.document) + SAMPLE_TEXT if passages else SAMPLE_TEXT
        return query, document
    if cls is not None and issubclass(cls, SentenceTransformerEncoderWrapper):
        prompts = kwargs.get("model_prompts") or {}
        query = prompts.get("query", "")
        document = prompts.get("document", "")
        typed = sorted(k for k in prompts if k not in ("query", "document"))
        note = f" (+ {len(typed)} task prompts)" if typed else ""
        return (
            f"{query}{SAMPLE_TEXT}{note}" if prompts else "model's own prompts",
            f"{document}{SAMPLE_TEXT}" if prompts else "model's own prompts",
        )
    return f"custom ({loader_name(loader)})", "custom"


def _formatted(cls: type, template: Any, prompt_type: Any) -> str:
    """The loader class's own `format_instruction`, on an instance that holds only the template."""
    if template is None:
        return SAMPLE_INSTRUCTION
    probe = cls.__new__(cls)  # type: ignore[call-overload]  # typeshed types `type.__new__` as the metaclass call
    probe.instruction_template = template
    try:
        return str(probe.format_instruction(SAMPLE_INSTRUCTION, prompt_type))
    except Exception:  # noqa: BLE001 - a template function that needs more than the instruction
        return "custom template"


def _loader_class(loader: Any) -> type | None:
    """The class a loader builds: the loader itself, or the class a loader function constructs."""
    if isinstance(loader, type):
        return loader
    from mteb.models.instruct_wrapper import InstructSentenceTransformerModel

    code = getattr(loader, "__code__", None)
    if code is not None and "InstructSentenceTransformerModel" in code.co_names:
        return InstructSentenceTransformerModel
    return None


def loader_name(loader: Any) -> str:
    return getattr(loader, "__qualname__", None) or getattr(loader, "__name__", None) or type(loader).__name__
