"""The in-process channel: the network path's cases, called without a socket."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from dataclasses import dataclass
from typing import cast

import grpc
import pytest

from plumbline.api.attachments.v1 import attachments_pb2, attachments_pb2_grpc
from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2, items_pb2_grpc
from plumbline.common import errors
from plumbline.common.context import ORG_ADMIN, Principal, principal_var
from plumbline.common.rpc import (
    NO_DEADLINE,
    Context,
    GrpcServer,
    InProcessChannel,
    wait_ready,
)
from tests.unit.common.rpc.fakes import (
    CRASH,
    DOWNLOAD,
    GENERIC,
    HUGE,
    HUGE_REPLY,
    RAISES,
    SLOW,
    FakeFiles,
    FakeIdSpace,
    calling_as,
)

ALICE = Principal(42, "alice", frozenset({ORG_ADMIN, "USER_ADMIN"}))
TOO_LARGE = (
    "A message to or from the items service is larger than the services accept; "
    "ask for fewer records (a smaller maxResults)."
)


@dataclass
class Rig:
    server: GrpcServer
    channel: InProcessChannel
    client: items_pb2_grpc.IdSpaceAsyncStub
    files: attachments_pb2_grpc.FilesAsyncStub
    servicer: FakeIdSpace
    files_servicer: FakeFiles


async def _rig(
    server_limit: int = 1 << 20, client_limit: int = 1 << 20, servicer: FakeIdSpace | None = None
) -> Rig:
    servicer, files = servicer or FakeIdSpace(), FakeFiles()
    server = GrpcServer("127.0.0.1", 0, max_message=server_limit)
    server.add(items_pb2_grpc.add_IdSpaceServicer_to_server, servicer)
    server.add(attachments_pb2_grpc.add_FilesServicer_to_server, files)
    await server.start()
    await server.set_serving(True)
    channel = InProcessChannel(server.local, "items", max_message=client_limit)
    return Rig(
        server,
        channel,
        items_pb2_grpc.IdSpaceStub(channel),
        attachments_pb2_grpc.FilesStub(channel),
        servicer,
        files,
    )


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    made = await _rig()
    try:
        yield made
    finally:
        await made.channel.close()
        await made.server.stop(0)


async def _slow_call(rig: Rig) -> items_pb2.IdOwner:
    """A call that is answered only when it is cancelled."""
    return await rig.client.GetIdOwner(core_pb2.Id(id=SLOW))


@pytest.fixture
def as_alice() -> Iterator[None]:
    with calling_as(ALICE, "req-1"):
        yield


async def test_a_call_succeeds(rig: Rig) -> None:
    reply = await rig.client.GetIdOwner(core_pb2.Id(id=1))
    assert reply.owner == "items"


async def test_the_servicer_gets_a_copy_of_the_request_not_the_callers_message() -> None:
    seen: list[core_pb2.Id] = []

    class Keeping(FakeIdSpace):
        async def GetIdOwner(self, request: core_pb2.Id, context: Context) -> items_pb2.IdOwner:
            seen.append(request)
            request.id = 99
            return items_pb2.IdOwner(owner="items")

    rig = await _rig(servicer=Keeping())
    sent = core_pb2.Id(id=1)
    try:
        await rig.client.GetIdOwner(sent)
    finally:
        await rig.server.stop(0)
    assert seen[0] is not sent
    assert sent.id == 1


async def test_the_callers_principal_and_request_id_arrive(rig: Rig, as_alice: None) -> None:
    await rig.client.GetIdOwner(core_pb2.Id(id=1))
    assert rig.servicer.seen == [(ALICE, "req-1")]


async def test_non_ascii_usernames_and_request_ids_arrive_intact(rig: Rig) -> None:
    principal = Principal(7, "jürgen.müller", frozenset())
    with calling_as(principal, "abc é 100%"):
        await rig.client.GetIdOwner(core_pb2.Id(id=1))
    assert rig.servicer.seen == [(principal, "abc é 100%")]


async def test_without_a_principal_none_arrives(rig: Rig) -> None:
    assert principal_var.get() is None
    await rig.client.GetIdOwner(core_pb2.Id(id=1))
    assert rig.servicer.seen == [(None, "-")]


async def test_the_servicer_context_does_not_leak_between_calls(rig: Rig, as_alice: None) -> None:
    await rig.client.GetIdOwner(core_pb2.Id(id=1))
    with calling_as(None, "req-2"):
        await rig.client.GetIdOwner(core_pb2.Id(id=1))
    assert rig.servicer.seen[1] == (None, "req-2")


async def test_what_the_handler_sets_in_its_context_stays_its_own() -> None:
    """The handler runs in a context of its own, as grpc's server runs it: the server
    interceptor's principal, and anything else it sets, never reach the caller."""
    mark: contextvars.ContextVar[str] = contextvars.ContextVar("mark", default="caller's")

    class Marking(FakeIdSpace):
        async def GetIdOwner(self, request: core_pb2.Id, context: Context) -> items_pb2.IdOwner:
            mark.set("handler's")
            principal_var.set(None)
            return items_pb2.IdOwner(owner="items")

    rig = await _rig(servicer=Marking())
    try:
        with calling_as(ALICE, "req-1"):
            await rig.client.GetIdOwner(core_pb2.Id(id=1))
            assert principal_var.get() == ALICE
    finally:
        await rig.server.stop(0)
    assert mark.get() == "caller's"


@pytest.mark.parametrize(
    "request_id",
    [i for i, e in RAISES.items() if e is not errors.Unavailable],
    ids=lambda i: RAISES[i].__name__,
)
async def test_domain_errors_arrive_as_themselves(rig: Rig, request_id: int) -> None:
    with pytest.raises(errors.PlumblineError) as info:
        await rig.client.GetIdOwner(core_pb2.Id(id=request_id))
    assert type(info.value) is RAISES[request_id]
    assert info.value.message == f"Failure number {request_id}."


async def test_unavailable_arrives_as_unavailable(rig: Rig) -> None:
    [request_id] = [i for i, e in RAISES.items() if e is errors.Unavailable]
    with pytest.raises(errors.Unavailable) as info:
        await rig.client.GetIdOwner(core_pb2.Id(id=request_id))
    assert info.value.message == "The items service is unavailable; try again shortly."


async def test_an_unexpected_exception_arrives_as_internal_without_details(rig: Rig) -> None:
    with pytest.raises(errors.Internal) as info:
        await rig.client.GetIdOwner(core_pb2.Id(id=CRASH))
    assert info.value.message == GENERIC
    assert "hunter2" not in str(info.value)


async def test_a_method_the_server_lacks_is_unimplemented(rig: Rig) -> None:
    projects = items_pb2_grpc.ProjectsStub(rig.channel)
    with pytest.raises(errors.MethodNotAllowed, match="Method not found"):
        await projects.GetProjects(core_pb2.IdList(ids=[1]))


async def test_the_deadline_is_the_default_timeout_or_the_calls_own(rig: Rig) -> None:
    await rig.client.GetIdOwner(core_pb2.Id(id=1))
    await rig.client.GetIdOwner(core_pb2.Id(id=1), timeout=2.0)
    await rig.client.GetIdOwner(core_pb2.Id(id=1), timeout=NO_DEADLINE)
    default, own, none = rig.servicer.remaining
    assert default is not None
    assert 29.0 < default <= 30.0
    assert own is not None
    assert 1.0 < own <= 2.0
    assert none is None


async def test_a_call_past_its_deadline_is_cancelled_and_unavailable(rig: Rig) -> None:
    async with asyncio.timeout(5):  # a deadline not kept fails the test, not hangs it
        with pytest.raises(errors.Unavailable, match="Deadline Exceeded"):
            await rig.client.GetIdOwner(core_pb2.Id(id=SLOW), timeout=0.05)
    assert rig.servicer.slow.cancelled.is_set()


async def test_cancelling_the_caller_cancels_the_handler(rig: Rig) -> None:
    call = asyncio.create_task(_slow_call(rig))
    await rig.servicer.slow.started.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    async with asyncio.timeout(5):
        await rig.servicer.slow.cancelled.wait()


async def test_a_server_not_serving_is_unavailable() -> None:
    server = GrpcServer("127.0.0.1", 0)
    server.add(items_pb2_grpc.add_IdSpaceServicer_to_server, FakeIdSpace())
    client = items_pb2_grpc.IdSpaceStub(InProcessChannel(server.local, "items"))
    with pytest.raises(errors.Unavailable, match="items service is unavailable"):
        await client.GetIdOwner(core_pb2.Id(id=1))
    await server.start()
    assert (await client.GetIdOwner(core_pb2.Id(id=1))).owner == "items"
    await server.stop(0)
    with pytest.raises(errors.Unavailable, match="items service is unavailable"):
        await client.GetIdOwner(core_pb2.Id(id=1))


async def test_stopping_the_server_ends_calls_in_flight_as_unavailable(rig: Rig) -> None:
    call = asyncio.create_task(_slow_call(rig))
    await rig.servicer.slow.started.wait()
    await rig.server.stop(0.01)
    with pytest.raises(errors.Unavailable, match="items service is unavailable"):
        await call
    assert rig.servicer.slow.cancelled.is_set()


async def test_closing_the_channel_cancels_its_calls_and_refuses_new_ones(rig: Rig) -> None:
    call = asyncio.create_task(_slow_call(rig))
    await rig.servicer.slow.started.wait()
    await rig.channel.close()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert rig.channel.get_state() is grpc.ChannelConnectivity.SHUTDOWN
    with pytest.raises(grpc.aio.UsageError, match="closed"):
        await rig.client.GetIdOwner(core_pb2.Id(id=1))


async def test_wait_ready_follows_set_serving(rig: Rig) -> None:
    await rig.server.set_serving(False)
    with pytest.raises(errors.Unavailable, match="not ready"):
        await wait_ready(rig.channel, "items", 0.3)
    await rig.server.set_serving(True)
    await wait_ready(rig.channel, "items", 2)


@pytest.mark.parametrize(
    ("server_limit", "client_limit", "call"),
    [
        (4096, 1 << 20, "big request"),  # the server refuses to receive it
        (1 << 20, 4096, "big request"),  # the client refuses to send it
        (1 << 20, 4096, "big reply"),  # the client refuses to receive it
        (4096, 1 << 20, "big reply"),  # the server refuses to send it
    ],
)
async def test_an_oversize_message_is_not_throttling(
    server_limit: int, client_limit: int, call: str
) -> None:
    """The same limits as over the network, on the serialized size."""
    rig = await _rig(server_limit, client_limit)

    async def too_big() -> None:
        if call == "big request":
            await rig.client.AllocateIdBlock(items_pb2.AllocateIdBlockRequest(owner=" " * 8192))
        else:
            await rig.client.GetIdOwner(core_pb2.Id(id=HUGE))

    try:
        assert (await rig.client.GetIdOwner(core_pb2.Id(id=1))).owner == "items"
        with pytest.raises(errors.PlumblineError) as info:
            await too_big()
        assert type(info.value) is errors.Internal
        assert info.value.message == TOO_LARGE
    finally:
        await rig.server.stop(0)


async def test_messages_up_to_the_limit_pass() -> None:
    rig = await _rig(HUGE_REPLY * 2, HUGE_REPLY * 2)
    try:
        assert len((await rig.client.GetIdOwner(core_pb2.Id(id=HUGE))).owner) == HUGE_REPLY
        await rig.client.AllocateIdBlock(items_pb2.AllocateIdBlockRequest(owner=" " * HUGE_REPLY))
    finally:
        await rig.server.stop(0)


# Client-streamed calls (uploads, JUnit reports).


def _upload(attachment: int, *chunks: bytes) -> list[attachments_pb2.UploadChunk]:
    header = attachments_pb2.UploadHeader(attachment=attachment, file_name="a.txt")
    return [
        attachments_pb2.UploadChunk(header=header),
        *(attachments_pb2.UploadChunk(data=c) for c in chunks),
    ]


async def _sent(
    messages: list[attachments_pb2.UploadChunk],
) -> AsyncIterator[attachments_pb2.UploadChunk]:
    for message in messages:
        yield message


async def test_an_upload_streams_every_message_and_gets_the_answer(
    rig: Rig, as_alice: None
) -> None:
    chunks = [bytes([n]) * 1000 for n in range(10)]
    info = await rig.files.Upload(_sent(_upload(1, *chunks)))
    assert (info.file_name, info.size) == ("a.txt", 10_000)
    assert rig.files_servicer.received == chunks
    assert rig.files_servicer.seen == [(ALICE, "req-1")]


async def test_an_upload_takes_a_plain_iterable_too(rig: Rig) -> None:
    info = await rig.files.Upload(iter(_upload(1, b"abc")))
    assert info.size == 3


async def test_a_domain_error_amid_an_upload_arrives_as_itself(rig: Rig) -> None:
    [not_found] = [i for i, e in RAISES.items() if e is errors.NotFound]
    with pytest.raises(errors.NotFound, match=f"Failure number {not_found}"):
        await rig.files.Upload(_sent(_upload(not_found, b"abc", b"def")))


async def test_a_failing_request_stream_cancels_the_upload(rig: Rig) -> None:
    """As grpc does: the caller sees the cancellation (and knows its own failure,
    ``gateway.uploads.send_stream``), the servicer stops reading."""

    async def failing() -> AsyncIterator[attachments_pb2.UploadChunk]:
        for message in _upload(1, b"abc"):
            yield message
        raise errors.TooLarge("A file must be at most 3 bytes.")

    with pytest.raises(asyncio.CancelledError):
        await rig.files.Upload(failing(), timeout=NO_DEADLINE)
    async with asyncio.timeout(5):
        await rig.files_servicer.slow.cancelled.wait()


@pytest.mark.parametrize(("server_limit", "client_limit"), [(4096, 1 << 20), (1 << 20, 4096)])
async def test_an_oversize_upload_message_is_not_throttling(
    server_limit: int, client_limit: int
) -> None:
    rig = await _rig(server_limit, client_limit)
    try:
        with pytest.raises(errors.Internal) as info:
            await rig.files.Upload(_sent(_upload(1, b"x" * 8192)))
        assert info.value.message == TOO_LARGE
        assert rig.files_servicer.slow.cancelled.is_set()
    finally:
        await rig.server.stop(0)


# Server-streamed calls (downloads).


async def test_a_download_streams_every_message(rig: Rig, as_alice: None) -> None:
    messages = [m async for m in rig.files.Download(attachments_pb2.DownloadRequest())]
    assert messages[0].served.end == 15
    assert [m.data for m in messages[1:]] == DOWNLOAD
    assert rig.files_servicer.seen == [(ALICE, "req-1")]


async def test_a_domain_error_amid_a_download_arrives_after_the_messages_before_it(
    rig: Rig,
) -> None:
    [not_found] = [i for i, e in RAISES.items() if e is errors.NotFound]
    received = []

    async def read() -> None:
        request = attachments_pb2.DownloadRequest(attachment=not_found)
        async for message in rig.files.Download(request):
            received.append(message)

    with pytest.raises(errors.NotFound, match=f"Failure number {not_found}"):
        await read()
    assert [m.WhichOneof("part") for m in received] == ["served", "data"]


async def test_a_reader_that_stops_cancels_the_download(rig: Rig) -> None:
    messages = aiter(rig.files.Download(attachments_pb2.DownloadRequest(attachment=SLOW)))
    assert (await anext(messages)).WhichOneof("part") == "served"
    assert (await anext(messages)).data == DOWNLOAD[0]
    await rig.files_servicer.slow.started.wait()
    await cast(AsyncGenerator[object, None], messages).aclose()  # an in-process call is one
    async with asyncio.timeout(5):
        await rig.files_servicer.slow.cancelled.wait()


async def test_a_download_past_its_deadline_is_unavailable(rig: Rig) -> None:
    request = attachments_pb2.DownloadRequest(attachment=SLOW)

    async def read() -> None:
        async for _message in rig.files.Download(request, timeout=0.05):
            pass

    async with asyncio.timeout(5):
        with pytest.raises(errors.Unavailable, match="Deadline Exceeded"):
            await read()
    assert rig.files_servicer.slow.cancelled.is_set()


async def test_an_oversize_download_message_is_not_throttling() -> None:
    # The first message (what is served) takes 4 bytes, each data message 5.
    rig = await _rig(1 << 20, 4)
    try:
        with pytest.raises(errors.Internal) as info:
            async for _message in rig.files.Download(attachments_pb2.DownloadRequest()):
                pass
        assert info.value.message == TOO_LARGE
    finally:
        await rig.server.stop(0)
