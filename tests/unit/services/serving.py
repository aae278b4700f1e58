"""A fake of another service at the gRPC boundary: a real local server with the fake's
servicer, and the channel the module under test is given."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc

from plumbline.common.rpc import GrpcServer, connect, wait_ready


@contextlib.asynccontextmanager
async def serving(
    service: str, register: Callable[[Any, grpc.aio.Server], None], servicer: Any
) -> AsyncIterator[Callable[[], grpc.aio.Channel]]:
    """``servicer`` served on a free local port as ``service``: yields the channel
    factory a domain object takes (``runtime.channel`` bound to the service)."""
    server = GrpcServer("127.0.0.1", 0)
    server.add(register, servicer)
    port = await server.start()
    await server.set_serving(True)
    channel = connect(service, f"127.0.0.1:{port}")
    try:
        await wait_ready(channel, service, 5)
        yield lambda: channel
    finally:
        await channel.close()
        await server.stop(0)
