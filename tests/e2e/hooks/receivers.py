"""Webhook receivers for the tests: real HTTP servers on 127.0.0.1 that verify every
delivery's signature with the ``standardwebhooks`` package (the specification's own
library) and keep what they were sent, answering as each test tells them."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks import Webhook

from tests.e2e.topology import free_port


@dataclass
class Received:
    """One delivery as the receiver saw it."""

    id: str
    body: dict[str, Any]
    signatures: list[str]
    at: float
    #: What the receiver answered.
    status: int


@dataclass
class Receiver:
    """A running receiver. ``answer(n)`` gives the status for its n-th request (from 0),
    ``delay`` seconds to wait before answering; ``secrets`` verify each request (every
    one must verify; a request none verifies is kept in ``forged``)."""

    port: int
    answer: Callable[[int], int] = lambda n: 200
    delay: float = 0.0
    secrets: list[str] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    forged: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def delivered(self) -> list[Received]:
        """What was answered 2xx, in arrival order."""
        with self.lock:
            return [r for r in self.received if 200 <= r.status < 300]

    def delivered_ids(self) -> list[str]:
        return [r.id for r in self.delivered()]

    def wait_for(
        self, count: int, seconds: float = 20.0, *, distinct: bool = False
    ) -> list[Received]:
        """Waits until ``count`` deliveries (``distinct``: of different changes) were
        answered 2xx; what came."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            got = self.delivered()
            if len({r.id for r in got} if distinct else got) >= count:
                break
            time.sleep(0.05)
        return self.delivered()

    def start(self) -> None:
        """Listens (again) on its port."""
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(length)
                if len(raw) < length:  # the sender died mid-request (kill -9)
                    return
                headers = {k.lower(): v for k, v in self.headers.items()}
                if not any(_verifies(s, raw, headers) for s in receiver.secrets):
                    with receiver.lock:
                        receiver.forged.append(headers.get("webhook-id", "?"))
                    self.send_response(400)
                    self.end_headers()
                    return
                with receiver.lock:
                    status = receiver.answer(len(receiver.received))
                    receiver.received.append(
                        Received(
                            headers["webhook-id"],
                            json.loads(raw),
                            headers["webhook-signature"].split(" "),
                            time.monotonic(),
                            status,
                        )
                    )
                if receiver.delay:
                    time.sleep(receiver.delay)
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        self.server = server
        threading.Thread(target=server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        """Stops listening: deliveries find the port closed."""
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


def _verifies(secret: str, raw: bytes, headers: dict[str, str]) -> bool:
    try:
        Webhook(secret).verify(raw, headers)
    except Exception:
        return False
    return True


@contextmanager
def receiving(**options: Any) -> Iterator[Receiver]:
    """A receiver, listening while the block runs."""
    receiver = Receiver(free_port(), **options)
    receiver.start()
    try:
        yield receiver
    finally:
        receiver.stop()
