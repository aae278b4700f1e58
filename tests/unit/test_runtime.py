"""What a process gives its modules: here, the channels to the services."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from fastapi import FastAPI

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2_grpc
from plumbline.common import errors
from plumbline.common.bus import create_bus
from plumbline.common.rpc import GrpcServer, InProcessChannel
from plumbline.common.settings import Settings
from plumbline.runtime import Runtime
from tests.unit.common.rpc.fakes import FakeIdSpace


@pytest.fixture
async def server() -> AsyncIterator[GrpcServer]:
    server = GrpcServer("127.0.0.1", 0)
    server.add(items_pb2_grpc.add_IdSpaceServicer_to_server, FakeIdSpace())
    await server.start()
    try:
        yield server
    finally:
        await server.stop(0)


def _runtime(settings: Settings, server: GrpcServer) -> Runtime:
    bus = create_bus("memory://", settings.bus_stream, settings.bus_subject_prefix)
    return Runtime(settings, ("items", "gateway"), bus, server, FastAPI(), embedded=False)


async def test_a_service_of_this_process_is_called_in_process(
    server: GrpcServer, tmp_path: Path
) -> None:
    runtime = _runtime(Settings(data_dir=tmp_path), server)
    channel = runtime.channel("items")
    assert isinstance(channel, InProcessChannel)
    assert runtime.channel("items") is channel
    assert await runtime.replica_channels("items") == [channel]
    await runtime.wait_ready("items", 2)
    reply = await items_pb2_grpc.IdSpaceStub(channel).GetIdOwner(core_pb2.Id(id=1))
    assert reply.owner == "items"


async def test_a_service_with_an_address_is_called_there_even_when_it_runs_here(
    server: GrpcServer, tmp_path: Path
) -> None:
    runtime = _runtime(Settings(data_dir=tmp_path, items_addr=f"127.0.0.1:{server.port}"), server)
    channel = runtime.channel("items")
    assert not isinstance(channel, InProcessChannel)
    assert isinstance(channel, grpc.aio.Channel)
    try:
        await runtime.wait_ready("items", 5)
    finally:
        await channel.close()


async def test_channels_to_replicas_gone_are_closed(server: GrpcServer, tmp_path: Path) -> None:
    """A name's replicas change as pods are replaced: a channel to each that is there
    now, and none kept to those gone."""
    settings = Settings(data_dir=tmp_path, items_addr="127.0.0.1:5001,127.0.0.1:5002")
    runtime = _runtime(settings, server)
    first = await runtime.replica_channels("items")
    assert len(first) == 2
    runtime.addresses["items"] = "127.0.0.1:5002,127.0.0.1:5003"
    second = await runtime.replica_channels("items")
    assert second[0] is first[1]  # still there: the same channel
    assert sorted(k for k in runtime.channels if "@" in k) == [
        "items@127.0.0.1:5002",
        "items@127.0.0.1:5003",
    ]
    assert first[0].get_state() is grpc.ChannelConnectivity.SHUTDOWN
    for channel in [runtime.channel("items"), *second]:
        await channel.close()


async def test_a_service_neither_here_nor_addressed_is_refused(
    server: GrpcServer, tmp_path: Path
) -> None:
    runtime = _runtime(Settings(data_dir=tmp_path), server)
    with pytest.raises(errors.InvalidArgument, match="PLUMBLINE_IDENTITY_ADDR is not set"):
        runtime.channel("identity")


async def test_waiting_for_a_service_here_names_it_so(server: GrpcServer, tmp_path: Path) -> None:
    runtime = _runtime(Settings(data_dir=tmp_path), server)
    await server.set_serving(False)
    with pytest.raises(errors.Unavailable, match="the items service in this process is not ready"):
        await runtime.wait_ready("items", 0.3)
