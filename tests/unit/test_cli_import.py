"""``plumbline import`` against a real HTTP server that records what it is sent."""

from __future__ import annotations

import base64
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from plumbline.cli import main
from plumbline.importer_cli import CHUNK, item_ids


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Server:
    url: str
    received: list[Received] = field(default_factory=list)
    status: int = 200
    answer: dict[str, Any] = field(default_factory=dict)


def _read_chunked(handler: BaseHTTPRequestHandler) -> bytes:
    body = b""
    while True:
        size = int(handler.rfile.readline().split(b";")[0].strip(), 16)
        if size == 0:
            while handler.rfile.readline().strip():  # trailers, then the blank line
                pass
            return body
        body += handler.rfile.read(size)
        handler.rfile.readline()


@pytest.fixture
def server() -> Iterator[Server]:
    state = Server(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                body = _read_chunked(self)
            else:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            headers = {k.lower(): v for k, v in self.headers.items()}
            state.received.append(Received(self.path, headers, body))
            out = json.dumps(state.answer).encode()
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture(autouse=True)
def _no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PLUMBLINE_URL", "PLUMBLINE_USER", "PLUMBLINE_PASSWORD", "PLUMBLINE_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def _ok(items: int, relationships: int, first: int = 4001, project: int = 5) -> dict[str, Any]:
    return {
        "meta": {"status": "OK", "timestamp": "2026-11-26T00:00:00Z"},
        "data": {
            "project": project,
            "lines": items + relationships,
            "items": items,
            "relationships": relationships,
            "firstItemId": first,
        },
    }


#: Item lines F0 (k=0), a keyless one (k=1), G2 (k=2); a blank line and a relationship line
#: between them are not counted. The padding makes the file several chunks long.
PAD = "x" * (CHUNK + 1000)
LINES = [
    {"key": "F0", "itemType": 24, "fields": {"name": "root", "description": PAD}},
    {"itemType": 24, "parent": "F0", "fields": {"name": "no key"}},
    None,
    {"fromItem": "F0", "toItem": 1234, "relationshipType": 2},
    {"key": "G2", "itemType": 24, "parent": 1234, "fields": {"name": "é", "description": PAD}},
]


@pytest.fixture
def jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "import.jsonl"
    text = "".join("\n" if line is None else json.dumps(line) + "\n" for line in LINES)
    path.write_bytes(text.encode())
    return path


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_streams_the_file_and_prints_a_summary(
    server: Server, jsonl: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.answer = _ok(items=3, relationships=1)
    ids = tmp_path / "ids.json"
    code = main(
        [
            "import",
            str(jsonl),
            "--project",
            "5",
            "--url",
            server.url + "/",
            "--user",
            "alice",
            "--password",
            "s3cret",
            "--ids",
            str(ids),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    [request] = server.received
    assert request.path == "/rest/labs/projects/5/import"
    assert request.body == jsonl.read_bytes()
    assert len(request.body) > 2 * CHUNK
    assert request.headers["authorization"] == _basic("alice", "s3cret")
    assert request.headers["content-type"] == "application/x-ndjson"
    assert "imported 3 items and 1 relationship into project 5 in " in out
    assert "items/s" in out
    assert "item ids 4001-4003" in out
    # The keyless item line still takes an id (4002); the relationship and blank lines do not.
    assert json.loads(ids.read_text()) == {"F0": 4001, "G2": 4003}
    assert "uploading" in err
    assert "the server is writing 5 lines" in err


def test_token_and_url_from_the_environment(
    server: Server, jsonl: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    server.answer = _ok(items=3, relationships=1, first=10, project=7)
    monkeypatch.setenv("PLUMBLINE_URL", server.url)
    monkeypatch.setenv("PLUMBLINE_TOKEN", "tok-123")
    monkeypatch.setenv("PLUMBLINE_USER", "ignored")
    code = main(["import", str(jsonl), "--project", "7", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    [request] = server.received
    assert request.path == "/rest/labs/projects/7/import"
    assert request.headers["authorization"] == "Bearer tok-123"
    assert "item ids 10-12" in out
    assert err == ""


def test_bad_lines_are_printed_and_exit_1(
    server: Server, jsonl: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.status = 400
    server.answer = {
        "meta": {
            "status": "Bad Request",
            "message": "2 lines of the import are bad; nothing was imported. line 1: ...",
        },
        "errors": [
            {"line": 1, "message": "unknown item type 24"},
            {"line": 5, "message": "parent 1234 does not exist"},
        ],
    }
    ids = tmp_path / "ids.json"
    code = main(
        [
            "import",
            str(jsonl),
            "--project",
            "5",
            "--url",
            server.url,
            "--token",
            "t",
            "--quiet",
            "--ids",
            str(ids),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 1
    assert "400" in err
    assert "2 bad lines; nothing was imported" in err
    assert "line 1: unknown item type 24" in err
    assert "line 5: parent 1234 does not exist" in err
    assert "imported 3" not in out
    assert not ids.exists()


def test_every_bad_line_is_counted_though_the_first_are_named(
    server: Server, jsonl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.status = 400
    server.answer = {
        "meta": {
            "status": "Bad Request",
            "message": "250 lines of the import are bad; nothing was imported. line 1: ...",
        },
        "errors": [{"line": n, "message": "not JSON"} for n in range(1, 101)],
    }
    code = main(["import", str(jsonl), "--project", "5", "--url", server.url, "--token", "t"])
    _, err = capsys.readouterr()
    assert code == 1
    assert "250 bad lines; nothing was imported (the first 100 follow)" in err
    assert "line 100: not JSON" in err


def test_a_refusal_without_errors_prints_the_message(
    server: Server, jsonl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.status = 401
    server.answer = {"meta": {"status": "Unauthorized", "message": "bad credentials"}}
    code = main(["import", str(jsonl), "--project", "5", "--url", server.url, "--token", "t"])
    err = capsys.readouterr().err
    assert code == 1
    assert "(401 Unauthorized): bad credentials" in err
    assert "Traceback" not in err


def test_ids_are_not_written_when_the_file_disagrees_with_the_server(
    server: Server, jsonl: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.answer = _ok(items=2, relationships=1)
    ids = tmp_path / "ids.json"
    code = main(
        [
            "import",
            str(jsonl),
            "--project",
            "5",
            "--url",
            server.url,
            "--token",
            "t",
            "--quiet",
            "--ids",
            str(ids),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 1
    assert "imported 2 items" in out
    assert "imported, but the ids were not written" in err
    assert not ids.exists()


def test_connection_refused_names_the_url(jsonl: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    code = main(["import", str(jsonl), "--project", "5", "--url", url, "--token", "t", "--quiet"])
    err = capsys.readouterr().err
    assert code == 1
    assert f"cannot connect to {url}/rest/labs/projects/5/import" in err
    assert "refused" in err.lower()
    assert "Traceback" not in err


def test_usage_problems_exit_2_and_send_nothing(
    server: Server, jsonl: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--project", "5", "--url", server.url, "--quiet"]
    missing = tmp_path / "missing.jsonl"
    assert main(["import", str(missing), *base, "--token", "t"]) == 2
    assert f"{missing} does not exist" in capsys.readouterr().err

    assert main(["import", str(jsonl), *base]) == 2
    assert "no credentials" in capsys.readouterr().err

    assert main(["import", str(jsonl), *base, "--user", "alice"]) == 2
    assert "no password for 'alice'" in capsys.readouterr().err

    no_folder = tmp_path / "nowhere" / "ids.json"
    assert main(["import", str(jsonl), *base, "--token", "t", "--ids", str(no_folder)]) == 2
    assert "does not exist" in capsys.readouterr().err

    assert server.received == []


def test_project_is_required(jsonl: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["import", str(jsonl), "--token", "t"])
    assert exited.value.code == 2
    assert "--project" in capsys.readouterr().err


def test_item_ids_count_item_lines_only(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_text(
        '{"key": "A", "itemType": 1}\n\n   \n{"item": "A", "fields": {}}\n'
        '{"fromItem": "A", "toItem": "B"}\n'
        '{"itemType": 1}\n{"key": "B", "itemType": 1, "parent": "A"}'  # no final newline
    )
    assert item_ids(path, 100) == ({"A": 100, "B": 102}, 3)
