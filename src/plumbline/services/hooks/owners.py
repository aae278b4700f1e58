"""Webhook owners as identity knows them now."""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType

import grpc

from plumbline.api.core.v1 import core_pb2
from plumbline.api.identity.v1 import identity_pb2_grpc
from plumbline.common.access import Access, AccessCache
from plumbline.common.context import Principal
from plumbline.common.errors import NotFound


class Owners:
    """Webhook owners' access as identity says it now: an inactive or removed owner may
    read nothing."""

    def __init__(self, channel: Callable[[], grpc.aio.Channel], access: AccessCache) -> None:
        self._channel = channel
        self._access = access

    async def access_of(self, user_id: int) -> Access:
        """What ``user_id`` may read now."""
        try:
            found = await identity_pb2_grpc.AuthStub(self._channel()).GetPrincipal(
                core_pb2.Id(id=user_id)
            )
        except NotFound:
            found = None
        if found is None or not found.active:
            return Access(Principal(user_id, "", frozenset()), MappingProxyType({}))
        principal = Principal(found.user_id, found.username, frozenset(found.roles))
        return await self._access.of(principal)
