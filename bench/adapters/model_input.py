"""`ModelInput`: one rendered input, what a family's `render` returns and its `_encode_group` receives.

Why a name: the encoder base, the batching hooks, the cache key, the memo and the distributed pipeline all
pass rendered inputs along without reading them; naming their type lets mypy check every hand-off. A
family renders either the text to embed (a string) or its parts (a list of strings: [instruction, text],
[prompt, instruction], MTEB's [prompt, text, task, options] or [row marker, scope, row json]).
"""

from __future__ import annotations

from typing import TypeAlias

ModelInput: TypeAlias = str | list[str]

__all__ = ["ModelInput"]
