"""(labs) ``/webhooks``: changes delivered to real receivers, signed as the Standard
Webhooks specification says (every delivery verified with its ``standardwebhooks``
package), in order, retried until the receiver takes them, logged, sent again on
request; a slow receiver holds up only its own webhook; what the owner may not read is
never sent; crashes lose nothing.

The systems under test allow receivers on 127.0.0.1 and retry after 0.2 s
(``tests/e2e/topology.py``); refusing private addresses is tested in
``tests/unit/services/hooks``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.api import (
    MakeUser,
    assert_error,
    create_item,
    eventually,
    grant,
    item_types,
    new_project,
)
from tests.e2e.hooks.receivers import Receiver, receiving
from tests.e2e.topology import Nats, System, on_own_nats, restart, start_service


@pytest.fixture(autouse=True)
def _no_webhooks_left(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test's webhooks go at its end: those of receivers that are gone would keep
    failing (and retrying) for the rest of the session."""
    yield
    if "system" not in request.fixturenames:
        return
    system: System = request.getfixturevalue("system")
    with system.client(("admin", system.admin_password), version="labs") as labs:
        listed = labs.get("/webhooks", params={"maxResults": 50}).json()["data"]
        for hook in listed:
            labs.delete(f"/webhooks/{hook['id']}")


def _subscribe(client: httpx.Client, receiver: Receiver, **body: Any) -> dict[str, Any]:
    """A webhook to ``receiver``; its secret goes to the receiver, which verifies with it."""
    response = client.post("/webhooks", json={"url": receiver.url, **body})
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["meta"]["id"] == created["data"]["webhook"]["id"]
    receiver.secrets.append(created["data"]["secret"])
    return dict(created["data"]["webhook"])


def _rename(admin: httpx.Client, item: int, name: str) -> None:
    patched = admin.patch(
        f"/items/{item}", json=[{"op": "replace", "path": "/fields/name", "value": name}]
    )
    assert patched.status_code == 200, patched.text


def _log(labs: httpx.Client, webhook: int) -> list[dict[str, Any]]:
    response = labs.get(f"/webhooks/{webhook}/deliveries", params={"maxResults": 50})
    assert response.status_code == 200, response.text
    return list(response.json()["data"])


def test_changes_arrive_signed_in_order_and_are_logged(
    labs: httpx.Client, admin: httpx.Client, project: dict[str, Any]
) -> None:
    with receiving() as receiver:
        hook = _subscribe(labs, receiver, projects=[project["id"]], description="CI")
        assert hook["active"] is True
        assert "secret" not in labs.get(f"/webhooks/{hook['id']}").json()["data"]
        item = create_item(admin, project, "Hooked")
        _rename(admin, item, "Hooked again")
        got = receiver.wait_for(2)
        assert [r.body["type"] for r in got] == ["items.item.created", "items.item.updated"]
        created, renamed = (r.body["data"] for r in got)
        assert (created["objectId"], created["eventType"], created["project"]) == (
            item,
            "CREATE",
            project["id"],
        )
        assert renamed["version"] == created["version"] + 1
        assert created["cursor"] < renamed["cursor"]
        # The record as GET answers it to the owner at delivery time: the second comes
        # after the rename, the first before or after it.
        read = admin.get(f"/items/{item}").json()["data"]
        assert renamed["object"] == read
        assert created["object"]["id"] == item
        assert created["object"]["fields"]["name"] in ("Hooked", "Hooked again")
        # The webhook-id is the change's event id, as the feed shows it.
        assert [r.id for r in got] == [created["id"], renamed["id"]]
        assert receiver.forged == []
        log = _log(labs, hook["id"])
        assert [(d["event"], d["outcome"], d["responseCode"], d["attempt"]) for d in log] == [
            (renamed["id"], "DELIVERED", 200, 1),
            (created["id"], "DELIVERED", 200, 1),
        ]
        assert eventually(
            lambda: (
                labs.get(f"/webhooks/{hook['id']}").json()["data"]["deliveredThrough"]
                >= renamed["cursor"]
            )
        )


def test_a_failing_receiver_gets_the_change_again_until_it_takes_it(
    labs: httpx.Client, admin: httpx.Client, project: dict[str, Any]
) -> None:
    # 500 three times, then 200: the same change four times, then the next ones in order.
    with receiving(answer=lambda n: 500 if n < 3 else 200) as receiver:
        hook = _subscribe(labs, receiver, projects=[project["id"]])
        made = [create_item(admin, project, f"Retried {n}") for n in range(3)]
        got = receiver.wait_for(3)
        assert [r.body["data"]["objectId"] for r in got] == made
        assert len({r.id for r in receiver.received[:4]}) == 1  # one change, four tries
        log = list(reversed(_log(labs, hook["id"])))
        assert [(d["outcome"], d.get("responseCode"), d["attempt"]) for d in log[:4]] == [
            ("FAILED", 500, 1),
            ("FAILED", 500, 2),
            ("FAILED", 500, 3),
            ("DELIVERED", 200, 4),
        ]
        assert "answered 500" in log[0]["error"]
        hook = labs.get(f"/webhooks/{hook['id']}").json()["data"]
        assert hook["failedAttempts"] == 0
        assert "failingSince" not in hook


def test_a_receiver_that_was_down_gets_everything_once_back(
    labs: httpx.Client, admin: httpx.Client, project: dict[str, Any]
) -> None:
    with receiving() as receiver:
        hook = _subscribe(labs, receiver, projects=[project["id"]])
        receiver.stop()
        made = [create_item(admin, project, f"While down {n}") for n in range(3)]
        assert eventually(
            lambda: labs.get(f"/webhooks/{hook['id']}").json()["data"]["failedAttempts"] >= 3
        )
        failing = labs.get(f"/webhooks/{hook['id']}").json()["data"]
        assert "failingSince" in failing
        assert "nextAttemptDate" in failing
        assert "could not deliver" in _log(labs, hook["id"])[0]["error"]
        time.sleep(5)  # down a while: the retries back off
        receiver.start()
        got = receiver.wait_for(3, seconds=30)
        assert [r.body["data"]["objectId"] for r in got] == made


def test_a_slow_receiver_holds_up_only_its_own_webhook(
    labs: httpx.Client, admin: httpx.Client, project: dict[str, Any]
) -> None:
    with receiving(delay=10) as slow, receiving() as quick:
        _subscribe(labs, slow, projects=[project["id"]])
        _subscribe(labs, quick, projects=[project["id"]])
        started = time.monotonic()
        made = [create_item(admin, project, f"Raced {n}") for n in range(3)]
        got = quick.wait_for(3)
        assert [r.body["data"]["objectId"] for r in got] == made
        assert got[-1].at - started < 8  # the slow one has not answered its first yet
        assert len(slow.received) == 1


def test_a_rotated_secret_signs_beside_the_old_one(
    labs: httpx.Client, admin: httpx.Client, project: dict[str, Any]
) -> None:
    with receiving() as receiver:
        hook = _subscribe(labs, receiver, projects=[project["id"]])
        old = receiver.secrets[0]
        rotated = labs.post(f"/webhooks/{hook['id']}/secret")
        assert rotated.status_code == 200, rotated.text
        new = rotated.json()["data"]["secret"]
        assert new != old
        assert new.startswith("whsec_")
        assert "previousSecretExpires" in rotated.json()["data"]["webhook"]
        # The receiver knows only the new secret now; then only the old one.
        receiver.secrets[:] = [new]
        create_item(admin, project, "Signed twice")
        [first] = receiver.wait_for(1)
        assert len(first.signatures) == 2
        receiver.secrets[:] = [old]
        create_item(admin, project, "Signed twice again")
        assert len(receiver.wait_for(2)) == 2
        assert receiver.forged == []


def test_a_change_is_sent_again_on_request(
    labs: httpx.Client, admin: httpx.Client, project: dict[str, Any]
) -> None:
    with receiving() as receiver:
        hook = _subscribe(labs, receiver, projects=[project["id"]])
        create_item(admin, project, "Twice")
        [first] = receiver.wait_for(1)
        asked = labs.post(f"/webhooks/{hook['id']}/redeliveries", json={"event": first.id})
        assert asked.status_code == 202, asked.text
        got = receiver.wait_for(2)
        assert [r.id for r in got] == [first.id, first.id]
        assert eventually(lambda: _log(labs, hook["id"])[0]["redelivery"] is True)
        assert_error(
            labs.post(f"/webhooks/{hook['id']}/redeliveries", json={"event": "no-such"}),
            404,
            "no-such",
        )


def test_what_the_owner_may_not_read_is_never_sent(
    system: System, admin: httpx.Client, make_user: MakeUser
) -> None:
    project, other = new_project(admin), new_project(admin)
    user, name, password, _ = make_user()
    grant(admin, project, "READ_ONLY", user=user)
    with system.client((name, password), version="labs") as owner, receiving() as receiver:
        # Every change of a project is its administrators' to subscribe to; a reader
        # narrows it, and may not name a project they cannot read.
        assert_error(
            owner.post("/webhooks", json={"url": receiver.url, "projects": [project]}),
            401,
            "administrator",
        )
        assert_error(
            owner.post(
                "/webhooks",
                json={"url": receiver.url, "projects": [other], "objectTypes": ["PROJECT"]},
            ),
            401,
        )
        assert_error(owner.post("/webhooks", json={"url": receiver.url}), 401, "projects")
        hook = _subscribe(owner, receiver, projects=[project], objectTypes=["PROJECT"])
        assert admin.put(f"/projects/{project}", json={"fields": {"name": "Seen"}}).is_success
        assert len(receiver.wait_for(1)) == 1
        gone = admin.delete(f"/projects/{project}/permissions", params={"user": user})
        assert gone.status_code in (200, 204), gone.text
        assert admin.put(f"/projects/{project}", json={"fields": {"name": "Unseen"}}).is_success
        assert admin.put(f"/projects/{project}", json={"fields": {"name": "Unseen 2"}}).is_success
        # The webhook passes over them (its cursor moves on) and sends nothing.
        assert eventually(lambda: _passed_over(owner, hook["id"]))
        assert len(receiver.received) == 1
        # Nobody else sees the webhook.
        assert owner.get(f"/webhooks/{hook['id']}").status_code == 200
        with system.client(("admin", system.admin_password), version="labs") as labs:
            assert labs.get(f"/webhooks/{hook['id']}").status_code == 200


def _passed_over(owner: httpx.Client, hook: int) -> bool:
    """Whether the webhook's cursor reached the change feed's head (as far as the owner's
    read of it goes, which waits for every change made so far)."""
    response = owner.get("/events", params={"after": 0, "objectType": "INTEGRATION"})
    assert response.status_code == 200, response.text
    head = int(response.json()["meta"]["next"])
    return int(owner.get(f"/webhooks/{hook}").json()["data"]["deliveredThrough"]) >= head


def test_bad_webhooks_are_refused_with_what_is_allowed(
    labs: httpx.Client, project: dict[str, Any]
) -> None:
    pid = project["id"]
    assert_error(labs.post("/webhooks", json={"url": "ftp://example.com/x"}), 400, "http")
    assert_error(labs.post("/webhooks", json={"url": "http://u:p@example.com/"}), 400, "password")
    assert_error(
        labs.post("/webhooks", json={"url": "http://127.0.0.1:1/", "objectTypes": ["PLANET"]}),
        400,
        "objectTypes",
    )
    assert_error(
        labs.post("/webhooks", json={"url": "http://does-not-exist.invalid/", "projects": [pid]}),
        400,
        "resolve",
    )
    assert_error(labs.post("/webhooks", json={"uri": "http://127.0.0.1:1/"}), 400)
    assert_error(labs.patch("/webhooks/999999999", json={"active": False}), 404)
    assert_error(labs.get("/webhooks/999999999"), 404)


def test_webhooks_are_listed_changed_paused_and_deleted(
    labs: httpx.Client, admin: httpx.Client, project: dict[str, Any]
) -> None:
    with receiving() as receiver:
        hook = _subscribe(labs, receiver, projects=[project["id"]])
        listed = labs.get("/webhooks", params={"maxResults": 50}).json()
        assert hook["id"] in [w["id"] for w in listed["data"]]
        assert listed["meta"]["pageInfo"]["totalResults"] >= 1
        paused = labs.patch(
            f"/webhooks/{hook['id']}", json={"active": False, "eventTypes": ["DELETE"]}
        )
        assert paused.status_code == 200, paused.text
        assert (paused.json()["data"]["active"], paused.json()["data"]["eventTypes"]) == (
            False,
            ["DELETE"],
        )
        assert paused.json()["data"]["url"] == receiver.url  # what was not given stays
        create_item(admin, project, "Not while paused")
        time.sleep(1.5)
        assert receiver.received == []
        assert labs.delete(f"/webhooks/{hook['id']}").status_code == 204
        assert labs.get(f"/webhooks/{hook['id']}").status_code == 404


def test_webhooks_are_labs_only(admin: httpx.Client) -> None:
    assert admin.get("/webhooks").status_code == 404


def test_a_crash_in_a_burst_loses_no_delivery(
    system: System, labs: httpx.Client, admin: httpx.Client
) -> None:
    """1,000 changes; the hooks process (the one process, embedded) killed while
    delivering them; once it is back every change is delivered, in order per record."""
    project = new_project(admin)
    types = {t["typeKey"]: t["id"] for t in admin.get("/itemtypes").json()["data"]}
    with receiving() as receiver:
        _subscribe(labs, receiver, projects=[project])
        lines = "".join(
            f'{{"itemType": {types["REQ"]}, "fields": {{"name": "Burst {n}"}}}}\n'
            for n in range(1000)
        )
        imported = labs.post(
            f"/projects/{project}/import",
            content=lines.encode(),
            headers={"Content-Type": "application/x-ndjson"},
            timeout=120,
        )
        assert imported.status_code in (200, 201), imported.text
        assert eventually(lambda: len(receiver.delivered()) >= 50, 60)
        name = "all" if system.topology == "embedded" else "hooks"
        [process] = [p for p in system.processes if p.name == name]
        process.popen.kill()
        process.popen.wait(30)
        assert len(receiver.delivered()) < 1000  # killed in the middle of delivering
        restart(system, name)
        got = receiver.wait_for(1000, seconds=180, distinct=True)
        ids = [r.body["data"]["objectId"] for r in got]
        assert len(set(ids)) == 1000  # every change, at least once
        first_seen: dict[str, int] = {}
        for n, r in enumerate(got):
            first_seen.setdefault(r.id, n)
        # In the feed's order: a change is never first delivered before an earlier one.
        cursors = [got[n].body["data"]["cursor"] for n in sorted(first_seen.values())]
        assert cursors == sorted(cursors)
        assert receiver.forged == []


@pytest.fixture
def own_nats_system(tmp_path: Path) -> Iterator[tuple[System, Nats]]:
    """The embedded default has no NATS to lose."""
    with on_own_nats(tmp_path) as running:
        yield running


def test_a_nats_outage_delays_deliveries_and_loses_none(
    own_nats_system: tuple[System, Nats],
) -> None:
    system, nats = own_nats_system
    with (
        system.client(("admin", system.admin_password), version="labs") as labs,
        system.client(("admin", system.admin_password)) as admin,
        receiving() as receiver,
    ):
        project = new_project(admin)
        _subscribe(labs, receiver, projects=[project])
        shape = {"id": project, "types": item_types(admin)}
        made = [create_item(admin, shape, "Before")]
        assert len(receiver.wait_for(1)) == 1
        # Writes go on while NATS is away; their events wait in the writers' outboxes.
        nats.stop()
        for n in range(5):
            made.append(create_item(admin, shape, f"During {n}"))
        time.sleep(2)
        assert len(receiver.delivered()) == 1
        nats.start()
        got = receiver.wait_for(6, seconds=60)
        assert [r.body["data"]["objectId"] for r in got] == made
        assert receiver.forged == []


def test_webhooks_are_shared_by_the_replicas_and_taken_over(
    system: System, labs: httpx.Client, admin: httpx.Client, project: dict[str, Any]
) -> None:
    """Distributed, a second hooks replica takes its share of the partitions, and so of
    the webhooks (``id % partitions``); when it stops, the first takes them back. Every
    webhook gets every change, in order, throughout. (Embedded, the one process delivers
    them all.)"""
    second = start_service(system, "hooks", "hooks-2") if system.topology == "distributed" else None
    try:
        with contextlib.ExitStack() as stack:
            receivers = [stack.enter_context(receiving()) for _ in range(6)]
            for receiver in receivers:
                _subscribe(labs, receiver, projects=[project["id"]])
            if second is not None:
                assert eventually(lambda: len(_hooks_holders(labs)) == 2, seconds=30)
            made = [create_item(admin, project, f"Shared {n}") for n in range(3)]
            for receiver in receivers:
                got = receiver.wait_for(3, distinct=True)
                assert _first_seen(got) == made
            if second is not None:
                assert second.stop() == 0
                assert eventually(lambda: len(_hooks_holders(labs)) == 1, seconds=30)
            made += [create_item(admin, project, f"Taken over {n}") for n in range(3)]
            for receiver in receivers:
                got = receiver.wait_for(6, seconds=30, distinct=True)
                assert _first_seen(got) == made
                assert receiver.forged == []
    finally:
        if second is not None:
            second.stop()


def _hooks_holders(labs: httpx.Client) -> set[str]:
    response = labs.get("/system/consumers")
    assert response.status_code == 200, response.text
    listed = response.json()["data"]
    return {p["holder"] for p in listed if p["consumer"] == "hooks" and p.get("holder")}


def _first_seen(got: list[Any]) -> list[int]:
    """The changed records in the order their changes first arrived (a change may come
    twice across a handover: at least once)."""
    seen: dict[str, int] = {}
    for delivery in got:
        seen.setdefault(delivery.id, delivery.body["data"]["objectId"])
    return list(seen.values())


def test_a_delivery_carries_the_record_only_when_asked_and_readable(
    labs: httpx.Client, admin: httpx.Client, project: dict[str, Any]
) -> None:
    with receiving() as bare, receiving() as full:
        _subscribe(labs, bare, projects=[project["id"]], includeObject=False)
        hook = _subscribe(labs, full, projects=[project["id"]])
        assert hook["includeObject"] is True
        item = create_item(admin, project, "Carried")
        assert admin.delete(f"/items/{item}").status_code == 204
        plain, gone = (r.body["data"] for r in bare.wait_for(2))
        assert "object" not in plain
        assert "object" not in gone
        created, deleted = (r.body["data"] for r in full.wait_for(2))
        assert deleted["eventType"] == "DELETE"
        # Deleted by the time it was delivered, or not: never a record that is gone.
        assert "object" not in deleted
        if "object" in created:
            assert created["object"]["id"] == item
