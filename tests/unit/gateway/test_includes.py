"""include= resolves each referenced type with one batch call."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest

from plumbline.api.core.v1 import core_pb2
from plumbline.api.identity.v1 import identity_pb2, identity_pb2_grpc
from plumbline.api.items.v1 import items_pb2, items_pb2_grpc
from plumbline.api.testmgmt.v1 import testmgmt_pb2, testmgmt_pb2_grpc
from plumbline.common.errors import InvalidArgument, PermissionDenied
from plumbline.common.rpc import Context, GrpcServer, connect
from plumbline.gateway.includes import LINKS, RESOLVERS, requested, resolve
from plumbline.gateway.upstreams import (
    ActivityClient,
    AttachmentsClient,
    BaselinesClient,
    HooksClient,
    IdentityClient,
    ItemsClient,
    ReportsClient,
    TestmgmtClient,
    Upstreams,
)

Calls = list[tuple[str, list[int]]]

#: The project the fake refuses to show.
DENIED = 666


@dataclass
class FakeUsers(identity_pb2_grpc.UsersServicer):
    """Answers every id; counts the batch calls."""

    calls: Calls = field(default_factory=list)

    async def GetUsers(self, request: core_pb2.IdList, context: Context) -> identity_pb2.UserList:
        self.calls.append(("users", list(request.ids)))
        return identity_pb2.UserList(
            users=[identity_pb2.User(id=i, username=f"u{i}") for i in request.ids]
        )

    async def ListUsers(self, request: Any, context: Context) -> identity_pb2.UserPage:
        raise NotImplementedError

    async def GetUser(self, request: Any, context: Context) -> identity_pb2.User:
        raise NotImplementedError

    async def CreateUser(self, request: Any, context: Context) -> core_pb2.Created:
        raise NotImplementedError

    async def UpdateUser(self, request: Any, context: Context) -> core_pb2.Empty:
        raise NotImplementedError

    async def SetUserActive(self, request: Any, context: Context) -> core_pb2.Empty:
        raise NotImplementedError


@dataclass
class FakeProjects(items_pb2_grpc.ProjectsServicer):
    """Answers every id; counts the batch calls."""

    calls: Calls = field(default_factory=list)

    async def GetProjects(
        self, request: core_pb2.IdList, context: Context
    ) -> items_pb2.ProjectList:
        self.calls.append(("projects", list(request.ids)))
        if list(request.ids) == [DENIED]:
            # A batch of one the caller may not read is refused, as the services do.
            raise PermissionDenied(f"You have no access to project {DENIED}.")
        return items_pb2.ProjectList(
            projects=[items_pb2.Project(id=i, fields_json=b"{}") for i in request.ids]
        )

    async def ListProjects(self, request: Any, context: Context) -> items_pb2.ProjectPage:
        raise NotImplementedError

    async def CreateProject(self, request: Any, context: Context) -> core_pb2.Created:
        raise NotImplementedError

    async def ImportItems(self, request_iterator: Any, context: Context) -> items_pb2.ImportReply:
        raise NotImplementedError

    async def UpdateProject(self, request: Any, context: Context) -> core_pb2.Empty:
        raise NotImplementedError

    async def AddProjectItemType(self, request: Any, context: Context) -> core_pb2.Empty:
        raise NotImplementedError


@dataclass
class FakeTestRecords(testmgmt_pb2_grpc.TestRecordsServicer):
    """Answers every id as a record of the kind asked; counts the batch calls."""

    calls: Calls = field(default_factory=list)

    async def GetRecords(
        self, request: testmgmt_pb2.GetRecordsRequest, context: Context
    ) -> testmgmt_pb2.RecordList:
        assert request.skip_missing, "include= reads leave out what is gone"
        self.calls.append((testmgmt_pb2.Kind.Name(request.kind), list(request.ids)))
        return testmgmt_pb2.RecordList(
            records=[
                testmgmt_pb2.TestRecord(id=i, kind=request.kind, fields_json=b"{}")
                for i in request.ids
            ]
        )

    async def SearchRecords(self, request: Any, context: Context) -> testmgmt_pb2.RecordPage:
        raise NotImplementedError

    async def SetLock(self, request: Any, context: Context) -> core_pb2.Empty:
        raise NotImplementedError


@dataclass
class Rig:
    upstreams: Upstreams
    calls: Calls


def _one_replica(channel: grpc.aio.Channel) -> Callable[[str], Awaitable[list[grpc.aio.Channel]]]:
    async def replicas(service: str) -> list[grpc.aio.Channel]:
        return [channel]

    return replicas


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    calls: Calls = []
    server = GrpcServer("127.0.0.1", 0)
    server.add(identity_pb2_grpc.add_UsersServicer_to_server, FakeUsers(calls))
    server.add(items_pb2_grpc.add_ProjectsServicer_to_server, FakeProjects(calls))
    server.add(testmgmt_pb2_grpc.add_TestRecordsServicer_to_server, FakeTestRecords(calls))
    port = await server.start()
    channel = connect("test", f"127.0.0.1:{port}")
    try:
        upstreams = Upstreams(
            identity=IdentityClient(channel),
            items=ItemsClient(channel),
            testmgmt=TestmgmtClient(channel),
            attachments=AttachmentsClient(channel),
            activity=ActivityClient(channel),
            reports=ReportsClient(channel),
            baselines=BaselinesClient(channel),
            hooks=HooksClient(channel),
            replicas=_one_replica(channel),
        )
        yield Rig(upstreams, calls)
    finally:
        await channel.close()
        await server.stop(0)


async def test_one_call_per_type_with_unique_ids(rig: Rig) -> None:
    records: list[dict[str, Any]] = [
        {"createdBy": 1, "modifiedBy": 2, "parent": 10, "fields": {"projectManager": 2}},
        {"createdBy": 1, "modifiedBy": 3},
    ]
    linked = await resolve(
        rig.upstreams,
        "projects",
        ["data.createdBy", "data.modifiedBy", "data.fields.projectManager", "data.parent"],
        records,
    )
    assert sorted(rig.calls) == [("projects", [10]), ("users", [1, 2, 3])]
    assert linked is not None
    assert set(linked["users"]) == {"1", "2", "3"}
    assert linked["users"]["2"]["username"] == "u2"
    assert set(linked["projects"]) == {"10"}


async def test_test_runs_link_their_plan_and_cycle_by_kind(rig: Rig) -> None:
    runs: list[dict[str, Any]] = [
        {"fields": {"testPlan": 5, "testCycle": 7, "testCase": 9}},
        {"fields": {"testPlan": 5, "testCycle": 8}},
    ]
    linked = await resolve(
        rig.upstreams, "testruns", ["data.fields.testPlan", "data.fields.testCycle"], runs
    )
    assert sorted(rig.calls) == [("CYCLE", [7, 8]), ("PLAN", [5])]
    assert linked is not None
    assert linked["testplans"]["5"]["type"] == "testplans"
    assert {c["type"] for c in linked["testcycles"].values()} == {"testcycles"}


async def test_a_reference_the_caller_may_not_see_is_left_out(rig: Rig) -> None:
    records: list[dict[str, Any]] = [{"createdBy": 1, "parent": DENIED}]
    linked = await resolve(rig.upstreams, "projects", ["data.createdBy", "data.parent"], records)
    assert linked is not None
    assert set(linked["users"]) == {"1"}
    assert linked["projects"] == {}


async def test_no_include_no_linked(rig: Rig) -> None:
    assert await resolve(rig.upstreams, "projects", [], [{}]) is None
    assert rig.calls == []


def test_a_malformed_include_is_refused_with_the_allowed_keys() -> None:
    with pytest.raises(
        InvalidArgument, match=r"'nope'.*data\.fields\.<field name>.*data\.createdBy"
    ):
        requested(["nope"], "projects")


#: What a downloader asks of every filter's results, whatever they hold.
DOWNLOADER = ["data.fields.testPlan", "data.fields.testCycle", "data.itemType"]


@pytest.mark.parametrize("resource", sorted(LINKS))
def test_an_include_these_records_lack_is_kept_not_refused(resource: str) -> None:
    # Every route that takes include takes its values through requested().
    assert requested([*DOWNLOADER, " data.nope "], resource) == [*DOWNLOADER, "data.nope"]


@pytest.mark.parametrize(
    "value",
    [
        "nope",
        "data",
        "data.",
        "data..project",
        "data.project.",
        "fields.testPlan",
        "Data.project",
        "data.fields.test plan",
        "data.project;drop",
        "data.fields.testPlan\u0000",
    ],
)
def test_only_a_value_not_shaped_like_a_link_is_malformed(value: str) -> None:
    with pytest.raises(InvalidArgument, match=r"include: .* is not a link path"):
        requested(["data.project", value], "testruns")


def test_a_configured_field_links_whatever_its_name() -> None:
    extra = {"data.fields.due date": "users"}
    assert requested(["data.fields.due date"], "items", extra) == ["data.fields.due date"]


async def test_an_include_these_records_lack_resolves_nothing(rig: Rig) -> None:
    records: list[dict[str, Any]] = [{"createdBy": 1, "fields": {"testPlan": 5}}]
    linked = await resolve(
        rig.upstreams, "projects", ["data.createdBy", "data.fields.testPlan"], records
    )
    assert rig.calls == [("users", [1])]
    assert linked is not None
    assert set(linked) == {"users"}


async def test_includes_none_of_which_apply_answer_an_empty_linked(rig: Rig) -> None:
    # linked is there because include was used; it holds nothing.
    records: list[dict[str, Any]] = [{"fields": {"testPlan": 5, "testCycle": 7}}]
    assert await resolve(rig.upstreams, "items", DOWNLOADER[:2], records) == {}
    assert rig.calls == []


def test_every_link_target_has_a_resolver() -> None:
    # An include of a link whose type nobody resolves would fail the whole request.
    targets = {target for links in LINKS.values() for target in links.values()}
    assert targets <= set(RESOLVERS)
