"""PromptEOL and MetaEOL (Lei et al., 2024): a causal LM's last-token state under "in one word" prompts.

    PromptEOL  This sentence : "*sent 0*" means in one word:"
    MetaEOL    the eight meta-task prompts (text classification, sentiment, paraphrase, information
               extraction; two each), one forward pass each, embeddings averaged

Exactly as the MetaEOL code (evaluation.py `batcher`): the sentence is cleaned (a final period added
unless it ends in . ? " or ', double quotes become single quotes, a final ? becomes .), put into the
prompt with `str.replace`, the prompt stripped, tokenized with left padding and no truncation, and
the state of the last token at the chosen layer read out (no normalisation). The code reads the last
layer; `layer="proportional"` is the paper's rule (§5.5, Table 7: -3 of 32, -4 of 40, -8 of 80 layers,
i.e. 10% from the top, rounded). Prompts hold no instruction: an instruction-blind baseline unless
`instruction_template` (say "{instruction}\\n") is given, which is put before each prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from bench.adapters.device_budget import DeviceBatches
from bench.adapters.generative import LayerTap
from bench.adapters.lm import (
    GGUFWeights,
    causal_position_ids,
    layer_index,
    lm_facts,
    load_lm,
    load_tokenizer,
)
from bench.core.errors import ConfigError
from bench.core.fileio import sha256_json

if TYPE_CHECKING:
    from mteb.types import PromptType

    from bench.adapters.model_input import ModelInput
    from bench.core.json_types import JSONObject

PROMPTEOL = ['This sentence : "*sent 0*" means in one word:"']
METAEOL = [
    "In this task, you're presented with a text excerpt. Your task is to categorize the excerpt into a broad category such as 'Education', 'Technology', 'Health', 'Business', 'Environment', 'Politics', or 'Culture'. These categories help in organizing content for better accessibility and targeting. For this task, this sentence : \"*sent 0*\" should be classified under one general category in one word:\"",
    "In this task, you're given a statement and you need to determine whether it's presenting an 'Opinion' or a 'Fact'. This distinction is vital for information verification, educational purposes, and content analysis. For this task, this sentence : \"*sent 0*\" discriminates between opinion and fact in one word:\"",
    "In this task, you're given a review from an online platform. Your task is to generate a rating for the product based on the review on a scale of 1-5, where 1 means 'extremely negative' and 5 means 'extremely positive'. For this task, this sentence : \"*sent 0*\" reflects the sentiment in one word:\"",
    'In this task, you\'re reading a personal diary entry. Your task is to identify the predominant emotion expressed, such as joy, sadness, anger, fear, or love. For this task, this sentence : "*sent 0*" conveys the emotion in one word:"',
    "In this task, you're presented with two sentences. Your task is to assess whether the sentences convey the same meaning. Use 'identical', 'similar', 'different', or 'unrelated' to describe the relationship. To enhance the performance of this task, this sentence : \"*sent 0*\" means in one word:\"",
    "In this task, you're given a sentence and a phrase. Your task is to determine if the phrase can be a contextual synonym within the given sentence. Options include 'yes', 'no', or 'partially'. To enhance the performance of this task, this sentence : \"*sent 0*\" means in one word:\"",
    'In this task, you\'re examining a news article. Your task is to extract the most critical fact from the article. For this task, this sentence : "*sent 0*" encapsulates the key fact in one word:"',
    'In this task, you\'re reviewing a scientific abstract. Your task is to identify the main entities (e.g., proteins, diseases) and their relations (e.g., causes, treats). For this task, this sentence : "*sent 0*" highlights the primary entity or relation in one word:"',
]
PROMPT_SETS = {"prompteol": PROMPTEOL, "metaeol": METAEOL}
SLOT = "*sent 0*"


def clean_sentence(s: str) -> str:
    """MetaEOL's clean-up, in its order: end with a period, " -> ', final ? -> ."""
    if len(s) > 0 and s[-1] not in ".?\"'":
        s += "."
    s = s.replace('"', "'")
    if len(s) > 0 and s[-1] == "?":
        s = s[:-1] + "."
    return s


def proportional_layer(num_layers: int) -> int:
    """MetaEOL §5.5: the layer about 10% from the top (-3 of 32, -4 of 40, -8 of 80), as a negative index."""
    return -max(1, round(num_layers / 10))


class PromptEOLEncoder(GGUFWeights, DeviceBatches):
    """Last-token states of a causal LM under PromptEOL/MetaEOL prompts (see module docstring)."""

    family = "prompteol"
    notes = "layer: last|proportional|<index>; prompts: prompteol|metaeol"
    instruction_template: str | None  # a string only (MTEB's wrappers also take a function)

    def __init__(
        self,
        model_path: str,
        *,
        name: str | None = None,
        revision: str | None = None,
        prompts: str | list[str] = "prompteol",
        layer: int | str = "last",
        clean_input: bool = True,
        instruction_template: str | None = None,
        max_input_length: int | None = None,
        **kwargs: Any,
    ) -> None:
        """Last-token states of the causal LM `model_path` under a set of prompts (see module docstring).

        Args:
            prompts: the prompt set: `prompteol` (one "in one word" prompt), `metaeol` (the eight meta-task prompts,
                averaged) or a list of prompts, each with the sentence slot `*sent 0*`.
            layer: the hidden state read at the last token: `last` (MetaEOL's code), `proportional` (the paper's
                §5.5 rule, about 10% of the layers from the top) or an index (0 = embeddings, negative from the end).
            clean_input: MetaEOL's clean-up of each text (a final period added, double quotes made single, a final
                ? made .); False puts the text in as given.
            instruction_template: a string with `{instruction}` put before each prompt, so the task's instruction
                reaches the model (default none: the instruction-blind baseline).
            max_input_length: tokens kept per prompt, cut from the left (default: no truncation, as in MetaEOL's
                code); lower it when long texts run out of memory.
        """
        if isinstance(prompts, str):
            if prompts not in PROMPT_SETS:
                raise ConfigError(
                    f"Unknown prompt set '{prompts}'; choose prompteol, metaeol or give a list of prompts."
                )
            prompt_list = PROMPT_SETS[prompts]
        else:
            prompt_list = list(prompts)
        bad = [p for p in prompt_list if SLOT not in p]
        if not prompt_list or bad:
            raise ConfigError(f"Every prompt needs the sentence slot '{SLOT}'; these have none: {bad[:2]}.")
        if not (layer in ("last", "proportional") or isinstance(layer, int)):
            raise ConfigError(f"layer must be 'last', 'proportional' or an integer index, got {layer!r}.")
        if instruction_template is not None and "{instruction}" not in instruction_template:
            raise ConfigError("instruction_template needs an '{instruction}' placeholder, e.g. '{instruction}\\n'.")
        self.model_path = model_path
        self.prompt_set = prompts if isinstance(prompts, str) else "custom"
        self.prompts = prompt_list
        self.layer = layer
        self.clean_input = clean_input
        self.instruction_template = instruction_template
        self.max_input_length = max_input_length
        self.model: Any = None
        self.tokenizer: Any = None
        super().__init__(name=name, revision=revision, source=model_path, **kwargs)

    def settings(self) -> JSONObject:
        return {
            **super().settings(),
            "prompt_set": self.prompt_set,
            "prompt_list": [*self.prompts],
            "prompts_sha256": sha256_json(self.prompts),
        }

    def _load(self) -> None:
        self.tokenizer = load_tokenizer(
            self.model_path, revision=self.revision, padding_side="left", truncation_side="left"
        )
        self.model = load_lm(
            self.model_path,
            architecture="causal",
            revision=self.revision,
            dtype=self.dtype,
            device=self.device,
            on_gguf_cache=self.note_gguf_cache,
        )
        self.update_model_facts(**lm_facts(self.model))  # vectors are hidden states: hidden size

    def resolved_layer(self, n_states: int) -> int:
        """Index into hidden_states (n_states = layers + 1)."""
        if self.layer == "last":
            return n_states - 1
        if self.layer == "proportional":
            return layer_index(proportional_layer(n_states - 1), n_states)
        return layer_index(int(self.layer), n_states)

    def render(self, text: str, instruction: str | None, prompt_type: PromptType | None) -> list[str]:
        """The model inputs for one text: one prompt per meta-task (the cache key holds all of them)."""
        sentence = clean_sentence(text) if self.clean_input else text
        template = self.instruction_template
        prefix = template.replace("{instruction}", instruction) if template and instruction else ""
        return [prefix + p.replace(SLOT, sentence).strip() for p in self.prompts]

    def input_length(self, model_input: ModelInput) -> int:  # type: ignore[override]
        return sum(len(p) for p in model_input)

    def _encode_group(self, inputs: list[ModelInput], batch_size: int) -> np.ndarray:
        flat = [p for prompts in inputs for p in prompts]
        ids = self.tokenizer(flat, truncation=self.max_input_length is not None, max_length=self.max_input_length)
        lengths = [len(i) for i in ids["input_ids"]]
        order = sorted(range(len(flat)), key=lambda i: -lengths[i])  # length-sorted across all prompts
        vectors = self.run_batches(
            [flat[i] for i in order], self._last_token, batch_size=batch_size, lengths=[lengths[i] for i in order]
        )
        unsorted = np.empty_like(vectors)
        unsorted[order] = vectors
        return unsorted.reshape(len(inputs), len(self.prompts), -1).mean(axis=1)

    def _last_token(self, prompts: list[str]) -> np.ndarray:
        import torch

        enc = self.tokenizer(
            prompts,
            padding=True,
            truncation=self.max_input_length is not None,
            max_length=self.max_input_length,
            return_tensors="pt",
            return_token_type_ids=False,
        ).to(self.device)
        tap = LayerTap(self.model.base_model, self.resolved_layer)  # that layer's states only, not every layer's
        with torch.inference_mode(), tap.capture() as states:
            self.model.base_model(  # hidden states only; the LM head is not needed
                **enc, position_ids=causal_position_ids(enc["attention_mask"])
            )
        return states[0][:, -1].float().cpu().numpy()


class MetaEOLEncoder(PromptEOLEncoder):
    """MetaEOL: the mean of last-token states under the eight meta-task prompts (Lei et al., 2024)."""

    family = "metaeol"
    notes = "layer: last|proportional|<index>; the eight MetaEOL meta-task prompts, averaged"

    def __init__(self, model_path: str, *, prompts: str | list[str] = "metaeol", **kwargs: Any) -> None:
        super().__init__(model_path, prompts=prompts, **kwargs)
