"""Credential redaction: the one helper for everything the harness writes or prints.

A URL may carry a credential in its userinfo (`http://user:KEY@host/v1`) or in its query string, under
any name: `?api-key=KEY`, `&sig=...` (Azure, signed URLs), `?code=...` (Azure Functions), `?jwt=...`.
No list of names can be complete, so every query-string value (and a bare query item, and the
fragment) is masked, keeping only the parameter names. Run records (`command`, settings), log lines
and `error:` lines all pass through `redact`, so such a URL is written as
`http://***@host/v1?api-key=***&api-version=***`: the endpoint stays recognisable, no secret survives.
The value of `$OPENAI_API_KEY` is masked wherever it appears, URL or not.

`credential_param` names the parameters that are credentials rather than part of what an endpoint
serves; the embedding cache uses it to key an endpoint by its other parameters (bench/adapters/openai_api.py).
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from bench.core.errors import ConfigError

MASK = "***"
SECRET_ENV = ("OPENAI_API_KEY",)
# A query parameter is a credential when a word of its name (split at `-`, `_`, `.`) starts or ends with
# one of these: api-key, apikey, access_token, sig, signature, code, passcode, jwt, X-Amz-Credential ...
# ("design" or "page_size" are not).
_SECRET_STEMS = (
    "key",
    "token",
    "sig",
    "secret",
    "pass",
    "pwd",
    "auth",
    "credential",
    "session",
    "code",
    "jwt",
    "bearer",
    "access",
)
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>`]+")


def credential_param(name: str) -> bool:
    """Whether a query parameter's name says it carries a credential (it never identifies a model)."""
    words = [w for w in re.split(r"[-_.\s]+", name.lower()) if w]
    return any(w.startswith(_SECRET_STEMS) or w.endswith(_SECRET_STEMS) for w in words)


def redact_url(url: str) -> str:
    """`url` with its userinfo, every query-string value and its fragment replaced by ***."""
    try:
        parts = urlsplit(url)
    except ValueError:  # not parseable as a URL: mask everything after the scheme
        return url.split("://", 1)[0] + "://" + MASK
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    query = "&".join(_masked_item(item) for item in parts.query.split("&") if item) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, MASK if parts.fragment else ""))


def refuse_url_credentials(url: str, option: str) -> None:
    """Refuse an endpoint whose URL carries a user name or password (`http://user:KEY@host/v1`): httpx sends
    it as HTTP Basic auth in place of the API key (its `Authorization` header wins over the client's
    bearer key), so the endpoint would get another credential than the one the user meant, silently.
    One `error:` line naming `option` and the fix; the URL in it is redacted (`http://***@host/v1`).

    Raises:
        ConfigError: `url` has userinfo.
    """
    try:
        netloc = urlsplit(url).netloc
    except ValueError:  # not a URL the client could use either: its own error says so later
        return
    if "@" in netloc:
        raise ConfigError(
            f"{option} {redact_url(url)} holds a user name or password (user:pass@): the client would send them "
            f"as HTTP Basic auth instead of the API key. Pass the credential as the API key ($OPENAI_API_KEY, "
            f"read from the environment only) and the URL without it."
        )


def _masked_item(item: str) -> str:
    """`name=***` for a query item; a bare item (`?SECRET`) is all value."""
    name, sep, _ = item.partition("=")
    return f"{name}={MASK}" if sep else MASK


def redact(text: str) -> str:
    """`text` with every URL redacted (`redact_url`) and known secret environment values masked."""
    text = _URL.sub(lambda m: redact_url(m.group(0)), text)
    for var in SECRET_ENV:
        value = os.environ.get(var)
        if value and len(value) >= 4:
            text = text.replace(value, MASK)
    return text


def redact_value(value: Any) -> Any:
    """`redact` applied to every string inside a JSON-like value (dicts, lists, tuples)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v) for v in value]
    return value


class RedactingFilter(logging.Filter):
    """A handler filter that redacts each record's final message (arguments already merged in)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def install_log_redaction(logger: logging.Logger | None = None) -> None:
    """Add `RedactingFilter` to every handler of `logger` (the root logger by default), once each."""
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
