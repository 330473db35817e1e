"""MTEB's `ModelMeta` of an encoder, and the facts about its weights that the run record keeps.

A model that MTEB registers under its name (a hub id, or a local copy whose files matched the published ones)
keeps MTEB's fields (model_meta.json) with this run's revision and experiment; anything else gets an empty meta
with the facts known before loading (`model_facts`), filled in by what the loaded model knows
(`update_model_facts`). `ModelFacts` is the encoder's part that holds the model's source and answers these.
"""

from __future__ import annotations

from typing import Any

from mteb.models import ModelMeta
from mteb.models.model_meta import ScoringFunction

from bench.core.json_types import JSONObject


class ModelFacts:
    """The ModelMeta part of an encoder (see module docstring)."""

    name: str
    revision: str
    _source: str | None
    identity_check: dict[str, Any] | None
    registry_meta: ModelMeta | None
    mteb_model_meta: ModelMeta

    def model_facts(self) -> dict[str, Any]:
        """ModelMeta fields known before loading (n_parameters, embed_dim, max_tokens, license, ...)."""
        if self._source is None:
            return {}
        from bench.adapters.model_card import model_facts

        return model_facts(self._source, self.name)

    def record_facts(self) -> JSONObject:
        """Facts about the weights that MTEB's ModelMeta has no field for (a GGUF file's quantisation and the
        model it derives from), for the run record's `model.facts`; {} when there are none."""
        if self._source is None:
            return {}
        from bench.adapters.gguf_file import gguf_record_facts
        from bench.adapters.identity import is_local

        return gguf_record_facts(self._source) if is_local(self._source) else {}

    def update_model_facts(self, **facts: Any) -> None:
        """Fill ModelMeta fields the loaded model knows (parameters, dimension), keeping known ones;
        a registered model's meta is MTEB's and is never filled over."""
        if getattr(self, "registry_meta", None) is not None:
            return
        meta = self.mteb_model_meta
        update = {k: v for k, v in facts.items() if v is not None and getattr(meta, k, None) is None}
        if update:
            self.mteb_model_meta = meta.model_copy(update=update)


def registry_meta(source: str | None, name: str, identity_check: dict[str, Any] | None) -> ModelMeta | None:
    """MTEB's registered ModelMeta when the model is the one MTEB registers under its name (a hub id,
    or a local copy whose files matched the published ones); None for anything else."""
    if source is None:
        return None
    from bench.adapters.identity import is_local, mteb_meta

    if is_local(source) and not (identity_check and identity_check.get("matches") == name):
        return None
    meta = mteb_meta(name)
    return meta if meta is not None and meta.name == name else None


def build_model_meta(
    registered: ModelMeta | None, *, name: str, revision: str, experiment: dict[str, Any], facts: dict[str, Any]
) -> ModelMeta:
    """MTEB's fields are MTEB's (model_meta.json); ours go in the run record."""
    if registered is not None:
        return registered.model_copy(update={"revision": revision, "experiment_kwargs": experiment or None})
    return ModelMeta.create_empty(
        overwrites=dict(
            name=name,
            revision=revision,
            loader=None,
            similarity_fn_name=ScoringFunction.COSINE,
            use_instructions=True,
            framework=["PyTorch"],
            experiment_kwargs=experiment or None,
            **facts,
        )
    )
