"""``/rest/labs/users/{userId}/roles``: organisation roles (a Plumbline extension).

The contract has no API that gives a user the user-administrator role. Organisation
administrators give and take ``USER_ADMIN`` here; ``ORGANIZATION_ADMIN`` is listed but
cannot be given or taken. Users read their own roles, user administrators anyone's.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.api.identity.v1 import identity_pb2
from plumbline.gateway import records, schemas
from plumbline.gateway.bodies import RecordId, RolesBody
from plumbline.gateway.deps import Gw, View, view_of
from plumbline.gateway.envelope import updated

router = APIRouter(prefix="/rest/{version}", tags=["users"])

Roles = Annotated[View, Depends(view_of("userroles"))]


def _roles(reply: identity_pb2.UserRoles) -> records.UserRoles:
    return {"user": reply.user_id, "roles": list(reply.roles), "type": "userroles"}


@router.get(
    "/users/{userId}/roles",
    summary="A user's organisation roles (labs)",
    responses=schemas.one(records.UserRoles),
)
async def get_roles(
    userId: RecordId,
    view: Roles,
    gw: Gw,
) -> Response:
    reply = await gw.upstreams.identity.roles.GetRoles(core_pb2.Id(id=userId))
    return await view.one(_roles(reply))


@router.put(
    "/users/{userId}/roles",
    summary="Give or take the user-administrator role (organisation administrators, labs)",
    description="The body lists all of the user's roles: USER_ADMIN to give it, without it "
    "to take it. ORGANIZATION_ADMIN must be listed exactly when the user has it.",
    responses=schemas.updated(records.UserRoles),
)
async def set_roles(
    userId: RecordId,
    body: RolesBody,
    gw: Gw,
) -> Response:
    reply = await gw.upstreams.identity.roles.SetRoles(
        identity_pb2.UserRoles(user_id=userId, roles=body.roles)
    )
    return updated(_roles(reply))
