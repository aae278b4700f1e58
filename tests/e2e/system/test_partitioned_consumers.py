"""The activity feed and the history with events in partitions: a burst of changes over
several projects reaches each once, in order per record, while (distributed) their two
replicas each share the partitions, one of each stops halfway and comes back.

The embedded topology runs one process, which consumes every partition; the distributed
one runs two replicas of activity and of baselines, which split the partitions between
them under leases and hand them over when one stops and when it is back.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import MetaData, select

from plumbline.common.db import Database
from plumbline.common.leases import lease_tables
from tests.e2e.api import create_item, item_types, new_project, project_key
from tests.e2e.conftest import TOPOLOGIES
from tests.e2e.topology import (
    PARTITIONS,
    System,
    database_url,
    replicas_of,
    require_backends,
    restart,
    running,
)

#: Projects written at once (one client each), items each, renames of each item.
PROJECTS, ITEMS, RENAMES = 6, 5, 2
#: Seconds the system has to answer every read once the burst is over.
SETTLE = 45.0
#: The consumers' replicas that stop halfway and come back.
STOPPED = ("activity-2", "baselines-2")


@pytest.fixture(params=TOPOLOGIES)
def own_system(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[System]:
    """A system of this test's own (replicas stop in it): events in four partitions."""
    if request.param == "distributed":
        require_backends()
    with running(
        request.param, tmp_path, {"PLUMBLINE_EVENT_PARTITIONS": str(PARTITIONS)}
    ) as system:
        yield system


def test_a_burst_over_projects_reaches_the_feed_and_history_once_in_order(
    own_system: System,
) -> None:
    system = own_system
    auth = ("admin", system.admin_password)
    with system.client(auth) as admin:
        types = item_types(admin)
        projects = [new_project(admin, project_key("PC")) for _ in range(PROJECTS)]
    written = threading.Semaphore(0)
    with concurrent.futures.ThreadPoolExecutor(PROJECTS) as pool:
        clients = [
            pool.submit(_client, system, {"id": project, "types": types}, written)
            for project in projects
        ]
        if system.topology == "distributed":
            _wait(written, PROJECTS * ITEMS)  # about a third of the writes
            for name in STOPPED:
                [process] = [p for p in system.processes if p.name == name]
                assert process.stop() == 0
            _wait(written, PROJECTS * ITEMS)
            for name in STOPPED:
                restart(system, name)
        items = {
            project: client.result(timeout=120)
            for project, client in zip(projects, clients, strict=True)
        }
    with system.client(auth) as admin:
        deadline = time.monotonic() + SETTLE
        problems = [
            p for project in projects for p in _check(admin, project, items[project], deadline)
        ]
    assert not problems, "\n".join(problems)
    if system.topology == "distributed":
        for service in ("activity", "baselines"):
            holders = _eventually_shared(system, service)
            assert len(set(holders.values())) == len(replicas_of(system, service)), holders


def _wait(written: threading.Semaphore, count: int) -> None:
    for _ in range(count):
        assert written.acquire(timeout=60), "the writers stalled"


def _client(
    system: System, project: dict[str, Any], written: threading.Semaphore
) -> dict[int, list[str]]:
    """Creates ``ITEMS`` items in ``project`` and renames each ``RENAMES`` times; the
    names each item was given, in order."""
    names: dict[int, list[str]] = {}
    with system.client(("admin", system.admin_password)) as client:
        for n in range(ITEMS):
            name = f"item {project['id']}-{n}"
            item = create_item(client, project, name)
            names[item] = [name]
            written.release()
            for rename in range(RENAMES):
                value = f"{name} renamed {rename}"
                patch = [{"op": "replace", "path": "/fields/name", "value": value}]
                response = client.patch(f"/items/{item}", json=patch)
                assert response.status_code == 200, response.text
                names[item].append(value)
                written.release()
    return names


def _check(
    admin: httpx.Client, project: int, items: dict[int, list[str]], deadline: float
) -> list[str]:
    """What is wrong with a project's feed and its items' histories."""
    problems = []
    activities = _all(admin, "/activities", deadline, project=project, objectType="ITEM")
    feed: dict[int, list[str]] = {}
    for activity in reversed(activities):  # newest first
        feed.setdefault(int(activity["item"]), []).append(activity["eventType"])
    for item, names in items.items():
        expected = ["CREATE"] + ["UPDATE"] * (len(names) - 1)
        if (found := feed.pop(item, [])) != expected:
            problems.append(f"item {item}: activities {found}, not {expected}")
        versions = _all(admin, f"/items/{item}/versions", deadline)
        numbers = [v["versionNumber"] for v in versions]
        if numbers != list(range(1, len(names) + 1)):
            problems.append(f"item {item}: versions {numbers}")
            continue
        for number, name in enumerate(names, 1):
            then = _get(admin, f"/items/{item}/versions/{number}/versioneditem", deadline)
            if (held := then.json()["data"]["fields"]["name"]) != name:
                problems.append(f"item {item}: version {number} holds {held!r}, not {name!r}")
    return problems + [f"activities of an unknown item {i}: {a}" for i, a in feed.items()]


def _get(admin: httpx.Client, path: str, deadline: float, **params: Any) -> httpx.Response:
    """A read, asked again while the feed or the history answers 503 (behind), until
    ``deadline``."""
    while True:
        response = admin.get(path, params=params)
        if response.status_code != 503 or time.monotonic() > deadline:
            assert response.status_code == 200, (path, response.text)
            return response
        time.sleep(0.1)


def _all(admin: httpx.Client, path: str, deadline: float, **params: Any) -> list[Any]:
    found: list[Any] = []
    while True:
        response = _get(admin, path, deadline, **params, startAt=len(found), maxResults=50)
        page = response.json()["data"]
        found += page
        if not page or len(found) >= response.json()["meta"]["pageInfo"]["totalResults"]:
            return found


def _eventually_shared(system: System, service: str) -> dict[int, str]:
    """The holder of each of ``service``'s partitions once every replica holds some
    (after the restart, the replicas rebalance within a few lease renewals)."""
    url = database_url(system, service)
    leases, _ = lease_tables(MetaData())

    async def read() -> dict[int, str]:
        db = Database(url)
        try:
            async with db.read() as session:
                rows = await session.execute(select(leases.c.partition, leases.c.holder))
                return {int(p): h for p, h in rows}
        finally:
            await db.close()

    deadline = time.monotonic() + 30
    while True:
        holders = asyncio.run(read())
        spread = len(set(holders.values())) == len(replicas_of(system, service))
        if (sorted(holders) == list(range(PARTITIONS)) and spread) or time.monotonic() > deadline:
            return holders
        time.sleep(0.5)
