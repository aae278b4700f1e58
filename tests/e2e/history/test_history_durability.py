"""The history is complete whatever happens around it: the service starting on existing
data records what has no history, and neither a restart of the baselines service nor an
outage of NATS loses a version or records one twice."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.api import create_item, eventually, item_types, new_project, project_key
from tests.e2e.testrecords import new_plan
from tests.e2e.topology import (
    ADMIN_PASSWORD,
    Nats,
    System,
    on_own_nats,
    replicas_of,
    service_env,
    start_embedded,
    start_process,
)


def _rename(client: httpx.Client, item: int, name: str) -> None:
    response = client.patch(
        f"/items/{item}", json=[{"op": "replace", "path": "/fields/name", "value": name}]
    )
    assert response.status_code == 200, response.text


def _numbers(client: httpx.Client, item: int) -> list[int]:
    response = client.get(f"/items/{item}/versions", params={"maxResults": 50})
    assert response.status_code == 200, response.text
    return [v["versionNumber"] for v in response.json()["data"]]


def _numbers_once_up(client: httpx.Client, item: int) -> list[int] | None:
    """``_numbers``, or None while the history answers 503 (just restarted: the gateway's
    channel to it reconnects after a backoff, and the answer says to try again)."""
    response = client.get(f"/items/{item}/versions", params={"maxResults": 50})
    if response.status_code == 503:
        return None
    assert response.status_code == 200, response.text
    return [v["versionNumber"] for v in response.json()["data"]]


def _project(admin: httpx.Client) -> dict[str, Any]:
    key = project_key("HD")
    return {"id": new_project(admin, key), "key": key, "types": item_types(admin)}


def test_the_history_starts_from_existing_records(tmp_path: Path) -> None:
    system = start_embedded(tmp_path)
    try:
        admin = system.client(("admin", system.admin_password))
        project = _project(admin)
        item = create_item(admin, project, "Before the history")
        _rename(admin, item, "Renamed before the history")
        plan = new_plan(admin, project)
    finally:
        assert system.stop()["all"] == 0
    # The baselines service's database is new: as if it were first deployed now.
    data = Path(system.env["PLUMBLINE_DATA_DIR"])
    for path in data.glob("baselines.db*"):
        path.unlink()
    system = start_embedded(tmp_path)
    try:
        admin = system.client(("admin", system.admin_password))
        assert eventually(lambda: _numbers(admin, item) == [2])
        then = admin.get(f"/items/{item}/versions/2/versioneditem").json()["data"]
        assert then["fields"]["name"] == "Renamed before the history"
        assert admin.get(f"/testplans/{plan}/versions").json()["data"][0]["versionNumber"] == 1
        _rename(admin, item, "Renamed after")
        assert _numbers(admin, item) == [2, 3]
        versions = admin.get(f"/items/{item}/versions").json()["data"]
        assert "name" in versions[1]["changeDetails"]
    finally:
        assert system.stop()["all"] == 0


@pytest.fixture
def outage_system(tmp_path: Path) -> Iterator[tuple[System, Nats]]:
    with on_own_nats(tmp_path) as running:
        yield running


def test_no_version_lost_or_doubled_by_a_restart_or_a_nats_outage(
    outage_system: tuple[System, Nats],
) -> None:
    system, nats = outage_system
    admin = system.client(("admin", ADMIN_PASSWORD))
    project = _project(admin)
    item = create_item(admin, project, "Steady")
    _rename(admin, item, "v2")
    assert _numbers(admin, item) == [1, 2]

    # The baselines service stops (every replica); changes go on; it comes back and
    # catches up.
    replicas = replicas_of(system, "baselines")
    assert [replica.stop() for replica in replicas] == [0] * len(replicas)
    for n in range(3, 6):
        _rename(admin, item, f"v{n}")
    addresses = service_env(system)
    for replica in replicas:
        system.processes[system.processes.index(replica)] = start_process(
            replica.name,
            ["--target", "baselines"],
            addresses,
            system.workdir,
            grpc_port=replica.grpc_port,
        )
    assert eventually(lambda: _numbers_once_up(admin, item) is not None)
    assert _numbers(admin, item) == [1, 2, 3, 4, 5]

    # NATS goes away; writes still succeed (their events wait in the owners' outboxes);
    # when it is back, every event arrives, once.
    nats.stop()
    for n in range(6, 9):
        _rename(admin, item, f"v{n}")
    other = create_item(admin, project, "Made during the outage")
    nats.start()
    assert eventually(lambda: _numbers(admin, item) == list(range(1, 9)), seconds=30)
    assert _numbers(admin, other) == [1]
    names = [
        admin.get(f"/items/{item}/versions/{n}/versioneditem").json()["data"]["fields"]["name"]
        for n in (2, 5, 8)
    ]
    assert names == ["v2", "v5", "v8"]
