"""InBedder-style readouts of generative LMs (Peng et al., 2024, §4.1 and appendix C).

The input is a prompt built from a pattern (QA by default, `### Input:\\n{input}\\n\\n### Instruction:...`),
and the embedding is read from the model's hidden states at one layer (`layer`, default last):

    1st-gen    state of the last prompt token (it predicts the first answer token); ONE forward pass
    avg-ppt    mean of the prompt states except the last; one forward pass
    avg-gen    mean of [last prompt state] + states of the generated tokens fed back
    last-gen   state of the last kept generated token
    avg-all    mean of all prompt states and kept generated states
    re-encode  generate, then embed the answer text with a sentence-transformers model
               (`reencoder`), averaged over `num_samples` sampled answers

Only the layer read out is kept (`LayerTap`), not every layer's hidden states at every generation step
(33 states of batch 32 x 512 tokens x 4096 in bf16: 4.4 GB); the vectors are the same.

A generated state is dropped when the token it predicts is special (EOS/pad) or, with filtering on, one
of the filter tokens (the row's instruction, `filter_words`, NLTK's English stopwords); pooling
`filtered-avg-gen` is avg-gen with the InBedder `-filter` configs' settings. As in InBedder's code, when
every generated state is dropped the first one is kept.

Architectures (appendix C): causal LMs (left padding, left truncation so the instruction survives);
masked LMs (`mask_length` mask tokens appended, the mask states are the "generation"; avg-gen, avg-ppt,
avg-all, re-encode); encoder-decoder LMs (avg-ppt from the encoder; 1st-gen is the decoder state at
the start token; avg-gen/last-gen from decoder states; no avg-all).

Where this follows InBedder's released code rather than the paper's formula (§4.1):
* avg-gen, last-gen and avg-all read N_g generated states for N_g generated tokens (the states that fed
  `generate`: the last prompt state and the first N_g - 1 tokens fed back, as InBedder's code does),
  where the paper's formula averages N_g + 1 (the last generated token's state too). Option
  `readout_formula=paper` adds that state with one extra forward step over the generation's key/value
  cache (causal LMs; it is kept unless the last token is special or filtered, like every other state).
* masked and encoder-decoder avg-ppt average the prompt states with the special tokens ([CLS], [SEP],
  </s>) included, as InBedder's code does; the paper's formula names prompt tokens only.

Sampling (`do_sample`) is reproducible and independent of batching: temperature and top-p use the
transformers warpers, then each row adds Gumbel noise from its own generator, seeded from `seed`, the
row's exact input and the sample number, and the token is the argmax (an exact draw from the warped
distribution). A row's answer is therefore the same alone or in any batch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from bench.adapters.device_budget import DeviceBatches
from bench.adapters.generative_config import (
    CHAT_INSTRUCTION,
    PATTERNS,
    POOLINGS,
    SINGLE_PASS,
    Generation,
    Pooling,
    Prompting,
    Readout,
    ReadoutFormula,
    TokenFilter,
    generation,
    row_seed,
)
from bench.adapters.lm import (
    Architecture,
    GGUFWeights,
    causal_position_ids,
    detect_architecture,
    layer_index,
    lm_facts,
    load_lm,
    load_tokenizer,
)
from bench.core.errors import ConfigError
from bench.core.fileio import sha256_text

if TYPE_CHECKING:
    from mteb.types import PromptType

    from bench.adapters.model_input import ModelInput
    from bench.core.json_types import JSONObject

__all__ = ["PATTERNS", "POOLINGS", "GenerativeEncoder", "LayerTap", "find_layers"]  # the options' values live in
# bench/adapters/generative_config.py

if TYPE_CHECKING:  # transformers loads with the model, not with the harness
    import torch
    from transformers import LogitsProcessor


class GenerativeEncoder(GGUFWeights, DeviceBatches):
    """A generative LM behind MTEB's encoder protocol, read out InBedder-style (see module docstring).

    On a CUDA GPU without `batch_size` or `max_tokens`, batches are sized for the device's free memory and
    the model (bench/adapters/device_budget.py); elsewhere 32 rows, as every family.
    """

    family = "inbedder"
    aliases = ("generative",)
    notes = (
        "pooling: 1st-gen|avg-gen|filtered-avg-gen|last-gen|avg-ppt|avg-all|re-encode; "
        "pattern: qa|alpaca|llama2-chat|chat-template|'<custom with {input} and {instruction}>'; "
        "layer: hidden-state index (-1 last); filter_words: 'w1|w2'"
    )
    cli_flags = {"pooling": "how an LLM-based family reads out the embedding, e.g. 1st-gen (see `bench list models`)"}

    def __init__(
        self,
        model_path: str,
        *,
        name: str | None = None,
        revision: str | None = None,
        pooling: Pooling = "1st-gen",
        layer: int = -1,
        pattern: str = "qa",
        architecture: Architecture = "auto",
        max_input_length: int = 512,
        max_new_tokens: int = 3,
        do_sample: bool = False,
        temperature: float = 1.0,
        top_p: float = 1.0,
        seed: int = 42,
        num_samples: int = 1,
        mask_length: int = 3,
        filter_words: list[str] | tuple[str, ...] | None = None,
        filter_instruction: bool | None = None,
        filter_stopwords: bool | None = None,
        reencoder: str | None = None,
        readout_formula: ReadoutFormula = "code",
        **kwargs: Any,
    ) -> None:
        """An InBedder-style readout of `model_path` (see module docstring).

        Args:
            pattern: the prompt around each text: `qa` (InBedder's QA prompt, input first), `alpaca` (instruction
                first: the *-alpaca baselines), `llama2-chat` (`[INST]` request: the llama-2-chat baselines),
                `chat-template` (that request through the tokenizer's chat template, for other chat models), or a
                custom string with `{input}` and `{instruction}`.
            architecture: `auto` reads the model config (encoder-decoder: seq2seq; `*MaskedLM`: masked; else
                causal); set causal, masked or seq2seq to override; it decides padding, truncation and the poolings.
            max_input_length: prompt tokens kept; longer prompts are cut from the left for causal and masked LMs
                (the instruction at the end survives), from the right for seq2seq.
            max_new_tokens: tokens generated per answer for the generation readouts (avg-gen, filtered-avg-gen,
                last-gen, avg-all, re-encode); unused by 1st-gen and avg-ppt and by masked LMs (`mask_length`).
            do_sample: sample the answer (with `temperature`, `top_p`, `seed`) instead of greedy decoding;
                reproducible per row whatever the batch; `num_samples` > 1 needs it.
            temperature: sampling temperature, with `do_sample` only (greedy decoding ignores it).
            top_p: nucleus-sampling probability mass, with `do_sample` only (1.0 keeps every token).
            seed: base of each row's sampling seed (mixed with the row's input and the sample number), so a
                sampled answer is the same alone or in any batch.
            num_samples: answers sampled per text and averaged by `re-encode` (1 without `do_sample`).
            mask_length: mask tokens appended after the prompt of a masked LM (their states are its
                "generation"); ignored by other architectures.
            filter_words: words whose tokens, when generated, are dropped from the readout (and from a re-encoded
                answer); default `Based on ` and `Sure! ` for filtered-avg-gen, else none.
            filter_instruction: also drop generated tokens of the row's instruction; default on for
                filtered-avg-gen, else off.
            filter_stopwords: also drop generated tokens of NLTK's English stopwords; default on for
                filtered-avg-gen, else off.
            reencoder: sentence-transformers model that embeds the generated answers for `re-encode` (default
                the registry's all-MiniLM-L6-v2).
            readout_formula: `code` (InBedder's released code: N_g generated states) or `paper` (§4.1: N_g + 1,
                one more forward step; causal LMs only); for avg-gen, filtered-avg-gen, last-gen and avg-all.
        """
        self.model_path = model_path
        self.readout = Readout(pooling, int(layer), readout_formula, reencoder)
        self.prompting = Prompting(pattern, architecture, max_input_length, mask_length)
        if max_new_tokens < 1 or num_samples < 1 or mask_length < 1 or max_input_length < 1:
            raise ConfigError("max_new_tokens, num_samples, mask_length and max_input_length must be at least 1.")
        self.generation: Generation = generation(
            max_new_tokens=max_new_tokens,
            do_sample=do_sample,
            temperature=temperature,
            top_p=top_p,
            seed=seed,
            num_samples=num_samples,
        )
        self.token_filter = TokenFilter.for_pooling(pooling, filter_words, filter_instruction, filter_stopwords)
        self.model: Any = None
        self.tokenizer: Any = None
        self.architecture: str | None = None if architecture == "auto" else architecture
        self._reencoder: Any = None
        super().__init__(name=name, revision=revision, source=model_path, **kwargs)
        if self.architecture is not None:  # else checked once it is read, on loading
            self.readout.check_architecture(self.architecture)

    # ------------------------------------------------------------------ settings
    @property
    def pooling(self) -> str:
        return self.readout.pooling

    @property
    def max_input_length(self) -> int:
        return self.prompting.max_input_length

    @property
    def mask_length(self) -> int:
        return self.prompting.mask_length

    @property
    def filter_words(self) -> list[str]:
        return list(self.token_filter.words)

    @property
    def filter_stopwords(self) -> bool:
        return self.token_filter.stopwords

    @property
    def pattern_format(self) -> str:
        return self.prompting.pattern_format

    def settings(self) -> JSONObject:
        return {
            **super().settings(),
            "pattern_format": self.pattern_format,
            "pattern_sha256": sha256_text(self.pattern_format),
            "generation": cast("JSONObject", dict(self.generation)),  # ints, floats and bools
        }

    def inert_options(self) -> set[str]:
        return self.readout.inert_options(masked="masked" in (self.architecture, self.prompting.architecture))

    def identity_extras(self) -> JSONObject:
        # The prompt pattern's text (a built-in pattern may be reworded) and the re-encoder's weights.
        out: JSONObject = {"pattern_format": self.pattern_format}
        if self.pooling == "re-encode":
            out["reencoder"] = {**self.readout.reencoder_id()}
        return out

    # ------------------------------------------------------------------ model
    def _load(self) -> None:
        if self.architecture is None:
            self.architecture = detect_architecture(self.model_path, self.revision)
            self.readout.check_architecture(self.architecture)
        padding, truncation = {"causal": ("left", "left"), "masked": ("right", "left"), "seq2seq": ("right", "right")}[
            self.architecture
        ]
        self.tokenizer = load_tokenizer(
            self.model_path, revision=self.revision, padding_side=padding, truncation_side=truncation
        )
        if self.architecture == "masked" and self.tokenizer.mask_token is None:
            raise ConfigError(f"{self.model_path} has no mask token, so it cannot be read out as a masked LM.")
        self.model = load_lm(
            self.model_path,
            architecture=self.architecture,
            revision=self.revision,
            dtype=self.dtype,
            device=self.device,
            on_gguf_cache=self.note_gguf_cache,
        )
        if self.pooling == "re-encode":
            from sentence_transformers import SentenceTransformer

            self._reencoder = SentenceTransformer(self.readout.reencoder_path(), device=self.device)
        facts = lm_facts(self.model)
        if self._reencoder is not None:  # re-encode: the vectors are the re-encoder's
            facts["embed_dim"] = self._reencoder.get_sentence_embedding_dimension()
        self.update_model_facts(**facts)

    def render(self, text: str, instruction: str | None, prompt_type: PromptType | None) -> ModelInput:
        """The prompt; with instruction filtering, [prompt, instruction] (the filter depends on it)."""
        if self.prompting.pattern == "chat-template":
            self.ensure_loaded()
            message = CHAT_INSTRUCTION.replace("{input}", text).replace("{instruction}", instruction or "")
            prompt = self.tokenizer.apply_chat_template(
                [{"role": "user", "content": message}], tokenize=False, add_generation_prompt=True
            )
        else:  # str.replace, as InBedder inserts (braces in the text stay as they are)
            prompt = self.pattern_format.replace("{input}", text).replace("{instruction}", instruction or "")
        return [prompt, instruction or ""] if self.token_filter.instruction else prompt

    def budget_generates(self) -> bool:
        """Whether a batch keeps a key/value cache (a generation): not for one pass nor for a masked LM."""
        return self.pooling not in SINGLE_PASS and self.architecture != "masked"

    def budget_length(self) -> int:
        return self.max_input_length + (self.mask_length if self.architecture == "masked" else 0)

    def token_lengths(self, inputs: Sequence[ModelInput]) -> list[int]:
        prompts = [_prompt(x) for x in inputs]
        ids = self.tokenizer(prompts, truncation=True, max_length=self.max_input_length)["input_ids"]
        return [len(i) + (self.mask_length if self.architecture == "masked" else 0) for i in ids]

    def _encode_group(self, inputs: list[ModelInput], batch_size: int) -> np.ndarray:
        return self.run_batches(inputs, self._encode_batch, batch_size=batch_size)

    def _encode_batch(self, inputs: list[ModelInput]) -> np.ndarray:
        import torch

        with torch.inference_mode():
            if self.architecture == "masked":
                return self._masked(inputs)
            if self.pooling in SINGLE_PASS:
                return self._single_pass(inputs)
            if self.pooling == "re-encode":
                return self._reencode(inputs)
            return self._generation_readout(inputs)

    # ------------------------------------------------------------------ readouts
    def _tokenize(self, prompts: list[str]) -> Any:
        enc = self.tokenizer(
            prompts,
            padding=True,
            truncation=True,
            max_length=self.max_input_length,
            return_tensors="pt",
            return_token_type_ids=False,  # LM heads take none (generate refuses them); BERT's are all 0
        )
        return enc.to(self.device)

    def _tap(self, stack: torch.nn.Module) -> LayerTap:
        """The hidden state at `layer` of `stack` (the base model, or a seq2seq model's encoder or decoder)."""
        return LayerTap(stack, lambda n_states: layer_index(self.readout.layer, n_states))

    def _single_pass(self, inputs: list[ModelInput]) -> np.ndarray:
        """1st-gen / avg-ppt from one forward pass (causal: prompt states; seq2seq: decoder start state)."""
        import torch

        enc = self._tokenize([_prompt(x) for x in inputs])
        if self.architecture == "seq2seq":
            if self.pooling == "avg-ppt":
                encoder = self.model.get_encoder()
                with self._tap(encoder).capture() as states:
                    encoder(**enc)
                return _masked_mean(states[0], enc["attention_mask"]).float().cpu().numpy()
            start = torch.full((len(inputs), 1), self.model.config.decoder_start_token_id, device=self.device)
            with self._tap(self.model.get_decoder()).capture() as states:
                self.model(**enc, decoder_input_ids=start)
            return states[0][:, 0].float().cpu().numpy()
        with self._tap(self.model.base_model).capture() as states:
            self.model.base_model(  # no LM head: its B x T x vocab logits go unused
                **enc, position_ids=causal_position_ids(enc["attention_mask"])
            )
        hidden = states[0]
        if self.pooling == "1st-gen":  # left padding: the last position is the last prompt token
            return hidden[:, -1].float().cpu().numpy()
        mask = enc["attention_mask"].clone()
        mask[:, -1] = 0  # avg-ppt leaves out the last prompt token (InBedder: prompt[:-1].mean)
        return _masked_mean(hidden, mask).float().cpu().numpy()

    def _generate(
        self, inputs: list[ModelInput], sample: int = 0, tap: LayerTap | None = None
    ) -> tuple[Any, Any, list[torch.Tensor]]:
        """(tokenized prompts, generate output, `tap`'s state of each forward step: the prompt's, then one per
        token fed back) for one sample number; without `tap`, no states."""
        from transformers import LogitsProcessorList

        enc = self._tokenize([_prompt(x) for x in inputs])
        processors = LogitsProcessorList()
        if self.generation["do_sample"]:
            seeds = [row_seed(self.generation["seed"], x, sample) for x in inputs]
            processors.append(_SeededSampler(seeds, self.generation["temperature"], self.generation["top_p"]))
        capture: AbstractContextManager[list[torch.Tensor]] = tap.capture() if tap is not None else nullcontext([])
        with capture as steps:
            out = self.model.generate(
                **enc,
                max_new_tokens=self.generation["max_new_tokens"],
                do_sample=False,  # sampling happens in _SeededSampler, per row
                num_beams=1,
                logits_processor=processors,
                pad_token_id=self.tokenizer.pad_token_id,
                return_dict_in_generate=True,
                temperature=None,
                top_p=None,
                top_k=None,
            )
        return enc, out, steps

    def _generation_readout(self, inputs: list[ModelInput]) -> np.ndarray:
        import torch

        tap = self._tap(self.model.get_decoder() if self.architecture == "seq2seq" else self.model.base_model)
        enc, out, steps = self._generate(inputs, tap=tap)
        prompt_len = enc["input_ids"].shape[1]
        if self.architecture == "seq2seq":
            gen = torch.cat(steps, dim=1)  # step 0: the start token; its state predicts sequences[:, 1]
            next_ids = out.sequences[:, 1 : 1 + gen.shape[1]]
            prompt_states = None
        else:  # step 0: the prompt; step t: generated token t fed back
            prompt_states = steps[0]
            gen = torch.cat(steps[1:], dim=1) if len(steps) > 1 else prompt_states[:, :0]
            next_ids = out.sequences[:, prompt_len + 1 : prompt_len + 1 + gen.shape[1]]
        keep = ~self._dropped(next_ids, inputs)
        if self.readout.formula == "paper":
            gen, keep = self._with_last_generated_state(enc, out, tap, gen, keep, inputs)
        rows = []
        for b in range(len(inputs)):
            kept = gen[b][keep[b]]
            if kept.shape[0] == 0:  # InBedder: "if all of them are special token", keep the first
                kept = gen[b][:1]
            if prompt_states is None:  # seq2seq: decoder states only
                chosen = {"avg-gen": kept.mean(0), "filtered-avg-gen": kept.mean(0), "last-gen": kept[-1]}
            else:
                prompt = prompt_states[b][enc["attention_mask"][b].bool()]
                chosen = {
                    "avg-gen": torch.cat([prompt[-1:], kept]).mean(0),
                    "filtered-avg-gen": torch.cat([prompt[-1:], kept]).mean(0),
                    "last-gen": (kept if kept.shape[0] else prompt[-1:])[-1],
                    "avg-all": torch.cat([prompt, kept]).mean(0),
                }
            rows.append(chosen[self.pooling].float())
        return torch.stack(rows).cpu().numpy()

    def _with_last_generated_state(
        self, enc: Any, out: Any, tap: LayerTap, gen: torch.Tensor, keep: torch.Tensor, inputs: list[ModelInput]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The paper's N_g + 1 states: one more forward step feeds the last generated token over the
        generation's key/value cache; its state is kept unless that token is special or filtered."""
        import torch

        if self.architecture != "causal":
            raise ConfigError("readout_formula=paper is implemented for causal LMs; use the default 'code' here.")
        last = out.sequences[:, -1:]
        mask = torch.cat([enc["attention_mask"], torch.ones_like(out.sequences[:, enc["input_ids"].shape[1] :])], dim=1)
        with tap.capture() as states:
            self.model(
                input_ids=last,
                attention_mask=mask,
                position_ids=causal_position_ids(mask)[:, -1:],
                past_key_values=out.past_key_values,
                use_cache=True,
            )
        state = states[0][:, -1:]
        last_ok = ~self._dropped(last, inputs)
        return torch.cat([gen, state.to(gen.dtype)], dim=1), torch.cat([keep, last_ok], dim=1)

    def _dropped(self, next_ids: torch.Tensor, inputs: list[ModelInput]) -> torch.Tensor:
        """True where a generated state is dropped: its next token is special or filtered."""
        import torch

        banned = [set(self.tokenizer.all_special_ids) | self.token_filter.ids(self.tokenizer, x) for x in inputs]
        return torch.tensor(
            [[int(t) in banned[b] for t in row.tolist()] for b, row in enumerate(next_ids)],
            dtype=torch.bool,
            device=next_ids.device,
        ).reshape(next_ids.shape)

    def _answers(self, inputs: list[ModelInput], sample: int) -> list[str]:
        enc, out, _ = self._generate(inputs, sample)
        start = 1 if self.architecture == "seq2seq" else enc["input_ids"].shape[1]
        answers = []
        for b, row in enumerate(out.sequences[:, start:].tolist()):
            banned = self.token_filter.ids(self.tokenizer, inputs[b]) if self.token_filter.active else set()
            answers.append(self.tokenizer.decode([t for t in row if t not in banned], skip_special_tokens=True))
        return answers

    def generations(self, inputs: list[ModelInput], sample: int = 0) -> list[str]:
        """The answers the model gives to rendered inputs (for inspection and tests)."""
        import torch

        self.ensure_loaded()
        with torch.inference_mode():
            return self._answers(inputs, sample)

    def _reencode(self, inputs: list[ModelInput]) -> np.ndarray:
        total: np.ndarray | None = None
        for sample in range(self.generation["num_samples"]):
            answers = self._answers(inputs, sample)
            emb = self._reencoder.encode(
                answers, convert_to_numpy=True, show_progress_bar=False, batch_size=len(answers)
            )
            total = emb if total is None else total + emb
        assert total is not None  # num_samples >= 1 (checked in __init__)
        return total / self.generation["num_samples"]

    def _masked(self, inputs: list[ModelInput]) -> np.ndarray:
        """Masked LM: `mask_length` mask tokens after the prompt; one forward pass (InBedder MaskededLMEncoder)."""

        tok = self.tokenizer
        prompts = [_prompt(x) + tok.mask_token * self.mask_length for x in inputs]
        enc = self._tokenize(prompts)
        with self._tap(self.model.base_model).capture() as states:
            out = self.model(**enc)
        hidden = states[0]
        ids = enc["input_ids"]
        is_mask = ids == tok.mask_token_id
        if self.pooling == "re-encode":
            best = out.logits.argmax(-1)
            answers = [tok.decode(best[b][is_mask[b]].tolist(), skip_special_tokens=True) for b in range(len(inputs))]
            return self._reencoder.encode(answers, convert_to_numpy=True, show_progress_bar=False)
        not_pad = enc["attention_mask"].bool()
        end_id = tok.eos_token_id if tok.eos_token_id is not None else tok.sep_token_id
        masks = {
            "avg-gen": is_mask,
            "filtered-avg-gen": is_mask,
            "avg-ppt": not_pad & ~is_mask & (ids != end_id),
            "avg-all": not_pad,
        }
        return _masked_mean(hidden, masks[self.pooling]).float().cpu().numpy()


def _prompt(model_input: ModelInput) -> str:
    return model_input[0] if isinstance(model_input, list) else model_input


def _masked_mean(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * weights).sum(1) / weights.sum(1).clamp(min=1)


class LayerTap:
    """One hidden state of a transformer stack per forward call: what `output_hidden_states=True` gives at
    one index, without the model keeping every layer's (at every generation step: GBs at batch 32 x 512).

    In Hugging Face's hidden states, [0] is the embedding output (the first layer's input), [i] the output
    of layer i - 1, and the last one the stack's `last_hidden_state` (its final norm applied). So the last
    index is read from the stack's output, index 0 from the first layer's input and any other from the
    output of layer i - 1. A stack whose layer list is not found is asked for all its hidden states, one
    forward call at a time, and one of them is kept.

    `index_for(n_states)` picks the index (n_states = layers + 1, as `len(hidden_states)`); `capture()`
    collects the state of each forward call of the stack made inside it (a generation: one per step).
    """

    def __init__(self, stack: torch.nn.Module, index_for: Callable[[int], int]) -> None:
        self.stack = stack
        self.index_for = index_for
        self.layers = find_layers(stack)
        self.index = None if self.layers is None else index_for(len(self.layers) + 1)

    @contextmanager
    def capture(self) -> Iterator[list[torch.Tensor]]:
        states: list[torch.Tensor] = []
        if self.layers is None:  # every hidden state, one call at a time: keep the one asked for
            handles = [
                self.stack.register_forward_pre_hook(
                    lambda module, args, kwargs: (args, {**kwargs, "output_hidden_states": True}), with_kwargs=True
                ),
                self.stack.register_forward_hook(
                    lambda module, args, out: states.append(out.hidden_states[self.index_for(len(out.hidden_states))])
                ),
            ]
        elif self.index == len(self.layers):  # the last: the stack's output, final norm applied
            handles = [self.stack.register_forward_hook(lambda module, args, out: states.append(_state(out)))]
        elif self.index == 0:  # the embedding output: what the first layer is given
            handles = [
                self.layers[0].register_forward_pre_hook(
                    lambda module, args, kwargs: states.append(args[0] if args else kwargs["hidden_states"]),
                    with_kwargs=True,
                )
            ]
        else:
            assert self.index is not None  # set whenever the layers are found
            handles = [
                self.layers[self.index - 1].register_forward_hook(lambda module, args, out: states.append(_state(out)))
            ]
        try:
            yield states
        finally:
            for handle in handles:
                handle.remove()


def find_layers(stack: torch.nn.Module) -> torch.nn.ModuleList | None:
    """The stack's list of transformer layers (`layers`, `h`, `block`, `encoder.layer`, ...): its first
    ModuleList, if that holds one kind of module and as many as the config names layers; else None."""
    import torch

    config = getattr(stack, "config", None)
    counts = {
        getattr(config, key, None)
        for key in (
            "num_hidden_layers",
            "num_layers",
            "n_layer",
            "num_decoder_layers",
            "encoder_layers",
            "decoder_layers",
        )
    }
    for _, module in stack.named_modules():
        if isinstance(module, torch.nn.ModuleList):
            kinds = {type(m) for m in module}
            return module if len(module) in counts and len(kinds) == 1 else None
    return None


def _state(output: Any) -> Any:
    """The hidden states in a layer's or stack's output (a tensor, a tuple led by it, or a ModelOutput)."""
    if hasattr(output, "last_hidden_state"):
        return output.last_hidden_state
    return output[0] if isinstance(output, tuple | list) else output


class _SeededSampler:
    """Logits processor: temperature and top-p (transformers' warpers), then per-row Gumbel noise.

    With greedy decoding after it, each row's token is an exact sample from its warped distribution,
    drawn from the row's own generator, so batching does not change the draw.
    """

    def __init__(self, seeds: list[int], temperature: float, top_p: float) -> None:
        from transformers import TemperatureLogitsWarper, TopPLogitsWarper

        self.seeds = seeds
        self.generators: list[torch.Generator] | None = None
        self.warpers: list[LogitsProcessor] = []
        if temperature != 1.0:
            self.warpers.append(TemperatureLogitsWarper(temperature))
        if top_p < 1.0:
            self.warpers.append(TopPLogitsWarper(top_p))

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        if self.generators is None:
            self.generators = [torch.Generator(device="cpu").manual_seed(s) for s in self.seeds]
        scores = scores.float()
        for warper in self.warpers:
            scores = warper(input_ids, scores)
        uniform = torch.stack(
            [torch.rand(scores.shape[-1], generator=g, dtype=torch.float64) for g in self.generators]
        ).to(scores.device)
        gumbel = -torch.log(-torch.log(uniform.clamp(min=1e-300)))
        return scores + gumbel.to(scores.dtype)
