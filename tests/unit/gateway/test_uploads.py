"""A transfer's pace: pieces within the idle time, a minimum rate over each window, and
a call to a service that lasts as long as the service keeps taking the pieces."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from plumbline.common.errors import TooLarge, Unavailable
from plumbline.common.rpc import NO_DEADLINE
from plumbline.gateway.uploads import BodyStalled, Pace, send_stream


async def _body(pieces: int, size: int, every: float) -> AsyncIterator[bytes]:
    for _ in range(pieces):
        await asyncio.sleep(every)
        yield b"x" * size


async def _all(chunks: AsyncIterator[bytes]) -> int:
    return sum([len(c) async for c in chunks])


async def test_a_steady_body_passes_window_after_window() -> None:
    pace = Pace(idle=1, min_rate=1000, window=0.2)
    assert await _all(pace.reader(_body(20, 500, 0.03))) == 10_000  # 3 windows and more


async def test_a_trickle_under_the_rate_ends_at_the_windows_end() -> None:
    pace = Pace(idle=5, min_rate=1000, window=0.3)
    with pytest.raises(BodyStalled, match=r"too slowly: \d+ bytes in 0\.3 seconds"):
        await _all(pace.reader(_body(1000, 1, 0.05)))


async def test_silence_is_the_idle_limit() -> None:
    pace = Pace(idle=0.2, min_rate=0)
    with pytest.raises(BodyStalled, match=r"No part of the body arrived for 0\.2 seconds"):
        await _all(pace.reader(_body(2, 10, 0.5)))


def _messages(count: int, fail: Exception | None = None) -> AsyncIterator[int]:
    async def messages() -> AsyncIterator[int]:
        for n in range(count):
            yield n
        if fail is not None:
            raise fail

    return messages()


async def test_a_call_has_no_deadline_while_the_service_takes_the_pieces() -> None:
    taken: list[int] = []

    async def call(messages: AsyncIterator[int], timeout: float) -> str:
        assert timeout == NO_DEADLINE
        async for message in messages:
            await asyncio.sleep(0.05)  # 0.5 s in all, past the idle time of any piece
            taken.append(message)
        return "stored"

    result = await send_stream(call, _messages(10), idle=0.2, answer_within=0.2, service="s")
    assert (result, taken) == ("stored", list(range(10)))


async def test_a_service_that_stops_taking_pieces_is_503() -> None:
    async def call(messages: AsyncIterator[int], timeout: float) -> str:
        await anext(messages)
        await asyncio.sleep(10)  # holds the next piece
        return "never"

    with pytest.raises(Unavailable, match=r"The s service took no part of the body for 0\.2"):
        await send_stream(call, _messages(3), idle=0.2, answer_within=5, service="s")


async def test_a_service_that_does_not_answer_after_the_last_piece_is_503() -> None:
    async def call(messages: AsyncIterator[int], timeout: float) -> str:
        async for _ in messages:
            pass
        await asyncio.sleep(10)
        return "never"

    with pytest.raises(Unavailable, match=r"did not answer within 0\.2 seconds"):
        await send_stream(call, _messages(3), idle=5, answer_within=0.2, service="s")


async def test_the_messages_own_failure_is_the_answer() -> None:
    async def call(messages: AsyncIterator[int], timeout: float) -> str:
        try:
            async for _ in messages:
                pass
        except TooLarge:
            raise asyncio.CancelledError from None  # as gRPC does
        return "never"

    with pytest.raises(TooLarge, match="too big"):
        await send_stream(
            call, _messages(2, TooLarge("too big")), idle=5, answer_within=5, service="s"
        )


async def test_a_call_grpc_cancels_itself_is_503() -> None:
    """grpc.aio cancels a client-streamed call when a message cannot be written (the
    service went away): that is the service's unavailability, not a server error."""

    async def call(messages: AsyncIterator[int], timeout: float) -> str:
        await anext(messages)
        raise asyncio.CancelledError

    with pytest.raises(Unavailable, match="The s service went away"):
        await send_stream(call, _messages(3), idle=5, answer_within=5, service="s")
