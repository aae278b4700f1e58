"""``ItemsClient``: document keys for more records than the items service reserves in
one call (a cycle of 25,000 runs asked for 25,000 at once and was refused)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from grpc import aio

from plumbline.api.items.v1 import items_pb2, items_pb2_grpc
from plumbline.common.errors import InvalidArgument
from plumbline.common.itemsclient import KEYS_PER_CALL, ItemsClient
from plumbline.common.rpc import Context, GrpcServer, connect


class _IdSpace(items_pb2_grpc.IdSpaceServicer):
    """Keys ``P-1``, ``P-2``, ... at most ``KEYS_PER_CALL`` a call, as the items service."""

    def __init__(self) -> None:
        self.asked: list[int] = []
        self.next = 1

    async def ReserveDocumentKeys(
        self, request: items_pb2.ReserveKeysRequest, context: Context
    ) -> items_pb2.DocumentKeys:
        self.asked.append(request.count)
        if not 1 <= request.count <= KEYS_PER_CALL:
            raise InvalidArgument(f"count must be between 1 and {KEYS_PER_CALL}")
        first, self.next = self.next, self.next + request.count
        return items_pb2.DocumentKeys(keys=[f"P-{n}" for n in range(first, self.next)])

    async def AllocateIdBlock(self, request: Any, context: Context) -> Any:
        raise NotImplementedError

    async def GetIdOwner(self, request: Any, context: Context) -> Any:
        raise NotImplementedError


@pytest.fixture
async def served() -> AsyncIterator[tuple[_IdSpace, aio.Channel]]:
    space = _IdSpace()
    server = GrpcServer("127.0.0.1", 0)
    server.add(items_pb2_grpc.add_IdSpaceServicer_to_server, space)
    port = await server.start()
    channel = connect("test", f"127.0.0.1:{port}")
    try:
        yield space, channel
    finally:
        await channel.close()
        await server.stop(0)


async def test_keys_past_one_calls_limit_are_reserved_a_call_at_a_time(
    served: tuple[_IdSpace, aio.Channel],
) -> None:
    space, channel = served
    client = ItemsClient(lambda: channel, "testmgmt")
    keys = await client.document_keys(1, 2, 2 * KEYS_PER_CALL + 5)
    assert keys == [f"P-{n}" for n in range(1, 2 * KEYS_PER_CALL + 6)]
    assert space.asked == [KEYS_PER_CALL, KEYS_PER_CALL, 5]
    assert await client.document_keys(1, 2, 0) == []
    assert await client.document_keys(1, 2, 3) == ["P-20006", "P-20007", "P-20008"]
    assert space.asked[3:] == [3]
