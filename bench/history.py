"""``make bench``'s history rows (``make bench ONLY=history``).

Seeds a project of 20,000 items (2,000 with ``--size small``, 100,000 with ``large``): 4
areas of 5 folders and requirements under the folders, through items' bulk create; then
waits until the activity feed and the history have consumed the seed. Then, over REST:

1. **reads**: ``GET /items/{id}/versions`` against ``GET /items/{id}`` over the same
   2,000 requirements, c1 and c32, with the load rows' driver (``bench.load``);
2. **baselines**: ``POST /rest/labs/baselines`` of the project, three times; then 200
   PATCHes (1% of 20,000 items, each a different one) of the name, a fourth baseline, and
   the first page (``maxResults=50``) of ``compare?to=<the fourth>`` from the first and of
   ``compare?to=current``, five times each;
3. **writes**: one item gets 1,000 versions (PATCHes through the API), then PATCHes of it
   against PATCHes of an item created just before, 400 each, c1 and c4.

Two operations compared with each other run in the order A, B, B, A, each run with half
the requests, so that the machine's drift falls on both alike (``interleaved``); a row
combines its two halves (``combine``). Before each read is timed, a versions read of the
last changed item has answered: the gateway waits for the history to hold the version
the owner reports, so the history has caught up.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from bench.drive import REQUESTS, analyze, drive, median_seconds, table, wait_for_feed
from bench.seed import Seeder
from tests.e2e.topology import System

#: Items of the project, by ``--size`` (``small`` is for a quick try; the targets are
#: for 20,000; ``large`` measures a baseline of 100,000 items and its comparison).
ITEMS = {"small": 2_000, "normal": 20_000, "large": 100_000}
#: Requirements the read rows pick from (as the load rows do).
READ_SET = 2_000
#: Items changed between the two baselines compared: 1% of the project.
CHANGED = 200
BASELINES = 3
COMPARES = 5
VERSIONS = 1_000
WRITES = 250
WRITE_CONCURRENCY = (1, 4)
VERSIONS_ROW = "GET /items/{id}/versions"
ITEM_ROW = "GET /items/{id}"
OLD_ROW = f"PATCH /items/{{id}}, {VERSIONS} versions"
NEW_ROW = "PATCH /items/{id}, new item"
#: Versions read throughput at least this share of the item read's, at c32.
READ_SHARE = 0.8
#: A baseline of 20,000 items, at most (in proportion for other sizes).
BASELINE_S = 5.0
COMPARE_S = 1.0
#: "Write cost does not grow with the versions": the old item's PATCH cost over the new
#: one's at most this (about 1, with a margin for the machine's drift between runs).
WRITE_GROWTH = 1.2
ITEM = "/rest/v1/items/{id}"
PATCH_NAME = '[{"op": "replace", "path": "/fields/name", "value": "Renamed {n}"}]'

Run = Callable[[int], dict[str, Any]]


def combine(halves: list[dict[str, Any]]) -> dict[str, Any]:
    """One row from runs of the same operation: requests over the runs' summed wall
    time, the mean p50, the highest p99, errors added up."""
    walls = [h["requests"] / h["rps"] if h["rps"] else 0.0 for h in halves]
    wall = sum(walls)
    requests = sum(h["requests"] for h in halves)
    kinds: Counter[str] = Counter()
    for h in halves:
        kinds.update(h.get("error_kinds", {}))
    return {
        "requests": requests,
        "rps": requests / wall if wall else 0.0,
        "p50_ms": statistics.mean(h["p50_ms"] for h in halves),
        "p99_ms": max(h["p99_ms"] for h in halves),
        "errors": sum(h["errors"] for h in halves),
        "error_kinds": dict(kinds),
        "driver_cpu": sum(h["driver_cpu"] * w for h, w in zip(halves, walls, strict=True)) / wall
        if wall
        else 0.0,
    }


def runner(
    url: str,
    path: str,
    c: int,
    ids: Path,
    auth: str,
    method: str = "GET",
    body: str | None = None,
) -> Run:
    """A closed-loop drive of ``path`` at concurrency ``c`` over ``ids``, given a number
    of requests."""
    return lambda requests: drive(url, path, c, ids, method, body, auth, requests=requests)


def interleaved(a: Run, b: Run, requests: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """``a`` and ``b`` (each called with a number of requests) in the order a, b, b, a,
    half of ``requests`` each time; each one's combined row."""
    half = requests // 2
    first_a, first_b, second_b, second_a = a(half), b(half), b(requests - half), a(requests - half)
    return combine([first_a, second_a]), combine([first_b, second_b])


def wait_for_history(client: httpx.Client, item: int, timeout: float = 1800.0) -> float:
    """Waits until the history holds ``item``'s current version (its versions read
    answers 200, not 503); the seconds waited. Events are consumed in order, so every
    change before the item's last one is in the history too."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        response = client.get(f"/rest/v1/items/{item}/versions", params={"maxResults": 1})
        if response.status_code == 200:
            return time.monotonic() - started
        if response.status_code != 503:
            response.raise_for_status()
    raise RuntimeError(f"the history did not hold item {item}'s version within {timeout:.0f}s")


def _timed(call: Callable[[], httpx.Response], expected: int) -> tuple[httpx.Response, float]:
    """``call()``'s answer, which must have status ``expected``, and the seconds it took."""
    started = time.perf_counter()
    response = call()
    elapsed = time.perf_counter() - started
    if response.status_code != expected:
        raise RuntimeError(
            f"{response.request.method} {response.request.url} answered "
            f"{response.status_code}: {response.text[:300]}"
        )
    return response, elapsed


def _baseline(client: httpx.Client, project: int, name: str) -> tuple[int, float]:
    """Takes a baseline of ``project``: its id and the seconds it took."""
    body = {"name": name, "project": project}
    response, seconds = _timed(lambda: client.post("/rest/labs/baselines", json=body), 201)
    return int(response.json()["meta"]["id"]), seconds


def _total(response: httpx.Response) -> int:
    """A page's ``totalResults``."""
    response.raise_for_status()
    return int(response.json()["meta"]["pageInfo"]["totalResults"])


def _rename(client: httpx.Client, item: int, name: str) -> None:
    response = client.patch(
        f"/rest/v1/items/{item}", json=[{"op": "replace", "path": "/fields/name", "value": name}]
    )
    response.raise_for_status()


def _new_item(client: httpx.Client, project: int, item_type: int, name: str) -> int:
    response = client.post(
        "/rest/v1/items", json={"project": project, "itemType": item_type, "fields": {"name": name}}
    )
    response.raise_for_status()
    return int(response.json()["meta"]["id"])


def measure(
    system: System,
    loop: asyncio.AbstractEventLoop,
    seeder: Seeder,
    auth: str,
    workdir: Path,
    size: str,
) -> dict[str, Any]:
    """Seeds the project and measures the history rows; every figure in one dict."""
    items = ITEMS[size]
    out: dict[str, Any] = {"items": items, "rows": []}
    client = httpx.Client(base_url=system.url, headers={"Authorization": auth}, timeout=300)
    try:
        started = time.monotonic()
        project, requirements = loop.run_until_complete(seeder.project_of("HIST", items))
        out["seed_s"] = time.monotonic() - started
        fed = wait_for_feed(system.url, project, auth)
        caught_up = wait_for_history(client, requirements[-1])
        if system.topology == "distributed":
            loop.run_until_complete(analyze(system.env["PLUMBLINE_DATABASE_URL"]))
        print(
            f"seeded a project of {items} items in {out['seed_s']:.0f}s; the activity feed "
            f"caught up {fed:.0f}s later, the history {caught_up:.0f}s after that",
            flush=True,
        )
        _measure_reads(system, auth, workdir, requirements, out)
        _measure_baselines(client, project, requirements, out)
        _measure_writes(system, client, seeder.types["REQ"], project, auth, workdir, out)
    finally:
        client.close()
    return out


def _row(out: dict[str, Any], name: str, c: int, result: dict[str, Any]) -> None:
    out["rows"].append({"operation": name, "concurrency": c, **result})
    print(f"  {name} c{c}: {result['rps']:.0f} req/s", flush=True)


def _measure_reads(
    system: System, auth: str, workdir: Path, requirements: list[int], out: dict[str, Any]
) -> None:
    """An item and its versions, read in turns."""
    ids = workdir / "history-ids.json"
    ids.write_text(json.dumps(requirements[-READ_SET:]))
    for c in REQUESTS:
        item, versions = interleaved(
            runner(system.url, ITEM, c, ids, auth),
            runner(system.url, f"{ITEM}/versions", c, ids, auth),
            REQUESTS[c],
        )
        _row(out, ITEM_ROW, c, item)
        _row(out, VERSIONS_ROW, c, versions)


def _measure_baselines(
    client: httpx.Client, project: int, requirements: list[int], out: dict[str, Any]
) -> None:
    """Baselines of the project, then 1% of it changed and a baseline again, and the first
    page of comparing the first with the second and with now."""
    items = out["items"]
    taken = [_baseline(client, project, f"Bench {n}") for n in range(BASELINES)]
    out["baseline_samples"] = [s for _, s in taken]
    changed = requirements[:: len(requirements) // CHANGED][:CHANGED]
    for n, requirement in enumerate(changed):
        _rename(client, requirement, f"Changed requirement {n}")
    wait_for_history(client, changed[-1])
    second, seconds = _baseline(client, project, "Bench after 1%")
    out["baseline_samples"].append(seconds)
    out["baseline_median_s"] = median_seconds(out["baseline_samples"])
    held = client.get(f"/rest/v1/baselines/{second}/versioneditems", params={"maxResults": 1})
    out["baseline_items"] = _total(held)
    compare = f"/rest/labs/baselines/{taken[0][0]}/compare"
    for key, to in (("compare_baseline", str(second)), ("compare_current", "current")):
        page = partial(client.get, compare, params={"to": to, "maxResults": 50})
        timed = [_timed(page, 200) for _ in range(COMPARES)]
        out[f"{key}_samples"] = [seconds for _, seconds in timed]
        out[f"{key}_median_s"] = median_seconds(out[f"{key}_samples"])
        out[f"{key}_changes"] = _total(timed[-1][0])
    print(
        f"baseline of {items} items: median {out['baseline_median_s']:.2f}s; compare "
        f"first page: {out['compare_baseline_median_s']:.2f}s to a baseline, "
        f"{out['compare_current_median_s']:.2f}s to now",
        flush=True,
    )


def _measure_writes(
    system: System,
    client: httpx.Client,
    req_type: int,
    project: int,
    auth: str,
    workdir: Path,
    out: dict[str, Any],
) -> None:
    """PATCHes of an item with many versions, in turns with those of a new item."""
    old = _new_item(client, project, req_type, "Many versions")
    aged = workdir / "history-old.json"
    aged.write_text(json.dumps([old]))
    started = time.monotonic()
    # 1 version at creation, 5 untimed PATCHes of the driver, then the rest.
    runner(system.url, ITEM, 1, aged, auth, "PATCH", PATCH_NAME)(VERSIONS - 6)
    out["versions_s"] = time.monotonic() - started
    for c in WRITE_CONCURRENCY:
        new = _new_item(client, project, req_type, f"New item c{c}")
        fresh = workdir / "history-new.json"
        fresh.write_text(json.dumps([new]))
        wait_for_history(client, new)
        wait_for_history(client, old)
        wait_for_feed(system.url, project, auth)

        before, after = interleaved(
            runner(system.url, ITEM, c, aged, auth, "PATCH", PATCH_NAME),
            runner(system.url, ITEM, c, fresh, auth, "PATCH", PATCH_NAME),
            WRITES,
        )
        _row(out, OLD_ROW, c, before)
        _row(out, NEW_ROW, c, after)
    wait_for_history(client, old)
    out["old_versions"] = _total(
        client.get(f"/rest/v1/items/{old}/versions", params={"maxResults": 1})
    )


def _find(history: dict[str, Any], operation: str, c: int) -> dict[str, Any] | None:
    return next(
        (r for r in history["rows"] if r["operation"] == operation and r["concurrency"] == c),
        None,
    )


def _cost_ratio(slow: dict[str, Any] | None, fast: dict[str, Any] | None) -> float | None:
    """``slow``'s cost (1 / throughput) over ``fast``'s."""
    if slow is None or fast is None or not slow["rps"]:
        return None
    return float(fast["rps"] / slow["rps"])


def targets(history: dict[str, Any]) -> list[tuple[str, float | None, float | None, bool]]:
    """(name, measured, limit, higher is better) of each target the rows judge."""
    item = _find(history, ITEM_ROW, 32)
    versions = _find(history, VERSIONS_ROW, 32)
    share = versions["rps"] / item["rps"] if item and versions and item["rps"] else None
    baseline_s = BASELINE_S * history["items"] / 20_000
    found: list[tuple[str, float | None, float | None, bool]] = [
        (f"versions c32, x {ITEM_ROW} c32 (>= {READ_SHARE})", share, READ_SHARE, True),
        (
            f"baseline of {history['items']} items, median s (< {baseline_s:.0f})",
            history.get("baseline_median_s"),
            baseline_s,
            False,
        ),
        (
            f"compare to a baseline, page 1, median s (< {COMPARE_S:.0f})",
            history.get("compare_baseline_median_s"),
            COMPARE_S,
            False,
        ),
        (
            f"compare to current, page 1, median s (< {COMPARE_S:.0f})",
            history.get("compare_current_median_s"),
            COMPARE_S,
            False,
        ),
    ]
    for c in WRITE_CONCURRENCY:
        found.append(
            (
                f"PATCH cost, {VERSIONS} versions / new item, c{c} (<= {WRITE_GROWTH})",
                _cost_ratio(_find(history, OLD_ROW, c), _find(history, NEW_ROW, c)),
                WRITE_GROWTH,
                False,
            )
        )
    return found


def report(history: dict[str, Any]) -> str:
    """The read and write rows, then the baseline and compare times."""
    lines = ["", *table("history", history["rows"])]
    for key, title in (
        ("baseline", f"baseline of {history['items']} items"),
        ("compare_baseline", "compare to a baseline, 1% changed, first page"),
        ("compare_current", "compare to current, 1% changed, first page"),
    ):
        if f"{key}_median_s" in history:
            samples = ", ".join(f"{s:.2f}" for s in history[f"{key}_samples"])
            counted = (
                f"; {history[f'{key}_changes']} changes in all"
                if f"{key}_changes" in history
                else ""
            )
            lines.append(f"{title}: median {history[f'{key}_median_s']:.2f} s ({samples}){counted}")
    if "baseline_items" in history:
        lines.append(f"the baseline after the changes holds {history['baseline_items']} items")
    if "old_versions" in history:
        lines.append(
            f"the item of {VERSIONS} versions got them in {history['versions_s']:.1f} s and "
            f"had {history['old_versions']} at the end"
        )
    return "\n".join(lines)
