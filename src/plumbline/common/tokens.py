"""Tokens to call the REST API as a user, for services that act for one: hooks reads a
changed record as a webhook's owner, reports reads a report's data as whoever asked for
it. Identity issues them (``Auth.IssueTokenFor``, a call only services inside the
deployment can make, as every gRPC call); each is kept until shortly before it expires.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import grpc
import httpx

from plumbline.api.core.v1 import core_pb2
from plumbline.api.identity.v1 import identity_pb2_grpc
from plumbline.common.capped import with_room

#: A token is used until this many seconds before it expires.
TOKEN_MARGIN = 60.0
#: The most users whose token is kept.
MAX_TOKENS = 10_000


class UserTokens:
    """Bearer tokens by user, issued by identity and kept while they are good, and GETs
    of the REST API made with them."""

    def __init__(self, identity: Callable[[], grpc.aio.Channel]) -> None:
        self._identity = identity
        self._tokens: dict[int, tuple[float, str]] = {}

    async def of(self, user: int, fresh: bool = False) -> str:
        """A token of ``user``: the kept one, or (``fresh``, or none kept) a new one."""
        now = time.monotonic()
        kept = self._tokens.get(user)
        if kept is not None and kept[0] > now and not fresh:
            return kept[1]
        issued = await identity_pb2_grpc.AuthStub(self._identity()).IssueTokenFor(
            core_pb2.Id(id=user)
        )
        if len(self._tokens) >= MAX_TOKENS:
            self._tokens = with_room(self._tokens, lambda entry: entry[0] > now, MAX_TOKENS)
        self._tokens[user] = (now + issued.expires_in - TOKEN_MARGIN, issued.access_token)
        return issued.access_token

    async def get(
        self, http: httpx.AsyncClient, user: int, url: str, params: Any = None
    ) -> httpx.Response:
        """``GET url`` as ``user``; a 401 (the kept token may have expired meanwhile) is
        tried once more with a new token. Transport errors are httpx's."""
        for fresh in (False, True):
            token = await self.of(user, fresh)
            response = await http.get(
                url, params=params, headers={"Authorization": f"Bearer {token}"}
            )
            if response.status_code != 401:
                break
        return response
