"""The worker of a reports replica: claims queued works, up to ``concurrency`` at once,
makes each (read, spool, render in a thread) and stores its file. Queued works are
looked for when one is started here (``wake``) and every ``POLL_SECONDS`` otherwise, so
any replica takes work queued through another; works whose worker went silent are queued
again, and old ones pruned, every ``TIDY_SECONDS``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import tempfile
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx

from plumbline.common.tokens import UserTokens
from plumbline.services.reports import render, reqif
from plumbline.services.reports.builders import BUILDERS, EXPORTS, Spool
from plumbline.services.reports.reading import Reader, ReportFailed
from plumbline.services.reports.reqif import Progress
from plumbline.services.reports.works import FAILED, REQIF_IMPORT, Works

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0
TIDY_SECONDS = 30.0
#: Bytes a stored chunk of a file holds.
CHUNK = 256 * 1024
#: Seconds between heartbeats while a work is being made.
HEARTBEAT_SECONDS = 5.0
#: The longest a ReqIF import sent to the API may take to answer.
IMPORT_SECONDS = 3600.0


def _chunks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as made:
        while data := made.read(CHUNK):
            yield data


class Worker:
    """Makes works, as many at once as ``concurrency`` allows."""

    def __init__(
        self,
        works: Works,
        base_url: Callable[[], str | None],
        tokens: UserTokens,
        concurrency: int,
        stale: timedelta,
        retention: timedelta,
    ) -> None:
        self.works = works
        self.base_url = base_url
        self.tokens = tokens
        self.concurrency = concurrency
        self.stale = stale
        self.retention = retention
        self.name = f"reports-{uuid.uuid4().hex[:12]}"
        self.http = httpx.AsyncClient(trust_env=False, timeout=60.0, follow_redirects=False)
        self.running: set[asyncio.Task[None]] = set()
        self.asked = asyncio.Event()
        self.loop: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.loop = asyncio.create_task(self._claim_forever(), name="reports-worker")

    def wake(self) -> None:
        """A work was queued here: look at once."""
        self.asked.set()

    async def stop(self) -> None:
        """Stops claiming, cancels the works being made and queues them again."""
        tasks = [t for t in (self.loop, *self.running) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        with contextlib.suppress(Exception):
            await self.works.release(self.name)
        await self.http.aclose()

    async def _claim_forever(self) -> None:
        tidied = 0.0
        clock = asyncio.get_running_loop().time
        while True:
            try:
                if clock() - tidied > TIDY_SECONDS:
                    tidied = clock()
                    await self.works.requeue_stale(self.stale)
                    await self.works.prune(self.retention)
                while len(self.running) < self.concurrency:
                    row = await self.works.claim(self.name)
                    if row is None:
                        break
                    task = asyncio.create_task(self._make(row), name=f"report-{row.id}")
                    self.running.add(task)
                    task.add_done_callback(self._ended)
            except Exception:  # a lost database: try again after the pause
                log.exception("reports: claiming failed")
            self.asked.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.asked.wait(), POLL_SECONDS)

    def _ended(self, task: asyncio.Task[None]) -> None:
        self.running.discard(task)
        self.asked.set()  # a place is free

    def reader_for(self, user: int) -> Reader:
        """A reader of the REST API as ``user``."""
        return Reader(self.http, self.base_url, self.tokens, user)

    async def _make(self, row: Any) -> None:
        reader = self.reader_for(int(row.owner))

        async def progress(percent: int, message: str) -> None:
            if not await self.works.progress(row.id, self.name, percent, message):
                raise asyncio.CancelledError  # queued again elsewhere: stop making it

        beating = asyncio.create_task(self._beat(row.id))
        try:
            if row.report == REQIF_IMPORT:
                await self._import(row, reader, progress)
                return
            with tempfile.TemporaryDirectory(prefix="plumbline-report-") as directory:
                path, media_type, done = await self._write(row, reader, Path(directory), progress)
                suffix = path.suffix
                name = f"{row.report}-{row.project}-{row.created_at:%Y%m%d-%H%M%S}{suffix}"
                await self.works.finish(
                    row.id,
                    self.name,
                    name,
                    media_type,
                    _chunks(path),
                    reader.first_read,
                    reader.last_read,
                    done,
                )
        except ReportFailed as exc:
            await self.works.fail(row.id, self.name, str(exc))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("reports: making %s failed", row.id)
            await self.works.fail(
                row.id, self.name, "The report could not be made (an internal error, logged)."
            )
        finally:
            beating.cancel()

    async def _import(self, row: Any, reader: Reader, progress: Progress) -> None:
        """Sends the work's document to the API's ReqIF import as its owner; the answer
        (or the refusal, with its reasons) is the work's file."""
        params = json.loads(row.parameters_json)
        document = b"".join([data async for data in self.works.inputs(row.id)])
        mapping = json.dumps(params.get("mapping") or {}).encode()
        name = str(params.get("fileName") or "document.reqif")
        query = {flag: "true" for flag in ("dryRun", "deleteLeft") if params.get(flag)}
        await progress(5, f"Sending the document ({len(document)} bytes) to the import")
        sending = asyncio.create_task(
            reader.send_file(
                f"labs/projects/{row.project}/reqif",
                query,
                lambda: {
                    "file": (name, document, "application/octet-stream"),
                    "mapping": (None, mapping),
                },
                IMPORT_SECONDS,
            )
        )
        began = asyncio.get_running_loop().time()
        while not sending.done():
            await asyncio.wait({sending}, timeout=HEARTBEAT_SECONDS)
            if not sending.done():
                spent = asyncio.get_running_loop().time() - began
                await progress(
                    10, f"Reading, mapping and writing the document ({spent:.0f} s so far)"
                )
        answer = sending.result()
        if answer.status_code >= 500:
            raise ConnectionError(f"the import answered {answer.status_code}")
        body = answer.json()
        stamp = f"{row.created_at:%Y%m%d-%H%M%S}"
        if answer.status_code == 200:
            status, said = "DONE", _summary(body.get("data", {}))
        else:
            status, said = FAILED, str(body.get("meta", {}).get("message", answer.status_code))
        await self.works.finish(
            row.id,
            self.name,
            f"{REQIF_IMPORT}-{row.project}-{stamp}.json",
            "application/json",
            [answer.content],
            reader.first_read,
            reader.last_read,
            said,
            status,
        )

    async def _write(
        self, row: Any, reader: Reader, directory: Path, progress: Progress
    ) -> tuple[Path, str, str]:
        """Makes the work's file in ``directory``: its path, media type and last words."""
        params = json.loads(row.parameters_json)
        if row.report in EXPORTS:
            media_type, suffix = reqif.FORMATS[row.format]
            path = directory / f"export{suffix}"
            pieces = reqif.export(
                reader, int(row.project), reqif.scope_of(params), row.format == "REQIFZ", progress
            )
            with path.open("wb") as out:
                async for data in pieces:
                    await asyncio.to_thread(out.write, data)
            return path, media_type, f"Done: {path.stat().st_size} bytes"
        spool = Spool(directory)
        try:
            document = await BUILDERS[row.report](reader, int(row.project), params, spool, progress)
            await progress(97, "Writing the file")
            media_type, suffix = render.FORMATS[row.format]
            path = directory / f"report{suffix}"
            rows = await asyncio.to_thread(render.write, document, path, row.format)
        finally:
            spool.close()
        return path, media_type, f"Done: {rows} rows"

    async def _beat(self, work_id: str) -> None:
        """Says the worker lives while a long read or write gives no progress."""
        while True:
            await asyncio.sleep(HEARTBEAT_SECONDS)
            with contextlib.suppress(Exception):
                await self.works.heartbeat(work_id, self.name)


def _summary(data: dict[str, Any]) -> str:
    """An import's answer in a line: what it made, changed, moved and left."""
    verb = "Would import" if data.get("dryRun") else "Imported"
    said = (
        f"{verb} {data.get('items', 0)} items and {data.get('relationships', 0)} "
        f"relationships; {len(data.get('changed', []))} changed, "
        f"{len(data.get('moved', []))} moved, {data.get('unchanged', 0)} unchanged, "
        f"{len(data.get('left', []))} left"
    )
    if data.get("deleted") or data.get("relationshipsDeleted"):
        said += f" ({data.get('deleted', 0)} deleted)"
    return said
