"""``POST /rest/labs/users/current/apicredentials``: client credentials for the caller.

The contract creates them in a profile page; this is its API form. The secret is in
the response once and never again.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.gateway import records, schemas
from plumbline.gateway.bodies import CredentialsCreate
from plumbline.gateway.deps import Caller, Gw, View, labs_version
from plumbline.gateway.envelope import created
from plumbline.identity.v1 import identity_pb2

router = APIRouter(prefix="/rest/{version}", tags=["credentials"])


@router.post(
    "/users/current/apicredentials",
    status_code=201,
    summary="Create OAuth client credentials for the current user (labs)",
    responses=schemas.created(records.ApiCredentials),
)
async def create_credentials(
    request: Request,
    body: CredentialsCreate,
    gw: Gw,
    caller: Caller,
    version: str = Depends(labs_version),
) -> Response:
    view = View(request, gw, version, "users")
    reply = await gw.upstreams.identity.auth.CreateClientCredentials(
        identity_pb2.CreateClientCredentialsRequest(user_id=caller.user_id, name=body.name)
    )
    data: records.ApiCredentials = {
        "id": reply.id,
        "name": reply.name,
        "clientId": reply.client_id,
        "clientSecret": reply.client_secret,
        "user": reply.user_id,
        "type": "apicredentials",
    }
    return created(reply.id, view.location("users/current"), data)
