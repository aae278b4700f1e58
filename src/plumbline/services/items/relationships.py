"""Relationships between items, and the suspect flag that follows upstream changes."""

from __future__ import annotations

from collections import Counter
from typing import Any

from sqlalchemy import Row, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.access import Access, AccessCache, Action, readable, readable_where
from plumbline.common.catalog import Catalog
from plumbline.common.context import Principal
from plumbline.common.dates import utcnow
from plumbline.common.db import (
    Database,
    affected,
    check_batch,
    first_or_missing,
    insert_id,
    unique_violation,
)
from plumbline.common.errors import AlreadyExists, InvalidArgument, NotFound
from plumbline.common.events import Event
from plumbline.common.outbox import Outbox
from plumbline.services.items import tree
from plumbline.services.items.config import Configuration
from plumbline.services.items.foreign import (
    NONE,
    Foreign,
    Subject,
    ends,
    project_of,
    readable_ids,
    remember,
    subject,
)
from plumbline.services.items.models import items, projects, relationships

#: Relationships whose two ends are both active items (``visible`` is kept so by item
#: deletes; see ``hide_relationships_of``).
_VISIBLE = select(relationships).where(relationships.c.visible.is_(True))


def _both_ends_readable(access: Access, query: Any) -> Any:
    """``query`` without the relationships one of whose items the caller may not read."""
    if access.readable() is None:
        return query
    readable = readable_ids(access)
    return query.where(
        relationships.c.from_item.in_(readable), relationships.c.to_item.in_(readable)
    )


class Relationships:
    """Relationship rules and storage.

    Either end may be an item or an abstract item another service owns (a test plan or
    run, see ``foreign``). A relationship belongs to its from-item's project. Reading one
    needs READ on the projects of both its items; creating, changing or deleting one needs
    WRITE on the from-item's project and READ on the to-item's (a relationship across
    projects: WRITE where it starts, READ where it ends).
    """

    def __init__(
        self, db: Database, outbox: Outbox, config: Configuration, access: AccessCache
    ) -> None:
        self.db = db
        self.outbox = outbox
        self.config = config
        self.access = access

    async def page(
        self,
        project: int | None,
        item: int | None,
        upstream: bool,
        start_at: int,
        max_results: int,
        last_id: int | None = None,
        omit_count: bool = False,
        foreign: Foreign = NONE,
    ) -> tuple[list[Row[Any]], int]:
        """A project's relationships by id, or one item's up- or downstream ones (those
        whose other item the caller may not read left out)."""
        access = await self.access.current()
        known_total: int | None = None
        async with self.db.read() as session:
            if item is not None:
                await subject(session, item, foreign, access)
                column = relationships.c.to_item if upstream else relationships.c.from_item
                query = _VISIBLE.where(column == item)
            else:
                if project is None:
                    raise InvalidArgument("the query parameter project is required")
                kept = await session.scalar(
                    select(projects.c.visible_relationships).where(projects.c.id == project)
                )
                if kept is None:
                    raise NotFound(f"No project with id {project}.")
                access.require(Action.READ, project)
                query = _VISIBLE.where(relationships.c.project == project)
                if access.readable() is None and last_id is None:
                    # Whoever reads every project sees them all: the kept count.
                    known_total = int(kept)
            query = _both_ends_readable(access, query)
            if last_id is not None:
                query = query.where(relationships.c.id > last_id)
            rows = list(
                (
                    await session.execute(
                        query.order_by(relationships.c.id).offset(start_at).limit(max_results)
                    )
                ).all()
            )
            if omit_count:
                # Without a count, say whether another page may follow.
                more = 1 if len(rows) == max_results else 0
                return rows, start_at + len(rows) + more
            if known_total is not None:
                return rows, known_total
            total = await session.scalar(select(func.count()).select_from(query.subquery()))
        return rows, int(total or 0)

    async def related(
        self,
        item: int,
        upstream: bool,
        start_at: int,
        max_results: int,
        foreign: Foreign = NONE,
        items_only: bool = False,
    ) -> tuple[list[tuple[int, bool]], int]:
        """The abstract items up- or downstream of ``item`` (each once) that the caller may
        read, as (id, owned by another service), and their total; ``items_only`` leaves
        out those of other services."""
        access = await self.access.current()
        async with self.db.read() as session:
            await subject(session, item, foreign, access)
            mine, other = (
                (relationships.c.to_item, relationships.c.from_item)
                if upstream
                else (relationships.c.from_item, relationships.c.to_item)
            )
            end = ends(items_only)
            related = (
                select(end.c.id, end.c.foreign)
                .join(relationships, end.c.id == other)
                .where(mine == item, relationships.c.visible.is_(True))
                .where(readable_where(access, end.c.project))
                .distinct()
                .subquery()
            )
            total = await session.scalar(select(func.count()).select_from(related))
            rows = (
                await session.execute(
                    select(related).order_by(related.c.id).offset(start_at).limit(max_results)
                )
            ).all()
        return [(int(r.id), bool(r.foreign)) for r in rows], int(total or 0)

    async def get_many(self, ids: list[int]) -> list[Row[Any]]:
        """Relationships the caller may read (both items), by id; a single unknown id is
        NotFound, a single one the caller may not read PermissionDenied."""
        access = await self.access.current()
        query = _VISIBLE.add_columns(project_of(relationships.c.to_item).label("to_project"))
        async with self.db.read() as session:
            rows = (await session.execute(query.where(relationships.c.id.in_(ids)))).all()
        check_batch(rows, ids, "relationship")

        def deciding(row: Any) -> int:
            # The from-item's project, then the to-item's: the first the caller may not read.
            return int(row.to_project if access.may(Action.READ, row.project) else row.project)

        kept = readable(access, list(rows), ids, "relationship", deciding)
        return sorted(kept, key=lambda r: r.id)

    def _type(self, catalog: Catalog, wanted: int | None) -> int:
        # The contract: a missing or invalid type means the default one.
        if wanted is not None and wanted in catalog.relationship_types:
            return wanted
        return catalog.default_relationship_type().id

    async def create(
        self,
        from_item: int,
        to_item: int,
        relationship_type: int | None,
        foreign: Foreign = NONE,
    ) -> int:
        """``POST /relationships``."""
        [new_id] = await self.create_many([(from_item, to_item, relationship_type)], foreign)
        return new_id

    async def create_many(
        self, batch: list[tuple[int, int, int | None]], foreign: Foreign = NONE
    ) -> list[int]:
        """Creates (from, to, type) relationships in one transaction: all or none."""
        access = await self.access.current()
        caller = access.principal
        catalog = await self.config.catalog()
        checked = []
        for from_item, to_item, relationship_type in batch:
            if from_item == to_item:
                raise InvalidArgument("fromItem and toItem must be different items.")
            checked.append((from_item, to_item, self._type(catalog, relationship_type)))
        now = utcnow()
        ids = []
        added: Counter[int] = Counter()
        try:
            async with self.outbox.transaction() as session:
                # One read for the whole batch's items, rather than two per relationship.
                named = {i for pair in checked for i in pair[:2]}
                found: dict[int, Subject] = {
                    row.id: Subject(row.id, row.project)
                    for row in (
                        await session.execute(
                            select(items.c.id, items.c.project).where(
                                items.c.id.in_(named - set(foreign)), items.c.active.is_(True)
                            )
                        )
                    ).all()
                }
                for wanted in named & set(foreign):
                    found[wanted] = await subject(session, wanted, foreign)
                await remember(self.db, session, found.values())
                for from_item, to_item, rel_type in checked:
                    for name, wanted in (("fromItem", from_item), ("toItem", to_item)):
                        if wanted not in found:
                            raise InvalidArgument(f"{name}: no item with id {wanted}.")
                    source = found[from_item]
                    access.require(Action.WRITE, source.project, str(source))
                    access.require(Action.READ, found[to_item].project, str(found[to_item]))
                    new_id = await insert_id(
                        session,
                        relationships.insert().values(
                            project=source.project,
                            from_item=from_item,
                            to_item=to_item,
                            relationship_type=rel_type,
                            suspect=False,
                            created_by=caller.user_id,
                            created_at=now,
                            modified_at=now,
                        ),
                    )
                    await self.outbox.add(
                        session,
                        relationship_event(
                            "created",
                            new_id,
                            source.project,
                            caller,
                            from_item,
                            (to_item, found[to_item].project),
                            rel_type,
                        ),
                    )
                    ids.append(new_id)
                    added[source.project] += 1
                await tree.count_relationships(session, added)
        except IntegrityError as exc:
            if unique_violation(exc):
                which = (
                    f"from {batch[0][0]} to {batch[0][1]}"
                    if len(batch) == 1
                    else "between one of those pairs of items"
                )
                raise AlreadyExists(
                    f"A relationship {which} of that type already exists."
                ) from None
            raise
        return ids

    async def update(
        self,
        rel_id: int,
        from_item: int,
        to_item: int,
        relationship_type: int | None,
        foreign: Foreign = NONE,
    ) -> None:
        """``PUT /relationships/{id}``: WRITE on the current from-item's project and on the
        new one's, READ on the new to-item's."""
        access = await self.access.current()
        caller = access.principal
        catalog = await self.config.catalog()
        rel_type = self._type(catalog, relationship_type)
        if from_item == to_item:
            raise InvalidArgument("fromItem and toItem must be different items.")
        try:
            async with self.outbox.transaction() as session:
                current = await self._existing(session, rel_id, access)
                source = await subject(
                    session, from_item, foreign, access, Action.WRITE, "fromItem"
                )
                target = await subject(session, to_item, foreign, access, Action.READ, "toItem")
                await remember(self.db, session, (source, target))
                await session.execute(
                    update(relationships)
                    .where(relationships.c.id == rel_id)
                    .values(
                        project=source.project,
                        from_item=from_item,
                        to_item=to_item,
                        relationship_type=rel_type,
                        modified_at=utcnow(),
                    )
                )
                if source.project != current.project:
                    await tree.count_relationships(
                        session, {current.project: -1, source.project: 1}
                    )
                await self.outbox.add(
                    session,
                    relationship_event(
                        "updated",
                        rel_id,
                        source.project,
                        caller,
                        from_item,
                        (to_item, target.project),
                        rel_type,
                        current.suspect,
                    ),
                )
        except IntegrityError as exc:
            if unique_violation(exc):
                raise AlreadyExists(
                    f"A relationship from {from_item} to {to_item} of that type already exists."
                ) from None
            raise

    async def _existing(self, session: AsyncSession, rel_id: int, access: Access) -> Row[Any]:
        """A relationship the caller may change (WRITE on its from-item's project)."""
        row = await first_or_missing(
            session,
            _VISIBLE.where(relationships.c.id == rel_id),
            f"No relationship with id {rel_id}.",
        )
        access.require(Action.WRITE, row.project, f"relationship {rel_id}")
        return row

    async def delete(self, rel_id: int) -> None:
        """``DELETE /relationships/{id}``."""
        access = await self.access.current()
        caller = access.principal
        async with self.outbox.transaction() as session:
            row = await self._existing(session, rel_id, access)
            await delete_row(session, self.outbox, row, caller)

    async def clear_suspect(self, rel_id: int) -> None:
        """``DELETE /relationships/{id}/suspect``."""
        access = await self.access.current()
        caller = access.principal
        async with self.outbox.transaction() as session:
            row = await self._existing(session, rel_id, access)
            await session.execute(
                update(relationships)
                .where(relationships.c.id == rel_id)
                .values(suspect=False, modified_at=utcnow())
            )
            await self.outbox.add(
                session,
                relationship_event(
                    "updated",
                    rel_id,
                    row.project,
                    caller,
                    row.from_item,
                    await _end(session, row.to_item),
                    row.relationship_type,
                ),
            )


async def delete_row(
    session: AsyncSession, outbox: Outbox, row: Row[Any], caller: Principal
) -> None:
    """Deletes the relationship ``row`` (read in ``session``) with its event; ``DELETE
    /relationships/{id}`` and the bulk import's delete lines."""
    await session.execute(relationships.delete().where(relationships.c.id == row.id))
    await tree.count_relationships(session, {row.project: -1})
    await outbox.add(
        session,
        relationship_event(
            "deleted",
            row.id,
            row.project,
            caller,
            row.from_item,
            await _end(session, row.to_item),
            row.relationship_type,
        ),
    )


async def _end(session: AsyncSession, item: int) -> tuple[int, int | None]:
    """A relationship's to-item and its project (an item's, deleted or not, or a foreign
    item's)."""
    return item, await session.scalar(select(project_of(item)))


async def mark_downstream_suspect(session: AsyncSession, item_id: int) -> int:
    """After a suspect-triggering change of ``item_id``: flags its downstream links."""
    return await affected(
        session,
        update(relationships)
        .where(relationships.c.from_item == item_id, relationships.c.suspect.is_(False))
        .values(suspect=True, modified_at=utcnow()),
    )


async def hide_relationships_of(session: AsyncSession, deleted: Any) -> None:
    """After items were deleted: their relationships leave listings and counts.

    ``deleted`` is a SELECT of the deleted items' ids. Relationships are kept (hidden), as
    the items are, so that a restore can bring both back.
    """
    hidden = await session.scalars(
        update(relationships)
        .where(
            relationships.c.visible.is_(True),
            relationships.c.from_item.in_(deleted) | relationships.c.to_item.in_(deleted),
        )
        .values(visible=False)
        .returning(relationships.c.project)
    )
    await tree.count_relationships(session, tree.fewer(hidden.all()))


async def show_relationships_of(
    session: AsyncSession, restored: list[int], actor: Principal
) -> list[Event]:
    """After items were restored: their hidden relationships whose other end is active
    (or another service's abstract item) show again. Returns their
    ``items.relationship.restored`` events: the history ended them with the deletion."""
    deleted = select(items.c.id).where(items.c.active.is_(False))
    shown = (
        await session.execute(
            select(relationships, project_of(relationships.c.to_item).label("to_project")).where(
                relationships.c.visible.is_(False),
                relationships.c.from_item.in_(restored) | relationships.c.to_item.in_(restored),
                relationships.c.from_item.not_in(deleted),
                relationships.c.to_item.not_in(deleted),
            )
        )
    ).all()
    if shown:
        await session.execute(
            update(relationships)
            .where(relationships.c.id.in_([r.id for r in shown]))
            .values(visible=True)
        )
        await tree.count_relationships(session, Counter(r.project for r in shown))
    return [
        relationship_event(
            "restored",
            r.id,
            r.project,
            actor,
            r.from_item,
            (r.to_item, r.to_project),
            r.relationship_type,
            r.suspect,
        )
        for r in shown
    ]


def relationship_event(
    action: str,
    rel_id: int,
    project: int,
    actor: Principal,
    from_item: int,
    to: tuple[int, int | None],
    rel_type: int | None,
    suspect: bool = False,
) -> Event:
    """``items.relationship.<action>`` with the relationship as it is after the change
    (the history keeps relationships over time from these). ``to`` is the to-item and its
    project (``toProject``: the activity feed shows the change only to those who may
    read both ends; the event's project is the from-item's)."""
    to_item, to_project = to
    return Event(
        f"items.relationship.{action}",
        actor=actor.user_id,
        project=project,
        object_ids=[rel_id],
        payload={
            "fromItem": from_item,
            "toItem": to_item,
            "relationshipType": rel_type,
            "suspect": suspect,
            "toProject": to_project,
            "name": f"{from_item} to {to_item}",
        },
    )
