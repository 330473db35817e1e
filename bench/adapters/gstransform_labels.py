"""GSTransform step 1, instruction-based label construction (Feng et al. 2025, §3.1 and §3.2).

1. Instruction-guided summaries: the LLM summarises each sampled text under the instruction.
2. The summaries are embedded with a generic model (here: the base encoder being transformed).
3. k-means (k-means++ seeding) on the summary embeddings; k = 50 by default (the paper's default: its
   Table 5 column k=50 equals its main results).
4. Label generation: one LLM call per cluster, contrastive prompting with positive texts from the cluster
   and negative texts from other clusters. Identical labels (case and spacing ignored) are merged.
5. Text classification: the LLM assigns each sampled original text (not its summary) one taxonomy label;
   the schema's `enum` restricts the reply to the taxonomy where the server supports constrained output.

The paper's prompts (its appendix A) are figures that are not in the text available here; the templates
below are written for this project from the paper's description of each (recorded with their sha256).
A text whose summary or classification stays invalid after the client's retries is left out of training
and counted; nothing is guessed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench.core.errors import DataError
from bench.core.fileio import sha256_text
from bench.core.llm_client import STRING, ChatRequest, LLMClient, fill_template, object_schema

SUMMARY_PROMPT = (
    "Instruction: [INSTRUCTION]\n\nText: [TEXT]\n\nFollowing the instruction, write a concise summary of the "
    "text that keeps only the key points relevant to the instruction, without unnecessary details. Please "
    'output a JSON object containing the key "summary", and no other things.'
)
LABEL_PROMPT = (
    "Instruction: [INSTRUCTION]\n\nPositive texts (one group):\n[POSITIVES]\n\nNegative texts (other "
    "groups):\n[NEGATIVES]\n\nFollowing the instruction, define a clear and precise category label that "
    "captures the core feature shared by the positive texts and distinguishes them from the negative texts. "
    'Keep it short (a few words). Please output a JSON object containing the key "label", and no other things.'
)
CLASSIFY_PROMPT = (
    "Instruction: [INSTRUCTION]\n\nCategories:\n[CATEGORIES]\n\nText: [TEXT]\n\nFollowing the instruction, "
    "classify the text into exactly one of the categories. Please output a JSON object containing the key "
    '"label", whose value is one of the categories, and no other things.'
)
PROMPTS = {"summary": SUMMARY_PROMPT, "label": LABEL_PROMPT, "classify": CLASSIFY_PROMPT}
MAX_EXAMPLE_CHARS = 500


def prompt_records() -> dict[str, dict[str, Any]]:
    return {k: {"template": v, "sha256": sha256_text(v), "verbatim_from_paper": False} for k, v in PROMPTS.items()}


@dataclass
class LabelledSample:
    """The outcome of label construction for one instruction."""

    texts: list[str]
    summaries: list[str | None]
    clusters: list[int | None]
    cluster_labels: list[str | None]
    taxonomy: list[str]
    labels: list[str | None]
    failures: dict[str, int] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)

    @property
    def labelled(self) -> list[int]:
        """Indices of texts that received a taxonomy label."""
        return [i for i, lab in enumerate(self.labels) if lab is not None]


def construct_labels(
    texts: Sequence[str],
    *,
    instruction: str,
    embed: Callable[[list[str]], np.ndarray],
    client: LLMClient,
    n_clusters: int = 50,
    examples: int = 5,
    seed: int = 42,
) -> LabelledSample:
    """Run steps 1-5 of the module docstring on `texts` (the sample)."""
    texts = list(texts)
    results: list[Any] = []
    summaries = _summaries(texts, instruction, client, results)
    ok = [i for i, s in enumerate(summaries) if s is not None]
    if len(ok) < 2:
        raise DataError(f"Only {len(ok)} of {len(texts)} texts got a valid summary; check the LLM endpoint.")
    said = [s for s in summaries if s is not None]  # the summaries of `ok`, in its order
    clusters: list[int | None] = [None] * len(texts)
    for i, c in zip(ok, _kmeans(embed(said), said, n_clusters, seed), strict=True):
        clusters[i] = c
    cluster_labels = _cluster_labels(texts, clusters, instruction, client, examples, seed, results)
    taxonomy = _unique([lab for lab in cluster_labels if lab is not None])
    if len(taxonomy) < 2:
        raise DataError(f"Label generation gave {len(taxonomy)} distinct label(s); a transform needs at least 2.")
    labels = _classify(texts, taxonomy, instruction, client, results)
    failures = {
        "summary": len(texts) - len(ok),
        "label": sum(lab is None for lab in cluster_labels),
        "classify": sum(lab is None for lab in labels),
    }
    usage = {k: sum(r.usage[k] for r in results) for k in ("prompt_tokens", "completion_tokens")}
    return LabelledSample(texts, summaries, clusters, cluster_labels, taxonomy, labels, failures, usage)


def _summaries(texts: list[str], instruction: str, client: LLMClient, sink: list) -> list[str | None]:
    schema = object_schema(summary=STRING)
    requests = [
        ChatRequest.user(fill_template(SUMMARY_PROMPT, instruction=instruction, text=t), schema, name="summary")
        for t in texts
    ]
    results = client.run(requests, desc="GSTransform: summaries")
    sink += results
    return [r.value["summary"].strip() if r.ok else None for r in results]


def _kmeans(emb: np.ndarray, summaries: list[str], n_clusters: int, seed: int) -> list[int]:
    """k-means++ on summary embeddings; k is capped by the number of distinct summaries."""
    from sklearn.cluster import KMeans

    k = min(n_clusters, len(set(summaries)))
    if k < 2:
        return [0] * len(summaries)
    return KMeans(n_clusters=k, random_state=seed, n_init="auto").fit_predict(emb).tolist()


def _cluster_labels(
    texts: list[str],
    clusters: list[int | None],
    instruction: str,
    client: LLMClient,
    examples: int,
    seed: int,
    sink: list,
) -> list[str | None]:
    rng = np.random.default_rng(seed)
    members: dict[int, list[int]] = {}
    for i, c in enumerate(clusters):
        if c is not None:
            members.setdefault(c, []).append(i)
    ids = sorted(members)
    requests = []
    for c in ids:
        inside = members[c]
        outside = [i for d in ids if d != c for i in members[d]]
        pos = rng.choice(inside, size=min(examples, len(inside)), replace=False)
        neg: np.ndarray | list[int] = (
            rng.choice(outside, size=min(examples, len(outside)), replace=False) if outside else []
        )
        prompt = fill_template(
            LABEL_PROMPT,
            instruction=instruction,
            positives=_bullets(texts[i] for i in sorted(pos)),
            negatives=_bullets(texts[i] for i in sorted(neg)) or "(none)",
        )
        requests.append(ChatRequest.user(prompt, object_schema(label=STRING), name="label"))
    results = client.run(requests, desc="GSTransform: cluster labels")
    sink += results
    by_cluster = {c: (r.value["label"].strip() if r.ok else None) for c, r in zip(ids, results, strict=True)}
    return [by_cluster[c] for c in ids]


def _classify(
    texts: list[str], taxonomy: list[str], instruction: str, client: LLMClient, sink: list
) -> list[str | None]:
    schema = object_schema(label={"type": "string", "enum": taxonomy})
    categories = _bullets(taxonomy)
    requests = [
        ChatRequest.user(
            fill_template(CLASSIFY_PROMPT, instruction=instruction, categories=categories, text=t),
            schema,
            name="classification",
        )
        for t in texts
    ]
    results = client.run(requests, desc="GSTransform: classification")
    sink += results
    return [r.value["label"] if r.ok else None for r in results]


def _bullets(items: Any) -> str:
    return "\n".join(f"- {_clip(s)}" for s in items)


def _clip(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= MAX_EXAMPLE_CHARS else text[:MAX_EXAMPLE_CHARS] + "..."


def _unique(labels: list[str]) -> list[str]:
    """Labels in first-seen order; two labels equal up to case and spacing are one label."""
    seen: dict[str, str] = {}
    for lab in labels:
        seen.setdefault(re.sub(r"\s+", " ", lab).strip().casefold(), lab)
    return list(seen.values())
