"""The throttle, the middleware's helpers and the validation messages."""

from __future__ import annotations

import asyncio

from plumbline.gateway.errors import describe_validation
from plumbline.gateway.middleware import printable, trusted_host
from plumbline.gateway.throttle import Throttle


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


async def test_throttle_keeps_the_queue_to_what_drains_in_time() -> None:
    throttle = Throttle(concurrency=2, queue=500, timeout=10)
    throttle.service = 1.0  # two requests a second: five seconds hold ten waiting
    assert throttle.depth() == 10
    assert not throttle.full()
    assert await throttle.acquire()
    assert await throttle.acquire()
    waiters = [asyncio.create_task(throttle.acquire()) for _ in range(10)]
    await asyncio.sleep(0)
    assert throttle.full()
    assert not await throttle.acquire()
    assert 6 <= throttle.retry_after() <= 12  # (10 waiting + 2) / 2 per second, spread
    for _ in range(12):
        throttle.release(1.0)
    assert all(await asyncio.gather(*waiters))


async def test_throttle_learns_the_service_time() -> None:
    throttle = Throttle(concurrency=4, queue=500, timeout=10)
    for _ in range(200):
        assert await throttle.acquire()
        throttle.release(0.1)
    assert 0.09 < throttle.service < 0.11
    assert throttle.depth() == 200  # 40 a second for half the timeout


def test_log_values_are_printable() -> None:
    assert printable("/rest/v1/x\n2026 INFO forged\\") == "/rest/v1/x\\x0a2026 INFO forged\\x5c"
    assert printable("/rest/v1/ünïcode") == "/rest/v1/ünïcode"


def test_untrusted_hosts_become_the_local_address() -> None:
    def host(value: str, trusted: frozenset[str] = frozenset()) -> bytes:
        scope = {"server": ("127.0.0.1", 8080), "headers": [(b"host", value.encode())]}
        headers = dict(trusted_host(scope, trusted)["headers"])
        return bytes(headers[b"host"])

    assert host("127.0.0.1:8080") == b"127.0.0.1:8080"
    assert host("evil.example") == b"127.0.0.1:8080"
    assert host("api.example:443", frozenset({"api.example"})) == b"api.example:443"
    assert host("api.example:443", frozenset({"api.example:8443"})) == b"127.0.0.1:8080"
    assert host("API.example", frozenset({"api.example"})) == b"API.example"


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
