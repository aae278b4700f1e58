"""A multipart form read as it arrives: the file part's name, type and bytes, streamed.

Uploads are exempt from the gateway's whole-body timeout (they may take long); instead
each piece of the body must arrive within ``idle_timeout`` of the previous one.

Starlette's ``request.form()`` spools a whole file before the route sees it; an upload
must instead flow on to the service chunk by chunk, so the gateway parses the body with
python-multipart's push parser as it reads it and hands the file part's bytes on.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar
from urllib.parse import unquote

from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import ClientDisconnect, Request

from plumbline.common.errors import InvalidArgument, PlumblineError

#: Browsers and requests escape these in a quoted file name (HTML's form encoding).
_ESCAPES = {"%22": '"', "%0D": "\r", "%0A": "\n", "%0d": "\r", "%0a": "\n"}
_EXTENDED = re.compile(r"filename\*\s*=\s*([^;]+)", re.IGNORECASE)

M = TypeVar("M")
R = TypeVar("R")


class BodyStalled(PlumblineError):
    """The client stopped sending an upload's body (408; the connection is closed)."""

    http_status = 408


@dataclass
class _Part:
    headers: dict[str, str] = field(default_factory=dict)


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def part_file_name(disposition: str) -> tuple[str | None, str | None]:
    """The part's form name and file name (``filename*`` preferred, as RFC 7578 and
    6266 say; a quoted ``filename`` has its HTML form escapes undone)."""
    _, options = parse_options_header(disposition.encode("utf-8", "surrogateescape"))
    name = _text(options[b"name"]) if b"name" in options else None
    extended = _EXTENDED.search(disposition)
    if extended:
        charset, _, rest = extended.group(1).strip().strip('"').partition("'")
        _, _, encoded = rest.partition("'")
        try:
            return name, unquote(encoded, encoding=charset or "utf-8", errors="strict")
        except (LookupError, UnicodeDecodeError):
            pass
    if b"filename" not in options:
        return name, None
    shown = _text(options[b"filename"])
    for escaped, plain in _ESCAPES.items():
        shown = shown.replace(escaped, plain)
    return name, shown


class FileUpload:
    """The ``file`` part of a multipart body (the first file part when none is called
    ``file``), read from the connection as the caller asks for its bytes."""

    def __init__(self, request: Request, idle_timeout: float, form_name: str = "file") -> None:
        content_type = request.headers.get("content-type", "")
        kind, options = parse_options_header(content_type)
        if kind != b"multipart/form-data" or b"boundary" not in options:
            raise InvalidArgument(
                "The file must be sent as multipart/form-data with a part called file "
                f"(got Content-Type: {content_type or 'none'})."
            )
        self.form_name = form_name
        self.idle_timeout = idle_timeout
        self.file_name = ""
        self.content_type = ""
        self._request = request
        self._body = request.stream()
        self._events: list[tuple[str, bytes | _Part | None]] = []
        self._part = _Part()
        self._field = b""
        self._value = b""
        self._parser = MultipartParser(
            options[b"boundary"],
            {
                "on_part_begin": self._begin,
                "on_header_field": self._header_field,
                "on_header_value": self._header_value,
                "on_header_end": self._header_end,
                "on_headers_finished": self._headers_finished,
                "on_part_data": self._data,
                "on_part_end": lambda: self._events.append(("end", None)),
                "on_end": lambda: self._events.append(("done", None)),
            },
        )
        self._done = False

    # The parser's callbacks, which record what each write of the body held.
    def _begin(self) -> None:
        self._part = _Part()

    def _header_field(self, data: bytes, start: int, end: int) -> None:
        self._field += data[start:end]

    def _header_value(self, data: bytes, start: int, end: int) -> None:
        self._value += data[start:end]

    def _header_end(self) -> None:
        self._part.headers[_text(self._field).lower()] = _text(self._value)
        self._field, self._value = b"", b""

    def _headers_finished(self) -> None:
        self._events.append(("part", self._part))

    def _data(self, data: bytes, start: int, end: int) -> None:
        self._events.append(("data", bytes(data[start:end])))

    async def _next_events(self) -> list[tuple[str, bytes | _Part | None]]:
        """What the next piece of the body held; an empty list at its end."""
        while not self._events:
            if self._done:
                return []
            try:
                async with asyncio.timeout(self.idle_timeout):
                    chunk = await anext(self._body, None)
            except ClientDisconnect:
                raise InvalidArgument("The client left before the file arrived.") from None
            except TimeoutError:
                raise BodyStalled(
                    f"No part of the file arrived for {self.idle_timeout:g} seconds; "
                    "an upload must keep sending."
                ) from None
            if chunk is None:
                self._done = True
                break
            try:
                self._parser.write(chunk)
            except Exception as exc:  # the parser's own errors say what is malformed
                raise InvalidArgument(f"The multipart body cannot be read: {exc}") from None
        events, self._events = self._events, []
        return events

    async def open(self) -> None:
        """Reads up to the file part's headers: its name and type are known after."""
        pending: list[tuple[str, bytes | _Part | None]] = []
        while True:
            if not pending:
                pending = await self._next_events()
                if not pending:
                    raise InvalidArgument(
                        f"The form has no file part: send the file as the part called "
                        f"{self.form_name}."
                    )
            kind, value = pending.pop(0)
            if kind != "part" or not isinstance(value, _Part):
                continue
            name, file_name = part_file_name(value.headers.get("content-disposition", ""))
            if file_name is None and name != self.form_name:
                continue
            self.file_name = file_name or ""
            self.content_type = value.headers.get("content-type", "")
            self._events = pending + self._events
            return

    async def chunks(self, size: int = 256 * 1024) -> AsyncIterator[bytes]:
        """The file part's bytes as they arrive, gathered into pieces of about ``size``."""
        pending = bytearray()
        while True:
            events = await self._next_events()
            if not events:
                raise InvalidArgument("The multipart body ended inside the file part.")
            for kind, value in events:
                if kind == "data" and isinstance(value, bytes):
                    pending += value
                    if len(pending) >= size:
                        yield bytes(pending)
                        pending.clear()
                elif kind in ("end", "done"):
                    if pending:
                        yield bytes(pending)
                    return


async def send_stream(
    call: Callable[[AsyncIterator[M]], Awaitable[R]], messages: AsyncIterator[M]
) -> R:
    """``call(messages)`` for a client-streaming RPC, where a failure of the messages
    themselves (a body over its limit, a malformed form, a client that left) is the
    answer: gRPC cancels the call when its request iterator raises, and that
    cancellation would otherwise hide the reason."""
    failed: list[Exception] = []

    async def guarded() -> AsyncIterator[M]:
        try:
            async for message in messages:
                yield message
        except Exception as exc:
            failed.append(exc)
            raise

    try:
        return await call(guarded())
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if failed and task is not None and not task.cancelling():
            raise failed[0] from None
        raise
