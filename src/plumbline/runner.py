"""Starts the modules of one process in order and stops them in reverse."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import os
import signal
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import uvicorn

from plumbline.api.core.v1 import core_pb2_grpc
from plumbline.common import telemetry
from plumbline.common.bus import create_bus
from plumbline.common.bus._follow import EventsServicer
from plumbline.common.bus._memory import MemoryBus
from plumbline.common.db import check_url, is_sqlite
from plumbline.common.errors import InvalidArgument
from plumbline.common.rpc import GrpcServer, target_of
from plumbline.common.settings import SERVICES, Settings
from plumbline.gateway.logins import LoginsServicer, login_guard
from plumbline.health import ProcessState, base_app
from plumbline.httpproto import http_protocol
from plumbline.modules import ALL, APART, MODULES
from plumbline.runtime import Module, Runtime
from plumbline.workers import (
    ANALYTICS,
    EmbeddedChildren,
    Inherited,
    loopback,
    usable_cores,
    worker_count,
)

log = logging.getLogger(__name__)


class _Server(uvicorn.Server):
    """uvicorn without its own signal handling: the runner owns SIGTERM.

    Its shutdown asks each open connection to close once, then waits for them all; a
    connection whose accept completed just as the listener closed joins after that ask
    and, with a client that keeps sending on it, would keep the server up for ever (a
    stop under load hung so, rarely, until killed). Every connection that appears while
    the server waits is asked too.
    """

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        closing = asyncio.create_task(super().shutdown(sockets))
        while not closing.done():
            for connection in list(self.server_state.connections):
                connection.shutdown()
            await asyncio.wait({closing}, timeout=0.1)
        await closing

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def check_topology(settings: Settings, targets: tuple[str, ...]) -> bool:
    """Refuses combinations that cannot work; returns whether this is the embedded default."""
    local_services = [t for t in targets if t in SERVICES]
    for service in local_services:
        check_url(settings.database_url_for(service))
    if settings.bus_is_memory and set(targets) != set(ALL):
        raise InvalidArgument(
            "the memory:// bus only works when every target runs in one process "
            "(--target all); set PLUMBLINE_BUS_URL=nats://host:4222 to split the services"
        )
    for service in (*SERVICES, *APART):
        address = settings.address_of(service)
        if address is not None:
            try:
                target_of(service, address)
            except InvalidArgument as exc:
                # Checked here, not when a channel opens: some open at the first request.
                setting = f"PLUMBLINE_{service.upper()}_ADDR"
                raise InvalidArgument(f"{setting}: {exc.message}") from None
    all_sqlite = all(is_sqlite(settings.database_url_for(s)) for s in local_services)
    return set(targets) == set(ALL) and settings.bus_is_memory and all_sqlite


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio turns on TCP_NODELAY only for sockets that say so,
    # and without it every keep-alive response waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.setblocking(False)
    return sock


async def run(
    settings: Settings,
    targets: tuple[str, ...],
    json_logs: bool = False,
    inherited: Inherited | None = None,
) -> None:
    """Runs until SIGTERM or SIGINT, then drains and stops.

    The embedded default serves the API from gateway workers (``plumbline.workers``)
    when it has more than one core; ``inherited`` is what such a worker got.
    """
    embedded = check_topology(settings, targets)
    host = settings.host or ("127.0.0.1" if set(targets) == set(ALL) else "0.0.0.0")
    telemetry.setup("+".join(targets))
    stop = _stop_event(inherited)

    count = worker_count(settings.workers, usable_cores()) if embedded else 0
    state = ProcessState(targets=targets)
    bus = create_bus(
        settings.bus_url,
        settings.bus_stream,
        settings.bus_subject_prefix,
        settings.event_partitions,
    )
    grpc_server = GrpcServer(host, settings.grpc_port, settings.grpc_max_message_bytes)
    if isinstance(bus, MemoryBus):  # what gateway workers share with this process
        grpc_server.add(core_pb2_grpc.add_EventsServicer_to_server, EventsServicer(bus))
        logins = LoginsServicer(login_guard(settings))
        grpc_server.add(core_pb2_grpc.add_LoginsServicer_to_server, logins)
    runtime = Runtime(settings, targets, bus, grpc_server, base_app(state), embedded)
    # With workers, this process runs the services, the workers the gateway and the
    # analytics process what takes seconds of CPU (decision 0030).
    local = tuple(t for t in targets if t not in ("gateway", *ANALYTICS)) if count else targets
    modules: list[Module] = [MODULES[name][0]() for name in local]
    started: list[Module] = []
    http: _Server | None = None
    http_task: asyncio.Task[None] | None = None
    children = EmbeddedChildren(json_logs)
    try:
        await bus.connect()
        for module in modules:
            await module.start(runtime)
            started.append(module)
        grpc_port = await grpc_server.start()
        for module in modules:
            await module.serve(runtime)
        sock = (inherited.socket() if inherited else None) or _bind(host, settings.http_port)
        http_port = _listening(runtime, sock, host)
        ready = _Ready(settings, targets, host, http_port, grpc_port)
        if count:
            await grpc_server.set_serving(True)
            await children.start(count, sock, host, grpc_port, ready.changed)
        else:
            http, http_task = await _serve_http(runtime, sock)
            await grpc_server.set_serving(True)
        _settle_memory(state)
        if inherited is None:  # a child is announced by the process that started it
            _announce(targets, host, http_port, grpc_port, ready.children["workers"])
        ready.write()
        await stop.wait()
        log.info("stopping: draining")
    finally:
        state.ready = False
        await children.stop()
        await _stop(runtime, started, http, http_task)


def _settle_memory(state: ProcessState) -> None:
    """Marks the process ready, once what starting it built (modules, compiled
    statements, protobuf descriptors, the catalog) goes out of the collector's reach, so
    a collection of the oldest generation while serving walks only what serving made
    since, not all of it: under 25 s of PATCH at 8 clients, the items service's one
    such pause took 76 ms without and 3 ms with, the history's 169 ms without."""
    gc.collect()
    gc.freeze()
    state.ready = True


def _listening(runtime: Runtime, sock: socket.socket, host: str) -> int:
    """The port ``sock`` listens on, which the runtime then knows its URL by."""
    port = int(sock.getsockname()[1])
    runtime.http_url = f"http://{loopback(host)}:{port}"
    return port


def _stop_event(inherited: Inherited | None) -> asyncio.Event:
    """Set on SIGTERM or SIGINT, and in a gateway worker when the process that started
    it is gone (the pipe from it reads end of file)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if inherited is not None:
        loop.add_reader(inherited.parent_fd, stop.set)
    return stop


async def _serve_http(runtime: Runtime, sock: socket.socket) -> tuple[_Server, asyncio.Task[None]]:
    """Serves the process's HTTP app on ``sock``; returns once it listens."""
    http = _Server(
        uvicorn.Config(
            runtime.http,
            http=http_protocol(runtime.settings.header_timeout),
            log_config=None,
            access_log=False,
            lifespan="off",
            server_header=False,
        )
    )
    http_task = asyncio.create_task(http.serve(sockets=[sock]))
    await _started(http, http_task)
    return http, http_task


async def _started(http: _Server, http_task: asyncio.Task[None]) -> None:
    """Waits until the HTTP server listens; raises if it stopped instead."""
    while not http.started:
        if http_task.done():
            await http_task
            raise OSError("the HTTP server stopped during start-up")
        await asyncio.sleep(0.01)


async def _stop(
    runtime: Runtime,
    started: list[Module],
    http: _Server | None,
    http_task: asyncio.Task[None] | None,
) -> None:
    """Drains and stops: the health check first, then HTTP after the drain time, gRPC,
    the started modules in reverse, the channels and the bus."""
    settings, grpc_server = runtime.settings, runtime.grpc
    with contextlib.suppress(Exception):
        await grpc_server.set_serving(False)
    if settings.drain_seconds > 0 and http is not None:
        await asyncio.sleep(settings.drain_seconds)
    if http is not None and http_task is not None:
        http.should_exit = True
        with contextlib.suppress(Exception):
            await http_task
    with contextlib.suppress(Exception):
        await grpc_server.stop(grace=5)
    for module in reversed(started):
        try:
            await module.stop()
        except Exception:
            log.exception("error while stopping %s", module.name)
    if runtime.access_cache is not None:
        with contextlib.suppress(Exception):
            await runtime.access_cache.close()
    for channel in runtime.channels.values():
        await channel.close()
    with contextlib.suppress(Exception):
        await runtime.bus.close()
    if settings.ready_file is not None:
        with contextlib.suppress(FileNotFoundError):
            settings.ready_file.unlink()
    await _cancel_leftovers()


async def _cancel_leftovers(timeout: float = 5.0) -> None:
    """Everything is closed by now; a task that ignores cancellation must not keep the
    process alive, so after ``timeout`` the process exits without it."""
    current = asyncio.current_task()
    leftovers = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
    for task in leftovers:
        task.cancel()
    if not leftovers:
        return
    _done, pending = await asyncio.wait(leftovers, timeout=timeout)
    if pending:
        names = ", ".join(sorted(t.get_name() for t in pending))
        log.error("exiting with %d task(s) that did not stop: %s", len(pending), names)
        logging.shutdown()
        sys.stdout.flush()
        os._exit(0)


def _announce(
    targets: tuple[str, ...], host: str, http_port: int, grpc_port: int, workers: list[int]
) -> None:
    line = (
        f"plumbline ready: targets={','.join(targets)} "
        f"http=http://{host}:{http_port} grpc={host}:{grpc_port}"
    )
    if workers:
        line += f" (the API served by {len(workers)} gateway workers)"
    print(line, flush=True)


class _Ready:
    """The ready file, when one is asked for: the ports, this process's pid and its
    children's (written again when one is replaced)."""

    def __init__(
        self,
        settings: Settings,
        targets: tuple[str, ...],
        host: str,
        http_port: int,
        grpc_port: int,
    ) -> None:
        self.path = settings.ready_file
        self.answer: dict[str, object] = {
            "targets": list(targets),
            "host": host,
            "http_port": http_port,
            "grpc_port": grpc_port,
            "pid": os.getpid(),
        }
        self.children: dict[str, list[int]] = {"workers": [], "analytics": []}
        self.ready = False

    def changed(self, kind: str, pids: list[int]) -> None:
        """The children of ``kind`` (``workers``, ``analytics``) are now ``pids``: the
        file says so at once once the process is ready (a child replaced), else when it
        is (the file's existence says the process is ready)."""
        self.children[kind] = pids
        if self.ready:
            self.write()

    def write(self) -> None:
        """The process is ready: the file says so."""
        self.ready = True
        if self.path is None:
            return
        path = Path(self.path)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({**self.answer, **self.children}))
        tmp.replace(path)
        sys.stdout.flush()
