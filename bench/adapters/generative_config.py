"""The options of an InBedder-style readout (`bench/adapters/generative.py`), grouped by what they decide.

`GenerativeEncoder`'s keyword arguments stay its public options (what `--model-args` and `--model-config` give);
inside, they are held as four typed groups, each checked once where it is built:

    Readout      which hidden states become the vector: pooling, layer, readout formula, re-encoder
    Prompting    the model input: prompt pattern, architecture, input length, mask tokens
    Generation   how answers are generated (a TypedDict: the run record keeps it as `settings.generation`)
    TokenFilter  which generated tokens are dropped from the readout (and from a re-encoded answer)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict, get_args

from bench.adapters.cache import input_key
from bench.adapters.lm import ARCHITECTURES
from bench.core.errors import ConfigError

if TYPE_CHECKING:
    from bench.adapters.model_input import ModelInput

CHAT_INSTRUCTION = (
    "Your task is to give an answer according to the instruction and input. Please keep your answer short."
    "\n\nInput: {input}\n\nInstruction: {instruction}"
)
PATTERNS = {
    # InBedder's QA pattern (alpaca_train/train.py QA_PROMPT_DICT, every InBedder model config)
    "qa": "### Input:\n{input}\n\n### Instruction:\n{instruction}\n\n### Response:",
    # the *-alpaca baselines
    "alpaca": "### Instruction:\n{instruction}\n\n### Input:\n{input}\n\n### Response:",
    # the llama-2-chat baselines (configs/causallm_llama-2-*-chat-*.json)
    "llama2-chat": "[INST] " + CHAT_INSTRUCTION + "\n\n### Your Answer: [/INST]",
    # the same request through the tokenizer's own chat template (for other chat models, e.g. SmolLM2)
    "chat-template": CHAT_INSTRUCTION,
}
# Literals, so that the option parser checks the constructor's values (bench/adapters/options.py `spelled_out`).
Pooling = Literal["1st-gen", "avg-gen", "filtered-avg-gen", "last-gen", "avg-ppt", "avg-all", "re-encode"]
POOLINGS: tuple[Pooling, ...] = get_args(Pooling)
ReadoutFormula = Literal["code", "paper"]
SINGLE_PASS = ("1st-gen", "avg-ppt")
NOT_FOR = {"masked": ("1st-gen", "last-gen", "filtered-avg-gen"), "seq2seq": ("avg-all",), "causal": ()}
# InBedder's *-filter configs: the task instruction, these phrases, and NLTK's English stopwords
DEFAULT_FILTER_WORDS = ("Based on ", "Sure! ")
NLTK_ENGLISH_STOPWORDS = [
    "i",
    "me",
    "my",
    "myself",
    "we",
    "our",
    "ours",
    "ourselves",
    "you",
    "you're",
    "you've",
    "you'll",
    "you'd",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "he",
    "him",
    "his",
    "himself",
    "she",
    "she's",
    "her",
    "hers",
    "herself",
    "it",
    "it's",
    "its",
    "itself",
    "they",
    "them",
    "their",
    "theirs",
    "themselves",
    "what",
    "which",
    "who",
    "whom",
    "this",
    "that",
    "that'll",
    "these",
    "those",
    "am",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "have",
    "has",
    "had",
    "having",
    "do",
    "does",
    "did",
    "doing",
    "a",
    "an",
    "the",
    "and",
    "but",
    "if",
    "or",
    "because",
    "as",
    "until",
    "while",
    "of",
    "at",
    "by",
    "for",
    "with",
    "about",
    "against",
    "between",
    "into",
    "through",
    "during",
    "before",
    "after",
    "above",
    "below",
    "to",
    "from",
    "up",
    "down",
    "in",
    "out",
    "on",
    "off",
    "over",
    "under",
    "again",
    "further",
    "then",
    "once",
    "here",
    "there",
    "when",
    "where",
    "why",
    "how",
    "all",
    "any",
    "both",
    "each",
    "few",
    "more",
    "most",
    "other",
    "some",
    "such",
    "no",
    "nor",
    "not",
    "only",
    "own",
    "same",
    "so",
    "than",
    "too",
    "very",
    "s",
    "t",
    "can",
    "will",
    "just",
    "don",
    "don't",
    "should",
    "should've",
    "now",
    "d",
    "ll",
    "m",
    "o",
    "re",
    "ve",
    "y",
    "ain",
    "aren",
    "aren't",
    "couldn",
    "couldn't",
    "didn",
    "didn't",
    "doesn",
    "doesn't",
    "hadn",
    "hadn't",
    "hasn",
    "hasn't",
    "haven",
    "haven't",
    "isn",
    "isn't",
    "ma",
    "mightn",
    "mightn't",
    "mustn",
    "mustn't",
    "needn",
    "needn't",
    "shan",
    "shan't",
    "shouldn",
    "shouldn't",
    "wasn",
    "wasn't",
    "weren",
    "weren't",
    "won",
    "won't",
    "wouldn",
    "wouldn't",
]


GENERATION_OPTIONS = ("max_new_tokens", "do_sample", "temperature", "top_p", "seed", "num_samples")
FILTER_OPTIONS = ("filter_words", "filter_instruction", "filter_stopwords")


@dataclass(frozen=True)
class Readout:
    """Which hidden states become the vector."""

    pooling: str = "1st-gen"
    layer: int = -1
    formula: str = "code"  # `readout_formula`
    reencoder: str | None = None

    def __post_init__(self) -> None:
        if self.pooling not in POOLINGS:
            raise ConfigError(f"Unknown pooling '{self.pooling}'; choose one of {', '.join(POOLINGS)}.")
        if self.formula not in ("code", "paper"):
            raise ConfigError(
                f"readout_formula must be 'code' (InBedder's released code) or 'paper', got {self.formula!r}."
            )

    @property
    def single_pass(self) -> bool:
        return self.pooling in SINGLE_PASS

    def check_architecture(self, architecture: str) -> None:
        """Checked once the architecture is known (given, or read on loading): InBedder appendix C."""
        if self.pooling in NOT_FOR[architecture]:
            raise ConfigError(
                f"Pooling '{self.pooling}' does not exist for {architecture} models (InBedder appendix C); "
                f"choose one of {', '.join(p for p in POOLINGS if p not in NOT_FOR[architecture])}."
            )

    def inert_options(self, masked: bool) -> set[str]:
        """The options this readout does not use (`BaseEncoder.inert_options`)."""
        inert = set()
        if self.single_pass or self.pooling == "re-encode":
            inert.add("readout_formula")
        if self.single_pass:
            inert |= {*GENERATION_OPTIONS, *FILTER_OPTIONS, "reencoder"}
        if self.pooling != "re-encode":
            inert.add("reencoder")
        if not masked:
            inert.add("mask_length")
        return inert

    def reencoder_path(self) -> str:
        """The sentence-transformers model that embeds the answers (default the registry's all-MiniLM-L6-v2)."""
        if self.reencoder:
            return self.reencoder
        from bench.adapters.registry import MODELS

        return MODELS["all-MiniLM-L6-v2"].path()

    def reencoder_id(self) -> dict[str, str]:
        from bench.adapters.identity import model_revision

        path = self.reencoder_path()
        return {"model": Path(path).name if Path(path).exists() else path, "revision": model_revision(path)}


@dataclass(frozen=True)
class Prompting:
    """The model input: the prompt around each text, and how much of it the model sees."""

    pattern: str = "qa"
    architecture: str = "auto"  # the option as given; `auto` is read from the model config on loading
    max_input_length: int = 512
    mask_length: int = 3

    def __post_init__(self) -> None:
        if self.architecture not in ARCHITECTURES:
            raise ConfigError(f"Unknown architecture '{self.architecture}'; choose one of {', '.join(ARCHITECTURES)}.")
        if self.pattern not in PATTERNS and ("{input}" not in self.pattern or "{instruction}" not in self.pattern):
            raise ConfigError(
                f"Pattern {self.pattern!r} is neither one of {', '.join(PATTERNS)} nor a string with both "
                f"'{{input}}' and '{{instruction}}'."
            )

    @property
    def pattern_format(self) -> str:
        return PATTERNS.get(self.pattern, self.pattern)


class Generation(TypedDict):
    """How answers are generated; recorded as it is (`settings.generation`)."""

    max_new_tokens: int
    do_sample: bool
    temperature: float
    top_p: float
    seed: int
    num_samples: int  # 1 without do_sample


def generation(
    *, max_new_tokens: int, do_sample: bool, temperature: float, top_p: float, seed: int, num_samples: int
) -> Generation:
    if not (temperature > 0 and 0 < top_p <= 1):
        raise ConfigError(f"temperature must be > 0 and top_p in (0, 1]; got {temperature} and {top_p}.")
    return Generation(
        max_new_tokens=max_new_tokens,
        do_sample=bool(do_sample),
        temperature=temperature,
        top_p=top_p,
        seed=seed,
        num_samples=num_samples if do_sample else 1,
    )


def row_seed(seed: int, model_input: ModelInput, sample: int) -> int:
    """A row's own sampling seed, from the base `seed`, its exact input and the sample number: a sampled answer
    is the same alone or in any batch."""
    digest = hashlib.sha256(f"{seed}:{sample}:{input_key(model_input)}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


@dataclass(frozen=True)
class TokenFilter:
    """Generated tokens dropped from the readout: the row's instruction's (`instruction`), `words`', and with
    `stopwords` NLTK's English stopwords'. InBedder's `-filter` configs (pooling filtered-avg-gen) turn all
    three on, with `DEFAULT_FILTER_WORDS`."""

    words: tuple[str, ...] = ()
    instruction: bool = False
    stopwords: bool = False
    _ids: dict[str, set[int]] = field(default_factory=dict, compare=False, repr=False)  # per instruction

    @classmethod
    def for_pooling(
        cls,
        pooling: str,
        words: list[str] | tuple[str, ...] | str | None,
        instruction: bool | None,
        stopwords: bool | None,
    ) -> TokenFilter:
        """The options as given (None: the pooling's default; words from `--model-args` are `w1|w2`)."""
        filtered = pooling == "filtered-avg-gen"
        if isinstance(words, str):
            words = [w for w in words.split("|") if w]
        return cls(
            tuple(DEFAULT_FILTER_WORDS if words is None and filtered else words or ()),
            filtered if instruction is None else bool(instruction),
            filtered if stopwords is None else bool(stopwords),
        )

    @property
    def active(self) -> bool:
        return bool(self.words) or self.stopwords or self.instruction

    def ids(self, tokenizer: Any, model_input: ModelInput) -> set[int]:
        """Token ids of what is filtered for one rendered input (its instruction is its second part)."""
        instruction = model_input[1] if self.instruction and isinstance(model_input, list) else ""
        if instruction not in self._ids:
            words = list(self.words) + (list(NLTK_ENGLISH_STOPWORDS) if self.stopwords else [])
            words += [instruction] if instruction else []
            ids: set[int] = set()
            for word in words:  # tokenizer.encode, as InBedder (special tokens it adds are dropped anyway)
                ids.update(tokenizer.encode(word))
            self._ids[instruction] = ids
        return self._ids[instruction]
