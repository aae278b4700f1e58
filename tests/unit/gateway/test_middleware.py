"""The middleware: printable log values, trusted Host headers, the access log."""

from __future__ import annotations

import logging

import httpx
import pytest
from fastapi import FastAPI

from plumbline.gateway import errors
from plumbline.gateway.middleware import GatewayMiddleware, printable, trusted_host
from plumbline.gateway.throttle import Throttle


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

    app.add_middleware(GatewayMiddleware, throttle=Throttle(4, 4, 1.0), max_body=1024)
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
