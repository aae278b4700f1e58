"""What every change of a test plan, cycle, run or attachment tells the history: the
record's new version and, in the event's ``snapshot``, the record as GET then reports it
(``libs/common/snapshots.py``). Deletions say ``deleted``; locks, test groups and links
give no version."""

from __future__ import annotations

import json
from typing import Any, TypeAlias

import grpc
import httpx

from plumbline.api.attachments.v1 import attachments_pb2, attachments_pb2_grpc
from plumbline.api.testmgmt.v1 import testmgmt_pb2, testmgmt_pb2_grpc
from plumbline.common.events import Event
from plumbline.common.snapshots import parse_snapshot
from tests.e2e.api import admin_metadata, create_item, created_id
from tests.e2e.attachments.test_attachments import new_attachment, upload
from tests.e2e.testmgmt.test_results import XML, results_url
from tests.e2e.testrecords import (
    add_cases,
    cycle_fields,
    default_group,
    new_cycle,
    new_group,
    new_plan,
    new_test_case,
    record,
    runs_of,
    steps,
    with_step_statuses,
)
from tests.e2e.topology import System, grpc_port, outbox_events

Record: TypeAlias = testmgmt_pb2.TestRecord | attachments_pb2.Attachment
RECORD_TYPES: dict[str, type[Record]] = {
    m.DESCRIPTOR.full_name: m for m in (testmgmt_pb2.TestRecord, attachments_pb2.Attachment)
}


class History:
    """One service's events since the last look, and its records as its GET reports them."""

    def __init__(self, system: System, admin: httpx.Client, service: str) -> None:
        self.system = system
        self.service = service
        self.metadata = admin_metadata(admin)
        events = outbox_events(system, service)
        self.seen = events[-1].position if events else 0

    def changes(self) -> list[Event]:
        """The events written since the last call."""
        events = outbox_events(self.system, self.service, self.seen)
        if events:
            self.seen = events[-1].position
        return events

    def get(self, record: int) -> Record:
        """The record as ``GetRecords`` / ``GetAttachments`` answers (dates without time)."""
        with grpc.insecure_channel(f"127.0.0.1:{grpc_port(self.system, self.service)}") as ch:
            if self.service == "testmgmt":
                reply = testmgmt_pb2_grpc.TestRecordsStub(ch).GetRecords(
                    testmgmt_pb2.GetRecordsRequest(ids=[record]), metadata=self.metadata
                )
                return reply.records[0]
            answer = attachments_pb2_grpc.AttachmentsStub(ch).GetAttachments(
                attachments_pb2.GetAttachmentsRequest(ids=[record]), metadata=self.metadata
            )
            return answer.attachments[0]


def one(events: list[Event], event_type: str, record: int) -> Event:
    """The only event of ``event_type`` about ``record``."""
    [found] = [e for e in events if e.type == event_type and e.object_ids[0] == record]
    return found


def versioned(history: History, event: Event, version: int) -> Any:
    """Checks that ``event`` gives its record ``version`` and carries the record as GET
    now reports it (but for ``allowed``, which is the caller's, and a run's
    ``test_case_current_version_number``, which is the test case's now, not the run's);
    the snapshot."""
    assert event.version == version, event
    record = history.get(event.object_ids[0])
    assert record.version == version
    assert "deleted" not in event.payload
    snapshot = RECORD_TYPES[event.payload["recordType"]]()
    parse_snapshot(json.dumps(event.payload["snapshot"]), snapshot)
    assert snapshot.version == version
    record.ClearField("allowed")
    if isinstance(record, testmgmt_pb2.TestRecord):
        current = record.test_case_current_version_number
        assert current == 0 or current >= record.test_case_version_number
        record.ClearField("test_case_current_version_number")
    assert snapshot == record
    return snapshot


def deleted(event: Event, version: int) -> None:
    """``event`` is a deletion at ``version``, without a snapshot."""
    assert event.action == "deleted"
    assert event.payload["deleted"] is True
    assert event.version == version
    assert "snapshot" not in event.payload


def fields_of(snapshot: Any) -> dict[str, Any]:
    """A snapshot's ``fields`` map."""
    return dict(json.loads(snapshot.fields_json))


def test_a_test_plan_has_a_version_per_change(
    system: System, admin: httpx.Client, project: dict[str, Any]
) -> None:
    history = History(system, admin, "testmgmt")
    plan = new_plan(admin, project, "Versions")
    made = one(history.changes(), "testmgmt.testplan.created", plan)
    assert fields_of(versioned(history, made, 1))["name"] == "Versions"
    assert made.payload["documentKey"]
    assert made.payload["name"] == "Versions"

    assert admin.put(f"/testplans/{plan}", json={"fields": {"name": "Put"}}).status_code == 200
    put = one(history.changes(), "testmgmt.testplan.updated", plan)
    assert fields_of(versioned(history, put, 2))["name"] == "Put"

    patch = [{"op": "replace", "path": "/fields/name", "value": "Patched"}]
    assert admin.patch(f"/testplans/{plan}", json=patch).status_code == 200
    patched = one(history.changes(), "testmgmt.testplan.updated", plan)
    assert fields_of(versioned(history, patched, 3))["name"] == "Patched"

    response = admin.put(f"/testplans/{plan}/archived", json={"archived": True})
    assert response.status_code == 200, response.text
    archived = one(history.changes(), "testmgmt.testplan.updated", plan)
    assert versioned(history, archived, 4).archived is True
    assert archived.payload["archived"] is True

    # Test groups and the lock are not part of the plan's record: no new version.
    new_group(admin, plan, "More")
    group = one(history.changes(), "testmgmt.testgroup.created", plan)
    assert group.version == 4
    assert "snapshot" not in group.payload
    assert admin.put(f"/testplans/{plan}/lock", json={"locked": True}).status_code == 200
    assert admin.put(f"/testplans/{plan}/lock", json={"locked": False}).status_code == 200
    assert [e for e in history.changes() if "snapshot" in e.payload] == []
    assert history.get(plan).version == 4

    assert admin.delete(f"/testplans/{plan}").status_code == 204
    deleted(one(history.changes(), "testmgmt.testplan.deleted", plan), 5)


def test_a_test_cycle_and_its_runs_have_a_version_per_change(
    system: System, admin: httpx.Client, project: dict[str, Any]
) -> None:
    history = History(system, admin, "testmgmt")
    first, second, third = (new_test_case(admin, project, f"Case {n}") for n in range(3))
    plan = new_plan(admin, project)
    group = default_group(admin, plan)
    add_cases(admin, plan, group, first, second, third)
    history.changes()
    cycle = new_cycle(admin, plan, name="Sprint")
    events = history.changes()
    made = one(events, "testmgmt.testcycle.created", cycle)
    assert fields_of(versioned(history, made, 1))["name"] == "Sprint"
    runs = {r["fields"]["testCase"]: r["id"] for r in runs_of(admin, cycle)}
    for order, case in enumerate((first, second, third)):
        run = versioned(history, one(events, "testmgmt.testrun.created", runs[case]), 1)
        assert (run.sort_order_from_test_group, fields_of(run)["testCase"]) == (order, case)

    # Regenerated: the first case's run goes, the others move up, the new case's is made.
    removed = admin.delete(f"/testplans/{plan}/testgroups/{group}/testcases/{first}")
    assert removed.status_code == 204, removed.text
    fourth = new_test_case(admin, project, "Case 3")
    add_cases(admin, plan, group, fourth)
    history.changes()
    put = admin.put(f"/testcycles/{cycle}", json={"fields": cycle_fields("Sprint 2")})
    assert put.status_code == 200, put.text
    events = history.changes()
    updated = one(events, "testmgmt.testcycle.updated", cycle)
    assert fields_of(versioned(history, updated, 2))["name"] == "Sprint 2"
    deleted(one(events, "testmgmt.testrun.deleted", runs[first]), 2)
    for order, case in enumerate((second, third)):
        moved = versioned(history, one(events, "testmgmt.testrun.updated", runs[case]), 2)
        assert moved.sort_order_from_test_group == order
    [fresh] = [r["id"] for r in runs_of(admin, cycle) if r["fields"]["testCase"] == fourth]
    new_run = versioned(history, one(events, "testmgmt.testrun.created", fresh), 1)
    assert new_run.sort_order_from_test_group == 2

    patch = [{"op": "replace", "path": "/fields/name", "value": "Sprint 3"}]
    assert admin.patch(f"/testcycles/{cycle}", json=patch).status_code == 200
    events = history.changes()
    patched = one(events, "testmgmt.testcycle.updated", cycle)
    assert fields_of(versioned(history, patched, 3))["name"] == "Sprint 3"
    # Nothing moved: the runs keep their versions.
    assert [e.type for e in events] == ["testmgmt.testcycle.updated"]

    assert admin.delete(f"/testcycles/{cycle}").status_code == 204
    events = history.changes()
    deleted(one(events, "testmgmt.testcycle.deleted", cycle), 4)
    deleted(one(events, "testmgmt.testrun.deleted", runs[second]), 3)
    deleted(one(events, "testmgmt.testrun.deleted", fresh), 2)


def test_results_give_a_run_a_version_each(
    system: System, admin: httpx.Client, labs: httpx.Client, project: dict[str, Any]
) -> None:
    history = History(system, admin, "testmgmt")
    stepped_case = new_test_case(admin, project, "Stepped", steps("One", "Two"))
    plain_case = new_test_case(admin, project, "Plain")
    plan = new_plan(admin, project)
    add_cases(admin, plan, default_group(admin, plan), stepped_case, plain_case)
    cycle = new_cycle(admin, plan)
    stepped_run, plain_run = runs_of(admin, cycle)
    stepped, plain = stepped_run["id"], plain_run["id"]
    history.changes()

    assert record(admin, plain, testRunStatus="FAILED").status_code == 200
    put = versioned(history, one(history.changes(), "testmgmt.testrun.updated", plain), 2)
    assert fields_of(put)["testRunStatus"] == "FAILED"

    patch = [
        {
            "op": "replace",
            "path": "/fields/testRunSteps",
            "value": with_step_statuses(stepped_run, "PASSED", "NOT_RUN"),
        }
    ]
    assert admin.patch(f"/testruns/{stepped}", json=patch).status_code == 200
    patched = one(history.changes(), "testmgmt.testrun.updated", stepped)
    assert fields_of(versioned(history, patched, 2))["testRunStatus"] == "INPROGRESS"

    # In bulk, a run named twice takes both changes as one version.
    failed = with_step_statuses(stepped_run, "FAILED", "FAILED")
    passed = with_step_statuses(stepped_run, "PASSED", "PASSED")
    body = [
        {"id": plain, "fields": {"testRunStatus": "BLOCKED", "actualResults": "bulk"}},
        {"id": stepped, "fields": {"testRunSteps": failed}},
        {"id": stepped, "fields": {"testRunSteps": passed}},
    ]
    response = labs.patch("/testruns", json=body)
    assert response.status_code == 200, response.text
    assert [r["status"] for r in response.json()["data"]] == [200, 200, 200]
    events = history.changes()
    assert len(events) == 2
    bulk = fields_of(versioned(history, one(events, "testmgmt.testrun.updated", plain), 3))
    assert (bulk["testRunStatus"], bulk["actualResults"]) == ("BLOCKED", "bulk")
    twice = versioned(history, one(events, "testmgmt.testrun.updated", stepped), 3)
    assert fields_of(twice)["testRunStatus"] == "PASSED"
    assert one(events, "testmgmt.testrun.updated", stepped).payload["result"] is True

    report = (
        b'<testsuite name="s"><testcase name="Plain" classname="c">'
        b'<failure message="boom"/></testcase></testsuite>'
    )
    response = admin.post(results_url(admin, cycle), content=report, headers=XML)
    assert response.status_code == 200, response.text
    ingested = one(history.changes(), "testmgmt.testrun.updated", plain)
    assert fields_of(versioned(history, ingested, 4))["testRunStatus"] == "FAILED"

    refreshed = created_id(admin.post(f"/testruns/{stepped}/updatedtestcase"))
    events = history.changes()
    deleted(one(events, "testmgmt.testrun.deleted", stepped), 4)
    made = versioned(history, one(events, "testmgmt.testrun.created", refreshed), 1)
    assert fields_of(made)["testRunStatus"] == "NOT_RUN"

    assert admin.delete(f"/testruns/{plain}").status_code == 204
    deleted(one(history.changes(), "testmgmt.testrun.deleted", plain), 5)


def test_an_attachment_has_a_version_per_change(
    system: System, admin: httpx.Client, labs: httpx.Client, project: dict[str, Any]
) -> None:
    history = History(system, admin, "attachments")
    attachment = new_attachment(admin, project, "Evidence")
    made = one(history.changes(), "attachments.attachment.created", attachment)
    assert fields_of(versioned(history, made, 1))["name"] == "Evidence"

    assert upload(admin, attachment, b"first line\n", "log.txt").status_code == 200
    uploaded = one(history.changes(), "attachments.attachment.updated", attachment)
    file = versioned(history, uploaded, 2)
    assert (file.file_name, file.file_size) == ("log.txt", 11)
    assert uploaded.payload["fileName"] == "log.txt"
    assert uploaded.payload["fileChanged"]

    # Links and the lock are not part of the attachment's record: no new version.
    item = create_item(admin, project, "Holder")
    linked = admin.post(f"/items/{item}/attachments", json={"attachment": attachment})
    assert linked.status_code == 201, linked.text
    assert admin.delete(f"/items/{item}/attachments/{attachment}").status_code == 204
    assert admin.put(f"/attachments/{attachment}/lock", json={"locked": True}).status_code == 200
    assert admin.put(f"/attachments/{attachment}/lock", json={"locked": False}).status_code == 200
    events = history.changes()
    assert [e.action for e in events] == ["linked", "unlinked"]
    assert all(e.version == 2 and "snapshot" not in e.payload for e in events)
    assert history.get(attachment).version == 2

    assert labs.delete(f"/attachments/{attachment}").status_code == 204
    deleted(one(history.changes(), "attachments.attachment.deleted", attachment), 3)
