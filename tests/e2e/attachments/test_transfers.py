"""Transfers beside the API (issue 23, items 11 to 13): trickling uploads hold no API
slot, are capped per user and end with 408 below the minimum rate; a transfer lasts as
long as it keeps moving, past the deadline of an ordinary call; the attachments service
going away mid-upload answers 503.

The limits are those of a gateway of its own, set tight so that each shows in seconds:
two API slots and a 3 s wait limit (a slow upload holding a slot would starve the API at
once), three uploads per user, 2,000 bytes a second over 4 s windows, a 3 s deadline for
calls between services. Its attachments service is a process of its own too, which one
test stops mid-upload.
"""

from __future__ import annotations

import base64
import hashlib
import select
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.e2e.api import (
    assert_error,
    created_id,
    eventually,
    grant,
    item_types,
    new_project,
    project_key,
    user_body,
)
from tests.e2e.attachments.test_attachments import new_attachment, upload
from tests.e2e.testrecords import (
    add_cases,
    default_group,
    new_cycle,
    new_plan,
    new_test_case,
    runs_of,
)
from tests.e2e.topology import Process, System, start_embedded, start_gateway, start_service

TIGHT = {
    "PLUMBLINE_THROTTLE_CONCURRENCY": "2",
    "PLUMBLINE_THROTTLE_QUEUE": "2",
    "PLUMBLINE_THROTTLE_TIMEOUT": "3",
    "PLUMBLINE_TRANSFER_PER_USER": "3",
    "PLUMBLINE_TRANSFER_MIN_RATE": "2000",
    "PLUMBLINE_TRANSFER_RATE_WINDOW": "4",
    "PLUMBLINE_GRPC_TIMEOUT": "3",
}
MIN_RATE, WINDOW, DEADLINE = 2000, 4.0, 3.0
BOUNDARY = "transfer-boundary"
HEAD = (
    f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="t.bin"\r\n'
    "Content-Type: application/octet-stream\r\n\r\n"
).encode()
TAIL = f"\r\n--{BOUNDARY}--\r\n".encode()


@dataclass
class Tight:
    """The tight gateway; in the distributed topology, with the attachments process it
    alone uses (the embedded default is one process: there, a system of its own)."""

    gateway: Process
    admin_password: str
    attachments: Process | None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.gateway.http_port}/rest/v1"

    def client(self, auth: tuple[str, str] | None = None) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, auth=auth or ("admin", self.admin_password), timeout=60
        )


@pytest.fixture(scope="module")
def tight(system: System) -> Iterator[Tight]:
    if system.topology == "embedded":
        workdir = system.workdir / "tight"
        workdir.mkdir(exist_ok=True)
        # One gateway, as in the distributed topology: the slots and the per-user cap
        # are a gateway process's, and with workers each would have its own.
        own = start_embedded(workdir, {**TIGHT, "PLUMBLINE_WORKERS": "0"})
        try:
            yield Tight(own.gateway, own.admin_password, None)
        finally:
            own.stop()
        return
    attachments = start_service(system, "attachments", "attachments-tight")
    address = f"127.0.0.1:{attachments.grpc_port}"
    gateway = start_gateway(
        system, "gateway-tight", {**TIGHT, "PLUMBLINE_ATTACHMENTS_ADDR": address}
    )
    try:
        yield Tight(gateway, system.admin_password, attachments)
    finally:
        gateway.stop()
        attachments.stop()


@pytest.fixture
def admin(tight: Tight) -> Iterator[httpx.Client]:
    """The organization admin, through the tight gateway."""
    with tight.client() as client:
        yield client


@pytest.fixture
def project(admin: httpx.Client) -> dict[str, Any]:
    return {"id": new_project(admin, project_key("TR")), "types": item_types(admin)}


@pytest.fixture
def writer(admin: httpx.Client, project: dict[str, Any]) -> tuple[str, str]:
    """A READ_WRITE user of ``project``: name and password."""
    body = user_body()
    user = created_id(admin.post("/users", json=body))
    grant(admin, project["id"], "READ_WRITE", user=user)
    return str(body["username"]), str(body["password"])


def _open_upload(tight: Tight, auth: tuple[str, str], attachment: int, size: int) -> socket.socket:
    """A connection that has sent an upload's headers and the file part's head."""
    credentials = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
    request = (
        f"PUT /rest/v1/attachments/{attachment}/file HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{tight.gateway.http_port}\r\n"
        f"Authorization: Basic {credentials}\r\n"
        f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
        f"Content-Length: {len(HEAD) + size + len(TAIL)}\r\n\r\n"
    ).encode()
    connection = socket.create_connection(("127.0.0.1", tight.gateway.http_port), timeout=30)
    connection.sendall(request + HEAD)
    return connection


def _answered(connection: socket.socket) -> bool:
    readable, _, _ = select.select([connection], [], [], 0)
    return bool(readable)


def _answer(connection: socket.socket, seconds: float = 30) -> str:
    """The response on ``connection`` (headers and JSON body), as text."""
    connection.settimeout(seconds)
    answer = b""
    while not answer.rstrip().endswith(b"}"):
        try:
            piece = connection.recv(65536)
        except OSError:
            break
        if not piece:
            break
        answer += piece
    return answer.decode("latin-1")


def test_trickling_uploads_leave_the_api_answering_and_end_with_408(
    tight: Tight, admin: httpx.Client, project: dict[str, Any], writer: tuple[str, str]
) -> None:
    """Five uploads trickle a byte at a time from one READ_WRITE user: three are taken
    (the rest are refused with 429, Retry-After within the wait limit) and none takes an
    API slot, so the user's API requests keep answering while they are open; each ends
    with 408 once a window has passed under the minimum rate."""
    attachments = [new_attachment(admin, project) for _ in range(5)]
    upload(admin, attachments[0], b"kept")
    connections = [_open_upload(tight, writer, a, 10**6) for a in attachments]
    stop = threading.Event()

    def trickle() -> None:  # a byte every 0.2 s on each: far under 2,000 a second
        while not stop.wait(0.2):
            for connection in connections:
                try:
                    connection.send(b"x")
                except OSError:
                    pass

    trickler = threading.Thread(target=trickle, daemon=True)
    trickler.start()
    try:
        assert eventually(lambda: sum(_answered(c) for c in connections) >= 2, seconds=15)
        refused = [c for c in connections if _answered(c)]
        assert len(refused) == 2, "each connection past the third of the user's is refused"
        for connection in refused:
            answer = _answer(connection)
            assert answer.startswith("HTTP/1.1 429"), answer
            assert "3 files or reports" in answer, answer
            retry_after = next(
                line.split(":", 1)[1] for line in answer.split("\r\n") if "retry-after" in line
            )
            assert 1 <= int(retry_after) <= 3, answer  # never past the wait limit
        open_ones = [c for c in connections if c not in refused]
        with httpx.Client(base_url=tight.url, auth=writer, timeout=5) as client:
            answered = 0
            while not any(_answered(c) for c in open_ones) and answered < 20:
                # Two slots and three uploads open: each of these answers within 5 s
                # only because the uploads hold none.
                response = client.get(f"/projects/{project['id']}")
                assert response.status_code == 200, response.text
                answered += 1
            assert answered >= 3, "the slow uploads ended before the API was tried"
        for connection in open_ones:
            answer = _answer(connection, seconds=WINDOW * 3 + 20)
            assert answer.startswith("HTTP/1.1 408"), answer
            assert "too slowly" in answer, answer
            assert f"at least {MIN_RATE} bytes a second" in answer, answer
    finally:
        stop.set()
        trickler.join()
        for connection in connections:
            connection.close()
    assert admin.get(f"/attachments/{attachments[0]}/file").content == b"kept"


def test_a_trickling_junit_report_ends_with_408_like_an_upload(
    tight: Tight, admin: httpx.Client, project: dict[str, Any]
) -> None:
    """A JUnit report is a transfer too: sent slower than the minimum rate, it ends with
    408 and records nothing."""
    plan = new_plan(admin, project)
    add_cases(admin, plan, default_group(admin, plan), new_test_case(admin, project, "Trickled"))
    cycle = new_cycle(admin, plan)
    report = b'<testsuites><testsuite name="s"><testcase name="Trickled"/></testsuite>'
    credentials = base64.b64encode(f"admin:{tight.admin_password}".encode()).decode()
    request = (
        f"POST /rest/labs/testcycles/{cycle}/results HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{tight.gateway.http_port}\r\n"
        f"Authorization: Basic {credentials}\r\n"
        "Content-Type: application/xml\r\n"
        f"Content-Length: {len(report) + 1000}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", tight.gateway.http_port), timeout=30) as sock:
        sock.sendall(request + report[:20])
        for byte in report[20:]:  # a byte every 0.2 s: far under 2,000 a second
            if _answered(sock):
                break
            sock.sendall(bytes([byte]))
            time.sleep(0.2)
        answer = _answer(sock, seconds=WINDOW * 3 + 20)
    assert answer.startswith("HTTP/1.1 408"), answer
    assert "too slowly" in answer, answer
    [run] = runs_of(admin, cycle)
    assert run["fields"]["testRunStatus"] == "NOT_RUN"


def _steady(size: int, pieces: int, seconds: float) -> Iterator[bytes]:
    """A multipart body whose file of ``size`` bytes comes in ``pieces`` evenly over
    ``seconds``."""
    yield HEAD
    piece = size // pieces
    for n in range(pieces):
        time.sleep(seconds / pieces)
        yield bytes([n % 256]) * piece
    yield TAIL


def test_a_steady_transfer_outlasts_the_call_deadline(
    tight: Tight, admin: httpx.Client, project: dict[str, Any]
) -> None:
    """An upload that keeps arriving for twice the deadline of a call between services
    succeeds, and so does a download read steadily for as long."""
    attachment = new_attachment(admin, project)
    size, pieces = 2_000_000, 40  # 330 KB a second, well over the minimum rate
    headers = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}
    expected = b"".join(bytes([n % 256]) * (size // pieces) for n in range(pieces))
    with tight.client() as client:
        started = time.monotonic()
        response = client.put(
            f"/attachments/{attachment}/file",
            content=_steady(size, pieces, DEADLINE * 2),
            headers=headers,
        )
        assert response.status_code == 200, response.text
        assert time.monotonic() - started > DEADLINE
        # 40 MB read at about 8 MB a second: more than the buffers on the way hold, so
        # the service sends for as long as the client reads.
        big = new_attachment(admin, project)
        content = bytes(range(256)) * 4096 * 40
        assert upload(admin, big, content).status_code == 200
        digest, started = hashlib.sha256(), time.monotonic()
        with client.stream("GET", f"/attachments/{big}/file") as stream:
            assert stream.status_code == 200
            for chunk in stream.iter_bytes(1_000_000):
                digest.update(chunk)
                time.sleep(0.12)
        assert time.monotonic() - started > DEADLINE
    assert digest.hexdigest() == hashlib.sha256(content).hexdigest()
    assert admin.get(f"/attachments/{attachment}/file").content == expected


def test_the_attachments_service_going_away_mid_upload_is_503(
    system: System, tight: Tight, admin: httpx.Client, project: dict[str, Any]
) -> None:
    if tight.attachments is None:
        pytest.skip("the embedded default is one process: its attachments service cannot go")
    attachment = new_attachment(admin, project)
    assert upload(admin, attachment, b"kept").status_code == 200
    connection = _open_upload(tight, ("admin", tight.admin_password), attachment, 10**8)
    sent = [0]
    stop = threading.Event()

    def send() -> None:  # the client sends on, as fast as it may, until it is answered
        while not stop.is_set() and not _answered(connection):
            try:
                connection.sendall(b"y" * 65536)
            except OSError:
                return
            sent[0] += 65536

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    try:
        assert eventually(lambda: sent[0] > 3_000_000)  # on its way to the store
        tight.attachments.popen.kill()  # the service's process dies mid-upload
        tight.attachments.popen.wait()
        answer = _answer(connection)
    finally:
        stop.set()
        sender.join()
        connection.close()
    assert answer.startswith("HTTP/1.1 503"), answer
    assert "attachments service" in answer, answer
    # While the service is away, its files answer 503 too, not 500; the other attachments
    # process (the main gateway's) still serves the file as it was.
    assert_error(admin.get(f"/attachments/{attachment}/file"), 503, "attachments")
    with system.client(("admin", system.admin_password)) as main:
        assert main.get(f"/attachments/{attachment}/file").content == b"kept"
