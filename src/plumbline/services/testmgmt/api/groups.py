"""``plumbline.testmgmt.v1.TestGroups``."""

from __future__ import annotations

from typing import Any

from plumbline.api.core.v1 import core_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2 as pb
from plumbline.api.testmgmt.v1 import testmgmt_pb2_grpc
from plumbline.common.rpc import Context, message_of, optional, page_info, page_of
from plumbline.services.testmgmt.groups import Groups


def group_message(row: Any) -> pb.TestGroup:
    """A test_groups row as a message."""
    return message_of(row, pb.TestGroup, test_plan=row.plan)


class TestGroupsServicer(testmgmt_pb2_grpc.TestGroupsServicer):
    """Thin mapping onto ``Groups``."""

    def __init__(self, groups: Groups) -> None:
        self.groups = groups

    async def ListGroups(self, request: pb.ListGroupsRequest, context: Context) -> pb.GroupPage:
        start, size = page_of(request.page)
        rows, total = await self.groups.page(request.plan, start, size)
        return pb.GroupPage(
            groups=[group_message(r) for r in rows], page_info=page_info(start, len(rows), total)
        )

    async def GetGroup(self, request: pb.GroupRef, context: Context) -> pb.TestGroup:
        return group_message(await self.groups.get(request.plan, request.group))

    async def CreateGroup(self, request: pb.GroupInput, context: Context) -> core_pb2.Created:
        group = await self.groups.create(
            request.plan, request.name, optional(request, "assigned_to")
        )
        return core_pb2.Created(id=group)

    async def UpdateGroup(self, request: pb.GroupInput, context: Context) -> core_pb2.Empty:
        await self.groups.update(
            request.plan, request.group, request.name, optional(request, "assigned_to")
        )
        return core_pb2.Empty()

    async def DeleteGroup(self, request: pb.GroupRef, context: Context) -> core_pb2.Empty:
        await self.groups.delete(request.plan, request.group)
        return core_pb2.Empty()

    async def ListGroupCases(
        self, request: pb.ListGroupCasesRequest, context: Context
    ) -> pb.CasePage:
        start, size = page_of(request.page)
        ids, total = await self.groups.list_cases(request.plan, request.group, start, size)
        return pb.CasePage(test_cases=ids, page_info=page_info(start, len(ids), total))

    async def AddGroupCase(self, request: pb.GroupCase, context: Context) -> core_pb2.Empty:
        await self.groups.add_case(request.plan, request.group, request.test_case)
        return core_pb2.Empty()

    async def AddGroupCases(self, request: pb.GroupCases, context: Context) -> core_pb2.Empty:
        await self.groups.add_cases(request.plan, request.group, list(request.test_cases))
        return core_pb2.Empty()

    async def RemoveGroupCase(self, request: pb.GroupCase, context: Context) -> core_pb2.Empty:
        await self.groups.remove_case(request.plan, request.group, request.test_case)
        return core_pb2.Empty()

    async def CheckGroupCase(self, request: pb.GroupCase, context: Context) -> core_pb2.Empty:
        await self.groups.check_case(request.plan, request.group, request.test_case)
        return core_pb2.Empty()
