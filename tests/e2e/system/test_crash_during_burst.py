"""kill -9 during a burst of concurrent writes of every kind (items created and renamed,
test runs' results, JUnit reports): once the processes are back, every acknowledged write
is there, with its version in the history and its activity in the feed, each once and in
the order it was made.

Each client owns its records (a record is written by one client only, one request at a
time), so what a record holds, and in what order, follows from what its client was told.
A client stops at its first failure: the request the crash cut off was not acknowledged,
so it may have been applied or not, but at most once, and then as the record's last
change. The distributed topology loses the writing services and the two consumers that
build the feed and the history at once; the gateway and identity stay up.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.api import item_types, new_project, project_key
from tests.e2e.conftest import TOPOLOGIES
from tests.e2e.testrecords import add_cases, default_group, new_cycle, new_plan, new_test_case
from tests.e2e.topology import System, require_backends, restart, running

#: Clients of each kind of write.
ITEM_CLIENTS, RUN_CLIENTS, JUNIT_CLIENTS = 8, 6, 4
#: Test runs each results client owns; test cases (and runs) of each JUnit client's cycle.
RUNS_EACH, REPORTED = 2, 2
#: Acknowledged writes of each kind before the crash.
BEFORE_CRASH = 8
#: The processes a crash takes down in the distributed topology.
CRASHED = (
    "items",
    "testmgmt",
    "testmgmt-2",
    "activity",
    "activity-2",
    "baselines",
    "baselines-2",
)
XML = {"Content-Type": "application/xml"}
#: Seconds the restarted system has to answer every read (the feed and the history
#: catching up, services reconnecting).
SETTLE = 45.0
#: The kinds of write: an item created, an item renamed, a run's result, a JUnit report.
KINDS = ("create", "patch", "result", "junit")


@dataclass
class Record:
    """A record written during the burst, and what its client was told."""

    kind: str  # "items" or "testruns"
    id: int
    #: The version its first acknowledged value has (1: created in the burst; 2: a run
    #: generated before it).
    first: int
    #: The values of its acknowledged writes, in order.
    acked: list[str] = field(default_factory=list)
    #: The value of a write the crash cut off (unacknowledged), if any.
    pending: str | None = None


@dataclass
class Burst:
    """Every client's record of what it wrote."""

    items: list[Record] = field(default_factory=list)
    runs: dict[int, Record] = field(default_factory=dict)
    #: Names of items whose creation the crash cut off (their ids are unknown).
    pending_items: list[str] = field(default_factory=list)
    #: JUnit cycle -> its runs: a report changes all of them or none.
    junit_cycles: dict[int, list[int]] = field(default_factory=dict)
    acknowledged: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    #: Set just before the kill: from then on a write may fail.
    crashing: threading.Event = field(default_factory=threading.Event)
    #: Set after the kill: clients that have not failed yet stop.
    stop: threading.Event = field(default_factory=threading.Event)
    #: Writes that failed before the crash (none should).
    failures: list[str] = field(default_factory=list)
    answered: threading.Condition = field(default_factory=threading.Condition)

    def count(self, kind: str) -> None:
        """One more acknowledged write of ``kind``."""
        with self.answered:
            self.acknowledged[kind] += 1
            self.answered.notify_all()

    def fail(self, failure: str) -> None:
        """A write failed; before the crash, that is the test's failure."""
        with self.answered:
            if not self.crashing.is_set():
                self.failures.append(failure)
                self.answered.notify_all()

    def wait_for_writes(self, timeout: float) -> None:
        """Until ``BEFORE_CRASH`` writes of each kind were acknowledged, or one failed."""
        with self.answered:
            self.answered.wait_for(
                lambda: bool(self.failures) or min(self.acknowledged.values()) >= BEFORE_CRASH,
                timeout,
            )
        assert not self.failures, self.failures
        assert min(self.acknowledged.values()) >= BEFORE_CRASH, self.acknowledged


@pytest.fixture(params=TOPOLOGIES)
def own_system(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[System]:
    """A system of this test's own: the crash disturbs no other test."""
    if request.param == "distributed":
        require_backends()
    with running(request.param, tmp_path) as system:
        yield system


def test_every_acknowledged_write_survives_a_crash(own_system: System) -> None:
    system = own_system
    auth = ("admin", system.admin_password)
    with system.client(auth) as admin:
        project, burst = _setup(admin)
    with concurrent.futures.ThreadPoolExecutor(ITEM_CLIENTS + RUN_CLIENTS + JUNIT_CLIENTS) as pool:
        clients = [
            *(pool.submit(_items_client, system, project, n, burst) for n in range(ITEM_CLIENTS)),
            *(
                pool.submit(_results_client, system, runs, n, burst)
                for n, runs in enumerate(_owned_runs(burst))
            ),
            *(
                pool.submit(_junit_client, system, cycle, n, burst)
                for n, cycle in enumerate(burst.junit_cycles)
            ),
        ]
        burst.wait_for_writes(30)
        crashed = [p for p in system.processes if p.name in CRASHED or p.name == "all"]
        burst.crashing.set()
        for process in crashed:
            process.popen.kill()
        burst.stop.set()
        for process in crashed:
            process.popen.wait(30)
        for client in clients:
            client.result(timeout=60)
    with concurrent.futures.ThreadPoolExecutor(len(crashed)) as pool:
        list(pool.map(lambda p: restart(system, p.name), crashed))
    with system.client(auth) as admin:
        _check(Reader(admin, time.monotonic() + SETTLE), project, burst)


def _setup(admin: httpx.Client) -> tuple[dict[str, Any], Burst]:
    """A project; a plan of test cases with a cycle whose runs the results clients share
    out; another plan with a cycle for each JUnit client."""
    key = project_key("CB")
    project = {"id": new_project(admin, key), "key": key, "types": item_types(admin)}
    cases = [new_test_case(admin, project, f"Case {n}") for n in range(RUN_CLIENTS * RUNS_EACH)]
    plan = new_plan(admin, project, "Results")
    add_cases(admin, plan, default_group(admin, plan), *cases)
    burst = Burst()
    for run in _runs(admin, new_cycle(admin, plan)):
        burst.runs[run] = Record("testruns", run, 2)
    reported = new_plan(admin, project, "Reports")
    add_cases(admin, reported, default_group(admin, reported), *cases[:REPORTED])
    for _ in range(JUNIT_CLIENTS):
        cycle = new_cycle(admin, reported)
        burst.junit_cycles[cycle] = _runs(admin, cycle)
        for run in burst.junit_cycles[cycle]:
            burst.runs[run] = Record("testruns", run, 2)
    return project, burst


def _runs(admin: httpx.Client, cycle: int) -> list[int]:
    response = admin.get(f"/testcycles/{cycle}/testruns", params={"maxResults": 50})
    assert response.status_code == 200, response.text
    return [int(r["id"]) for r in response.json()["data"]]


def _owned_runs(burst: Burst) -> list[list[Record]]:
    """The results clients' runs: those of the first cycle, ``RUNS_EACH`` each."""
    reported = {run for runs in burst.junit_cycles.values() for run in runs}
    free = [r for r in burst.runs.values() if r.id not in reported]
    assert len(free) == RUN_CLIENTS * RUNS_EACH
    return [free[n::RUN_CLIENTS] for n in range(RUN_CLIENTS)]


def _write(
    burst: Burst, kind: str, send: Callable[..., httpx.Response], url: str, **request: Any
) -> httpx.Response | None:
    """The answer to one write (``send(url, **request)``), or None when it failed (the
    client then stops). A failure before the crash is the test's, kept for the main
    thread."""
    try:
        response = send(url, **request)
    except httpx.TransportError as exc:
        failure = repr(exc)
    else:
        if response.is_success:
            burst.count(kind)
            return response
        failure = f"{response.status_code} {response.text}"
    burst.fail(f"{kind}: {failure}")
    return None


def _items_client(system: System, project: dict[str, Any], n: int, burst: Burst) -> None:
    """Creates items and renames each twice."""
    body = {"project": project["id"], "itemType": project["types"]["REQ"]["id"]}
    with system.client(("admin", system.admin_password)) as client:
        for serial in itertools.count():
            if burst.stop.is_set():
                return
            name = f"item {n}-{serial}"
            fields = {"name": name}
            created = _write(
                burst, "create", client.post, "/items", json={**body, "fields": fields}
            )
            if created is None:
                burst.pending_items.append(name)
                return
            record = Record("items", int(created.json()["meta"]["id"]), 1, [name])
            burst.items.append(record)
            for rename in range(2):
                if burst.stop.is_set():
                    return
                value = f"{name} renamed {rename}"
                patch = [{"op": "replace", "path": "/fields/name", "value": value}]
                sent = _write(burst, "patch", client.patch, f"/items/{record.id}", json=patch)
                if sent is None:
                    record.pending = value
                    return
                record.acked.append(value)


def _results_client(system: System, runs: list[Record], n: int, burst: Burst) -> None:
    """Records results in its runs, in turn."""
    with system.client(("admin", system.admin_password)) as client:
        for serial in itertools.count():
            if burst.stop.is_set():
                return
            run = runs[serial % len(runs)]
            value = f"result {n}-{serial}"
            fields = {"testRunStatus": ("PASSED", "FAILED")[serial % 2], "actualResults": value}
            sent = _write(
                burst, "result", client.put, f"/testruns/{run.id}", json={"fields": fields}
            )
            if sent is None:
                run.pending = value
                return
            run.acked.append(value)


def _junit_client(system: System, cycle: int, n: int, burst: Burst) -> None:
    """Sends JUnit reports to its cycle: every test case failed, with a new message."""
    url = f"{system.url}/rest/labs/testcycles/{cycle}/results"
    runs = [burst.runs[r] for r in burst.junit_cycles[cycle]]
    with httpx.Client(auth=("admin", system.admin_password), timeout=30) as client:
        for serial in itertools.count():
            if burst.stop.is_set():
                return
            value = f"report {n}-{serial}"
            cases = "".join(
                f'<testcase name="Case {c}" classname="c"><failure message="{value}"/></testcase>'
                for c in range(REPORTED)
            )
            report = f'<testsuites><testsuite name="s">{cases}</testsuite></testsuites>'
            sent = _write(burst, "junit", client.post, url, content=report, headers=XML)
            for run in runs:
                if sent is None:
                    run.pending = value
                else:
                    run.acked.append(value)
            if sent is None:
                return


def _check(reader: Reader, project: dict[str, Any], burst: Burst) -> None:
    """Every record holds its last write; its history has a version per write, each with
    that write's value; the feed has an activity per write; a cut-off write is there at
    most once (a report: in all its runs or in none); nothing else was made. What is
    wrong is gathered, to tell all of a loss at once."""
    records = [*burst.items, *burst.runs.values()]
    listed = reader.all("/items", project=project["id"])
    assert listed is not None
    names = {int(i["id"]): i["fields"]["name"] for i in listed}
    cases = {i for i, name in names.items() if name.startswith("Case ")}
    known = cases | {r.id for r in burst.items}
    # Items whose creation was cut off: their names say which; each at most once.
    made = {i: name for i, name in names.items() if i not in known}
    assert sorted(made.values()) == sorted(set(made.values())), made
    assert set(made.values()) <= set(burst.pending_items), (made, burst.pending_items)
    records += [Record("items", i, 1, [name]) for i, name in made.items()]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        found = pool.map(lambda r: _values(reader, r), records)
        values = dict(zip((r.id for r in records), found, strict=True))
    for cycle, runs in burst.junit_cycles.items():
        landed = {r: len(values[r]) > len(burst.runs[r].acked) for r in runs}
        assert len(set(landed.values())) == 1, f"report to cycle {cycle} landed in part: {landed}"

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        checked = pool.map(lambda r: _history(reader, r, values[r.id]), records)
        problems = [problem for found in checked for problem in found]
    objects = ("ITEM", "TEST_RUN", "TEST_RESULT")
    activities = reader.all("/activities", project=project["id"], objectType=objects)
    if activities is None:
        problems.append("the activity feed never caught up")
    else:
        problems += _feed_problems(activities, records, values, cases)
    writes = sum(len(v) for v in values.values())
    assert not problems, f"{len(problems)} problems in {writes} writes:\n" + "\n".join(problems)


def _values(reader: Reader, record: Record) -> list[str]:
    """The values a record was given, in order: its acknowledged ones, and the cut-off
    write's if the record holds it (the owner's data decides)."""
    field_name = "name" if record.kind == "items" else "actualResults"
    now = reader.data(f"/{record.kind}/{record.id}")["fields"].get(field_name) or None
    if record.pending is not None and now == record.pending:
        return [*record.acked, record.pending]
    # A run no write reached has no result.
    assert now == (record.acked[-1] if record.acked else None), f"{record}: holds {now!r}"
    return record.acked


def _history(reader: Reader, record: Record, values: list[str]) -> list[str]:
    """What is wrong with a record's versions: one per value, each holding it."""
    path = f"/{record.kind}/{record.id}/versions"
    listed = reader.all(path)
    expected = list(range(1, record.first + len(values)))
    if listed is None:
        return [f"{record.kind} {record.id}: the history never got to version {expected[-1]}"]
    numbers = [v["versionNumber"] for v in listed]
    if numbers != expected:
        return [f"{record.kind} {record.id}: versions {numbers}, not {expected}"]
    field_name = "name" if record.kind == "items" else "actualResults"
    problems = []
    for number, value in enumerate(values, record.first):
        then = reader.data(f"{path}/{number}/versioneditem")["fields"].get(field_name)
        if then != value:
            problems.append(
                f"{record.kind} {record.id}: version {number} holds {then!r}, not {value!r}"
            )
    return problems


def _feed_problems(
    activities: list[dict[str, Any]],
    records: list[Record],
    values: dict[int, list[str]],
    cases: set[int],
) -> list[str]:
    """What is wrong with the feed: an activity per write of each record, in order."""
    feed: dict[int, list[str]] = {}
    for activity in reversed(activities):  # the feed is newest first
        feed.setdefault(int(activity["item"]), []).append(activity["eventType"])
    problems = []
    for record in records:
        expected = ["UPDATE"] * len(values[record.id])
        if record.kind == "items":
            expected[0] = "CREATE"
        if (found := feed.pop(record.id, [])) != expected:
            problems.append(f"{record.kind} {record.id}: activities {found}, not {expected}")
    for case in cases:
        if (found := feed.pop(case, [])) != ["CREATE"]:
            problems.append(f"test case {case}: activities {found}")
    return problems + [f"activities of an unknown record {i}: {a}" for i, a in feed.items()]


@dataclass
class Reader:
    """Reads of the restarted system. The feed and the history answer 503 while they are
    behind the writes (and a service may while it reconnects): a read is asked again
    until one deadline, for all reads, has passed."""

    client: httpx.Client
    deadline: float

    def get(self, path: str, **params: Any) -> httpx.Response:
        while True:
            response = self.client.get(path, params=params)
            if response.status_code != 503 or time.monotonic() > self.deadline:
                return response
            time.sleep(0.1)  # nothing to await: the API's own wait has just run out

    def data(self, path: str, **params: Any) -> Any:
        """A read's ``data``; it must answer."""
        response = self.get(path, **params)
        assert response.status_code == 200, (path, response.text)
        return response.json()["data"]

    def all(self, path: str, **params: Any) -> list[dict[str, Any]] | None:
        """Every record of a list, page by page; None if it is still behind at the
        deadline."""
        found: list[dict[str, Any]] = []
        while True:
            response = self.get(path, **params, startAt=len(found), maxResults=50)
            if response.status_code == 503:
                return None
            assert response.status_code == 200, (path, response.text)
            page = response.json()["data"]
            found += page
            if len(page) < 50:
                return found
