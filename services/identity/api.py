"""identity's gRPC servicer: messages in, domain calls, messages out."""

from __future__ import annotations

from typing import Any, TypeAlias

import grpc

from plumbline.common.rpc import page_of
from plumbline.core.v1 import core_pb2
from plumbline.identity.v1 import identity_pb2 as pb
from plumbline.identity.v1 import identity_pb2_grpc
from plumbline.services.identity.domain import Identity, IssuedToken

Ctx: TypeAlias = grpc.aio.ServicerContext

_INPUT_FIELDS = (
    "username",
    "first_name",
    "last_name",
    "email",
    "phone",
    "title",
    "location",
    "license_type",
    "password",
)


def user_message(row: Any) -> pb.User:
    """A users row as a message."""
    return pb.User(
        id=row.id,
        username=row.username,
        first_name=row.first_name,
        last_name=row.last_name,
        email=row.email,
        phone=row.phone,
        title=row.title,
        location=row.location,
        license_type=row.license_type,
        avatar_url=row.avatar_url,
        active=row.active,
    )


def group_message(row: Any) -> pb.Group:
    """A groups row as a message."""
    message = pb.Group(id=row.id, name=row.name, description=row.description)
    if row.project is not None:
        message.project = row.project
    return message


def _page_info(start: int, rows: list[Any], total: int) -> core_pb2.PageInfo:
    return core_pb2.PageInfo(start_index=start, result_count=len(rows), total_results=total)


def _user_input(message: pb.UserInput) -> dict[str, Any]:
    return {f: getattr(message, f) for f in _INPUT_FIELDS if message.HasField(f)}


def _token(issued: IssuedToken) -> pb.AccessToken:
    return pb.AccessToken(
        access_token=issued.token,
        token_type="bearer",
        expires_in=issued.expires_in,
        scope=issued.scope,
        tenant=issued.tenant,
        jti=issued.jti,
    )


class IdentityServicer(identity_pb2_grpc.IdentityServicer):
    """Thin mapping onto ``Identity``."""

    def __init__(self, identity: Identity) -> None:
        self.identity = identity

    async def AuthenticateBasic(self, request: pb.BasicCredentials, context: Ctx) -> pb.Principal:
        p = await self.identity.authenticate_basic(request.username, request.password)
        return pb.Principal(
            user_id=p.user_id, username=p.username, roles=sorted(p.roles), active=True
        )

    async def GetPrincipal(self, request: core_pb2.Id, context: Ctx) -> pb.Principal:
        p, active = await self.identity.principal(request.id)
        return pb.Principal(
            user_id=p.user_id, username=p.username, roles=sorted(p.roles), active=active
        )

    async def IssueClientToken(self, request: pb.BasicCredentials, context: Ctx) -> pb.AccessToken:
        return _token(await self.identity.issue_client_token(request.username, request.password))

    async def IssueUserToken(self, request: pb.BasicCredentials, context: Ctx) -> pb.AccessToken:
        return _token(await self.identity.issue_user_token(request.username, request.password))

    async def GetTokenKeys(self, request: core_pb2.Empty, context: Ctx) -> pb.TokenKeys:
        return pb.TokenKeys(public_keys=await self.identity.token_keys(), issuer="plumbline")

    async def CreateClientCredentials(
        self, request: pb.CreateClientCredentialsRequest, context: Ctx
    ) -> pb.ClientCredentials:
        new_id, client_id, secret = await self.identity.create_client_credentials(
            request.user_id, request.name
        )
        return pb.ClientCredentials(
            id=new_id,
            client_id=client_id,
            client_secret=secret,
            name=request.name.strip(),
            user_id=request.user_id,
        )

    async def ListUsers(self, request: pb.ListUsersRequest, context: Ctx) -> pb.UserPage:
        start, size = page_of(request.page)
        rows, total = await self.identity.list_users(
            usernames=list(request.username),
            emails=list(request.email),
            first_names=list(request.first_name),
            last_names=list(request.last_name),
            include_inactive=request.include_inactive,
            start_at=start,
            max_results=size,
        )
        return pb.UserPage(
            users=[user_message(r) for r in rows], page_info=_page_info(start, rows, total)
        )

    async def GetUsers(self, request: core_pb2.IdList, context: Ctx) -> pb.UserList:
        rows = await self.identity.get_users(list(request.ids))
        return pb.UserList(users=[user_message(r) for r in rows])

    async def GetUser(self, request: core_pb2.Id, context: Ctx) -> pb.User:
        return user_message(await self.identity.get_user(request.id))

    async def CreateUser(self, request: pb.UserInput, context: Ctx) -> core_pb2.Created:
        return core_pb2.Created(id=await self.identity.create_user(_user_input(request)))

    async def UpdateUser(self, request: pb.UpdateUserRequest, context: Ctx) -> core_pb2.Empty:
        await self.identity.update_user(request.id, _user_input(request.user))
        return core_pb2.Empty()

    async def SetUserActive(self, request: pb.SetUserActiveRequest, context: Ctx) -> core_pb2.Empty:
        await self.identity.set_user_active(request.id, request.active)
        return core_pb2.Empty()

    async def ListGroups(self, request: pb.ListGroupsRequest, context: Ctx) -> pb.GroupPage:
        start, size = page_of(request.page)
        project = request.project if request.HasField("project") else None
        rows, total = await self.identity.list_groups(project, start, size)
        return pb.GroupPage(
            groups=[group_message(r) for r in rows], page_info=_page_info(start, rows, total)
        )

    async def GetGroups(self, request: core_pb2.IdList, context: Ctx) -> pb.GroupList:
        rows = await self.identity.get_groups(list(request.ids))
        return pb.GroupList(groups=[group_message(r) for r in rows])

    async def GetGroup(self, request: core_pb2.Id, context: Ctx) -> pb.Group:
        return group_message(await self.identity.get_group(request.id))

    async def CreateGroup(self, request: pb.GroupInput, context: Ctx) -> core_pb2.Created:
        project = request.project if request.HasField("project") else None
        group_id = await self.identity.create_group(request.name, request.description, project)
        return core_pb2.Created(id=group_id)

    async def UpdateGroup(self, request: pb.UpdateGroupRequest, context: Ctx) -> core_pb2.Empty:
        group = request.group
        values = {
            f: getattr(group, f) for f in ("name", "description", "project") if group.HasField(f)
        }
        await self.identity.update_group(request.id, values)
        return core_pb2.Empty()

    async def DeleteGroup(self, request: core_pb2.Id, context: Ctx) -> core_pb2.Empty:
        await self.identity.delete_group(request.id)
        return core_pb2.Empty()

    async def ListGroupMembers(
        self, request: pb.ListGroupMembersRequest, context: Ctx
    ) -> pb.UserPage:
        start, size = page_of(request.page)
        rows, total = await self.identity.group_members(request.group_id, start, size)
        return pb.UserPage(
            users=[user_message(r) for r in rows], page_info=_page_info(start, rows, total)
        )

    async def AddGroupMember(self, request: pb.GroupMember, context: Ctx) -> core_pb2.Empty:
        await self.identity.add_member(request.group_id, request.user_id)
        return core_pb2.Empty()

    async def RemoveGroupMember(self, request: pb.GroupMember, context: Ctx) -> core_pb2.Empty:
        await self.identity.remove_member(request.group_id, request.user_id)
        return core_pb2.Empty()

    async def GetWatermark(self, request: core_pb2.Empty, context: Ctx) -> core_pb2.Watermark:
        return core_pb2.Watermark(
            source="identity", position=await self.identity.outbox.watermark()
        )
