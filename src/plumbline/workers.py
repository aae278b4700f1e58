"""The embedded default's gateway workers: the API served from every core.

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

A worker ends when the process that started it stops it, or when that process is gone (it
holds the read end of a pipe whose write end only that process has). A worker that exits
otherwise is started again.
"""

from __future__ import annotations

import asyncio
import contextlib
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from plumbline.common.settings import SERVICES

log = logging.getLogger(__name__)

#: The most workers the default starts: beyond 4 the one process that runs the services
#: is the limit. On a 16-core machine, GET /items/{id} at 64 connections: one process 517
#: req/s, 2 workers 654, 4 workers 885, 8 831, 12 827 (docs/performance.md).
MAX_WORKERS = 4
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
    """What a worker gets from the process that started it: the listening HTTP socket
    and the read end of the pipe that closes when that process is gone."""

    listen_fd: int
    parent_fd: int

    def socket(self) -> socket.socket:
        """The HTTP socket, ready for the event loop."""
        sock = socket.socket(fileno=self.listen_fd)
        sock.setblocking(False)
        return sock


def loopback(host: str) -> str:
    """The address this machine reaches a server bound to ``host`` at."""
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


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


@dataclass
class _Worker:
    number: int
    process: asyncio.subprocess.Process
    started: float


class Workers:
    """Starts ``count`` gateway workers on ``sock``, restarts one that exits, stops them.

    ``grpc_address`` is where the services (and the bus) of this process answer;
    ``changed`` is called with the workers' pids whenever one was replaced.
    """

    def __init__(
        self,
        count: int,
        sock: socket.socket,
        grpc_address: str,
        host: str,
        json_logs: bool = False,
        changed: Callable[[list[int]], None] | None = None,
    ) -> None:
        self.count = count
        self.sock = sock
        self.grpc_address = grpc_address
        self.host = host
        self.json_logs = json_logs
        self.changed = changed
        self.workers: dict[int, _Worker] = {}
        self.stopping = False
        self._folder = Path(tempfile.mkdtemp(prefix="plumbline-workers-"))
        # Only this process holds the write end: when it is gone, the workers read EOF.
        self._parent_read, self._parent_write = os.pipe()
        self._watching: set[asyncio.Task[None]] = set()

    @property
    def pids(self) -> list[int]:
        """The running workers' process ids, by worker number."""
        return [self.workers[n].process.pid for n in sorted(self.workers)]

    async def start(self) -> None:
        """Starts every worker and returns once each listens; raises when one does not."""
        await asyncio.gather(*(self._start(n) for n in range(1, self.count + 1)))

    async def _start(self, number: int) -> None:
        ready = self._folder / f"worker-{number}.json"
        ready.unlink(missing_ok=True)
        command = [
            sys.executable,
            "-m",
            "plumbline.cli",
            "run",
            "--target",
            "gateway",
            "--grpc-port",
            "0",
            "--ready-file",
            str(ready),
            "--listen-fd",
            str(self.sock.fileno()),
            "--parent-fd",
            str(self._parent_read),
        ]
        if self.json_logs:
            command.append("--json-logs")
        process = await asyncio.create_subprocess_exec(
            *command,
            env=worker_environment(os.environ, self.grpc_address, self.host),
            pass_fds=(self.sock.fileno(), self._parent_read),
            # Its own session: a terminal's Ctrl-C reaches this process, which stops it.
            start_new_session=True,
        )
        self.workers[number] = _Worker(number, process, time.monotonic())
        await self._wait_ready(ready, process)
        watch = asyncio.create_task(self._watch(number), name=f"gateway-worker-{number}")
        self._watching.add(watch)
        watch.add_done_callback(self._watching.discard)

    @staticmethod
    async def _wait_ready(ready: Path, process: asyncio.subprocess.Process) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        while not ready.exists():
            if process.returncode is not None:
                raise OSError(f"a gateway worker exited with {process.returncode} at start")
            if time.monotonic() > deadline:
                raise OSError(f"a gateway worker did not listen within {READY_TIMEOUT:g} s")
            await asyncio.sleep(0.05)
        json.loads(ready.read_text())  # complete: the worker writes it by renaming

    async def _watch(self, number: int) -> None:
        """Waits for worker ``number`` to exit; starts another unless stopping."""
        worker = self.workers[number]
        code = await worker.process.wait()
        if self.stopping:
            return
        lived = time.monotonic() - worker.started
        log.error(
            "gateway worker %d (pid %d) exited with %d after %.0f s; starting another",
            number,
            worker.process.pid,
            code,
            lived,
        )
        if lived < STEADY_SECONDS:
            await asyncio.sleep(1.0)  # not at full speed should it fail at every start
        while not self.stopping:
            try:
                await self._start(number)
            except OSError:
                log.exception("gateway worker %d did not start; trying again", number)
                await asyncio.sleep(5.0)
                continue
            if self.changed is not None and not self.stopping:
                self.changed(self.pids)
            return

    async def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM to every worker (each drains like a gateway), then waits; a worker
        still running after ``timeout`` is killed. The socket is closed after them: a
        connection the workers did not take is refused, not left waiting."""
        self.stopping = True
        for task in list(self._watching):
            task.cancel()
        running = [w.process for w in self.workers.values() if w.process.returncode is None]
        for process in running:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
        for process in running:
            try:
                async with asyncio.timeout(timeout):
                    await process.wait()
            except TimeoutError:
                log.error("gateway worker pid %d did not stop; killing it", process.pid)
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        self.sock.close()
        for fd in (self._parent_read, self._parent_write):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self._folder, ignore_errors=True)
