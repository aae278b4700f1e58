"""``plumbline.identity.v1.Auth``: credentials and access tokens."""

from __future__ import annotations

from plumbline.api.core.v1 import core_pb2
from plumbline.api.identity.v1 import identity_pb2 as pb
from plumbline.api.identity.v1 import identity_pb2_grpc
from plumbline.common.rpc import Context
from plumbline.services.identity.auth import Auth, IssuedToken


def _token(issued: IssuedToken) -> pb.AccessToken:
    return pb.AccessToken(
        access_token=issued.token,
        token_type="bearer",
        expires_in=issued.expires_in,
        scope=issued.scope,
        tenant=issued.tenant,
        jti=issued.jti,
    )


class AuthServicer(identity_pb2_grpc.AuthServicer):
    """Thin mapping onto ``Auth``."""

    def __init__(self, auth: Auth) -> None:
        self.auth = auth

    async def AuthenticateBasic(
        self, request: pb.BasicCredentials, context: Context
    ) -> pb.Principal:
        p = await self.auth.authenticate_basic(request.username, request.password)
        return pb.Principal(
            user_id=p.user_id, username=p.username, roles=sorted(p.roles), active=True
        )

    async def GetPrincipal(self, request: core_pb2.Id, context: Context) -> pb.Principal:
        p, active = await self.auth.principal(request.id)
        return pb.Principal(
            user_id=p.user_id, username=p.username, roles=sorted(p.roles), active=active
        )

    async def IssueClientToken(
        self, request: pb.BasicCredentials, context: Context
    ) -> pb.AccessToken:
        return _token(await self.auth.issue_client_token(request.username, request.password))

    async def IssueTokenFor(self, request: core_pb2.Id, context: Context) -> pb.AccessToken:
        return _token(await self.auth.issue_token_for(request.id))

    async def IssueUserToken(
        self, request: pb.BasicCredentials, context: Context
    ) -> pb.AccessToken:
        return _token(await self.auth.issue_user_token(request.username, request.password))

    async def GetTokenKeys(self, request: core_pb2.Empty, context: Context) -> pb.TokenKeys:
        return pb.TokenKeys(public_keys=await self.auth.token_keys(), issuer="plumbline")

    async def CreateClientCredentials(
        self, request: pb.CreateClientCredentialsRequest, context: Context
    ) -> pb.ClientCredentials:
        new_id, client_id, secret = await self.auth.create_client_credentials(
            request.user_id, request.name
        )
        return pb.ClientCredentials(
            id=new_id,
            client_id=client_id,
            client_secret=secret,
            name=request.name.strip(),
            user_id=request.user_id,
        )
