"""``/users``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.api.identity.v1 import identity_pb2
from plumbline.common.errors import InvalidArgument
from plumbline.gateway import query, records, representations, schemas
from plumbline.gateway.bodies import ActiveStatus, RecordId, UserCreate, UserUpdate
from plumbline.gateway.deps import Caller, Gw, Paging, Version, View, view_of
from plumbline.gateway.envelope import created, updated

router = APIRouter(prefix="/rest/{version}", tags=["users"])

Users = Annotated[View, Depends(view_of("users"))]


def _matching(name: str, what: str) -> Any:
    description = f"Only users whose {what} is one of these (in any case)."
    return Depends(query.strings(name, description=description))


#: A body member (camelCase) to its UserInput field: the message is the one list.
_FIELDS = {f.json_name: f.name for f in identity_pb2.UserInput.DESCRIPTOR.fields}
# Required on POST: a PUT may change them but not remove them.
_REQUIRED = ("username", "firstName", "lastName", "email", "licenseType")


def _input(values: dict[str, object]) -> identity_pb2.UserInput:
    message = identity_pb2.UserInput()
    for wire, field in _FIELDS.items():
        if wire in values:
            value = values[wire]
            setattr(message, field, "" if value is None else str(value))
    return message


@router.get(
    "/users", summary="List users (user administrators)", responses=schemas.page(records.User)
)
async def list_users(
    view: Users,
    gw: Gw,
    page: Paging,
    username: Annotated[list[str], _matching("username", "user name")],
    email: Annotated[list[str], _matching("email", "email address")],
    first_name: Annotated[list[str], _matching("firstName", "first name")],
    last_name: Annotated[list[str], _matching("lastName", "last name")],
    include_inactive: Annotated[
        bool, Depends(query.boolean("includeInactive", description="Also inactive users."))
    ],
    project: Annotated[
        int | None,
        Depends(
            query.integer(
                "project",
                description="Only users with a role on this project; its project "
                "administrators may list these.",
            )
        ),
    ],
) -> Response:
    message = identity_pb2.ListUsersRequest(
        username=username,
        email=email,
        first_name=first_name,
        last_name=last_name,
        include_inactive=include_inactive,
        page=page.message(),
    )
    if project is not None:
        message.project = project
    reply = await gw.upstreams.identity.users.ListUsers(message)
    data = [representations.user(u) for u in reply.users]
    return await view.many(data, reply.page_info)


@router.post("/users", status_code=201, summary="Create a user", responses=schemas.created())
async def create_user(request: Request, body: UserCreate, version: Version, gw: Gw) -> Response:
    view = View(request, gw, version, "users")
    values = body.model_dump(exclude_unset=True)
    reply = await gw.upstreams.identity.users.CreateUser(_input(values))
    return created(reply.id, view.location(f"users/{reply.id}"))


@router.get("/users/current", summary="The authenticated user", responses=schemas.one(records.User))
async def current_user(view: Users, gw: Gw, caller: Caller) -> Response:
    reply = await gw.upstreams.identity.users.GetUser(core_pb2.Id(id=caller.user_id))
    data = representations.user(reply)
    return await view.one(data)


@router.get("/users/{userId}", summary="Get a user", responses=schemas.one(records.User))
async def get_user(userId: RecordId, view: Users, gw: Gw) -> Response:
    reply = await gw.upstreams.identity.users.GetUser(core_pb2.Id(id=userId))
    data = representations.user(reply)
    return await view.one(data)


@router.put("/users/{userId}", summary="Update a user", responses=schemas.updated())
async def update_user(userId: RecordId, body: UserUpdate, gw: Gw) -> Response:
    values = body.model_dump(
        exclude_unset=True, exclude={"id", "type", "active", "avatarUrl", "authenticationType"}
    )
    if values.get("password") is None:
        # Clients that PUT back a whole user send "password": null; only a value is refused.
        values.pop("password", None)
    for name in _REQUIRED:
        if name in values and values[name] is None:
            raise InvalidArgument(f"{name} cannot be null: every user has one; send a value.")
    await gw.upstreams.identity.users.UpdateUser(
        identity_pb2.UpdateUserRequest(id=userId, user=_input(values))
    )
    return updated()


@router.put(
    "/users/{userId}/active",
    summary="Activate or deactivate a user",
    responses=schemas.updated(),
)
async def set_active(userId: RecordId, body: ActiveStatus, gw: Gw) -> Response:
    await gw.upstreams.identity.users.SetUserActive(
        identity_pb2.SetUserActiveRequest(id=userId, active=body.active)
    )
    return updated()
