"""The collector stand-in of ``make k8s-live``: it answers OTLP/HTTP exports and logs each."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import ThreadingHTTPServer

import pytest

from tests.live.images.collector.otlp_sink import Sink


@pytest.fixture
def sink() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _post(url: str, body: bytes, content_type: str) -> tuple[int, bytes, str]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, reply.read(), reply.headers["Content-Type"]
    except urllib.error.HTTPError as error:
        return error.code, error.read(), error.headers["Content-Type"]


def test_a_trace_export_is_answered_and_logged(
    sink: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, body, content_type = _post(sink + "/v1/traces", b"\x0a\x02ab", "application/x-protobuf")
    assert (status, body, content_type) == (200, b"", "application/x-protobuf")
    assert "otlp /v1/traces 4 bytes from 127.0.0.1" in capsys.readouterr().out


def test_a_json_export_gets_an_empty_json_response(sink: str) -> None:
    assert _post(sink + "/v1/logs", b"{}", "application/json") == (200, b"{}", "application/json")


def test_another_path_is_not_found_and_not_logged(
    sink: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _body, _type = _post(sink + "/v1/other", b"x", "application/x-protobuf")
    assert status == 404
    assert "otlp" not in capsys.readouterr().out
