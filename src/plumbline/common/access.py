"""Who may do what in which project: one mechanism, used the same way by every service.

identity owns the permission entries (a user or a user group, a role, a project or a
folder). Every service that holds project data asks :class:`AccessCache` for the
caller's :class:`Access`: the caller's effective role by project, fetched from identity
once and then kept in the process until identity announces a change (any
``identity.*`` event drops it, as does :meth:`AccessCache.settle`, which the gateway calls
after a change of access so that the change holds before it answers). A time-to-live
bounds the staleness should an event ever be missed. Organisation administrators need no
entry: they may do everything.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Any, TypeVar

from grpc import aio
from sqlalchemy import ColumnElement, Row, Select, true

from plumbline.api.core.v1 import core_pb2, core_pb2_grpc
from plumbline.api.identity.v1 import identity_pb2_grpc
from plumbline.common.bus import Bus, Subscription
from plumbline.common.capped import with_room
from plumbline.common.context import Principal, require_principal
from plumbline.common.db import Database, check_batch
from plumbline.common.errors import InvalidArgument, PermissionDenied
from plumbline.common.events import Event
from plumbline.common.rpc import Context


class Role(StrEnum):
    """The roles a permission entry gives, weakest first."""

    READ_ONLY = "READ_ONLY"
    TEST_RUNNER = "TEST_RUNNER"
    READ_WRITE = "READ_WRITE"
    PROJECT_ADMIN = "PROJECT_ADMIN"


class Action(StrEnum):
    """What a request does to project data; the value completes "may not ..."."""

    READ = "read"
    EXECUTE = "record test results in"
    WRITE = "change"
    ADMIN = "administer"


_RANK = {role: rank for rank, role in enumerate(Role)}
# The weakest role that allows each action.
NEEDS = {
    Action.READ: Role.READ_ONLY,
    Action.EXECUTE: Role.TEST_RUNNER,
    Action.WRITE: Role.READ_WRITE,
    Action.ADMIN: Role.PROJECT_ADMIN,
}


def parse_role(text: str) -> Role:
    """A role by name, or InvalidArgument naming the roles there are."""
    try:
        return Role(text)
    except ValueError:
        allowed = ", ".join(role.value for role in Role)
        raise InvalidArgument(f"role must be one of {allowed}, got {text!r}.") from None


def stronger(a: Role | None, b: Role) -> Role:
    """The stronger of two roles (``a`` may be none)."""
    return b if a is None or _RANK[b] > _RANK[a] else a


def allows(role: Role | None, action: Action) -> bool:
    """Whether ``role`` allows ``action``."""
    return role is not None and _RANK[role] >= _RANK[NEEDS[action]]


R = TypeVar("R")

_NO_ROLES: Mapping[int, Role] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Access:
    """What one principal may do, project by project."""

    principal: Principal
    roles: Mapping[int, Role]

    @property
    def everything(self) -> bool:
        """Organisation administrators may do everything everywhere."""
        return self.principal.is_admin

    def role(self, project: int) -> Role | None:
        """The caller's role on ``project`` (a project or a folder), if any."""
        if self.everything:
            return Role.PROJECT_ADMIN
        return self.roles.get(project)

    def may(self, action: Action, project: int) -> bool:
        """Whether the caller may do ``action`` in ``project``."""
        return self.everything or allows(self.roles.get(project), action)

    def require(self, action: Action, project: int, what: str | None = None) -> None:
        """Refuses (401, as the contract answers "no access") unless the caller may.

        ``what`` names the record ("item 12"); by default the project itself.
        """
        if self.may(action, project):
            return
        what = what or f"project {project}"
        role = self.roles.get(project)
        if role is None:
            raise PermissionDenied(f"You have no access to {what}.")
        raise PermissionDenied(
            f"Your role {role.value} in project {project} does not allow you to "
            f"{action.value} {what}; that needs {NEEDS[action].value} or stronger."
        )

    def readable(self) -> frozenset[int] | None:
        """The projects the caller may read; ``None`` means every project."""
        if self.everything:
            return None
        return frozenset(self.roles)

    def allowed(self, project: int, change: Action = Action.WRITE) -> list[str]:
        """``resources.self.allowed``: the methods the caller may use on a record."""
        if self.may(change, project):
            return ["GET", "PUT", "DELETE"]
        return ["GET"] if self.may(Action.READ, project) else []


def readable(
    access: Access,
    rows: list[R],
    asked: Sequence[int],
    noun: str,
    project: Callable[[R], int] | None = None,
) -> list[R]:
    """The rows the caller may read (``project`` gives a row's project; default its
    ``project`` attribute).

    Lists and includes leave out what the caller may not see; a read of exactly one
    record refuses instead (401 with a message), as the contract answers "no access".
    """
    if access.everything:
        return rows
    of = project or _project
    kept = [row for row in rows if access.may(Action.READ, of(row))]
    if len(asked) == 1 and rows and not kept:
        access.require(Action.READ, of(rows[0]), f"{noun} {asked[0]}")
    return kept


async def read_by_ids(
    db: Database,
    access: Access,
    query: Select[Any],
    ids: Sequence[int],
    noun: str,
    project: Callable[[Row[Any]], int] | None = None,
) -> list[Row[Any]]:
    """The rows ``query`` (a read of ``ids``) finds that the caller may read: a read of
    exactly one id is NotFound when it finds nothing, and refused as ``readable`` says."""
    async with db.read() as session:
        rows = (await session.execute(query)).all()
    check_batch(rows, ids, noun)
    return readable(access, list(rows), ids, noun, project)


def readable_where(access: Access, project: ColumnElement[Any]) -> ColumnElement[bool]:
    """A condition that ``project`` (a column of project ids) is one the caller may read;
    always true for those who may read every project. Lists filter with it before they
    count, so ``totalResults`` counts only what the caller may see."""
    visible = access.readable()
    return true() if visible is None else project.in_(sorted(visible))


def _project(row: Any) -> int:
    return int(row.project)


Fetch = Callable[[int], Awaitable[Mapping[int, Role]]]

#: Users whose access a process keeps at most; past it, expired entries go, and if none
#: had expired, all of them (the next request of each asks identity again).
MAX_USERS = 10_000


class AccessCache:
    """Principals' access, kept until identity announces a change.

    A drop bumps a generation counter, so a fetch that was under way when the drop
    happened is used for its own request but not kept.
    """

    def __init__(self, fetch: Fetch, ttl: float) -> None:
        self._fetch = fetch
        self._ttl = ttl
        self._entries: dict[int, tuple[float, Mapping[int, Role]]] = {}
        self._generation = 0
        self._position = 0
        self._subscription: Subscription | None = None

    async def of(self, principal: Principal) -> Access:
        """The access of ``principal``."""
        if principal.is_admin:
            return Access(principal, _NO_ROLES)
        now = time.monotonic()
        entry = self._entries.get(principal.user_id)
        if entry is not None and entry[0] > now:
            return Access(principal, entry[1])
        generation = self._generation
        roles = MappingProxyType(dict(await self._fetch(principal.user_id)))
        if generation == self._generation:
            if len(self._entries) >= MAX_USERS:
                self._entries = with_room(self._entries, lambda e: e[0] > now, MAX_USERS)
            self._entries[principal.user_id] = (now + self._ttl, roles)
        return Access(principal, roles)

    async def current(self) -> Access:
        """The access of the current call's principal (PermissionDenied without one)."""
        return await self.of(require_principal())

    def drop(self) -> None:
        """Forgets everything: the next request of each user asks identity again."""
        self._generation += 1
        self._entries.clear()

    async def on_event(self, event: Event) -> None:
        """Bus handler for ``identity.*``: permissions, memberships, users, placements."""
        self.drop()
        self._position = max(self._position, event.position)

    def settle(self, position: int) -> None:
        """Makes sure changes up to identity's outbox ``position`` hold here.

        When the events up to it have not arrived yet, dropping everything has the same
        effect: every later check asks identity, which has committed them.
        """
        if position > self._position:
            self.drop()
            self._position = position

    async def watch(self, bus: Bus) -> None:
        """Follows identity's events (new ones only); once per process."""
        if self._subscription is None:
            self._subscription = await bus.subscribe(f"{bus.prefix}.identity.>", self.on_event)

    async def close(self) -> None:
        """Stops following events."""
        if self._subscription is not None:
            await self._subscription.stop()
            self._subscription = None


def identity_fetch(channel: Callable[[], aio.Channel]) -> Fetch:
    """Fetches a user's effective roles from identity's ``Permissions`` service.

    ``channel`` is called at the first fetch: a process's own gRPC port is known only
    once its server listens.
    """

    async def fetch(user_id: int) -> Mapping[int, Role]:
        stub = identity_pb2_grpc.PermissionsStub(channel())
        reply = await stub.GetAccess(core_pb2.Id(id=user_id))
        return {project: Role(role) for project, role in reply.roles.items()}

    return fetch


class AccessServicer(core_pb2_grpc.AccessServicer):
    """``plumbline.core.v1.Access``: one per process, whatever it runs."""

    def __init__(self, cache: AccessCache) -> None:
        self.cache = cache

    async def Settle(self, request: core_pb2.Watermark, context: Context) -> core_pb2.Empty:
        self.cache.settle(request.position)
        return core_pb2.Empty()
