"""Which registered models run code that is not the harness's or MTEB's: their hub repository's own
modeling files (`trust_remote_code`) or a provider's API.

Why it matters: a hub revision is chosen by whoever names it, and on the hub a pull-request ref is a
revision anyone can open. A model whose MTEB loader passes `trust_remote_code=True` imports the
`modeling_*.py` of the revision it loads, so loading it at a revision someone else chose runs their
code. Only MTEB's registered revision is pinned by someone the user trusts (MTEB's maintainers, and
the installed `mteb`); any other revision runs only when the user says so (`bench run
--trust-remote-code`, `bench leaderboard verify --trust-remote-code MODEL`). An API client sends every
text, with the user's key, to its provider: a verification contacts only the maintainer's endpoint.

Everything here reads MTEB's registry (`mteb.get_model_meta`), never the hub.
"""

from __future__ import annotations

import inspect
import re
from typing import TYPE_CHECKING

from bench.core.bounded import printable
from bench.core.errors import ConfigError

if TYPE_CHECKING:
    from mteb.models import ModelMeta

# A loader whose own code passes the flag (a wrapper class that calls `from_pretrained(...,
# trust_remote_code=True)` or defaults it to True), not only through its registered loader_kwargs.
_IN_SOURCE = re.compile(r"trust_remote_code\s*(?::\s*bool\s*)?=\s*True")


def registered_meta(model_id: str) -> ModelMeta | None:
    """MTEB's ModelMeta registered under exactly `model_id`, or None (an unregistered hub id, a path)."""
    from bench.adapters.identity import mteb_meta

    meta = mteb_meta(model_id)
    return meta if meta is not None and meta.name == model_id else None


def runs_own_code(meta: ModelMeta) -> bool:
    """Whether MTEB's loader for `meta` imports code from the model's hub repository."""
    if _asks_for_remote_code(meta.loader_kwargs or {}):
        return True
    try:
        source = inspect.getsource(meta.loader) if meta.loader is not None else ""
    except (OSError, TypeError):  # a builtin or a loader made at run time: its source cannot be read
        return False
    return bool(_IN_SOURCE.search(source))


def _asks_for_remote_code(kwargs: object) -> bool:
    """`trust_remote_code: True` at any depth of a loader's options (`model_kwargs`, `config_kwargs` ...)."""
    if not isinstance(kwargs, dict):
        return False
    return any(
        (key == "trust_remote_code" and value is True) or _asks_for_remote_code(value) for key, value in kwargs.items()
    )


def is_api_client(meta: ModelMeta) -> bool:
    """Whether MTEB's registered model is a provider's API (its loader sends texts to a server)."""
    return meta.open_weights is False or "API" in (meta.framework or [])


def remote_code_line(name: str, revision: str, who: str, *, local: bool = False) -> str:
    """The one line `bench run` prints before a model's own code may be imported (`who` passes the flag)."""
    where = "its local folder" if local else f"its hub repository (https://huggingface.co/{name})"
    return f"{name} runs its own code from {where} at revision {revision[:12]}: {who} trust_remote_code=True"


def check_revision(meta: ModelMeta, revision: str | None, *, trusted: bool) -> None:
    """Refuse running a remote-code model's files at a revision other than MTEB's registered one,
    unless the user passed `--trust-remote-code`."""
    if trusted or not runs_own_code(meta) or revision is None or revision == meta.revision:
        return
    raise ConfigError(
        f"{meta.name} runs its own code from its hub repository, and revision {printable(revision, 60)} is "
        f"not the one MTEB registers ({meta.revision}): pass --trust-remote-code to run that revision's "
        "code, or drop --model-revision."
    )
