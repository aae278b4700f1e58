"""A real S3 server for the blob store's tests, the two stores to run them on, and puts
cut off by a crash."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from plumbline.services.attachments.blobs import BlobStore
from tests.seaweed import SeaweedFS

MiB = 1024 * 1024


@pytest.fixture(scope="session")
def seaweedfs() -> Iterator[SeaweedFS]:
    """One SeaweedFS S3 server for the whole session (the weed of the dev dependencies)."""
    with SeaweedFS() as server:
        yield server


@pytest.fixture(scope="module")
def bucket(seaweedfs: SeaweedFS) -> Iterator[str]:
    """A bucket of the module's own on the session's SeaweedFS, deleted afterwards."""
    name = f"blobs-{uuid.uuid4().hex[:10]}"
    seaweedfs.create_bucket(name)
    try:
        yield name
    finally:
        seaweedfs.delete_bucket(name)


@dataclass(frozen=True)
class StoreAt:
    """Where a store is: its URL and S3 options, enough to open it in another process."""

    kind: str
    url: str
    options: dict[str, str] = field(default_factory=dict)
    directory: Path | None = None

    def open(self) -> BlobStore:
        return BlobStore.from_url(self.url, **self.options)


@pytest.fixture(params=["local", "s3"])
def store_at(request: pytest.FixtureRequest, tmp_path: Path) -> StoreAt:
    """An empty store: a temporary directory, or a fresh prefix in the module's bucket."""
    if request.param == "local":
        return StoreAt("local", (tmp_path / "blobs").as_uri(), directory=tmp_path / "blobs")
    weed: SeaweedFS = request.getfixturevalue("seaweedfs")
    bucket_name: str = request.getfixturevalue("bucket")
    return StoreAt(
        "s3",
        f"s3://{bucket_name}/t{uuid.uuid4().hex[:10]}",
        {
            "endpoint": weed.endpoint,
            "region": weed.region,
            "access_key_id": weed.access_key_id,
            "secret_access_key": weed.secret_access_key,
        },
    )


@pytest.fixture
def store(store_at: StoreAt) -> BlobStore:
    return store_at.open()


# Puts ``sys.argv[3:]`` at once, each 11 MiB (two parts of 5 MiB under way) then waiting for
# ever; says "sent" once a body has handed over its bytes.
_CHILD = """
import asyncio, json, sys
from plumbline.services.attachments.blobs import BlobStore

async def body():
    for _ in range(11):
        yield bytes(1024 * 1024)
    print("sent", flush=True)
    await asyncio.Event().wait()

async def main():
    store = BlobStore.from_url(sys.argv[1], **json.loads(sys.argv[2]))
    await asyncio.gather(*(store.put(key, body()) for key in sys.argv[3:]))

asyncio.run(main())
"""


def crash_puts(where: StoreAt, keys: list[str], weed: SeaweedFS | None = None) -> None:
    """Puts ``keys`` in another process and kills it (SIGKILL) half-way through them,
    once their bytes are in the store: a staged file of 10 MiB each (local), an incomplete
    multipart upload each (S3, seen through ``weed``)."""
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, where.url, json.dumps(where.options), *keys],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert child.stdout is not None
        for _ in keys:
            assert child.stdout.readline() == b"sent\n", "the putting process died"
        _wait_for_bytes(where, keys, weed)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
        if child.stdout is not None:
            child.stdout.close()


def _wait_for_bytes(where: StoreAt, keys: list[str], weed: SeaweedFS | None) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if all(_stored(where, key, weed) for key in keys):
            return
        time.sleep(0.05)
    raise AssertionError(f"the puts of {keys} stored nothing in {where.url}")


def _stored(where: StoreAt, key: str, weed: SeaweedFS | None) -> bool:
    if where.directory is not None:
        return any(p.stat().st_size >= 10 * MiB for p in staged_files(where.directory, key))
    assert weed is not None
    bucket, _, prefix = where.url.removeprefix("s3://").partition("/")
    return f"{prefix}/{key}" in weed.multipart_uploads(bucket)


def staged_files(directory: Path, key: str = "") -> list[Path]:
    """The files of a local store that are no blob: obstore's ``<key>#<n>``."""
    return sorted(
        p
        for p in directory.rglob("*#*")
        if p.is_file() and str(p.relative_to(directory)).startswith(key)
    )
