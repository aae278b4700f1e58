"""The overload driver: many keep-alive connections for a fixed time, counting successes
and 429s, as a separate process (one JSON line, like ``bench.load``).

``--mode naive`` sends the next request as soon as an answer arrives, 429 or not;
``--mode polite`` waits the 429's ``Retry-After`` first. A connection the server closes is
reopened. ``capacity`` runs the same driver with as many connections as the server has
slots, the throughput the overload runs are judged against.

python -m bench.overload --url http://127.0.0.1:8080 --path /rest/v1/items/{id} \
    --authorization "Basic ..." --connections 1024 --seconds 15 --mode naive

With ``--start embedded|distributed`` it starts that topology itself, seeds ``--items``
items and runs the sweep issue 25 judges the front door by: 32 connections, then 1,024
that do not back off (and, with ``--polite``, 1,024 that honour ``Retry-After``), then
prints the figures and the verdict against the targets:

python -m bench.overload --start embedded --items 2000 --seconds 10

A naive client that comes back before its ``Retry-After`` is held by the server until
then (``docs/gateway.md``): the driver knows when it was told to come back, so it reports
each answer's time both as the client saw it and without that earned hold (the server's
own time on the request: its wait for a slot and its handling).

Two probes say where a refusal's time goes: a canary thread asks the server's
``/healthz`` (no admission, no authentication: the cheapest answer the process gives)
every ``CANARY_INTERVAL`` on a connection of its own, and a task in the driver's loop
measures how late that loop runs a timer (the driver's own share of every latency).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import http.client
import json
import random
import resource
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

#: Issue 25's targets: goodput at 1,024 connections against 32, admitted p99 (ms),
#: refusal p99 (ms).
GOODPUT_RATIO = 0.8
ADMITTED_P99_MS = 1000.0
REFUSED_P99_MS = 10.0
#: The wait limit (PLUMBLINE_THROTTLE_TIMEOUT's default), seconds.
WAIT_LIMIT = 10.0
#: Seconds between the canary's ``/healthz`` requests, and between the driver's timer
#: probes.
CANARY_INTERVAL = 0.05
PROBE_INTERVAL = 0.01


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
    came back: latencies of successes and of refusals (as seen, and without the hold a
    client earned by coming back early), other answers, broken connections."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.url = urlparse(args.url)
        self.host, self.port = self.url.hostname or "127.0.0.1", self.url.port or 80
        self.ids = json.loads(Path(args.ids).read_text()) if args.ids else [0]
        self.rng = random.Random(7)
        self.ok_latencies: list[float] = []
        self.ok_served: list[float] = []
        self.refused_latencies: list[float] = []
        self.refused_served: list[float] = []
        self.retry_afters: list[float] = []
        # Requests sent once a Retry-After had passed (waited out by the client or held
        # by the server), and how many of them succeeded: whether Retry-After was honest.
        self.retried = 0
        self.retried_ok = 0
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
        # When this connection was told it may come back (0: never refused yet).
        told_until = 0.0
        while time.monotonic() < self.deadline:
            sent = time.monotonic()
            started = time.perf_counter()
            try:
                writer.write(self.request())
                status, retry_after, close = await _answer(reader)
            except (OSError, asyncio.IncompleteReadError, ValueError):
                self.broken += 1
                writer.close()
                told_until = 0.0  # the server holds connections, not clients
                try:
                    reader, writer = await self.connect()
                except OSError:
                    await asyncio.sleep(0.1)
                continue
            elapsed = time.perf_counter() - started
            hold = max(0.0, told_until - sent)
            if told_until:
                self.retried += 1
                self.retried_ok += status == 200
                told_until = 0.0
            if status == 429:
                told_until = time.monotonic() + retry_after
            await self.count(status, retry_after, elapsed, max(0.0, elapsed - hold))
            if close:
                writer.close()
                told_until = 0.0
                reader, writer = await self.connect()

    async def count(self, status: int, retry_after: float, elapsed: float, served: float) -> None:
        """Counts one answer; a polite client waits as long as a refusal asks."""
        if status == 200:
            self.ok_latencies.append(elapsed)
            self.ok_served.append(served)
        elif status == 429:
            self.refused_latencies.append(elapsed)
            self.refused_served.append(served)
            self.retry_afters.append(retry_after)
            if self.args.mode == "polite":
                await asyncio.sleep(min(retry_after, max(0.0, self.deadline - time.monotonic())))
        else:
            self.other += 1


class _Canary(threading.Thread):
    """``GET /healthz`` every ``CANARY_INTERVAL`` on its own connection until stopped:
    the time the server takes to give its cheapest answer while the flood runs."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(daemon=True)
        self.host, self.port = host, port
        self.latencies: list[float] = []
        self.failures = 0
        self.stopping = threading.Event()

    def run(self) -> None:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        while not self.stopping.wait(CANARY_INTERVAL):
            started = time.perf_counter()
            try:
                connection.request("GET", "/healthz")
                connection.getresponse().read()
            except (OSError, http.client.HTTPException):
                self.failures += 1
                connection.close()
                connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
                continue
            self.latencies.append(time.perf_counter() - started)
        connection.close()


async def _probe(late: list[float], until: float) -> None:
    """How late the driver's own loop runs a timer, every ``PROBE_INTERVAL``."""
    loop = asyncio.get_running_loop()
    while loop.time() < until:
        due = loop.time() + PROBE_INTERVAL
        await asyncio.sleep(PROBE_INTERVAL)
        late.append(max(0.0, loop.time() - due))


def _pct(values: list[float], p: float) -> float:
    values.sort()
    return values[min(len(values) - 1, int(p * len(values)))] * 1000 if values else 0.0


async def run(args: argparse.Namespace) -> dict[str, Any]:
    load = _Overload(args)
    connections = []
    for _ in range(args.connections):
        connections.append(await load.connect())
    canary = _Canary(load.host, load.port)
    late: list[float] = []
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.monotonic()
    load.deadline = started + args.seconds
    # Requests still waiting at the deadline are abandoned, not waited for: what counts
    # is what the server completed within the time.
    workers = [asyncio.create_task(load.worker(c)) for c in connections]
    canary.start()
    probe = asyncio.create_task(_probe(late, asyncio.get_running_loop().time() + args.seconds))
    await asyncio.wait(workers, timeout=args.seconds)
    wall = time.monotonic() - started
    canary.stopping.set()
    probe.cancel()
    counted = len(load.ok_latencies), len(load.refused_latencies)
    for task in workers:
        task.cancel()
    await asyncio.gather(*workers, return_exceptions=True)
    for _, writer in connections:
        writer.close()
    await asyncio.to_thread(canary.join, 35)
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    answered = load.ok_latencies + load.refused_latencies
    return {
        "connections": args.connections,
        "mode": args.mode,
        "seconds": wall,
        "ok_per_s": counted[0] / wall,
        "refused_per_s": counted[1] / wall,
        "ok_p50_ms": _pct(load.ok_latencies, 0.5),
        "ok_p99_ms": _pct(load.ok_latencies, 0.99),
        "ok_served_p99_ms": _pct(load.ok_served, 0.99),
        "refused_p50_ms": _pct(load.refused_latencies, 0.5),
        "refused_p99_ms": _pct(load.refused_latencies, 0.99),
        "refused_served_p50_ms": _pct(load.refused_served, 0.5),
        "refused_served_p99_ms": _pct(load.refused_served, 0.99),
        "max_wait_ms": max(answered, default=0.0) * 1000,
        "retry_after_p50_s": _pct(load.retry_afters, 0.5) / 1000,
        "retry_after_max_s": max(load.retry_afters, default=0.0),
        "retried_ok_share": load.retried_ok / load.retried if load.retried else None,
        "other_errors": load.other,
        "broken_connections": load.broken,
        "driver_cpu": cpu / wall,
        "healthz_p50_ms": _pct(canary.latencies, 0.5),
        "healthz_p99_ms": _pct(canary.latencies, 0.99),
        "healthz_failures": canary.failures,
        "driver_late_p99_ms": _pct(late, 0.99),
    }


# -- the sweep: a system of its own, 32 then 1,024 connections, and the verdict ----------


def wait_idle(url: str, quiet_for: float = 1.0, timeout: float = 60.0) -> None:
    """Waits until the gateway that answers has nothing queued or in flight for
    ``quiet_for`` seconds: requests abandoned at a run's deadline are still served, and
    would count against the next run."""
    import httpx

    deadline = time.monotonic() + timeout
    quiet_since: float | None = None
    while time.monotonic() < deadline:
        text = httpx.get(f"{url}/metrics", timeout=10).text
        busy = any(
            line.startswith(("plumbline_http_in_flight ", "plumbline_http_queued "))
            and float(line.split()[-1]) > 0
            for line in text.splitlines()
        )
        now = time.monotonic()
        quiet_since = None if busy else (quiet_since or now)
        if quiet_since is not None and now - quiet_since >= quiet_for:
            return
        time.sleep(0.2)


def _seed(items_address: str, count: int, ids: Path) -> None:
    """``count`` items through the bulk import (``bench.seed``); the last 2,000 leaves'
    ids into ``ids``."""
    from bench.seed import Seeder

    async def seed() -> None:
        seeder = Seeder(items_address)
        await seeder.start()
        await seeder.grow_to(count)
        ids.write_text(json.dumps(seeder.data.leaves[-2000:]))
        await seeder.close()

    asyncio.run(seed())


def verdict(results: list[dict[str, Any]], wait_limit: float) -> list[tuple[str, Any, str, bool]]:
    """(what, measured, target, met) for the 1,024-connection naive run against the
    32-connection one."""
    base, flood = results[0], results[1]
    ratio = flood["ok_per_s"] / base["ok_per_s"] if base["ok_per_s"] else 0.0
    honest = flood["retried_ok_share"]
    return [
        ("goodput 1024 / 32", round(ratio, 2), f">= {GOODPUT_RATIO}", ratio >= GOODPUT_RATIO),
        (
            "admitted p99, ms (hold excluded)",
            round(flood["ok_served_p99_ms"]),
            f"< {ADMITTED_P99_MS:.0f}",
            flood["ok_served_p99_ms"] < ADMITTED_P99_MS,
        ),
        (
            "429 p99, ms (hold excluded)",
            round(flood["refused_served_p99_ms"], 1),
            f"< {REFUSED_P99_MS:.0f}",
            flood["refused_served_p99_ms"] < REFUSED_P99_MS,
        ),
        (
            "longest answer, s (hold included)",
            round(flood["max_wait_ms"] / 1000, 2),
            f"<= wait limit {wait_limit:g}",
            flood["max_wait_ms"] <= wait_limit * 1000,
        ),
        (
            "Retry-After max, s",
            flood["retry_after_max_s"],
            f"1 to {wait_limit:g}",
            1 <= flood["retry_after_max_s"] <= wait_limit or not flood["refused_per_s"],
        ),
        (
            "retries after Retry-After that succeed",
            None if honest is None else round(honest, 2),
            "reported",
            True,
        ),
    ]


def sweep_table(results: list[dict[str, Any]]) -> str:
    """The sweep's runs, one line each."""
    header = (
        f"{'mode':7} {'conns':>5} {'ok/s':>6} {'429/s':>6} {'ok p50':>7} {'ok p99':>7} "
        f"{'ok p99*':>7} {'429 p99':>7} {'429 p99*':>8} {'max s':>6} {'RA p50':>6} "
        f"{'RA max':>6} {'retry ok':>8} {'other':>5} {'hz p99':>7} {'drv late':>8}"
    )
    lines = [header, "-" * len(header)]
    for r in results:
        share = r["retried_ok_share"]
        lines.append(
            f"{r['mode']:7} {r['connections']:>5} {r['ok_per_s']:>6.0f} {r['refused_per_s']:>6.0f} "
            f"{r['ok_p50_ms']:>7.1f} {r['ok_p99_ms']:>7.1f} {r['ok_served_p99_ms']:>7.1f} "
            f"{r['refused_p99_ms']:>7.1f} {r['refused_served_p99_ms']:>8.1f} "
            f"{r['max_wait_ms'] / 1000:>6.2f} {r['retry_after_p50_s']:>6.0f} "
            f"{r['retry_after_max_s']:>6.0f} {'-' if share is None else f'{share:.2f}':>8} "
            f"{r['other_errors'] + r['broken_connections']:>5} "
            f"{r.get('healthz_p99_ms', 0.0):>7.1f} {r.get('driver_late_p99_ms', 0.0):>8.1f}"
        )
    lines.append("(* without the hold a client earned by coming back before its Retry-After)")
    lines.append(
        "(hz p99: the server's /healthz on a connection of its own during the run; "
        "drv late: how late the driver's own loop ran a timer, p99 ms)"
    )
    return "\n".join(lines)


def sweep(args: argparse.Namespace) -> dict[str, Any]:
    """Starts the topology, seeds, runs 32 and 1,024 connections (and polite 1,024 with
    ``--polite``), stops it; the figures and the verdict."""
    from tests.e2e.topology import cleanup_distributed, start_distributed, start_embedded

    with tempfile.TemporaryDirectory(prefix="plumbline-overload-") as tmp:
        workdir = Path(tmp)
        start = start_embedded if args.start == "embedded" else start_distributed
        system = start(workdir)
        try:
            items = next(p for p in system.processes if p.name in ("all", "items"))
            ids = workdir / "ids.json"
            _seed(f"127.0.0.1:{items.grpc_port}", args.items, ids)
            password = system.admin_password
            basic = "Basic " + base64.b64encode(f"admin:{password}".encode()).decode()
            runs = [(32, "naive"), (1024, "naive")] + ([(1024, "polite")] if args.polite else [])
            results = []
            # Uncounted: the first seconds after seeding warm the caches and connections.
            warm = argparse.Namespace(
                url=system.url,
                path="/rest/v1/items/{id}",
                ids=str(ids),
                authorization=basic,
                connections=32,
                seconds=args.warmup,
                mode="naive",
            )
            asyncio.run(run(warm))
            for connections, mode in runs:
                wait_idle(system.url)
                one = argparse.Namespace(
                    url=system.url,
                    path="/rest/v1/items/{id}",
                    ids=str(ids),
                    authorization=basic,
                    connections=connections,
                    seconds=args.seconds,
                    mode=mode,
                )
                results.append(asyncio.run(run(one)))
                print(json.dumps(results[-1]), flush=True)
        finally:
            system.stop()
            if args.start == "distributed":
                cleanup_distributed(system)
    verdicts = verdict(results, args.wait_limit)
    print(f"\noverload GET /items/{{id}}, {args.start}, {args.items} items\n")
    print(sweep_table(results))
    print()
    for what, measured, target, met in verdicts:
        print(f"{what:42} {measured!s:>8}  target {target:22} {'met' if met else 'NOT MET'}")
    return {
        "topology": args.start,
        "items": args.items,
        "runs": results,
        "verdict": [{"what": w, "measured": m, "target": t, "met": ok} for w, m, t, ok in verdicts],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url")
    parser.add_argument("--path")
    parser.add_argument("--ids")
    parser.add_argument("--authorization")
    parser.add_argument("--connections", type=int, default=1024)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--mode", choices=["naive", "polite"], default="naive")
    parser.add_argument(
        "--start",
        choices=["embedded", "distributed"],
        help="start this topology, seed it and run the 32 / 1,024 sweep with a verdict",
    )
    parser.add_argument("--items", type=int, default=2000, help="items seeded (--start)")
    parser.add_argument(
        "--warmup", type=float, default=3.0, help="uncounted seconds at 32 first (--start)"
    )
    parser.add_argument("--polite", action="store_true", help="also 1,024 polite (--start)")
    parser.add_argument(
        "--wait-limit", type=float, default=WAIT_LIMIT, help="the server's, seconds (--start)"
    )
    parser.add_argument("--json", type=Path, help="where to write the sweep's figures (--start)")
    args = parser.parse_args()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if args.start:
        figures = sweep(args)
        if args.json:
            args.json.write_text(json.dumps(figures, indent=2))
        return
    if not (args.url and args.path):
        parser.error("--url and --path are needed unless --start is given")
    print(json.dumps(asyncio.run(run(args))))


if __name__ == "__main__":
    main()
