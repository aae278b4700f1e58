"""uvicorn's HTTP protocol with a limit on the time a request's headers may take.

uvicorn closes idle keep-alive connections, but a connection that trickles its headers
(or opens and sends nothing) is kept for ever: enough of them exhaust the process's file
descriptors. This protocol closes a connection whose request headers are not complete
within ``header_timeout`` seconds of the connection or of the request's first byte. The
body's own limit is the gateway's (``PLUMBLINE_BODY_TIMEOUT``).
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


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
