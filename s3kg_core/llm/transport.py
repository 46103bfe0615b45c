"""One HTTP exchange with an endpoint, bounded in time and in size; no redirect to elsewhere.

The ``openai`` client's timeout bounds each read, not the request: a server that drips one
byte a second never times out. :class:`BoundedTransport` (an ``httpx2`` transport, the HTTP
library ``openai`` uses) makes the request's timeout a total deadline: a watchdog shuts the
connection's socket when it passes, whatever phase the exchange is in (connecting, waiting for
the headers, reading the body), and the exchange fails with
:class:`~s3kg_core.errors.DeadlineExceeded`. It also decodes the body itself (gzip or deflate,
nothing else is accepted), counting the bytes *after* decompression, and stops with
:class:`~s3kg_core.errors.ReplyTooLarge` once they pass ``max_bytes``, so a small gzip bomb
cannot fill the memory.

:func:`refuse_cross_origin_redirect` is a response hook that refuses to follow a redirect to
another scheme, host or port (the request, and its key, would go to a server nobody chose):
:class:`~s3kg_core.errors.RedirectRefused`.

Examples
--------
>>> import httpx2
>>> client = httpx2.Client(transport=BoundedTransport(max_bytes=1 << 20),
...                        event_hooks={"response": [refuse_cross_origin_redirect]})
>>> client.close()
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from typing import Any, cast

import httpx2

from ..errors import DeadlineExceeded, RedirectRefused, ReplyLimitError, ReplyTooLarge
from .urls import redact_url

__all__ = ["ACCEPTED_ENCODINGS", "BoundedTransport", "refuse_cross_origin_redirect"]

ACCEPTED_ENCODINGS = "gzip, deflate"
"""What requests say they accept; a reply in another content encoding is refused."""


def _origin(url: httpx2.URL) -> tuple[str, str, int | None]:
    port = url.port or {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, port


def refuse_cross_origin_redirect(response: httpx2.Response) -> None:
    """Raise :class:`~s3kg_core.errors.RedirectRefused` for a redirect to another origin.

    An ``httpx2`` response hook: it runs before the client follows a redirect. A redirect
    within the same scheme, host and port is left to the client.
    """
    if not response.has_redirect_location:
        return
    target = response.request.url.join(response.headers["location"])
    if _origin(target) != _origin(response.request.url):
        raise RedirectRefused(
            f"the endpoint redirected to another origin ({redact_url(str(target))}, HTTP "
            f"{response.status_code}); not following it: use that address as --base-url if "
            "you trust it"
        )


class _Watchdog:
    """Shuts the sockets of one exchange when its deadline passes."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.deadline = None if seconds is None else time.monotonic() + seconds
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def start(self) -> None:
        if self.seconds is not None:
            self._timer = threading.Timer(self.seconds, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def watch(self, stream: Any) -> None:
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            with self._lock:
                self._sockets.append(sock)
                fired = self.fired
            if fired:
                self._shut(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            sockets = list(self._sockets)
        for sock in sockets:
            self._shut(sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)

    def expired(self) -> bool:
        return self.fired or (self.deadline is not None and time.monotonic() > self.deadline)

    def error(self) -> DeadlineExceeded:
        return DeadlineExceeded(f"no complete reply within {self.seconds:g} s")

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()


class _Inflate:
    """Decompress gzip or deflate chunks, never more than asked for at once."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        wbits = 16 + zlib.MAX_WBITS if "gzip" in encoding else zlib.MAX_WBITS
        self._d = zlib.decompressobj(wbits)
        self._first = True

    def __call__(self, chunk: bytes, most: int) -> bytes:
        try:
            out = self._d.decompress(chunk, most + 1)
        except zlib.error:
            if not (self.encoding == "deflate" and self._first):
                raise
            self._d = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, as some servers send
            out = self._d.decompress(chunk, most + 1)
        self._first = False
        if self._d.unconsumed_tail:
            return out + b"\0"  # more than ``most`` bytes are waiting: too large either way
        return out


def _decoder(encoding: str) -> Callable[[bytes, int], bytes] | None:
    """``decode(chunk, most)`` for a content encoding (``None``: no decoding needed)."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding not in ("gzip", "x-gzip", "deflate"):
        raise ReplyTooLarge(
            f"the reply is in content encoding {encoding[:40]!r}, which is not accepted "
            f"(only {ACCEPTED_ENCODINGS})"
        )
    return _Inflate(encoding)


class _BoundedStream(httpx2.SyncByteStream):
    def __init__(
        self,
        inner: httpx2.SyncByteStream,
        watchdog: _Watchdog,
        decode: Callable[[bytes, int], bytes] | None,
        max_bytes: int,
    ) -> None:
        self._inner = inner
        self._watchdog = watchdog
        self._decode = decode
        self._max_bytes = max_bytes
        self._size = 0

    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self._inner:
                if self._watchdog.expired():
                    raise self._watchdog.error()
                data = chunk if self._decode is None else self._decode(chunk, self._room())
                self._size += len(data)
                if self._size > self._max_bytes:
                    raise ReplyTooLarge(
                        f"the reply is larger than {self._max_bytes:,} bytes (decompressed)"
                    )
                if data:
                    yield data
        except ReplyLimitError:
            raise
        except (httpx2.TransportError, zlib.error) as exc:
            if self._watchdog.expired():
                raise self._watchdog.error() from exc
            raise httpx2.DecodingError(f"the reply could not be read: {exc}") from exc

    def _room(self) -> int:
        return max(0, self._max_bytes - self._size)

    def close(self) -> None:
        self._watchdog.stop()
        self._inner.close()


class BoundedTransport(httpx2.BaseTransport):
    """An ``httpx2`` transport whose exchanges end by their deadline and within ``max_bytes``.

    Parameters
    ----------
    max_bytes
        The most bytes of a reply's body, counted after decompression.
    inner
        The transport that does the work; default ``httpx2.HTTPTransport`` without keep-alive
        (every exchange opens its own connection, so the watchdog knows its socket).

    Notes
    -----
    The deadline of a request is the largest of its timeouts (``openai``'s ``timeout``), from
    the moment the transport receives it. A reply whose body is still arriving when it passes
    fails with :class:`~s3kg_core.errors.DeadlineExceeded`; one over ``max_bytes`` with
    :class:`~s3kg_core.errors.ReplyTooLarge`.
    """

    def __init__(self, *, max_bytes: int, inner: httpx2.BaseTransport | None = None) -> None:
        self.max_bytes = max_bytes
        self._inner = inner or httpx2.HTTPTransport(
            limits=httpx2.Limits(max_connections=None, max_keepalive_connections=0)
        )

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send ``request``; the body of the response is read within the limits."""
        timeouts = request.extensions.get("timeout") or {}
        seconds = max((v for v in timeouts.values() if v), default=None)
        watchdog = _Watchdog(seconds)
        previous = request.extensions.get("trace")

        def trace(name: str, info: dict[str, Any]) -> None:
            if name.endswith((".connect_tcp.complete", ".start_tls.complete")):
                watchdog.watch(info.get("return_value"))
            if previous is not None:
                previous(name, info)

        request.extensions["trace"] = trace
        request.headers["Accept-Encoding"] = ACCEPTED_ENCODINGS
        watchdog.start()
        try:
            response = self._inner.handle_request(request)
        except httpx2.TransportError as exc:
            watchdog.stop()
            if watchdog.expired():
                raise watchdog.error() from exc
            raise
        try:
            decode = _decoder(response.headers.get("content-encoding", ""))
        except ReplyTooLarge:
            watchdog.stop()
            response.close()
            raise
        headers = [
            (k, v)
            for k, v in response.headers.raw
            if k.lower() not in (b"content-encoding", b"content-length")
        ]
        inner = cast(httpx2.SyncByteStream, response.stream)  # a sync transport's stream
        return httpx2.Response(
            response.status_code,
            headers=headers,
            stream=_BoundedStream(inner, watchdog, decode, self.max_bytes),
            extensions=response.extensions,
        )

    def close(self) -> None:
        """Close the inner transport."""
        self._inner.close()
