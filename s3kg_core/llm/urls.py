"""Endpoint URLs: checked and cleaned for cache keys, and redacted for messages.

Examples
--------
>>> clean_url("http://user:KEY@127.0.0.1:8000/v1/?q=1")
'http://127.0.0.1:8000/v1'
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from ..errors import ConfigError

__all__ = ["clean_url", "redact_url"]


def redact_url(url: str) -> str:
    """A URL safe to print: user info (``user:KEY@``) masked, query and fragment dropped.

    Never raises, whatever the text: it is used in error messages about malformed URLs.

    Examples
    --------
    >>> redact_url("http://user:SECRET@127.0.0.1:8000/v1?key=SECRET#x")
    'http://***@127.0.0.1:8000/v1'
    >>> redact_url("http://user:SECRET@host:port/v1")
    'http://***@host:port/v1'
    >>> redact_url("not a url")
    'not a url'
    """
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return "<a URL that cannot be read>"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def clean_url(url: str) -> str:
    """The URL without user info, query or fragment, and without a trailing slash.

    Raises
    ------
    ConfigError
        If it is not an http(s) URL with a host, or is malformed.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"the endpoint URL {redact_url(url)!r} is malformed: {exc}") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"the endpoint must be an http(s) URL; got {redact_url(url)!r}")
    host = parts.hostname + (f":{port}" if port else "")
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))
