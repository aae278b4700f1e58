"""``plumbline.identity.v1.Groups``: user groups and their members."""

from __future__ import annotations

from typing import Any

from plumbline.api.core.v1 import core_pb2
from plumbline.api.identity.v1 import identity_pb2 as pb
from plumbline.api.identity.v1 import identity_pb2_grpc
from plumbline.common.rpc import Context, message_of, optional, page_info, page_of
from plumbline.services.identity.api.users import user_message
from plumbline.services.identity.groups import Groups


def group_message(row: Any) -> pb.Group:
    """A groups row as a message."""
    return message_of(row, pb.Group)


class GroupsServicer(identity_pb2_grpc.GroupsServicer):
    """Thin mapping onto ``Groups``."""

    def __init__(self, groups: Groups) -> None:
        self.groups = groups

    async def ListGroups(self, request: pb.ListGroupsRequest, context: Context) -> pb.GroupPage:
        start, size = page_of(request.page)
        rows, total = await self.groups.list_groups(optional(request, "project"), start, size)
        return pb.GroupPage(
            groups=[group_message(r) for r in rows], page_info=page_info(start, len(rows), total)
        )

    async def GetGroups(self, request: core_pb2.IdList, context: Context) -> pb.GroupList:
        rows = await self.groups.get_groups(list(request.ids))
        return pb.GroupList(groups=[group_message(r) for r in rows])

    async def GetGroup(self, request: core_pb2.Id, context: Context) -> pb.Group:
        return group_message(await self.groups.get_group(request.id))

    async def CreateGroup(self, request: pb.GroupInput, context: Context) -> core_pb2.Created:
        group_id = await self.groups.create_group(
            request.name, request.description, optional(request, "project")
        )
        return core_pb2.Created(id=group_id)

    async def UpdateGroup(self, request: pb.UpdateGroupRequest, context: Context) -> core_pb2.Empty:
        group = request.group
        values = {
            f: getattr(group, f) for f in ("name", "description", "project") if group.HasField(f)
        }
        await self.groups.update_group(request.id, values)
        return core_pb2.Empty()

    async def DeleteGroup(self, request: core_pb2.Id, context: Context) -> core_pb2.Empty:
        await self.groups.delete_group(request.id)
        return core_pb2.Empty()

    async def ListGroupMembers(
        self, request: pb.ListGroupMembersRequest, context: Context
    ) -> pb.UserPage:
        start, size = page_of(request.page)
        rows, total = await self.groups.group_members(request.group_id, start, size)
        return pb.UserPage(
            users=[user_message(r) for r in rows], page_info=page_info(start, len(rows), total)
        )

    async def AddGroupMember(self, request: pb.GroupMember, context: Context) -> core_pb2.Empty:
        await self.groups.add_member(request.group_id, request.user_id)
        return core_pb2.Empty()

    async def RemoveGroupMember(self, request: pb.GroupMember, context: Context) -> core_pb2.Empty:
        await self.groups.remove_member(request.group_id, request.user_id)
        return core_pb2.Empty()
