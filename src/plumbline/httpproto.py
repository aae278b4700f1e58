"""uvicorn's HTTP protocol with a limit on the time a request's headers may take.

uvicorn closes idle keep-alive connections, but a connection that trickles its headers
(or opens and sends nothing) is kept for ever: enough of them exhaust the process's file
descriptors. This protocol closes a connection whose request headers are not complete
within ``header_timeout`` seconds of the connection or of the request's first byte. The
body's own limit is the gateway's (``PLUMBLINE_BODY_TIMEOUT``).

A URL longer than ``MAX_URL`` bytes is answered 414 with the API's JSON error body (the
parser would answer a plain-text 400 for one a little longer), and the connection closed.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from plumbline.gateway.envelope import error

#: The longest request target (path and query) answered, in bytes.
MAX_URL = 32 * 1024


class URLTooLong(Exception):
    """Raised from the parser's URL callback, which ends the parse."""


class _HeaderTimeout(HttpToolsProtocol):
    header_timeout = 10.0
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def on_url(self, url: bytes) -> None:
        super().on_url(url)
        if len(self.url) > MAX_URL:
            raise URLTooLong

    def send_400_response(self, msg: str) -> None:
        if len(self.url) <= MAX_URL:
            super().send_400_response(msg)
            return
        self.transport.write(url_too_long())
        self.transport.close()

    def _arm(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout, self._expired)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _expired(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()


def http_protocol(header_timeout: float) -> type[asyncio.Protocol]:
    """The protocol class for ``uvicorn.Config(http=...)``."""
    return type("HttpProtocol", (_HeaderTimeout,), {"header_timeout": header_timeout})


def url_too_long() -> bytes:
    """The whole 414 answer, head and JSON body."""
    answer = error(414, f"The URL must be at most {MAX_URL} bytes (path and query).")
    head = [b"HTTP/1.1 414 Request-URI Too Long"]
    head += [name + b": " + value for name, value in answer.raw_headers]
    head += [b"connection: close", b"x-content-type-options: nosniff"]
    return b"\r\n".join(head) + b"\r\n\r\n" + bytes(answer.body)
