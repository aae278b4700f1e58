"""The load driver: a separate process speaking HTTP/1.1 keep-alive over raw sockets.

It sends a fixed number of requests with a fixed number of connections and prints one
JSON line: requests per second, p50, p99, errors, and how busy the driver itself was
(its CPU time over wall time), so a reader can see it was not the bottleneck.
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


async def run(args: argparse.Namespace) -> dict[str, float]:
    url = urlparse(args.url)
    host, port = url.hostname or "127.0.0.1", url.port or 80
    ids = json.loads(Path(args.ids).read_text()) if args.ids else [0]
    body_template = args.body or ""
    headers = {"Authorization": args.authorization} if args.authorization else {}
    latencies: list[float] = []
    errors = 0
    remaining = 0
    rng = random.Random(7)

    async def worker(slot: int) -> None:
        nonlocal remaining, errors
        reader, writer = connections[slot]
        while remaining > 0:
            remaining -= 1
            item = rng.choice(ids)
            path = args.path.replace("{id}", str(item)).replace("{n}", str(remaining))
            body = body_template.replace("{id}", str(item)).replace("{n}", str(remaining)).encode()
            started = time.perf_counter()
            try:
                status = await _request(
                    reader, writer, _raw(args.method, url.netloc, path, headers, body)
                )
            except (OSError, asyncio.IncompleteReadError):
                errors += 1
                writer.close()
                reader, writer = connections[slot] = await asyncio.open_connection(host, port)
                continue
            latencies.append(time.perf_counter() - started)
            if status >= 400:
                errors += 1

    # Connections are opened, and each serves a few requests, before the clock starts:
    # what is measured is the steady state, not connection set-up or cold caches.
    connections = [await asyncio.open_connection(host, port) for _ in range(args.concurrency)]
    remaining = args.warmup * args.concurrency
    await asyncio.gather(*(worker(slot) for slot in range(args.concurrency)))
    latencies.clear()
    errors = 0
    remaining = args.requests
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    await asyncio.gather(*(worker(slot) for slot in range(args.concurrency)))
    wall = time.perf_counter() - started
    for _, writer in connections:
        writer.close()
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    latencies.sort()

    def pct(p: float) -> float:
        return (
            latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000 if latencies else 0.0
        )

    return {
        "requests": len(latencies),
        "rps": len(latencies) / wall if wall else 0.0,
        "p50_ms": pct(0.50),
        "p99_ms": pct(0.99),
        "errors": errors,
        "driver_cpu": cpu / wall if wall else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--path", required=True)
    parser.add_argument("--method", default="GET")
    parser.add_argument("--body")
    parser.add_argument("--ids")
    parser.add_argument("--authorization")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=5, help="untimed requests per connection")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args))))


if __name__ == "__main__":
    main()
