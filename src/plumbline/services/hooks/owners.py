"""Webhook owners as identity knows them now."""

from __future__ import annotations

import time
from collections.abc import Callable
from types import MappingProxyType

import grpc

from plumbline.api.core.v1 import core_pb2
from plumbline.api.identity.v1 import identity_pb2_grpc
from plumbline.common.access import Access, AccessCache
from plumbline.common.capped import with_room
from plumbline.common.context import Principal
from plumbline.common.errors import NotFound

#: The most owners kept.
MAX_OWNERS = 10_000
#: How long an owner's standing (active, organisation administrator) is used before
#: identity is asked again; their project roles come from the access cache, which
#: identity's events clear at once.
PRINCIPAL_SECONDS = 1.0


class Owners:
    """Webhook owners' access as identity says it now: an inactive or removed owner may
    read nothing."""

    def __init__(self, channel: Callable[[], grpc.aio.Channel], access: AccessCache) -> None:
        self._channel = channel
        self._access = access
        self._principals: dict[int, tuple[float, Principal | None]] = {}

    async def access_of(self, user_id: int) -> Access:
        """What ``user_id`` may read now."""
        now = time.monotonic()
        cached = self._principals.get(user_id)
        if cached is None or cached[0] < now:
            if len(self._principals) >= MAX_OWNERS:
                self._principals = with_room(
                    self._principals, lambda entry: entry[0] > now, MAX_OWNERS
                )
            cached = (now + PRINCIPAL_SECONDS, await self._principal(user_id))
            self._principals[user_id] = cached
        principal = cached[1]
        if principal is None:
            return Access(Principal(user_id, "", frozenset()), MappingProxyType({}))
        return await self._access.of(principal)

    async def _principal(self, user_id: int) -> Principal | None:
        """The owner as identity knows them; None if gone or inactive."""
        try:
            found = await identity_pb2_grpc.AuthStub(self._channel()).GetPrincipal(
                core_pb2.Id(id=user_id)
            )
        except NotFound:
            found = None
        if found is None or not found.active:
            return None
        return Principal(found.user_id, found.username, frozenset(found.roles))
