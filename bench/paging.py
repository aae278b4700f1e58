"""Paging through a whole project as the public clients do (issue 25).

A client that reads a whole project asks for ``GET /items?project=`` with ``startAt`` +=
``maxResults`` until ``startAt`` reaches ``totalResults``. Each page's cost should not
grow with how deep it is: the target is the last pages within 2 times the first. The
walk also checks what it read: every item once, as many as ``totalResults`` said.
"""

from __future__ import annotations

import statistics
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

#: The contract's largest page.
PAGE = 50
#: Pages at each end whose median is the first and the last page's cost.
ENDS = 20
#: The last pages' cost over the first pages', at most.
LAST_OVER_FIRST = 2.0


def walk(url: str, project: int, auth: str, page: int = PAGE) -> dict[str, Any]:
    """Reads every item of ``project`` a page at a time, on one connection, timing each
    page; what it read, how long each end's pages took, and whether it read them all."""
    seen: set[int] = set()
    times: list[float] = []
    total = None
    started = time.monotonic()
    with httpx.Client(base_url=url, headers={"Authorization": auth}, timeout=120) as client:
        while total is None or len(times) * page < total:
            asked = time.perf_counter()
            response = client.get(
                "/rest/v1/items",
                params={"project": project, "startAt": len(times) * page, "maxResults": page},
            )
            times.append(time.perf_counter() - asked)
            response.raise_for_status()
            body = response.json()
            total = body["meta"]["pageInfo"]["totalResults"]
            items = body["data"]
            if not items:
                break
            seen.update(item["id"] for item in items)
    return summary(times, len(seen), total or 0, time.monotonic() - started)


def summary(times: list[float], read: int, total: int, seconds: float) -> dict[str, Any]:
    """The walk's figures from each page's seconds: the first and last ``ENDS`` pages'
    medians in milliseconds and their ratio."""
    ends = min(ENDS, max(1, len(times) // 2))
    first = statistics.median(times[:ends]) * 1000 if times else 0.0
    last = statistics.median(times[-ends:]) * 1000 if times else 0.0
    return {
        "pages": len(times),
        "items": read,
        "total": total,
        "complete": read == total,
        "seconds": seconds,
        "first_ms": first,
        "last_ms": last,
        "last_over_first": last / first if first else None,
    }


def table(walks: list[dict[str, Any]]) -> str:
    """One line per size the walk ran at."""
    lines = [
        "",
        "paging through a whole project (startAt += 50, one connection)",
        "| items in the system | project items | pages | seconds | first page ms | "
        "last page ms | last / first | every item once |",
        "|--:|--:|--:|--:|--:|--:|--:|---|",
    ]
    for w in walks:
        ratio = w["last_over_first"]
        lines.append(
            f"| {w['size']:,} | {w['total']:,} | {w['pages']:,} | {w['seconds']:.1f} | "
            f"{w['first_ms']:.1f} | {w['last_ms']:.1f} | "
            f"{'-' if ratio is None else f'{ratio:.2f}'} | {'yes' if w['complete'] else 'NO'} |"
        )
    return "\n".join(lines)


def targets(walks: list[dict[str, Any]]) -> list[tuple[str, float | None, float | None, bool]]:
    """The walk at the largest size: its last pages against its first, and whether it
    read every item once (1 when it did)."""
    if not walks:
        return []
    w = max(walks, key=lambda w: w["size"])
    return [
        (
            f"paging {w['total']:,} items, last page / first (<= {LAST_OVER_FIRST:.0f})",
            w["last_over_first"],
            LAST_OVER_FIRST,
            False,
        ),
        (f"paging {w['total']:,} items, every item once (1)", float(w["complete"]), 1.0, True),
    ]


def deep_start(path: str) -> int:
    """The ``startAt`` a row's path asks for (0 when none): a row of a page deeper than
    the data is not measured."""
    query = parse_qs(urlsplit(path).query)
    return int(query.get("startAt", ["0"])[0])
