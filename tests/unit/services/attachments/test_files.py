"""The sweep of what failed and crashed uploads left, on both stores: rows, blobs, and the
bytes of puts a crash cut off; never what an upload under way is writing."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from grpc import aio
from sqlalchemy import select

from plumbline.common.dates import utcnow
from plumbline.common.itemsclient import ItemsClient
from plumbline.services.attachments import files as files_module
from plumbline.services.attachments.blobs import BlobStore
from plumbline.services.attachments.files import Files
from plumbline.services.attachments.models import blobs
from tests.seaweed import SeaweedFS
from tests.unit.services.attachments.conftest import MiB, StoreAt, crash_puts
from tests.unit.services.conftest import access_cache, migrated, outbox_for

STALE = timedelta(hours=1)


def _no_items() -> aio.Channel:
    raise AssertionError("the sweep asks items nothing")


async def _files(store: BlobStore, tmp_path: Path) -> Files:
    db = await migrated("attachments", tmp_path)
    items = ItemsClient(_no_items, "attachments")
    return Files(db, outbox_for(db, "attachments"), items, access_cache(), store, 2**30, STALE)


async def _rows(files: Files) -> dict[str, str]:
    async with files.db.read() as session:
        found = await session.execute(select(blobs.c.key, blobs.c.state))
        return {row.key: row.state for row in found}


async def _add_row(files: Files, key: str, state: str, since: datetime) -> None:
    async with files.db.transaction() as session:
        await session.execute(blobs.insert().values(key=key, state=state, since=since))


async def test_the_sweep_removes_what_a_crash_left_and_nothing_under_way(
    store_at: StoreAt,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = store_at.open()
    weed: SeaweedFS | None = request.getfixturevalue("seaweedfs") if store_at.kind == "s3" else None
    files = await _files(store, tmp_path)
    crashed, orphan, live = (f"{n}/{uuid.uuid4().hex}" for n in (7, 8, 9))
    foreign = "7/not-an-upload"  # no upload writes such a key: another program's, say
    crash_puts(store_at, sorted([crashed, orphan, foreign]), weed)
    old = max(p.since for p in await store.partials())
    # The upload under way begins a second later at least (S3 counts whole seconds).
    while utcnow() < old + timedelta(seconds=1.5):
        time.sleep(0.05)
    release = asyncio.Event()

    async def body() -> AsyncIterator[bytes]:
        for _ in range(11):
            yield bytes(MiB)
        await release.wait()
        yield b"the end"

    put = asyncio.ensure_future(store.put(live, body()))
    try:
        fresh = await _partial_of(store, live)
        # The crashed upload's row is still there; the orphan's went with an older sweep,
        # which removed rows only; the live upload's row is as fresh as its bytes.
        await _add_row(files, crashed, "uploading", old - timedelta(seconds=5))
        await _add_row(files, live, "uploading", fresh)
        # Now is one STALE after a moment between the crash and the live upload's start.
        now = old + (fresh - old) / 2 + STALE
        monkeypatch.setattr(files_module, "utcnow", lambda: now)
        assert await files.sweep() == 3  # the crashed row, and two partial uploads
        assert sorted(p.key for p in await store.partials()) == sorted([foreign, live])
        assert await _rows(files) == {live: "uploading"}
        assert await files.sweep() == 0
    finally:
        release.set()
    await put
    assert await store.size(live) == 11 * MiB + len(b"the end")
    for partial in await store.partials():
        await store.remove_partial(partial)


async def test_the_sweep_removes_dropped_and_stale_blobs(
    store: BlobStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = await _files(store, tmp_path)
    now = utcnow()
    monkeypatch.setattr(files_module, "utcnow", lambda: now)
    for key in ("1/dropped", "1/stale", "1/recent"):
        await store.put(key, _one(key.encode()))
    await _add_row(files, "1/dropped", "dropped", now)
    await _add_row(files, "1/stale", "uploading", now - STALE - timedelta(seconds=1))
    await _add_row(files, "1/recent", "uploading", now - STALE + timedelta(seconds=1))
    assert await files.sweep() == 2
    assert await store.keys() == ["1/recent"]
    assert await _rows(files) == {"1/recent": "uploading"}


async def _one(data: bytes) -> AsyncIterator[bytes]:
    yield data


async def _partial_of(store: BlobStore, key: str) -> datetime:
    """When the put of ``key`` under way began or last wrote, once it has stored bytes."""
    deadline = asyncio.get_running_loop().time() + 30
    while asyncio.get_running_loop().time() < deadline:
        found = [p.since for p in await store.partials(key)]
        if found:
            return found[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"the put of {key} stored nothing")
