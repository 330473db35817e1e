"""sentence-transformers family: any SentenceTransformer model, with the harness's instruction templates.

MTEB's own computation of a model (`--template mteb`, the default for a spec without a family) is the
`mteb` family (bench/adapters/mteb_model.py); this family's results are therefore always MTEB experiments,
named by their template (`experiments/template_prefix/`), never MTEB's key.

Templates (recorded in every result with their sha256):
    none      the text alone; the instruction-blind baseline
    prefix    "{instruction} {text}"  (default)
    model     the model's own prompt for the prompt type (its `prompts` config), no task instruction
    custom    any string with "{text}" and optionally "{instruction}", e.g. "Instruct: {instruction}\\nQuery: {text}"

When the template ends with "{text}", the part before it goes to `SentenceTransformer.encode(prompt=...)`,
so models configured to pool without the prompt tokens (INSTRUCTOR-style) do so.
"""

from __future__ import annotations

import logging
import string
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bench.adapters.base import BaseEncoder
from bench.core.errors import ConfigError, ModelLoadError
from bench.core.fileio import sha256_text

if TYPE_CHECKING:
    from mteb.types import PromptType

    from bench.adapters.model_input import ModelInput
    from bench.core.json_types import JSONObject

logger = logging.getLogger(__name__)

TEMPLATES = {"none": "{text}", "prefix": "{instruction} {text}"}
TEMPLATE_NAMES = ("none", "prefix", "model")


def template_string(template: str) -> str:
    """The format string behind a template name; custom strings are checked for `{text}`."""
    if template in TEMPLATES:
        return TEMPLATES[template]
    if template == "model":
        return "{model_prompt}{text}"
    if "{text}" not in template:
        raise ConfigError(
            f"Instruction template {template!r} has no '{{text}}' placeholder; use one of "
            f"{', '.join(TEMPLATE_NAMES)} or a string such as '{{instruction}} {{text}}'."
        )
    _check_template_fields(template)
    return template


def _check_template_fields(template: str) -> None:
    """A custom template may name only {instruction} and {text}; literal braces are doubled."""
    try:
        fields = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as e:
        raise ConfigError(
            f"Instruction template {template!r} is not a valid format string ({e}); "
            f"write a literal brace as '{{{{' or '}}}}'."
        ) from None
    unknown = sorted(fields - {"instruction", "text"})
    if unknown:
        raise ConfigError(
            f"Instruction template {template!r} has unknown field(s) {', '.join('{' + f + '}' for f in unknown)}; "
            f"a template may use only {{instruction}} and {{text}} (write a literal brace as '{{{{')."
        )


class SentenceTransformerEncoder(BaseEncoder):
    """A SentenceTransformer behind MTEB's encoder protocol, with instruction templates."""

    family = "sentence-transformers"
    aliases = ("st",)
    results_name_family = False
    experiment_always = ("template",)  # only MTEB's implementation (the `mteb` family) is MTEB's key
    notes = "template: none|prefix|model|'<custom with {instruction} and {text}>' (mteb: MTEB's implementation)"
    cli_flags = {
        "template": "how the instruction reaches the model: mteb (default: MTEB's own implementation, MTEB's key), "
        "none, prefix, model, or a string with {instruction} and {text} (each an MTEB experiment)",
        "max_seq_length": "truncate inputs to N tokens",
    }

    def __init__(
        self,
        model_path: str,
        *,
        name: str | None = None,
        revision: str | None = None,
        template: str = "prefix",
        max_seq_length: int | None = None,
        **kwargs: Any,
    ) -> None:
        self.model_path = model_path
        self.template = template
        self.template_format = template_string(template)
        self.max_seq_length = max_seq_length
        self.model: Any = None
        super().__init__(name=name, revision=revision, source=model_path, **kwargs)

    def settings(self) -> JSONObject:
        return {
            **super().settings(),
            "instruction_template": self.template,
            "instruction_template_format": self.template_format,
            "instruction_template_sha256": sha256_text(self.template_format),
        }

    def _load(self) -> None:
        import torch
        from sentence_transformers import SentenceTransformer

        if self.show_progress_bar is False:
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
        try:
            self.model = SentenceTransformer(
                self.model_path,
                device=self.device,
                revision=None if Path(self.model_path).exists() else self.revision,
                model_kwargs={"dtype": getattr(torch, self.dtype)},
            )
        except Exception as e:
            raise ModelLoadError(
                f"Could not load sentence-transformers model '{self.model_path}' "
                f"({type(e).__name__}: {str(e).splitlines()[0][:200]}). Check the path or hub id; "
                f"offline, use a local directory."
            ) from e
        if self.max_seq_length:
            self.model.max_seq_length = self.max_seq_length
        self.update_model_facts(
            embed_dim=self._dim(),
            n_parameters=sum(p.numel() for p in self.model.parameters()),
            max_tokens=self.model.max_seq_length,
        )

    def _dim(self) -> int:
        getter = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        return int(getter())

    def render(self, text: str, instruction: str | None, prompt_type: PromptType | None) -> list[str]:
        """[prompt, text]: the prompt goes through ST's `prompt=` so prompt-excluding pooling applies."""
        if self.template == "model":
            self.ensure_loaded()
            key = prompt_type.value if prompt_type is not None else None
            return [self.model.prompts.get(key, "") if key else "", text]
        if instruction is None or self.template == "none":
            return ["", text]
        fmt = self.template_format
        if fmt.endswith("{text}"):
            return [fmt[: -len("{text}")].format(instruction=instruction), text]
        return ["", fmt.format(instruction=instruction, text=text)]

    @staticmethod
    def batch_group(model_input: ModelInput) -> str:
        # ST's encode takes one prompt per call: sorting by prompt first keeps 30 instructions from
        # splitting every batch into 30 small ones.
        return model_input[0]

    def token_lengths(self, inputs: Sequence[ModelInput]) -> list[int]:
        texts = [x if isinstance(x, str) else "".join(x) for x in inputs]
        ids = self.model.tokenizer(texts, truncation=True, max_length=self.model.max_seq_length)["input_ids"]
        return [len(i) for i in ids]

    def _encode_group(self, inputs: list[ModelInput], batch_size: int) -> np.ndarray:
        by_prompt: dict[str, list[int]] = defaultdict(list)
        for i, model_input in enumerate(inputs):  # [prompt, text]
            by_prompt[model_input[0]].append(i)
        out = np.empty((len(inputs), self._dim()), dtype=np.float32)
        for prompt, rows in by_prompt.items():

            def encode(batch: list[ModelInput], prompt: str = prompt) -> np.ndarray:
                return self.model.encode(
                    batch, prompt=prompt or None, batch_size=len(batch), convert_to_numpy=True, show_progress_bar=False
                )

            # batches by count/token budget, halved on out-of-memory
            out[rows] = self.run_batches([inputs[i][1] for i in rows], encode, batch_size=batch_size)
        return out


def model_revision(model_path: str) -> str:
    """Content revision of a local model (kept here for callers; see bench/adapters/identity.py)."""
    from bench.adapters.identity import model_revision as revision_of

    return revision_of(model_path)
