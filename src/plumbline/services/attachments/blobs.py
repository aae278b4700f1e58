"""Attachment files: a local directory or an S3 bucket, streamed both ways.

Keys are chosen by the service (``"123/3f2a..."``), never taken from a user's file name:
only ``[A-Za-z0-9._-]`` segments separated by ``/``, so no key leaves its store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

import obstore
from obstore.store import LocalStore, S3Store

from plumbline.services.attachments.multipart import Credentials, MultipartUploads

if TYPE_CHECKING:
    from obstore import GetOptions, GetResult
    from obstore.store import S3Config

    from plumbline.common.settings import Settings

_SEGMENT = re.compile(r"[A-Za-z0-9._-]+")
_PARTIAL_SEGMENT = re.compile(r"[A-Za-z0-9._-]*")
# obstore's local put writes to ``<name>#<n>`` and renames it to ``<name>`` at the end.
_STAGED = re.compile(r"([A-Za-z0-9._-]+)#([0-9]+)")

log = logging.getLogger(__name__)

# A put buffers at most (MAX_CONCURRENCY + 1) parts; S3 wants parts of 5 MiB at least.
PART_BYTES = 5 * 1024 * 1024
MAX_CONCURRENCY = 2
# A get yields chunks of at least this size (except the last), a few hundred KiB at most.
READ_CHUNK_BYTES = 256 * 1024
# A local get reads the file in pieces of this size.
LOCAL_READ_BYTES = 1024 * 1024


class BlobMissing(Exception):
    """No blob under that key."""


class _PutCancelled(Exception):
    """Raised into an upload's body when its ``put`` is cancelled, so the upload aborts."""


def check_key(key: str) -> str:
    """The key itself if it is well formed; ValueError otherwise."""
    segments = key.split("/")
    if not all(_SEGMENT.fullmatch(s) and s not in (".", "..") for s in segments):
        raise ValueError(
            f"bad blob key {key!r}: use [A-Za-z0-9._-] segments separated by '/', "
            "none empty, '.' or '..'"
        )
    return key


def _check_prefix(prefix: str) -> None:
    head, _, tail = prefix.rpartition("/")
    if head:
        check_key(head)
    elif prefix.startswith("/"):
        raise ValueError(f"bad blob key prefix {prefix!r}: it must not start with '/'")
    if not _PARTIAL_SEGMENT.fullmatch(tail):
        raise ValueError(f"bad blob key prefix {prefix!r}")


def _is_key(path: str) -> bool:
    try:
        check_key(path)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, order=True)
class Partial:
    """What a put cut off by a crash left: bytes stored under no key yet. ``since``: when
    it was last written (a local staged file) or begun (an S3 multipart upload)."""

    key: str
    since: datetime
    #: The staged file's path in the store (``key#1``), or the multipart upload's id.
    ref: str


class BlobStore:
    """Blobs under keys in one obstore store (``LocalStore`` or ``S3Store``)."""

    def __init__(
        self,
        store: LocalStore | S3Store,
        description: str,
        uploads: MultipartUploads | None = None,
    ) -> None:
        self._store = store
        self.description = description
        self._uploads = uploads
        self._warned = False

    def __repr__(self) -> str:
        return f"BlobStore({self.description})"

    @classmethod
    def from_settings(cls, settings: Settings) -> BlobStore:
        """The store ``settings.blob_url_resolved()`` names, with the ``s3_*`` settings."""
        return cls.from_url(
            settings.blob_url_resolved(),
            endpoint=settings.s3_endpoint,
            region=settings.s3_region,
            access_key_id=settings.s3_access_key_id,
            secret_access_key=settings.s3_secret_access_key,
        )

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        endpoint: str | None = None,
        region: str = "us-east-1",
        access_key_id: str | None = None,
        secret_access_key: str | None = None,
    ) -> BlobStore:
        """A store for ``file:///absolute/dir``, ``s3://bucket`` or ``s3://bucket/prefix``."""
        parts = urlsplit(url)
        if parts.query or parts.fragment:
            raise ValueError(f"blob URL {url!r}: no query or fragment allowed")
        if parts.scheme == "file":
            if parts.netloc not in ("", "localhost"):
                raise ValueError(
                    f"blob URL {url!r}: the path must be absolute, as in file:///absolute/dir"
                )
            path = Path(unquote(parts.path))
            if not path.is_absolute():
                raise ValueError(f"blob URL {url!r}: the path must be absolute")
            return cls(LocalStore(path, mkdir=True), path.as_uri())
        if parts.scheme == "s3":
            bucket = parts.netloc
            if not bucket or "@" in bucket or ":" in bucket:
                raise ValueError(f"blob URL {url!r}: expected s3://bucket or s3://bucket/prefix")
            prefix = unquote(parts.path).strip("/") or None
            if prefix is not None:
                check_key(prefix)
            config: S3Config = {"region": region, "virtual_hosted_style_request": False}
            if endpoint:
                config["endpoint"] = endpoint
            if access_key_id:
                config["access_key_id"] = access_key_id
            if secret_access_key:
                config["secret_access_key"] = secret_access_key
            store = S3Store(
                bucket,
                prefix=prefix,
                config=config,
                client_options={"allow_http": bool(endpoint and endpoint.startswith("http://"))},
            )
            where = f"s3://{bucket}" + (f"/{prefix}" if prefix else "")
            credentials = Credentials.given_or_env(access_key_id, secret_access_key)
            uploads = (
                MultipartUploads(endpoint, bucket, region, credentials) if credentials else None
            )
            return cls(store, where + (f" at {endpoint}" if endpoint else ""), uploads)
        raise ValueError(
            f"blob URL {url!r}: unknown scheme {parts.scheme!r}; "
            "use file:///absolute/dir or s3://bucket[/prefix]"
        )

    async def put(self, key: str, chunks: AsyncIterable[bytes]) -> None:
        """Stores the chunks under ``key``, replacing any blob there; all or nothing.

        Memory stays within a few parts of 5 MiB whatever the size (a multipart upload
        on S3, a temporary file locally). Should ``chunks`` raise, or the call be
        cancelled, the upload is aborted and nothing is stored.
        """
        check_key(key)
        loop = asyncio.get_running_loop()
        stop: asyncio.Future[None] = loop.create_future()

        async def body() -> AsyncIterator[bytes]:
            # Each chunk is awaited alongside ``stop``: a cancelled put fails the upload
            # from inside, which obstore aborts; dropping it would leave a multipart
            # upload behind on S3.
            iterator = aiter(chunks)
            while True:
                step = asyncio.ensure_future(anext(iterator, None))
                try:
                    await asyncio.wait((step, stop), return_when=asyncio.FIRST_COMPLETED)
                finally:
                    if not step.done():  # put cancelled, or this body dropped
                        step.cancel()
                        with contextlib.suppress(asyncio.CancelledError, Exception):
                            await step
                if step.cancelled():
                    raise _PutCancelled
                chunk = step.result()
                if chunk is None:
                    return
                yield chunk

        upload = asyncio.ensure_future(
            obstore.put_async(
                self._store,
                key,
                body(),
                chunk_size=PART_BYTES,
                max_concurrency=MAX_CONCURRENCY,
            )
        )
        try:
            await asyncio.shield(upload)
        except asyncio.CancelledError:
            if not upload.done():
                stop.set_result(None)
                with contextlib.suppress(Exception):
                    await upload
            raise
        finally:
            if not stop.done():
                stop.cancel()

    async def get(self, key: str, start: int = 0, end: int | None = None) -> AsyncIterator[bytes]:
        """Bytes ``[start, end)`` of the blob (to its end if ``end`` is None), in chunks.

        A range past the blob's end is cut short there. Raises BlobMissing, before
        anything is yielded, if there is no such blob.
        """
        check_key(key)
        if start < 0 or (end is not None and end < start):
            raise ValueError(f"bad byte range [{start}, {end})")
        if end == start:
            if await self.size(key) is None:
                raise BlobMissing(key)
            return
        if isinstance(self._store, LocalStore) and self._store.prefix is not None:
            async for piece in _read_local(self._store.prefix / key, start, end):
                yield piece
            return
        result = await self._get_range(key, start, end)
        if result is None:
            return
        async for chunk in result.stream(min_chunk_size=READ_CHUNK_BYTES):
            yield chunk

    async def _get_range(self, key: str, start: int, end: int | None) -> GetResult | None:
        """The object store's answer for bytes ``[start, end)``; None for a range that
        starts at or after the blob's end."""
        options: GetOptions = {}
        if end is not None:
            options["range"] = (start, end)
        elif start:
            options["range"] = {"offset": start}
        try:
            return await obstore.get_async(self._store, key, options=options)
        except FileNotFoundError:
            raise BlobMissing(key) from None
        except Exception:
            # Both stores refuse a range that starts at or after the end.
            size = await self.size(key)
            if size is None:
                raise BlobMissing(key) from None
            if start >= size:
                return None
            raise

    async def size(self, key: str) -> int | None:
        """The blob's length in bytes, None if there is no such blob."""
        check_key(key)
        try:
            meta = await obstore.head_async(self._store, key)
        except FileNotFoundError:
            return None
        return meta["size"]

    async def delete(self, key: str) -> None:
        """Removes the blob; a missing one is not an error."""
        check_key(key)
        with contextlib.suppress(FileNotFoundError):
            await obstore.delete_async(self._store, key)

    async def keys(self, prefix: str = "") -> list[str]:
        """The keys starting with ``prefix`` (plain string prefix), sorted."""
        _check_prefix(prefix)
        directory = prefix.rpartition("/")[0]
        found: list[str] = []
        async for batch in obstore.list(self._store, prefix=directory or None):
            found.extend(
                meta["path"]
                for meta in batch
                if meta["path"].startswith(prefix) and _is_key(meta["path"])
            )
        return sorted(found)

    async def partials(self, prefix: str = "") -> list[Partial]:
        """What cut-off puts of keys starting with ``prefix`` left, by key.

        Locally, obstore writes a put to ``<key>#<n>`` beside the key and renames it at the
        end; on S3 a put is a multipart upload. Neither shows among ``keys``.
        """
        _check_prefix(prefix)
        if isinstance(self._store, LocalStore):
            root = self._store.prefix
            return [] if root is None else await asyncio.to_thread(_staged, root, prefix)
        if self._uploads is None:
            if not self._warned:
                self._warned = True
                log.warning(
                    "%s: no S3 access key (PLUMBLINE_S3_ACCESS_KEY_ID or AWS_ACCESS_KEY_ID) "
                    "to list incomplete multipart uploads with; give the bucket a lifecycle "
                    "rule that aborts them",
                    self.description,
                )
            return []
        base = f"{self._store.prefix}/" if self._store.prefix else ""
        found = [
            Partial(upload.key.removeprefix(base), upload.initiated, upload.upload_id)
            for upload in await self._uploads.list(base + prefix)
        ]
        return sorted(p for p in found if p.key.startswith(prefix) and _is_key(p.key))

    async def remove_partial(self, partial: Partial) -> None:
        """Removes what a cut-off put left (``partials``); gone already is not an error."""
        check_key(partial.key)
        if isinstance(self._store, LocalStore):
            name, _, number = partial.ref.rpartition("#")
            if name != partial.key or not number.isdigit() or self._store.prefix is None:
                raise ValueError(f"bad staged file {partial.ref!r} for key {partial.key!r}")
            await asyncio.to_thread((self._store.prefix / partial.ref).unlink, missing_ok=True)
        elif self._uploads is not None:
            base = f"{self._store.prefix}/" if self._store.prefix else ""
            await self._uploads.abort(base + partial.key, partial.ref)


def _staged(root: Path, prefix: str) -> list[Partial]:
    """The staged files (``<key>#<n>``) under ``root`` of keys starting with ``prefix``."""
    found: list[Partial] = []
    for folder, _dirs, files in os.walk(root / prefix.rpartition("/")[0]):
        for name in files:
            staged = _STAGED.fullmatch(name)
            if staged is None:
                continue
            path = Path(folder, name)
            key = path.parent.relative_to(root).joinpath(staged[1]).as_posix()
            if not key.startswith(prefix) or not _is_key(key):
                continue
            with contextlib.suppress(FileNotFoundError):  # finished or removed meanwhile
                since = datetime.fromtimestamp(path.stat().st_mtime, UTC)
                found.append(Partial(key, since, f"{key}#{staged[2]}"))
    return sorted(found)


async def _read_local(path: Path, start: int, end: int | None) -> AsyncIterator[bytes]:
    """Bytes ``[start, end)`` of a local file, read in a thread a MiB at a time.

    obstore's local stream hands over small pieces at about 150 MB/s; plain reads of one
    open file go at the disk's speed. The file stays open to the end, so a blob removed
    meanwhile (its file replaced and committed) is still read whole.
    """
    try:
        handle = await asyncio.to_thread(path.open, "rb")
    except FileNotFoundError:
        raise BlobMissing(str(path.name)) from None
    try:
        await asyncio.to_thread(handle.seek, start)
        left = None if end is None else end - start
        while left is None or left > 0:
            size = LOCAL_READ_BYTES if left is None else min(LOCAL_READ_BYTES, left)
            piece = await asyncio.to_thread(handle.read, size)
            if not piece:
                return
            if left is not None:
                left -= len(piece)
            yield piece
    finally:
        handle.close()
