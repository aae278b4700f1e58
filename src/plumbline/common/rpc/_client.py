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
import logging
import math
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, TypeVar

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from plumbline.common import telemetry
from plumbline.common.context import to_metadata
from plumbline.common.errors import Internal, PlumblineError, Unavailable, from_grpc
from plumbline.common.rpc._address import ROUND_ROBIN, target_of

log = logging.getLogger(__name__)

#: The deadline of a call that sets none (``Settings.grpc_timeout`` by default).
DEFAULT_TIMEOUT = 30.0

#: The timeout a call passes for no deadline at all: a transfer's, whose caller ends it
#: when its pieces stop coming (``plumbline.gateway.uploads.progressing``).
NO_DEADLINE = math.inf

#: The message limit when none is given (``Settings.grpc_max_message_bytes`` by default).
MAX_MESSAGE = 64 * 1024 * 1024

Request = TypeVar("Request")
Response = TypeVar("Response")


class _Context:
    """Context out as metadata, status codes back as domain errors."""

    def __init__(
        self, service: str, max_message: int = MAX_MESSAGE, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        self.service = service
        self.max_message = max_message
        self.timeout = timeout

    def outgoing(
        self, timeout: float | None, metadata: Iterable[tuple[str, str | bytes]] | None
    ) -> tuple[float | None, list[tuple[str, str | bytes]]]:
        """A call's deadline in seconds (None for none) and its metadata as they go out:
        the default deadline for a call that sets none, the caller's context added. The
        in-process path (``_inproc``) sends the same."""
        seconds = self.timeout if timeout is None else timeout
        sent = list(metadata or ())
        sent.extend(to_metadata())
        traceparent = telemetry.current_traceparent()
        if traceparent:
            sent.append(("traceparent", traceparent))
        return (None if seconds == NO_DEADLINE else seconds), sent

    def _details(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        timeout, metadata = self.outgoing(details.timeout, details.metadata)
        return grpc.aio.ClientCallDetails(
            method=details.method,
            timeout=timeout,
            metadata=grpc.aio.Metadata(*metadata),
            credentials=details.credentials,
            wait_for_ready=details.wait_for_ready,
        )

    def error(self, exc: grpc.aio.AioRpcError) -> PlumblineError:
        """The domain error a failed call stands for."""
        return self.failure(exc.code(), exc.details() or "")

    def failure(self, code: grpc.StatusCode, details: str) -> PlumblineError:
        """The domain error a call that ended with ``code`` and ``details`` stands for."""
        if code == grpc.StatusCode.UNAVAILABLE or _connection_lost(code, details):
            return Unavailable(f"The {self.service} service is unavailable; try again shortly.")
        if code == grpc.StatusCode.RESOURCE_EXHAUSTED and "larger than max" in details:
            # gRPC's own size check ("Received/Sent message larger than max (n vs. m)")
            # shares RESOURCE_EXHAUSTED with throttling; it is no reason to retry.
            log.warning("%s: %s (limit here %d bytes)", self.service, details, self.max_message)
            return Internal(
                f"A message to or from the {self.service} service is larger than the "
                "services accept; ask for fewer records (a smaller maxResults)."
            )
        error = from_grpc(code, details)
        if error.grpc_code == grpc.StatusCode.INTERNAL:  # what the caller will see as 500
            log.warning("the %s service's call ended %s: %s", self.service, code.name, details)
        return error


class ClientInterceptor(_Context, grpc.aio.UnaryUnaryClientInterceptor):
    """The context on single-request calls (grpc.aio files an interceptor under one kind
    only, so each kind of call has its own class)."""

    async def intercept_unary_unary(
        self,
        continuation: Callable[
            [grpc.aio.ClientCallDetails, Request],
            Awaitable[grpc.aio.UnaryUnaryCall[Request, Response]],
        ],
        details: grpc.aio.ClientCallDetails,
        request: Request,
    ) -> Response | grpc.aio.UnaryUnaryCall[Request, Response]:
        try:
            call = await continuation(self._details(details), request)
            return await call
        except grpc.aio.AioRpcError as exc:
            raise self.error(exc) from None


class StreamingClientInterceptor(_Context, grpc.aio.StreamUnaryClientInterceptor):
    """The context on client-streamed calls."""

    async def intercept_stream_unary(
        self,
        continuation: Callable[
            [grpc.aio.ClientCallDetails, Any],
            Awaitable[grpc.aio.StreamUnaryCall[Request, Response]],
        ],
        details: grpc.aio.ClientCallDetails,
        request_iterator: Any,
    ) -> Response | grpc.aio.StreamUnaryCall[Request, Response]:
        # grpc.aio awaits what a stream interceptor returns: the call itself, awaited
        # here first so that its failure becomes the domain error.
        call = await continuation(self._details(details), request_iterator)
        try:
            await call
        except grpc.aio.AioRpcError as exc:
            raise self.error(exc) from None
        except asyncio.CancelledError:
            # grpc.aio cancels the call when writing a message fails, even when the
            # server had already answered: that answer, if there was one, is the error.
            task = asyncio.current_task()
            if task is None or task.cancelling() or not call.done():
                raise
            code = await call.code()
            if code in (grpc.StatusCode.OK, grpc.StatusCode.CANCELLED):
                raise
            raise self.failure(code, await call.details() or "") from None
        return call


class ServerStreamingClientInterceptor(_Context, grpc.aio.UnaryStreamClientInterceptor):
    """The context on server-streamed calls; a failure, before or amid the messages,
    raises the domain error from the iteration."""

    async def intercept_unary_stream(
        self,
        continuation: Callable[
            [grpc.aio.ClientCallDetails, Request],
            Awaitable[grpc.aio.UnaryStreamCall[Request, Response]],
        ],
        details: grpc.aio.ClientCallDetails,
        request: Request,
    ) -> AsyncIterator[Response]:
        call = await continuation(self._details(details), request)
        return self._messages(call)

    async def _messages(
        self, call: grpc.aio.UnaryStreamCall[Request, Response]
    ) -> AsyncIterator[Response]:
        try:
            async for message in call:
                yield message
        except grpc.aio.AioRpcError as exc:
            raise self.error(exc) from None
        finally:
            call.cancel()


#: What gRPC's transport says, as INTERNAL or UNKNOWN, when the connection to the service
#: broke mid-call (its process died or was cut off): the service's own failures never
#: read so ("The server could not complete the request."). "Internal error from Core" is
#: the C core's word for a message it could not send on a stream that is gone.
_CONNECTION_LOST = re.compile(
    r"Stream removed|RST_STREAM|Socket closed|Connection reset|Broken pipe|GOAWAY"
    r"|Transport closed|Connection lost|Internal error from Core",
    re.IGNORECASE,
)


def _connection_lost(code: grpc.StatusCode, details: str) -> bool:
    """Whether a call ended because its connection broke, not by the service's answer: a
    reason to try again (503), not a server error. A call cancelled from the other end
    (this side's own cancelling surfaces as ``asyncio.CancelledError``, not a status) is
    one too: a service that went away mid-stream can end it so."""
    if code == grpc.StatusCode.CANCELLED:
        return True
    lost = code in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)
    return lost and _CONNECTION_LOST.search(details) is not None


def connect(
    service: str, address: str, max_message: int = MAX_MESSAGE, timeout: float = DEFAULT_TIMEOUT
) -> grpc.aio.Channel:
    """An insecure channel (the mesh or network policy secures the pod network); a call
    that sets no deadline gets ``timeout`` seconds.

    ``address`` is one ``host:port``, a comma list of IP addresses or ``dns:///name:port``;
    the last two balance calls round robin over every address (see ``_address``).
    InvalidArgument when it is none of these.
    """
    target = target_of(service, address)
    options: list[tuple[str, str | int]] = [
        ("grpc.keepalive_time_ms", 30_000),
        # Reconnect soon after a peer comes (back): gRPC's default backoff grows to two
        # minutes, and a call made during it fails at once. Pods start in any order.
        ("grpc.initial_reconnect_backoff_ms", 100),
        ("grpc.min_reconnect_backoff_ms", 100),
        ("grpc.max_reconnect_backoff_ms", 2_000),
        ("grpc.max_receive_message_length", max_message),
        ("grpc.max_send_message_length", max_message),
    ]
    if target.round_robin:
        options.append(("grpc.service_config", ROUND_ROBIN))
    return grpc.aio.insecure_channel(
        target.uri,
        options=options,
        interceptors=[
            ClientInterceptor(service, max_message, timeout),
            StreamingClientInterceptor(service, max_message, timeout),
            ServerStreamingClientInterceptor(service, max_message, timeout),
        ],
    )


async def wait_ready(channel: grpc.aio.Channel, what: str, timeout: float) -> None:
    """Waits until the gRPC health of the process behind ``channel`` says SERVING.

    ``what`` names it in the error ("the items service at 10.0.0.7:9090"). On a balanced
    channel each check goes to the next connected address, so this returns once one of
    them serves: the others join the rotation as they connect.
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
