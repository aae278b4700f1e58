"""The blob store, on a local directory and on a real S3 server (SeaweedFS)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from plumbline.common.dates import utcnow
from plumbline.common.settings import Settings
from plumbline.services.attachments.blobs import BlobMissing, BlobStore, Partial
from tests.seaweed import SeaweedFS
from tests.unit.services.attachments.conftest import StoreAt, crash_puts, staged_files

MiB = 1024 * 1024


@pytest.fixture
def _no_plumbline_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("PLUMBLINE_"):
            monkeypatch.delenv(name)


async def stream(total: int, chunk: int, seed: int = 1) -> AsyncIterator[bytes]:
    """``total`` pseudo-random bytes in chunks of ``chunk``, made as they are asked for."""
    rng = random.Random(seed)
    sent = 0
    while sent < total:
        size = min(chunk, total - sent)
        yield rng.randbytes(size)
        sent += size


def expected(total: int, chunk: int, seed: int = 1) -> bytes:
    rng = random.Random(seed)
    return b"".join(rng.randbytes(min(chunk, total - i)) for i in range(0, total, chunk))


async def failing(good: int, chunk: int = MiB) -> AsyncIterator[bytes]:
    """``good`` bytes, then an error."""
    async for piece in stream(good, chunk):
        yield piece
    raise RuntimeError("the client went away")


async def read(store: BlobStore, key: str, start: int = 0, end: int | None = None) -> bytes:
    return b"".join([chunk async for chunk in store.get(key, start, end)])


async def one(data: bytes) -> AsyncIterator[bytes]:
    yield data


def rss() -> int:
    """This process's resident set size, bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


async def test_a_streamed_body_comes_back_byte_for_byte(store: BlobStore) -> None:
    total = 12 * MiB + 12345
    await store.put("7/abc", stream(total, 100_000))
    assert await store.size("7/abc") == total
    digest = hashlib.sha256()
    sizes = []
    async for chunk in store.get("7/abc"):
        digest.update(chunk)
        sizes.append(len(chunk))
    assert digest.hexdigest() == hashlib.sha256(expected(total, 100_000)).hexdigest()
    assert len(sizes) > 10
    assert all(256 * 1024 <= s <= 2 * MiB for s in sizes[:-1])


async def test_an_empty_blob(store: BlobStore) -> None:
    await store.put("e", stream(0, 1))
    assert await store.size("e") == 0
    assert await read(store, "e") == b""
    assert await store.keys() == ["e"]


async def test_a_put_replaces_the_blob(store: BlobStore) -> None:
    await store.put("k", one(b"first version"))
    await store.put("k", one(b"second"))
    assert await read(store, "k") == b"second"


async def test_ranges(store: BlobStore) -> None:
    data = expected(3 * MiB + 7, 65536)
    await store.put("r/1", stream(3 * MiB + 7, 65536))
    size = len(data)
    for start, end in [
        (0, 10),
        (10, 20),
        (MiB - 3, 2 * MiB + 5),
        (size - 10, None),
        (5, None),
        (0, None),
        (size - 1, size),
        (100, size + 1000),  # cut short at the end
        (7, 7),
        (size, None),
        (size + 5, None),
        (size + 5, size + 10),
    ]:
        assert await read(store, "r/1", start, end) == data[start:end], (start, end)
    with pytest.raises(ValueError, match="bad byte range"):
        await read(store, "r/1", 10, 5)
    with pytest.raises(ValueError, match="bad byte range"):
        await read(store, "r/1", -1)


async def test_a_missing_blob(store: BlobStore) -> None:
    for start, end in [(0, None), (5, None), (0, 10), (3, 3)]:
        chunks = store.get("no/such", start, end)
        with pytest.raises(BlobMissing):
            await anext(chunks)
    assert await store.size("no/such") is None
    await store.delete("no/such")


async def test_delete(store: BlobStore) -> None:
    await store.put("d/1", one(b"x" * 1000))
    await store.delete("d/1")
    assert await store.size("d/1") is None
    assert await store.keys() == []
    await store.delete("d/1")


async def test_keys_by_prefix(store: BlobStore) -> None:
    for key in ["1/a", "1/b", "12/c", "2/d", "top"]:
        await store.put(key, one(key.encode()))
    assert await store.keys() == ["1/a", "1/b", "12/c", "2/d", "top"]
    assert await store.keys("1/") == ["1/a", "1/b"]
    assert await store.keys("1") == ["1/a", "1/b", "12/c"]
    assert await store.keys("12/c") == ["12/c"]
    assert await store.keys("t") == ["top"]
    assert await store.keys("3/") == []


async def test_a_failed_body_leaves_no_blob(
    store: BlobStore, request: pytest.FixtureRequest
) -> None:
    with pytest.raises(RuntimeError, match="went away"):
        await store.put("f/1", failing(12 * MiB))  # past the first parts of 5 MiB
    with pytest.raises(RuntimeError, match="went away"):
        await store.put("f/2", failing(1000))
    assert await store.size("f/1") is None
    assert await store.size("f/2") is None
    assert await store.keys() == []
    await _no_multipart_uploads(request)


async def test_a_cancelled_put_leaves_no_blob(
    store: BlobStore, request: pytest.FixtureRequest
) -> None:
    sent = 0

    async def slow() -> AsyncIterator[bytes]:
        nonlocal sent
        async for piece in stream(64 * MiB, MiB):
            sent += len(piece)
            yield piece
            if sent >= 11 * MiB:
                await asyncio.sleep(3600)

    task = asyncio.ensure_future(store.put("c/1", slow()))
    while sent < 11 * MiB:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.3)  # the first parts are on their way
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await store.size("c/1") is None
    assert await store.keys() == []
    await _no_multipart_uploads(request)


async def _no_multipart_uploads(request: pytest.FixtureRequest) -> None:
    if request.node.callspec.params["store_at"] == "s3":
        weed: SeaweedFS = request.getfixturevalue("seaweedfs")
        assert weed.multipart_uploads(request.getfixturevalue("bucket")) == []


async def test_a_crashed_put_leaves_a_partial_that_is_listed_and_removed(
    store_at: StoreAt, request: pytest.FixtureRequest
) -> None:
    store = store_at.open()
    weed = _weed(request)
    await store.put("5/done", one(b"complete"))
    before = utcnow()
    crash_puts(store_at, ["5/a", "5/b", "6/c"], weed)
    assert _leftovers(store_at, weed) == ["5/a", "5/b", "6/c"]
    partials = await store.partials()
    assert [p.key for p in partials] == ["5/a", "5/b", "6/c"]
    # When it was last written (local) or begun (S3, which counts whole seconds).
    assert all(before - timedelta(seconds=1) <= p.since <= utcnow() for p in partials)
    assert [p.key for p in await store.partials("5/")] == ["5/a", "5/b"]
    assert [p.key for p in await store.partials("6")] == ["6/c"]
    assert [p.key for p in await store.partials("5/b")] == ["5/b"]
    assert await store.partials("7/") == []
    assert await store.keys() == ["5/done"]  # a partial is no blob
    for partial in partials[:2]:
        await store.remove_partial(partial)
    assert _leftovers(store_at, weed) == ["6/c"]
    assert [p.key for p in await store.partials()] == ["6/c"]
    await store.remove_partial(partials[0])  # gone already
    await store.remove_partial(partials[2])
    assert _leftovers(store_at, weed) == []
    assert await store.partials() == []
    assert await read(store, "5/done") == b"complete"


async def test_a_put_under_way_is_listed_as_a_partial(store: BlobStore) -> None:
    release = asyncio.Event()
    sent = 0

    async def body() -> AsyncIterator[bytes]:
        nonlocal sent
        async for piece in stream(12 * MiB, MiB):
            yield piece
            sent += len(piece)
            if sent == 11 * MiB:
                await release.wait()

    put = asyncio.ensure_future(store.put("9/live", body()))
    try:
        assert await _eventually_listed(store, "9/live")
    finally:
        release.set()
    await put
    assert await store.partials() == []
    assert await store.size("9/live") == 12 * MiB


async def test_a_put_whose_partial_is_removed_fails_and_stores_nothing(store: BlobStore) -> None:
    """What the sweep does to an upload that takes longer than it may."""
    release = asyncio.Event()

    async def body() -> AsyncIterator[bytes]:
        async for piece in stream(11 * MiB, MiB):
            yield piece
        await release.wait()
        yield b"the end"

    put = asyncio.ensure_future(store.put("9/slow", body()))
    try:
        assert await _eventually_listed(store, "9/slow")
        for partial in await store.partials():
            await store.remove_partial(partial)
    finally:
        release.set()
    with pytest.raises(Exception, match=r"(?i)aborted|not found"):  # each store its own way
        await put
    assert await store.keys() == []
    assert await store.partials() == []


async def _eventually_listed(store: BlobStore, key: str) -> bool:
    deadline = asyncio.get_running_loop().time() + 30
    while asyncio.get_running_loop().time() < deadline:
        if [p.key for p in await store.partials()] == [key]:
            return True
        await asyncio.sleep(0.05)
    return False


async def test_a_bad_partial_is_refused(store_at: StoreAt) -> None:
    store = store_at.open()
    for key, ref in [("../x", "../x#1"), ("a//b", "a//b#1")]:
        with pytest.raises(ValueError, match="bad blob key"):
            await store.remove_partial(Partial(key, utcnow(), ref))
    if store_at.kind == "local":  # the staged file must be the key's own
        for ref in ["5/b#1", "5/a", "5/a#x", "5/a#1/../../x"]:
            with pytest.raises(ValueError, match="bad staged file"):
                await store.remove_partial(Partial("5/a", utcnow(), ref))
    with pytest.raises(ValueError, match="bad blob key"):
        await store.partials("../")


def _weed(request: pytest.FixtureRequest) -> SeaweedFS | None:
    if request.node.callspec.params["store_at"] != "s3":
        return None
    weed: SeaweedFS = request.getfixturevalue("seaweedfs")
    return weed


def _leftovers(where: StoreAt, weed: SeaweedFS | None) -> list[str]:
    """The keys of partial uploads, as the store's own listing shows them: staged files in
    the directory, or the bucket's incomplete multipart uploads."""
    if where.directory is not None:
        staged = staged_files(where.directory)
        return [p.relative_to(where.directory).as_posix().partition("#")[0] for p in staged]
    assert weed is not None
    bucket, _, prefix = where.url.removeprefix("s3://").partition("/")
    uploads = weed.multipart_uploads(bucket)
    return sorted(k.removeprefix(f"{prefix}/") for k in uploads if k.startswith(f"{prefix}/"))


@pytest.mark.parametrize(
    "key",
    ["../x", "/abs", "a//b", "a/./b", "a/../b", "", "a/", ".", "..", "a b", "a\\b", "é", "a/b?c"],
)
async def test_bad_keys_are_refused(store: BlobStore, key: str) -> None:
    with pytest.raises(ValueError, match="bad blob key"):
        await store.put(key, one(b"x"))
    with pytest.raises(ValueError, match="bad blob key"):
        await anext(store.get(key))
    with pytest.raises(ValueError, match="bad blob key"):
        await store.size(key)
    with pytest.raises(ValueError, match="bad blob key"):
        await store.delete(key)


@pytest.mark.parametrize("prefix", ["/", "/a", "../", "a//", "a/../", "a?"])
async def test_bad_prefixes_are_refused(store: BlobStore, prefix: str) -> None:
    with pytest.raises(ValueError, match="bad blob key"):
        await store.keys(prefix)


async def test_memory_stays_bounded(store: BlobStore) -> None:
    total = 64 * MiB
    await store.put("warm", stream(2 * MiB, MiB))  # the client's pools and buffers
    await read(store, "warm")
    before = rss()
    peak = before

    async def body() -> AsyncIterator[bytes]:
        nonlocal peak
        async for piece in stream(total, MiB, seed=5):
            peak = max(peak, rss())
            yield piece

    digest = hashlib.sha256()
    await store.put("big", body())
    peak = max(peak, rss())
    received = 0
    async for chunk in store.get("big"):
        digest.update(chunk)
        received += len(chunk)
        peak = max(peak, rss())
    assert received == total
    growth = peak - before
    print(f"{store.description}: RSS growth {growth / MiB:.1f} MiB for {total // MiB} MiB")
    assert growth < 40 * MiB
    source = hashlib.sha256()
    async for piece in stream(total, MiB, seed=5):
        source.update(piece)
    assert digest.hexdigest() == source.hexdigest()


@pytest.mark.parametrize("url", ["file://relative/dir", "file:relative/dir", "file:", "file://"])
def test_a_file_url_must_be_absolute(url: str) -> None:
    with pytest.raises(ValueError, match="absolute"):
        BlobStore.from_url(url)


@pytest.mark.parametrize("url", ["ftp://host/x", "gs://bucket", "/plain/path", "memory://"])
def test_an_unknown_scheme_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match=r"file://.*s3://"):
        BlobStore.from_url(url)


@pytest.mark.parametrize("url", ["s3://", "s3:///x", "s3://key:secret@bucket", "s3://b/../x"])
def test_a_bad_s3_url_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match=r"expected s3://bucket|bad blob key"):
        BlobStore.from_url(url)


async def test_file_urls(tmp_path: Path) -> None:
    spaced = tmp_path / "with space"
    store = BlobStore.from_url(spaced.as_uri())
    assert spaced.is_dir()
    assert store.description == spaced.as_uri()
    await store.put("a/b", one(b"hello"))
    assert (spaced / "a" / "b").read_bytes() == b"hello"
    same = BlobStore.from_url(f"file://localhost{spaced}")
    assert await read(same, "a/b") == b"hello"


@pytest.mark.usefixtures("_no_plumbline_env")
def test_the_default_is_files_in_the_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings(data_dir=Path("state"))
    assert settings.blob_url_resolved() == (tmp_path.resolve() / "state" / "files").as_uri()
    store = BlobStore.from_settings(settings)
    assert (tmp_path / "state" / "files").is_dir()
    assert store.description == settings.blob_url_resolved()


@pytest.mark.usefixtures("_no_plumbline_env")
def test_s3_settings_and_no_secret_in_sight(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLUMBLINE_BLOB_URL", "s3://files/plumbline")
    monkeypatch.setenv("PLUMBLINE_S3_ENDPOINT", "http://127.0.0.1:8333")
    monkeypatch.setenv("PLUMBLINE_S3_ACCESS_KEY_ID", "key-id")
    monkeypatch.setenv("PLUMBLINE_S3_SECRET_ACCESS_KEY", "very-secret")
    settings = Settings()
    assert settings.blob_url_resolved() == "s3://files/plumbline"
    assert settings.s3_secret_access_key == "very-secret"
    assert "very-secret" not in repr(settings)
    store = BlobStore.from_settings(settings)
    assert store.description == "s3://files/plumbline at http://127.0.0.1:8333"
    assert "very-secret" not in repr(store)


@pytest.mark.usefixtures("_no_plumbline_env")
def test_settings_defaults() -> None:
    settings = Settings()
    assert settings.max_upload_bytes == 1024 * 1024 * 1024
    assert settings.s3_region == "us-east-1"
    assert settings.s3_endpoint is None
    with pytest.raises(ValueError, match="max_upload_bytes"):
        Settings(max_upload_bytes=0)
