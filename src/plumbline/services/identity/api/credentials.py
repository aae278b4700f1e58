"""``plumbline.identity.v1.Credentials``."""

from __future__ import annotations

from typing import Any

from plumbline.api.core.v1 import core_pb2
from plumbline.api.identity.v1 import identity_pb2 as pb
from plumbline.api.identity.v1 import identity_pb2_grpc
from plumbline.common.dates import format_datetime
from plumbline.common.rpc import Context, message_of, page_info, page_of
from plumbline.services.identity.credentials import Credentials


def credentials_message(row: Any) -> pb.CredentialsInfo:
    """An api_clients row as a message (there is no secret to show)."""
    return message_of(row, pb.CredentialsInfo, created=format_datetime(row.created_at))


class CredentialsServicer(identity_pb2_grpc.CredentialsServicer):
    """Thin mapping onto ``Credentials``."""

    def __init__(self, credentials: Credentials) -> None:
        self.credentials = credentials

    async def ListCredentials(
        self, request: pb.ListCredentialsRequest, context: Context
    ) -> pb.CredentialsPage:
        start, size = page_of(request.page)
        rows, total = await self.credentials.of_user(request.user_id, start, size)
        return pb.CredentialsPage(
            credentials=[credentials_message(r) for r in rows],
            page_info=page_info(start, len(rows), total),
        )

    async def RevokeCredentials(
        self, request: pb.RevokeCredentialsRequest, context: Context
    ) -> core_pb2.Empty:
        await self.credentials.revoke(request.user_id, request.id)
        return core_pb2.Empty()

    async def ListRevokedClients(
        self, request: core_pb2.Empty, context: Context
    ) -> pb.RevokedClients:
        return pb.RevokedClients(client_ids=await self.credentials.revoked_clients())
