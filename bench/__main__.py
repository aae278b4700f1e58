"""``make bench``: seeds, drives load from a separate process, prints and saves the table.

python -m bench [--topology embedded|distributed] [--size small|normal|large]
    [--only all|items|testmgmt|attachments|history]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from bench import attachments as att
from bench import history as hist
from bench import testmgmt as tm
from bench.drive import REQUESTS, analyze, drive, wait_for_feed
from bench.seed import WORDS, Seeder
from tests.e2e.topology import cleanup_distributed, start_distributed, start_embedded

RESULTS = Path(__file__).parent / "results"
SIZES = {
    "small": (2_000,),
    "normal": (2_000, 20_000),
    "large": (2_000, 20_000, 200_000),
}
GROUP_ITEM = "GET /items/{id} (role through a group)"
GROUP_SEARCH = "GET /abstractitems?contains= (role through a group)"
#: The word searched for: 2% of the requirements hold it (see bench.seed.WORDS).
SEARCHED = WORDS[7]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


OVERLOAD_SECONDS = 15.0
#: The throttle's default slots: as many connections as slots measure capacity.
CAPACITY_CONNECTIONS = 64


def _overload(url: str, auth: str, ids: Path) -> list[dict[str, Any]]:
    """``GET /items/{id}``: capacity, then 1,024 connections retrying at once and
    honouring ``Retry-After``."""
    runs = [(CAPACITY_CONNECTIONS, "naive"), (1024, "naive"), (1024, "polite")]
    results = []
    for connections, mode in runs:
        command = [
            sys.executable,
            "-m",
            "bench.overload",
            "--url",
            url,
            "--path",
            "/rest/v1/items/{id}",
            "--ids",
            str(ids),
            "--authorization",
            auth,
            "--connections",
            str(connections),
            "--seconds",
            str(OVERLOAD_SECONDS),
            "--mode",
            mode,
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=300)
        results.append(dict(json.loads(done.stdout)))
        _wait_idle(url)
    capacity = results[0]["ok_per_s"]
    for result in results:
        result["of_capacity"] = result["ok_per_s"] / capacity if capacity else 0.0
    return results


def _wait_idle(url: str, timeout: float = 90.0) -> None:
    """Waits until the gateway has nothing queued or in flight for two seconds: requests
    the driver abandoned at its deadline are still served, and would count against the
    next run."""
    deadline = time.monotonic() + timeout
    quiet_since = None
    while time.monotonic() < deadline:
        text = httpx.get(f"{url}/metrics", timeout=10).text
        busy = any(
            line.startswith(("plumbline_http_in_flight ", "plumbline_http_queued "))
            and float(line.split()[-1]) > 0
            for line in text.splitlines()
        )
        now = time.monotonic()
        quiet_since = None if busy else (quiet_since or now)
        if quiet_since is not None and now - quiet_since >= 2:
            return
        time.sleep(0.2)


def _overload_table(results: list[dict[str, Any]]) -> str:
    header = (
        f"{'overload GET /items/{id}':28} {'conns':>5} {'ok/s':>7} {'429/s':>7} {'of cap':>7} "
        f"{'ok p50':>7} {'ok p99':>7} {'429 p50':>7} {'other':>5} {'drv cpu':>7}"
    )
    lines = ["", header, "-" * len(header)]
    for r in results:
        lines.append(
            f"{r['mode']:28} {r['connections']:>5} {r['ok_per_s']:>7.0f} "
            f"{r['refused_per_s']:>7.0f} {r['of_capacity']:>7.2f} {r['ok_p50_ms']:>7.1f} "
            f"{r['ok_p99_ms']:>7.1f} {r['refused_p50_ms']:>7.1f} "
            f"{r['other_errors'] + r['broken_connections']:>5} {r['driver_cpu']:>7.2f}"
        )
    return "\n".join(lines)


def _group_member(url: str, admin: str, projects: list[int]) -> str:
    """Basic credentials of a new user who reads ``projects`` through a group's role."""
    headers = {"Authorization": admin}
    with httpx.Client(base_url=f"{url}/rest/v1", headers=headers, timeout=30) as client:
        password = "bench-member-password"
        user = client.post(
            "/users",
            json={
                "username": "bench-member",
                "password": password,
                "firstName": "Bench",
                "lastName": "Member",
                "email": "bench-member@example.com",
                "licenseType": "NAMED",
            },
        ).json()["meta"]["id"]
        group = client.post("/usergroups", json={"name": "bench readers"}).json()["meta"]["id"]
        client.post(f"/usergroups/{group}/users", json={"user": user}).raise_for_status()
        for project in projects:
            client.put(
                f"/projects/{project}/permissions",
                json=[{"userGroup": group, "role": "READ_ONLY"}],
            ).raise_for_status()
    return "Basic " + base64.b64encode(f"bench-member:{password}".encode()).decode()


@dataclass(frozen=True)
class Targets:
    """What the operations aim at: the big project, its requirement type, a folder in it."""

    big_project: int
    req_type: int
    folder: int


def _operations(
    data: Targets, basic: str, bearer: str, member: str
) -> list[tuple[str, str, str, str | None, str, bool]]:
    """(name, method, path, body, authorization, read?)"""
    big = data.big_project
    req_type = data.req_type
    # Each row of a user whose only roles come through a group (the access check's cost)
    # follows the admin's same row: a ratio is only fair between neighbours in time.
    return [
        ("GET /users/current (Basic)", "GET", "/rest/v1/users/current", None, basic, True),
        ("GET /users/current (Bearer)", "GET", "/rest/v1/users/current", None, bearer, True),
        ("GET /items/{id}", "GET", "/rest/v1/items/{id}", None, basic, True),
        (GROUP_ITEM, "GET", "/rest/v1/items/{id}", None, member, True),
        (
            "GET /items/{id} +include",
            "GET",
            "/rest/v1/items/{id}?include=data.createdBy&include=data.itemType",
            None,
            basic,
            True,
        ),
        (
            "GET /items?project first page",
            "GET",
            f"/rest/v1/items?project={big}",
            None,
            basic,
            True,
        ),
        (
            "GET /items?project startAt=10000",
            "GET",
            f"/rest/v1/items?project={big}&startAt=10000",
            None,
            basic,
            True,
        ),
        (
            "GET /abstractitems?contains=",
            "GET",
            f"/rest/v1/abstractitems?contains={SEARCHED}&maxResults=20",
            None,
            basic,
            True,
        ),
        (
            GROUP_SEARCH,
            "GET",
            f"/rest/v1/abstractitems?contains={SEARCHED}&maxResults=20",
            None,
            member,
            True,
        ),
        (
            "GET /relationships?project",
            "GET",
            f"/rest/v1/relationships?project={big}",
            None,
            basic,
            True,
        ),
        (
            "POST /items",
            "POST",
            "/rest/v1/items",
            json.dumps(
                {
                    "project": big,
                    "itemType": req_type,
                    "location": {"parent": {"item": data.folder}},
                    "fields": {"name": "Bench {n}"},
                }
            ),
            basic,
            False,
        ),
        (
            "PATCH /items/{id}",
            "PATCH",
            "/rest/v1/items/{id}",
            json.dumps([{"op": "replace", "path": "/fields/description", "value": "changed {n}"}]),
            basic,
            False,
        ),
    ]


def _table(rows: list[dict[str, Any]]) -> str:
    header = f"{'operation':42} {'size':>7} {'c':>3} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'err':>4} {'x bare':>7} {'drv cpu':>7}"
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(
            f"{r['operation']:42} {r['size']:>7} {r['concurrency']:>3} {r['rps']:>8.0f} {r['p50_ms']:>8.2f} "
            f"{r['p99_ms']:>8.2f} {r['errors']:>4} {r.get('ratio_to_bare', 0):>7.2f} {r['driver_cpu']:>7.2f}"
        )
    return "\n".join(lines)


def _find(rows: list[dict[str, Any]], operation: str, size: int, c: int) -> dict[str, Any] | None:
    return next(
        (
            r
            for r in rows
            if r["operation"] == operation and r["size"] == size and r["concurrency"] == c
        ),
        None,
    )


def _growth(rows: list[dict[str, Any]], small: int, large: int) -> list[dict[str, Any]]:
    """How each read's cost grows from ``small`` to ``large`` items.

    Cost is the inverse of throughput, so growth is rps(small) / rps(large); the same
    against the bare endpoint measured at each size cancels drift of the machine between
    the two moments, and is the figure the target judges.
    """
    growth = []
    for r in rows:
        if r["size"] != large or not r.get("read"):
            continue
        before = _find(rows, r["operation"], small, r["concurrency"])
        if before is None or not r["rps"] or not r["ratio_to_bare"]:
            continue
        growth.append(
            {
                "operation": r["operation"],
                "concurrency": r["concurrency"],
                "rps_small": before["rps"],
                "rps_large": r["rps"],
                "growth": before["rps"] / r["rps"],
                "growth_vs_bare": before["ratio_to_bare"] / r["ratio_to_bare"],
            }
        )
    return growth


def _targets(
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
    targets: list[dict[str, Any]] = []

    def add(name: str, measured: float | None, limit: float | None, higher_is_better: bool) -> None:
        if measured is None:
            return
        met = (
            None if limit is None else measured >= limit if higher_is_better else measured <= limit
        )
        targets.append({"target": name, "measured": measured, "limit": limit, "met": met})

    item = _find(rows, "GET /items/{id}", size, 32)
    add("GET /items/{id} c32, x bare (>= 0.5)", item["ratio_to_bare"] if item else None, 0.5, True)
    reads = [r for r in rows if r["size"] == size and r["concurrency"] == 32 and r.get("read")]
    writes = [r for r in rows if r["size"] == size and r["concurrency"] == 32 and not r.get("read")]
    worst_read = max((r["p99_ms"] for r in reads), default=None)
    add("worst read p99 ms at c32 (< 25)", worst_read, 25, False)
    add(
        "worst write p99 ms at c32 (< 50)",
        max((r["p99_ms"] for r in writes), default=None),
        50,
        False,
    )
    for c in REQUESTS:
        first = _find(rows, "GET /items?project first page", size, c)
        deep = _find(rows, "GET /items?project startAt=10000", size, c)
        if first and deep and deep["rps"]:
            add(
                f"startAt=10000 cost / first page, c{c} (<= 2)",
                first["rps"] / deep["rps"],
                2,
                False,
            )
        for admin_row, member_row in (
            ("GET /items/{id}", GROUP_ITEM),
            ("GET /abstractitems?contains=", GROUP_SEARCH),
        ):
            as_admin = _find(rows, admin_row, size, c)
            as_member = _find(rows, member_row, size, c)
            if as_admin and as_member and as_member["rps"]:
                add(
                    f"{member_row} cost over the admin's, c{c} (< 10%)",
                    100 * (as_admin["rps"] / as_member["rps"] - 1),
                    10,
                    False,
                )
        basic = _find(rows, "GET /users/current (Basic)", size, c)
        bearer = _find(rows, "GET /users/current (Bearer)", size, c)
        if basic and bearer and basic["rps"]:
            add(
                f"Basic cost over Bearer, c{c} (< 10%)",
                100 * (bearer["rps"] / basic["rps"] - 1),
                10,
                False,
            )
    if len(sizes) > 1 and 20_000 in sizes:
        growth = _growth(rows, sizes[0], 20_000)
        add(
            f"worst read growth {sizes[0]} -> 20000, vs bare (<= 1.2)",
            max((g["growth_vs_bare"] for g in growth), default=None),
            1.2,
            False,
        )
    for result in (overload or [])[1:]:
        add(
            f"successes at {result['connections']} conns, {result['mode']}, of capacity (>= 0.8)",
            result["of_capacity"],
            0.8,
            True,
        )
    for target in tm.targets(testmgmt) if testmgmt else []:
        add(*target)
    for target in att.targets(attachments) if attachments else []:
        add(*target)
    for target in hist.targets(history) if history else []:
        add(*target)
    return targets


def _report(
    rows: list[dict[str, Any]],
    sizes: tuple[int, ...],
    overload: list[dict[str, Any]],
    testmgmt: dict[str, Any] | None = None,
    attachments: dict[str, Any] | None = None,
    history: dict[str, Any] | None = None,
) -> str:
    """Growth and targets, after the per-size tables."""
    lines = []
    for large in sizes[1:]:
        lines += [
            "",
            f"growth {sizes[0]} -> {large} items (cost = 1/rps; vs bare cancels machine drift)",
            f"{'operation':42} {'c':>3} {'rps ' + str(sizes[0]):>10} {'rps ' + str(large):>11} "
            f"{'growth':>7} {'vs bare':>8}",
        ]
        for g in _growth(rows, sizes[0], large):
            lines.append(
                f"{g['operation']:42} {g['concurrency']:>3} {g['rps_small']:>10.0f} "
                f"{g['rps_large']:>11.0f} {g['growth']:>7.2f} {g['growth_vs_bare']:>8.2f}"
            )
    lines += ["", f"{'target':54} {'measured':>9}  met"]
    for t in _targets(rows, sizes, overload, testmgmt, attachments, history):
        verdict = "-" if t["met"] is None else "yes" if t["met"] else "NO"
        lines.append(f"{t['target']:54} {t['measured']:>9.2f}  {verdict}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench")
    parser.add_argument(
        "--topology",
        choices=["embedded", "distributed"],
        default=os.environ.get("TOPOLOGY", "embedded"),
    )
    parser.add_argument("--size", choices=list(SIZES), default=os.environ.get("SIZE", "normal"))
    parser.add_argument(
        "--only",
        choices=["all", "items", "testmgmt", "attachments", "history"],
        default=os.environ.get("ONLY", "all"),
        help="items: the item rows and overload; testmgmt: the test management rows; "
        "attachments: file uploads and downloads; history: versions, baselines, compare",
    )
    args = parser.parse_args()
    sizes = SIZES[args.size] if args.only in ("all", "items") else ()
    workdir = Path(tempfile.mkdtemp(prefix="plumbline-bench-"))
    started = time.monotonic()
    # The e2e harness lowers the upload limit; the bench sends files above it.
    overrides = {"PLUMBLINE_MAX_UPLOAD_BYTES": str(att.MAX_UPLOAD)}
    system = (
        start_embedded(workdir, overrides)
        if args.topology == "embedded"
        else start_distributed(workdir, overrides)
    )
    bare_process = None
    rows: list[dict[str, Any]] = []
    overload: list[dict[str, Any]] = []
    testmgmt: dict[str, Any] | None = None
    attachments: dict[str, Any] | None = None
    history: dict[str, Any] | None = None
    try:
        items_port = next(p for p in system.processes if p.name in ("all", "items")).grpc_port
        basic = "Basic " + base64.b64encode(f"admin:{system.admin_password}".encode()).decode()
        creds = httpx.post(
            f"{system.url}/rest/labs/users/current/apicredentials",
            json={"name": "bench"},
            auth=("admin", system.admin_password),
        ).json()["data"]
        token = httpx.post(
            f"{system.url}/rest/oauth/token",
            data={"grant_type": "client_credentials"},
            auth=(creds["clientId"], creds["clientSecret"]),
        ).json()["access_token"]
        bearer = f"Bearer {token}"

        # The gRPC channel binds to the loop that is current when it is made.
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        seeder = Seeder(f"127.0.0.1:{items_port}")
        loop.run_until_complete(seeder.start())
        env = system.env
        items_url = env.get("PLUMBLINE_DATABASE_URL", "").replace("{service}", "items") or (
            f"sqlite+aiosqlite:///{Path(env['PLUMBLINE_DATA_DIR']).resolve()}/items.db"
        )
        bare_port = _free_port()
        bare_process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.bare",
                "--database-url",
                items_url,
                "--port",
                str(bare_port),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{bare_port}/bare/items/1", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)

        member = _group_member(system.url, basic, seeder.data.projects)
        targets = Targets(
            big_project=seeder.data.big_project,
            req_type=seeder.types["REQ"],
            folder=seeder.folders[seeder.data.big_project][0],
        )

        for size in sizes:
            seed_started = time.monotonic()
            loop.run_until_complete(seeder.grow_to(size))
            seeded = time.monotonic() - seed_started
            waited = wait_for_feed(system.url, seeder.data.big_project, basic)
            analyzed = (
                f"; VACUUM ANALYZE took "
                f"{loop.run_until_complete(analyze(env['PLUMBLINE_DATABASE_URL'])):.0f}s"
                if args.topology == "distributed"
                else ""
            )
            print(
                f"seeded {seeder.data.items} items, {seeder.data.relationships} relationships "
                f"in {seeded:.0f}s; the activity feed caught up {waited:.0f}s later{analyzed}",
                flush=True,
            )
            ids = workdir / "ids.json"
            ids.write_text(json.dumps(seeder.data.leaves[-2000:]))
            bare = {
                c: drive(f"http://127.0.0.1:{bare_port}", "/bare/items/{id}", c, ids)
                for c in REQUESTS
            }
            for c, result in bare.items():
                rows.append(
                    {
                        "operation": "bare endpoint (same stack, same row)",
                        "size": size,
                        "concurrency": c,
                        **result,
                        "ratio_to_bare": 1.0,
                    }
                )
            for name, method, path, body, auth, read in _operations(targets, basic, bearer, member):
                if not read and size != sizes[-1]:
                    continue
                if "startAt=10000" in path and size < 12_000:
                    continue
                for c in REQUESTS:
                    # The bare endpoint again, right before: this machine's speed drifts
                    # during a run, and a ratio is only fair between neighbours in time.
                    neighbour = drive(f"http://127.0.0.1:{bare_port}", "/bare/items/{id}", c, ids)
                    result = drive(system.url, path, c, ids, method, body, auth)
                    rows.append(
                        {
                            "operation": name,
                            "size": size,
                            "concurrency": c,
                            **result,
                            "bare_rps": neighbour["rps"],
                            "ratio_to_bare": result["rps"] / neighbour["rps"]
                            if neighbour["rps"]
                            else 0.0,
                            "read": read,
                        }
                    )
            print(_table([r for r in rows if r["size"] == size]), flush=True)
        if sizes:
            overload = _overload(system.url, basic, workdir / "ids.json")
            print(_overload_table(overload), flush=True)
        if args.only in ("all", "testmgmt"):
            testmgmt = tm.measure(system, loop, seeder, basic, workdir, args.size)
            print(tm.report(testmgmt), flush=True)
        if args.only in ("all", "attachments"):
            attachments = att.measure(system, basic, workdir)
            print(att.report(attachments), flush=True)
        if args.only in ("all", "history"):
            history = hist.measure(system, loop, seeder, basic, workdir, args.size)
            print(hist.report(history), flush=True)
        print(_report(rows, sizes, overload, testmgmt, attachments, history), flush=True)
        loop.run_until_complete(seeder.close())
        loop.close()
    finally:
        if bare_process is not None:
            bare_process.terminate()
        system.stop()
        if args.topology == "distributed":
            cleanup_distributed(system)
        if args.only in ("all", "attachments"):
            att.cleanup(system)
    RESULTS.mkdir(exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = RESULTS / f"{stamp}-{args.topology}.json"
    out.write_text(
        json.dumps(
            {
                "topology": args.topology,
                "size": args.size,
                "only": args.only,
                "machine": {
                    "cpus": os.cpu_count(),
                    "python": platform.python_version(),
                    "platform": platform.platform(),
                },
                "seconds": time.monotonic() - started,
                "rows": rows,
                "growth": [g for large in sizes[1:] for g in _growth(rows, sizes[0], large)],
                "overload": overload,
                "testmgmt": testmgmt,
                "attachments": attachments,
                "history": history,
                "targets": _targets(rows, sizes, overload, testmgmt, attachments, history),
            },
            indent=1,
        )
    )
    print(f"\nresults: {out} ({time.monotonic() - started:.0f}s)")


if __name__ == "__main__":
    main()
