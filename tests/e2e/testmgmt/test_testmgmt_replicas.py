"""testmgmt scales apart: two replicas behind one gateway both serve, and each reads what
the other wrote (they share the database and keep nothing else)."""

from __future__ import annotations

import json
from typing import Any

import grpc
import httpx
import pytest

from plumbline.api.testmgmt.v1 import testmgmt_pb2, testmgmt_pb2_grpc
from tests.e2e.api import admin_metadata
from tests.e2e.testrecords import (
    add_cases,
    default_group,
    new_cycle,
    new_plan,
    new_test_case,
    record,
    run_of,
    runs_of,
)
from tests.e2e.topology import Process, System, replicas_of


def _served(process: Process) -> float:
    """How many testmgmt calls the process has answered (its gRPC metrics)."""
    text = httpx.get(f"http://127.0.0.1:{process.http_port}/metrics", timeout=10).text
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("plumbline_grpc_server_seconds_count{")
        and "plumbline.testmgmt.v1." in line
    )


def test_both_replicas_serve_and_share_their_data(
    system: System, admin: httpx.Client, project: dict[str, Any]
) -> None:
    if system.topology != "distributed":
        pytest.skip("the embedded default runs testmgmt once, in its one process")
    first, second = replicas_of(system, "testmgmt")
    before = {p.name: _served(p) for p in (first, second)}

    cases = [new_test_case(admin, project, f"Case {n}") for n in range(8)]
    plan = new_plan(admin, project)
    add_cases(admin, plan, default_group(admin, plan), *cases)
    cycle = new_cycle(admin, plan)
    for run in runs_of(admin, cycle):
        assert record(admin, run["id"], testRunStatus="PASSED").status_code == 200
    after = {p.name: _served(p) for p in (first, second)}
    # Round robin: each replica answered a share of the 20-odd calls.
    assert all(after[name] >= before[name] + 4 for name in after), (before, after)

    # Written through one replica, read through the other.
    metadata = admin_metadata(admin)
    run_id = runs_of(admin, cycle)[0]["id"]
    fields = json.dumps({"testRunStatus": "BLOCKED", "actualResults": "written by one"})
    with grpc.insecure_channel(f"127.0.0.1:{first.grpc_port}") as channel:
        testmgmt_pb2_grpc.TestRunsStub(channel).UpdateRun(
            testmgmt_pb2.UpdateRequest(id=run_id, fields_json=fields.encode()), metadata=metadata
        )
    with grpc.insecure_channel(f"127.0.0.1:{second.grpc_port}") as channel:
        reply = testmgmt_pb2_grpc.TestRecordsStub(channel).GetRecords(
            testmgmt_pb2.GetRecordsRequest(ids=[run_id]), metadata=metadata
        )
    read = json.loads(reply.records[0].fields_json)
    assert read["testRunStatus"] == "BLOCKED"
    assert read["actualResults"] == "written by one"
    assert run_of(admin, run_id)["fields"]["testRunStatus"] == "BLOCKED"
