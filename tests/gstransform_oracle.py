"""A rule-based stand-in for the LLM in GSTransform's label construction, answering from gold labels.

It parses the three prompts of bench/adapters/gstransform_labels.py and answers deterministically:
summary -> "A text about <gold label>", cluster label -> the majority gold label of the positive examples,
classification -> the text's gold label. With it, label construction recovers the gold classes, so a
test can check the rest of the pipeline (k-means, taxonomy, classification, training, applying).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from bench.adapters.gstransform_labels import MAX_EXAMPLE_CHARS


def _clip(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= MAX_EXAMPLE_CHARS else text[:MAX_EXAMPLE_CHARS] + "..."


def oracle_handler(gold: Mapping[str, str]) -> Callable[[dict[str, Any]], str]:
    clipped = {_clip(t): lab for t, lab in gold.items()}
    full = {re.sub(r"\s+", " ", t).strip(): lab for t, lab in gold.items()}

    def gold_of(text: str) -> str:  # texts may arrive stripped (read from a file) or clipped (label prompts)
        return full[re.sub(r"\s+", " ", text).strip()]

    def handler(req: dict[str, Any]) -> str:
        prompt = req["messages"][-1]["content"]
        if "write a concise summary" in prompt:
            text = re.search(r"\n\nText: (.*)\n\nFollowing the instruction", prompt, re.DOTALL).group(1)
            return json.dumps({"summary": f"A text about {gold_of(text)}"})
        if "Positive texts (one group):" in prompt:
            block = prompt.split("Positive texts (one group):\n")[1].split("\n\nNegative texts")[0]
            votes = Counter(clipped[line[2:]] for line in block.splitlines())
            return json.dumps({"label": votes.most_common(1)[0][0]})
        if "classify the text into exactly one" in prompt:
            text = re.search(r"\n\nText: (.*)\n\nFollowing the instruction", prompt, re.DOTALL).group(1)
            categories = re.findall(r"^- (.*)$", prompt.split("Categories:\n")[1].split("\n\nText: ")[0], re.M)
            label = gold_of(text)
            return json.dumps({"label": label if label in categories else categories[0]})
        raise AssertionError(f"unexpected prompt: {prompt[:80]}")

    return handler
