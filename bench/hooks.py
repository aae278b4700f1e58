"""``make bench``'s webhook delivery rows (``make bench ONLY=hooks``, issue 26).

A receiver in this process (``Receiver``: asyncio, HTTP/1.1 keep-alive, answers 200 at
once) takes the deliveries of webhooks of one project. Then:

1. **latency**: one webhook; changes are written at ``RATE`` a second for ``SECONDS``
   seconds (a bulk import of ``RATE / 4`` items every quarter second); each delivery's
   latency is its arrival here less the change's time (the event's, taken in the
   writer's transaction): p50, p99, max;
2. **a dead receiver beside it**: the same again with a second webhook whose URL is a
   closed port (its deliveries fail and back off all along): the healthy one's p99 with
   the dead one over its p99 without (a machine's drift between two runs is about 10%);
3. **throughput**: ``WEBHOOKS`` webhooks, paused while ``BACKLOG`` changes are written,
   then made active together: deliveries a second until every webhook has every change
   (or ``DRAIN_LIMIT`` seconds); each delivery carrying the changed record (read through
   the API as the owner), then again without it;
4. **long poll**: ``POLLS`` times, a ``GET /rest/labs/events?wait=20`` waits while an
   item is renamed; from the rename's answer to the poll's (the change travels by event
   to the change feed).
"""

from __future__ import annotations

import asyncio
import statistics
import threading
import time
from datetime import datetime
from typing import Any

import httpx
import orjson

from bench.drive import wait_for_feed
from tests.e2e.topology import System

RATE = 200
SECONDS = 6.0
WEBHOOKS = 8
BACKLOG = 1_000
DRAIN_LIMIT = 120.0
POLLS = 20
#: Targets: p99 from commit to delivery at ``RATE`` changes a second; deliveries a
#: second with many webhooks (distributed); a dead receiver's cost to the others.
LATENCY_P99_S = 1.0
DELIVERIES_PER_S = 1_000.0
DEAD_COST = 1.25
LONG_POLL_S = 0.1


class Receiver:
    """An HTTP server on 127.0.0.1 that answers every POST 200 and keeps, per path,
    (arrival, the change's time, its cursor) of each delivery."""

    def __init__(self) -> None:
        self.arrivals: dict[str, list[tuple[float, float, int]]] = {}
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(10)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._connection, "127.0.0.1", 0)
        )
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                arrived = time.time()
                lines = head.decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1]
                length = next(
                    int(line.split(":", 1)[1])
                    for line in lines[1:]
                    if line.lower().startswith("content-length:")
                )
                body = orjson.loads(await reader.readexactly(length))
                data = body["data"]
                changed = datetime.strptime(data["time"], "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
                self.arrivals.setdefault(path, []).append((arrived, changed, data["cursor"]))
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def count(self, path: str) -> int:
        return len(self.arrivals.get(path, []))

    def stop(self) -> None:
        """Ends every connection, then the loop."""

        async def shutdown() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._loop.stop()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop)
        self._thread.join(10)
        self._loop.close()


def _webhook(
    client: httpx.Client, url: str, project: int, active: bool = True, record: bool = True
) -> int:
    response = client.post(
        "/rest/labs/webhooks",
        json={"url": url, "projects": [project], "active": active, "includeObject": record},
    )
    response.raise_for_status()
    return int(response.json()["meta"]["id"])


def _import(client: httpx.Client, project: int, req_type: int, count: int, n: int) -> None:
    lines = "".join(
        f'{{"itemType": {req_type}, "fields": {{"name": "Hooked {n}.{k}"}}}}\n'
        for k in range(count)
    )
    response = client.post(
        f"/rest/labs/projects/{project}/import",
        content=lines.encode(),
        headers={"Content-Type": "application/x-ndjson"},
    )
    response.raise_for_status()


def _write_at_rate(client: httpx.Client, project: int, req_type: int) -> tuple[int, float]:
    """``RATE`` changes a second for ``SECONDS``; how many were written and the rate
    reached (an import that takes longer than its quarter second falls behind)."""
    each = RATE // 4
    started = time.monotonic()
    written = 0
    for n in range(int(SECONDS * 4)):
        due = started + n / 4
        pause = due - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        _import(client, project, req_type, each, n)
        written += each
    return written, written / (time.monotonic() - started)


def _latency(receiver: Receiver, path: str, expected: int, seconds: float = 60.0) -> dict[str, Any]:
    """Waits for ``expected`` deliveries at ``path``; their latency figures."""
    deadline = time.monotonic() + seconds
    while receiver.count(path) < expected and time.monotonic() < deadline:
        time.sleep(0.1)
    got = list(receiver.arrivals.get(path, []))
    latencies = sorted(max(0.0, arrived - changed) for arrived, changed, _ in got)
    cursors = [cursor for _, _, cursor in got]
    return {
        "delivered": len(got),
        "expected": expected,
        "in_order": cursors == sorted(cursors),
        "p50_s": statistics.median(latencies) if latencies else None,
        "p99_s": latencies[int(0.99 * (len(latencies) - 1))] if latencies else None,
        "max_s": latencies[-1] if latencies else None,
    }


def measure(system: System, auth: str, req_type: int) -> dict[str, Any]:
    """Every delivery figure in one dict."""
    out: dict[str, Any] = {}
    receiver = Receiver()
    receiver.start()
    client = httpx.Client(base_url=system.url, headers={"Authorization": auth}, timeout=120)
    try:
        project = _new_project(client, "HOOKS")
        _webhook(client, receiver.url("/alone"), project)
        written, rate = _write_at_rate(client, project, req_type)
        out["latency"] = {"written": written, "rate": rate, **_latency(receiver, "/alone", written)}
        print(f"webhook latency alone: {out['latency']}", flush=True)

        project = _new_project(client, "HOOKSDEAD")
        _webhook(client, receiver.url("/beside"), project)
        dead = _webhook(client, "http://127.0.0.1:9/dead", project)
        written, rate = _write_at_rate(client, project, req_type)
        out["beside_dead"] = {
            "written": written,
            "rate": rate,
            **_latency(receiver, "/beside", written),
        }
        client.patch(f"/rest/labs/webhooks/{dead}", json={"active": False}).raise_for_status()
        print(f"webhook latency beside a dead one: {out['beside_dead']}", flush=True)

        out["throughput"] = _throughput(system, client, receiver, req_type, auth)
        print(f"webhook throughput: {out['throughput']}", flush=True)
        out["throughput_bare"] = _throughput(system, client, receiver, req_type, auth, record=False)
        print(f"webhook throughput without the record: {out['throughput_bare']}", flush=True)
        out["long_poll"] = _long_poll(system, client, req_type, auth)
        print(f"long poll: {out['long_poll']}", flush=True)
    finally:
        client.close()
        receiver.stop()
    return out


def _new_project(client: httpx.Client, prefix: str) -> int:
    key = f"{prefix}{int(time.time() * 1000) % 10**6}"
    response = client.post(
        "/rest/v1/projects",
        json={"projectKey": key, "fields": {"name": key}},
    )
    response.raise_for_status()
    return int(response.json()["meta"]["id"])


def _throughput(
    system: System,
    client: httpx.Client,
    receiver: Receiver,
    req_type: int,
    auth: str,
    record: bool = True,
) -> dict[str, Any]:
    project = _new_project(client, "HOOKSMANY")
    where = f"/many{'' if record else '-bare'}"
    hooks = [
        _webhook(client, receiver.url(f"{where}/{n}"), project, active=False, record=record)
        for n in range(WEBHOOKS)
    ]
    for n in range(BACKLOG // 250):
        _import(client, project, req_type, 250, n)
    wait_for_feed(system.url, project, auth)
    # The change feed holds the backlog (a read waits for it to catch up).
    client.get("/rest/labs/events", params={"project": project, "limit": 1}).raise_for_status()
    started = time.monotonic()
    for hook in hooks:
        client.patch(f"/rest/labs/webhooks/{hook}", json={"active": True}).raise_for_status()
    paths = [f"{where}/{n}" for n in range(WEBHOOKS)]
    total = WEBHOOKS * BACKLOG
    while time.monotonic() - started < DRAIN_LIMIT:
        if sum(receiver.count(p) for p in paths) >= total:
            break
        time.sleep(0.05)
    seconds = time.monotonic() - started
    delivered = sum(receiver.count(p) for p in paths)
    for hook in hooks:
        client.delete(f"/rest/labs/webhooks/{hook}")
    return {
        "webhooks": WEBHOOKS,
        "backlog": BACKLOG,
        "delivered": delivered,
        "seconds": seconds,
        "per_second": delivered / seconds if seconds else 0.0,
    }


def _long_poll(system: System, client: httpx.Client, req_type: int, auth: str) -> dict[str, Any]:
    """Seconds from a change's write answered to a waiting long poll's answer."""
    project = _new_project(client, "HOOKSPOLL")
    response = client.post(
        "/rest/v1/items",
        json={"project": project, "itemType": req_type, "fields": {"name": "Polled"}},
    )
    response.raise_for_status()
    item = int(response.json()["meta"]["id"])
    seconds = []
    with httpx.Client(base_url=system.url, headers={"Authorization": auth}, timeout=60) as poller:
        for n in range(POLLS):
            head = client.get("/rest/labs/events", params={"project": project, "limit": 1000})
            cursor = head.json()["meta"]["next"]
            answered: dict[str, float] = {}

            def poll(after: int = cursor, answered: dict[str, float] = answered) -> None:
                poller.get(
                    "/rest/labs/events", params={"after": after, "project": project, "wait": 20}
                ).raise_for_status()
                answered["at"] = time.monotonic()

            waiting = threading.Thread(target=poll)
            waiting.start()
            time.sleep(0.3)  # the poll is waiting
            client.patch(
                f"/rest/v1/items/{item}",
                json=[{"op": "replace", "path": "/fields/name", "value": f"Polled {n}"}],
            ).raise_for_status()
            written = time.monotonic()
            waiting.join(30)
            seconds.append(answered["at"] - written)
    seconds.sort()
    return {"polls": POLLS, "p50_s": statistics.median(seconds), "max_s": seconds[-1]}


def targets(
    hooks: dict[str, Any], topology: str
) -> list[tuple[str, float | None, float | None, bool]]:
    """(name, measured, limit, higher is better) of each target the rows judge."""
    alone, beside = hooks["latency"], hooks["beside_dead"]
    cost = beside["p99_s"] / alone["p99_s"] if alone.get("p99_s") and beside.get("p99_s") else None
    return [
        (
            f"webhook commit-to-delivery p99 at {RATE}/s, s (< {LATENCY_P99_S:g})",
            alone.get("p99_s"),
            LATENCY_P99_S,
            False,
        ),
        (
            f"webhook deliveries a second, {WEBHOOKS} webhooks (>= {DELIVERIES_PER_S:.0f})",
            hooks["throughput"]["per_second"],
            DELIVERIES_PER_S if topology == "distributed" else None,
            True,
        ),
        (
            f"webhook p99 beside a dead receiver / alone (<= {DEAD_COST})",
            cost,
            DEAD_COST,
            False,
        ),
        (
            f"long poll answered after a change, median s (< {LONG_POLL_S:g})",
            hooks["long_poll"]["p50_s"] if "long_poll" in hooks else None,
            LONG_POLL_S,
            False,
        ),
    ]


def report(hooks: dict[str, Any]) -> str:
    lines = ["", "webhook deliveries"]
    for key, title in (("latency", "alone"), ("beside_dead", "beside a dead receiver")):
        row = hooks[key]
        p50, p99, worst = (
            f"{row[k] * 1000:.0f}" if row.get(k) is not None else "-"
            for k in ("p50_s", "p99_s", "max_s")
        )
        lines.append(
            f"  {title:24} written {row['written']} at {row['rate']:.0f}/s, delivered "
            f"{row['delivered']} (in order: {row['in_order']}), p50 {p50} ms, p99 {p99} ms, "
            f"max {worst} ms"
        )
    for key, title in (("throughput", "with the record"), ("throughput_bare", "without")):
        if key in hooks:
            t = hooks[key]
            lines.append(
                f"  throughput {title}: {t['webhooks']} webhooks x {t['backlog']} changes, "
                f"{t['delivered']} delivered in {t['seconds']:.1f} s: {t['per_second']:.0f}/s"
            )
    if "long_poll" in hooks:
        poll = hooks["long_poll"]
        lines.append(
            f"  long poll: answered {poll['p50_s'] * 1000:.0f} ms (median, max "
            f"{poll['max_s'] * 1000:.0f}) after the change's write was, {poll['polls']} polls"
        )
    return "\n".join(lines)
