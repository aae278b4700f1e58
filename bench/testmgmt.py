"""``make bench``'s test management rows.

Seeds a project of test cases of three steps each (items' bulk create), a plan whose
group holds 500 of them and a plan whose group holds the others (10,000; 2,000 with
``--size small``), filling the groups through testmgmt's gRPC API. Then, over REST:

- generating a cycle of 500 runs (``POST /testplans/{id}/testcycles``), the median of a
  few, and generating the big cycle once;
- ``GET /testruns?testCycle=`` (the big cycle's first page) and ``PUT /testruns/{id}``
  with three step results (the first 500-run cycle's runs), c1 and c32, each PUT right
  after the bare endpoint (reading the seeded test cases) and bracketed by CPU samples of
  every process that serves it (``bench.cpu``);
- the same PUT paced (open loop) at half the c32 throughput: the latency target;
- distributed: the PUT again through a second gateway that knows only the first testmgmt
  replica, so the table shows two replicas against one;
- a JUnit report with one ``<testcase>`` per run of the big cycle, ingested at once
  (``POST /rest/labs/testcycles/{id}/results``, or ``Results/IngestJUnit`` directly while
  the gateway has no such route).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import httpx

from bench import lag
from bench.drive import (
    REQUESTS,
    analyze,
    bare_beside,
    drive,
    median_seconds,
    open_loop,
    table,
    timed_cpu,
    wait_for_feed,
)
from bench.seed import Seeder
from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2
from plumbline.common.context import to_metadata
from plumbline.common.rpc import connect
from plumbline.gateway.bodies import MAX_GROUP_CASES
from plumbline.gateway.upstreams import TestmgmtClient
from tests.e2e.topology import Process, System, address_of, start_gateway

#: Test cases in the big plan's group (and so runs of the big cycle and cases of the
#: report), by ``--size``.
INGEST_CASES = {"small": 2_000, "normal": 10_000, "large": 10_000}
#: More cycles of the big plan made before the rows, by ``--size``: at ``large`` the
#: project then holds about 100,000 runs (issue 25), the rows' cycle one of 10,000.
MORE_CYCLES = {"small": 0, "normal": 0, "large": 9}
GENERATED = 500
REPETITIONS = 5
CHUNK = 64 * 1024
PUT = "PUT /testruns/{id}"
PUT_BODY = json.dumps(
    {
        "fields": {
            "testRunSteps": [
                {"status": "PASSED"},
                {"status": "FAILED", "result": "r{n}"},
                {"status": "PASSED"},
            ]
        }
    }
)
CYCLE_FIELDS = {"startDate": "2026-01-01", "endDate": "2026-01-31"}


@dataclass(frozen=True)
class Plans:
    """What the seed made: the project, the two plans and the big plan's test cases."""

    project: int
    small_plan: int
    big_plan: int
    big_cases: list[int]
    first_big_case: int
    #: Seconds the test cases took, and the groups.
    cases_s: float
    groups_s: float


def case_name(n: int) -> str:
    """The name of the seeded test case ``n`` (and so of its runs)."""
    return f"Case {n}"


def junit_report(cases: list[tuple[int, str]]) -> tuple[bytes, dict[str, int]]:
    """A JUnit report of one ``<testcase>`` per (test case id, run name) and its statuses.

    Even ones name their test case by a ``testcase`` property (its id) under a name of
    their own, odd ones by the run's exact name, so both ways of matching are measured.
    Three in twenty fail and two in twenty are skipped, by name and by property alike;
    the others pass.
    """
    counts = {"PASSED": 0, "FAILED": 0, "NOT_RUN": 0}
    parts = ['<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n']
    parts.append(f'<testsuite name="bench" tests="{len(cases)}">\n')
    for n, (case_id, name) in enumerate(cases):
        if n % 2 == 0:
            head = f'<testcase classname="bench.Suite{n % 20}" name="test_{n}" time="0.01">'
            head += f'<properties><property name="testcase" value="{case_id}"/></properties>'
        else:
            head = f'<testcase classname="bench.Suite{n % 20}" name={quoteattr(name)} time="0.01">'
        if n % 10 == 3 or n % 20 == 6:
            counts["FAILED"] += 1
            body = (
                f'<failure message="expected {n}, got {n + 1}" type="AssertionError">'
                f"Traceback: line {n}</failure><system-out>output of {n}</system-out>"
            )
        elif n % 20 in (8, 17):
            counts["NOT_RUN"] += 1
            body = '<skipped message="not on this platform"/>'
        else:
            counts["PASSED"] += 1
            body = ""
        parts.append(f"{head}{body}</testcase>\n")
    parts.append("</testsuite>\n</testsuites>\n")
    return "".join(parts).encode(), counts


async def seed(seeder: Seeder, tm: TestmgmtClient, big: int) -> Plans:
    """A project of ``GENERATED + big`` test cases and the two plans holding them."""
    project = (
        await seeder.client.projects.CreateProject(
            items_pb2.ProjectInput(project_key="TM", fields_json=b'{"name": "Test management"}')
        )
    ).id
    started = time.monotonic()
    cases = await seeder.test_cases(project, GENERATED + big, "Case")
    cases_s = time.monotonic() - started
    plans = []
    for name in ("Generation", "Ingest"):
        created = await tm.plans.CreatePlan(
            testmgmt_pb2.PlanInput(project=project, fields_json=json.dumps({"name": name}).encode())
        )
        plans.append(created.id)
    started = time.monotonic()
    for plan, members in zip(plans, (cases[:GENERATED], cases[GENERATED:]), strict=True):
        # A new plan starts with one group.
        groups = await tm.groups.ListGroups(
            testmgmt_pb2.ListGroupsRequest(plan=plan, page=core_pb2.Page(max_results=1))
        )
        group = groups.groups[0].id
        for start in range(0, len(members), MAX_GROUP_CASES):
            await tm.groups.AddGroupCases(
                testmgmt_pb2.GroupCases(
                    plan=plan, group=group, test_cases=members[start : start + MAX_GROUP_CASES]
                ),
                timeout=600,
            )
    groups_s = time.monotonic() - started
    return Plans(project, plans[0], plans[1], cases[GENERATED:], GENERATED, cases_s, groups_s)


def create_cycle(client: httpx.Client, plan: int, name: str) -> tuple[int, float]:
    """``POST /testplans/{plan}/testcycles``: the new cycle and the seconds it took."""
    started = time.perf_counter()
    response = client.post(
        f"/testplans/{plan}/testcycles", json={"fields": {"name": name, **CYCLE_FIELDS}}
    )
    elapsed = time.perf_counter() - started
    if response.status_code != 201:
        raise RuntimeError(f"creating a cycle answered {response.status_code}: {response.text}")
    return int(response.json()["meta"]["id"]), elapsed


def run_ids(client: httpx.Client, cycle: int) -> list[int]:
    """Every run of ``cycle``, page by page."""
    ids: list[int] = []
    while True:
        response = client.get(
            f"/testcycles/{cycle}/testruns", params={"startAt": len(ids), "maxResults": 50}
        )
        response.raise_for_status()
        page = [int(r["id"]) for r in response.json()["data"]]
        ids += page
        if len(page) < 50:
            return ids


async def _chunks(cycle: int, report: bytes) -> AsyncIterator[testmgmt_pb2.ReportChunk]:
    for start in range(0, len(report), CHUNK):
        yield testmgmt_pb2.ReportChunk(
            test_cycle=cycle if start == 0 else 0, data=report[start : start + CHUNK]
        )


async def ingest(
    tm: TestmgmtClient, client: httpx.Client, url: str, cycle: int, report: bytes
) -> dict[str, Any]:
    """Ingests ``report`` into ``cycle``; seconds, matched and unmatched, and the way in.

    Through the gateway (``url``) when it has the route (an empty report answers 200),
    else straight to the service.
    """
    results = f"{url}/rest/labs/testcycles/{cycle}/results"
    xml = {"Content-Type": "application/xml"}
    if client.post(results, content=b"<testsuites/>", headers=xml).status_code == 200:
        started = time.perf_counter()
        response = client.post(results, content=report, headers=xml, timeout=300)
        seconds = time.perf_counter() - started
        response.raise_for_status()
        data = response.json()["data"]
        return {
            "seconds": seconds,
            "via": "REST",
            "matched": len(data["matched"]),
            "unmatched": len(data["unmatched"]),
        }
    started = time.perf_counter()
    # The principal goes as explicit metadata: the shared client interceptor adds it to
    # single-request calls only (a channel takes an interceptor for one kind of call).
    reply = await tm.results.IngestJUnit(
        _chunks(cycle, report), metadata=to_metadata(), timeout=300
    )
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "via": "gRPC Results/IngestJUnit",
        "matched": len(reply.matched),
        "unmatched": len(reply.unmatched),
    }


def measure(
    system: System,
    loop: asyncio.AbstractEventLoop,
    seeder: Seeder,
    auth: str,
    workdir: Path,
    size: str,
    bare_url: str | None = None,
) -> dict[str, Any]:
    """Seeds and measures the test management rows; every figure in one dict. Each PUT
    row is measured right after the bare endpoint at ``bare_url``, when given."""
    grpc_port = next(p for p in system.processes if p.name in ("all", "testmgmt")).grpc_port
    address = (
        address_of(system, "testmgmt")
        if system.topology == "distributed"
        else f"127.0.0.1:{grpc_port}"
    )
    tm = TestmgmtClient(connect("testmgmt", address))
    big = INGEST_CASES[size]
    out: dict[str, Any] = {"rows": [], "ingest_cases": big, "generated": GENERATED}
    client = httpx.Client(
        base_url=f"{system.url}/rest/v1", headers={"Authorization": auth}, timeout=120
    )
    extra: list[Process] = []
    try:
        started = time.monotonic()
        plans = loop.run_until_complete(seed(seeder, tm, big))
        out["seed_seconds"] = time.monotonic() - started
        waited = wait_for_feed(system.url, plans.project, auth)
        print(
            f"seeded {GENERATED + big} test cases in {plans.cases_s:.0f}s and filled two "
            f"plans' groups in {plans.groups_s:.0f}s; the feed caught up {waited:.0f}s later",
            flush=True,
        )

        big_cycle, first_cycle = _measure_cycles(system, client, plans, auth, big, out)
        _more_cycles(system, client, plans, auth, MORE_CYCLES[size], out)
        if system.topology == "distributed":
            loop.run_until_complete(analyze(system.env["PLUMBLINE_DATABASE_URL"]))
        runs = workdir / "runs.json"
        runs.write_text(json.dumps(run_ids(client, first_cycle)))
        cases = workdir / "cases.json"
        cases.write_text(json.dumps(plans.big_cases[-2000:]))
        bare = (bare_url, cases) if bare_url else None
        _measure_runs(system, runs, big_cycle, auth, big, extra, out, bare)

        wait_for_feed(system.url, plans.project, auth)
        report, statuses = junit_report(
            [(case, case_name(plans.first_big_case + n)) for n, case in enumerate(plans.big_cases)]
        )
        out["ingest"] = {
            **loop.run_until_complete(ingest(tm, client, system.url, big_cycle, report)),
            "bytes": len(report),
            "statuses": statuses,
        }
        print(
            f"JUnit ingest of {big} cases ({len(report) // 1024} KiB) via "
            f"{out['ingest']['via']}: {out['ingest']['seconds']:.2f}s, "
            f"{out['ingest']['matched']} matched, {out['ingest']['unmatched']} unmatched",
            flush=True,
        )
    finally:
        for process in extra:
            process.stop()
        client.close()
        loop.run_until_complete(tm.channel.close())
    return out


def _row(out: dict[str, Any], name: str, c: int, result: dict[str, Any], runs: int) -> None:
    out["rows"].append({"operation": name, "size": runs, "concurrency": c, **result})
    print(f"  {name} c{c}: {result['rps']:.0f} req/s", flush=True)


def _measure_cycles(
    system: System, client: httpx.Client, plans: Plans, auth: str, big: int, out: dict[str, Any]
) -> tuple[int, int]:
    """Cycles generated from the small plan, then one from the big plan: the big cycle
    and the first generated one."""
    samples, cycles = [], []
    for repetition in range(REPETITIONS):
        cycle, seconds = create_cycle(client, plans.small_plan, f"Generated {repetition}")
        samples.append(seconds)
        cycles.append(cycle)
        wait_for_feed(system.url, plans.project, auth)
    out["cycle_samples"] = samples
    out["cycle_median_s"] = median_seconds(samples)
    big_cycle, out["big_cycle_s"] = create_cycle(client, plans.big_plan, "Ingest")
    waited = wait_for_feed(system.url, plans.project, auth)
    print(
        f"cycle of {GENERATED} runs: median {out['cycle_median_s']:.2f}s of {samples}; "
        f"cycle of {big} runs: {out['big_cycle_s']:.2f}s (the feed caught up {waited:.0f}s "
        "later)",
        flush=True,
    )
    return big_cycle, cycles[0]


def _more_cycles(
    system: System, client: httpx.Client, plans: Plans, auth: str, count: int, out: dict[str, Any]
) -> None:
    """``count`` more cycles of the big plan (each as many runs as it has test cases),
    and how long they took with the feed catching up."""
    if not count:
        return
    started = time.monotonic()
    for n in range(count):
        create_cycle(client, plans.big_plan, f"More {n}")
    made = time.monotonic() - started
    waited = wait_for_feed(system.url, plans.project, auth)
    plan_runs = client.get("/testruns", params={"testPlan": plans.big_plan, "maxResults": 1})
    runs = int(plan_runs.json()["meta"]["pageInfo"]["totalResults"])
    out["more_cycles"] = {"cycles": count, "seconds": made, "feed_s": waited, "runs": runs}
    print(
        f"{count} more cycles of {len(plans.big_cases)} runs in {made:.0f}s (the feed caught "
        f"up {waited:.0f}s later); the big plan has {runs} runs",
        flush=True,
    )


def _measure_runs(
    system: System,
    runs: Path,
    big_cycle: int,
    auth: str,
    big: int,
    extra: list[Process],
    out: dict[str, Any],
    bare: tuple[str, Path] | None = None,
) -> None:
    """The big cycle's first page of runs; PUTs of runs closed loop (each after the bare
    endpoint, when ``bare`` names it and the ids it reads), then paced at half the c32
    rate; distributed, PUTs through a gateway that reaches one testmgmt replica (started
    into ``extra``)."""
    listing = f"/rest/v1/testruns?testCycle={big_cycle}"
    for c in REQUESTS:
        _row(
            out,
            "GET /testruns?testCycle= first page",
            c,
            drive(system.url, listing, c, runs, auth=auth),
            big,
        )
    put = "/rest/v1/testruns/{id}"
    for c in REQUESTS:
        neighbour = bare_beside(bare[0], c, bare[1]) if bare else None
        watched: dict[str, Any] = {}
        with lag.watching(system.url, auth, watched):  # the consumers keep up, or not
            result, used = timed_cpu(
                system, extra, partial(drive, system.url, put, c, runs, "PUT", PUT_BODY, auth)
            )
        if neighbour:
            result["bare_rps"] = neighbour["rps"]
            result["ratio_to_bare"] = result["rps"] / neighbour["rps"] if neighbour["rps"] else 0
        _row(out, PUT, c, {**result, **watched, "cpu": used, "read": False}, GENERATED)
        if c == 32:
            out["cpu"] = used
            out["paced"] = open_loop(system.url, put, runs, result["rps"], "PUT", PUT_BODY, auth)
    if system.topology == "distributed":
        first = system.processes[[p.name for p in system.processes].index("testmgmt")]
        env = {"PLUMBLINE_TESTMGMT_ADDR": f"127.0.0.1:{first.grpc_port}"}
        extra.append(start_gateway(system, "gateway-1replica", env))
        one = f"http://127.0.0.1:{extra[0].http_port}"
        name = f"{PUT} (1 testmgmt replica)"
        _row(out, name, 1, drive(one, put, 1, runs, "PUT", PUT_BODY, auth), GENERATED)
        result, out["cpu_one_replica"] = timed_cpu(
            system, extra, lambda: drive(one, put, 32, runs, "PUT", PUT_BODY, auth)
        )
        _row(out, name, 32, result, GENERATED)


def targets(tm: dict[str, Any]) -> list[tuple[str, float | None, float | None, bool]]:
    """(name, measured, limit, higher is better) of each target the rows judge; a limit
    of None is a figure reported without a verdict. The PUT's open-loop latency, its CPU
    and its ratios to the bare endpoint and to Kiwi are judged with the item rows'
    (``bench.targets``)."""
    put = next((r for r in tm["rows"] if r["operation"] == PUT and r["concurrency"] == 32), None)
    ingest = tm.get("ingest")
    return [
        (f"{PUT} c32, req/s (reported)", put["rps"] if put else None, None, True),
        (
            f"cycle generation of {tm['generated']} runs, median s (< 1)",
            tm.get("cycle_median_s"),
            1.0,
            False,
        ),
        (
            f"JUnit ingest of {tm['ingest_cases']} cases, s (< 5)",
            ingest["seconds"] if ingest else None,
            5.0,
            False,
        ),
    ]


def report(tm: dict[str, Any]) -> str:
    """The rows, the paced run, generation and ingest, and the CPU per process."""
    lines = ["", *table("test management", tm["rows"], "runs")]
    paced = tm.get("paced")
    if paced:
        lines.append(
            f"{PUT + ' paced':42} {tm['generated']:>7} {'-':>3} {paced['rps']:>8.0f} "
            f"{paced['p50_ms']:>8.2f} {paced['p99_ms']:>8.2f} {paced['errors']:>4} "
            f"{paced['driver_cpu']:>7.2f}  (p99.9 {paced.get('p999_ms', 0):.1f} ms; asked "
            f"{paced['rate']:.0f}/s; "
            f"{paced['extra_connections']:.0f} extra connections, sender at most "
            f"{paced['max_late_ms']:.1f} ms late)"
        )
        if paced["errors"]:
            lines.append(f"{'':42} errors by kind: {paced['error_kinds']}")
    if "cycle_median_s" in tm:
        samples = ", ".join(f"{s:.2f}" for s in tm["cycle_samples"])
        lines += [
            "",
            f"cycle generation, {tm['generated']} runs: median {tm['cycle_median_s']:.2f} s "
            f"({samples})",
            f"cycle generation, {tm['ingest_cases']} runs: {tm['big_cycle_s']:.2f} s",
        ]
    ingest = tm.get("ingest")
    if ingest:
        lines.append(
            f"JUnit ingest, {tm['ingest_cases']} cases ({ingest['bytes'] // 1024} KiB, via "
            f"{ingest['via']}): {ingest['seconds']:.2f} s, {ingest['matched']} matched, "
            f"{ingest['unmatched']} unmatched"
        )
    for key, title in (
        ("cpu", "through the gateway"),
        ("cpu_one_replica", "through the gateway that knows 1 testmgmt replica"),
    ):
        if key not in tm:
            continue
        lines += [
            "",
            f"CPU during {PUT} c32 ({title})",
            f"{'process':34} {'cpu s':>7} {'cores':>6} {'ms/req':>7}",
        ]
        for p in tm[key]:
            lines.append(
                f"{p['process']:34} {p['cpu_s']:>7.2f} {p['cores']:>6.2f} "
                f"{p['cpu_ms_per_request']:>7.2f}"
            )
    return "\n".join(lines)
