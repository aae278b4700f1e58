"""The overload driver: many keep-alive connections for a fixed time, counting successes
and 429s, as a separate process (one JSON line, like ``bench.load``).

``--mode naive`` sends the next request as soon as an answer arrives, 429 or not;
``--mode polite`` waits the 429's ``Retry-After`` first. A connection the server closes is
reopened. ``capacity`` runs the same driver with as many connections as the server has
slots, the throughput the overload runs are judged against.

python -m bench.overload --url http://127.0.0.1:8080 --path /rest/v1/items/{id} \
    --authorization "Basic ..." --connections 1024 --seconds 15 --mode naive
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import time
from pathlib import Path
from urllib.parse import urlparse


async def _answer(reader: asyncio.StreamReader) -> tuple[int, float, bool]:
    """Status, Retry-After (0 when absent) and whether the server will close."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ")[1])
    length, retry_after, close = 0, 0.0, False
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"retry-after":
            retry_after = float(value)
        elif name == b"connection" and value.strip().lower() == b"close":
            close = True
    if length:
        await reader.readexactly(length)
    return status, retry_after, close


class _Overload:
    """Many connections sending one request after another until the deadline, and what
    came back: latencies of successes and of refusals, other answers, broken connections."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.url = urlparse(args.url)
        self.host, self.port = self.url.hostname or "127.0.0.1", self.url.port or 80
        self.ids = json.loads(Path(args.ids).read_text()) if args.ids else [0]
        self.rng = random.Random(7)
        self.ok_latencies: list[float] = []
        self.refused_latencies: list[float] = []
        self.other = 0
        self.broken = 0
        self.deadline = 0.0

    def request(self) -> bytes:
        path = self.args.path.replace("{id}", str(self.rng.choice(self.ids)))
        lines = [f"GET {path} HTTP/1.1", f"Host: {self.url.netloc}", "Connection: keep-alive"]
        if self.args.authorization:
            lines.append(f"Authorization: {self.args.authorization}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    async def connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_connection(self.host, self.port)

    async def worker(self, connection: tuple[asyncio.StreamReader, asyncio.StreamWriter]) -> None:
        reader, writer = connection
        while time.monotonic() < self.deadline:
            started = time.perf_counter()
            try:
                writer.write(self.request())
                status, retry_after, close = await _answer(reader)
            except (OSError, asyncio.IncompleteReadError, ValueError):
                self.broken += 1
                writer.close()
                try:
                    reader, writer = await self.connect()
                except OSError:
                    await asyncio.sleep(0.1)
                continue
            await self.count(status, retry_after, time.perf_counter() - started)
            if close:
                writer.close()
                reader, writer = await self.connect()

    async def count(self, status: int, retry_after: float, elapsed: float) -> None:
        """Counts one answer; a polite client waits as long as a refusal asks."""
        if status == 200:
            self.ok_latencies.append(elapsed)
        elif status == 429:
            self.refused_latencies.append(elapsed)
            if self.args.mode == "polite":
                await asyncio.sleep(min(retry_after, max(0.0, self.deadline - time.monotonic())))
        else:
            self.other += 1


def _pct(values: list[float], p: float) -> float:
    values.sort()
    return values[min(len(values) - 1, int(p * len(values)))] * 1000 if values else 0.0


async def run(args: argparse.Namespace) -> dict[str, float]:
    load = _Overload(args)
    connections = []
    for _ in range(args.connections):
        connections.append(await load.connect())
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.monotonic()
    load.deadline = started + args.seconds
    # Requests still waiting at the deadline are abandoned, not waited for: what counts
    # is what the server completed within the time.
    workers = [asyncio.create_task(load.worker(c)) for c in connections]
    await asyncio.wait(workers, timeout=args.seconds)
    wall = time.monotonic() - started
    counted = len(load.ok_latencies), len(load.refused_latencies)
    for task in workers:
        task.cancel()
    await asyncio.gather(*workers, return_exceptions=True)
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    return {
        "connections": args.connections,
        "mode": args.mode,
        "seconds": wall,
        "ok_per_s": counted[0] / wall,
        "refused_per_s": counted[1] / wall,
        "ok_p50_ms": _pct(load.ok_latencies, 0.5),
        "ok_p99_ms": _pct(load.ok_latencies, 0.99),
        "refused_p50_ms": _pct(load.refused_latencies, 0.5),
        "other_errors": load.other,
        "broken_connections": load.broken,
        "driver_cpu": cpu / wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--path", required=True)
    parser.add_argument("--ids")
    parser.add_argument("--authorization")
    parser.add_argument("--connections", type=int, default=1024)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--mode", choices=["naive", "polite"], default="naive")
    args = parser.parse_args()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(json.dumps(asyncio.run(run(args))))


if __name__ == "__main__":
    main()
