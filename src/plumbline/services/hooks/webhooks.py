"""Webhook subscriptions: made, read, changed and removed by their owners, and the
delivery log and redeliveries they ask for.

Who may subscribe to what (``_check_scope``): a subscription names the projects whose
changes it wants, each one its owner may read; one that takes every change of a project
(no ``objectTypes`` and no ``itemTypes`` narrowing it) needs the project's
administrator; one without projects takes every project's, and the organisation's,
changes and so is for organisation administrators. A subscription is its owner's: others
do not see it (404), organisation administrators see and manage all. Deliveries
themselves carry only what the owner may read at delivery time (``delivery``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import orjson
from sqlalchemy import Row, delete, func, insert, select, update

from plumbline.common.access import Access, AccessCache, Action
from plumbline.common.changes import EVENT_TYPES, OBJECT_TYPES
from plumbline.common.context import require_principal
from plumbline.common.dates import utcnow
from plumbline.common.db import Database, affected
from plumbline.common.errors import InvalidArgument, NotFound, PermissionDenied
from plumbline.services.hooks import targets
from plumbline.services.hooks.feed import ChangeFeed
from plumbline.services.hooks.models import deliveries, redeliveries, webhooks
from plumbline.services.hooks.owners import Owners
from plumbline.services.hooks.secrets import Sealer, new_secret

#: The most webhooks one user may own, and the most projects or item types one names.
MAX_PER_OWNER = 100
MAX_LISTED = 200
#: Members ``update`` may change (wire names).
UPDATABLE = frozenset(
    {
        "url",
        "description",
        "active",
        "includeObject",
        "objectTypes",
        "eventTypes",
        "projects",
        "itemTypes",
    }
)


@dataclass
class WebhookSpec:
    """What a subscription asks for (a new one, or the members an update changes)."""

    url: str = ""
    description: str = ""
    active: bool = True
    include_object: bool = True
    object_types: list[str] = field(default_factory=list)
    event_types: list[str] = field(default_factory=list)
    projects: list[int] = field(default_factory=list)
    item_types: list[int] = field(default_factory=list)


def filters(row: Any) -> dict[str, list[Any]]:
    """A webhook row's filters as lists."""
    return {
        name: orjson.loads(getattr(row, name))
        for name in ("object_types", "event_types", "projects", "item_types")
    }


class Webhooks:
    """The subscriptions' store, as the calling user may use it."""

    def __init__(
        self,
        db: Database,
        feed: ChangeFeed,
        access: AccessCache,
        owners: Owners,
        sealer: Sealer,
        *,
        allow_private: bool,
        secret_grace: timedelta,
    ) -> None:
        self.db = db
        self.feed = feed
        self.access = access
        self.owners = owners
        self.sealer = sealer
        self.allow_private = allow_private
        self.secret_grace = secret_grace
        #: Told of each redelivery asked for (the module wakes the webhook's delivery).
        self.asked: Callable[[int], None] = lambda webhook_id: None

    async def create(self, spec: WebhookSpec) -> tuple[Row[Any], str]:
        """A new subscription of the caller's, delivering the changes from now on, and
        its secret (shown this once)."""
        access = await self.access.current()
        await self._check(spec, access)
        owner = access.principal.user_id
        secret = new_secret()
        now = utcnow()
        head = await self.feed.head()
        async with self.db.transaction() as session:
            owned = await session.scalar(
                select(func.count()).select_from(webhooks).where(webhooks.c.owner == owner)
            )
            if int(owned or 0) >= MAX_PER_OWNER:
                raise InvalidArgument(
                    f"a user may own at most {MAX_PER_OWNER} webhooks; delete one first"
                )
            new_id = await session.scalar(
                insert(webhooks)
                .values(
                    owner=owner,
                    url=spec.url,
                    description=spec.description,
                    active=spec.active,
                    include_object=spec.include_object,
                    **_lists(spec),
                    secret=self.sealer.seal(secret),
                    delivered_through=head,
                    attempts=0,
                    created=now,
                    modified=now,
                )
                .returning(webhooks.c.id)
            )
        return await self.get(int(new_id or 0)), secret

    async def page(self, start: int, size: int) -> tuple[list[Row[Any]], int]:
        """The caller's webhooks (every one, to organisation administrators), by id."""
        principal = require_principal()
        where = [] if principal.is_admin else [webhooks.c.owner == principal.user_id]
        async with self.db.read() as session:
            total = await session.scalar(select(func.count()).select_from(webhooks).where(*where))
            rows = (
                await session.execute(
                    select(webhooks)
                    .where(*where)
                    .order_by(webhooks.c.id)
                    .offset(start)
                    .limit(min(size, MAX_LISTED))
                )
            ).all()
        return list(rows), int(total or 0)

    async def get(self, webhook_id: int) -> Row[Any]:
        """The caller's webhook ``webhook_id`` (NotFound for anyone else's)."""
        async with self.db.read() as session:
            row = (
                await session.execute(select(webhooks).where(webhooks.c.id == webhook_id))
            ).one_or_none()
        principal = require_principal()
        if row is None or not (principal.is_admin or row.owner == principal.user_id):
            raise NotFound(f"Webhook {webhook_id} does not exist.")
        return row

    async def update(self, webhook_id: int, spec: WebhookSpec, fields: Sequence[str]) -> Row[Any]:
        """Changes the members named in ``fields``; making a webhook active again clears
        the failures that disabled it (its deliveries go on from the change that
        failed)."""
        unknown = sorted(set(fields) - UPDATABLE)
        if unknown:
            raise InvalidArgument(
                f"cannot change {', '.join(unknown)}; a webhook's changeable members are "
                f"{', '.join(sorted(UPDATABLE))}"
            )
        row = await self.get(webhook_id)
        merged = WebhookSpec(
            url=spec.url if "url" in fields else row.url,
            description=spec.description if "description" in fields else row.description,
            active=spec.active if "active" in fields else row.active,
            include_object=(
                spec.include_object if "includeObject" in fields else row.include_object
            ),
            **{
                name: getattr(spec, name) if wire in fields else current
                for (name, current), wire in zip(
                    filters(row).items(),
                    ("objectTypes", "eventTypes", "projects", "itemTypes"),
                    strict=True,
                )
            },
        )
        # An owner's webhook stays within what the owner may subscribe to, whoever
        # changes it.
        owner_access = await self._owner_access(row)
        await self._check(merged, owner_access)
        values: dict[str, Any] = {
            "url": merged.url,
            "description": merged.description,
            "active": merged.active,
            "include_object": merged.include_object,
            **_lists(merged),
            "modified": utcnow(),
        }
        if merged.active and not row.active:
            values |= {
                "disabled_reason": None,
                "failing_since": None,
                "attempts": 0,
                "next_attempt": None,
            }
        async with self.db.transaction() as session:
            await session.execute(
                update(webhooks).where(webhooks.c.id == webhook_id).values(**values)
            )
        return await self.get(webhook_id)

    async def delete(self, webhook_id: int) -> None:
        """Removes the webhook, its delivery log and pending redeliveries."""
        await self.get(webhook_id)
        async with self.db.transaction() as session:
            await session.execute(delete(redeliveries).where(redeliveries.c.webhook == webhook_id))
            await session.execute(delete(deliveries).where(deliveries.c.webhook == webhook_id))
            await session.execute(delete(webhooks).where(webhooks.c.id == webhook_id))

    async def rotate(self, webhook_id: int) -> tuple[Row[Any], str]:
        """A new secret; the current one keeps signing (beside it) for the grace period."""
        row = await self.get(webhook_id)
        secret = new_secret()
        now = utcnow()
        async with self.db.transaction() as session:
            await session.execute(
                update(webhooks)
                .where(webhooks.c.id == webhook_id)
                .values(
                    secret=self.sealer.seal(secret),
                    previous_secret=row.secret if self.secret_grace else None,
                    previous_expires=now + self.secret_grace if self.secret_grace else None,
                    modified=now,
                )
            )
        return await self.get(webhook_id), secret

    async def deliveries(
        self, webhook_id: int, start: int, size: int
    ) -> tuple[list[Row[Any]], int]:
        """The webhook's delivery log, newest first."""
        await self.get(webhook_id)
        where = deliveries.c.webhook == webhook_id
        async with self.db.read() as session:
            total = await session.scalar(select(func.count()).select_from(deliveries).where(where))
            rows = (
                await session.execute(
                    select(deliveries)
                    .where(where)
                    .order_by(deliveries.c.id.desc())
                    .offset(start)
                    .limit(min(size, MAX_LISTED))
                )
            ).all()
        return list(rows), int(total or 0)

    async def redeliver(self, webhook_id: int, event_id: str) -> None:
        """Queues the change of event ``event_id`` to be sent again, whether or not it
        was delivered (NotFound when the feed no longer keeps it)."""
        row = await self.get(webhook_id)
        cursor = await self.feed.cursor_of(event_id)
        if cursor is None:
            raise NotFound(
                f"No change with event id {event_id!r} is in the change feed (it keeps "
                "changes for PLUMBLINE_EVENTS_RETENTION_DAYS)."
            )
        if cursor > row.delivered_through:
            raise InvalidArgument(
                f"the change {event_id} has not been delivered yet (the webhook has come "
                f"to cursor {row.delivered_through}, the change is {cursor}); it will be"
            )
        async with self.db.transaction() as session:
            await session.execute(
                insert(redeliveries).values(webhook=webhook_id, cursor=cursor, asked=utcnow())
            )
        self.asked(webhook_id)

    async def prune_log(self, older_than: timedelta) -> int:
        """Deletes delivery log entries older than ``older_than``; how many went."""
        async with self.db.transaction() as session:
            return await affected(
                session, delete(deliveries).where(deliveries.c.at < utcnow() - older_than)
            )

    async def _owner_access(self, row: Any) -> Access:
        if require_principal().user_id == row.owner:
            return await self.access.current()
        # An organisation administrator changing another's webhook: the owner's access.
        return await self.owners.access_of(row.owner)

    async def _check(self, spec: WebhookSpec, access: Access) -> None:
        targets.check_url(spec.url)
        _check_filters(spec)
        _check_scope(spec, access)
        try:
            await targets.check_address(spec.url, self.allow_private)
        except targets.Refused as refused:
            raise InvalidArgument(f"url is refused: {refused}") from None


def _lists(spec: WebhookSpec) -> dict[str, str]:
    return {
        "object_types": orjson.dumps(sorted(set(spec.object_types))).decode(),
        "event_types": orjson.dumps(sorted(set(spec.event_types))).decode(),
        "projects": orjson.dumps(sorted(set(spec.projects))).decode(),
        "item_types": orjson.dumps(sorted(set(spec.item_types))).decode(),
    }


def _check_filters(spec: WebhookSpec) -> None:
    for name, given, allowed in (
        ("objectTypes", spec.object_types, OBJECT_TYPES),
        ("eventTypes", spec.event_types, EVENT_TYPES),
    ):
        wrong = sorted(set(given) - set(allowed))
        if wrong:
            raise InvalidArgument(
                f"{name} must be among {', '.join(allowed)}; got {', '.join(wrong)}"
            )
    for name, ids in (("projects", spec.projects), ("itemTypes", spec.item_types)):
        if len(ids) > MAX_LISTED:
            raise InvalidArgument(f"{name} may name at most {MAX_LISTED}, got {len(ids)}")
        if any(i <= 0 for i in ids):
            raise InvalidArgument(f"{name} must be positive ids")
    if len(spec.description) > 2000:
        raise InvalidArgument("description must be at most 2000 characters")


def _check_scope(spec: WebhookSpec, access: Access) -> None:
    """Refuses a subscription its owner may not make (the module's docstring)."""
    if access.everything:
        return
    if not spec.projects:
        raise PermissionDenied(
            "Only an organization administrator may subscribe to every project's changes; "
            "name the projects (projects) whose changes the webhook wants."
        )
    whole = not spec.object_types and not spec.item_types
    for project in spec.projects:
        access.require(Action.READ, project)
        if whole and not access.may(Action.ADMIN, project):
            raise PermissionDenied(
                f"Only an administrator of project {project} may subscribe to all its "
                "changes; narrow the webhook with objectTypes or itemTypes."
            )
