"""``plumbline.identity.v1.Users``."""

from __future__ import annotations

from typing import Any

from plumbline.api.core.v1 import core_pb2
from plumbline.api.identity.v1 import identity_pb2 as pb
from plumbline.api.identity.v1 import identity_pb2_grpc
from plumbline.common.rpc import Context, message_of, optional, page_info, page_of
from plumbline.services.identity.users import Users

#: The UserInput members a client may set (the domain's keys are the same names).
INPUT_FIELDS = tuple(f.name for f in pb.UserInput.DESCRIPTOR.fields)


def user_message(row: Any) -> pb.User:
    """A users row as a message."""
    return message_of(row, pb.User)


def _user_input(message: pb.UserInput) -> dict[str, Any]:
    given = {f: optional(message, f) for f in INPUT_FIELDS}
    return {f: value for f, value in given.items() if value is not None}


class UsersServicer(identity_pb2_grpc.UsersServicer):
    """Thin mapping onto ``Users``."""

    def __init__(self, users: Users) -> None:
        self.users = users

    async def ListUsers(self, request: pb.ListUsersRequest, context: Context) -> pb.UserPage:
        start, size = page_of(request.page)
        rows, total = await self.users.list_users(
            usernames=list(request.username),
            emails=list(request.email),
            first_names=list(request.first_name),
            last_names=list(request.last_name),
            include_inactive=request.include_inactive,
            project=optional(request, "project"),
            start_at=start,
            max_results=size,
        )
        return pb.UserPage(
            users=[user_message(r) for r in rows], page_info=page_info(start, len(rows), total)
        )

    async def GetUsers(self, request: core_pb2.IdList, context: Context) -> pb.UserList:
        rows = await self.users.get_users(list(request.ids))
        return pb.UserList(users=[user_message(r) for r in rows])

    async def GetUser(self, request: core_pb2.Id, context: Context) -> pb.User:
        return user_message(await self.users.get_user(request.id))

    async def CreateUser(self, request: pb.UserInput, context: Context) -> core_pb2.Created:
        return core_pb2.Created(id=await self.users.create_user(_user_input(request)))

    async def UpdateUser(self, request: pb.UpdateUserRequest, context: Context) -> core_pb2.Empty:
        await self.users.update_user(request.id, _user_input(request.user))
        return core_pb2.Empty()

    async def SetUserActive(
        self, request: pb.SetUserActiveRequest, context: Context
    ) -> core_pb2.Empty:
        await self.users.set_user_active(request.id, request.active)
        return core_pb2.Empty()
