"""The middleware: printable log values, trusted Host headers, the access log, and
transfers and long polls kept out of the API slots and the latency admission follows."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.types import Message

from plumbline.gateway import errors
from plumbline.gateway.admission import Admission
from plumbline.gateway.middleware import GatewayMiddleware, printable, trusted_host
from plumbline.gateway.throttle import LongPolls, Transfers


def test_log_values_are_printable() -> None:
    assert printable("/rest/v1/x\n2026 INFO forged\\") == "/rest/v1/x\\x0a2026 INFO forged\\x5c"
    assert printable("/rest/v1/ünïcode") == "/rest/v1/ünïcode"


def test_untrusted_hosts_become_the_local_address() -> None:
    def host(value: str, trusted: frozenset[str] = frozenset()) -> bytes:
        scope = {"server": ("127.0.0.1", 8080), "headers": [(b"host", value.encode())]}
        headers = dict(trusted_host(scope, trusted)["headers"])
        return bytes(headers[b"host"])

    assert host("127.0.0.1:8080") == b"127.0.0.1:8080"
    assert host("evil.example") == b"127.0.0.1:8080"
    assert host("api.example:443", frozenset({"api.example"})) == b"api.example:443"
    assert host("api.example:443", frozenset({"api.example:8443"})) == b"127.0.0.1:8080"
    assert host("API.example", frozenset({"api.example"})) == b"API.example"


async def test_an_unhandled_error_logs_as_500(caplog: pytest.LogCaptureFixture) -> None:
    app = FastAPI()
    errors.install(app)

    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError("boom")

    @app.get("/fine")
    async def fine() -> dict[str, str]:
        return {"ok": "yes"}

    app.add_middleware(GatewayMiddleware, admission=Admission(4, 4, 1.0), max_body=1024)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    with caplog.at_level(logging.INFO, logger="plumbline.gateway.access"):
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            assert (await client.get("/boom")).status_code == 500
            assert (await client.get("/fine")).status_code == 200
    lines = [r.getMessage() for r in caplog.records if r.name == "plumbline.gateway.access"]
    assert [line.split(" ")[:3] for line in lines] == [
        ["GET", "/boom", "500"],
        ["GET", "/fine", "200"],
    ]


def _transfer_app(
    admission: Admission, transfers: Transfers | None = None, *, behind: bool = True
) -> FastAPI:
    """An app with an upload route that reads its body to the end, a download route and
    a JSON answer whose body goes out slowly, ``behind`` the middleware."""
    app = FastAPI()
    errors.install(app)

    app.state.reading = asyncio.Event()

    @app.put("/rest/v1/attachments/{id}/file")
    async def upload(request: Request) -> dict[str, int]:
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            app.state.reading.set()
        return {"size": size}

    @app.get("/rest/v1/attachments/{id}/file")
    async def download() -> StreamingResponse:
        async def pieces() -> AsyncIterator[bytes]:
            yield b"a"
            await asyncio.sleep(0.3)
            yield b"b"

        return StreamingResponse(pieces())

    @app.get("/rest/v1/ping")
    async def ping() -> dict[str, str]:
        return {"ok": "yes"}

    app.add_middleware(GatewayMiddleware, admission=admission, max_body=1024, transfers=transfers)
    return app


async def test_an_open_upload_holds_no_api_slot() -> None:
    """With the one API slot there is, a trickling upload leaves it to other requests."""
    admission = Admission(concurrency=1, queue=1, timeout=1.0)
    app = _transfer_app(admission)
    transport = httpx.ASGITransport(app=app)
    more = asyncio.Event()

    async def body() -> AsyncIterator[bytes]:
        yield b"first piece"
        await more.wait()
        yield b"last piece"

    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        upload = asyncio.create_task(client.put("/rest/v1/attachments/1/file", content=body()))
        await app.state.reading.wait()
        for _ in range(3):  # each would be refused after the wait limit, were it held
            assert (await client.get("/rest/v1/ping")).status_code == 200
        assert not upload.done()
        more.set()
        answer = await upload
    assert answer.json() == {"size": len(b"first piecelast piece")}
    # The upload's time is no handling time: the three pings are all the limit has seen.
    assert admission.limit.samples == 3
    assert admission.limit.long < 0.05


async def test_the_service_time_ends_at_the_first_byte_and_skips_transfers() -> None:
    admission = Admission(concurrency=4, queue=4, timeout=1.0)
    app = _transfer_app(admission)

    @app.get("/rest/v1/slowly")
    async def slowly() -> StreamingResponse:
        async def pieces() -> AsyncIterator[bytes]:
            yield b"{"
            await asyncio.sleep(0.5)  # the client reads slowly, say
            yield b"}"

        return StreamingResponse(pieces(), media_type="application/json")

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        assert (await client.get("/rest/v1/slowly")).content == b"{}"
        assert admission.limit.long < 0.1  # the handling, not the 0.5 s the body took
        assert (await client.get("/rest/v1/attachments/1/file")).content == b"ab"
        assert admission.limit.samples == 1  # a download is no API request


async def test_transfers_over_the_users_cap_answer_429() -> None:
    admission = Admission(concurrency=4, queue=4, timeout=1.0)
    transfers = Transfers(concurrency=1, per_user=1)
    transport = httpx.ASGITransport(app=_transfer_app(admission, transfers))
    more = asyncio.Event()

    async def body() -> AsyncIterator[bytes]:
        yield b"x"
        await more.wait()

    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        upload = asyncio.create_task(client.put("/rest/v1/attachments/1/file", content=body()))
        while transfers.open == 0:
            await asyncio.sleep(0.01)
        refused = await client.get("/rest/v1/attachments/2/file")
        assert refused.status_code == 429
        assert "most transfers at once (1)" in refused.json()["meta"]["message"]
        assert 1 <= int(refused.headers["retry-after"]) <= 1  # bounded by the wait limit
        assert (await client.get("/rest/v1/ping")).status_code == 200
        more.set()
        assert (await upload).status_code == 200
    assert transfers.open == 0


async def test_a_download_the_client_stops_taking_ends_its_transfer() -> None:
    """A file going out to a client that takes none of it holds its place in the pool
    for the body timeout only."""
    admission = Admission(concurrency=4, queue=4, timeout=1.0)
    transfers = Transfers(concurrency=4, per_user=1)
    app = _transfer_app(admission, behind=False)
    middleware = GatewayMiddleware(
        app, admission=admission, max_body=1024, body_timeout=0.2, transfers=transfers
    )
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/rest/v1/attachments/1/file",
        "raw_path": b"/rest/v1/attachments/1/file",
        "query_string": b"",
        "headers": [],
        "app": app,
    }
    stuck = asyncio.Event()

    async def receive() -> Message:
        await stuck.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.body" and message.get("body"):
            await stuck.wait()  # the client reads nothing

    await asyncio.wait_for(middleware(scope, receive, send), 10)
    assert transfers.open == 0


async def test_long_polls_hold_no_api_slot_and_are_bounded_per_user() -> None:
    """With the one API slot there is, two waiting long polls leave it to others, teach
    the admission nothing, and a third of the same user is refused at once."""
    admission = Admission(concurrency=1, queue=1, timeout=1.0)
    long_polls = LongPolls(concurrency=8, per_user=2)
    app = FastAPI()
    errors.install(app)
    change = asyncio.Event()

    @app.get("/rest/labs/events")
    async def events(wait: float = 0) -> dict[str, float]:
        if wait:
            await change.wait()
        return {"waited": wait}

    @app.get("/rest/v1/ping")
    async def ping() -> dict[str, str]:
        return {"ok": "yes"}

    app.add_middleware(GatewayMiddleware, admission=admission, max_body=1024, long_polls=long_polls)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        polls = [
            asyncio.create_task(client.get("/rest/labs/events", params={"wait": 20}))
            for _ in range(2)
        ]
        while long_polls.open < 2:
            await asyncio.sleep(0.01)
        refused = await client.get("/rest/labs/events", params={"wait": "5"})
        assert refused.status_code == 429
        assert "2 long polls already" in refused.json()["meta"]["message"]
        assert (await client.get("/rest/v1/ping")).status_code == 200
        # Without wait (or a wait of 0) it is an API request like any other.
        assert (await client.get("/rest/labs/events", params={"wait": 0})).status_code == 200
        assert admission.limit.samples == 2
        change.set()
        assert [(await p).json() for p in polls] == [{"waited": 20.0}] * 2
    assert long_polls.open == 0
    assert admission.limit.samples == 2  # the long polls' 20 s taught it nothing
