"""``make bench``: seeds, drives load from a separate process, prints and saves the table.

python -m bench [--topology embedded|distributed] [--size small|normal|large]
    [--only all|items|testmgmt|attachments|history] [--peer none|kiwi]
    [--kiwi-result FILE]
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
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from bench import attachments as att
from bench import cpu, lag, paging
from bench import history as hist
from bench import hooks as hk
from bench import peer as kiwi
from bench import testmgmt as tm
from bench import trace as tr
from bench.drive import (
    REQUESTS,
    ROW_SECONDS,
    analyze,
    bare_beside,
    drive,
    open_loop,
    serving_processes,
    timed_cpu,
    wait_for_feed,
)
from bench.overload import wait_idle
from bench.paging import deep_start
from bench.report import overload_table, report, table
from bench.seed import WORDS, Seeder
from bench.targets import GROUP_ITEM, GROUP_SEARCH, MAIN, growth, main_rows, targets
from tests.e2e.topology import System, cleanup_distributed, start_distributed, start_embedded

RESULTS = Path(__file__).parent / "results"
SIZES = {
    "small": (2_000,),
    "normal": (2_000, 20_000),
    "large": (2_000, 20_000, 200_000),
}
#: Issue 25: the distributed topology is measured at a million items too (seeded through
#: the bulk import); the embedded default up to 200,000.
LARGEST = {"distributed": 1_000_000}


def sizes_of(args: argparse.Namespace) -> tuple[int, ...]:
    """The data set sizes the items rows are measured at (none when only another part
    of the bench runs)."""
    if args.only not in ("all", "items"):
        return ()
    sizes = SIZES[args.size]
    if args.size == "large" and args.topology in LARGEST:
        sizes = (*sizes, LARGEST[args.topology])
    return sizes


#: Rows only compared with their neighbour at the same size (a role through a group
#: against the admin's, Bearer against Basic), so measured at the last size only; every
#: other read is measured at each size for its growth.
LAST_SIZE_ONLY = frozenset({GROUP_ITEM, GROUP_SEARCH, "GET /users/current (Bearer)"})

#: The word searched for: 2% of the requirements hold it (see bench.seed.WORDS).
SEARCHED = WORDS[7]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


OVERLOAD_SECONDS = 8.0
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
        wait_idle(url, quiet_for=2.0, timeout=90.0)
    capacity = results[0]["ok_per_s"]
    for result in results:
        result["of_capacity"] = result["ok_per_s"] / capacity if capacity else 0.0
    return results


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


#: The item rows' operations: (name, method, path, body, authorization, read).
Operation = tuple[str, str, str, str | None, str, bool]
#: Makes them (with credentials fresh at the time of the call).
Operations = Callable[[], list[Operation]]


def _operations(data: Targets, basic: str, bearer: str, member: str) -> list[Operation]:
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
            "GET /items?project startAt=500000",
            "GET",
            f"/rest/v1/items?project={big}&startAt=500000",
            None,
            basic,
            True,
        ),
        (
            "GET /activities?project first page",
            "GET",
            f"/rest/v1/activities?project={big}",
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


@dataclass
class Bench:
    """The running system and what drives it: the seeder on its own event loop, the
    bare endpoint the rows are measured against, the admin's Basic credentials."""

    system: System
    loop: asyncio.AbstractEventLoop
    seeder: Seeder
    basic: str
    bare_url: str
    workdir: Path


@dataclass
class Measured:
    """Every figure of a run: the item rows, their open-loop runs, the overload runs, the
    other parts', the seconds each part took, and the comparison with Kiwi."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    open_loop: list[dict[str, Any]] = field(default_factory=list)
    overload: list[dict[str, Any]] = field(default_factory=list)
    testmgmt: dict[str, Any] | None = None
    attachments: dict[str, Any] | None = None
    history: dict[str, Any] | None = None
    #: Webhook deliveries (issue 26).
    hooks: dict[str, Any] | None = None
    trace: dict[str, Any] | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    kiwi: dict[str, Any] | None = None
    peer: list[dict[str, Any]] = field(default_factory=list)
    #: Each size's peak resident set of each of Plumbline's processes (issue 25).
    memory: list[dict[str, Any]] = field(default_factory=list)
    #: Each size's walk through a whole project, page by page (issue 25).
    paging: list[dict[str, Any]] = field(default_factory=list)

    def all_open_loop(self) -> list[dict[str, Any]]:
        """The item operations' open-loop runs and the test run PUT's."""
        paced = self.testmgmt.get("paced") if self.testmgmt else None
        return self.open_loop + ([{"operation": tm.PUT, **paced}] if paced else [])

    def speed(self, args: argparse.Namespace) -> dict[str, Any]:
        """``bench.targets.targets``' keyword arguments for this run."""
        return {
            "open_loop": self.all_open_loop(),
            "paging_walks": self.paging,
            "peer": kiwi.targets(self.peer),
            "bench_seconds": self.seconds.get("plumbline"),
            "timed": args.size == "normal" and args.only == "all",
            "hooks": self.hooks,
            "topology": args.topology,
            "trace": self.trace,
        }


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench")
    parser.add_argument(
        "--topology",
        choices=["embedded", "distributed"],
        default=os.environ.get("TOPOLOGY", "embedded"),
    )
    parser.add_argument("--size", choices=list(SIZES), default=os.environ.get("SIZE", "normal"))
    parser.add_argument(
        "--only",
        choices=["all", "items", "testmgmt", "attachments", "history", "hooks", "trace"],
        default=os.environ.get("ONLY", "all"),
        help="items: the item rows and overload; testmgmt: the test management rows; "
        "attachments: file uploads and downloads; history: versions, baselines, compare; "
        "hooks: webhook deliveries; trace: traces, coverage, impact and a trace report",
    )
    parser.add_argument(
        "--peer",
        choices=["none", "kiwi"],
        default=os.environ.get("PEER") or "none",
        help="kiwi: after Plumbline's rows, once it has stopped, run Kiwi TCMS's anchor "
        "(../shared/anchors/kiwi/run.sh, 11 to 20 minutes) and compare",
    )
    parser.add_argument(
        "--kiwi-result",
        type=Path,
        default=Path(os.environ["KIWI_RESULT"]) if os.environ.get("KIWI_RESULT") else None,
        help="compare with this Kiwi result instead of running Kiwi (implies --peer kiwi)",
    )
    args = parser.parse_args()
    if args.kiwi_result:
        args.peer = "kiwi"
        # Read now: a wrong file should not be found out after the whole run.
        try:
            kiwi.read_kiwi(args.kiwi_result)
        except (OSError, ValueError) as error:
            parser.error(f"KIWI_RESULT: {error}")
    return args


def _bearer(system: System) -> str:
    """A Bearer token of the admin's, through API credentials and the OAuth token grant."""
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
    return f"Bearer {token}"


def _start_bare(system: System) -> tuple[subprocess.Popen[bytes], str]:
    """The bare endpoint (bench.bare) on the items database, and its URL once it answers."""
    env = system.env
    items_url = env.get("PLUMBLINE_DATABASE_URL", "").replace("{service}", "items") or (
        f"sqlite+aiosqlite:///{Path(env['PLUMBLINE_DATA_DIR']).resolve()}/items.db"
    )
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.bare", "--database-url", items_url, "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{url}/bare/items/1", timeout=1)
            break
        except httpx.TransportError:
            time.sleep(0.1)
    return process, url


def _seed(bench: Bench, size: int) -> Path:
    """Grows the data to ``size`` items, waits for the activity feed (and, on PostgreSQL,
    analyzes), and writes the ids the reads aim at."""
    seeder, loop = bench.seeder, bench.loop
    seed_started = time.monotonic()
    loop.run_until_complete(seeder.grow_to(size))
    seeded = time.monotonic() - seed_started
    waited = wait_for_feed(bench.system.url, seeder.data.big_project, bench.basic)
    analyzed = (
        f"; VACUUM ANALYZE took "
        f"{loop.run_until_complete(analyze(bench.system.env['PLUMBLINE_DATABASE_URL'])):.0f}s"
        if bench.system.topology == "distributed"
        else ""
    )
    print(
        f"seeded {seeder.data.items} items, {seeder.data.versions} later versions, "
        f"{seeder.data.relationships} relationships "
        f"in {seeded:.0f}s; the activity feed caught up {waited:.0f}s later{analyzed}",
        flush=True,
    )
    ids = bench.workdir / "ids.json"
    ids.write_text(json.dumps(seeder.data.leaves[-2000:]))
    return ids


def _measure_size(
    bench: Bench, size: int, last: bool, operations_of: Operations, measured: Measured
) -> list[dict[str, Any]]:
    """The rows of one size: the bare endpoint, then each operation next to it (writes and
    ``LAST_SIZE_ONLY`` at the last size only, deep pages where there are enough items),
    each bracketed by CPU samples; at the last size, each main operation also open loop
    at half its c32 throughput (into ``measured``)."""
    ids = _seed(bench, size)
    operations = operations_of()
    rows = [
        {
            "operation": "bare endpoint (same stack, same row)",
            "size": size,
            "concurrency": c,
            **drive(bench.bare_url, "/bare/items/{id}", c, ids),
            "ratio_to_bare": 1.0,
        }
        for c in REQUESTS
    ]
    url = bench.system.url
    for name, method, path, body, auth, read in operations:
        if not last and (not read or name in LAST_SIZE_ONLY):
            continue
        if size < 1.2 * deep_start(path):
            continue
        for c in REQUESTS:
            neighbour = bare_beside(bench.bare_url, c, ids)
            watched: dict[str, Any] = {}
            # A write row: how far the consumers of its events fall behind.
            with lag.watching(url, bench.basic, watched) if not read else nullcontext():
                result, used = timed_cpu(
                    bench.system,
                    [],
                    partial(drive, url, path, c, ids, method, body, auth, seconds=ROW_SECONDS),
                )
            rows.append(
                {
                    "operation": name,
                    "size": size,
                    "concurrency": c,
                    **result,
                    "bare_rps": neighbour["rps"],
                    "ratio_to_bare": result["rps"] / neighbour["rps"] if neighbour["rps"] else 0.0,
                    "read": read,
                    "cpu": used,
                    **watched,
                }
            )
            if last and c == 32 and name in MAIN:
                paced = open_loop(url, path, ids, result["rps"], method, body, auth)
                if paced:
                    measured.open_loop.append({"operation": name, "read": read, **paced})
    return rows


def plumbline_peaks(system: System) -> dict[str, float]:
    """The peak resident set, MiB, of each of the system's own processes (PostgreSQL and
    NATS left out): what a process has held at most since it started."""
    own = {p.popen.pid for p in system.processes}
    own |= {w for p in system.processes for w in (*p.workers, *p.analytics)}
    return cpu.peak_memory(
        {pid: label for pid, label in serving_processes(system, []).items() if pid in own}
    )


def _measure_items(bench: Bench, sizes: tuple[int, ...], operations: Operations) -> Measured:
    """The item rows of each size (printed as each is done), then the overload runs."""
    measured = Measured()
    if not sizes:
        return measured
    started = time.monotonic()
    for size in sizes:
        rows = _measure_size(bench, size, size == sizes[-1], operations, measured)
        measured.rows += rows
        print(table(rows), flush=True)
        # The second project (15% of the items): as a public client reads it all.
        walked = paging.walk(bench.system.url, bench.seeder.data.projects[1], bench.basic)
        measured.paging.append({"size": size, **walked})
        print(paging.table(measured.paging[-1:]), flush=True)
        peaks = plumbline_peaks(bench.system)
        measured.memory.append({"size": size, "peak_mib": peaks})
        print(
            f"peak memory at {size} items, MiB: "
            + ", ".join(f"{label} {mib:.0f}" for label, mib in sorted(peaks.items())),
            flush=True,
        )
    measured.overload = _overload(bench.system.url, bench.basic, bench.workdir / "ids.json")
    print(overload_table(measured.overload), flush=True)
    measured.seconds["items"] = time.monotonic() - started
    return measured


def _measure_parts(bench: Bench, only: str, size: str, measured: Measured) -> None:
    """The test management, attachments and history parts ``only`` asks for."""
    if only in ("all", "testmgmt"):
        started = time.monotonic()
        measured.testmgmt = tm.measure(
            bench.system, bench.loop, bench.seeder, bench.basic, bench.workdir, size, bench.bare_url
        )
        print(tm.report(measured.testmgmt), flush=True)
        measured.seconds["testmgmt"] = time.monotonic() - started
    if only in ("all", "attachments"):
        started = time.monotonic()
        measured.attachments = att.measure(bench.system, bench.basic, bench.workdir)
        print(att.report(measured.attachments), flush=True)
        measured.seconds["attachments"] = time.monotonic() - started
    if only in ("all", "history"):
        started = time.monotonic()
        measured.history = hist.measure(
            bench.system, bench.loop, bench.seeder, bench.basic, bench.workdir, size
        )
        print(hist.report(measured.history), flush=True)
        measured.seconds["history"] = time.monotonic() - started
    if only in ("all", "hooks"):
        started = time.monotonic()
        measured.hooks = hk.measure(bench.system, bench.basic, bench.seeder.types["REQ"])
        print(hk.report(measured.hooks), flush=True)
        measured.seconds["hooks"] = time.monotonic() - started
    if only in ("all", "trace"):
        started = time.monotonic()
        requirements = tr.REQUIREMENTS_LARGE if size == "large" else tr.REQUIREMENTS
        # The rows without a target (as it was, ReqIF) take two minutes at normal size:
        # they run when the trace part runs alone or at SIZE=large.
        informational = only == "trace" or size == "large"
        measured.trace = tr.measure(bench.system, bench.basic, requirements, informational)
        print(tr.report(measured.trace), flush=True)
        measured.seconds["trace"] = time.monotonic() - started


def _measure(system: System, args: argparse.Namespace, workdir: Path) -> Measured:
    """Seeds and measures every part of the run on the started ``system``."""
    sizes = sizes_of(args)
    basic = "Basic " + base64.b64encode(f"admin:{system.admin_password}".encode()).decode()
    items_port = next(p for p in system.processes if p.name in ("all", "items")).grpc_port
    # The gRPC channel binds to the loop that is current when it is made.
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    seeder = Seeder(f"127.0.0.1:{items_port}")
    loop.run_until_complete(seeder.start())
    bare_process, bare_url = _start_bare(system)
    try:
        member = _group_member(system.url, basic, seeder.data.projects)
        big = seeder.data.big_project
        aimed = Targets(big, req_type=seeder.types["REQ"], folder=seeder.folders[big][0])
        bench = Bench(system, loop, seeder, basic, bare_url, workdir)
        # A Bearer token per size, taken after its seeding: a large step seeds for longer
        # than a token lives.
        measured = _measure_items(
            bench, sizes, lambda: _operations(aimed, basic, _bearer(system), member)
        )
        _measure_parts(bench, args.only, args.size, measured)
        loop.run_until_complete(seeder.close())
        loop.close()
    finally:
        bare_process.terminate()
    return measured


def _peer(args: argparse.Namespace, measured: Measured) -> None:
    """Kiwi's figures (its anchor run now, or the result ``--kiwi-result`` names) and the
    comparison with the main operations' rows."""
    if args.peer != "kiwi":
        return
    path = args.kiwi_result
    try:
        if path is None:
            RESULTS.mkdir(exist_ok=True)
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            started = time.monotonic()
            path = kiwi.run_kiwi(RESULTS / f"{stamp}-kiwi.json")
            measured.seconds["kiwi"] = time.monotonic() - started
        measured.kiwi = kiwi.read_kiwi(path)
    except (OSError, ValueError, subprocess.CalledProcessError) as error:
        # Plumbline's figures are still saved; the comparison can be printed later
        # (python -m bench.peer).
        print(f"\nno comparison with Kiwi: {error}", flush=True)
        return
    measured.peer = kiwi.compare(main_rows(measured.rows, measured.testmgmt), measured.kiwi)
    print(kiwi.table(measured.peer, measured.kiwi, args.topology), flush=True)


def _timings(seconds: dict[str, float]) -> str:
    """The seconds each part of the run took."""
    parts = ", ".join(f"{name} {s:.0f} s" for name, s in seconds.items())
    return f"\nwall time: {parts}"


def _save(args: argparse.Namespace, measured: Measured) -> Path:
    """The run's figures and verdicts as JSON under bench/results."""
    sizes = sizes_of(args)
    rows = measured.rows
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
                "finished": datetime.now(UTC).isoformat(timespec="seconds"),
                "seconds": measured.seconds.get("plumbline"),
                "part_seconds": measured.seconds,
                "rows": rows,
                "growth": [g for large in sizes[1:] for g in growth(rows, sizes[0], large)],
                "open_loop": measured.all_open_loop(),
                "overload": measured.overload,
                "memory": measured.memory,
                "paging": measured.paging,
                "testmgmt": measured.testmgmt,
                "attachments": measured.attachments,
                "history": measured.history,
                "hooks": measured.hooks,
                "trace": measured.trace,
                "kiwi": measured.kiwi,
                "peer": measured.peer,
                "targets": targets(
                    rows,
                    sizes,
                    measured.overload,
                    measured.testmgmt,
                    measured.attachments,
                    measured.history,
                    **measured.speed(args),
                ),
            },
            indent=1,
        )
    )
    return out


def main() -> None:
    args = _arguments()
    workdir = Path(tempfile.mkdtemp(prefix="plumbline-bench-"))
    started = time.monotonic()
    # The e2e harness lowers the upload limit; the bench sends files above it. Its one
    # user sends up to 8 files at once, over the per-user cap of transfers (4), which is
    # a limit to protect the API, not a cost to measure.
    overrides = {
        "PLUMBLINE_MAX_UPLOAD_BYTES": str(att.MAX_UPLOAD),
        "PLUMBLINE_TRANSFER_PER_USER": "64",
    }
    if args.topology == "distributed":
        # The e2e harness keeps 2 PostgreSQL connections a process (two systems run at
        # once there); past them a process opens and closes one per extra concurrent
        # transaction. A consumer, its lease, webhook deliveries and reads together
        # opened about 25 a second in all under a steady write load: the harness's cost,
        # not the product's (its pool keeps 10). The bench runs one system: 5 kept, at
        # most 10 as before.
        overrides |= {"PLUMBLINE_DB_POOL_SIZE": "5", "PLUMBLINE_DB_MAX_OVERFLOW": "5"}
    start = start_embedded if args.topology == "embedded" else start_distributed
    system = start(workdir, overrides)
    try:
        measured = _measure(system, args, workdir)
    finally:
        system.stop()
        if args.topology == "distributed":
            cleanup_distributed(system)
        if args.only in ("all", "attachments"):
            att.cleanup(system)
    measured.seconds["plumbline"] = time.monotonic() - started
    # Kiwi only once Plumbline has stopped: both on the same cores would measure neither.
    _peer(args, measured)
    sizes = sizes_of(args)
    print(
        report(
            measured.rows,
            sizes,
            measured.overload,
            measured.testmgmt,
            measured.attachments,
            measured.history,
            **measured.speed(args),
        )
        + _timings(measured.seconds),
        flush=True,
    )
    out = _save(args, measured)
    print(f"\nresults: {out} ({time.monotonic() - started:.0f}s)")


if __name__ == "__main__":
    main()
