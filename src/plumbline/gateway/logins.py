"""Failed logins, throttled per user name and per client address.

A password is checked against its hash only while neither the user name nor the client
address is refused. After ``per_name`` failures in a row for a name, or ``per_address``
from an address, that one is refused for 1 s, then 2 s, 4 s, ... up to ``block_max``; a
refusal is a 429 with ``Retry-After`` and costs no hashing. Failures are forgotten
``forget_after`` seconds after the last one.

An attacker must not be able to lock a real user out: refusals of a user name never last
longer than ``block_max``, and they do not apply at all to an address the user has logged
in from successfully (for ``remember`` seconds), so an attack from elsewhere leaves the
user's own clients alone. Unknown user names count like known ones, so refusals do not
tell which names exist.

The counters are per gateway process: with several replicas an attacker gets a few more
attempts, never unlimited ones. The embedded default's gateway workers share one count,
kept by the process that runs the services (``SharedLoginGuard``, ``LoginsServicer``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from plumbline.api.core.v1 import core_pb2, core_pb2_grpc
from plumbline.common.capped import with_room
from plumbline.common.errors import Throttled, Unauthenticated
from plumbline.common.rpc import Context
from plumbline.common.settings import Settings

T = TypeVar("T")

_MAX_ENTRIES = 100_000


class Logins(Protocol):
    """What authentication asks of failed-login counts."""

    async def attempt(self, name: str, address: str, verify: Callable[[], Awaitable[T]]) -> T:
        """Runs ``verify`` (a password check) unless refused, and counts its outcome."""
        ...


def refusal(seconds: int) -> Throttled:
    """The answer to an attempt while its name or address is refused."""
    return Throttled(
        "Too many failed logins for this user name or from this address; "
        f"try again in {seconds} s.",
        retry_after=seconds,
    )


@dataclass
class _Failures:
    count: int = 0
    last: float = 0.0
    blocked_until: float = 0.0


class LoginGuard:
    """Counts failed logins and refuses attempts while a name or an address is blocked."""

    def __init__(
        self,
        per_name: int = 5,
        per_address: int = 20,
        block_max: float = 60.0,
        forget_after: float = 900.0,
        remember: float = 86400.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_name = per_name
        self.per_address = per_address
        self.block_max = block_max
        self.forget_after = forget_after
        self.remember = remember
        self._clock = clock
        self._by_name: dict[str, _Failures] = {}
        self._by_address: dict[str, _Failures] = {}
        self._known: dict[tuple[str, str], float] = {}

    def wait(self, name: str, address: str) -> int:
        """Seconds until the name and the address may try again; 0: now."""
        now = self._clock()
        wait = self._remaining(self._by_address.get(address), now)
        if self._known.get((name.lower(), address), 0.0) <= now:
            wait = max(wait, self._remaining(self._by_name.get(name.lower()), now))
        return math.ceil(wait)

    def check(self, name: str, address: str) -> None:
        """Raises ``Throttled`` while the name or the address is refused."""
        seconds = self.wait(name, address)
        if seconds > 0:
            raise refusal(seconds)

    def failed(self, name: str, address: str) -> None:
        """Records a failed login."""
        now = self._clock()
        for table, key, free in (
            (self._by_name, name.lower(), self.per_name),
            (self._by_address, address, self.per_address),
        ):
            entry = table.get(key)
            if entry is None or now - entry.last > self.forget_after:
                if len(table) >= _MAX_ENTRIES:
                    self._prune(table, now)
                entry = table[key] = _Failures()
            entry.count += 1
            entry.last = now
            if entry.count >= free:
                delay = min(self.block_max, 2.0 ** (entry.count - free))
                entry.blocked_until = now + delay

    def succeeded(self, name: str, address: str) -> None:
        """Records a successful login: the name's failures are forgotten and the address
        is remembered for it (the address's own failures stay counted)."""
        now = self._clock()
        self._by_name.pop(name.lower(), None)
        if len(self._known) >= _MAX_ENTRIES:
            self._known = with_room(self._known, lambda until: until > now, _MAX_ENTRIES)
        self._known[(name.lower(), address)] = now + self.remember

    async def attempt(self, name: str, address: str, verify: Callable[[], Awaitable[T]]) -> T:
        """Runs ``verify`` (a password check) unless refused, and counts its outcome."""
        self.check(name, address)
        try:
            result = await verify()
        except Unauthenticated:
            self.failed(name, address)
            raise
        self.succeeded(name, address)
        return result

    @staticmethod
    def _remaining(entry: _Failures | None, now: float) -> float:
        return 0.0 if entry is None else max(0.0, entry.blocked_until - now)

    def _prune(self, table: dict[str, _Failures], now: float) -> None:
        for key in [k for k, v in table.items() if now - v.last > self.forget_after]:
            del table[key]
        if len(table) >= _MAX_ENTRIES:
            table.clear()


def login_guard(settings: Settings) -> LoginGuard:
    """A guard with the configured limits."""
    return LoginGuard(
        settings.login_failures_per_name,
        settings.login_failures_per_address,
        settings.login_block_max,
    )


class SharedLoginGuard:
    """A gateway worker's counts: those of the process it follows (``Logins``)."""

    def __init__(self, logins: core_pb2_grpc.LoginsAsyncStub) -> None:
        self.logins = logins

    async def attempt(self, name: str, address: str, verify: Callable[[], Awaitable[T]]) -> T:
        """Runs ``verify`` unless that process refuses, and tells it the outcome."""
        attempt = core_pb2.LoginAttempt(name=name, address=address)
        wait = await self.logins.Check(attempt)
        if wait.seconds > 0:
            raise refusal(wait.seconds)
        try:
            result = await verify()
        except Unauthenticated:
            await self.logins.Failed(attempt)
            raise
        await self.logins.Succeeded(attempt)
        return result


class LoginsServicer(core_pb2_grpc.LoginsServicer):
    """``plumbline.core.v1.Logins``: this process's counts, for its gateway workers."""

    def __init__(self, guard: LoginGuard) -> None:
        self.guard = guard

    async def Check(self, request: core_pb2.LoginAttempt, context: Context) -> core_pb2.LoginWait:
        return core_pb2.LoginWait(seconds=self.guard.wait(request.name, request.address))

    async def Failed(self, request: core_pb2.LoginAttempt, context: Context) -> core_pb2.Empty:
        self.guard.failed(request.name, request.address)
        return core_pb2.Empty()

    async def Succeeded(self, request: core_pb2.LoginAttempt, context: Context) -> core_pb2.Empty:
        self.guard.succeeded(request.name, request.address)
        return core_pb2.Empty()
