"""Real backends for the common library's tests: SQLite, PostgreSQL, NATS."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from plumbline.common.bus._nats import NatsBus

NATS_URL = os.environ.get("PLUMBLINE_TEST_NATS", "nats://127.0.0.1:4222")
PG_URL = os.environ.get("PLUMBLINE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
NATS_SERVER = "/usr/sbin/nats-server"


def _reachable(url: str) -> bool:
    host_port = url.split("://", 1)[1].split("@")[-1].split("/")[0]
    host, port = host_port.split(":")
    try:
        with socket.create_connection((host, int(port)), timeout=1):
            return True
    except OSError:
        return False


def require(url: str, what: str) -> None:
    """Fails in CI, skips elsewhere, when a backend is missing."""
    if not _reachable(url):
        if os.environ.get("CI"):
            pytest.fail(f"{what} is required in CI")
        pytest.skip(f"{what} not reachable")


@pytest.fixture
async def nats_bus() -> AsyncIterator[NatsBus]:
    """A JetStream bus on the machine's NATS with its own stream and subjects."""
    require(NATS_URL, "NATS")
    tag = uuid.uuid4().hex[:8]
    bus = NatsBus(NATS_URL, f"T_{tag}", prefix=f"t{tag}")
    await bus.connect()
    yield bus
    with contextlib.suppress(Exception):
        await bus.delete_stream()
    await bus.close()


@pytest.fixture
async def pg_url() -> AsyncIterator[str]:
    """A fresh PostgreSQL database, dropped afterwards."""
    require(PG_URL, "PostgreSQL")
    import asyncpg

    name = f"t_{uuid.uuid4().hex[:10]}"
    conn = await asyncpg.connect(PG_URL)
    await conn.execute(f'CREATE DATABASE "{name}"')
    await conn.close()
    yield PG_URL.replace("postgresql://", "postgresql+asyncpg://").rsplit("/", 1)[0] + "/" + name
    conn = await asyncpg.connect(PG_URL)
    await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await conn.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PrivateNats:
    """A nats-server of the test's own that can be stopped and started again."""

    port: int
    store: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [NATS_SERVER, "-a", "127.0.0.1", "-p", str(self.port), "-js", "-sd", str(self.store)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if _reachable(self.url):
                return
            time.sleep(0.05)
        raise RuntimeError("nats-server did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        self.process = None


@pytest.fixture
def private_nats(tmp_path: Path) -> Iterator[PrivateNats]:
    if not os.path.exists(NATS_SERVER):
        if os.environ.get("CI"):
            pytest.fail(f"{NATS_SERVER} is required in CI")
        pytest.skip("nats-server not installed")
    server = PrivateNats(free_port(), tmp_path / "jetstream")
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def eventually(condition, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    """Polls an async or plain condition until it holds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = condition()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not met in time")
