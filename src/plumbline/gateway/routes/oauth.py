"""``POST /rest/oauth/token``: the client-credentials exchange."""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import parse_qs

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response
from typing_extensions import TypedDict

from plumbline.api.identity.v1 import identity_pb2
from plumbline.common.errors import PlumblineError
from plumbline.gateway import schemas
from plumbline.gateway.auth import client_address, decode_basic
from plumbline.gateway.deps import Gw
from plumbline.gateway.envelope import error, json_response

router = APIRouter(tags=["oauth"])


class TokenRequest(TypedDict):
    """The form of a token request (HTTP Basic carries the client id and secret)."""

    grant_type: Literal["client_credentials"]


class Token(TypedDict):
    """An access token (RFC 6749 section 5.1)."""

    access_token: str
    token_type: str
    expires_in: int
    scope: str
    application_data: dict[str, Any]
    tenant: str
    jti: str


def _oauth_error(status: int, code: str, message: str) -> Response:
    # RFC 6749 members for OAuth libraries, the contract's meta for everyone else.
    response = error(status, message)
    import orjson

    body = orjson.loads(response.body)
    body.update({"error": code, "error_description": message})
    headers = {"WWW-Authenticate": 'Basic realm="oauth"'} if status == 401 else None
    return json_response(body, status=status, headers=headers)


@router.post(
    "/rest/oauth/token",
    summary="Exchange client credentials for an access token",
    responses={**schemas.plain(Token, "The token."), **schemas.errors(400, 401)},
    # Basic with the client id and secret, never a user's credentials or a token.
    openapi_extra={**schemas.form_body(TokenRequest), "security": [{"basic": []}]},
)
async def token(request: Request, gw: Gw) -> Response:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        return _oauth_error(
            401, "invalid_client", "Authenticate with HTTP Basic: client id and client secret."
        )
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    body = (await request.body()).decode("utf-8", "replace")
    if content_type == "application/x-www-form-urlencoded" or not content_type:
        form = {k: v[-1] for k, v in parse_qs(body).items()}
    else:
        return _oauth_error(
            400, "invalid_request", "Send the form as application/x-www-form-urlencoded."
        )
    grant = form.get("grant_type") or request.query_params.get("grant_type")
    if grant != "client_credentials":
        return _oauth_error(
            400,
            "unsupported_grant_type",
            f"grant_type must be client_credentials, got {grant!r}.",
        )
    try:
        client_id, secret = decode_basic(value.strip())
        credentials = identity_pb2.BasicCredentials(username=client_id, password=secret)
        reply = await gw.auth.logins.attempt(
            client_id,
            client_address(request),
            lambda: gw.upstreams.identity.auth.IssueClientToken(credentials),
        )
    except PlumblineError as exc:
        if exc.http_status == 401:
            return _oauth_error(401, "invalid_client", exc.message)
        raise
    issued: Token = {
        "access_token": reply.access_token,
        "token_type": reply.token_type,
        "expires_in": reply.expires_in,
        "scope": reply.scope,
        "application_data": {},
        "tenant": reply.tenant,
        "jti": reply.jti,
    }
    return json_response(issued, headers={"Cache-Control": "no-store", "Pragma": "no-cache"})
