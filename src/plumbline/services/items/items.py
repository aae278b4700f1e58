"""The requirements tree: creating, reading, changing and deleting items."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Row,
    and_,
    bindparam,
    func,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common import jsonpatch
from plumbline.common.access import Access, AccessCache, Action, readable
from plumbline.common.catalog import Catalog, ItemType
from plumbline.common.context import Principal
from plumbline.common.dates import utcnow
from plumbline.common.db import Database, check_batch, unique_violation
from plumbline.common.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
)
from plumbline.common.fields import SYSTEM_FIELDS, check_fields, check_required
from plumbline.common.idblocks import IdAllocator
from plumbline.common.outbox import Outbox
from plumbline.services.items import itemdoc, tree, workflow
from plumbline.services.items.config import Configuration
from plumbline.services.items.events import CATEGORIES, item_event
from plumbline.services.items.idspace import IdSpace, next_numbers
from plumbline.services.items.itemdoc import ItemInput
from plumbline.services.items.models import items, projects
from plumbline.services.items.positions import Key, Positions
from plumbline.services.items.relationships import (
    hide_relationships_of,
    mark_downstream_suspect,
)
from plumbline.services.items.releases import check_releases, sync_item_releases
from plumbline.services.items.search import search_text

#: Item categories that belong to other services (test management, attachments).
FOREIGN_CATEGORIES = ("TEST_PLAN", "TEST_CYCLE", "TEST_RUN", "ATTACHMENT")

# Every write reads its item: built once, not per call (building and keying a statement
# for the cache costs about as much as running a simple one).
_ACTIVE = select(items).where(items.c.id == bindparam("item"), items.c.active.is_(True))
_ACTIVE_LOCKED = _ACTIVE.with_for_update()


class KEEP:
    """``Items.new_version``'s parent when the item stays where it is."""


class Items:
    """Item rules and storage."""

    def __init__(
        self,
        db: Database,
        outbox: Outbox,
        config: Configuration,
        ids: IdSpace,
        access: AccessCache,
    ) -> None:
        self.db = db
        self.access = access
        self.outbox = outbox
        self.config = config
        self.allocator = IdAllocator(lambda: ids.allocate("items"))
        self.positions = Positions()

    # -- reading -------------------------------------------------------------------

    async def get_many(self, ids: list[int], *columns: Any) -> list[Row[Any]]:
        """Active items the caller may read, by id (only ``columns`` of them, ``project``
        among them, when given); a single unknown id is NotFound."""
        access = await self.access.current()
        async with self.db.read() as session:
            rows = (
                await session.execute(
                    select(*(columns or (items,))).where(
                        items.c.id.in_(ids), items.c.active.is_(True)
                    )
                )
            ).all()
        check_batch(rows, ids, "item")
        kept = readable(access, list(rows), ids, "item")
        order = {item_id: position for position, item_id in enumerate(ids)}
        return sorted(kept, key=lambda r: order.get(r.id, 0))

    async def page(
        self,
        project: int,
        root_only: bool,
        parent: int | None,
        start_at: int,
        max_results: int,
    ) -> tuple[list[Row[Any]], int]:
        """Items of a project in tree order, its root items, or one item's children."""
        access = await self.access.current()
        async with self.db.read() as session:
            total: int | None = None
            key: Key | None = None  # where the page's place is kept (a project's list)
            if parent is not None:
                parent_row = await self.active(session, parent, access)
                where = and_(items.c.parent == parent_row.id, items.c.active.is_(True))
                order = items.c.sort_order
            else:
                # The project's kept count answers a whole project's totalResults: a
                # count over the project grew with it (about 1.5 times the first page's
                # cost at 20,000 items).
                found = (
                    await session.execute(
                        select(projects.c.active_items, projects.c.tree_changes).where(
                            projects.c.id == project
                        )
                    )
                ).first()
                if found is None:
                    raise NotFound(f"No project with id {project}.")
                access.require(Action.READ, project)
                where = and_(items.c.project == project, items.c.active.is_(True))
                if root_only:
                    where = and_(where, items.c.parent.is_(None))
                else:
                    total = int(found.active_items)
                order = items.c.global_sort_order
                # Read before the page: the page is at least as new as the key.
                key = Key(project, root_only, int(found.tree_changes), start_at)
            if total is None:
                total = await session.scalar(select(func.count()).select_from(items).where(where))
            # Both orders are unique among active items (siblings' sort orders, the
            # project's global order), so no tie-breaker: with one, SQLite sorted every
            # row in scope instead of walking the index, and deep pages cost 10x more.
            page = select(items).where(where).order_by(order)
            place = self.positions.find(key) if key is not None and start_at else None
            if place is not None:
                page = page.where(order > place.order if place.after else order >= place.order)
            elif start_at:
                # Skip through the index alone (the order column is in it) to the page's
                # first value, then read just the page's rows: PostgreSQL otherwise read
                # and sorted the whole project for OFFSET 10000 (3x the first page).
                first = (
                    select(order).where(where).order_by(order).offset(start_at).limit(1)
                ).scalar_subquery()
                page = page.where(order >= first)
            rows = (await session.execute(page.limit(max_results))).all()
        if key is not None:
            self.positions.served(key, [int(row.global_sort_order) for row in rows])
        return list(rows), int(total or 0)

    async def active(
        self,
        session: AsyncSession,
        item_id: int,
        access: Access | None = None,
        action: Action = Action.READ,
        *,
        for_update: bool = False,
    ) -> Row[Any]:
        """An active item; with ``access``, refused unless the caller may ``action`` it;
        with ``for_update``, its row locked for the rest of the transaction."""
        row = (
            await session.execute(_ACTIVE_LOCKED if for_update else _ACTIVE, {"item": item_id})
        ).first()
        if row is None:
            raise NotFound(f"No item with id {item_id}.")
        if access is not None:
            access.require(action, row.project, f"item {item_id}")
        return row

    # -- creating --------------------------------------------------------------------

    async def create(self, data: ItemInput) -> int:
        """``POST /items``: the new item goes to the bottom of its parent."""
        [item_id] = await self.create_many([data])
        return item_id

    async def create_many(self, batch: list[ItemInput]) -> list[int]:
        """Creates items in order, in one transaction: all of them or none.

        The rules are those of ``POST /items``, item by item; bulk loaders (the bench's
        seed) use it to pay for one commit per batch instead of one per item.
        """
        access = await self.access.current()
        catalog = await self.config.catalog()
        checked = [self.checked(catalog, data) for data in batch]
        ids = await self.allocator.next_ids(len(batch))
        now = utcnow()
        try:
            async with self.outbox.transaction() as session:
                locked: dict[int, str] = {}
                more: dict[int, int] = {}
                for (data, item_type, child_type, fields), item_id in zip(
                    checked, ids, strict=True
                ):
                    await self._insert(
                        session,
                        access,
                        catalog,
                        (data, item_type, child_type, fields),
                        item_id,
                        now,
                        locked,
                        more,
                    )
                for project, count in more.items():
                    await tree.count_items(session, project, count)
        except IntegrityError as exc:
            if unique_violation(exc):
                raise AlreadyExists(
                    "An item with that document key already exists; try again."
                ) from None
            raise
        return ids

    def checked(
        self, catalog: Catalog, data: ItemInput
    ) -> tuple[ItemInput, ItemType, int | None, dict[str, Any]]:
        """What can be checked before the transaction: type, child type, field values."""
        if data.item_type is None:
            raise InvalidArgument("itemType is required.")
        item_type = self._own_type(catalog, data.item_type)
        child_type = self._child_type(catalog, data.child_item_type)
        fields = check_fields(catalog, item_type, data.fields or {}, creating=True)
        workflow.check_new(catalog, item_type, fields)
        if data.global_id is not None and not data.set_global_id_manually:
            raise InvalidArgument(
                "globalId can be set only with the query parameter setGlobalIdManually=true."
            )
        return data, item_type, child_type, fields

    async def _insert(
        self,
        session: AsyncSession,
        access: Access,
        catalog: Catalog,
        checked: tuple[ItemInput, ItemType, int | None, dict[str, Any]],
        item_id: int,
        now: datetime,
        locked: dict[int, str],
        more: dict[int, int],
    ) -> None:
        """Places and inserts one checked item, with its release links and its event.

        ``locked`` holds the key of each project this transaction has locked already: a
        batch locks a project and reads its key once, and reads after the lock are current.
        The lock counts the first item of a project; ``more`` the others, added to the
        count by ``create_many`` once the batch is in.
        """
        data, item_type, child_type, fields = checked
        if not locked:
            # The transaction's first item: its project found and locked in one statement.
            project, parent, locked[project] = await self._locked_placement(session, data)
            access.require(Action.WRITE, project, f"the items of project {project}")
        else:
            project, parent = await self._placement(session, data)
            access.require(Action.WRITE, project, f"the items of project {project}")
            if project not in locked:
                locked[project] = str(await tree.lock_project(session, project, added=1))
                if parent is not None:
                    parent = await self.active(session, parent.id)  # current after the lock
            else:
                more[project] = more.get(project, 0) + 1  # counted once the batch is in
        caller = access.principal
        project_key = locked[project]
        number = await self._next_number(session, project, item_type.id)
        sort_order, global_order = await tree.place_new(session, project, parent)
        document_key = f"{project_key}-{item_type.type_key}-{number}"
        global_id = data.global_id or f"GID-{item_type.type_key}-{item_id}"
        # RETURNING gives the row as a read would: the event is built from it.
        row = (
            await session.execute(
                items.insert()
                .values(
                    new_row(
                        item_id,
                        project,
                        (item_type.id, child_type),
                        (document_key, global_id),
                        parent.id if parent else None,
                        (
                            sort_order,
                            global_order,
                            tree.child_sequence(parent.sequence if parent else None, sort_order),
                        ),
                        fields,
                        caller.user_id,
                        now,
                    )
                )
                .returning(*items.c)
            )
        ).one()
        named = release_ids(item_type, fields)
        await check_releases(session, project, set(named), named)
        if named:  # a new item has no links to replace
            await sync_item_releases(session, item_id, set(named))
        await self.outbox.add(
            session, await item_event(session, "created", item_id, catalog, caller, row=row)
        )

    def _own_type(self, catalog: Catalog, item_type_id: int) -> ItemType:
        item_type = catalog.item_types.get(item_type_id)
        if item_type is None:
            known = ", ".join(f"{t.id} ({t.type_key})" for t in catalog.item_types.values())
            raise InvalidArgument(
                f"itemType {item_type_id} does not exist; item types are: {known}."
            )
        if item_type.category in FOREIGN_CATEGORIES:
            raise InvalidArgument(
                f"Items of type {item_type.type_key} are created through their own resource "
                f"(test plans, cycles, runs and attachments), not /items."
            )
        return item_type

    def _child_type(self, catalog: Catalog, child_item_type: int | None) -> int | None:
        if child_item_type is None:
            return None
        if child_item_type not in catalog.item_types:
            raise InvalidArgument(f"childItemType {child_item_type} does not exist.")
        return child_item_type

    async def _locked_placement(
        self, session: AsyncSession, data: ItemInput
    ) -> tuple[int, Any, str]:
        """``_placement`` and ``tree.lock_project`` (counting one new item) at once: (project,
        parent row or None, project key). The lock comes with finding the project
        (``tree.lock_new_place``), so the parent is read once, after it (current), instead
        of before it and again after. Where nothing was locked, ``_placement`` says why."""
        locked = None
        if data.parent_item is not None:
            if data.parent_project is None:
                locked = await tree.lock_new_place(session, item=data.parent_item)
        else:
            project = data.parent_project if data.parent_project is not None else data.project
            if project is not None and data.project in (None, project):
                locked = await tree.lock_new_place(session, project=project)
        if locked is None:
            await self._placement(session, data)  # raises what is wrong
            raise InvalidArgument("location: there is no such place for a new item.")
        project, key = locked
        if data.parent_item is None:
            return project, None, key
        _same_project(data, project)
        return project, await self.active(session, data.parent_item), key

    async def _placement(self, session: AsyncSession, data: ItemInput) -> tuple[int, Any]:
        """(project, parent row or None) for a new item, checked."""
        if data.parent_item is not None and data.parent_project is not None:
            raise InvalidArgument("location.parent takes an item or a project, not both.")
        if data.parent_item is not None:
            parent = (
                await session.execute(
                    select(items).where(items.c.id == data.parent_item, items.c.active.is_(True))
                )
            ).first()
            if parent is None:
                raise InvalidArgument(f"location.parent.item: no item with id {data.parent_item}.")
            _same_project(data, int(parent.project))
            return int(parent.project), parent
        project = data.parent_project if data.parent_project is not None else data.project
        if project is None:
            raise InvalidArgument("project is required (or a location.parent).")
        if (
            data.project is not None
            and data.parent_project is not None
            and data.project != data.parent_project
        ):
            raise InvalidArgument(f"project {data.project} does not match location.parent.project.")
        row = (
            await session.execute(
                select(projects.c.id, projects.c.is_folder).where(projects.c.id == project)
            )
        ).first()
        if row is None:
            raise InvalidArgument(f"project: no project with id {project}.")
        if row.is_folder:
            raise InvalidArgument(f"project {project} is a folder; items live in projects.")
        return int(project), None

    async def _next_number(self, session: AsyncSession, project: int, item_type: int) -> int:
        return await next_numbers(session, project, item_type, 1)

    # -- changing ------------------------------------------------------------------------

    async def update(self, item_id: int, data: ItemInput) -> None:
        """``PUT /items/{id}``: the fields sent replace the editable fields."""
        access = await self.access.current()
        catalog = await self.config.catalog()
        for whole_tree in (False, True):
            try:
                async with self.outbox.transaction() as session:
                    current = await self.writable(session, item_id, access, whole_tree)
                    await self._write(
                        session, catalog, current, data, access.principal, tree_locked=whole_tree
                    )
                return
            except _MovesItem:
                continue  # again, under the project's lock

    async def patch(
        self, item_id: int, operations: Any, set_global_id_manually: bool, comment: str = ""
    ) -> None:
        """``PATCH /items/{id}``: RFC 6902 on the PUT request object."""
        access = await self.access.current()
        catalog = await self.config.catalog()
        for whole_tree in (False, True):
            try:
                async with self.outbox.transaction() as session:
                    current = await self.writable(session, item_id, access, whole_tree)
                    data = itemdoc.patched(
                        current, catalog.item_types.get(current.item_type), operations
                    )
                    data.set_global_id_manually = set_global_id_manually
                    if data.global_id == current.global_id:
                        data.global_id = None
                    try:
                        await self._write(
                            session,
                            catalog,
                            current,
                            data,
                            access.principal,
                            comment,
                            tree_locked=whole_tree,
                        )
                    except InvalidArgument as exc:
                        # The contract's wording first, then which value and why.
                        raise InvalidArgument(f"{jsonpatch.CANNOT_SET} {exc.message}") from None
                return
            except _MovesItem:
                continue  # again, under the project's lock

    async def new_version(
        self,
        session: AsyncSession,
        catalog: Catalog,
        current: Row[Any],
        fields: dict[str, Any],
        caller: Principal,
        parent: int | type[KEEP] | None = KEEP,
    ) -> None:
        """The next version of ``current`` (a row read in ``session``, whose project the
        caller has locked) with ``fields`` as ``PUT /items/{id}`` would write them: the
        same rules, suspect links and ``updated`` event; with ``parent`` (an item of the
        project, or None for its root) at the bottom of that parent as well, in the same
        version. The bulk import's version lines.
        """
        self.check_lock(current, caller)
        data = ItemInput(fields=fields)
        if parent is None:
            data.parent_project = current.project
        elif parent is not KEEP:
            data.parent_item = int(parent)  # type: ignore[arg-type]
        await self._write(session, catalog, current, data, caller)

    async def writable(
        self, session: AsyncSession, item_id: int, access: Access, whole_tree: bool = True
    ) -> Row[Any]:
        """The active item ``item_id`` that the caller may write and that no one else has
        locked, locked for the rest of the transaction: with ``whole_tree``, its project's
        tree (for changes of place); without, the item's row alone.

        Changes that leave the item where it is need no more than its row: writers of
        different items of a project then do not queue behind one lock. Tree changes take
        the project's lock first and item rows after it; a change under a row lock that
        turns out to move the item starts again with the project's lock (``_MovesItem``),
        so no transaction ever waits for the project's lock while holding an item's row.
        """
        if whole_tree:
            await self.lock_tree_of(session, item_id)
            current = await self.active(session, item_id, access, Action.WRITE)
        else:
            current = await self.active(session, item_id, access, Action.WRITE, for_update=True)
        self.check_lock(current, access.principal)
        return current

    async def _write(
        self,
        session: AsyncSession,
        catalog: Catalog,
        current: Row[Any],
        data: ItemInput,
        caller: Principal,
        comment: str = "",
        *,
        tree_locked: bool = True,
    ) -> None:
        item_type = catalog.item_types.get(current.item_type)
        if item_type is None:
            raise NotFound(f"The item type of item {current.id} no longer exists.")
        if data.item_type is not None and data.item_type != current.item_type:
            raise InvalidArgument("itemType of an existing item cannot change.")
        if data.project is not None and data.project != current.project:
            raise InvalidArgument(
                "project cannot change with PUT; move the item with PUT /items/{id}/location."
            )
        if (
            data.global_id is not None
            and data.global_id != current.global_id
            and not data.set_global_id_manually
        ):
            raise InvalidArgument(
                "globalId can be set only with the query parameter setGlobalIdManually=true."
            )
        stored = json.loads(current.fields_json)
        kept = {
            f.name: stored[f.name]
            for f in item_type.fields
            if (f.read_only or f.name in SYSTEM_FIELDS) and f.name in stored
        }
        fields = check_fields(catalog, item_type, data.fields or {}, creating=False)
        fields = workflow.check_change(catalog, item_type, stored, data.fields or {}, fields)
        check_required(item_type, fields)
        fields = {**kept, **fields}
        values: dict[str, Any] = {
            "fields_json": json.dumps(fields),
            "search_text": search_text(fields),
            "name": str(fields.get("name", ""))[:255],
            "child_item_type": self._child_type(catalog, data.child_item_type)
            if data.child_item_type is not None
            else current.child_item_type,
            "version": current.version + 1,
            "modified_by": caller.user_id,
            "modified_at": utcnow(),
            "last_activity_at": utcnow(),
        }
        if data.global_id is not None:
            values["global_id"] = data.global_id
        moving = (data.parent_item is not None and data.parent_item != current.parent) or (
            data.parent_project is not None and current.parent is not None
        )
        if moving and not tree_locked:
            raise _MovesItem
        named = release_ids(item_type, fields)
        await check_releases(session, current.project, set(named), named)
        if set(named) != set(release_ids(item_type, stored)):
            # ``item_releases`` follows the fields: the same releases named, the same rows
            # (most writes name none before and after, and send no statement for them).
            await sync_item_releases(session, current.id, set(named))
        row: Row[Any] | None = (
            await session.execute(
                update(items)
                .where(items.c.id == current.id)
                .values(**values)
                .returning(*items.c, CATEGORIES)
            )
        ).one()
        if any(
            f.trigger_suspect and stored.get(f.name) != fields.get(f.name) for f in item_type.fields
        ):
            await mark_downstream_suspect(session, current.id)
        if moving:
            await self.move_within_project(session, current, data.parent_item)
            row = None  # the move changed its place: read it again
        await self.outbox.add(
            session,
            await item_event(session, "updated", current.id, catalog, caller, comment, row=row),
        )

    async def move_within_project(
        self, session: AsyncSession, current: Row[Any], new_parent: int | None
    ) -> None:
        """Puts the item (with its subtree) at the bottom of ``new_parent`` in its project."""
        parent = None
        if new_parent is not None:
            parent = (
                await session.execute(
                    select(items).where(items.c.id == new_parent, items.c.active.is_(True))
                )
            ).first()
            if parent is None:
                raise InvalidArgument(f"location.parent.item: no item with id {new_parent}.")
            if parent.project != current.project:
                raise InvalidArgument(
                    "location.parent.item is in another project; move between projects "
                    "with PUT /items/{id}/location."
                )
            if parent.id == current.id or parent.sequence.startswith(current.sequence + "."):
                raise InvalidArgument(
                    "An item cannot be moved under itself or one of its children."
                )
        old_parent, old_sequence = current.parent, current.sequence
        old_parent_sequence = await self.sequence_of(session, old_parent)
        sort_order = await tree.next_sort_order(
            session, current.project, parent.id if parent else None
        )
        new_sequence = tree.child_sequence(parent.sequence if parent else None, sort_order)
        # Park the subtree under a sequence nobody has, then close the gap it left.
        parked = f"0.{current.id}"
        await session.execute(
            update(items)
            .where(items.c.id == current.id)
            .values(parent=parent.id if parent else None, sort_order=sort_order, sequence=parked)
        )
        await tree.move_subtree_sequences(session, current.project, old_sequence, parked)
        await tree.close_gap(session, current.project, old_parent, old_parent_sequence)
        if parent is not None:
            parent = await self.active(session, parent.id)  # its sequence may have shifted
            new_sequence = tree.child_sequence(parent.sequence, sort_order)
        await session.execute(
            update(items).where(items.c.id == current.id).values(sequence=new_sequence)
        )
        await tree.move_subtree_sequences(session, current.project, parked, new_sequence)
        await tree.renumber(session, current.project)

    async def lock_tree_of(self, session: AsyncSession, item_id: int) -> None:
        await tree.lock_project_of(session, item_id)

    async def sequence_of(self, session: AsyncSession, item_id: int | None) -> str | None:
        if item_id is None:
            return None
        return await session.scalar(select(items.c.sequence).where(items.c.id == item_id))

    async def delete(self, item_id: int) -> None:
        """``DELETE /items/{id}``: the item and its subtree become inactive."""
        access = await self.access.current()
        catalog = await self.config.catalog()
        async with self.outbox.transaction() as session:
            current = await self.writable(session, item_id, access)
            await self.delete_subtree(session, catalog, current, access.principal)

    async def delete_subtree(
        self, session: AsyncSession, catalog: Catalog, current: Row[Any], caller: Principal
    ) -> None:
        """Makes ``current`` (read in ``session``, its project's tree locked) and its
        subtree inactive, as ``DELETE /items/{id}`` does; the bulk import's delete lines."""
        now = utcnow()
        below = (
            await session.scalars(
                select(items.c.id).where(
                    items.c.project == current.project,
                    items.c.active.is_(True),
                    items.c.sequence.startswith(current.sequence + "."),
                )
            )
        ).all()
        await session.execute(
            update(items)
            .where(
                items.c.project == current.project,
                items.c.active.is_(True),
                (items.c.id == current.id) | items.c.sequence.startswith(current.sequence + "."),
            )
            .values(active=False, modified_by=caller.user_id, modified_at=now, last_activity_at=now)
        )
        await tree.count_items(session, current.project, -1 - len(below))
        await hide_relationships_of(
            session,
            select(items.c.id).where(
                items.c.project == current.project,
                (items.c.id == current.id) | items.c.sequence.startswith(current.sequence + "."),
            ),
        )
        await tree.close_gap(
            session,
            current.project,
            current.parent,
            await self.sequence_of(session, current.parent),
        )
        # ``subtree``: the items deleted with it, which have no current version either.
        await self.outbox.add(
            session,
            await item_event(session, "deleted", current.id, catalog, caller, subtree=list(below)),
        )

    async def set_lock(self, item_id: int, locked: bool) -> None:
        """``PUT /items/{id}/lock``: lock for yourself, or unlock your own lock."""
        access = await self.access.current()
        caller = access.principal
        async with self.outbox.transaction() as session:
            current = await self.active(session, item_id, access, Action.WRITE)
            if current.locked and current.locked_by != caller.user_id and not caller.is_admin:
                raise FailedPrecondition(
                    f"Item {item_id} is locked by user {current.locked_by}; "
                    "only they can change the lock."
                )
            values: dict[str, Any] = {
                "locked": locked,
                "locked_by": caller.user_id if locked else None,
            }
            if locked:
                values["last_locked_date"] = utcnow()
            await session.execute(update(items).where(items.c.id == item_id).values(**values))

    @staticmethod
    def check_lock(current: Row[Any], caller: Principal) -> None:
        if current.locked and current.locked_by != caller.user_id:
            raise FailedPrecondition(
                f"Item {current.id} is locked by user {current.locked_by}; only they can change it."
            )


class _MovesItem(Exception):
    """A change made under its item's row lock would move the item: it needs the
    project's lock, taken first (``Items.writable``)."""


def new_row(
    item_id: int,
    project: int,
    types: tuple[int, int | None],
    keys: tuple[str, str],
    parent: int | None,
    place: tuple[int, int, str],
    fields: dict[str, Any],
    user: int,
    now: datetime,
) -> dict[str, Any]:
    """The items row of a new item: ``types`` (item type, child item type), ``keys``
    (document key, global id), ``place`` (sort order, global order, sequence)."""
    sort_order, global_order, sequence = place
    return {
        "id": item_id,
        "project": project,
        "item_type": types[0],
        "child_item_type": types[1],
        "document_key": keys[0],
        "global_id": keys[1],
        "parent": parent,
        "sort_order": sort_order,
        "global_sort_order": global_order,
        "sequence": sequence,
        "name": str(fields.get("name", ""))[:255],
        "fields_json": json.dumps(fields),
        "search_text": search_text(fields),
        "active": True,
        "locked": False,
        "version": 1,
        "created_by": user,
        "modified_by": user,
        "created_at": now,
        "modified_at": now,
        "last_activity_at": now,
    }


def _same_project(data: ItemInput, parent_project: int) -> None:
    """Refuses a new item whose ``project`` is not its parent item's."""
    if data.project is not None and data.project != parent_project:
        raise InvalidArgument(
            f"project {data.project} does not match the parent item's project {parent_project}."
        )


def release_ids(item_type: ItemType, fields: dict[str, Any]) -> dict[int, str]:
    """Release ids named by the item's RELEASE fields, with the field that names each."""
    return {
        int(fields[f.name]): f.name
        for f in item_type.fields
        if f.field_type == "RELEASE" and isinstance(fields.get(f.name), int)
    }
