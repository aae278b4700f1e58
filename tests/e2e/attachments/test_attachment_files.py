"""Attachment files at size: memory stays bounded while 200 MB pass both ways; an upload
cut off or refused leaves the record and the store as they were, and one cut off by a
crash leaves nothing once the sweep has run; the limit answers 413."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import socket
import threading
import time
from pathlib import Path
from typing import IO, Any, cast

import httpx

from tests.e2e.api import Team, assert_error, eventually, new_project, project_key
from tests.e2e.attachments.test_attachments import new_attachment, upload
from tests.e2e.topology import (
    System,
    blob_rows,
    blob_store,
    partial_uploads,
    replicas_of,
    restart,
    start_embedded,
)

MB = 10**6
BLOCK = bytes(range(256)) * 4096  # 1 MiB, repeated


class Pattern(io.RawIOBase):
    """``size`` bytes made on the fly (never held whole), and their SHA-256."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.sent = 0
        self.digest = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        count = min(len(buffer), self.size - self.sent, len(BLOCK))
        offset = self.sent % len(BLOCK)
        piece = (BLOCK[offset:] + BLOCK[:offset])[:count]
        buffer[:count] = piece
        self.digest.update(piece)
        self.sent += count
        return count


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


class Peaks:
    """The most each process's resident memory grew above where it stood at the start."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.base = {name: _rss(pid) for name, pid in pids.items()}
        self.peak = dict(self.base)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            for name, pid in self.pids.items():
                self.peak[name] = max(self.peak[name], _rss(pid))

    def __enter__(self) -> Peaks:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def growth(self) -> dict[str, int]:
        return {name: self.peak[name] - self.base[name] for name in self.pids}


def _serving(system: System) -> dict[str, int]:
    """The processes a file passes through: the gateway and attachments (one in all)."""
    if system.topology == "embedded":
        return {"all": system.gateway.popen.pid}
    [service] = replicas_of(system, "attachments")
    return {"gateway": system.gateway.popen.pid, "attachments": service.popen.pid}


def _connect(system: System, attachment: int, boundary: str, length: int) -> socket.socket:
    """A connection that has sent the headers of an upload declaring ``length`` bytes."""
    credentials = base64.b64encode(f"admin:{system.admin_password}".encode()).decode()
    request = (
        f"PUT /rest/v1/attachments/{attachment}/file HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{system.gateway.http_port}\r\n"
        f"Authorization: Basic {credentials}\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()
    connection = socket.create_connection(("127.0.0.1", system.gateway.http_port), timeout=30)
    connection.sendall(request)
    return connection


def _keys(system: System, attachment: int) -> list[str]:
    return asyncio.run(blob_store(system).keys(f"{attachment}/"))


def test_200_mb_both_ways_in_bounded_memory(
    system: System, admin: httpx.Client, project: dict[str, Any]
) -> None:
    attachment = new_attachment(admin, project)
    body = Pattern(200 * MB)
    with Peaks(_serving(system)) as peaks:
        response = admin.put(
            f"/attachments/{attachment}/file",
            files={"file": ("big.bin", cast(IO[bytes], body), "application/octet-stream")},
            timeout=300,
        )
        assert response.status_code == 200, response.text
        download = hashlib.sha256()
        size = 0
        with admin.stream("GET", f"/attachments/{attachment}/file", timeout=300) as stream:
            assert stream.status_code == 200
            assert stream.headers["etag"] == f'"{body.digest.hexdigest()}"'
            for chunk in stream.iter_bytes():
                download.update(chunk)
                size += len(chunk)
    assert size == 200 * MB
    assert download.hexdigest() == body.digest.hexdigest()
    grown = peaks.growth()
    # Far below the file: a few chunks in flight per process, not the file.
    assert all(g < 80 * MB for g in grown.values()), grown
    assert len(_keys(system, attachment)) == 1


def test_an_interrupted_upload_leaves_everything_as_it_was(
    system: System, admin: httpx.Client, project: dict[str, Any]
) -> None:
    attachment = new_attachment(admin, project)
    assert upload(admin, attachment, b"the old file", "old.txt").status_code == 200
    [kept] = _keys(system, attachment)
    boundary = "cutoff-boundary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="new.bin"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    with _connect(system, attachment, boundary, len(head) + 20 * MB) as connection:
        connection.sendall(head)
        for _ in range(5):
            connection.sendall(BLOCK)
        time.sleep(0.5)  # some bytes reach the store before the client goes
    assert eventually(lambda: _keys(system, attachment) == [kept], seconds=15), _keys(
        system, attachment
    )
    data = admin.get(f"/attachments/{attachment}").json()["data"]
    assert (data["fileName"], data["fileSize"]) == ("old.txt", len(b"the old file"))
    assert admin.get(f"/attachments/{attachment}/file").content == b"the old file"


def test_a_replaced_or_deleted_file_leaves_no_blob(
    system: System, admin: httpx.Client, labs: httpx.Client, project: dict[str, Any]
) -> None:
    attachment = new_attachment(admin, project)
    for content in (b"one", b"two", b"three"):
        assert upload(admin, attachment, content).status_code == 200
    assert len(_keys(system, attachment)) == 1
    assert labs.delete(f"/attachments/{attachment}").status_code == 204
    assert _keys(system, attachment) == []


def test_a_refused_upload_stores_nothing(
    system: System, team: Any, project: dict[str, Any]
) -> None:
    admin = team.clients["ORG_ADMIN"]
    attachment = new_attachment(admin, team.project)
    refused = upload(team.clients["READ_ONLY"], attachment, b"x" * 3 * MB)
    assert_error(refused, 401, "READ_ONLY")
    assert _keys(system, attachment) == []


def test_a_file_over_the_limit_is_413_and_changes_nothing(
    system: System, admin: httpx.Client, project: dict[str, Any]
) -> None:
    limit = int(system.env["PLUMBLINE_MAX_UPLOAD_BYTES"])
    attachment = new_attachment(admin, project)
    assert upload(admin, attachment, b"small").status_code == 200
    [kept] = _keys(system, attachment)
    over = admin.put(
        f"/attachments/{attachment}/file",
        files={
            "file": ("huge.bin", cast(IO[bytes], Pattern(limit + 1)), "application/octet-stream")
        },
        timeout=120,
    )
    assert_error(over, 413, str(limit))
    assert admin.get(f"/attachments/{attachment}").json()["data"]["fileSize"] == len(b"small")
    assert eventually(lambda: _keys(system, attachment) == [kept])
    # A declared length over the limit is refused before the body is read.
    with _connect(system, attachment, "b", limit * 2) as connection:
        answer = ""
        while not answer.endswith("}"):
            piece = connection.recv(65536).decode("latin-1")
            if not piece:
                break
            answer += piece
    assert answer.startswith("HTTP/1.1 413"), answer
    assert str(limit) in answer


def test_a_stalled_upload_is_408_and_changes_nothing(
    system: System, admin: httpx.Client, project: dict[str, Any]
) -> None:
    attachment = new_attachment(admin, project)
    assert upload(admin, attachment, b"kept").status_code == 200
    [kept] = _keys(system, attachment)
    head = b'--b\r\nContent-Disposition: form-data; name="file"; filename="slow.bin"\r\n\r\n'
    idle = float(system.env.get("PLUMBLINE_BODY_TIMEOUT", "10"))
    started = time.monotonic()
    with _connect(system, attachment, "b", len(head) + 10 * MB) as connection:
        connection.sendall(head + BLOCK)  # then nothing more
        connection.settimeout(idle + 20)
        answer = connection.recv(65536).decode("latin-1")
    assert answer.startswith("HTTP/1.1 408"), answer
    assert idle <= time.monotonic() - started < idle + 20
    assert admin.get(f"/attachments/{attachment}/file").content == b"kept"
    assert eventually(lambda: _keys(system, attachment) == [kept])


def test_a_crash_mid_upload_leaves_no_byte_once_swept(system: System, tmp_path: Path) -> None:
    """kill -9 half-way through an upload of the process that writes the file (embedded:
    the one process, a test's own here; distributed: the attachments service): once it is
    back, its sweep removes the bytes the upload had stored, not just its row."""
    if system.topology == "embedded":
        own = start_embedded(tmp_path)
        try:
            _crash_mid_upload(own, "all")
        finally:
            own.stop()
        return
    try:
        _crash_mid_upload(system, "attachments")
    finally:
        restart(system, "attachments")  # the usual settings again, for the next tests


def _crash_mid_upload(system: System, name: str) -> None:
    limit = 1.0  # seconds an upload may take; the crash's leftover gets older than that
    with system.client(("admin", system.admin_password)) as admin:
        attachment = new_attachment(admin, {"id": new_project(admin, project_key("CR"))})
    prefix = f"{attachment}/"
    head = (
        b'--crash\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n'
        b"Content-Type: application/octet-stream\r\n\r\n"
    )
    [victim] = [p for p in system.processes if p.name == name]
    with _connect(system, attachment, "crash", len(head) + 40 * MB) as connection:
        connection.sendall(head)
        for _ in range(16):
            connection.sendall(BLOCK)

        def stored() -> bool:
            connection.sendall(BLOCK[:1024])  # a steady upload, never a stalled one
            sizes = list(partial_uploads(system, prefix).values())
            return bool(sizes) and (system.weed is not None or max(sizes) >= 5 * 2**20)

        # A part of 5 MiB at least is in the store (a staged file, a multipart upload).
        assert eventually(stored, seconds=30), partial_uploads(system, prefix)
        victim.popen.kill()
        victim.popen.wait(30)
    killed = time.monotonic()
    [key] = partial_uploads(system, prefix)
    assert blob_rows(system)[key] == "uploading"
    while time.monotonic() < killed + limit:  # the leftover's age, not a wait for an event
        time.sleep(0.05)
    restart(system, name, {"PLUMBLINE_STALE_UPLOAD_SECONDS": str(limit)})
    assert eventually(lambda: not partial_uploads(system, prefix), seconds=30), partial_uploads(
        system, prefix
    )
    assert eventually(lambda: key not in blob_rows(system)), blob_rows(system)
    assert _keys(system, attachment) == []
    with system.client(("admin", system.admin_password)) as admin:
        assert_error(admin.get(f"/attachments/{attachment}/file"), 404, "no file yet")


def test_files_takes_an_attachments_id_as_its_url(team: Team) -> None:
    """A downloader passes the attachment's id where the file's URL goes: the file is
    answered as for its URL, with the same access checks."""
    admin = team.clients["ORG_ADMIN"]
    attachment = new_attachment(admin, team.project)
    content = b"evidence by id " * 100
    assert upload(admin, attachment, content).status_code == 200
    for role in ("ORG_ADMIN", "READ_ONLY"):
        by_id = team.clients[role].get("/files", params={"url": str(attachment)})
        assert by_id.status_code == 200, by_id.text
        assert by_id.content == content
        assert by_id.headers["content-type"] == "application/octet-stream"
    padded = admin.get("/files", params={"url": f" {attachment} "})
    assert padded.content == content
    part = admin.get("/files", params={"url": str(attachment)}, headers={"Range": "bytes=0-7"})
    assert part.status_code == 206
    assert part.content == content[:8]
    # Who may not read the attachment's project may not have its file by id either.
    assert_error(team.clients["NONE"].get("/files", params={"url": str(attachment)}), 401)
    assert_error(admin.get("/files", params={"url": "999999999999"}), 404, "attachment")
    for bad in ("0", str(2**63), "9" * 30):
        assert_error(admin.get("/files", params={"url": bad}), 400, "url", "id")
