"""Running the load driver (``bench.load``) as a separate process, and waiting for the
system to be quiet before a measurement."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from plumbline.common.settings import SERVICES

#: Timed requests per run, by concurrency.
REQUESTS = {1: 600, 32: 1500}


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
) -> dict[str, Any]:
    """One run of ``bench.load``: closed loop with ``concurrency`` connections, or paced
    at ``rate`` requests per second (``concurrency`` connections opened up front)."""
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
    result = subprocess.run(command, capture_output=True, text=True, check=True, timeout=600)
    return dict(json.loads(result.stdout))


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
