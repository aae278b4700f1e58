"""The shared access check: roles, refusals, and a cache that forgets on identity's word."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from types import SimpleNamespace

import pytest

from plumbline.common import access
from plumbline.common.access import (
    Access,
    AccessCache,
    Action,
    Role,
    allows,
    parse_role,
    readable,
    stronger,
)
from plumbline.common.context import ORG_ADMIN, Principal
from plumbline.common.errors import InvalidArgument, PermissionDenied
from plumbline.common.events import Event

ALICE = Principal(7, "alice")
ADMIN = Principal(1, "admin", frozenset({ORG_ADMIN}))


def test_roles_allow_their_own_actions_and_weaker_ones() -> None:
    assert [a for a in Action if allows(Role.READ_ONLY, a)] == [Action.READ]
    assert [a for a in Action if allows(Role.TEST_RUNNER, a)] == [Action.READ, Action.EXECUTE]
    assert not allows(Role.TEST_RUNNER, Action.WRITE)
    assert [a for a in Action if allows(Role.READ_WRITE, a)] == [
        Action.READ,
        Action.EXECUTE,
        Action.WRITE,
    ]
    assert all(allows(Role.PROJECT_ADMIN, a) for a in Action)
    assert not allows(None, Action.READ)
    assert stronger(Role.READ_WRITE, Role.READ_ONLY) is Role.READ_WRITE
    assert stronger(None, Role.TEST_RUNNER) is Role.TEST_RUNNER


def test_unknown_role_names_the_roles_there_are() -> None:
    with pytest.raises(InvalidArgument, match="READ_ONLY, TEST_RUNNER, READ_WRITE, PROJECT_ADMIN"):
        parse_role("OWNER")


def test_refusals_say_what_and_which_role_would_do() -> None:
    access = Access(ALICE, {3: Role.READ_ONLY})
    access.require(Action.READ, 3)
    with pytest.raises(PermissionDenied, match="You have no access to item 9"):
        access.require(Action.READ, 4, "item 9")
    with pytest.raises(PermissionDenied, match=r"READ_ONLY in project 3 .* needs READ_WRITE"):
        access.require(Action.WRITE, 3, "item 8")
    assert access.allowed(3) == ["GET"]
    assert access.allowed(4) == []
    assert Access(ALICE, {3: Role.READ_WRITE}).allowed(3) == ["GET", "PUT", "DELETE"]
    assert access.readable() == frozenset({3})
    assert Access(ADMIN, {}).readable() is None
    assert Access(ADMIN, {}).may(Action.ADMIN, 12345)


def test_batch_reads_leave_out_and_single_reads_refuse() -> None:
    access = Access(ALICE, {1: Role.READ_ONLY})
    rows = [SimpleNamespace(id=10, project=1), SimpleNamespace(id=20, project=2)]
    assert [r.id for r in readable(access, rows, [10, 20], "item")] == [10]
    with pytest.raises(PermissionDenied, match="item 20"):
        readable(access, rows[1:], [20], "item")


class CountingFetch:
    def __init__(self) -> None:
        self.calls = 0
        self.roles: dict[int, Role] = {1: Role.READ_ONLY}
        self.gate: asyncio.Event | None = None

    async def __call__(self, user_id: int) -> Mapping[int, Role]:
        self.calls += 1
        answer = dict(self.roles)
        if self.gate is not None:
            await self.gate.wait()
        return answer


async def test_the_cache_asks_once_and_forgets_on_any_identity_event() -> None:
    fetch = CountingFetch()
    cache = AccessCache(fetch, ttl=60)
    assert (await cache.of(ALICE)).role(1) is Role.READ_ONLY
    await cache.of(ALICE)
    assert fetch.calls == 1
    await cache.of(ADMIN)
    assert fetch.calls == 1  # administrators need no entries
    fetch.roles = {}
    await cache.on_event(Event("identity.permission.deleted", actor=1, position=5))
    assert (await cache.of(ALICE)).role(1) is None
    assert fetch.calls == 2


async def test_settle_drops_only_what_events_have_not_brought() -> None:
    fetch = CountingFetch()
    cache = AccessCache(fetch, ttl=60)
    await cache.of(ALICE)
    await cache.on_event(Event("identity.group.member_added", actor=1, position=8))
    await cache.of(ALICE)
    cache.settle(8)  # already applied through the event: kept
    await cache.of(ALICE)
    assert fetch.calls == 2
    cache.settle(9)  # not yet seen: dropped
    await cache.of(ALICE)
    assert fetch.calls == 3


async def test_a_fetch_that_raced_a_drop_is_not_kept() -> None:
    fetch = CountingFetch()
    fetch.gate = asyncio.Event()
    cache = AccessCache(fetch, ttl=60)
    pending = asyncio.create_task(cache.of(ALICE))
    await asyncio.sleep(0)
    cache.drop()
    fetch.gate.set()
    await pending
    fetch.gate = None
    await cache.of(ALICE)
    assert fetch.calls == 2


async def test_the_cache_holds_at_most_max_users(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(access, "MAX_USERS", 3)
    fetch = CountingFetch()
    cache = AccessCache(fetch, ttl=60)
    users = [Principal(100 + n, f"user{n}") for n in range(7)]
    for user in users:
        await cache.of(user)
    assert len(cache._entries) <= 3
    await cache.of(users[-1])  # the newest is kept
    assert fetch.calls == 7
    # Expired entries go first: the live one stays.
    monkeypatch.setattr(cache, "_ttl", 0.0)
    cache.drop()
    for user in users[:2]:
        await cache.of(user)
    monkeypatch.setattr(cache, "_ttl", 60.0)
    await cache.of(users[2])
    await cache.of(users[3])
    assert set(cache._entries) == {users[2].user_id, users[3].user_id}


async def test_entries_expire_after_the_ttl() -> None:
    fetch = CountingFetch()
    cache = AccessCache(fetch, ttl=0.01)
    await cache.of(ALICE)
    await asyncio.sleep(0.02)
    await cache.of(ALICE)
    assert fetch.calls == 2
