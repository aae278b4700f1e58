"""Works in the reports service (SQLite and PostgreSQL): parameters checked before
anything is queued, one worker per work, a silent worker's work queued again, files stored
in chunks, and the worker making a report from a real HTTP API end to end."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from plumbline.common.access import Role
from plumbline.common.context import Principal
from plumbline.common.db import Database
from plumbline.common.errors import InvalidArgument, NotFound, PermissionDenied
from plumbline.common.migrations import upgrade
from plumbline.common.tokens import UserTokens
from plumbline.services.reports import worker as worker_module
from plumbline.services.reports.catalog import REPORTS, checked
from plumbline.services.reports.worker import Worker
from plumbline.services.reports.works import DONE, FAILED, MAX_ATTEMPTS, QUEUED, RUNNING, Works
from tests.unit.common.conftest import db_url, pg_url  # noqa: F401  (fixtures)
from tests.unit.services.conftest import ADMIN, access_cache, acting_as

READER = Principal(2, "reader")
STRANGER = Principal(3, "stranger")
ROLES = {2: {7: Role.READ_ONLY}}


@pytest.fixture
async def works(db_url: str) -> AsyncIterator[Works]:  # noqa: F811
    await upgrade("reports", db_url)
    db = Database(db_url)
    try:
        yield Works(db, access_cache(ROLES))
    finally:
        await db.close()


def test_parameters_are_checked_with_defaults_and_words_for_what_is_wrong() -> None:
    trace = REPORTS["trace-matrix"]
    assert checked(trace, "HTML", {"itemType": "12"}) == {
        "itemType": 12,
        "direction": "downstream",
        "depth": 2,
    }
    for given, words in (
        ({}, "itemType is required"),
        ({"itemType": 1, "depth": 0}, "between 1 and 5"),
        ({"itemType": 1, "direction": "sideways"}, "downstream, upstream"),
        ({"itemType": True}, "integer"),
        ({"itemType": 1, "color": 1}, "color is not a parameter"),
        ({"itemType": 1, "testCycle": 1, "testPlan": 2}, "at most one"),
        ({"itemType": 1, "asOf": "yesterday"}, "asOf must be a date"),
        ({"itemType": 1, "asOf": 5}, "date-time string"),
        ({"itemType": 1, "asOf": "2024-01-31T13:45:00Z", "baseline": 3}, "asOf and baseline"),
    ):
        with pytest.raises(InvalidArgument, match=words):
            checked(trace, "XLSX", given)
    with pytest.raises(InvalidArgument, match="XLSX, CSV, HTML"):
        checked(trace, "PDF", {"itemType": 1})
    assert checked(REPORTS["coverage-summary"], "CSV", {"itemType": 1, "relationshipType": 4}) == {
        "itemType": 1,
        "relationshipType": [4],
    }
    # A moment is kept in the API's own form; a filter finds items now, not then.
    at = checked(trace, "CSV", {"itemType": 1, "asOf": "2024-01-31T13:45:00+01:00"})
    assert at["asOf"] == "2024-01-31T12:45:00.000+0000"
    with pytest.raises(InvalidArgument, match="filter cannot be given"):
        checked(REPORTS["coverage-summary"], "CSV", {"itemType": 1, "filter": 2, "baseline": 3})


async def test_a_work_is_its_owners_and_needs_read_on_the_project(works: Works) -> None:
    with acting_as(READER):
        work = await works.start("test-cycle-summary", 7, "CSV", {"testCycle": 5})
        assert (work.status, work.owner, json.loads(work.parameters_json)) == (
            QUEUED,
            2,
            {"testCycle": 5},
        )
        with pytest.raises(PermissionDenied):
            await works.start("test-cycle-summary", 8, "CSV", {"testCycle": 5})
        with pytest.raises(NotFound, match="trace-matrix"):
            await works.start("nonsense", 7, "CSV", {})
    with acting_as(STRANGER), pytest.raises(NotFound):
        await works.get(work.id)
    with acting_as(ADMIN):
        assert (await works.get(work.id)).id == work.id
        mine = await works.start("test-cycle-summary", 8, "CSV", {"testCycle": 5})
        rows, total = await works.page(0, 10)
        assert ([r.id for r in rows], total) == ([mine.id, work.id], 2)
    with acting_as(READER):
        rows, total = await works.page(0, 10)
        assert ([r.id for r in rows], total) == ([work.id], 1)


async def test_claims_are_exclusive_and_a_silent_worker_loses_its_work(works: Works) -> None:
    with acting_as(READER):
        first = await works.start("test-cycle-summary", 7, "CSV", {"testCycle": 5})
        second = await works.start("test-cycle-summary", 7, "CSV", {"testCycle": 6})
    claims = await asyncio.gather(*(works.claim(f"w{n}") for n in range(4)))
    taken = [c for c in claims if c is not None]
    assert sorted(c.id for c in taken) == sorted([first.id, second.id])
    assert all(c.status == RUNNING and c.attempts == 1 for c in taken)
    holder = next(c.claimed_by for c in taken if c.id == first.id)
    assert await works.progress(first.id, holder, 40, "half") is True
    assert await works.progress(first.id, "someone else", 50, "no") is False
    # Silent past the stale period: queued again, and after MAX_ATTEMPTS, failed.
    assert await works.requeue_stale(timedelta(seconds=-1)) == 2
    with acting_as(READER):
        assert (await works.get(first.id)).status == QUEUED
    assert await works.progress(first.id, holder, 60, "late") is False
    for _ in range(MAX_ATTEMPTS - 1):
        assert {(await works.claim("w")).id, (await works.claim("w")).id} == {  # type: ignore[union-attr]
            first.id,
            second.id,
        }
        await works.requeue_stale(timedelta(seconds=-1))
    await works.claim("w")
    await works.claim("w")
    await works.requeue_stale(timedelta(seconds=-1))
    with acting_as(READER):
        failed = await works.get(first.id)
    assert (failed.status, failed.attempts) == (FAILED, MAX_ATTEMPTS)
    assert "stopped 3 times" in failed.message


async def test_a_file_is_stored_in_chunks_by_its_holder_only(works: Works) -> None:
    with acting_as(READER):
        work = await works.start("test-cycle-summary", 7, "CSV", {"testCycle": 5})
    claimed = await works.claim("w1")
    assert claimed is not None
    assert not await works.finish(work.id, "w2", "f.csv", "text/csv", [b"x"], None, None, "")
    parts = [b"a" * 10, b"b" * 5, b"c"]
    assert await works.finish(work.id, "w1", "f.csv", "text/csv", parts, None, None, "Done")
    with acting_as(READER):
        done = await works.get(work.id)
        assert (done.status, done.size, done.progress) == (DONE, 16, 100)
        assert [c async for c in works.chunks(work.id)] == parts
    with acting_as(STRANGER), pytest.raises(NotFound):
        [c async for c in works.chunks(work.id)]
    # Kept for the retention period, then gone with the file.
    assert await works.prune(timedelta(days=1)) == 0
    assert await works.prune(timedelta(seconds=-1)) == 1
    with acting_as(READER), pytest.raises(NotFound):
        await works.get(work.id)


class _Api(BaseHTTPRequestHandler):
    """The few REST reads a test cycle summary makes, as a gateway would answer them."""

    runs = 120

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if self.headers["Authorization"] != "Bearer token-2":
            self._send(401, {"meta": {"message": "no"}})
        elif url.path == "/rest/v1/projects/7":
            self._send(200, {"data": {"id": 7, "fields": {"name": "Seven"}}})
        elif url.path == "/rest/v1/testcycles/5":
            self._send(200, {"data": {"id": 5, "project": 7, "fields": {"name": "Cycle"}}})
        elif url.path == "/rest/v1/testcycles/6":
            self._send(404, {"meta": {"message": "No test cycle with id 6."}})
        elif url.path == "/rest/v1/testcycles/5/testruns":
            start, size = int(query["startAt"][0]), int(query["maxResults"][0])
            runs = [
                {
                    "documentKey": f"RUN-{n}",
                    "fields": {
                        "name": f"Run {n}",
                        "testCase": n,
                        "testRunStatus": "PASSED" if n % 3 else "FAILED",
                        "executionDate": f"2026-11-{1 + n % 20:02d}",
                    },
                }
                for n in range(start, min(start + size, self.runs))
            ]
            info = {"startIndex": start, "resultCount": len(runs), "totalResults": self.runs}
            self._send(200, {"meta": {"pageInfo": info}, "data": runs})
        else:
            self._send(404, {"meta": {"message": f"nothing at {url.path}"}})

    def do_POST(self) -> None:
        """The ReqIF import: slow, then its answer (a refusal for an empty mapping)."""
        url = urlsplit(self.path)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if url.path != "/rest/labs/projects/7/reqif" or b"<REQ-IF/>" not in body:
            self._send(404, {"meta": {"message": f"nothing at {url.path}"}})
            return
        time.sleep(0.4)
        if b'{"types": "none"}' in body:
            self._send(400, {"meta": {"message": "1 thing cannot be mapped"}, "errors": ["x"]})
            return
        dry = parse_qs(url.query).get("dryRun") == ["true"]
        answer = {"dryRun": dry, "items": 2, "relationships": 1, "changed": [{}], "moved": []}
        self._send(200, {"meta": {}, "data": answer | {"unchanged": 3, "left": []}})

    def _send(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def api() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _Tokens(UserTokens):
    """Tokens without identity: the user's id in a word."""

    def __init__(self) -> None:
        super().__init__(lambda: None)  # type: ignore[arg-type,return-value]

    async def of(self, user: int, fresh: bool = False) -> str:
        return f"token-{user}"


async def _until_ended(worker: Worker, works: Works, *ids: str) -> None:
    """Runs ``worker`` until the works ``ids`` are DONE or FAILED, then stops it."""
    worker.start()
    try:
        async with asyncio.timeout(20):
            while True:
                with acting_as(READER):
                    states = [(await works.get(i)).status for i in ids]
                if all(s in (DONE, FAILED) for s in states):
                    return
                await asyncio.sleep(0.05)
    finally:
        await worker.stop()


async def test_the_worker_makes_a_report_from_the_api_and_fails_with_its_reason(
    works: Works, api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_module, "POLL_SECONDS", 0.05)
    reported: list[tuple[str, int, str]] = []
    progress = works.progress

    async def recording(work_id: str, worker: str, percent: int, message: str) -> bool:
        reported.append((work_id, percent, message))
        return await progress(work_id, worker, percent, message)

    monkeypatch.setattr(works, "progress", recording)
    worker = Worker(
        works,
        lambda: api,
        _Tokens(),
        concurrency=2,
        stale=timedelta(seconds=60),
        retention=timedelta(days=1),
    )
    with acting_as(READER):
        made = await works.start("test-cycle-summary", 7, "CSV", {"testCycle": 5})
        missing = await works.start("test-cycle-summary", 7, "CSV", {"testCycle": 6})
    await _until_ended(worker, works, made.id, missing.id)
    with acting_as(READER):
        done, failed = await works.get(made.id), await works.get(missing.id)
        assert (done.status, failed.status) == (DONE, FAILED)
        assert failed.message == "No test cycle with id 6."
        text = b"".join([c async for c in works.chunks(made.id)]).decode("utf-8-sig")
    assert done.file_name.endswith(".csv")
    assert done.data_from is not None
    assert done.data_to is not None
    lines = text.splitlines()
    assert lines[1] == "Run,Name,Test case,Status,Executed,Assigned to"
    assert len([line for line in lines if line.startswith("RUN-")]) == _Api.runs
    assert done.message == f"Done: {_Api.runs} rows"
    # Progress as it read, page by page, then the writing; the failed one got no further.
    steps = [(percent, message) for work, percent, message in reported if work == made.id]
    assert [m for _, m in steps] == [
        "runs read: 50 of 120",
        "runs read: 100 of 120",
        "runs read: 120 of 120",
        "Writing the file",
    ]
    assert [p for p, _ in steps] == sorted(p for p, _ in steps)
    assert not [r for r in reported if r[0] == missing.id]


async def test_an_import_apart_is_sent_as_its_owner_with_progress_while_it_waits(
    works: Works, api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_module, "POLL_SECONDS", 0.05)
    monkeypatch.setattr(worker_module, "HEARTBEAT_SECONDS", 0.05)
    reported: list[tuple[str, int, str]] = []
    progress = works.progress

    async def recording(work_id: str, worker: str, percent: int, message: str) -> bool:
        reported.append((work_id, percent, message))
        return await progress(work_id, worker, percent, message)

    monkeypatch.setattr(works, "progress", recording)

    async def document() -> AsyncIterator[bytes]:
        for piece in (b"<REQ-", b"IF/>"):
            yield piece

    with acting_as(READER):
        with pytest.raises(PermissionDenied):
            await works.start_import(7, {"mapping": {}}, document())
        dry = await works.start_import(7, {"mapping": {}, "dryRun": True}, document())
        refused = await works.start_import(
            7, {"mapping": {"types": "none"}, "dryRun": True}, document()
        )
    assert (dry.report, dry.status, dry.format) == ("reqif-import", QUEUED, "JSON")
    assert [c async for c in works.inputs(dry.id)] == [b"<REQ-", b"IF/>"]
    worker = Worker(works, lambda: api, _Tokens(), 2, timedelta(seconds=60), timedelta(days=1))
    await _until_ended(worker, works, dry.id, refused.id)
    with acting_as(READER):
        done, failed = await works.get(dry.id), await works.get(refused.id)
        answer = json.loads(b"".join([c async for c in works.chunks(dry.id)]))
        reasons = json.loads(b"".join([c async for c in works.chunks(refused.id)]))
    assert (done.status, done.progress) == (DONE, 100)
    assert done.message == (
        "Would import 2 items and 1 relationships; 1 changed, 0 moved, 3 unchanged, 0 left"
    )
    assert answer["data"]["dryRun"] is True
    assert done.file_name.startswith("reqif-import-7-")
    assert (failed.status, failed.message) == (FAILED, "1 thing cannot be mapped")
    assert reasons["errors"] == ["x"]
    # What it took in is gone once made.
    assert [c async for c in works.inputs(dry.id)] == []
    # While the API took its time, the work said so (and that its worker lived).
    steps = [m for work, _, m in reported if work == dry.id]
    assert steps[0] == "Sending the document (9 bytes) to the import"
    assert any(m.startswith("Reading, mapping and writing the document (") for m in steps[1:])
