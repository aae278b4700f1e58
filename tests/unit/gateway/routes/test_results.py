"""The JUnit report route's own size limit, as the report streams."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from starlette.requests import Request

from plumbline.common.errors import TooLarge
from plumbline.gateway.routes.results import _declared_size, _report


def _request(chunks: list[bytes], length: str | None = None) -> Request:
    headers = [(b"content-length", length.encode())] if length is not None else []
    messages = [
        {"type": "http.request", "body": c, "more_body": n < len(chunks) - 1}
        for n, c in enumerate(chunks)
    ]

    async def receive() -> dict[str, object]:
        return messages.pop(0)

    scope = {"type": "http", "method": "POST", "path": "/", "headers": headers}
    return Request(scope, receive)


async def _all(chunks: AsyncIterator[bytes]) -> bytes:
    return b"".join([c async for c in chunks])


async def test_a_report_within_its_limit_passes_whole() -> None:
    assert await _all(_report(_request([b"a" * 70_000, b"b" * 30]), None, 70_030)) == (
        b"a" * 70_000 + b"b" * 30
    )


async def test_a_report_that_grows_past_its_limit_is_a_413() -> None:
    with pytest.raises(TooLarge, match="at most 100 bytes"):
        await _all(_report(_request([b"a" * 60, b"b" * 60]), None, 100))


def test_a_declared_length_over_the_limit_is_a_413_at_once() -> None:
    _declared_size(_request([b""], "100"), 100)
    with pytest.raises(TooLarge, match="this one has 101 bytes"):
        _declared_size(_request([b""], "101"), 100)
