"""Failed logins: per name, per address, doubling refusals, and no lasting lock-out."""

from __future__ import annotations

import pytest

from plumbline.api.core.v1 import core_pb2_grpc
from plumbline.common.errors import Throttled, Unauthenticated
from plumbline.gateway.logins import LoginGuard, LoginsServicer, SharedLoginGuard
from tests.unit.services.serving import serving


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_name_is_refused_after_its_failures_with_doubling_waits() -> None:
    clock = Clock()
    guard = LoginGuard(per_name=3, per_address=100, block_max=5, clock=clock)
    for _ in range(2):
        guard.check("Alice", "a")
        guard.failed("Alice", "a")
    guard.check("alice", "b")
    guard.failed("alice", "b")  # the third: refused for 1 s, whatever the address
    with pytest.raises(Throttled) as refused:
        guard.check("ALICE", "c")
    assert refused.value.retry_after == 1
    clock.now += 1.01
    guard.check("alice", "c")
    guard.failed("alice", "c")
    with pytest.raises(Throttled) as refused:
        guard.check("alice", "c")
    assert refused.value.retry_after == 2
    for _ in range(5):  # the wait doubles up to block_max
        clock.now += 10
        guard.failed("alice", "c")
    with pytest.raises(Throttled) as refused:
        guard.check("alice", "c")
    assert refused.value.retry_after == 5
    guard.check("bob", "c")  # other names are not affected


def test_an_address_the_user_logged_in_from_is_not_locked_out() -> None:
    clock = Clock()
    guard = LoginGuard(per_name=2, per_address=100, block_max=60, clock=clock)
    guard.succeeded("alice", "home")
    guard.failed("alice", "attacker")
    guard.failed("alice", "attacker")
    with pytest.raises(Throttled):
        guard.check("alice", "attacker")
    guard.check("alice", "home")


def test_an_address_is_refused_after_its_failures() -> None:
    guard = LoginGuard(per_name=100, per_address=3, clock=Clock())
    for name in ("a", "b", "c"):
        guard.failed(name, "10.0.0.1")
    with pytest.raises(Throttled):
        guard.check("d", "10.0.0.1")
    guard.check("d", "10.0.0.2")


def test_failures_are_forgotten_after_a_while_and_success_clears_the_name() -> None:
    clock = Clock()
    guard = LoginGuard(per_name=2, per_address=100, forget_after=60, clock=clock)
    guard.failed("alice", "a")
    clock.now += 61
    guard.failed("alice", "a")
    guard.check("alice", "a")  # the first failure was forgotten
    guard.succeeded("alice", "a")
    guard.failed("alice", "b")
    guard.check("alice", "b")


async def test_attempt_counts_only_wrong_credentials() -> None:
    guard = LoginGuard(per_name=1, per_address=100, clock=Clock())

    async def wrong() -> int:
        raise Unauthenticated("no")

    async def right() -> int:
        return 7

    assert await guard.attempt("bob", "a", right) == 7
    with pytest.raises(Unauthenticated):
        await guard.attempt("alice", "a", wrong)
    with pytest.raises(Throttled):
        await guard.attempt("alice", "b", right)


async def test_gateway_workers_share_one_count_and_one_memory_of_home_addresses() -> None:
    """Failures through either of two workers add up, and a user who logged in through
    one is not refused from that address through the other."""
    clock = Clock()
    guard = LoginGuard(per_name=3, per_address=100, block_max=60, clock=clock)
    async with serving(
        "logins", core_pb2_grpc.add_LoginsServicer_to_server, LoginsServicer(guard)
    ) as channel:
        first = SharedLoginGuard(core_pb2_grpc.LoginsStub(channel()))
        second = SharedLoginGuard(core_pb2_grpc.LoginsStub(channel()))

        async def wrong() -> str:
            raise Unauthenticated("wrong password")

        async def right() -> str:
            return "principal"

        assert await first.attempt("bob", "home", right) == "principal"
        for worker in (first, second, first):
            with pytest.raises(Unauthenticated):
                await worker.attempt("bob", "attacker", wrong)
        for worker in (first, second):
            with pytest.raises(Throttled) as refused:
                await worker.attempt("bob", "attacker", right)
            assert refused.value.retry_after == 1
            assert "Too many failed logins" in refused.value.message
        # From home the user is let in through the other worker too.
        assert await second.attempt("bob", "home", right) == "principal"
