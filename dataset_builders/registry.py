"""Names `bench build-data NAME` accepts, and the function each one calls.

A builder is `fn(*, source_dir: Path, out_dir: Path, seed: int, size: int | None, **llm) -> dict` and returns
its manifest (which it has also written next to the data). Label-derived builders are deterministic
functions of the raw files and the seed; LLM builders also receive the options in `LLM_OPTIONS`.
Targets are "module:function" strings so that listing builders imports nothing heavy.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.errors import UnknownNameError


@dataclass(frozen=True)
class Builder:
    target: str
    description: str
    uses_llm: bool = False

    def function(self) -> Callable[..., dict[str, Any]]:
        module, name = self.target.split(":")
        return getattr(importlib.import_module(module), name)


# Deterministic builders from labelled public data (issue: full suites).
LABEL_BUILDERS: dict[str, Builder] = {
    "intent-emotion-proxy": Builder(
        "dataset_builders.label_derived:build_intent_emotion_proxy",
        "IntentEmotion-schema triplets from BANKING77 intents and GoEmotions emotions (proxy, not the GPT-4 set)",
    ),
    "instruct-stsb-proxy": Builder(
        "dataset_builders.label_derived:build_instruct_stsb_proxy",
        "InstructSTSB-schema pairs from STS-B test, binarised gold scores (proxy, not the GPT-4 set)",
    ),
}

# Builders that call an LLM through the project's OpenAI-compatible client (issue: dataset builders).
LLM_BUILDERS: dict[str, Builder] = {}

# Options passed to LLM builders only (CLI flag → keyword).
LLM_OPTIONS = ("llm_model", "base_url", "temperature", "concurrency", "llm_cache_dir", "dry_run", "max_retries")


def builders() -> dict[str, Builder]:
    return {**LABEL_BUILDERS, **LLM_BUILDERS}


def get_builder(name: str) -> Builder:
    known = builders()
    if name not in known:
        raise UnknownNameError("dataset builder", name, known)
    return known[name]
