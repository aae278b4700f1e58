"""Calling another service: typed stubs over a channel whose interceptor adds the context.

A caller builds the generated stub over :func:`connect`'s channel
(``users_stub = identity_pb2_grpc.UsersStub(channel)``); mypy-protobuf types the stub, so
every call site is checked. :class:`ClientInterceptor` mirrors the server's interceptor:
it sends the caller's principal, request id and trace context as metadata, sets the
default deadline, and turns a failed call into the domain error its status code stands
for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from plumbline.common import telemetry
from plumbline.common.context import to_metadata
from plumbline.common.errors import PlumblineError, Unavailable, from_grpc

#: The deadline of a call that sets none.
DEFAULT_TIMEOUT = 30.0

#: The largest message a channel sends or receives.
MAX_MESSAGE_BYTES = 32 * 1024 * 1024

Request = TypeVar("Request")
Response = TypeVar("Response")


class ClientInterceptor(grpc.aio.UnaryUnaryClientInterceptor):
    """Context out as metadata, status codes back as domain errors."""

    def __init__(self, service: str) -> None:
        self.service = service

    async def intercept_unary_unary(
        self,
        continuation: Callable[
            [grpc.aio.ClientCallDetails, Request],
            Awaitable[grpc.aio.UnaryUnaryCall[Request, Response]],
        ],
        details: grpc.aio.ClientCallDetails,
        request: Request,
    ) -> Response | grpc.aio.UnaryUnaryCall[Request, Response]:
        metadata = list(details.metadata or ())
        metadata.extend(to_metadata())
        traceparent = telemetry.current_traceparent()
        if traceparent:
            metadata.append(("traceparent", traceparent))
        details = grpc.aio.ClientCallDetails(
            method=details.method,
            timeout=DEFAULT_TIMEOUT if details.timeout is None else details.timeout,
            metadata=grpc.aio.Metadata(*metadata),
            credentials=details.credentials,
            wait_for_ready=details.wait_for_ready,
        )
        try:
            call = await continuation(details, request)
            return await call
        except grpc.aio.AioRpcError as exc:
            raise self.error(exc) from None

    def error(self, exc: grpc.aio.AioRpcError) -> PlumblineError:
        """The domain error a failed call stands for."""
        if exc.code() == grpc.StatusCode.UNAVAILABLE:
            return Unavailable(f"The {self.service} service is unavailable; try again shortly.")
        return from_grpc(exc.code(), exc.details() or "")


def connect(service: str, address: str) -> grpc.aio.Channel:
    """An insecure channel (the mesh or network policy secures the pod network)."""
    return grpc.aio.insecure_channel(
        address,
        options=[
            ("grpc.keepalive_time_ms", 30_000),
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ],
        interceptors=[ClientInterceptor(service)],
    )


async def wait_ready(channel: grpc.aio.Channel, what: str, timeout: float) -> None:
    """Waits until the gRPC health of the process behind ``channel`` says SERVING.

    ``what`` names it in the error ("the items service at 10.0.0.7:9090").
    """
    stub = health_pb2_grpc.HealthStub(channel)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: Exception | None = None
    while loop.time() < deadline:
        try:
            reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1.0)
            if reply.status == health_pb2.HealthCheckResponse.SERVING:
                return
        except PlumblineError as exc:
            last = exc
        await asyncio.sleep(0.1)
    raise Unavailable(f"{what} is not ready ({last})")
