"""Whether a board row's model has open weights: the site's "open weights only" filter (issue 42).

Open weights: anyone can download the exact model and re-run it. A submitted row is open when the harness ran
a hub model (it has a model card: the weights were downloaded from the hub), closed when it ran a provider's
API (the `openai` family sends texts to a server), and unknown (None) for a local model, whose files only the
submitter holds. An external row says what its source says: MTEB's published rows carry MTEB's registry
field `open_weights`; a paper's reported row has none, unless its facts name one.
"""

from __future__ import annotations

from collections.abc import Mapping

API_FAMILIES = frozenset({"openai"})  # families whose model is a provider's API (bench/adapters/openai_api.py)


def submitted_open_weights(model: Mapping[str, object]) -> bool | None:
    """A submitted row's model (leaderboard.json `models[]`): True, False or None (module docstring)."""
    if model.get("family") in API_FAMILIES:
        return False
    return True if model.get("model_card") else None


def external_open_weights(facts: Mapping[str, object]) -> bool | None:
    """An external row's `open_weights` as its source gives it (MTEB's registry field), else None."""
    value = facts.get("open_weights")
    return value if isinstance(value, bool) else None
