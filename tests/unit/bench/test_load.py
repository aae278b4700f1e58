"""The load driver: counts only timed requests, reports errors, reconnects."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import pytest

from bench.load import percentile, run, schedule


async def _server(seen: list[str], close_after: int | None = None) -> asyncio.Server:
    """Answers 200, or 404 for paths with ``missing``; may drop one connection once."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                break
            path = head.split(b" ")[1].decode()
            seen.append(path)
            if close_after is not None and len(seen) == close_after:
                writer.close()
                return
            status = b"404 Not Found" if "missing" in path else b"200 OK"
            body = b'{"ok": true}'
            writer.write(
                b"HTTP/1.1 "
                + status
                + b"\r\nContent-Length: "
                + str(len(body)).encode()
                + b"\r\n\r\n"
                + body
            )
            await writer.drain()
        writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


def _args(port: int, path: str, ids: Path, **overrides: object) -> argparse.Namespace:
    values: dict[str, object] = {
        "url": f"http://127.0.0.1:{port}",
        "path": path,
        "method": "GET",
        "body": None,
        "ids": str(ids),
        "authorization": None,
        "concurrency": 4,
        "requests": 40,
        "warmup": 3,
        "rate": 0.0,
        "seconds": 0.0,
    }
    values.update(overrides)
    return argparse.Namespace(**values)


async def test_warm_up_requests_are_sent_but_not_counted(tmp_path: Path) -> None:
    ids = tmp_path / "ids.json"
    ids.write_text(json.dumps([7, 8]))
    seen: list[str] = []
    server = await _server(seen)
    port = server.sockets[0].getsockname()[1]
    async with server:
        result = await run(_args(port, "/items/{id}", ids))
    assert result["requests"] == 40
    assert result["errors"] == 0
    assert len(seen) == 40 + 4 * 3
    assert set(seen) <= {"/items/7", "/items/8"}
    assert result["rps"] > 0
    assert result["p999_ms"] >= result["p99_ms"] >= result["p50_ms"] > 0
    # CPU per request counts the warm-up: the server served those too.
    assert result["warmup_requests"] == 4 * 3


async def test_error_statuses_and_dropped_connections_count_as_errors(tmp_path: Path) -> None:
    ids = tmp_path / "ids.json"
    ids.write_text(json.dumps([1]))
    seen: list[str] = []
    server = await _server(seen)
    port = server.sockets[0].getsockname()[1]
    async with server:
        result = await run(_args(port, "/missing/{id}", ids, concurrency=1, requests=5))
    assert result["requests"] == 5
    assert result["errors"] == 5

    dropped: list[str] = []
    server = await _server(dropped, close_after=10)  # during the timed phase
    port = server.sockets[0].getsockname()[1]
    async with server:
        result = await run(_args(port, "/items/{id}", ids, concurrency=1, requests=20))
    assert result["errors"] == 1  # the dropped request; the driver reconnected
    assert result["requests"] == 19


def test_a_paced_schedule_spaces_requests_evenly_from_zero() -> None:
    assert schedule(4.0, 5) == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert schedule(100.0, 0) == []
    with pytest.raises(ValueError, match="positive"):
        schedule(0.0, 3)


def test_percentiles_are_in_milliseconds_and_never_past_the_end() -> None:
    values = [i / 1000 for i in range(1, 101)]  # 1 ms to 100 ms
    assert percentile(values, 0.5) == 51.0
    assert percentile(values, 0.99) == 100.0
    assert percentile(values, 1.0) == 100.0
    assert percentile([], 0.99) == 0.0
    # p99.9 needs more than 1,000 values to be other than the slowest one.
    assert percentile(values, 0.999) == 100.0
    thousands = [i / 1000 for i in range(1, 2001)]
    assert percentile(thousands, 0.999) == 1999.0


async def test_paced_requests_go_out_on_schedule_whatever_the_answers(tmp_path: Path) -> None:
    ids = tmp_path / "ids.json"
    ids.write_text(json.dumps([1]))
    seen: list[str] = []
    server = await _server(seen)
    port = server.sockets[0].getsockname()[1]
    async with server:
        result = await run(
            _args(port, "/items/{id}", ids, concurrency=2, requests=30, warmup=1, rate=100.0)
        )
    # 30 requests at 100/s take 0.29 s from the first to the last being sent.
    assert result["requests"] == 30
    assert result["errors"] == 0
    assert result["rate"] == 100.0
    assert 60 <= result["rps"] <= 104
    assert result["max_late_ms"] < 100
    assert len(seen) == 30 + 2


async def test_a_slow_server_gets_more_connections_and_the_wait_counts(tmp_path: Path) -> None:
    """Requests due while every connection waits open new ones, and their latency runs
    from when they were due (a closed loop would have waited and hidden it)."""
    ids = tmp_path / "ids.json"
    ids.write_text(json.dumps([1]))

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                break
            await asyncio.sleep(0.05)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        result = await run(
            _args(port, "/x/{id}", ids, concurrency=1, requests=20, warmup=0, rate=200.0)
        )
    assert result["requests"] == 20
    assert result["errors"] == 0
    # One connection answers 20 a second; at 200 a second about ten are busy at once.
    assert result["extra_connections"] >= 5
    assert result["p50_ms"] >= 50


async def test_paced_requests_drop_connections_the_server_closed(tmp_path: Path) -> None:
    """A keep-alive connection the server closed while it sat idle is not used again."""
    ids = tmp_path / "ids.json"
    ids.write_text(json.dumps([1]))

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        result = await run(
            _args(port, "/x/{id}", ids, concurrency=3, requests=10, warmup=0, rate=50.0)
        )
    assert result["requests"] == 10
    assert result["errors"] == 0


async def test_a_closed_loop_with_a_time_limit_sends_nothing_after_it(tmp_path: Path) -> None:
    """A slow operation's run is cut short at ``--seconds``: what it did is counted, the
    requests it did not send are not."""
    ids = tmp_path / "ids.json"
    ids.write_text(json.dumps([1]))
    seen: list[str] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                break
            seen.append("x")
            await asyncio.sleep(0.05)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        result = await run(
            _args(port, "/x/{id}", ids, concurrency=2, requests=400, warmup=1, seconds=0.3)
        )
    # 400 requests at 20 a second per connection would take 10 s.
    assert 2 <= result["requests"] < 400
    assert result["errors"] == 0
    assert len(seen) == result["requests"] + 2
