"""Calling another service: context in metadata, status codes back to domain errors."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from plumbline.common import telemetry
from plumbline.common.context import to_metadata
from plumbline.common.errors import Internal, Unavailable, from_grpc

log = logging.getLogger(__name__)

#: The message limit when none is given (``Settings.grpc_max_message_bytes`` by default).
MAX_MESSAGE = 64 * 1024 * 1024


def connect(address: str, max_message: int = MAX_MESSAGE) -> grpc.aio.Channel:
    """An insecure channel (the mesh or network policy secures the pod network)."""
    return grpc.aio.insecure_channel(
        address,
        options=[
            ("grpc.keepalive_time_ms", 30_000),
            ("grpc.max_receive_message_length", max_message),
            ("grpc.max_send_message_length", max_message),
        ],
    )


def _too_large(exc: grpc.aio.AioRpcError) -> bool:
    # gRPC's own size check ("Received/Sent message larger than max (n vs. m)") shares
    # RESOURCE_EXHAUSTED with throttling; it is no reason to retry.
    return exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "larger than max" in (
        exc.details() or ""
    )


class ServiceClient:
    """Wraps a generated stub: ``await client.Method(request)``.

    Adds the caller's principal, request id and trace context as metadata and turns a
    failed call into the domain error its status code stands for.
    """

    def __init__(
        self,
        name: str,
        address: str,
        stub_class: Callable[[grpc.aio.Channel], Any],
        max_message: int = MAX_MESSAGE,
    ):
        self.name = name
        self.address = address
        self.max_message = max_message
        self.channel = connect(address, max_message)
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
        limit = self.max_message

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
                if _too_large(exc):
                    log.warning("%s: %s (limit here %d bytes)", name, exc.details(), limit)
                    raise Internal(
                        f"A message to or from the {name} service is larger than the "
                        "services accept; ask for fewer records (a smaller maxResults)."
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
