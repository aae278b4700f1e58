"""The overload driver against a small server of known behaviour: what it counts, and
its two probes (the server's ``/healthz`` canary, the driver's own timer lateness)."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncIterator

import pytest

from bench import overload

#: The test server's delay before answering a ``/rest`` request, seconds.
SLOW = 0.02


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Every other API request is refused (``Retry-After: 0``); ``/healthz`` answers at
    once; API answers come after ``SLOW``."""
    served = 0
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            path = head.split(b" ")[1]
            if path == b"/healthz":
                status, extra = b"200 OK", b""
            else:
                await asyncio.sleep(SLOW)
                served += 1
                refused = served % 2 == 0
                status = b"429 Too Many Requests" if refused else b"200 OK"
                extra = b"Retry-After: 0\r\n" if refused else b""
            writer.write(b"HTTP/1.1 " + status + b"\r\n" + extra + b"Content-Length: 2\r\n\r\n{}")
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        writer.close()


@pytest.fixture
async def url() -> AsyncIterator[str]:
    server = await asyncio.start_server(_serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield f"http://127.0.0.1:{port}"


async def test_the_driver_counts_answers_and_probes_the_server(url: str) -> None:
    args = argparse.Namespace(
        url=url,
        path="/rest/v1/items/{id}",
        ids=None,
        authorization="",
        connections=4,
        seconds=1.0,
        mode="naive",
    )
    result = await overload.run(args)
    # Each connection gets an answer every SLOW seconds, half of them refusals.
    assert 40 < result["ok_per_s"] < 4 / SLOW
    assert abs(result["ok_per_s"] - result["refused_per_s"]) < 10
    assert result["ok_p50_ms"] >= SLOW * 1000
    assert result["other_errors"] == result["broken_connections"] == 0
    # The canary is answered at once: well under an API request's time.
    assert result["healthz_failures"] == 0
    assert 0 < result["healthz_p50_ms"] < SLOW * 1000
    assert result["driver_late_p99_ms"] >= 0
    assert "hz p99" in overload.sweep_table([result])
