"""INSTRUCTOR (Su et al., 2023): instruction and text encoded together, pooled over the text only.

What `InstructorEmbedding.INSTRUCTOR` does with an [instruction, text] pair, re-implemented on
sentence-transformers modules (no InstructorEmbedding package; its 1.0.x API no longer runs):
1. strip both (lower-case both if the model's `do_lower_case`), join them with NO separator, tokenize
   with `truncation="longest_first"` at `max_seq_length`;
2. tokenize the instruction alone; its attention-mask length minus one (the trailing </s>) is the
   number of leading positions excluded from pooling (`prepare_input_features`: `mask[:, 1:]`,
   left-aligned, inverted);
3. the encoder attends to every token, instruction included; the mean pooling (and any Dense /
   Normalize modules of the checkpoint) sees `attention_mask * instruction_mask`, i.e. the text tokens
   and the end token.

INSTRUCTOR pads every batch to `max_seq_length`; padded positions are masked in attention and in
pooling, so padding to the longest row gives the same vectors and is faster. `instruction_format`
places the task's instruction in the INSTRUCTOR pair (default: the instruction as it is; INSTRUCTOR's
own instructions read "Represent the ... for ...: ").

`pattern` is the other way the field fed INSTRUCTOR: ONE string, `{instruction}` and `{input}` filled in (InBedder's
INSTRUCTOR baseline, `configs/sentence-transformers_instructor-large.json`: `"pattern": "{instruction}: {input}"`,
passed to `INSTRUCTOR.encode` as a plain string). A plain string has no instruction part, so nothing is masked and the
pooling covers every token, instruction included; the input is the pair `["", string]`, and no position is masked. An instruction that already ends with the separator the pattern puts after it is not given a second one
(`'Represent the question for reranking: '` in `'{instruction}: {input}'` reads `'... for reranking: TEXT'`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bench.adapters.base import BaseEncoder
from bench.core.errors import ConfigError, ModelLoadError
from bench.core.fileio import sha256_text

if TYPE_CHECKING:
    import torch
    from mteb.types import PromptType

    from bench.adapters.model_input import ModelInput
    from bench.core.json_types import JSONObject


class InstructorEncoder(BaseEncoder):
    """An INSTRUCTOR-style model (any sentence-transformers checkpoint) with instruction-masked pooling."""

    family = "instructor"
    notes = "instruction_format: '<string with {instruction}>', e.g. 'Represent the {instruction}: '"

    def __init__(
        self,
        model_path: str,
        *,
        name: str | None = None,
        revision: str | None = None,
        instruction_format: str = "{instruction}",
        pattern: str | None = None,
        max_seq_length: int | None = None,
        **kwargs: Any,
    ) -> None:
        """An INSTRUCTOR-style encoder of `model_path` (see module docstring).

        Args:
            instruction_format: how the task's instruction is written into INSTRUCTOR's [instruction, text] pair
                (its tokens are attended to but not pooled).
            pattern: instead of the pair, one string with `{instruction}` and `{input}` (e.g. `{instruction}: {input}`,
                InBedder's INSTRUCTOR baseline): every token pooled, the instruction's included.
            max_seq_length: tokens kept of the joined instruction and text (longest-first truncation); default the
                checkpoint's `max_seq_length`, else the tokenizer's limit.
        """
        if "{instruction}" not in instruction_format:
            raise ConfigError(
                f"instruction_format {instruction_format!r} has no '{{instruction}}' placeholder; "
                f"e.g. 'Represent the sentence for {{instruction}}: '."
            )
        if pattern is not None and ("{input}" not in pattern or "{instruction}" not in pattern):
            raise ConfigError(
                f"pattern {pattern!r} needs both '{{instruction}}' and '{{input}}', e.g. '{{instruction}}: {{input}}'."
            )
        if pattern is not None and instruction_format != "{instruction}":
            raise ConfigError(
                "instruction_format and pattern both given: give instruction_format for INSTRUCTOR's "
                "[instruction, text] pair (instruction not pooled), or pattern for one string (every token pooled)."
            )
        self.model_path = model_path
        self.instruction_format = instruction_format
        self.pattern = pattern
        self.max_seq_length = max_seq_length
        self.model: Any = None
        super().__init__(name=name, revision=revision, source=model_path, **kwargs)

    def settings(self) -> JSONObject:
        return {**super().settings(), "instruction_format_sha256": sha256_text(self.instruction_format)}

    def _load(self) -> None:
        import torch
        from sentence_transformers import SentenceTransformer

        try:
            self.model = SentenceTransformer(
                self.model_path,
                device=self.device,
                revision=None if Path(self.model_path).exists() else self.revision,
                model_kwargs={"dtype": getattr(torch, self.dtype)},
            )
        except Exception as e:
            raise ModelLoadError(
                f"Could not load INSTRUCTOR model '{self.model_path}' ({type(e).__name__}: "
                f"{str(e).splitlines()[0][:200]}). Check the path or hub id; offline, use a local directory."
            ) from e
        if self.max_seq_length:
            self.model.max_seq_length = self.max_seq_length
        self.model.eval()
        self.update_model_facts(
            embed_dim=int(self.model.get_sentence_embedding_dimension()),
            n_parameters=sum(p.numel() for p in self.model.parameters()),
            max_tokens=self.model.max_seq_length,
        )

    @property
    def _transformer(self) -> Any:
        return self.model[0]

    @property
    def _seq_len(self) -> int:
        return int(self.model.max_seq_length or self._transformer.tokenizer.model_max_length)

    def render(self, text: str, instruction: str | None, prompt_type: PromptType | None) -> list[str]:
        """[instruction, text], as INSTRUCTOR takes them ("" when the row has no instruction); with `pattern`,
        ["", the one string] (nothing masked)."""
        if self.pattern is not None:
            return ["", joined_input(self.pattern, text, instruction) if instruction else text]
        return [self.instruction_format.replace("{instruction}", instruction) if instruction else "", text]

    def token_lengths(self, inputs: Sequence[ModelInput]) -> list[int]:
        joined, _ = self._pairs(inputs)
        ids = self._transformer.tokenizer(joined, truncation="longest_first", max_length=self._seq_len)["input_ids"]
        return [len(i) for i in ids]

    def _pairs(self, inputs: Sequence[ModelInput]) -> tuple[list[str], list[str]]:
        lower = bool(getattr(self._transformer, "do_lower_case", False))
        instructions, joined = [], []
        for model_input in inputs:  # [instruction, text]
            instruction, text = model_input[0].strip(), model_input[1].strip()
            if lower:
                instruction, text = instruction.lower(), text.lower()
            instructions.append(instruction)
            joined.append("".join([instruction, text]))
        return joined, instructions

    def features(self, inputs: list[ModelInput]) -> dict[str, torch.Tensor]:
        """Tokenized pairs with INSTRUCTOR's `instruction_mask` (1 on the positions that are pooled)."""
        import torch

        tokenizer = self._transformer.tokenizer
        joined, instructions = self._pairs(inputs)
        kwargs = {"padding": True, "truncation": "longest_first", "max_length": self._seq_len, "return_tensors": "pt"}
        features = dict(tokenizer(joined, **kwargs))
        if self.pattern is not None:  # one string, no instruction part: every token pooled (not even [CLS] masked)
            features["instruction_mask"] = torch.ones_like(features["attention_mask"])
            return features
        instruction_lengths = tokenizer(instructions, **kwargs)["attention_mask"][:, 1:].sum(1)
        positions = torch.arange(features["attention_mask"].shape[1]).unsqueeze(0)
        features["instruction_mask"] = (positions >= instruction_lengths.unsqueeze(1)).long()
        return features

    def _encode_group(self, inputs: list[ModelInput], batch_size: int) -> np.ndarray:
        return self.run_batches(inputs, self._encode_batch, batch_size=batch_size)

    def _encode_batch(self, inputs: list[ModelInput]) -> np.ndarray:
        import torch

        features = {k: v.to(self.device) for k, v in self.features(inputs).items()}
        model_inputs = {k: v for k, v in features.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
        with torch.inference_mode():
            output = self._transformer.auto_model(**model_inputs, return_dict=True)
            pooled = {
                "token_embeddings": output.last_hidden_state,
                "attention_mask": features["attention_mask"] * features["instruction_mask"],
            }
            for module in list(self.model)[1:]:  # Pooling, then the checkpoint's Dense / Normalize
                pooled = module(pooled)
        return pooled["sentence_embedding"].float().cpu().numpy()


def joined_input(pattern: str, text: str, instruction: str) -> str:
    """`pattern` filled in as InBedder's evaluation does (`{input}` first, then `{instruction}`), the instruction
    without a trailing copy of the separator the pattern writes after it (no `reranking: : TEXT`)."""
    after = pattern.split("{instruction}", 1)[1].split("{input}", 1)[0].strip()
    written = instruction.rstrip()
    if after and written.endswith(after):
        written = written[: -len(after)].rstrip()
    return pattern.replace("{input}", text).replace("{instruction}", written)
