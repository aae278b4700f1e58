"""An attachment's file: bytes streamed into the blob store and out of it.

An upload writes a new blob under a fresh key, then commits the record's new file in one
transaction; only then is the old blob removed. Until the commit, readers get the old
file. Every blob that is not yet (or no longer) a committed record's file is listed in
``blobs``, so an upload cut off at any point, even by a crash, leaves nothing behind for
good: :meth:`Files.sweep` removes what such failures left, the bytes a crashed upload had
written included.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import unicodedata
import uuid
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, select

from plumbline.common.access import AccessCache, Action
from plumbline.common.dates import utcnow
from plumbline.common.db import Database
from plumbline.common.errors import InvalidArgument, NotFound, TooLarge, size_text
from plumbline.common.itemsclient import ItemsClient
from plumbline.common.outbox import Outbox
from plumbline.services.attachments.api.messages import snapshot
from plumbline.services.attachments.blobs import BlobMissing, BlobStore
from plumbline.services.attachments.models import blobs
from plumbline.services.attachments.records import Domain, check_lock, event, load, touch

log = logging.getLogger(__name__)

#: The keys uploads write to: ``<attachment>/<uuid>``. The sweep removes no other key's
#: partial uploads (a bucket may hold other things).
_UPLOAD_KEY = re.compile(r"[0-9]+/[0-9a-f]{32}")
MAX_NAME = 1024
_MIME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$")
OCTET_STREAM = "application/octet-stream"


@dataclass(frozen=True)
class FileInfo:
    """A stored file as the record describes it."""

    file_name: str
    mime_type: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Served:
    """What a download sends: the file, and the bytes [start, end) of it."""

    file: FileInfo
    start: int
    end: int
    partial: bool
    unsatisfiable: bool = False


def file_name(given: str) -> str:
    """The name a file is kept and served under: data, never a path. Control characters
    go; an empty name becomes ``file``."""
    name = "".join(c for c in given if unicodedata.category(c) != "Cc").strip()
    if len(name) > MAX_NAME:
        raise InvalidArgument(f"The file name must be at most {MAX_NAME} characters.")
    return name or "file"


def mime_type(given: str) -> str:
    """The part's content type without parameters, or ``application/octet-stream``."""
    bare = given.split(";")[0].strip().lower()
    return bare if _MIME.fullmatch(bare) and len(bare) <= 255 else OCTET_STREAM


def _byte_range(
    size: int, first: int | None, last: int | None, suffix: int | None
) -> tuple[int, int, bool] | None:
    """The bytes ``[start, end)`` to serve of a file of ``size`` bytes and whether they are
    part of it: the whole file, ``first``-``last`` (cut at the end) or the last ``suffix``
    bytes. None when the range asked for lies outside the file."""
    if suffix is not None:
        if suffix <= 0 or size == 0:
            return None
        return max(0, size - suffix), size, True
    if first is not None:
        if first >= size:
            return None
        return first, size if last is None else min(last + 1, size), True
    return 0, size, False


class Files(Domain):
    """Upload, download and the sweep of leftover blobs."""

    def __init__(
        self,
        db: Database,
        outbox: Outbox,
        items: ItemsClient,
        access: AccessCache,
        store: BlobStore,
        max_bytes: int,
        stale_upload: timedelta,
    ) -> None:
        super().__init__(db, outbox, items, access)
        self.store = store
        self.max_bytes = max_bytes
        #: How long an upload may take before the sweep takes what it stored for a
        #: leftover (``PLUMBLINE_STALE_UPLOAD_SECONDS``).
        self.stale_upload = stale_upload

    async def check_upload(self, attachment_id: int) -> None:
        """Refuses unless the caller may upload a file to the attachment now."""
        access = await self.access.current()
        async with self.db.read() as session:
            row = await load(session, attachment_id, access, Action.WRITE)
        check_lock(row, access.principal)

    async def upload(
        self, attachment_id: int, given_name: str, given_type: str, data: AsyncIterable[bytes]
    ) -> FileInfo:
        """``PUT /attachments/{id}/file``: refused before any byte is stored unless the
        caller may change the attachment; the record changes only once every byte is."""
        access = await self.access.current()
        caller = access.principal
        name, kind = file_name(given_name), mime_type(given_type)
        await self.check_upload(attachment_id)
        key = f"{attachment_id}/{uuid.uuid4().hex}"
        async with self.db.transaction() as session:
            await session.execute(blobs.insert().values(key=key, state="uploading", since=utcnow()))
        digest = hashlib.sha256()
        size = 0

        async def counted() -> AsyncIterator[bytes]:
            nonlocal size
            async for chunk in data:
                size += len(chunk)
                if size > self.max_bytes:
                    raise TooLarge(f"A file must be at most {size_text(self.max_bytes)}.")
                digest.update(chunk)
                yield chunk

        try:
            await self.store.put(key, counted())
            info = FileInfo(name, kind, size, digest.hexdigest())
            catalog = await self.items.catalog()
            async with self.outbox.transaction() as session:
                row = await load(session, attachment_id, access, Action.WRITE, for_update=True)
                check_lock(row, caller)
                await touch(
                    session,
                    row,
                    caller,
                    blob=key,
                    file_name=name,
                    mime_type=kind,
                    file_size=size,
                    sha256=info.sha256,
                )
                await session.execute(delete(blobs).where(blobs.c.key == key))
                if row.blob:
                    await session.execute(
                        blobs.insert().values(key=row.blob, state="dropped", since=utcnow())
                    )
                after = await load(session, attachment_id, access)
                await self.outbox.add(
                    session,
                    event(
                        "updated",
                        after,
                        caller,
                        after.version,
                        fileChanged=True,
                        **snapshot(after, catalog, access),
                    ),
                )
        except BaseException:
            await asyncio.shield(self.discard(key))
            raise
        if row.blob:
            await self.discard(row.blob)
        return info

    async def download(
        self,
        attachment_id: int,
        first: int | None = None,
        last: int | None = None,
        suffix: int | None = None,
        if_range: str | None = None,
    ) -> tuple[Served, AsyncIterator[bytes] | None]:
        """``GET /attachments/{id}/file``: what is served and its bytes; a range asked for
        (``first``-``last``, or the last ``suffix`` bytes) that lies outside the file is
        ``unsatisfiable``, with no bytes. With ``if_range`` (an ETag) that is no longer the
        file's, the whole file is served."""
        access = await self.access.current()
        async with self.db.read() as session:
            row = await load(session, attachment_id, access)
        if not row.blob:
            raise NotFound(
                f"Attachment {attachment_id} has no file yet; upload one with "
                f"PUT /attachments/{attachment_id}/file."
            )
        info = FileInfo(row.file_name, row.mime_type, int(row.file_size), row.sha256)
        if if_range is not None and if_range.strip() != f'"{info.sha256}"':
            first = suffix = None
        served = _byte_range(info.size, first, last, suffix)
        if served is None:
            return Served(info, 0, 0, False, unsatisfiable=True), None
        start, end, partial = served
        chunks = self.store.get(row.blob, start, end)
        try:
            head = await anext(chunks) if end > start else b""
        except BlobMissing:
            raise NotFound(f"The file of attachment {attachment_id} is missing.") from None
        except StopAsyncIteration:
            head = b""

        async def stream() -> AsyncIterator[bytes]:
            if head:
                yield head
            async for chunk in chunks:
                yield chunk

        return Served(info, start, end, partial), stream()

    async def discard(self, key: str) -> None:
        """Removes a blob that is no committed record's file, then forgets it."""
        try:
            await self.store.delete(key)
        except Exception:
            log.warning("could not remove blob %s; the sweep will retry", key, exc_info=True)
            return
        async with self.db.transaction() as session:
            await session.execute(delete(blobs).where(blobs.c.key == key))

    async def sweep(self) -> int:
        """Removes what failures left: dropped blobs, uploads that never committed within
        ``stale_upload``, and the bytes that puts cut off by a crash stored on their way
        (staged files, incomplete multipart uploads) once that long has passed since they
        were last written or begun. How many blobs and partial uploads went."""
        stale = utcnow() - self.stale_upload
        async with self.db.read() as session:
            rows: list[Any] = list(
                (
                    await session.execute(
                        select(blobs.c.key).where(
                            (blobs.c.state == "dropped") | (blobs.c.since < stale)
                        )
                    )
                ).all()
            )
        for row in rows:
            await self.discard(row.key)
        # No row is needed: a crash's partial upload outlives the row the loop above drops.
        partials = [
            p
            for p in await self.store.partials()
            if p.since < stale and _UPLOAD_KEY.fullmatch(p.key)
        ]
        removed = 0
        for partial in partials:
            try:
                await self.store.remove_partial(partial)
            except Exception:
                log.warning(
                    "could not remove the partial upload of blob %s; the sweep will retry",
                    partial.key,
                    exc_info=True,
                )
            else:
                removed += 1
        return len(rows) + removed
