"""How far the event consumers fall behind during the write rows (issue 25, item 6).

The activity feed and the history apply every write from events. While a write row
runs, ``Lag`` asks ``GET /rest/labs/system/consumers`` four times a second and keeps, for
each consumer, the most events behind (its partitions together) and the most seconds
behind (its worst partition) it saw; after the row, how long the consumers took to
catch up. A consumer that keeps up stays within a couple of seconds whatever the write
rate; one that does not falls further behind for as long as the row runs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

#: Seconds between two looks.
EVERY = 0.25
#: The most seconds behind a consumer may fall at any write rate the bench drives.
LAG_SECONDS = 2.0
#: How long after a row the consumers may take to catch up before the bench moves on.
DRAIN_LIMIT = 120.0


def behind(url: str, authorization: str) -> dict[str, tuple[int, float]]:
    """Each consumer's events behind (every partition's together) and seconds behind
    (the most of its partitions'), now."""
    response = httpx.get(
        f"{url}/rest/labs/system/consumers",
        headers={"Authorization": authorization},
        timeout=10,
    )
    response.raise_for_status()
    found: dict[str, tuple[int, float]] = {}
    for partition in response.json()["data"]:
        events, seconds = found.get(partition["consumer"], (0, 0.0))
        found[partition["consumer"]] = (
            events + int(partition["eventsBehind"]),
            max(seconds, float(partition["secondsBehind"])),
        )
    return found


class Lag:
    """The most each consumer fell behind while it was watching."""

    def __init__(self, url: str, authorization: str) -> None:
        self.url = url
        self.authorization = authorization
        self.most: dict[str, dict[str, float]] = {}
        self.looks = 0
        self.failed = 0
        self._stop = threading.Event()

    def _watch(self) -> None:
        while not self._stop.wait(EVERY):
            try:
                now = behind(self.url, self.authorization)
            except httpx.HTTPError:
                self.failed += 1  # refused under load, say: the next look counts
                continue
            self.looks += 1
            for consumer, (events, seconds) in now.items():
                most = self.most.setdefault(consumer, {"events": 0, "seconds": 0.0})
                most["events"] = max(most["events"], events)
                most["seconds"] = max(most["seconds"], seconds)

    def drained(self) -> float | None:
        """Seconds until nothing is behind any more (None: not within ``DRAIN_LIMIT``)."""
        started = time.monotonic()
        while time.monotonic() - started < DRAIN_LIMIT:
            try:
                if all(events == 0 for events, _ in behind(self.url, self.authorization).values()):
                    return time.monotonic() - started
            except httpx.HTTPError:
                pass
            time.sleep(EVERY)
        return None

    def summary(self, drained: float | None) -> dict[str, Any]:
        return {
            "consumers": self.most,
            "looks": self.looks,
            "failed_looks": self.failed,
            "drained_s": drained,
        }


@contextmanager
def watching(url: str, authorization: str, out: dict[str, Any]) -> Iterator[None]:
    """Watches the consumers while the block runs (a write row); then waits for them to
    catch up and puts what was seen into ``out["lag"]``."""
    lag = Lag(url, authorization)
    thread = threading.Thread(target=lag._watch, name="consumer-lag", daemon=True)
    thread.start()
    try:
        yield
    finally:
        lag._stop.set()
        thread.join()
    out["lag"] = lag.summary(lag.drained())


def targets(rows: list[dict[str, Any]]) -> list[tuple[str, float | None, float | None, bool]]:
    """Each consumer's worst seconds behind over the write rows, against ``LAG_SECONDS``;
    the worst events behind and catch-up time, reported."""
    watched = [r for r in rows if r.get("lag")]
    consumers = sorted({c for r in watched for c in r["lag"]["consumers"]})
    judged: list[tuple[str, float | None, float | None, bool]] = []
    for consumer in consumers:
        seen = [r["lag"]["consumers"].get(consumer, {}) for r in watched]
        judged.append(
            (
                f"{consumer} consumer: most seconds behind in the write rows",
                max(s.get("seconds", 0.0) for s in seen),
                LAG_SECONDS,
                False,
            )
        )
        judged.append(
            (
                f"{consumer} consumer: most events behind in the write rows (reported)",
                max(s.get("events", 0) for s in seen),
                None,
                False,
            )
        )
    drains = [r["lag"]["drained_s"] for r in watched]
    if drains:
        worst = None if None in drains else max(d for d in drains if d is not None)
        judged.append(
            ("consumers: seconds to catch up after a write row (reported)", worst, None, False)
        )
    return judged


def table(rows: list[dict[str, Any]]) -> str:
    """The consumers' lag in each write row."""
    header = (
        f"{'write row':42} {'c':>3} {'consumer':>10} {'events':>8} {'seconds':>8} {'drain s':>8}"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        if not r.get("lag"):
            continue
        drained = r["lag"]["drained_s"]
        for consumer, most in sorted(r["lag"]["consumers"].items()):
            lines.append(
                f"{r['operation']:42} {r['concurrency']:>3} {consumer:>10} "
                f"{most['events']:>8.0f} {most['seconds']:>8.2f} "
                f"{'-' if drained is None else f'{drained:.1f}':>8}"
            )
    return "\n".join(lines)
