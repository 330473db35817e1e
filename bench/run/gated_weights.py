"""Hub repositories whose weights are gated: the hub serves them only to a logged-in account that has accepted
the owner's licence, so a run elsewhere stops at the download. Declared here with where it is said, so that a
dry run can name them before a long run fails on them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase


@dataclass(frozen=True)
class Gate:
    """Hub ids matching `pattern` (fnmatch, case-sensitive) are gated; `source` says where that is stated."""

    pattern: str
    owner: str
    source: str


GATED: tuple[Gate, ...] = (
    Gate(
        "meta-llama/*",
        "Meta",
        "the meta-llama model cards on huggingface.co (e.g. meta-llama/Llama-2-7b: 'You need to share contact "
        "information with Meta to access this model', the Llama 2 and Llama 3 community licences)",
    ),
)


def hub_ids(spec: str, options: Mapping[str, object]) -> list[str]:
    """The hub ids a model spec and its options name: the model the spec resolves to (`registry.resolve`: a
    registered name's own, or the id after a `family:` prefix) and any option value, a registered name's
    defaults included, shaped like `org/name` (a re-encoder, a base model)."""
    from bench.adapters.registry import resolve

    _family, model, defaults = resolve(spec)
    values = {**defaults, **options}.values()
    ids = [model, *(v for v in values if isinstance(v, str) and v.count("/") == 1 and " " not in v)]
    return list(dict.fromkeys(ids))


def gated_weights(spec: str, options: Mapping[str, object]) -> list[tuple[str, Gate]]:
    """(hub id, its gate) for each gated repository the model would download."""
    return [(hub_id, gate) for hub_id in hub_ids(spec, options) for gate in GATED if fnmatchcase(hub_id, gate.pattern)]


def gated_line(hub_id: str, gate: Gate) -> str:
    """One line naming a gated repository and what it takes to download it."""
    return (
        f"Gated weights: {hub_id}: the hub serves them only to an account that has accepted {gate.owner}'s licence "
        f"(request access on its page, then `hf auth login`); source: {gate.source}."
    )
