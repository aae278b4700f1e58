"""The JUnit report route's own size limit, as the report streams."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from starlette.requests import Request

from plumbline.common.errors import TooLarge
from plumbline.gateway.routes.results import _declared_size, _report
from plumbline.gateway.uploads import BodyStalled, Pace


def _request(
    chunks: list[bytes], length: str | None = None, content_type: str | None = None
) -> Request:
    headers = [(b"content-length", length.encode())] if length is not None else []
    if content_type is not None:
        headers.append((b"content-type", content_type.encode()))
    messages = [
        {"type": "http.request", "body": c, "more_body": n < len(chunks) - 1}
        for n, c in enumerate(chunks)
    ]

    async def receive() -> dict[str, object]:
        return messages.pop(0)

    scope = {"type": "http", "method": "POST", "path": "/", "headers": headers}
    request = Request(scope, receive)
    request.state.unread = messages
    return request


PACE = Pace(idle=5)


async def _all(chunks: AsyncIterator[bytes]) -> bytes:
    return b"".join([c async for c in chunks])


async def test_a_report_within_its_limit_passes_whole() -> None:
    assert await _all(_report(_request([b"a" * 70_000, b"b" * 30]), PACE, 70_030)) == (
        b"a" * 70_000 + b"b" * 30
    )


async def test_a_report_that_grows_past_its_limit_is_a_413() -> None:
    with pytest.raises(TooLarge, match="at most 100 bytes"):
        await _all(_report(_request([b"a" * 60, b"b" * 60]), PACE, 100))


def test_a_declared_length_over_the_limit_is_a_413_at_once() -> None:
    _declared_size(_request([b""], "100"), 100)
    with pytest.raises(TooLarge, match="this one has 101 bytes"):
        _declared_size(_request([b""], "101"), 100)


async def test_a_form_is_held_to_the_limit_as_it_arrives() -> None:
    """The form's file part is counted as it comes: the 413 is answered with the rest of
    the form unread, not after reading it whole."""
    head = b'--b\r\nContent-Disposition: form-data; name="file"; filename="r.xml"\r\n\r\n'
    chunks = [head, *([b"x" * 1000] * 50), b"\r\n--b--\r\n"]
    request = _request(chunks, content_type="multipart/form-data; boundary=b")
    with pytest.raises(TooLarge, match="at most 2048 bytes"):
        await _all(_report(request, PACE, 2048))
    assert len(request.state.unread) > 40


async def test_a_report_slower_than_the_minimum_rate_is_a_408() -> None:
    async def receive() -> dict[str, object]:
        await asyncio.sleep(0.05)
        return {"type": "http.request", "body": b"<", "more_body": True}

    scope = {"type": "http", "method": "POST", "path": "/", "headers": []}
    slow = Pace(idle=5, min_rate=1000, window=0.3)
    with pytest.raises(BodyStalled, match="too slowly"):
        await _all(_report(Request(scope, receive), slow, 10_000))
