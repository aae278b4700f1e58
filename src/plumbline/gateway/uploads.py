"""A multipart form read as it arrives: the file part's name, type and bytes, streamed.

Uploads are exempt from the gateway's whole-body timeout (they may take long); instead
each piece of the body must arrive within ``idle_timeout`` of the previous one, and the
body must keep up a minimum rate (``Pace``: bytes a second over a window), else 408. The
call that takes the body on to a service has no fixed deadline either: ``send_stream``
ends it when the service stops taking pieces for as long.

Starlette's ``request.form()`` spools a whole file before the route sees it; an upload
must instead flow on to the service chunk by chunk, so the gateway parses the body with
python-multipart's push parser as it reads it and hands the file part's bytes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import unquote

from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import ClientDisconnect, Request

from plumbline.common.errors import (
    InvalidArgument,
    PlumblineError,
    TooLarge,
    Unavailable,
    size_text,
)
from plumbline.common.rpc import NO_DEADLINE
from plumbline.common.settings import Settings

#: Browsers and requests escape these in a quoted file name (HTML's form encoding).
_ESCAPES = {"%22": '"', "%0D": "\r", "%0A": "\n", "%0d": "\r", "%0a": "\n"}
_EXTENDED = re.compile(r"filename\*\s*=\s*([^;]+)", re.IGNORECASE)

M = TypeVar("M")
R = TypeVar("R")


class BodyStalled(PlumblineError):
    """The client stopped sending an upload's body (408; the connection is closed)."""

    http_status = 408


@dataclass
class Pace:
    """How fast a body must come: each piece within ``idle`` seconds of the previous one,
    and at least ``min_rate`` bytes a second over each ``window`` seconds (0: no rate)."""

    idle: float
    min_rate: int = 0
    window: float = 30.0

    @classmethod
    def of(cls, settings: Settings) -> Pace:
        """The pace the settings ask of uploads and reports."""
        return cls(settings.body_timeout, settings.transfer_min_rate, settings.transfer_rate_window)

    def reader(self, body: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        """``body``'s pieces, ending with ``BodyStalled`` once they come too slowly."""
        return _paced(self, body)


async def _paced(pace: Pace, body: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    now = time.monotonic()
    window_start, seen, last = now, 0, now  # the window's start and bytes, the last piece
    while True:
        read = asyncio.ensure_future(anext(body, None))
        try:
            while not read.done():
                now = time.monotonic()
                if pace.min_rate and now - window_start >= pace.window:
                    if seen < pace.min_rate * pace.window:
                        raise _too_slow(pace, seen)
                    window_start, seen = now, 0
                if now - last >= pace.idle:
                    raise BodyStalled(
                        f"No part of the body arrived for {pace.idle:g} seconds; an upload "
                        "must keep sending."
                    )
                wait = last + pace.idle - now
                if pace.min_rate:
                    wait = min(wait, window_start + pace.window - now)
                await asyncio.wait({read}, timeout=wait)
            chunk = read.result()
        except ClientDisconnect:
            raise InvalidArgument("The client left before the body arrived.") from None
        finally:
            read.cancel()
        if chunk is None:
            return
        seen += len(chunk)
        last = time.monotonic()
        yield chunk


def _too_slow(pace: Pace, seen: int) -> BodyStalled:
    return BodyStalled(
        f"The body arrived too slowly: {seen} bytes in {pace.window:g} seconds; an upload "
        f"must send at least {size_text(pace.min_rate)} a second "
        f"({size_text(int(pace.min_rate * pace.window))} every {pace.window:g} seconds)."
    )


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
    ``file``; with ``named_only``, only a file part called ``file``), read from the
    connection as the caller asks for its bytes."""

    def __init__(
        self, request: Request, pace: Pace, form_name: str = "file", named_only: bool = False
    ) -> None:
        content_type = request.headers.get("content-type", "")
        kind, options = parse_options_header(content_type)
        if kind != b"multipart/form-data" or b"boundary" not in options:
            raise InvalidArgument(
                "The file must be sent as multipart/form-data with a part called file "
                f"(got Content-Type: {content_type or 'none'})."
            )
        self.form_name = form_name
        self.named_only = named_only
        self.file_name = ""
        self.content_type = ""
        self._request = request
        self._body = pace.reader(request.stream())
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
            chunk = await anext(self._body, None)
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
        seen: set[str] = set()
        while True:
            if not pending:
                pending = await self._next_events()
                if not pending:
                    parts = ", ".join(sorted(seen)) or "none"
                    raise InvalidArgument(
                        f"The form has no file part: send the file as the part called "
                        f"{self.form_name} (parts sent: {parts})."
                    )
            kind, value = pending.pop(0)
            if kind != "part" or not isinstance(value, _Part):
                continue
            name, file_name = part_file_name(value.headers.get("content-disposition", ""))
            seen.add(name or "(unnamed)")
            if self.named_only:  # the part called form_name, as a file
                wanted = name == self.form_name and file_name is not None
            else:
                wanted = name == self.form_name or file_name is not None
            if not wanted:
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


def refuse_declared(request: Request, limit: int, what: str) -> None:
    """A 413 at once for a body whose Content-Length says it is longer than ``limit``;
    ``what`` names the body in the message ("A JUnit report")."""
    length = request.headers.get("content-length", "").strip()
    if length.isdigit() and int(length) > limit:
        raise TooLarge(f"{what} must be at most {size_text(limit)}; this one has {length} bytes.")


async def limited(
    body: AsyncIterator[bytes], limit: int, what: str, piece: int
) -> AsyncIterator[bytes]:
    """``body`` in pieces of at most ``piece`` bytes as it arrives (each piece as it
    comes, not gathered, so the limit is checked as it arrives); a 413 once more than
    ``limit`` bytes have come."""
    seen = 0
    async for chunk in body:
        for start in range(0, len(chunk), piece):
            part = chunk[start : start + piece]
            seen += len(part)
            if seen > limit:
                raise TooLarge(f"{what} must be at most {size_text(limit)}.")
            yield part


async def send_stream(
    call: Callable[..., Awaitable[R]],
    messages: AsyncIterator[M],
    idle: float,
    answer_within: float,
    service: str,
) -> R:
    """``call(messages)`` for a client-streaming RPC, made with no deadline: the call lasts
    while its messages keep going out. The service must take each message within
    ``idle`` seconds of its being ready, and answer within ``answer_within`` of the last;
    otherwise the call is cancelled and the answer is 503 (``Unavailable``).

    A failure of the messages themselves (a body over its limit, a malformed form, a
    client that left or too slow) is the answer: gRPC cancels the call when its request
    iterator raises, and that cancellation would otherwise hide the reason."""
    failed: list[Exception] = []
    offered = asyncio.Event()  # set while a message waits for the service to take it
    taken = asyncio.Event()
    finished = asyncio.Event()

    async def guarded() -> AsyncIterator[M]:
        try:
            async for message in messages:
                taken.clear()
                offered.set()
                yield message
                offered.clear()
                taken.set()
        except Exception as exc:
            failed.append(exc)
            raise
        finished.set()

    task = asyncio.ensure_future(call(guarded(), timeout=NO_DEADLINE))
    try:
        await _watch(task, offered, taken, finished, idle, answer_within, service)
        return await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise  # this request is being cancelled (the server stops)
        if failed:
            raise failed[0] from None
        # gRPC cancels the call itself when a message cannot be written: the service
        # went away mid-way.
        raise Unavailable(
            f"The {service} service went away while the body was arriving; try again."
        ) from None
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


async def _watch(
    task: asyncio.Future[Any],
    offered: asyncio.Event,
    taken: asyncio.Event,
    finished: asyncio.Event,
    idle: float,
    answer_within: float,
    service: str,
) -> None:
    """Returns once ``task`` is done; raises ``Unavailable`` (cancelling it) when the
    service holds a message longer than ``idle`` or the answer longer than
    ``answer_within`` after the last message. The time a message takes to become ready
    is the client's, held to the body's own limits."""

    async def first(*events: asyncio.Event, timeout: float | None = None) -> bool:
        """Whether one of ``events`` was set before ``task`` ended or the time ran out."""
        waiters = {asyncio.ensure_future(e.wait()) for e in events}
        try:
            done, _ = await asyncio.wait(
                {task, *waiters}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for waiter in waiters:
                waiter.cancel()
        return not task.done() and bool(done & waiters)

    while await first(offered, finished):
        if not offered.is_set() and finished.is_set():
            break
        if not await first(taken, timeout=idle) and not task.done():
            task.cancel()
            raise Unavailable(
                f"The {service} service took no part of the body for {idle:g} seconds; "
                "try again shortly."
            )
    if not task.done():
        try:
            await asyncio.wait_for(asyncio.shield(task), answer_within)
        except TimeoutError:
            task.cancel()
            raise Unavailable(
                f"The {service} service did not answer within {answer_within:g} seconds "
                "of the last part of the body; try again shortly."
            ) from None
