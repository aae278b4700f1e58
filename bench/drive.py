"""Running the load driver (``bench.load``) as a separate process, and waiting for the
system to be quiet before a measurement."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from bench import cpu
from plumbline.common.settings import SERVICES
from tests.e2e.topology import Process, System

#: Timed requests per run, by concurrency.
REQUESTS = {1: 400, 32: 1000}
#: The bare endpoint's run beside each row: it answers in about a millisecond, so
#: fewer requests give as steady a figure.
NEIGHBOUR_REQUESTS = {1: 300, 32: 750}
#: The item rows' runs send no request after this many seconds: a slow operation (a
#: search, a write at 50 req/s) gets fewer than ``REQUESTS``, which keeps the whole
#: bench within its ten minutes.
ROW_SECONDS = 5.0
#: An open-loop run lasts this long, or until it has sent ``OPEN_LOOP_MIN`` requests (p99.9
#: is then more than the single slowest one), whichever is longer, up to
#: ``OPEN_LOOP_MAX_SECONDS``.
OPEN_LOOP_SECONDS = 6.0
OPEN_LOOP_MIN = 1_000
OPEN_LOOP_MAX_SECONDS = 12.0
#: The CPU table's rows that are not the system under test.
DRIVER = "load driver (timed part)"
ELSEWHERE = "everything else on the machine"
IDLE = "idle"


def drive(
    url: str,
    path: str,
    concurrency: int,
    ids: Path,
    method: str = "GET",
    body: str | None = None,
    auth: str | None = None,
    *,
    requests: int | None = None,
    rate: float | None = None,
    seconds: float | None = None,
) -> dict[str, Any]:
    """One run of ``bench.load``: closed loop with ``concurrency`` connections (cut short
    after ``seconds``, when given), or paced at ``rate`` requests per second
    (``concurrency`` connections opened up front)."""
    command = [
        sys.executable,
        "-m",
        "bench.load",
        "--url",
        url,
        "--path",
        path,
        "--method",
        method,
        "--concurrency",
        str(concurrency),
        "--requests",
        str(requests or REQUESTS[concurrency]),
        "--ids",
        str(ids),
    ]
    if body:
        command += ["--body", body]
    if auth:
        command += ["--authorization", auth]
    if rate:
        command += ["--rate", f"{rate:.3f}"]
    if seconds:
        command += ["--seconds", str(seconds)]
    result = subprocess.run(command, capture_output=True, text=True, check=True, timeout=600)
    return dict(json.loads(result.stdout))


def bare_beside(url: str, concurrency: int, ids: Path) -> dict[str, Any]:
    """The bare endpoint at ``concurrency``, run right before a row: a ratio is only fair
    between neighbours in time, as this machine's speed drifts during a run."""
    return drive(
        url, "/bare/items/{id}", concurrency, ids, requests=NEIGHBOUR_REQUESTS[concurrency]
    )


def open_loop_requests(rate: float) -> int:
    """How many requests an open-loop run at ``rate`` per second sends."""
    seconds = min(OPEN_LOOP_MAX_SECONDS, max(OPEN_LOOP_SECONDS, OPEN_LOOP_MIN / rate))
    return max(1, int(rate * seconds))


def open_loop(
    url: str,
    path: str,
    ids: Path,
    closed_rps: float,
    method: str = "GET",
    body: str | None = None,
    auth: str | None = None,
) -> dict[str, Any] | None:
    """``path`` paced (open loop) at half ``closed_rps``, the throughput a closed loop at
    c32 just measured: latency as a user who does not wait for others feels it, counted
    from when each request was due. None when the closed loop measured nothing."""
    if closed_rps <= 0:
        return None
    rate = closed_rps / 2
    result = drive(
        url, path, 32, ids, method, body, auth, requests=open_loop_requests(rate), rate=rate
    )
    return {**result, "closed_rps": closed_rps}


def serving_processes(system: System, extra: list[Process]) -> dict[int, str]:
    """Every process that serves a request, by pid, with its row's name: Plumbline's own
    (the embedded default's gateway workers in one row), and distributed, PostgreSQL's
    and NATS's."""
    labels = {
        p.popen.pid: "plumbline (all services)" if p.name == "all" else p.name
        for p in [*system.processes, *extra]
    }
    for process in [*system.processes, *extra]:
        labels.update(dict.fromkeys(process.workers, f"{process.name}: gateway workers"))
        labels.update(dict.fromkeys(process.analytics, f"{process.name}: analytics process"))
    if system.topology == "distributed":
        tag = system.env["PLUMBLINE_BUS_STREAM"][3:]
        labels.update(cpu.outside_processes(f"pl_{tag}_"))
    return labels


def timed_cpu(
    system: System, extra: list[Process], run: Callable[[], dict[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Runs ``run()`` (one ``drive``) between two CPU samples; its result and the CPU each
    process used, in seconds, in cores over the run's wall time and in ms per request
    served (warm-up included). ``system`` marks the rows of the system under test."""
    before = cpu.sample(serving_processes(system, extra))
    busy = cpu.machine_busy()
    started = time.monotonic()
    result = run()
    wall = time.monotonic() - started
    busy = cpu.machine_busy() - busy
    # Backends PostgreSQL started during the run count from zero.
    labels = serving_processes(system, extra)
    used = cpu.used_between(labels, before, cpu.sample(labels))
    # The driver process as a whole (start-up, warm-up) is in "everything else".
    used[DRIVER] = result["driver_cpu"] * result["requests"] / result["rps"] if result["rps"] else 0
    used[ELSEWHERE] = max(0.0, busy - sum(used.values()))
    idle = max(0.0, (os.cpu_count() or 1) * wall - busy)
    served = max(1, result["requests"] + result.get("warmup_requests", 0))
    table = [
        {
            "process": name,
            "cpu_s": seconds,
            "cores": seconds / wall,
            "cpu_ms_per_request": 1000 * seconds / served,
            "system": name not in (DRIVER, ELSEWHERE, cpu.OTHER_DATABASES),
        }
        for name, seconds in sorted(used.items(), key=lambda kv: -kv[1])
    ]
    table.append(
        {
            "process": f"{IDLE} (of {os.cpu_count()} cores)",
            "cpu_s": idle,
            "cores": idle / wall,
            "cpu_ms_per_request": 0.0,
            "system": False,
        }
    )
    return result, table


def system_ms(table: list[dict[str, Any]]) -> float:
    """CPU ms per request across every process of the system under test."""
    return float(sum(p["cpu_ms_per_request"] for p in table if p.get("system")))


def other_cores(table: list[dict[str, Any]]) -> float:
    """Cores that work outside the system under test and the driver used during a run:
    how noisy the machine was."""
    return float(sum(p["cores"] for p in table if p["process"] in (ELSEWHERE, cpu.OTHER_DATABASES)))


def median_seconds(samples: list[float]) -> float:
    """The median of ``samples`` (0 when there are none)."""
    return statistics.median(samples) if samples else 0.0


def table(title: str, rows: list[dict[str, Any]], size: str | None = None) -> list[str]:
    """The lines of a table of ``drive`` rows under ``title`` (a column for each row's
    ``size``, headed ``size``, when given)."""
    sized = f" {size:>7}" if size else ""
    header = (
        f"{title:42}{sized} {'c':>3} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'err':>4} "
        f"{'drv cpu':>7}"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        sized = f" {r['size']:>7}" if size else ""
        lines.append(
            f"{r['operation']:42}{sized} {r['concurrency']:>3} {r['rps']:>8.0f} "
            f"{r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} {r['errors']:>4} {r['driver_cpu']:>7.2f}"
        )
    return lines


def wait_for_feed(url: str, project: int, auth: str) -> float:
    """Waits until the activity feed has consumed every change made so far.

    ``GET /activities`` answers 503 while the feed is behind the services' outboxes, so
    its first 200 means the background work of the seed is done and will not compete
    with the measurements. Returns the seconds waited.
    """
    started = time.monotonic()
    while time.monotonic() - started < 1800:
        response = httpx.get(
            f"{url}/rest/v1/activities",
            params={"project": project, "maxResults": 1},
            headers={"Authorization": auth},
            timeout=60,
        )
        if response.status_code == 200:
            return time.monotonic() - started
        if response.status_code != 503:
            response.raise_for_status()
    raise RuntimeError("the activity feed did not catch up within 30 minutes")


async def analyze(database_url: str) -> float:
    """PostgreSQL: VACUUM ANALYZE every service database after a bulk load.

    Autovacuum does the same within a minute or so of a load this size; until it has,
    the planner still believes the tables are empty (it estimated 11 rows for a project
    of 14,000) and sorts whole projects for a first page. The bench measures the steady
    state, so it does not wait for the daemon. Returns the seconds it took.
    """
    import asyncpg

    started = time.monotonic()
    for service in SERVICES:
        url = database_url.replace("{service}", service).replace("+asyncpg", "")
        conn = await asyncpg.connect(url)
        try:
            await conn.execute("VACUUM ANALYZE")
        finally:
            await conn.close()
    return time.monotonic() - started
