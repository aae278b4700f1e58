"""``/rest/labs/users/{current|userId}/apicredentials``: OAuth client credentials.

The contract creates them in a profile page; this is its API form. The secret is in the
creation response once and never again: lists show the client id, name and creation
time. Users list and revoke their own; organization administrators anyone's. A revoked
client's tokens stop working on every gateway at once (see ``gateway/auth.py``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.identity.v1 import identity_pb2
from plumbline.gateway import records, representations, schemas
from plumbline.gateway.bodies import CredentialsCreate, RecordId
from plumbline.gateway.deps import Caller, Gw, Paging, Version, View, view_of
from plumbline.gateway.envelope import created, deleted

router = APIRouter(prefix="/rest/{version}", tags=["credentials"])

Listed = Annotated[View, Depends(view_of("apicredentials"))]


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
    version: Version,
) -> Response:
    view = View(request, gw, version, "users")
    reply = await gw.upstreams.identity.auth.CreateClientCredentials(
        identity_pb2.CreateClientCredentialsRequest(user_id=caller.user_id, name=body.name)
    )
    data = representations.credentials(reply)
    return created(reply.id, view.location("users/current"), data)


async def _list(view: View, gw: Gw, user_id: int, page: Paging) -> Response:
    reply = await gw.upstreams.identity.credentials.ListCredentials(
        identity_pb2.ListCredentialsRequest(user_id=user_id, page=page.message())
    )
    data = [representations.credentials_info(c) for c in reply.credentials]
    return await view.many(data, reply.page_info)


async def _revoke(gw: Gw, user_id: int, credentials_id: int) -> Response:
    await gw.upstreams.identity.credentials.RevokeCredentials(
        identity_pb2.RevokeCredentialsRequest(user_id=user_id, id=credentials_id)
    )
    return deleted()


@router.get(
    "/users/current/apicredentials",
    summary="List the current user's OAuth client credentials, without secrets (labs)",
    responses=schemas.page(records.ApiCredentialsInfo),
)
async def list_own(view: Listed, gw: Gw, page: Paging, caller: Caller) -> Response:
    return await _list(view, gw, caller.user_id, page)


@router.delete(
    "/users/current/apicredentials/{credentialsId}",
    status_code=204,
    summary="Revoke one of the current user's OAuth client credentials (labs)",
    responses=schemas.deleted("Revoked: the client's tokens stop working."),
)
async def revoke_own(credentialsId: RecordId, gw: Gw, caller: Caller) -> Response:
    return await _revoke(gw, caller.user_id, credentialsId)


@router.get(
    "/users/{userId}/apicredentials",
    summary="List a user's OAuth client credentials (that user or organization "
    "administrators, labs)",
    responses=schemas.page(records.ApiCredentialsInfo),
)
async def list_of_user(
    userId: RecordId,
    view: Listed,
    gw: Gw,
    page: Paging,
) -> Response:
    return await _list(view, gw, userId, page)


@router.delete(
    "/users/{userId}/apicredentials/{credentialsId}",
    status_code=204,
    summary="Revoke a user's OAuth client credentials (that user or organization "
    "administrators, labs)",
    responses=schemas.deleted("Revoked: the client's tokens stop working."),
)
async def revoke_of_user(
    userId: RecordId,
    credentialsId: RecordId,
    gw: Gw,
) -> Response:
    return await _revoke(gw, userId, credentialsId)
