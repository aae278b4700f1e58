"""Calling another service: context in metadata, status codes back to domain errors."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from plumbline.common import telemetry
from plumbline.common.context import to_metadata
from plumbline.common.errors import Unavailable, from_grpc


def connect(address: str) -> grpc.aio.Channel:
    """An insecure channel (the mesh or network policy secures the pod network)."""
    return grpc.aio.insecure_channel(
        address,
        options=[
            ("grpc.keepalive_time_ms", 30_000),
            ("grpc.max_receive_message_length", 32 * 1024 * 1024),
        ],
    )


class ServiceClient:
    """Wraps a generated stub: ``await client.Method(request)``.

    Adds the caller's principal, request id and trace context as metadata and turns a
    failed call into the domain error its status code stands for.
    """

    def __init__(self, name: str, address: str, stub_class: Callable[[grpc.aio.Channel], Any]):
        self.name = name
        self.address = address
        self.channel = connect(address)
        self._stub = stub_class(self.channel)
        self._methods: dict[str, Callable[..., Awaitable[Any]]] = {}

    def __getattr__(self, method: str) -> Callable[..., Awaitable[Any]]:
        if method.startswith("_"):
            raise AttributeError(method)
        wrapped = self._methods.get(method)
        if wrapped is None:
            wrapped = self._wrap(getattr(self._stub, method))
            self._methods[method] = wrapped
        return wrapped

    def _wrap(self, call: Any) -> Callable[..., Awaitable[Any]]:
        name = self.name

        async def invoke(request: Any, timeout: float = 30.0) -> Any:
            metadata = to_metadata()
            traceparent = telemetry.current_traceparent()
            if traceparent:
                metadata.append(("traceparent", traceparent))
            try:
                return await call(request, metadata=metadata, timeout=timeout)
            except grpc.aio.AioRpcError as exc:
                if exc.code() == grpc.StatusCode.UNAVAILABLE:
                    raise Unavailable(
                        f"The {name} service is unavailable; try again shortly."
                    ) from None
                raise from_grpc(exc.code(), exc.details() or "") from None

        return invoke

    async def wait_ready(self, timeout: float) -> None:
        """Waits until the service's gRPC health says SERVING."""
        stub = health_pb2_grpc.HealthStub(self.channel)
        deadline = asyncio.get_running_loop().time() + timeout
        last: Exception | None = None
        while asyncio.get_running_loop().time() < deadline:
            try:
                reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1.0)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.aio.AioRpcError as exc:
                last = exc
            await asyncio.sleep(0.1)
        raise Unavailable(f"the {self.name} service at {self.address} is not ready ({last})")

    async def close(self) -> None:
        """Closes the channel."""
        await self.channel.close()
