"""Calls between the parts of one process: the same servicers and interceptors, no socket.

In the embedded default every service and the gateway share a process; over loopback
gRPC each call between them would pay for HTTP/2 framing, a socket round trip and the
C core's threads. :class:`InProcessChannel` takes the generated stubs' calls to the
handlers registered on this process's ``GrpcServer`` (which keeps them in its
:class:`InProcessServer` too) and keeps what the network path guarantees:

- the message boundary: requests and responses are serialized and parsed again, so a
  servicer never shares the caller's objects, and each side's size limit applies to the
  serialized size as gRPC applies it;
- the context: the caller's principal, request id and trace go out as the same metadata
  (``ClientInterceptor.outgoing``) and the same server interceptors restore them and turn
  domain errors into status codes;
- the status: the caller gets the domain error the network path gives
  (``ClientInterceptor.failure``), an unexpected exception as Internal;
- the deadline (the same default; none for a transfer) and cancellation: a caller
  cancelled cancels the handler, a handler past its deadline is cancelled;
- the handler runs in a task of its own, in a copy of the context the server started in,
  as grpc's server runs it: what it sets stays its own.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
from collections import deque
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
    Mapping,
    Sequence,
)
from types import TracebackType
from typing import Any, NamedTuple, NoReturn, TypeAlias, cast

import grpc

from plumbline.common.rpc._client import DEFAULT_TIMEOUT, MAX_MESSAGE, ClientInterceptor

log = logging.getLogger(__name__)

Metadata: TypeAlias = tuple[tuple[str, str | bytes], ...]
Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"

#: What ``context.peer()`` answers in a call from this process.
PEER = "in-process"

#: Messages a stream holds between its ends before the writer waits, as HTTP/2's flow
#: control holds a writer back: enough that reading and writing overlap.
DEPTH = 2

_END = object()  # a stream's end, after its last message
_CANCELLED = object()  # a stream's end when its call was cancelled


class _Status(Exception):
    """A call that ended with ``code`` (not OK) and ``details``."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(code, details)
        self.code = code
        self.details = details


class _Pipe:
    """A stream's messages from one task to another, at most ``DEPTH`` waiting; its end
    goes in without waiting (a call that ends must not wait on a reader that left)."""

    def __init__(self) -> None:
        self.items: deque[object] = deque()
        self.readable = asyncio.Event()
        self.writable = asyncio.Event()
        self.writable.set()

    async def put(self, item: object) -> None:
        while len(self.items) >= DEPTH:
            self.writable.clear()
            await self.writable.wait()
        self.end(item)

    def end(self, item: object) -> None:
        self.items.append(item)
        self.readable.set()

    async def get(self) -> object:
        while not self.items:
            self.readable.clear()
            await self.readable.wait()
        self.writable.set()
        return self.items.popleft()


class _CallDetails(NamedTuple):
    """What the server interceptors are given (``grpc.HandlerCallDetails``)."""

    method: str
    invocation_metadata: Metadata


class InProcessServer:
    """The handlers of this process's gRPC server, for callers in the same process.

    The generated ``add_..._to_server`` functions register with it as with grpc's server
    (``GrpcServer.add`` calls them on both). A call passes ``interceptors`` as grpc's
    server passes them, first given first; calls are refused (UNAVAILABLE) before
    :meth:`start` and after :meth:`stop`, as a server that does not listen refuses them.
    """

    def __init__(
        self, interceptors: Sequence[grpc.aio.ServerInterceptor], max_message: int = MAX_MESSAGE
    ) -> None:
        self.max_message = max_message
        self.methods: dict[str, Handler] = {}
        self.generic: list[grpc.GenericRpcHandler] = []
        self.calls: set[_Call] = set()
        self.context: contextvars.Context | None = None
        find: Callable[[Any], Awaitable[Handler | None]] = self._find
        for interceptor in reversed(interceptors):
            find = functools.partial(interceptor.intercept_service, find)
        self.handler_for = find

    def add_generic_rpc_handlers(self, handlers: Iterable[grpc.GenericRpcHandler]) -> None:
        self.generic.extend(handlers)

    def add_registered_method_handlers(self, service: str, handlers: Mapping[str, Handler]) -> None:
        for name, handler in handlers.items():
            self.methods[f"/{service}/{name}"] = handler

    async def _find(self, details: grpc.HandlerCallDetails) -> Handler | None:
        handler = self.methods.get(details.method)
        if handler is not None:
            return handler
        for generic in self.generic:
            handler = generic.service(details)
            if handler is not None:
                return handler
        return None

    def start(self) -> None:
        """Serves from now on; each handler runs in a copy of the current context, as
        grpc's server runs them in copies of the context it started in."""
        self.context = contextvars.copy_context()

    async def stop(self, grace: float) -> None:
        """Refuses new calls; those in flight get ``grace`` seconds, then end UNAVAILABLE."""
        self.context = None
        if self.calls:
            await asyncio.wait([call.task for call in self.calls], timeout=grace)
        for call in list(self.calls):
            call.fail(grpc.StatusCode.UNAVAILABLE, "The server is stopping.")


class _Call:
    """One in-process call as its servicer sees it: its task, how it ended, and the
    context its handler gets (what our servicers, the server interceptor and grpc's health
    servicer use of ``grpc.aio.ServicerContext``)."""

    def __init__(
        self,
        server: InProcessServer,
        caller: object,
        method: str,
        metadata: Metadata,
        deadline: float | None,
    ) -> None:
        self.server = server
        self.caller = caller
        self.method = method
        self.metadata = metadata
        self.deadline = deadline
        self.task: asyncio.Task[Any] = cast(asyncio.Task[Any], None)
        #: Why the call ended when the handler did not decide it (its deadline, a size
        #: limit, the server stopping): it cancels the handler and is the answer.
        self.failure: _Status | None = None
        #: A client-streamed call's requests, a server-streamed call's responses.
        self.requests: _Pipe | None = None
        self.responses: _Pipe | None = None
        self.parse: Callable[[bytes], Any] | None = None
        self.serialize: Callable[[Any], bytes] | None = None
        self._code: grpc.StatusCode | None = None
        self._details = ""
        self._callbacks: list[Callable[[Any], None]] = []
        self._timer: asyncio.TimerHandle | None = None

    def start(self, run: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Runs ``run(*args)`` (the servicer's side of the call) in a task of its own;
        UNAVAILABLE when the server is not serving, as when nothing listens."""
        context = self.server.context
        if context is None:
            raise _Status(grpc.StatusCode.UNAVAILABLE, "The server is not serving.")
        loop = asyncio.get_running_loop()
        self.task = loop.create_task(
            run(*args), name=f"in-process {self.method}", context=context.copy()
        )
        if self.deadline is not None:
            deadline = (grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded")
            self._timer = loop.call_at(self.deadline, self.fail, *deadline)
        self.server.calls.add(self)
        self.task.add_done_callback(self._ended)

    def _ended(self, _task: asyncio.Task[Any]) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self.server.calls.discard(self)
        for callback in self._callbacks:
            callback(self)

    def fail(self, code: grpc.StatusCode, details: str) -> None:
        """Ends the call with ``code``, cancelling its handler (unless it has ended)."""
        if self.failure is None and not self.task.done():
            self.failure = _Status(code, details)
            if self.task is not asyncio.current_task():
                self.task.cancel()

    # The servicer's side, run in the call's task.

    async def unary(self, payload: bytes) -> bytes:
        """The unary-unary call: the serialized response."""
        try:
            handler = await self._handler()
            behaviour = cast(Callable[[Any, Any], Awaitable[Any]], handler.unary_unary)
            self._check_kind(behaviour, "unary-unary")
            response = await behaviour(self._parsed(payload), self)
            return self._answer(response)
        except BaseException as exc:
            raise self._outcome(exc) from None

    async def client_streamed(self) -> bytes:
        """The stream-unary call: the serialized response to ``requests``'s messages."""
        try:
            handler = await self._handler()
            behaviour = cast(Callable[[Any, Any], Awaitable[Any]], handler.stream_unary)
            self._check_kind(behaviour, "stream-unary")
            response = await behaviour(self._read_all(), self)
            return self._answer(response)
        except BaseException as exc:
            raise self._outcome(exc) from None

    async def server_streamed(self, payload: bytes) -> None:
        """The unary-stream call: the serialized messages into ``responses``, then the
        stream's end (``_END``, the failure, or ``_CANCELLED``)."""
        end: object = _END
        try:
            handler = await self._handler()
            behaviour = cast(Callable[[Any, Any], Any], handler.unary_stream)
            self._check_kind(behaviour, "unary-stream")
            produced = behaviour(self._parsed(payload), self)
            if hasattr(produced, "aclose"):
                try:
                    async for message in produced:
                        await self.write(message)
                finally:
                    # Now, not when collected: the server interceptor's context ends
                    # with it (a reader that left, a deadline, cancel it mid-way).
                    await produced.aclose()
            else:  # a handler that writes with context.write (grpc's health Watch)
                await produced
            self._check_code()
        except BaseException as exc:
            outcome = self._outcome(exc)
            end = _CANCELLED if isinstance(outcome, asyncio.CancelledError) else outcome
            if not isinstance(outcome, (_Status, asyncio.CancelledError)):
                raise
        finally:
            cast(_Pipe, self.responses).end(end)

    async def _handler(self) -> Handler:
        handler = await self.server.handler_for(_CallDetails(self.method, self.metadata))
        if handler is None:
            raise _Status(grpc.StatusCode.UNIMPLEMENTED, "Method not found!")
        self.parse = handler.request_deserializer
        self.serialize = handler.response_serializer
        return handler

    def _check_kind(self, behaviour: object, kind: str) -> None:
        if behaviour is None:
            raise _Status(grpc.StatusCode.UNIMPLEMENTED, f"{self.method} is not a {kind} method")

    def _parsed(self, payload: bytes) -> Any:
        if len(payload) > self.server.max_message:
            raise _Status(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"Received message larger than max ({len(payload)} vs. {self.server.max_message})",
            )
        return payload if self.parse is None else self.parse(payload)

    def _serialized(self, message: Any) -> bytes:
        data = message if self.serialize is None else self.serialize(message)
        if len(data) > self.server.max_message:
            raise _Status(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"Sent message larger than max ({len(data)} vs. {self.server.max_message})",
            )
        return cast(bytes, data)

    def _check_code(self) -> None:
        """A handler that set a code other than OK and returned ends with that code."""
        if self._code is not None and self._code is not grpc.StatusCode.OK:
            raise _Status(self._code, self._details)

    def _answer(self, response: Any) -> bytes:
        self._check_code()
        return self._serialized(response)

    async def _read_all(self) -> AsyncIterator[Any]:
        while True:
            message = await self.read()
            if message is grpc.aio.EOF:
                return
            yield message

    def _outcome(self, exc: BaseException) -> BaseException:
        """What the caller gets for a handler that raised ``exc``: the failure that ended
        the call first, then the status it aborted with; a cancellation as itself, and
        any other exception as grpc's server reports it (our interceptor leaves none)."""
        if self.failure is not None:
            return self.failure
        if isinstance(exc, grpc.aio.AbortError):
            return _Status(self._code or grpc.StatusCode.UNKNOWN, self._details)
        if isinstance(exc, _Status | asyncio.CancelledError) or not isinstance(exc, Exception):
            return exc
        log.exception("unhandled error in %s", self.method)
        return _Status(grpc.StatusCode.UNKNOWN, f"Unexpected {type(exc)}: {exc}")

    # grpc.aio.ServicerContext, as much of it as the handlers use.

    def invocation_metadata(self) -> Metadata:
        return self.metadata

    async def abort(
        self, code: grpc.StatusCode, details: str = "", trailing_metadata: Metadata = ()
    ) -> NoReturn:
        self._code, self._details = code, details
        raise grpc.aio.AbortError()

    def set_code(self, code: grpc.StatusCode) -> None:
        self._code = code

    def set_details(self, details: str) -> None:
        self._details = details

    def code(self) -> grpc.StatusCode | None:
        return self._code

    def details(self) -> str:
        return self._details

    def set_trailing_metadata(self, trailing_metadata: Metadata) -> None:
        """Nothing reads trailing metadata in this process."""

    async def send_initial_metadata(self, initial_metadata: Metadata) -> None:
        """Nothing reads initial metadata in this process."""

    def time_remaining(self) -> float | None:
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - asyncio.get_running_loop().time())

    def peer(self) -> str:
        return PEER

    def cancelled(self) -> bool:
        return self.task.cancelling() > 0

    def done(self) -> bool:
        return self.task.done()

    def add_done_callback(self, callback: Callable[[Any], None]) -> None:
        self._callbacks.append(callback)

    async def read(self) -> Any:
        """The next request message of a client-streamed call, or ``grpc.aio.EOF``."""
        if self.requests is None:
            raise grpc.aio.UsageError("read() is for client-streamed calls")
        item = await self.requests.get()
        if item is _END:
            return grpc.aio.EOF
        try:
            return self._parsed(cast(bytes, item))
        except _Status as status:
            # Raised where the handler reads (perhaps in a task of its own); the failure
            # cancels the handler and is the answer.
            self.fail(status.code, status.details)
            raise asyncio.CancelledError from None

    async def write(self, message: Any) -> None:
        """Sends one message of a server-streamed call."""
        if self.responses is None:
            raise grpc.aio.UsageError("write() is for server-streamed calls")
        try:
            data = self._serialized(message)
        except _Status as status:
            self.fail(status.code, status.details)
            raise asyncio.CancelledError from None
        await self.responses.put(data)


class InProcessChannel(grpc.aio.Channel):
    """A channel to a service of this process that the generated stubs take like grpc's.

    Its calls are awaited (unary and client-streamed ones) or iterated (server-streamed
    ones); the call objects' other methods are not offered, as nothing here uses them.
    """

    def __init__(
        self,
        server: InProcessServer,
        service: str,
        max_message: int = MAX_MESSAGE,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.server = server
        self.service = service
        self.max_message = max_message
        #: The network path's interceptor: its metadata, deadline and error mapping.
        self.client = ClientInterceptor(service, max_message, timeout)
        self.closed = asyncio.Event()

    def unary_unary(
        self,
        method: str,
        request_serializer: Callable[[Any], bytes] | None = None,
        response_deserializer: Callable[[bytes], Any] | None = None,
        _registered_method: bool | None = False,
    ) -> grpc.aio.UnaryUnaryMultiCallable[Any, Any]:
        call = _UnaryUnary(self, method, request_serializer, response_deserializer)
        return cast(grpc.aio.UnaryUnaryMultiCallable[Any, Any], call)

    def stream_unary(
        self,
        method: str,
        request_serializer: Callable[[Any], bytes] | None = None,
        response_deserializer: Callable[[bytes], Any] | None = None,
        _registered_method: bool | None = False,
    ) -> grpc.aio.StreamUnaryMultiCallable[Any, Any]:
        call = _StreamUnary(self, method, request_serializer, response_deserializer)
        return cast(grpc.aio.StreamUnaryMultiCallable[Any, Any], call)

    def unary_stream(
        self,
        method: str,
        request_serializer: Callable[[Any], bytes] | None = None,
        response_deserializer: Callable[[bytes], Any] | None = None,
        _registered_method: bool | None = False,
    ) -> grpc.aio.UnaryStreamMultiCallable[Any, Any]:
        call = _UnaryStream(self, method, request_serializer, response_deserializer)
        return cast(grpc.aio.UnaryStreamMultiCallable[Any, Any], call)

    def stream_stream(
        self,
        method: str,
        request_serializer: Callable[[Any], bytes] | None = None,
        response_deserializer: Callable[[bytes], Any] | None = None,
        _registered_method: bool | None = False,
    ) -> grpc.aio.StreamStreamMultiCallable[Any, Any]:
        raise NotImplementedError(f"{method}: no service here streams both ways")

    async def close(self, grace: float | None = None) -> None:
        """Refuses new calls and cancels those in flight (after ``grace`` seconds)."""
        self.closed.set()
        mine = [call.task for call in self.server.calls if call.caller is self]
        if mine and grace:
            await asyncio.wait(mine, timeout=grace)
        for task in mine:
            task.cancel()

    def get_state(self, try_to_connect: bool = False) -> grpc.ChannelConnectivity:
        if self.closed.is_set():
            return grpc.ChannelConnectivity.SHUTDOWN
        return grpc.ChannelConnectivity.READY

    async def wait_for_state_change(self, last_observed_state: grpc.ChannelConnectivity) -> None:
        if self.get_state() is last_observed_state:
            await self.closed.wait()

    async def channel_ready(self) -> None:
        """Ready from the start: there is no connection to make."""

    async def __aenter__(self) -> InProcessChannel:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.close()

    # What the calls share.

    def open(self, method: str, timeout: float | None, metadata: Metadata | None) -> _Call:
        """A call, with the deadline and the caller's context as the network path sends
        them (when the stub is called, as there)."""
        if self.closed.is_set():
            raise grpc.aio.UsageError("Channel is closed.")
        seconds, sent = self.client.outgoing(timeout, metadata)
        deadline = None if seconds is None else asyncio.get_running_loop().time() + seconds
        return _Call(self.server, self, method, tuple(sent), deadline)

    def sent(self, serializer: Callable[[Any], bytes] | None, message: Any) -> bytes:
        data = cast(bytes, message if serializer is None else serializer(message))
        if len(data) > self.max_message:
            details = f"Sent message larger than max ({len(data)} vs. {self.max_message})"
            raise _Status(grpc.StatusCode.RESOURCE_EXHAUSTED, details)
        return data

    def received(self, deserializer: Callable[[bytes], Any] | None, data: bytes) -> Any:
        if len(data) > self.max_message:
            details = f"Received message larger than max ({len(data)} vs. {self.max_message})"
            raise _Status(grpc.StatusCode.RESOURCE_EXHAUSTED, details)
        return data if deserializer is None else deserializer(data)

    @staticmethod
    async def answer(call: _Call) -> bytes:
        """The call's serialized response. Cancelling the caller cancels the call,
        without waiting for its handler to stop (as over the network)."""
        try:
            return cast(bytes, await asyncio.shield(call.task))
        except asyncio.CancelledError:
            call.task.cancel()
            raise

    def failure(self, status: _Status) -> Exception:
        """The domain error the network path gives for ``status``."""
        return self.client.failure(status.code, status.details)


class _Method:
    """One method of an :class:`InProcessChannel`, as its stub holds it."""

    def __init__(
        self,
        channel: InProcessChannel,
        method: str,
        serializer: Callable[[Any], bytes] | None,
        deserializer: Callable[[bytes], Any] | None,
    ) -> None:
        self.channel = channel
        self.method = method
        self.serializer = serializer
        self.deserializer = deserializer


class _UnaryUnary(_Method):
    def __call__(
        self,
        request: Any,
        *,
        timeout: float | None = None,
        metadata: Metadata | None = None,
        **_options: Any,
    ) -> Awaitable[Any]:
        return self._call(self.channel.open(self.method, timeout, metadata), request)

    async def _call(self, call: _Call, request: Any) -> Any:
        channel = self.channel
        try:
            call.start(call.unary, channel.sent(self.serializer, request))
            return channel.received(self.deserializer, await channel.answer(call))
        except _Status as status:
            raise channel.failure(status) from None


class _StreamUnary(_Method):
    def __call__(
        self,
        request_iterator: AsyncIterable[Any] | Iterable[Any],
        timeout: float | None = None,
        metadata: Metadata | None = None,
        **_options: Any,
    ) -> Awaitable[Any]:
        return self._call(self.channel.open(self.method, timeout, metadata), request_iterator)

    async def _call(self, call: _Call, requests: AsyncIterable[Any] | Iterable[Any]) -> Any:
        channel = self.channel
        call.requests = _Pipe()
        try:
            call.start(call.client_streamed)
        except _Status as status:
            raise channel.failure(status) from None
        # Sent from a task of the caller's, as grpc sends them: the handler may stop
        # reading at any message and answer.
        sending = asyncio.create_task(self._send(call, call.requests, requests))
        try:
            return channel.received(self.deserializer, await channel.answer(call))
        except _Status as status:
            raise channel.failure(status) from None
        finally:
            sending.cancel()

    async def _send(
        self, call: _Call, pipe: _Pipe, requests: AsyncIterable[Any] | Iterable[Any]
    ) -> None:
        """The messages into the call; the call cancelled when they fail, as grpc cancels
        it (the caller then sees the cancellation, and knows its own failure)."""
        try:
            async for message in _aiter(requests):
                await pipe.put(self.channel.sent(self.serializer, message))
        except _Status as status:
            call.fail(status.code, status.details)
            return
        except Exception:
            log.debug("the request messages of %s failed", call.method, exc_info=True)
            call.task.cancel()
            return
        pipe.end(_END)


class _UnaryStream(_Method):
    def __call__(
        self,
        request: Any,
        *,
        timeout: float | None = None,
        metadata: Metadata | None = None,
        **_options: Any,
    ) -> AsyncIterator[Any]:
        return self._messages(self.channel.open(self.method, timeout, metadata), request)

    async def _messages(self, call: _Call, request: Any) -> AsyncIterator[Any]:
        channel = self.channel
        pipe = call.responses = _Pipe()
        try:
            call.start(call.server_streamed, channel.sent(self.serializer, request))
        except _Status as status:
            raise channel.failure(status) from None
        try:
            while True:
                item = await pipe.get()
                if item is _END:
                    return
                if item is _CANCELLED:
                    raise asyncio.CancelledError
                if isinstance(item, _Status):
                    raise channel.failure(item)
                try:
                    message = channel.received(self.deserializer, cast(bytes, item))
                except _Status as status:
                    raise channel.failure(status) from None
                yield message
        finally:
            call.task.cancel()


async def _aiter(messages: AsyncIterable[Any] | Iterable[Any]) -> AsyncIterator[Any]:
    if isinstance(messages, AsyncIterable):
        async for message in messages:
            yield message
    else:
        for message in messages:
            yield message
