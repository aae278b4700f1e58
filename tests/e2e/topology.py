"""Starts Plumbline the two ways it runs, and reaches into what it started.

``Embedded``: ``plumbline run --target all`` on SQLite and the memory bus.
``Distributed``: ``plumbline migrate``, then identity, items, testmgmt, attachments,
activity and baselines as separate processes (two replicas of testmgmt, activity and
baselines, events in four partitions) on PostgreSQL (a database per service,
unique names) and NATS JetStream (a unique stream and subject prefix), attachment files in
a real S3-compatible store (a private SeaweedFS, a unique bucket), then the gateway
pointed at them.

Also here: the processes (``Process``: ready files, ports, stopping), more gateway
replicas, a process started again where it was, the services' addresses and gRPC ports, their outboxes and file store as the
services see them (and what cut-off uploads left in the store, and the attachments
service's list of blobs to remove), the operator's command line, and the clean-up of a
distributed run.
The HTTP helpers the e2e modules drive a system with are in ``tests.e2e.api``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx
import pytest
from sqlalchemy import MetaData, select

from plumbline.common.db import Database
from plumbline.common.events import Event
from plumbline.common.outbox import outbox_table
from plumbline.common.settings import SERVICES, Settings
from plumbline.services.attachments.blobs import BlobStore
from plumbline.services.attachments.models import blobs
from tests.seaweed import SeaweedFS

PLUMBLINE = [sys.executable, "-m", "plumbline.cli"]
PG_ADMIN_URL = os.environ.get("PLUMBLINE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
NATS_URL = os.environ.get("PLUMBLINE_TEST_NATS", "nats://127.0.0.1:4222")
ADMIN_PASSWORD = "admin-test-password"
#: Services the distributed topology runs as several processes: the writers of test runs,
#: and the consumers that build the feed and the history, which share the events'
#: partitions (``PARTITIONS``).
REPLICAS = {"testmgmt": 2, "activity": 2, "baselines": 2}
#: The partitions the distributed topology splits events into.
PARTITIONS = 4


def require_backends() -> None:
    pg = PG_ADMIN_URL.split("@", 1)[1].split("/", 1)[0]
    nats_host = NATS_URL.split("://", 1)[1]
    missing = [
        name
        for name, address in (("PostgreSQL", pg), ("NATS", nats_host))
        if not reachable(address.split(":")[0], int(address.split(":")[1]))
    ]
    if missing:
        message = f"{' and '.join(missing)} not reachable for the distributed topology"
        if os.environ.get("CI"):
            pytest.fail(message + " (required in CI)")
        pytest.skip(message)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def reachable(host: str, port: int) -> bool:
    """Whether something listens at host:port."""
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def wait_ready_file(
    path: Path, process: subprocess.Popen[bytes], timeout: float = 60
) -> dict[str, object]:
    """Polls for the ready file; fails early when the process dies."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            return dict(json.loads(path.read_text()))
        if process.poll() is not None:
            raise RuntimeError(f"process exited with {process.returncode} before it was ready")
        time.sleep(0.05)
    raise TimeoutError(f"not ready within {timeout}s")


@dataclass
class Process:
    """A running ``plumbline run``."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    ready: dict[str, object]

    @property
    def http_port(self) -> int:
        return self._port("http_port")

    @property
    def grpc_port(self) -> int:
        return self._port("grpc_port")

    @property
    def workers(self) -> list[int]:
        """The pids of its gateway workers (the embedded default's), as the ready file
        says now: a worker that exits is replaced."""
        return self._children("workers")

    @property
    def analytics(self) -> list[int]:
        """The pid of its analytics process (the embedded default's, with workers), as
        the ready file says now."""
        return self._children("analytics")

    def _children(self, key: str) -> list[int]:
        ready = self.log.with_name(f"{self.name}.ready.json")
        if ready.exists():
            self.ready = dict(json.loads(ready.read_text()))
        pids = self.ready.get(key, [])
        assert isinstance(pids, list), f"{self.name}: {key} is {pids!r} in the ready file"
        return [int(pid) for pid in pids]

    def _port(self, key: str) -> int:
        port = self.ready[key]
        assert isinstance(port, int), f"{self.name}: {key} is {port!r} in the ready file"
        return port

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM and wait; returns the exit code."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        return int(self.popen.returncode)


def start_process(
    name: str,
    args: list[str],
    env: dict[str, str],
    workdir: Path,
    timeout: float = 60,
    grpc_port: int = 0,
    http_port: int = 0,
) -> Process:
    """Starts ``plumbline run`` with ``args`` and waits until it is ready (on ``grpc_port``
    when given: a restarted service where its callers expect it)."""
    ready = workdir / f"{name}.ready.json"
    log = workdir / f"{name}.log"
    ready.unlink(missing_ok=True)
    with log.open("ab") as out:
        popen = subprocess.Popen(
            [
                *PLUMBLINE,
                "run",
                *args,
                "--http-port",
                str(http_port),
                "--grpc-port",
                str(grpc_port),
                "--ready-file",
                str(ready),
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=workdir,
        )
    try:
        info = wait_ready_file(ready, popen, timeout)
    except Exception:
        popen.kill()
        raise RuntimeError(f"{name} did not start:\n{log.read_text()[-4000:]}") from None
    return Process(name, popen, log, info)


def base_env(workdir: Path) -> dict[str, str]:
    """The environment of a test process: nothing inherited from PLUMBLINE_*."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLUMBLINE_", "OTEL_"))}
    env["PLUMBLINE_DATA_DIR"] = str(workdir / "data")
    env["PLUMBLINE_PASSWORD_TIME_COST"] = "1"
    env["PLUMBLINE_PASSWORD_MEMORY_COST"] = "8192"
    env["PLUMBLINE_LOG_LEVEL"] = "WARNING"
    # Every test connects from 127.0.0.1: the suite's wrong passwords would add up and
    # refuse the address. test_frontdoor checks the per-address limit with its own process.
    env["PLUMBLINE_LOGIN_FAILURES_PER_ADDRESS"] = "100000"
    # Above test_attachment_files' 200 MB file, low enough to send a file over it quickly.
    env["PLUMBLINE_MAX_UPLOAD_BYTES"] = str(256 * 2**20)
    # The webhook tests' receivers listen on 127.0.0.1, and retry within seconds.
    env["PLUMBLINE_WEBHOOKS_ALLOW_PRIVATE"] = "true"
    env["PLUMBLINE_WEBHOOKS_RETRY_BASE"] = "0.2"
    env["PLUMBLINE_WEBHOOKS_KEY"] = base64.b64encode(os.urandom(32)).decode()
    # Two distributed systems run at once (the session's and a test's own, 13 processes
    # each): with the default pool of 10 they held PostgreSQL's 100 connections between
    # them, and the second one's requests failed until the test hung. Two kept open a
    # service, more only under load.
    env["PLUMBLINE_DB_POOL_SIZE"] = "2"
    env["PLUMBLINE_DB_MAX_OVERFLOW"] = "8"
    return env


@dataclass
class System:
    """A running Plumbline: where to reach it, and how to stop it."""

    topology: str
    workdir: Path
    admin_password: str
    processes: list[Process] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    #: The S3-compatible store of the distributed topology's attachment files.
    weed: SeaweedFS | None = None

    @property
    def gateway(self) -> Process:
        return self.processes[-1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.gateway.http_port}"

    def client(
        self, auth: tuple[str, str] | None = None, *, version: str = "v1", timeout: float = 30
    ) -> httpx.Client:
        """An HTTP client at ``/rest/{version}``, authenticated as ``auth`` if given."""
        return httpx.Client(base_url=f"{self.url}/rest/{version}", auth=auth, timeout=timeout)

    def stop(self) -> dict[str, int]:
        """Stops the gateway first, then the services; returns exit codes by name."""
        return {p.name: p.stop() for p in reversed(self.processes)}


def start_embedded(workdir: Path, overrides: Mapping[str, str] | None = None) -> System:
    """``--target all`` on SQLite with the memory bus; ``overrides`` replace settings of
    ``base_env`` (the bench's ``PLUMBLINE_MAX_UPLOAD_BYTES``, say)."""
    env = base_env(workdir)
    env.update(overrides or {})
    process = start_process("all", ["--target", "all"], env, workdir)
    return System("embedded", workdir, "admin", [process], env)


def start_distributed(workdir: Path, overrides: Mapping[str, str] | None = None) -> System:
    """One process per service on PostgreSQL and NATS, then the gateway; ``overrides``
    replace settings of ``base_env``."""
    tag = uuid.uuid4().hex[:10]
    env = base_env(workdir)
    env.update(overrides or {})
    host_part = PG_ADMIN_URL.split("://", 1)[1].rsplit("/", 1)[0]
    env["PLUMBLINE_DATABASE_URL"] = f"postgresql+asyncpg://{host_part}/pl_{tag}_{{service}}"
    env["PLUMBLINE_BUS_URL"] = (overrides or {}).get("PLUMBLINE_BUS_URL", NATS_URL)
    env["PLUMBLINE_BUS_STREAM"] = f"PL_{tag}"
    env["PLUMBLINE_BUS_SUBJECT_PREFIX"] = f"pl{tag}"
    env["PLUMBLINE_ADMIN_PASSWORD"] = ADMIN_PASSWORD
    env["PLUMBLINE_HOST"] = "127.0.0.1"
    env.setdefault("PLUMBLINE_EVENT_PARTITIONS", str(PARTITIONS))
    # The gateway starts last, but hooks reads records through it (as a webhook's owner):
    # its port is chosen first.
    gateway_port = free_port()
    env["PLUMBLINE_GATEWAY_URL"] = f"http://127.0.0.1:{gateway_port}"
    weed = SeaweedFS()
    weed.start()
    system = System("distributed", workdir, ADMIN_PASSWORD, [], env, weed)
    try:
        weed.create_bucket(f"pl-{tag}")
        env["PLUMBLINE_BLOB_URL"] = f"s3://pl-{tag}/files"
        env["PLUMBLINE_S3_ENDPOINT"] = weed.endpoint
        env["PLUMBLINE_S3_REGION"] = weed.region
        env["PLUMBLINE_S3_ACCESS_KEY_ID"] = weed.access_key_id
        env["PLUMBLINE_S3_SECRET_ACCESS_KEY"] = weed.secret_access_key
        subprocess.run(
            [*PLUMBLINE, "migrate"], env=env, check=True, cwd=workdir, capture_output=True
        )
        # identity first: the others fetch access from it.
        addresses = dict(env)
        for service in SERVICES:
            # Replicas: the gateway balances over testmgmt's; activity's and baselines'
            # share the partitions of the events.
            for replica in range(REPLICAS.get(service, 1)):
                name = service if replica == 0 else f"{service}-{replica + 1}"
                process = start_process(name, ["--target", service], addresses, workdir)
                system.processes.append(process)
            addresses[f"PLUMBLINE_{service.upper()}_ADDR"] = address_of(system, service)
        # Items' traceability reads apart from items, as a deployment runs them.
        system.processes.append(start_process("trace", ["--target", "trace"], addresses, workdir))
        system.processes.append(start_gateway(system, "gateway", http_port=gateway_port))
    except Exception:
        system.stop()
        cleanup_distributed(system)
        raise
    return system


@contextlib.contextmanager
def running(
    topology: str, workdir: Path, overrides: Mapping[str, str] | None = None
) -> Iterator[System]:
    """A system of ``topology`` (``embedded`` or ``distributed``) while the block runs;
    then stopped (every process must exit cleanly) and, distributed, cleaned up."""
    system = (start_distributed if topology == "distributed" else start_embedded)(
        workdir, overrides
    )
    try:
        yield system
    finally:
        codes = system.stop()
        if topology == "distributed":
            cleanup_distributed(system)
    failed = {name: code for name, code in codes.items() if code != 0}
    assert not failed, f"processes did not exit cleanly: {failed}"


def start_gateway(
    system: System, name: str, overrides: Mapping[str, str] | None = None, http_port: int = 0
) -> Process:
    """Another gateway replica of a system, of either topology (the caller stops it):
    embedded, it follows the one process's bus as its gateway workers do.

    ``overrides`` replace settings of its environment (a ``PLUMBLINE_TESTMGMT_ADDR`` of
    one replica, say).
    """
    env = service_env(system)
    if system.topology == "embedded":
        env["PLUMBLINE_BUS_URL"] = f"follow://127.0.0.1:{system.gateway.grpc_port}"
    env.update(overrides or {})
    return start_process(name, ["--target", "gateway"], env, system.workdir, http_port=http_port)


def service_env(system: System) -> dict[str, str]:
    """The environment of a system's processes, with every service's address (the one
    process's own gRPC port in the embedded topology)."""
    env = dict(system.env)
    for service in SERVICES:
        env[f"PLUMBLINE_{service.upper()}_ADDR"] = address_of(system, service) or (
            f"127.0.0.1:{system.gateway.grpc_port}"
        )
    if replicas_of(system, "trace"):
        env["PLUMBLINE_TRACE_ADDR"] = address_of(system, "trace")
    return env


def start_service(
    system: System, service: str, name: str, overrides: Mapping[str, str] | None = None
) -> Process:
    """One more process of ``service`` on the system's databases and store, in either
    topology (the caller stops it): a replica others may be pointed at."""
    env = service_env(system)
    env.update(overrides or {})
    return start_process(name, ["--target", service], env, system.workdir)


def restart(system: System, name: str, overrides: Mapping[str, str] | None = None) -> Process:
    """Starts the process ``name`` of a system again (stopped first if it runs: a killed
    one is just reaped) on the same data and gRPC port, where its callers expect it, with
    ``overrides``; it takes the old one's place in ``system.processes``. The embedded
    topology's one process is ``all``; a new one listens on a new HTTP port."""
    [old] = [p for p in system.processes if p.name == name]
    old.stop()
    env = service_env(system) if system.topology == "distributed" else dict(system.env)
    env.update(overrides or {})
    target = "all" if name == "all" else name.partition("-")[0]
    process = start_process(
        name, ["--target", target], env, system.workdir, grpc_port=old.grpc_port
    )
    system.processes[system.processes.index(old)] = process
    return process


def replicas_of(system: System, service: str) -> list[Process]:
    """The processes that serve ``service`` (``testmgmt``, ``testmgmt-2``...)."""
    return [p for p in system.processes if p.name == service or p.name.startswith(f"{service}-")]


def address_of(system: System, service: str) -> str:
    """The service's address setting: every replica's, comma separated."""
    return ",".join(f"127.0.0.1:{p.grpc_port}" for p in replicas_of(system, service))


def blob_store(system: System) -> BlobStore:
    """The store of the system's attachment files, as its attachments service sees it."""
    names = "data_dir blob_url s3_endpoint s3_region s3_access_key_id s3_secret_access_key"
    given = {
        n: system.env[v] for n in names.split() if (v := f"PLUMBLINE_{n.upper()}") in system.env
    }
    return BlobStore.from_settings(Settings.model_validate(given))


def partial_uploads(system: System, prefix: str = "") -> dict[str, int]:
    """What puts cut off left in the system's file store, seen from outside it, by blob key
    (those starting with ``prefix``): obstore's staged files (``<key>#<n>``) and their
    sizes in a local store; the bucket's incomplete multipart uploads (size 0: unknown)."""
    if system.weed is not None:
        bucket, _, base = system.env["PLUMBLINE_BLOB_URL"].removeprefix("s3://").partition("/")
        base = f"{base}/" if base else ""
        keys = [k.removeprefix(base) for k in system.weed.multipart_uploads(bucket)]
        return {k: 0 for k in keys if k.startswith(prefix)}
    names = ("data_dir", "blob_url")
    given = {n: system.env[v] for n in names if (v := f"PLUMBLINE_{n.upper()}") in system.env}
    root = Path(unquote(urlsplit(Settings.model_validate(given).blob_url_resolved()).path))
    staged = (p for p in root.rglob("*#*") if p.is_file())
    found = {p.relative_to(root).as_posix().partition("#")[0]: p.stat().st_size for p in staged}
    return {k: size for k, size in found.items() if k.startswith(prefix)}


def database_url(system: System, service: str) -> str:
    """The database URL of ``service`` as its processes see it (SQLite or PostgreSQL)."""
    names = ("data_dir", "database_url")
    given = {n: system.env[v] for n in names if (v := f"PLUMBLINE_{n.upper()}") in system.env}
    return Settings.model_validate(given).database_url_for(service)


def blob_rows(system: System) -> dict[str, str]:
    """The attachments service's ``blobs`` rows (blobs it has yet to remove): key, state."""
    url = database_url(system, "attachments")

    async def read() -> dict[str, str]:
        db = Database(url)
        try:
            async with db.read() as session:
                found = await session.execute(select(blobs.c.key, blobs.c.state))
                return {row.key: row.state for row in found}
        finally:
            await db.close()

    return asyncio.run(read())


def grpc_port(system: System, service: str) -> int:
    """The gRPC port that serves ``service``: its first replica's, or the one process's
    of the embedded topology."""
    replicas = replicas_of(system, service)
    return (replicas[0] if replicas else system.gateway).grpc_port


def outbox_events(system: System, service: str, after: int = 0) -> list[Event]:
    """The events ``service`` wrote after outbox position ``after``, oldest first, each with
    its ``position``: read from its database, where a change's events are by the time the
    change has answered."""
    url = database_url(system, service)
    table = outbox_table(MetaData())

    async def read() -> list[Any]:
        db = Database(url)
        try:
            async with db.read() as session:
                statement = select(table.c.id, table.c.body).where(table.c.id > after)
                return list((await session.execute(statement.order_by(table.c.id))).all())
        finally:
            await db.close()

    return [replace(Event.from_json(r.body), position=int(r.id)) for r in asyncio.run(read())]


def cleanup_distributed(system: System) -> None:
    """Drops the databases, the stream and the bucket the system used; stops its S3."""
    import asyncpg
    import nats

    tag = system.env["PLUMBLINE_BUS_STREAM"][3:]

    async def drop() -> None:
        conn = await asyncpg.connect(PG_ADMIN_URL)
        try:
            for service in SERVICES:
                await conn.execute(f'DROP DATABASE IF EXISTS "pl_{tag}_{service}" WITH (FORCE)')
        finally:
            await conn.close()
        nc = await nats.connect(NATS_URL)
        with contextlib.suppress(Exception):
            await nc.jetstream().delete_stream(system.env["PLUMBLINE_BUS_STREAM"])
        await nc.close()

    asyncio.run(drop())
    if system.weed is not None:
        with contextlib.suppress(Exception):
            system.weed.delete_bucket(f"pl-{tag.lower()}")
        system.weed.stop()


def run_cli(system: System, *args: str) -> subprocess.CompletedProcess[str]:
    """``plumbline *args`` with the system's environment, as an operator would run it."""
    return subprocess.run(
        [*PLUMBLINE, *args],
        env=system.env,
        cwd=system.workdir,
        capture_output=True,
        text=True,
        timeout=60,
    )


NATS_SERVER = shutil.which("nats-server") or "/usr/sbin/nats-server"


class Nats:
    """A NATS server of this test's own, with JetStream, that can be stopped and started."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.store = workdir / "nats"
        self.process: subprocess.Popen[bytes] | None = None

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
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise TimeoutError("nats-server did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        self.process = None


@contextlib.contextmanager
def on_own_nats(workdir: Path) -> Iterator[tuple[System, Nats]]:
    """A distributed system on a NATS server of its own, which the caller may stop and
    start (a NATS outage); both are stopped and cleaned up after."""
    require_backends()
    nats = Nats(workdir)
    nats.start()
    system = start_distributed(workdir, {"PLUMBLINE_BUS_URL": nats.url})
    try:
        yield system, nats
    finally:
        system.stop()
        if nats.process is None:
            nats.start()  # the stream is dropped through it
        cleanup_distributed(system)
        nats.stop()
