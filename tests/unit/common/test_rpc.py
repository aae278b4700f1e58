"""The gRPC server interceptor and client wrapper, over a real connection."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from plumbline.common.context import Principal, current_principal, principal_var, request_id_var
from plumbline.common.errors import Internal, NotFound
from plumbline.common.rpc import GrpcServer, ServiceClient
from plumbline.core.v1 import core_pb2
from plumbline.items.v1 import items_pb2, items_pb2_grpc

seen: dict[str, Any] = {}


class FakeItems(items_pb2_grpc.ItemsServicer):
    async def GetIdOwner(self, request: core_pb2.Id, context: Any) -> items_pb2.IdOwner:
        principal = current_principal()
        seen["principal"] = principal
        seen["request_id"] = request_id_var.get()
        if request.id == 404:
            raise NotFound("No abstract item with id 404.")
        if request.id == 500:
            raise RuntimeError("secret internals")
        return items_pb2.IdOwner(owner="items")


@pytest.fixture
async def client() -> AsyncIterator[ServiceClient]:
    server = GrpcServer("127.0.0.1", 0)
    server.add(items_pb2_grpc.add_ItemsServicer_to_server, FakeItems(), "plumbline.items.v1.Items")
    port = await server.start()
    await server.set_serving(True)
    client = ServiceClient("items", f"127.0.0.1:{port}", items_pb2_grpc.ItemsStub)
    await client.wait_ready(5)
    yield client
    await client.close()
    await server.stop(0)


async def test_context_travels_and_errors_map_back(client: ServiceClient) -> None:
    principal_var.set(Principal(42, "alice", frozenset({"ORGANIZATION_ADMIN"})))
    request_id_var.set("req-1")
    reply = await client.GetIdOwner(core_pb2.Id(id=1))
    assert reply.owner == "items"
    assert seen["principal"] == Principal(42, "alice", frozenset({"ORGANIZATION_ADMIN"}))
    assert seen["request_id"] == "req-1"
    with pytest.raises(NotFound, match="404"):
        await client.GetIdOwner(core_pb2.Id(id=404))
    with pytest.raises(Internal) as info:
        await client.GetIdOwner(core_pb2.Id(id=500))
    assert "secret" not in info.value.message
