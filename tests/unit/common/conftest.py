"""Real backends for the common library's tests: SQLite, PostgreSQL, NATS."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from nats.js.api import ConsumerInfo

from plumbline.common.bus._nats import NatsBus

NATS_URL = os.environ.get("PLUMBLINE_TEST_NATS", "nats://127.0.0.1:4222")
PG_URL = os.environ.get("PLUMBLINE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
NATS_SERVER = os.environ.get("PLUMBLINE_TEST_NATS_SERVER", "/usr/sbin/nats-server")


def _reachable(url: str) -> bool:
    host_port = url.split("://", 1)[1].split("@")[-1].split("/")[0]
    host, port = host_port.rsplit(":", 1)
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


def unique(prefix: str) -> str:
    """A name no other test (or test run) uses."""
    return f"{prefix}{uuid.uuid4().hex[:10]}"


@pytest.fixture
async def nats_bus() -> AsyncIterator[NatsBus]:
    """A JetStream bus on the machine's NATS with its own stream and subject prefix."""
    require(NATS_URL, "NATS")
    tag = uuid.uuid4().hex[:10]
    bus = NatsBus(NATS_URL, f"T_{tag}", prefix=f"t{tag}")
    await bus.connect()
    try:
        yield bus
    finally:
        with contextlib.suppress(Exception):
            await bus.delete_stream()
        await bus.close()


@pytest.fixture
async def pg_url() -> AsyncIterator[str]:
    """A fresh PostgreSQL database (SQLAlchemy asyncpg URL), dropped afterwards."""
    require(PG_URL, "PostgreSQL")
    import asyncpg

    name = unique("t_")
    conn = await asyncpg.connect(PG_URL)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    base = PG_URL.replace("postgresql://", "postgresql+asyncpg://").rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}"
    finally:
        conn = await asyncpg.connect(PG_URL)
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await conn.close()


def free_port() -> int:
    """A TCP port nothing listens on right now."""
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
        """Starts the server and returns once its port accepts connections."""
        assert self.process is None, "the server is already running"
        self.process = subprocess.Popen(
            [NATS_SERVER, "-a", "127.0.0.1", "-p", str(self.port), "-js", "-sd", str(self.store)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            if _reachable(self.url):
                return
            time.sleep(0.02)
        self.kill()
        raise RuntimeError(f"nats-server did not start on port {self.port}")

    def stop(self) -> None:
        """SIGTERM, then waits for the process to exit (SIGKILL if it will not)."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)

    def kill(self) -> None:
        """SIGKILL, for clean-up paths."""
        process, self.process = self.process, None
        if process is not None:
            if process.poll() is None:
                process.kill()
            process.wait(5)


@pytest.fixture
def private_nats(tmp_path: Path) -> Iterator[PrivateNats]:
    """A running private nats-server with JetStream storage in ``tmp_path``."""
    if not os.path.exists(NATS_SERVER):
        if os.environ.get("CI"):
            pytest.fail(f"{NATS_SERVER} is required in CI")
        pytest.skip("nats-server not installed")
    server = PrivateNats(free_port(), tmp_path / "jetstream")
    try:
        server.start()
        yield server
    finally:
        server.kill()


async def consumer_drained(bus: NatsBus, durable: str) -> bool:
    """Whether the durable consumer has been handed everything and acknowledged it all."""
    info: ConsumerInfo = await bus._jetstream().consumer_info(bus.stream, durable)
    return info.num_pending == 0 and info.num_ack_pending == 0


async def eventually(
    condition: Callable[[], bool | Awaitable[bool]], timeout: float = 10.0
) -> None:
    """Polls an async or plain condition until it holds; fails after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if not isinstance(result, bool):
            result = await result
        if result:
            return
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database of each supported kind (SQLAlchemy URL)."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path}/test.db"
    return str(request.getfixturevalue("pg_url"))
