"""The issue's targets: each measured figure next to its limit, and whether it is met.

The item rows (latency, the cost of deep pages, of a role through a group, of Basic over
Bearer, of growth), the overload runs, then the targets of the test management,
attachments and history parts, then speed (issue 24): the main operations against the
bare endpoint, open loop at half capacity, their CPU per request across the system's
processes, against Kiwi TCMS measured in the same run, and the bench's own wall time.
"""

from __future__ import annotations

from typing import Any

from bench import attachments as att
from bench import history as hist
from bench import hooks as hk
from bench import lag, paging
from bench import testmgmt as tm
from bench import trace as tr
from bench.drive import REQUESTS, system_ms

GROUP_ITEM = "GET /items/{id} (role through a group)"
GROUP_SEARCH = "GET /abstractitems?contains= (role through a group)"
ITEM = "GET /items/{id}"
FIRST_PAGE = "GET /items?project first page"
CREATE = "POST /items"
PATCH = "PATCH /items/{id}"
#: The main operations: the open-loop rows, the CPU table and the comparison with Kiwi.
MAIN = (ITEM, FIRST_PAGE, CREATE, PATCH, tm.PUT)
READS = (ITEM, FIRST_PAGE)
#: The least fraction of the bare endpoint's throughput each operation should reach.
OF_BARE = {ITEM: 0.6, CREATE: 0.3, PATCH: 0.3, tm.PUT: 0.3}
#: Open loop at half capacity: the highest p99 of a read and of a write, and p99.9 of any.
OPEN_P99_READ_MS = 25.0
OPEN_P99_WRITE_MS = 50.0
OPEN_P999_MS = 100.0
#: CPU per request across every process of the system, at c32.
CPU_READ_MS = 1.0
CPU_WRITE_MS = 3.0
#: A whole ``make bench`` at normal size, each topology.
BENCH_SECONDS = 600.0

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


def main_rows(rows: list[dict[str, Any]], testmgmt: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The closed-loop rows of the main operations: the item rows at the largest size
    measured, and the test management part's ``PUT /testruns/{id}``."""
    size = max((r["size"] for r in rows), default=0)
    main = [r for r in rows if r["size"] == size and r["operation"] in MAIN]
    if testmgmt:
        main += [r for r in testmgmt["rows"] if r["operation"] == tm.PUT]
    return main


def targets(
    rows: list[dict[str, Any]],
    sizes: tuple[int, ...],
    overload: list[dict[str, Any]] | None = None,
    testmgmt: dict[str, Any] | None = None,
    attachments: dict[str, Any] | None = None,
    history: dict[str, Any] | None = None,
    *,
    open_loop: list[dict[str, Any]] | None = None,
    paging_walks: list[dict[str, Any]] | None = None,
    peer: list[Target] | None = None,
    bench_seconds: float | None = None,
    timed: bool = False,
    hooks: dict[str, Any] | None = None,
    topology: str = "embedded",
    trace: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The issue's targets, each with the measured figure and whether it is met (None
    for a figure reported without a limit). ``peer`` holds the comparison's targets
    (``bench.peer.targets``); ``bench_seconds`` is judged only when ``timed`` (a whole
    run at normal size)."""
    size = sizes[-1] if sizes else 0
    main = main_rows(rows, testmgmt)
    judged = [
        *_latency(rows, size),
        *(target for c in REQUESTS for target in _costs(rows, size, c)),
        *_growth(rows, sizes),
        *paging.targets(paging_walks or []),
        *_overload(overload or []),
        *(tm.targets(testmgmt) if testmgmt else []),
        *(att.targets(attachments) if attachments else []),
        *(hist.targets(history) if history else []),
        *(hk.targets(hooks, topology) if hooks else []),
        *(tr.targets(trace, topology) if trace else []),
        *lag.targets([*rows, *(testmgmt["rows"] if testmgmt else [])]),
        *_of_bare(main),
        *_open_loop(open_loop or []),
        *_cpu(main),
        *(peer or []),
        ("bench wall time, s (< 600)", bench_seconds, BENCH_SECONDS if timed else None, False),
    ]
    return [verdict(*target) for target in judged if target[1] is not None]


def verdict(
    name: str, measured: float | None, limit: float | None, higher_is_better: bool
) -> dict[str, Any]:
    assert measured is not None
    met = None if limit is None else measured >= limit if higher_is_better else measured <= limit
    return {
        "target": name,
        "measured": measured,
        "limit": limit,
        "met": met,
        "higher_is_better": higher_is_better,
    }


def miss(judged: dict[str, Any]) -> str:
    """By how much a missed target is missed: the gap to its limit and, where both are
    positive, the factor the figure must improve by; empty for a met or unjudged one."""
    if judged["met"] is not False:
        return ""
    measured, limit = judged["measured"], judged["limit"]
    gap = limit - measured if judged["higher_is_better"] else measured - limit
    text = f"by {gap:.2f}"
    if measured > 0 and limit > 0:
        factor = limit / measured if judged["higher_is_better"] else measured / limit
        text += f" ({factor:.2f}x)"
    return text


def _of_bare(main: list[dict[str, Any]]) -> list[Target]:
    """Each main operation's throughput against the bare endpoint measured beside it."""
    return [
        (
            f"{r['operation']} c{r['concurrency']}, x bare (>= {OF_BARE[r['operation']]})",
            r.get("ratio_to_bare"),
            OF_BARE[r["operation"]],
            True,
        )
        for r in main
        if r["operation"] in OF_BARE
    ]


def _open_loop(runs: list[dict[str, Any]]) -> list[Target]:
    """Each main operation paced at half its c32 throughput: p99 and p99.9."""
    judged: list[Target] = []
    for run in runs:
        p99 = OPEN_P99_READ_MS if run["operation"] in READS else OPEN_P99_WRITE_MS
        judged += [
            (f"{run['operation']} open loop, p99 ms (< {p99:.0f})", run["p99_ms"], p99, False),
            (
                f"{run['operation']} open loop, p99.9 ms (< {OPEN_P999_MS:.0f})",
                run.get("p999_ms"),
                OPEN_P999_MS,
                False,
            ),
        ]
    return judged


def _cpu(main: list[dict[str, Any]]) -> list[Target]:
    """CPU per request of each main operation at c32, across the system's processes."""
    return [
        (
            f"{r['operation']} c32, CPU ms/req, all processes "
            f"(< {CPU_READ_MS if r['operation'] in READS else CPU_WRITE_MS:.0f})",
            system_ms(r["cpu"]),
            CPU_READ_MS if r["operation"] in READS else CPU_WRITE_MS,
            False,
        )
        for r in main
        if r["concurrency"] == 32 and r.get("cpu")
    ]


def _latency(rows: list[dict[str, Any]], size: int) -> list[Target]:
    """The worst read and write p99 at c32 (closed loop: queueing by construction; the
    open-loop targets judge latency as users feel it)."""
    at_32 = [r for r in rows if r["size"] == size and r["concurrency"] == 32]
    return [
        (
            "worst read p99 ms at c32, closed loop (reported)",
            max((r["p99_ms"] for r in at_32 if r.get("read")), default=None),
            None,
            False,
        ),
        (
            "worst write p99 ms at c32, closed loop (reported)",
            max((r["p99_ms"] for r in at_32 if not r.get("read")), default=None),
            None,
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
    """The worst read's growth from the smallest size to 20,000 items and to the largest
    (a million, distributed), when they ran."""
    judged: list[Target] = []
    for large in sorted({s for s in sizes[1:] if s == 20_000 or s == sizes[-1]}):
        grown = growth(rows, sizes[0], large)
        judged.append(
            (
                f"worst read growth {sizes[0]} -> {large}, vs bare (<= 1.2)",
                max((g["growth_vs_bare"] for g in grown), default=None),
                1.2,
                False,
            )
        )
    return judged


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
