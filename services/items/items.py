"""The requirements tree: creating, reading, changing and deleting items."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Row,
    Select,
    Text,
    and_,
    column,
    func,
    or_,
    select,
    table,
    text,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql import operators
from sqlalchemy.sql.expression import UnaryExpression
from sqlalchemy.sql.operators import custom_op

from plumbline.common import int64, jsonpatch
from plumbline.common.context import Principal, require_principal
from plumbline.common.dates import utcnow
from plumbline.common.db import Database, unique_violation
from plumbline.common.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
)
from plumbline.common.events import Event
from plumbline.common.idblocks import IdAllocator
from plumbline.common.outbox import Outbox
from plumbline.services.items import tree, workflow
from plumbline.services.items.catalog import Catalog, ItemType
from plumbline.services.items.config import Configuration
from plumbline.services.items.fields import SYSTEM_FIELDS, check_fields
from plumbline.services.items.idspace import IdSpace
from plumbline.services.items.models import document_key_counters, item_releases, items, projects
from plumbline.services.items.relationships import (
    hide_relationships_of,
    mark_downstream_suspect,
)
from plumbline.services.items.releases import check_releases, sync_item_releases

#: Item categories that belong to other services (test management, attachments).
FOREIGN_CATEGORIES = ("TEST_PLAN", "TEST_CYCLE", "TEST_RUN", "ATTACHMENT")


@dataclass
class ItemInput:
    """What a POST, PUT or PATCH asks for; ``None`` means "not given"."""

    project: int | None = None
    item_type: int | None = None
    child_item_type: int | None = None
    parent_item: int | None = None
    parent_project: int | None = None
    global_id: str | None = None
    set_global_id_manually: bool = False
    fields: dict[str, Any] | None = None


class Items:
    """Item rules and storage."""

    def __init__(self, db: Database, outbox: Outbox, config: Configuration, ids: IdSpace) -> None:
        self.db = db
        self.outbox = outbox
        self.config = config
        self.allocator = IdAllocator(lambda: ids.allocate("items"))

    # -- reading -------------------------------------------------------------------

    async def get_many(self, ids: list[int]) -> list[Row[Any]]:
        """Active items by id; a single unknown id is NotFound."""
        require_principal()
        async with self.db.read() as session:
            rows = (
                await session.execute(
                    select(items).where(items.c.id.in_(ids), items.c.active.is_(True))
                )
            ).all()
        if len(ids) == 1 and not rows:
            raise NotFound(f"No item with id {ids[0]}.")
        order = {item_id: position for position, item_id in enumerate(ids)}
        return sorted(rows, key=lambda r: order.get(r.id, 0))

    async def page(
        self,
        project: int,
        root_only: bool,
        parent: int | None,
        start_at: int,
        max_results: int,
    ) -> tuple[list[Row[Any]], int]:
        """Items of a project in tree order, its root items, or one item's children."""
        require_principal()
        async with self.db.read() as session:
            if parent is not None:
                parent_row = await self._active(session, parent)
                where = and_(items.c.parent == parent_row.id, items.c.active.is_(True))
                order = items.c.sort_order
            else:
                if (
                    await session.scalar(select(projects.c.id).where(projects.c.id == project))
                    is None
                ):
                    raise NotFound(f"No project with id {project}.")
                where = and_(items.c.project == project, items.c.active.is_(True))
                if root_only:
                    where = and_(where, items.c.parent.is_(None))
                order = items.c.global_sort_order
            total = await session.scalar(select(func.count()).select_from(items).where(where))
            # Both orders are unique among active items (siblings' sort orders, the
            # project's global order), so no tie-breaker: with one, SQLite sorted every
            # row in scope instead of walking the index, and deep pages cost 10x more.
            page = select(items).where(where).order_by(order)
            if start_at:
                # Skip through the index alone (the order column is in it) to the page's
                # first value, then read just the page's rows: PostgreSQL otherwise read
                # and sorted the whole project for OFFSET 10000 (3x the first page).
                first = (
                    select(order).where(where).order_by(order).offset(start_at).limit(1)
                ).scalar_subquery()
                page = page.where(order >= first)
            rows = (await session.execute(page.limit(max_results))).all()
        return list(rows), int(total or 0)

    async def _active(self, session: AsyncSession, item_id: int) -> Row[Any]:
        row = (
            await session.execute(
                select(items).where(items.c.id == item_id, items.c.active.is_(True))
            )
        ).first()
        if row is None:
            raise NotFound(f"No item with id {item_id}.")
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
        caller = require_principal()
        catalog = await self.config.catalog()
        checked = [self._checked(catalog, data) for data in batch]
        ids = [await self.allocator.next_id() for _ in batch]
        now = utcnow()
        try:
            async with self.outbox.transaction() as session:
                locked: dict[int, str] = {}
                for (data, item_type, child_type, fields), item_id in zip(
                    checked, ids, strict=True
                ):
                    await self._insert(
                        session, caller, data, item_type, child_type, fields, item_id, now, locked
                    )
        except IntegrityError as exc:
            if unique_violation(exc):
                raise AlreadyExists(
                    "An item with that document key already exists; try again."
                ) from None
            raise
        return ids

    def _checked(
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
        caller: Principal,
        data: ItemInput,
        item_type: ItemType,
        child_type: int | None,
        fields: dict[str, Any],
        item_id: int,
        now: datetime,
        locked: dict[int, str],
    ) -> None:
        """Places and inserts one checked item, with its release links and its event.

        ``locked`` holds the key of each project this transaction has locked already: a
        batch locks a project and reads its key once, and reads after the lock are current.
        """
        project, parent = await self._placement(session, data)
        if project not in locked:
            await tree.lock_project(session, project)
            if parent is not None:
                parent = await self._active(session, parent.id)  # current after the lock
            locked[project] = str(
                await session.scalar(select(projects.c.project_key).where(projects.c.id == project))
            )
        project_key = locked[project]
        number = await self._next_number(session, project, item_type.id)
        sort_order = await tree.next_sort_order(session, project, parent.id if parent else None)
        global_order = await tree.global_order_for_new(session, project, parent)
        document_key = f"{project_key}-{item_type.type_key}-{number}"
        global_id = data.global_id or f"GID-{item_type.type_key}-{item_id}"
        await session.execute(
            items.insert().values(
                id=item_id,
                project=project,
                item_type=item_type.id,
                child_item_type=child_type,
                document_key=document_key,
                global_id=global_id,
                parent=parent.id if parent else None,
                sort_order=sort_order,
                global_sort_order=global_order,
                sequence=tree.child_sequence(parent.sequence if parent else None, sort_order),
                name=str(fields.get("name", ""))[:255],
                fields_json=json.dumps(fields),
                search_text=search_text(fields),
                active=True,
                locked=False,
                version=1,
                created_by=caller.user_id,
                modified_by=caller.user_id,
                created_at=now,
                modified_at=now,
                last_activity_at=now,
            )
        )
        release_ids = _release_ids(item_type, fields)
        await check_releases(session, project, set(release_ids), release_ids)
        if release_ids:  # a new item has no links to replace
            await sync_item_releases(session, item_id, set(release_ids))
        await self.outbox.add(
            session,
            _event("created", item_id, project, item_type, caller, fields, 1, document_key),
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
            if data.project is not None and data.project != parent.project:
                raise InvalidArgument(
                    f"project {data.project} does not match the parent item's project "
                    f"{parent.project}."
                )
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
        current = await session.scalar(
            select(document_key_counters.c.next_number)
            .where(
                document_key_counters.c.project == project,
                document_key_counters.c.item_type == item_type,
            )
            .with_for_update()
        )
        if current is None:
            await session.execute(
                document_key_counters.insert().values(
                    project=project, item_type=item_type, next_number=2
                )
            )
            return 1
        await session.execute(
            update(document_key_counters)
            .where(
                document_key_counters.c.project == project,
                document_key_counters.c.item_type == item_type,
            )
            .values(next_number=current + 1)
        )
        return int(current)

    # -- changing ------------------------------------------------------------------------

    async def update(self, item_id: int, data: ItemInput) -> None:
        """``PUT /items/{id}``: the fields sent replace the editable fields."""
        caller = require_principal()
        catalog = await self.config.catalog()
        async with self.outbox.transaction() as session:
            await self._lock_tree_of(session, item_id)
            current = await self._active(session, item_id)
            self._check_lock(current, caller)
            await self._write(session, catalog, current, data, caller)

    async def place(
        self,
        item_id: int,
        parent_item: int | None,
        parent_project: int | None,
        peer: int | None,
    ) -> None:
        """``PUT /items/treelocation``: under ``parent``, right after ``peer`` (first if none)."""
        caller = require_principal()
        catalog = await self.config.catalog()
        if (parent_item is None) == (parent_project is None):
            raise InvalidArgument("parent takes exactly one of item or project.")
        if peer is not None and peer == item_id:
            raise InvalidArgument("peer must be another item than the one being placed.")
        async with self.outbox.transaction() as session:
            await self._lock_tree_of(session, item_id)
            current = await self._active(session, item_id)
            self._check_lock(current, caller)
            if parent_project is not None and parent_project != current.project:
                raise InvalidArgument(
                    f"parent.project {parent_project} is not the item's project "
                    f"{current.project}; move between projects with PUT /items/{{id}}/location."
                )
            if parent_item != current.parent:
                await self._move_within_project(session, current, parent_item)
                current = await self._active(session, item_id)
            if peer is not None:
                sibling = (
                    await session.execute(
                        select(items.c.parent, items.c.project).where(
                            items.c.id == peer, items.c.active.is_(True)
                        )
                    )
                ).first()
                if (
                    sibling is None
                    or sibling.project != current.project
                    or sibling.parent != current.parent
                ):
                    where = (
                        f"item {current.parent}"
                        if current.parent is not None
                        else f"the root of project {current.project}"
                    )
                    raise InvalidArgument(f"peer: item {peer} is not a child of {where}.")
            await tree.place_after(
                session,
                current.project,
                current.parent,
                await self._sequence_of(session, current.parent),
                item_id,
                peer,
            )
            await tree.renumber(session, current.project)
            now = utcnow()
            await session.execute(
                update(items)
                .where(items.c.id == item_id)
                .values(
                    version=current.version + 1,
                    modified_by=caller.user_id,
                    modified_at=now,
                    last_activity_at=now,
                )
            )
            await self.outbox.add(
                session,
                _event(
                    "updated",
                    current.id,
                    current.project,
                    catalog.item_types.get(current.item_type),
                    caller,
                    json.loads(current.fields_json),
                    current.version + 1,
                    current.document_key,
                ),
            )

    async def patch(
        self, item_id: int, operations: Any, set_global_id_manually: bool, comment: str = ""
    ) -> None:
        """``PATCH /items/{id}``: RFC 6902 on the PUT request object."""
        caller = require_principal()
        catalog = await self.config.catalog()
        async with self.outbox.transaction() as session:
            await self._lock_tree_of(session, item_id)
            current = await self._active(session, item_id)
            self._check_lock(current, caller)
            document = self.request_object(current)
            _check_field_paths(catalog.item_types.get(current.item_type), document, operations)
            patched = jsonpatch.apply(document, operations)
            if isinstance(patched.get("fields"), dict):
                # A removed field is cleared, not left out: a PUT that leaves out a
                # workflow status keeps it, a PATCH that removes it asks to clear it.
                for name in document["fields"]:
                    patched["fields"].setdefault(name, None)
            data = _input_from_document(patched)
            data.set_global_id_manually = set_global_id_manually
            if data.global_id == current.global_id:
                data.global_id = None
            try:
                await self._write(session, catalog, current, data, caller, comment)
            except InvalidArgument as exc:
                # The contract's wording first, then which value and why.
                raise InvalidArgument(f"{jsonpatch.CANNOT_SET} {exc.message}") from None

    @staticmethod
    def request_object(row: Row[Any]) -> dict[str, Any]:
        """The item as a PUT body (the document PATCH paths address)."""
        parent = {"item": row.parent} if row.parent is not None else {"project": row.project}
        document: dict[str, Any] = {
            "project": row.project,
            "itemType": row.item_type,
            "globalId": row.global_id,
            "location": {"parent": parent},
            "fields": {k: v for k, v in json.loads(row.fields_json).items() if v is not None},
        }
        if row.child_item_type is not None:
            document["childItemType"] = row.child_item_type
        return document

    async def _write(
        self,
        session: AsyncSession,
        catalog: Catalog,
        current: Row[Any],
        data: ItemInput,
        caller: Principal,
        comment: str = "",
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
            if (f.read_only or f.name in ("documentKey", "globalId")) and f.name in stored
        }
        fields = check_fields(catalog, item_type, data.fields or {}, creating=False)
        fields = workflow.check_change(catalog, item_type, stored, data.fields or {}, fields)
        for field in item_type.fields:
            if field.required and not field.read_only and field.name not in fields:
                raise InvalidArgument(
                    f"fields.{field.name} is required for item type {item_type.type_key}."
                )
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
        wanted_parent = data.parent_item if data.parent_item is not None else None
        moving = (data.parent_item is not None and data.parent_item != current.parent) or (
            data.parent_project is not None and current.parent is not None
        )
        release_ids = _release_ids(item_type, fields)
        await check_releases(session, current.project, set(release_ids), release_ids)
        await sync_item_releases(session, current.id, set(release_ids))
        await session.execute(update(items).where(items.c.id == current.id).values(**values))
        if any(
            f.trigger_suspect and stored.get(f.name) != fields.get(f.name) for f in item_type.fields
        ):
            await mark_downstream_suspect(session, current.id)
        if moving:
            await self._move_within_project(session, current, wanted_parent)
        await self.outbox.add(
            session,
            _event(
                "updated",
                current.id,
                current.project,
                item_type,
                caller,
                fields,
                current.version + 1,
                current.document_key,
                comment,
            ),
        )

    async def _move_within_project(
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
        old_parent_sequence = await self._sequence_of(session, old_parent)
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
            parent = await self._active(session, parent.id)  # its sequence may have shifted
            new_sequence = tree.child_sequence(parent.sequence, sort_order)
        await session.execute(
            update(items).where(items.c.id == current.id).values(sequence=new_sequence)
        )
        await tree.move_subtree_sequences(session, current.project, parked, new_sequence)
        await tree.renumber(session, current.project)

    async def _lock_tree_of(self, session: AsyncSession, item_id: int) -> None:
        project = await session.scalar(select(items.c.project).where(items.c.id == item_id))
        if project is not None:
            await tree.lock_project(session, int(project))

    async def _sequence_of(self, session: AsyncSession, item_id: int | None) -> str | None:
        if item_id is None:
            return None
        return await session.scalar(select(items.c.sequence).where(items.c.id == item_id))

    async def delete(self, item_id: int) -> None:
        """``DELETE /items/{id}``: the item and its subtree become inactive."""
        caller = require_principal()
        catalog = await self.config.catalog()
        async with self.outbox.transaction() as session:
            await self._lock_tree_of(session, item_id)
            current = await self._active(session, item_id)
            self._check_lock(current, caller)
            now = utcnow()
            await session.execute(
                update(items)
                .where(
                    items.c.project == current.project,
                    items.c.active.is_(True),
                    (items.c.id == current.id)
                    | items.c.sequence.startswith(current.sequence + "."),
                )
                .values(
                    active=False, modified_by=caller.user_id, modified_at=now, last_activity_at=now
                )
            )
            await hide_relationships_of(
                session,
                select(items.c.id).where(
                    items.c.project == current.project,
                    (items.c.id == current.id)
                    | items.c.sequence.startswith(current.sequence + "."),
                ),
            )
            await tree.close_gap(
                session,
                current.project,
                current.parent,
                await self._sequence_of(session, current.parent),
            )
            item_type = catalog.item_types.get(current.item_type)
            await self.outbox.add(
                session,
                _event(
                    "deleted",
                    current.id,
                    current.project,
                    item_type,
                    caller,
                    json.loads(current.fields_json),
                    current.version + 1,
                    current.document_key,
                ),
            )

    async def set_lock(self, item_id: int, locked: bool) -> None:
        """``PUT /items/{id}/lock``: lock for yourself, or unlock your own lock."""
        caller = require_principal()
        async with self.outbox.transaction() as session:
            current = await self._active(session, item_id)
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
    def _check_lock(current: Row[Any], caller: Principal) -> None:
        if current.locked and current.locked_by != caller.user_id:
            raise FailedPrecondition(
                f"Item {current.id} is locked by user {current.locked_by}; only they can change it."
            )


def search_text(fields: dict[str, Any]) -> str:
    """What ``contains`` searches: the item's string values, lower-cased."""
    return "\n".join(v for v in fields.values() if isinstance(v, str)).lower()


SORT_COLUMNS = {
    "id": (items.c.id,),
    "documentKey": (items.c.document_key,),
    "name": (items.c.name,),
    "createdDate": (items.c.created_at,),
    "modifiedDate": (items.c.modified_at,),
    "lastActivityDate": (items.c.last_activity_at,),
    "sequence": (items.c.project, items.c.global_sort_order),
    "globalSortOrder": (items.c.project, items.c.global_sort_order),
}


def _like_literal(text: str) -> str:
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


#: SQLite's trigram index of ``search_text``, created by migration 0011 with raw DDL (an
#: FTS5 table cannot be declared in the models); its rowid is the item's id.
_items_fts = table("items_fts", column("rowid", BigInteger), column("search_text", Text))

#: Up to this many matches of ``contains``, PostgreSQL sorts the matches instead of
#: walking the sort order's index (see :func:`search`).
_FEW_MATCHES = 1000

#: The trigram index finds substrings of at least three characters; shorter ones scan.
_TRIGRAM = 3

#: Up to this many FTS5 hits, looking each one up beats reading the items in scope; with
#: more (a word most items hold) the scan is the faster plan, as it was before the index.
_FEW_HITS = 500


def _fts_query(texts: list[str]) -> str | None:
    """The FTS5 query for any of ``texts``, or None when one is too short for trigrams.

    Inside double quotes everything is literal but ``"``, which is doubled.
    """
    lowered = [t.lower() for t in texts]
    if any(len(t) < _TRIGRAM for t in lowered):
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in lowered)


async def _fts_hits(session: AsyncSession, texts: list[str]) -> Select[Any] | None:
    """On SQLite, the ids the FTS5 table finds for ``texts``, if they are few.

    They are candidates only: FTS5 folds case more widely than ``lower()`` (the long s,
    U+017F, finds ``s``), so the LIKE of :func:`_literal_contains` still decides.
    """
    match = _fts_query(texts)
    if match is None:
        return None
    hits = select(_items_fts.c.rowid).where(_items_fts.c.search_text.match(match))
    counted = select(func.count()).select_from(hits.limit(_FEW_HITS + 1).subquery())
    return hits if int(await session.scalar(counted) or 0) <= _FEW_HITS else None


def _literal_contains(texts: list[str]) -> ColumnElement[bool]:
    """``search_text`` holds any of ``texts``, literally (PostgreSQL's trigram index
    answers this LIKE)."""
    return or_(*(items.c.search_text.like(_like_literal(t), escape="\\") for t in texts))


def _unindexed(column: ColumnElement[Any]) -> ColumnElement[Any]:
    """SQLite's unary ``+``: the same value, but no index is chosen for the term."""
    return UnaryExpression(column, operator=custom_op("+"), type_=column.type)


@dataclass
class Search:
    """Filters of ``GET /abstractitems`` that items can answer."""

    projects: list[int]
    item_types: list[int]
    document_keys: list[str]
    releases: list[int]
    ranges: dict[str, tuple[Any, Any]]
    contains: list[str]
    sort_field: str
    descending: bool


async def search(
    db: Database, query: Search, start_at: int, max_results: int
) -> tuple[list[Row[Any]], int]:
    """Active items matching every filter, in the requested order."""
    require_principal()
    if query.sort_field not in SORT_COLUMNS:
        raise InvalidArgument(
            f"sortBy: {query.sort_field!r} cannot be sorted on; "
            f"use one of {', '.join(SORT_COLUMNS)}."
        )
    conditions: list[Any] = [items.c.active.is_(True)]
    if query.item_types:
        conditions.append(items.c.item_type.in_(query.item_types))
    if query.document_keys:
        conditions.append(items.c.document_key.in_(query.document_keys))
    if query.releases:
        conditions.append(
            items.c.id.in_(
                select(item_releases.c.item).where(item_releases.c.release.in_(query.releases))
            )
        )
    columns = {
        "created": items.c.created_at,
        "modified": items.c.modified_at,
        "lastActivity": items.c.last_activity_at,
    }
    for name, (low, high) in query.ranges.items():
        if low is not None:
            conditions.append(columns[name] >= low)
        if high is not None:
            conditions.append(columns[name] <= high)
    order = [c.desc() if query.descending else c.asc() for c in SORT_COLUMNS[query.sort_field]]
    async with db.read() as session:
        project: ColumnElement[Any] = items.c.project
        if query.contains:
            conditions.append(_literal_contains(query.contains))
            if not db.sqlite:
                # A cached generic plan cannot see the text, and takes the trigram index
                # even for words most items hold or texts too short for trigrams (2-4x
                # slower than a scan); a custom plan weighs each text.
                await session.execute(text("SET LOCAL plan_cache_mode = force_custom_plan"))
            hits = await _fts_hits(session, query.contains) if db.sqlite else None
            if hits is not None:
                conditions.append(items.c.id.in_(hits))
                # Without statistics SQLite prefers a project index, reading every item
                # of the project; few hits are cheaper to start from.
                project = _unindexed(project)
        if query.projects:
            conditions.append(project.in_(query.projects))
        where = and_(*conditions)
        total = await session.scalar(select(func.count()).select_from(items).where(where))
        if query.contains and not db.sqlite and int(total or 0) <= _FEW_MATCHES:
            # PostgreSQL guesses matches are spread evenly and walks the sort order's
            # index, testing item after item until a page is full: 12 ms for a word 2%
            # of 20,000 items hold, against 1 ms for collecting the few matches (as the
            # count above just did) and sorting them. MATERIALIZED fixes that order.
            # With many matches the walk fills a page soon and is the cheaper plan.
            matches = select(items).where(where).cte("matches").prefix_with("MATERIALIZED")
            statement = select(matches).order_by(
                *(_same_column(matches, c) for c in order), matches.c.id
            )
        else:
            statement = select(items).where(where).order_by(*order, items.c.id)
        rows = (await session.execute(statement.offset(start_at).limit(max_results))).all()
    return list(rows), int(total or 0)


def _same_column(alias: Any, ordering: UnaryExpression[Any]) -> UnaryExpression[Any]:
    """``ordering`` (``items.<col> ASC|DESC``) applied to ``alias``'s column of that name."""
    column: ColumnElement[Any] = alias.c[ordering.element.name]
    return column.desc() if ordering.modifier is operators.desc_op else column.asc()


def _release_ids(item_type: ItemType, fields: dict[str, Any]) -> dict[int, str]:
    """Release ids named by the item's RELEASE fields, with the field that names each."""
    return {
        int(fields[f.name]): f.name
        for f in item_type.fields
        if f.field_type == "RELEASE" and isinstance(fields.get(f.name), int)
    }


def _check_field_paths(
    item_type: ItemType | None, document: dict[str, Any], operations: Any
) -> None:
    """The contract's "no such path" for a ``/fields/...`` path, saying which field and why."""
    if item_type is None or not isinstance(operations, list):
        return
    for operation in operations:
        path = operation.get("path") if isinstance(operation, dict) else None
        if not isinstance(path, str) or not path.startswith("/fields/"):
            continue
        name = path.split("/")[2].replace("~1", "/").replace("~0", "~")
        if item_type.field(name) is None:
            known = ", ".join(f.name for f in item_type.fields if f.name not in SYSTEM_FIELDS)
            raise InvalidArgument(
                f"{jsonpatch.NO_SUCH_PATH}: {path}; the item type {item_type.display} has "
                f"the fields: {known}."
            )
        if operation.get("op") in ("replace", "remove") and name not in document["fields"]:
            raise InvalidArgument(
                f"{jsonpatch.NO_SUCH_PATH}: {path}; {name} has no value on this item (add sets it)."
            )


def _input_from_document(document: dict[str, Any]) -> ItemInput:
    """An ItemInput from a (patched) PUT request object, with type checks."""
    if not isinstance(document, dict):
        raise InvalidArgument(jsonpatch.CANNOT_SET)

    def integer(name: str, value: Any) -> int | None:
        if value is None:
            return None
        if not isinstance(value, int) or isinstance(value, bool):
            raise InvalidArgument(jsonpatch.CANNOT_SET)
        if not int64.fits(value):
            wide = int64.out_of_range(name, value)
            raise InvalidArgument(f"{jsonpatch.CANNOT_SET} {wide.message}")
        return value

    location = document.get("location") or {}
    parent = location.get("parent") if isinstance(location, dict) else None
    if (location and not isinstance(location, dict)) or (
        parent is not None and not isinstance(parent, dict)
    ):
        raise InvalidArgument(jsonpatch.CANNOT_SET)
    fields = document.get("fields", {})
    if not isinstance(fields, dict):
        raise InvalidArgument(jsonpatch.CANNOT_SET)
    global_id = document.get("globalId")
    if global_id is not None and not isinstance(global_id, str):
        raise InvalidArgument(jsonpatch.CANNOT_SET)
    return ItemInput(
        project=integer("project", document.get("project")),
        item_type=integer("itemType", document.get("itemType")),
        child_item_type=integer("childItemType", document.get("childItemType")),
        parent_item=integer("location.parent.item", (parent or {}).get("item")),
        parent_project=integer("location.parent.project", (parent or {}).get("project"))
        if not (parent or {}).get("item")
        else None,
        global_id=global_id,
        fields=fields,
    )


def _event(
    action: str,
    item_id: int,
    project: int,
    item_type: ItemType | None,
    actor: Principal,
    fields: dict[str, Any],
    version: int,
    document_key: str,
    comment: str = "",
) -> Event:
    payload: dict[str, Any] = {
        "itemType": item_type.id if item_type else None,
        "name": fields.get("name", ""),
        "documentKey": document_key,
    }
    if comment:
        payload["comment"] = comment
    return Event(
        f"items.item.{action}",
        actor=actor.user_id,
        project=project,
        object_ids=[item_id],
        version=version,
        payload=payload,
    )
