"""The throttle and the validation messages."""

from __future__ import annotations

import asyncio

from plumbline.gateway.errors import describe_validation
from plumbline.gateway.middleware import Throttle


async def test_throttle_queues_then_refuses() -> None:
    throttle = Throttle(concurrency=1, queue=1, timeout=5)
    assert await throttle.acquire()
    waiter = asyncio.create_task(throttle.acquire())
    await asyncio.sleep(0)
    assert throttle.waiting == 1
    assert not await throttle.acquire()  # queue full
    throttle.release()
    assert await waiter
    throttle.release()


async def test_throttle_times_out() -> None:
    throttle = Throttle(concurrency=1, queue=5, timeout=0.01)
    assert await throttle.acquire()
    assert not await throttle.acquire()
    assert throttle.waiting == 0


def test_validation_messages_name_fields() -> None:
    message = describe_validation(
        [
            {"type": "missing", "loc": ("body", "username"), "msg": "Field required"},
            {"type": "extra_forbidden", "loc": ("body", "foo"), "msg": "Extra inputs"},
            {
                "type": "string_too_long",
                "loc": ("body", "email"),
                "msg": "",
                "ctx": {"max_length": 255},
            },
            {
                "type": "string_type",
                "loc": ("body", "fields", "name"),
                "msg": "Input should be a valid string",
            },
        ]
    )
    assert "username is required." in message
    assert "foo is not a known field." in message
    assert "email must be at most 255 characters." in message
    assert "fields.name: Input should be a valid string." in message


def test_invalid_json_and_missing_body() -> None:
    assert "not valid JSON" in describe_validation(
        [{"type": "json_invalid", "loc": ("body", 1), "ctx": {"error": "x"}}]
    )
    assert "needs a JSON body" in describe_validation([{"type": "missing", "loc": ("body",)}])
