"""Credential redaction: the one helper for everything the harness writes or prints.

A URL may carry a credential in its userinfo (`http://user:KEY@host/v1`) or in a query parameter
(`?api-key=KEY`, `&sig=...`, as Azure and signed URLs do). Run records (`command`, settings), log
lines and `error:` lines all pass through `redact`, so such a URL is written as
`http://***@host/v1?api-key=***`: the endpoint stays recognisable, the secret does not survive.
The value of `$OPENAI_API_KEY` is masked wherever it appears, URL or not.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"
SECRET_ENV = ("OPENAI_API_KEY",)
# A query parameter is secret when its name contains one of these (api-key, x-api-key, token, sig, ...).
_SECRET_PARAM = re.compile(r"key|token|sig|secret|passw|pwd|auth|credential|session", re.IGNORECASE)
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>`]+")


def redact_url(url: str) -> str:
    """`url` with its userinfo and the values of secret-looking query parameters replaced by ***."""
    try:
        parts = urlsplit(url)
    except ValueError:  # not parseable as a URL: mask everything after the scheme
        return url.split("://", 1)[0] + "://" + MASK
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, MASK if _SECRET_PARAM.search(k) else v) for k, v in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


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
