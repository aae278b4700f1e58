"""The embedded default's children: gateway workers serving the API from every core, and
the analytics process.

One process runs the services (SQLite has one writer, the memory bus one list); the
gateway's work (HTTP, JSON, authentication, the envelope) is a large part of a request's
and shares little: identity's events for its caches and the failed-login counts, which
that process serves. So ``plumbline run --target all`` starts gateway workers beside it,
one per usable core by default (``worker_count``). The process that runs the services binds the HTTP
socket and hands it to each worker, which accept from it in turn: the kernel gives a new
connection to whichever worker takes it first, a busy one takes fewer. Each worker is a
``plumbline run --target gateway`` whose services' addresses are that process's gRPC
port and whose bus follows its bus (``follow://``), as a gateway replica of the
distributed topology reaches its services and NATS.

Beside them runs one more child, the analytics process (``ANALYTICS``: items' traceability
reads and the reports service, decision 0030): the work that takes seconds of CPU, apart
from the loops that answer the API. The workers find it at ``PLUMBLINE_TRACE_ADDR`` and
``PLUMBLINE_REPORTS_ADDR``; it reads the items SQLite file, and its reports read the API
through a gateway of its own (on a port of its own, not the API's).

A child ends when the process that started it stops it, or when that process is gone (it
holds the read end of a pipe whose write end only that process has). A child that exits
otherwise is started again (``Children``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import math
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from plumbline.common.settings import SERVICES

log = logging.getLogger(__name__)

#: The most workers the default starts: beyond 4 the one process that runs the services
#: is the limit. On a 16-core machine, GET /items/{id} at 64 connections: one process 517
#: req/s, 2 workers 654, 4 workers 885, 8 831, 12 827 (docs/performance.md).
MAX_WORKERS = 4
#: What the analytics process runs, apart from the services' process: the reads and the
#: reports that take seconds of CPU, so they never queue beside the API's requests.
ANALYTICS = ("trace", "reports")
#: How long a worker may take to listen (its gateway waits up to 120 s for services that
#: are already up here).
READY_TIMEOUT = 60.0
#: A worker that lived this long before exiting is restarted at once, a younger one later.
STEADY_SECONDS = 30.0


#: Where a container's CPU limit is (cgroup v2): "<quota> <period>" or "max <period>".
CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def usable_cores(cpu_max: Path = CPU_MAX) -> int:
    """The cores this process may run on (its affinity, else the machine's), fewer when
    its container's CPU limit allows fewer: a container sees every core of its host."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    limit = cpu_limit(cpu_max.read_text()) if cpu_max.exists() else None
    return cores if limit is None else max(1, min(cores, limit))


def cpu_limit(cpu_max: str) -> int | None:
    """Cores a cgroup's ``cpu.max`` allows, rounded up; None when unlimited."""
    quota, _, period = cpu_max.strip().partition(" ")
    if quota == "max" or not quota.isdigit() or not period.isdigit() or int(period) == 0:
        return None
    return max(1, math.ceil(int(quota) / int(period)))


def worker_count(setting: int | None, cores: int) -> int:
    """How many gateway workers to start: ``setting`` (``PLUMBLINE_WORKERS``) when given,
    else one per core, at most ``MAX_WORKERS``, and none on a single core, where a second
    process would only add the calls between them."""
    if setting is not None:
        return setting
    return 0 if cores < 2 else min(cores, MAX_WORKERS)


@dataclass(frozen=True)
class Inherited:
    """What a child gets from the process that started it: the read end of the pipe
    that closes when that process is gone and, a gateway worker, the listening HTTP
    socket."""

    listen_fd: int | None
    parent_fd: int

    def socket(self) -> socket.socket | None:
        """The HTTP socket, ready for the event loop; None for a child that binds its own."""
        if self.listen_fd is None:
            return None
        sock = socket.socket(fileno=self.listen_fd)
        sock.setblocking(False)
        return sock


def loopback_host(host: str) -> str:
    """The address this machine reaches a server bound to ``host`` at, as a socket binds
    it: the loopback of its family when ``host`` is every address (the analytics
    process's ports are nobody else's business), else ``host`` itself."""
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    return "::1" if host == "::" else host


def loopback(host: str) -> str:
    """``loopback_host(host)`` as a URL or gRPC address writes it (IPv6 in brackets)."""
    reached = loopback_host(host)
    return f"[{reached}]" if ":" in reached else reached


def worker_environment(environ: Mapping[str, str], grpc_address: str, host: str) -> dict[str, str]:
    """A worker's settings: ``environ``'s, with the services and the bus at
    ``grpc_address`` (the process that starts it) and no workers of its own."""
    env = dict(environ)
    for service in SERVICES:
        env[f"PLUMBLINE_{service.upper()}_ADDR"] = grpc_address
    env["PLUMBLINE_BUS_URL"] = f"follow://{grpc_address}"
    env["PLUMBLINE_HOST"] = host
    env["PLUMBLINE_WORKERS"] = "0"
    env.pop("PLUMBLINE_READY_FILE", None)
    return env


def analytics_environment(
    environ: Mapping[str, str], grpc_address: str, host: str, http_port: int
) -> dict[str, str]:
    """The analytics process's settings: a worker's, but its own targets in itself (not
    at ``grpc_address``), its migrations run at start (reports' database is its alone),
    and the API that reports read at its own gateway, on ``http_port``."""
    env = worker_environment(environ, grpc_address, host)
    for target in ANALYTICS:
        env.pop(f"PLUMBLINE_{target.upper()}_ADDR", None)
    env["PLUMBLINE_MIGRATE_ON_START"] = "true"
    env["PLUMBLINE_GATEWAY_URL"] = f"http://{loopback(host)}:{http_port}"
    return env


def free_port(host: str) -> int:
    """A port nothing listens on now at ``host``: the analytics process keeps its ports
    across restarts, since the gateway workers and its own settings name them."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


@dataclass
class _Child:
    number: int
    process: asyncio.subprocess.Process
    started: float


class Children:
    """Starts ``count`` ``plumbline run`` children of one kind, restarts one that
    exits, and stops them.

    ``arguments`` are a child's after ``plumbline run`` (the targets, ports), ``env`` its
    settings and ``pass_fds`` what it inherits besides the pipe that tells it this
    process is gone; ``changed`` is called with the children's pids whenever one was
    replaced. ``sock``, when given, is closed once they have stopped (the HTTP socket the
    gateway workers share: a connection none took is refused, not left waiting).
    """

    def __init__(
        self,
        kind: str,
        count: int,
        arguments: Sequence[str],
        env: Mapping[str, str],
        json_logs: bool = False,
        pass_fds: Sequence[int] = (),
        sock: socket.socket | None = None,
        changed: Callable[[list[int]], None] | None = None,
    ) -> None:
        self.kind = kind
        self.count = count
        self.arguments = list(arguments)
        self.env = dict(env)
        self.json_logs = json_logs
        self.pass_fds = tuple(pass_fds)
        self.sock = sock
        self.changed = changed
        self.children: dict[int, _Child] = {}
        self.stopping = False
        self._folder = Path(tempfile.mkdtemp(prefix="plumbline-workers-"))
        # Only this process holds the write end: when it is gone, the children read EOF.
        self._parent_read, self._parent_write = os.pipe()
        self._watching: set[asyncio.Task[None]] = set()

    @property
    def pids(self) -> list[int]:
        """The running children's process ids, by number."""
        return [self.children[n].process.pid for n in sorted(self.children)]

    async def start(self) -> None:
        """Starts every child and returns once each is ready; raises when one is not."""
        await asyncio.gather(*(self._start(n) for n in range(1, self.count + 1)))

    async def _start(self, number: int) -> None:
        ready = self._folder / f"{self.kind.replace(' ', '-')}-{number}.json"
        ready.unlink(missing_ok=True)
        command = [
            sys.executable,
            "-m",
            "plumbline.cli",
            "run",
            *self.arguments,
            "--ready-file",
            str(ready),
            "--parent-fd",
            str(self._parent_read),
        ]
        if self.json_logs:
            command.append("--json-logs")
        process = await asyncio.create_subprocess_exec(
            *command,
            env=self.env,
            pass_fds=(*self.pass_fds, self._parent_read),
            # Its own session: a terminal's Ctrl-C reaches this process, which stops it.
            start_new_session=True,
        )
        self.children[number] = _Child(number, process, time.monotonic())
        await self._wait_ready(ready, process)
        watch = asyncio.create_task(self._watch(number), name=f"{self.kind}-{number}")
        self._watching.add(watch)
        watch.add_done_callback(self._watching.discard)

    async def _wait_ready(self, ready: Path, process: asyncio.subprocess.Process) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        while not ready.exists():
            if process.returncode is not None:
                raise OSError(f"a {self.kind} exited with {process.returncode} at start")
            if time.monotonic() > deadline:
                raise OSError(f"a {self.kind} was not ready within {READY_TIMEOUT:g} s")
            await asyncio.sleep(0.05)
        json.loads(ready.read_text())  # complete: the child writes it by renaming

    async def _watch(self, number: int) -> None:
        """Waits for child ``number`` to exit; starts another unless stopping."""
        child = self.children[number]
        code = await child.process.wait()
        if self.stopping:
            return
        lived = time.monotonic() - child.started
        log.error(
            "%s %d (pid %d) exited with %d after %.0f s; starting another",
            self.kind,
            number,
            child.process.pid,
            code,
            lived,
        )
        if lived < STEADY_SECONDS:
            await asyncio.sleep(1.0)  # not at full speed should it fail at every start
        while not self.stopping:
            try:
                await self._start(number)
            except OSError:
                log.exception("%s %d did not start; trying again", self.kind, number)
                await asyncio.sleep(5.0)
                continue
            if self.changed is not None and not self.stopping:
                self.changed(self.pids)
            return

    async def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM to every child (each drains as its targets do), then waits; a child
        still running after ``timeout`` is killed."""
        self.stopping = True
        for task in list(self._watching):
            task.cancel()
        running = [c.process for c in self.children.values() if c.process.returncode is None]
        for process in running:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
        for process in running:
            try:
                async with asyncio.timeout(timeout):
                    await process.wait()
            except TimeoutError:
                log.error("%s pid %d did not stop; killing it", self.kind, process.pid)
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        if self.sock is not None:
            self.sock.close()
        for fd in (self._parent_read, self._parent_write):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self._folder, ignore_errors=True)


def gateway_workers(
    count: int,
    sock: socket.socket,
    env: Mapping[str, str],
    json_logs: bool = False,
    changed: Callable[[list[int]], None] | None = None,
) -> Children:
    """``count`` gateway workers accepting from ``sock`` with ``env``
    (``worker_environment``'s)."""
    arguments = ["--target", "gateway", "--grpc-port", "0", "--listen-fd", str(sock.fileno())]
    return Children(
        "gateway worker", count, arguments, env, json_logs, (sock.fileno(),), sock, changed
    )


def analytics(
    grpc_port: int,
    http_port: int,
    env: Mapping[str, str],
    json_logs: bool = False,
    changed: Callable[[list[int]], None] | None = None,
) -> Children:
    """The analytics process: ``ANALYTICS`` on ``grpc_port``, and a gateway of its own on
    ``http_port`` that its reports read the API through, so that a report's reading never
    queues beside the API's requests in the workers; with ``env``
    (``analytics_environment``'s)."""
    arguments = [
        "--target",
        ",".join((*ANALYTICS, "gateway")),
        "--grpc-port",
        str(grpc_port),
        "--http-port",
        str(http_port),
    ]
    return Children("analytics process", 1, arguments, env, json_logs, changed=changed)


class EmbeddedChildren:
    """The embedded default's children: the analytics process first, then the gateway
    workers (told where it serves); stopped in reverse. ``changed(kind, pids)`` hears
    their pids (``workers``, ``analytics``) once started and whenever one is replaced."""

    def __init__(self, json_logs: bool = False) -> None:
        self.json_logs = json_logs
        self.workers: Children | None = None
        self.analytics: Children | None = None

    async def start(
        self,
        count: int,
        sock: socket.socket,
        host: str,
        grpc_port: int,
        changed: Callable[[str, list[int]], None],
    ) -> None:
        """``count`` workers on ``sock`` and the analytics process, for the services at
        ``grpc_port`` of this process."""
        address = f"{loopback(host)}:{grpc_port}"
        local = loopback_host(host)
        port, http_port = free_port(local), free_port(local)
        self.analytics = analytics(
            port,
            http_port,
            analytics_environment(os.environ, address, local, http_port),
            self.json_logs,
            functools.partial(changed, "analytics"),
        )
        await self.analytics.start()
        changed("analytics", self.analytics.pids)
        env = worker_environment(os.environ, address, host)
        for target in ANALYTICS:
            env[f"PLUMBLINE_{target.upper()}_ADDR"] = f"{loopback(local)}:{port}"
        self.workers = gateway_workers(
            count, sock, env, self.json_logs, functools.partial(changed, "workers")
        )
        await self.workers.start()
        changed("workers", self.workers.pids)

    async def stop(self) -> None:
        for children in (self.workers, self.analytics):
            if children is not None:
                await children.stop()
