"""The load driver: a separate process speaking HTTP/1.1 keep-alive over raw sockets.

Closed loop (the default): a fixed number of requests over a fixed number of
connections, each sending its next request when the answer to the last arrives; with
``--seconds S``, no request is sent after S seconds (a slow operation's run is cut
short, its rate and percentiles taken over what it did).
Paced (``--rate R``, open loop): request i is sent at i / R seconds, whether or not earlier
ones were answered; a request that finds every connection busy opens another, and its
latency runs from the moment it was due, so a server that falls behind shows in the
percentiles instead of slowing the sender (no coordinated omission).

Either prints one JSON line: requests per second, p50, p99, p99.9, errors, the untimed
warm-up requests sent first, and how busy the driver itself was (its CPU time over wall time), so a reader can see it was not the
bottleneck.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import time
from collections import Counter, deque
from pathlib import Path
from typing import Any
from urllib.parse import urlparse


async def _request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: bytes) -> int:
    writer.write(raw)
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ")[1])
    length = 0
    for line in lines[1:]:
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    if length:
        await reader.readexactly(length)
    return status


def _raw(method: str, host: str, path: str, headers: dict[str, str], body: bytes) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", "Connection: keep-alive"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if body:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def schedule(rate: float, count: int) -> list[float]:
    """When each of ``count`` paced requests is due, in seconds from the start."""
    if rate <= 0:
        raise ValueError(f"the rate must be positive, got {rate}")
    return [i / rate for i in range(count)]


def percentile(sorted_values: list[float], p: float) -> float:
    """The value at fraction ``p`` of ``sorted_values`` (seconds), in milliseconds."""
    if not sorted_values:
        return 0.0
    return sorted_values[min(len(sorted_values) - 1, int(p * len(sorted_values)))] * 1000


Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class _Load:
    """The requests of one run, and what came back: latencies, and failed requests by
    kind (an HTTP status of 400 or more, or "broken" for a connection)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.url = urlparse(args.url)
        self.host, self.port = self.url.hostname or "127.0.0.1", self.url.port or 80
        self.ids = json.loads(Path(args.ids).read_text()) if args.ids else [0]
        self.body_template = args.body or ""
        self.headers = {"Authorization": args.authorization} if args.authorization else {}
        self.latencies: list[float] = []
        self.failures: Counter[str] = Counter()
        self.rng = random.Random(7)
        #: Requests left to the closed loop's connections, and when it sends no more.
        self.remaining = 0
        self.deadline = float("inf")
        #: The paced run's idle connections (longest idle first), how many it opened.
        self.idle: deque[Connection] = deque()
        self.opened = 0

    def request(self, n: int) -> bytes:
        """Request ``n``: the path and body with a random id and ``n`` filled in."""
        item = self.rng.choice(self.ids)
        path = self.args.path.replace("{id}", str(item)).replace("{n}", str(n))
        body = self.body_template.replace("{id}", str(item)).replace("{n}", str(n)).encode()
        return _raw(self.args.method, self.url.netloc, path, self.headers, body)

    async def connect(self) -> Connection:
        return await asyncio.open_connection(self.host, self.port)

    async def closed_loop(self, connections: list[Connection], slot: int) -> None:
        """Sends the next request on connection ``slot`` when the last is answered, until
        none remain; a broken connection is replaced."""
        reader, writer = connections[slot]
        while self.remaining > 0 and time.perf_counter() < self.deadline:
            self.remaining -= 1
            started = time.perf_counter()
            try:
                status = await _request(reader, writer, self.request(self.remaining))
            except (OSError, asyncio.IncompleteReadError):
                self.failures["broken"] += 1
                writer.close()
                reader, writer = connections[slot] = await self.connect()
                continue
            self.latencies.append(time.perf_counter() - started)
            if status >= 400:
                self.failures[str(status)] += 1

    async def paced(self, n: int, due: float) -> None:
        """Request ``n``, due at ``due``: on an idle connection, or a new one."""
        raw = self.request(n)
        # The longest idle connection first: each stays in use, so none reaches the
        # server's keep-alive timeout; one the server closed anyway is dropped.
        while self.idle and self.idle[0][0].at_eof():
            self.idle.popleft()[1].close()
        if self.idle:
            reader, writer = self.idle.popleft()
        else:
            self.opened += 1
            try:
                reader, writer = await self.connect()
            except OSError:
                self.failures["broken"] += 1
                return
        try:
            status = await _request(reader, writer, raw)
        except (OSError, asyncio.IncompleteReadError):
            self.failures["broken"] += 1
            writer.close()
            return
        self.latencies.append(time.perf_counter() - due)
        self.idle.append((reader, writer))
        if status >= 400:
            self.failures[str(status)] += 1

    async def on_schedule(self, started: float) -> float:
        """Sends every paced request when it is due; how late the latest was sent."""
        late = 0.0
        pending = []
        for n, offset in enumerate(schedule(self.args.rate, self.args.requests)):
            due = started + offset
            wait = due - time.perf_counter()
            if wait > 0:
                await asyncio.sleep(wait)
            late = max(late, time.perf_counter() - due)
            pending.append(asyncio.create_task(self.paced(n, due)))
        await asyncio.gather(*pending)
        return late


async def run(args: argparse.Namespace) -> dict[str, Any]:
    load = _Load(args)
    # Connections are opened, and each serves a few requests, before the clock starts:
    # what is measured is the steady state, not connection set-up or cold caches.
    connections = [await load.connect() for _ in range(args.concurrency)]
    load.remaining = args.warmup * args.concurrency
    await asyncio.gather(*(load.closed_loop(connections, slot) for slot in range(args.concurrency)))
    load.latencies.clear()
    load.failures.clear()
    load.idle.extend(connections)
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    late = 0.0
    if args.rate:
        late = await load.on_schedule(started)
        connections = list(load.idle)
    else:
        load.remaining = args.requests
        if args.seconds:
            load.deadline = started + args.seconds
        await asyncio.gather(
            *(load.closed_loop(connections, slot) for slot in range(args.concurrency))
        )
    wall = time.perf_counter() - started
    for _, writer in connections:
        writer.close()
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    latencies = sorted(load.latencies)
    result: dict[str, Any] = {
        "requests": len(latencies),
        "rps": len(latencies) / wall if wall else 0.0,
        "p50_ms": percentile(latencies, 0.50),
        "p99_ms": percentile(latencies, 0.99),
        # Below 1,000 requests this is the slowest one.
        "p999_ms": percentile(latencies, 0.999),
        "errors": sum(load.failures.values()),
        "error_kinds": dict(load.failures),
        "driver_cpu": cpu / wall if wall else 0.0,
        # Served too, before the clock started: CPU per request counts them.
        "warmup_requests": args.warmup * args.concurrency,
    }
    if args.rate:
        # Connections opened because every other was busy, and how late the driver
        # itself sent the latest request (a late sender would flatter the server).
        result.update(rate=args.rate, extra_connections=load.opened, max_late_ms=late * 1000)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--path", required=True)
    parser.add_argument("--method", default="GET")
    parser.add_argument("--body")
    parser.add_argument("--ids")
    parser.add_argument("--authorization")
    parser.add_argument(
        "--concurrency", type=int, default=1, help="connections (paced: those opened first)"
    )
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument(
        "--seconds",
        type=float,
        default=0.0,
        help="closed loop: send no request after this many seconds (0: none)",
    )
    parser.add_argument("--warmup", type=int, default=5, help="untimed requests per connection")
    parser.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="paced: requests per second, sent on schedule whatever the answers",
    )
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args))))


if __name__ == "__main__":
    main()
