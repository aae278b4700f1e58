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


async def run(args: argparse.Namespace) -> dict[str, float]:
    url = urlparse(args.url)
    host, port = url.hostname or "127.0.0.1", url.port or 80
    ids = json.loads(Path(args.ids).read_text()) if args.ids else [0]
    rng = random.Random(7)
    ok_latencies: list[float] = []
    refused_latencies: list[float] = []
    other = 0
    broken = 0
    deadline = 0.0

    def request() -> bytes:
        path = args.path.replace("{id}", str(rng.choice(ids)))
        lines = [f"GET {path} HTTP/1.1", f"Host: {url.netloc}", "Connection: keep-alive"]
        if args.authorization:
            lines.append(f"Authorization: {args.authorization}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    async def worker(connection: tuple[asyncio.StreamReader, asyncio.StreamWriter]) -> None:
        nonlocal other, broken
        reader, writer = connection
        while time.monotonic() < deadline:
            started = time.perf_counter()
            try:
                writer.write(request())
                status, retry_after, close = await _answer(reader)
            except (OSError, asyncio.IncompleteReadError, ValueError):
                broken += 1
                writer.close()
                try:
                    reader, writer = await asyncio.open_connection(host, port)
                except OSError:
                    await asyncio.sleep(0.1)
                continue
            elapsed = time.perf_counter() - started
            if status == 200:
                ok_latencies.append(elapsed)
            elif status == 429:
                refused_latencies.append(elapsed)
                if args.mode == "polite":
                    await asyncio.sleep(min(retry_after, max(0.0, deadline - time.monotonic())))
            else:
                other += 1
            if close:
                writer.close()
                reader, writer = await asyncio.open_connection(host, port)

    connections = []
    for _ in range(args.connections):
        connections.append(await asyncio.open_connection(host, port))
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.monotonic()
    deadline = started + args.seconds
    # Requests still waiting at the deadline are abandoned, not waited for: what counts
    # is what the server completed within the time.
    workers = [asyncio.create_task(worker(c)) for c in connections]
    await asyncio.wait(workers, timeout=args.seconds)
    wall = time.monotonic() - started
    counted = len(ok_latencies), len(refused_latencies)
    for task in workers:
        task.cancel()
    await asyncio.gather(*workers, return_exceptions=True)
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)

    def pct(values: list[float], p: float) -> float:
        values.sort()
        return values[min(len(values) - 1, int(p * len(values)))] * 1000 if values else 0.0

    return {
        "connections": args.connections,
        "mode": args.mode,
        "seconds": wall,
        "ok_per_s": counted[0] / wall,
        "refused_per_s": counted[1] / wall,
        "ok_p50_ms": pct(ok_latencies, 0.5),
        "ok_p99_ms": pct(ok_latencies, 0.99),
        "refused_p50_ms": pct(refused_latencies, 0.5),
        "other_errors": other,
        "broken_connections": broken,
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
