"""Embedder families behind MTEB's encoder protocol; `load_model(spec)` builds one from a `--model` spec."""

from bench.adapters.registry import DEFAULT_MODEL, MODELS, load_model

__all__ = ["DEFAULT_MODEL", "MODELS", "load_model"]
