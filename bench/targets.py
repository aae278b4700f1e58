"""The issue's targets: each measured figure next to its limit, and whether it is met.

The item rows (latency, the cost of deep pages, of a role through a group, of Basic over
Bearer, of growth), the overload runs, then the targets of the test management,
attachments and history parts.
"""

from __future__ import annotations

from typing import Any

from bench import attachments as att
from bench import history as hist
from bench import testmgmt as tm
from bench.drive import REQUESTS

GROUP_ITEM = "GET /items/{id} (role through a group)"
GROUP_SEARCH = "GET /abstractitems?contains= (role through a group)"

#: (name, measured, limit, higher is better); a limit of None is a figure reported
#: without a verdict, a measured None a figure this run did not take.
Target = tuple[str, float | None, float | None, bool]


def find(rows: list[dict[str, Any]], operation: str, size: int, c: int) -> dict[str, Any] | None:
    """The row of ``operation`` at ``size`` items and concurrency ``c``, if measured."""
    return next(
        (
            r
            for r in rows
            if r["operation"] == operation and r["size"] == size and r["concurrency"] == c
        ),
        None,
    )


def growth(rows: list[dict[str, Any]], small: int, large: int) -> list[dict[str, Any]]:
    """How each read's cost grows from ``small`` to ``large`` items.

    Cost is the inverse of throughput, so growth is rps(small) / rps(large); the same
    against the bare endpoint measured at each size cancels drift of the machine between
    the two moments, and is the figure the target judges.
    """
    grown = []
    for r in rows:
        if r["size"] != large or not r.get("read"):
            continue
        before = find(rows, r["operation"], small, r["concurrency"])
        if before is None or not r["rps"] or not r["ratio_to_bare"]:
            continue
        grown.append(
            {
                "operation": r["operation"],
                "concurrency": r["concurrency"],
                "rps_small": before["rps"],
                "rps_large": r["rps"],
                "growth": before["rps"] / r["rps"],
                "growth_vs_bare": before["ratio_to_bare"] / r["ratio_to_bare"],
            }
        )
    return grown


def targets(
    rows: list[dict[str, Any]],
    sizes: tuple[int, ...],
    overload: list[dict[str, Any]] | None = None,
    testmgmt: dict[str, Any] | None = None,
    attachments: dict[str, Any] | None = None,
    history: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The issue's targets, each with the measured figure and whether it is met (None
    for a figure reported without a limit)."""
    size = sizes[-1] if sizes else 0
    judged = [
        *_latency(rows, size),
        *(target for c in REQUESTS for target in _costs(rows, size, c)),
        *_growth(rows, sizes),
        *_overload(overload or []),
        *(tm.targets(testmgmt) if testmgmt else []),
        *(att.targets(attachments) if attachments else []),
        *(hist.targets(history) if history else []),
    ]
    return [_verdict(*target) for target in judged if target[1] is not None]


def _verdict(
    name: str, measured: float | None, limit: float | None, higher_is_better: bool
) -> dict[str, Any]:
    assert measured is not None
    met = None if limit is None else measured >= limit if higher_is_better else measured <= limit
    return {"target": name, "measured": measured, "limit": limit, "met": met}


def _latency(rows: list[dict[str, Any]], size: int) -> list[Target]:
    """An item read against the bare endpoint, and the worst read and write p99 at c32."""
    item = find(rows, "GET /items/{id}", size, 32)
    at_32 = [r for r in rows if r["size"] == size and r["concurrency"] == 32]
    return [
        (
            "GET /items/{id} c32, x bare (>= 0.5)",
            item["ratio_to_bare"] if item else None,
            0.5,
            True,
        ),
        (
            "worst read p99 ms at c32 (< 25)",
            max((r["p99_ms"] for r in at_32 if r.get("read")), default=None),
            25,
            False,
        ),
        (
            "worst write p99 ms at c32 (< 50)",
            max((r["p99_ms"] for r in at_32 if not r.get("read")), default=None),
            50,
            False,
        ),
    ]


def _costs(rows: list[dict[str, Any]], size: int, c: int) -> list[Target]:
    """At concurrency ``c``: a deep page against the first, a role through a group against
    the admin's, Basic against Bearer."""
    judged: list[Target] = []
    first = find(rows, "GET /items?project first page", size, c)
    deep = find(rows, "GET /items?project startAt=10000", size, c)
    if first and deep and deep["rps"]:
        judged.append(
            (f"startAt=10000 cost / first page, c{c} (<= 2)", first["rps"] / deep["rps"], 2, False)
        )
    for admin_row, member_row in (
        ("GET /items/{id}", GROUP_ITEM),
        ("GET /abstractitems?contains=", GROUP_SEARCH),
    ):
        as_admin = find(rows, admin_row, size, c)
        as_member = find(rows, member_row, size, c)
        if as_admin and as_member and as_member["rps"]:
            judged.append(
                (
                    f"{member_row} cost over the admin's, c{c} (< 10%)",
                    100 * (as_admin["rps"] / as_member["rps"] - 1),
                    10,
                    False,
                )
            )
    basic = find(rows, "GET /users/current (Basic)", size, c)
    bearer = find(rows, "GET /users/current (Bearer)", size, c)
    if basic and bearer and basic["rps"]:
        judged.append(
            (
                f"Basic cost over Bearer, c{c} (< 10%)",
                100 * (bearer["rps"] / basic["rps"] - 1),
                10,
                False,
            )
        )
    return judged


def _growth(rows: list[dict[str, Any]], sizes: tuple[int, ...]) -> list[Target]:
    """The worst read's growth from the smallest size to 20,000 items, when both ran."""
    if len(sizes) <= 1 or 20_000 not in sizes:
        return []
    grown = growth(rows, sizes[0], 20_000)
    return [
        (
            f"worst read growth {sizes[0]} -> 20000, vs bare (<= 1.2)",
            max((g["growth_vs_bare"] for g in grown), default=None),
            1.2,
            False,
        )
    ]


def _overload(overload: list[dict[str, Any]]) -> list[Target]:
    """The successes of each run past capacity (the first run measures it)."""
    return [
        (
            f"successes at {result['connections']} conns, {result['mode']}, of capacity (>= 0.8)",
            result["of_capacity"],
            0.8,
            True,
        )
        for result in overload[1:]
    ]
