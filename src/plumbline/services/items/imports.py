"""Bulk import: a project's items and relationships from JSON Lines, in one transaction.

An import runs in two phases. *Checking* reads the file as it arrives, line by line, and
holds each line to the rules of ``POST /items`` and ``POST /relationships``; what passes
goes to a spool file (an import may be larger than memory), what fails is kept with its
line number, and nothing is written unless every line passed. *Writing* then runs in one
transaction at the database's pace, not the client's: the ids in one run of id blocks
(the item on the k-th item line gets the first id + k), document keys reserved per item
type, every tree place computed for the whole file at once, rows and events in multi-row
statements. Items end up exactly as if they had been created one by one in file order
(each at the bottom of its parent), with the same ``created`` events, so the history and
the activity feed see the same versions and activities.

The line format (docs/import.md):

- an item: ``{"key": "F1", "itemType": 24 or "REQ", "childItemType": 25, "parent": "F0"
  or 1234, "globalId": "...", "fields": {"name": "..."}}``; ``parent`` is the key of an
  earlier item line or the id of an item of the project (none: the project's root);
  ``globalId`` sets the item's global id (as ``setGlobalIdManually`` does; a ReqIF
  import keeps the document's identifiers so);
- a version: ``{"item": "R1" or 1234, "fields": {"name": "..."}}``, the item's next
  version with these fields, as ``PUT /items/{id}`` would write it; ``item`` is the key of
  an earlier item line or the id of an item of the project. A migration brings an item's
  history this way: its first version as an item line, each later one as a version line;
  With ``"parent"`` (a key, an id, or null for the project's root) the same version
  also moves the item to the bottom of that parent, as ``PUT /items/treelocation`` would;
- a relationship: ``{"fromItem": "R1" or 1234, "toItem": ..., "relationshipType": 2}``;
  its ends are keys of item lines (anywhere in the file) or ids of existing items;
- an order: ``{"children": ["R2", 1234, "R1"], "parent": "F0" or 1234 or null}``: these
  children of ``parent`` (keys of item lines or ids of items of the project; none: the
  project's root) come first among its children, in this order, once the items and
  versions are written; its other children follow in theirs. A place among siblings is
  not a version (as a new item put between siblings does not version them). A ReqIF
  re-import applies the document's order so;
- a deletion: ``{"deleteItem": 1234}`` (the item and its subtree, as ``DELETE
  /items/{id}``) or ``{"deleteRelationship": 56}``, of the project's items and
  relationships. A ReqIF re-import removes what the document no longer holds so.

Items come first, then versions, then relationships and orders, then deletions.
"""

from __future__ import annotations

import tempfile
from array import array
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import orjson
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.access import Action
from plumbline.common.catalog import Catalog
from plumbline.common.dates import utcnow
from plumbline.common.db import unique_violation
from plumbline.common.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PlumblineError,
)
from plumbline.common.fields import check_fields, check_required
from plumbline.services.items import tree
from plumbline.services.items.events import item_event
from plumbline.services.items.idspace import IdSpace, next_numbers
from plumbline.services.items.itemdoc import ItemInput
from plumbline.services.items.items import KEEP, Items, new_row, release_ids
from plumbline.services.items.models import items, projects, relationships
from plumbline.services.items.relationships import delete_row, relationship_event
from plumbline.services.items.releases import check_releases, sync_item_releases

#: The longest line taken, bytes (a TEXT field's million characters fit).
MAX_LINE = 8 * 1024 * 1024
#: Bad lines reported in full; the rest are counted.
MAX_BAD = 100
#: Rows per multi-row statement.
BATCH = 1000
#: Ids checked against the database per statement.
CHECK_BATCH = 500

ITEM_MEMBERS = ("key", "itemType", "childItemType", "parent", "globalId", "fields")
#: The longest global id (the column's size).
MAX_GLOBAL_ID = 128
RELATIONSHIP_MEMBERS = ("fromItem", "toItem", "relationshipType")
VERSION_MEMBERS = ("item", "fields", "parent")
DELETE_MEMBERS = ("deleteItem", "deleteRelationship")
ORDER_MEMBERS = ("children", "parent")
#: The most children one order line names.
MAX_ORDERED = 100_000
MAX_KEY = 255

#: ``_Plan.parent_of``: the project's root; values below it stand for existing items.
ROOT = -1


def _existing(item_id: int) -> int:
    """``_Plan.parent_of``'s code for the existing item ``item_id``."""
    return -2 - item_id


def _existing_id(code: int) -> int:
    return -2 - code


class _Refused(Exception):
    """A line the rules refuse while writing (its transaction is undone)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


@dataclass
class Imported:
    """What an import did (``bad`` empty), or why it did nothing."""

    lines: int = 0
    items: int = 0
    relationships: int = 0
    first_item_id: int = 0
    versions: int = 0
    deleted: int = 0
    relationships_deleted: int = 0
    bad: list[tuple[int, str]] = field(default_factory=list)
    bad_count: int = 0


@dataclass
class _Plan:
    """A checked import: the spool and what writing needs of the whole file."""

    project: int
    spool: IO[bytes]
    lines: int = 0
    items: int = 0
    relationships: int = 0
    versions: int = 0
    orders: int = 0
    #: Key -> (item index, line).
    keys: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: Per item index: its parent (an index, ROOT, or ``_existing(id)``) and type.
    parent_of: array[int] = field(default_factory=lambda: array("q"))
    #: Per item index: its item type (a version line's fields are checked against it).
    type_of: array[int] = field(default_factory=lambda: array("q"))
    #: Item lines of each item type (the document-key numbers to reserve).
    per_type: dict[int, int] = field(default_factory=dict)
    #: Item indexes that are some later line's parent (their sequences are kept).
    parents: set[int] = field(default_factory=set)
    #: Existing items named, with the lines naming them: as a parent, as a relationship's
    #: from end (needs write access) and to end (read access).
    existing_parents: dict[int, list[int]] = field(default_factory=dict)
    existing_from: dict[int, list[int]] = field(default_factory=dict)
    existing_to: dict[int, list[int]] = field(default_factory=dict)
    #: Existing items given new versions, with their version lines.
    existing_versions: dict[int, list[int]] = field(default_factory=dict)
    #: Existing items an order line names among a parent's children, with its lines.
    existing_ordered: dict[int, list[int]] = field(default_factory=dict)
    #: Items and relationships to delete, with their lines.
    deleting: dict[int, list[int]] = field(default_factory=dict)
    deleting_relationships: dict[int, list[int]] = field(default_factory=dict)
    #: Keys of item lines that are bad.
    broken: set[str] = field(default_factory=set)
    #: Relationship ends named by key before that key's line: (line, key).
    forward: list[tuple[int, str]] = field(default_factory=list)
    pairs: dict[tuple[Any, Any, int], int] = field(default_factory=dict)
    bad: list[tuple[int, str]] = field(default_factory=list)
    bad_count: int = 0

    def fail(self, line: int, message: str) -> None:
        self.bad_count += 1
        if len(self.bad) < MAX_BAD:
            self.bad.append((line, message))

    def entries(self) -> Iterator[list[Any]]:
        """The spooled lines, from the start."""
        self.spool.seek(0)
        for raw in self.spool:
            yield orjson.loads(raw)


class Importer:
    """Checks and writes imports into a project."""

    def __init__(self, items_: Items, ids: IdSpace) -> None:
        # The rules, storage and events of single creates are those of ``items_``.
        self.items = items_
        self.db = items_.db
        self.outbox = items_.outbox
        self.config = items_.config
        self.access = items_.access
        self.ids = ids

    async def run(self, project: int, chunks: AsyncIterator[bytes]) -> Imported:
        """Imports the JSON Lines that ``chunks`` carry into ``project``: all or nothing."""
        await self._check_project(project)
        with tempfile.TemporaryFile(prefix="plumbline-import-") as spool:
            plan = _Plan(project, spool)
            await self._check(plan, chunks)
            if plan.bad_count:
                plan.bad.sort()
                return Imported(plan.lines, bad=plan.bad, bad_count=plan.bad_count)
            return await self._write(plan)

    async def _check_project(self, project: int) -> None:
        access = await self.access.current()
        async with self.db.read() as session:
            row = (
                await session.execute(select(projects.c.is_folder).where(projects.c.id == project))
            ).first()
        if row is None or not access.may(Action.READ, project):
            raise NotFound(f"No project with id {project}.")
        access.require(Action.WRITE, project, f"the items of project {project}")
        if row.is_folder:
            raise InvalidArgument(f"project {project} is a folder; items live in projects.")

    # -- checking ------------------------------------------------------------------------

    async def _check(self, plan: _Plan, chunks: AsyncIterator[bytes]) -> None:
        catalog = await self.config.catalog()
        async for number, text in _lines(chunks):
            plan.lines = number
            if text is None:
                plan.fail(number, f"the line is longer than {MAX_LINE // (1024 * 1024)} MiB.")
                continue
            if not text.strip():
                continue
            try:
                self._line(plan, catalog, number, text)
            except PlumblineError as exc:
                plan.fail(number, exc.message)
        for number, key in plan.forward:
            if key not in plan.keys:
                plan.fail(number, f"no item line has the key {key!r}.")
        await self._check_existing(plan)

    def _line(self, plan: _Plan, catalog: Catalog, number: int, text: bytes) -> None:
        try:
            doc = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise InvalidArgument(f"the line is not JSON ({exc}).") from None
        if not isinstance(doc, dict):
            raise InvalidArgument("a line is a JSON object: an item, a version or a relationship.")
        deletion = any(k in doc for k in DELETE_MEMBERS)
        if (plan.deleting or plan.deleting_relationships) and not deletion:
            raise InvalidArgument("deletions come last, after every other line.")
        if "itemType" in doc:
            self._item(plan, catalog, number, doc)
        elif "children" in doc:
            self._order(plan, number, doc)
        elif deletion:
            self._deletion(plan, number, doc)
        elif "fromItem" in doc or "toItem" in doc:
            self._relationship(plan, catalog, number, doc)
        elif "item" in doc:
            self._version(plan, catalog, number, doc)
        else:
            raise InvalidArgument(
                "a line is an item (with itemType), a version of an item (with item), a "
                "relationship (with fromItem and toItem), an order (with children) or a "
                "deletion (deleteItem or deleteRelationship)."
            )

    def _item(self, plan: _Plan, catalog: Catalog, number: int, doc: dict[str, Any]) -> None:
        _only(doc, ITEM_MEMBERS, "an item line")
        if plan.relationships or plan.versions or plan.orders:
            raise InvalidArgument("items come before the versions, relationships and orders.")
        key = doc.get("key")
        if key is not None:
            if not isinstance(key, str) or not 0 < len(key) <= MAX_KEY:
                raise InvalidArgument(f"key is a string of 1 to {MAX_KEY} characters.")
            if key in plan.keys:
                raise InvalidArgument(f"the key {key!r} is already line {plan.keys[key][1]}'s.")
            # Taken even when the rest of the line is bad: lines under it then name a
            # parent that exists, and only this line is reported.
            plan.keys[key] = (plan.items, number)
        try:
            self._item_body(plan, catalog, number, doc)
        except PlumblineError:
            if key is not None:
                plan.broken.add(key)
            raise

    def _item_body(self, plan: _Plan, catalog: Catalog, number: int, doc: dict[str, Any]) -> None:
        parent_code = _parent_code(plan, number, doc.get("parent"))
        fields = doc.get("fields", {})
        if not isinstance(fields, dict):
            raise InvalidArgument("fields is an object of field names and values.")
        child_type = doc.get("childItemType")
        if child_type is not None and not _is_id(child_type):
            raise InvalidArgument("childItemType is an item type id.")
        global_id = doc.get("globalId")
        if global_id is not None and (
            not isinstance(global_id, str) or not 0 < len(global_id.strip()) <= MAX_GLOBAL_ID
        ):
            raise InvalidArgument(f"globalId is a string of 1 to {MAX_GLOBAL_ID} characters.")
        data = ItemInput(
            project=plan.project,
            item_type=_item_type(catalog, doc["itemType"]),
            child_item_type=child_type,
            fields=fields,
        )
        _, item_type, child, checked = self.items.checked(catalog, data)
        plan.spool.write(
            orjson.dumps([number, "i", item_type.id, child, parent_code, checked, global_id])
            + b"\n"
        )
        plan.parent_of.append(parent_code)
        plan.type_of.append(item_type.id)
        plan.per_type[item_type.id] = plan.per_type.get(item_type.id, 0) + 1
        plan.items += 1

    def _version(self, plan: _Plan, catalog: Catalog, number: int, doc: dict[str, Any]) -> None:
        """A later version of an item: its fields as they become, checked as ``PUT``
        checks them; a workflow's transition and the releases are checked while writing,
        against the version before."""
        _only(doc, VERSION_MEMBERS, "a version line")
        if plan.relationships or plan.orders:
            raise InvalidArgument("versions come before the relationships and orders.")
        fields = doc.get("fields")
        if not isinstance(fields, dict):
            raise InvalidArgument("fields is an object of field names and values: the version's.")
        target: Any = doc["item"]
        if isinstance(target, str) and target:
            if target not in plan.keys or plan.keys[target][1] >= number:
                raise InvalidArgument(f"item: no item line before this one has the key {target!r}.")
            if target in plan.broken:
                raise InvalidArgument(f"item: the line with the key {target!r} is bad.")
            item_type = catalog.item_types[plan.type_of[plan.keys[target][0]]]
            check_required(item_type, check_fields(catalog, item_type, fields, creating=False))
        elif _is_id(target):
            plan.existing_versions.setdefault(int(target), []).append(number)
        else:
            raise InvalidArgument(
                "item is the key of an earlier item line or the id of an item of the project."
            )
        moved_to = _parent_code(plan, number, doc["parent"]) if "parent" in doc else None
        plan.spool.write(orjson.dumps([number, "v", target, fields, moved_to]) + b"\n")
        plan.versions += 1

    def _order(self, plan: _Plan, number: int, doc: dict[str, Any]) -> None:
        """Children of a parent put first, in this order, once items and versions are
        written (that they are its children then is checked while writing)."""
        _only(doc, ORDER_MEMBERS, "an order line")
        children = doc["children"]
        if not isinstance(children, list) or not 0 < len(children) <= MAX_ORDERED:
            raise InvalidArgument(
                f"children is a list of 1 to {MAX_ORDERED} keys of item lines or item ids."
            )
        for child in children:
            if isinstance(child, str) and child:
                if child not in plan.keys or plan.keys[child][1] >= number:
                    raise InvalidArgument(
                        f"children: no item line before this one has the key {child!r}."
                    )
            elif _is_id(child):
                plan.existing_ordered.setdefault(int(child), []).append(number)
            else:
                raise InvalidArgument(
                    "children holds keys of earlier item lines or ids of items of the project."
                )
        if len(set(map(str, children))) != len(children):
            raise InvalidArgument("children names an item twice.")
        parent_code = _parent_code(plan, number, doc.get("parent"))
        plan.spool.write(orjson.dumps([number, "o", parent_code, children]) + b"\n")
        plan.orders += 1

    def _deletion(self, plan: _Plan, number: int, doc: dict[str, Any]) -> None:
        """An item (with its subtree) or a relationship of the project to delete."""
        if len(doc) != 1:
            raise InvalidArgument(
                "a deletion line has one member: deleteItem or deleteRelationship."
            )
        ((member, target),) = doc.items()
        if not _is_id(target):
            raise InvalidArgument(
                f"{member} is the id of one of the project's {member[6:].lower()}s."
            )
        deleting = plan.deleting if member == "deleteItem" else plan.deleting_relationships
        if target in deleting:
            raise InvalidArgument(f"line {deleting[target][0]} deletes it already.")
        deleting[target] = [number]
        plan.spool.write(orjson.dumps([number, "d", member, target]) + b"\n")

    def _relationship(
        self, plan: _Plan, catalog: Catalog, number: int, doc: dict[str, Any]
    ) -> None:
        _only(doc, RELATIONSHIP_MEMBERS, "a relationship line")
        ends = []
        for name, existing in (("fromItem", plan.existing_from), ("toItem", plan.existing_to)):
            end: Any = doc.get(name)
            if isinstance(end, str) and end:
                if end not in plan.keys:
                    plan.forward.append((number, end))
            elif _is_id(end):
                existing.setdefault(int(end), []).append(number)
            else:
                raise InvalidArgument(
                    f"{name} is the key of an item line or the id of an existing item."
                )
            ends.append(end)
        if ends[0] == ends[1]:
            raise InvalidArgument("fromItem and toItem must be different items.")
        wanted = doc.get("relationshipType")
        if wanted is not None and not _is_id(wanted):
            raise InvalidArgument("relationshipType is a relationship type id.")
        # The contract's rule (as POST /relationships): a missing or unknown type is the
        # default one.
        rel_type = (
            wanted
            if wanted in catalog.relationship_types
            else catalog.default_relationship_type().id
        )
        pair = (ends[0], ends[1], rel_type)
        if pair in plan.pairs:
            raise InvalidArgument(f"line {plan.pairs[pair]} is the same relationship.")
        plan.pairs[pair] = number
        plan.spool.write(orjson.dumps([number, "r", ends[0], ends[1], rel_type]) + b"\n")
        plan.relationships += 1

    async def _check_existing(self, plan: _Plan) -> None:
        """Existing items named must be active items: a parent in the project, a
        relationship's from end one the caller may change, its to end one they may read."""
        access = await self.access.current()
        named = set(plan.existing_parents) | set(plan.existing_from) | set(plan.existing_to)
        found = await self._projects_of(
            named | set(plan.existing_versions) | set(plan.existing_ordered) | set(plan.deleting)
        )
        for member, inside in (
            ("parent", plan.existing_parents),
            ("item", plan.existing_versions),
            ("children", plan.existing_ordered),
            ("deleteItem", plan.deleting),
        ):
            for item_id, lines in inside.items():
                where = found.get(item_id)
                for number in lines:
                    if where is None or not access.may(Action.READ, where):
                        plan.fail(number, f"{member}: no item with id {item_id}.")
                    elif where != plan.project:
                        plan.fail(
                            number,
                            f"{member}: item {item_id} is in project {where}, not in project "
                            f"{plan.project}.",
                        )
        for ends, action in ((plan.existing_from, Action.WRITE), (plan.existing_to, Action.READ)):
            for item_id, lines in ends.items():
                where = found.get(item_id)
                for number in lines:
                    if where is None or not access.may(Action.READ, where):
                        plan.fail(number, f"no item with id {item_id}.")
                    elif not access.may(action, where):
                        plan.fail(number, f"you may not relate item {item_id} from here.")
        await self._check_relationship_deletions(plan)

    async def _check_relationship_deletions(self, plan: _Plan) -> None:
        """Relationships to delete must be the project's."""
        if plan.deleting_relationships:
            wanted = sorted(plan.deleting_relationships)
            async with self.db.read() as session:
                there = set(
                    (
                        await session.scalars(
                            select(relationships.c.id).where(
                                relationships.c.id.in_(wanted),
                                relationships.c.project == plan.project,
                                relationships.c.visible.is_(True),
                            )
                        )
                    ).all()
                )
            for rel_id in wanted:
                if rel_id not in there:
                    plan.fail(
                        plan.deleting_relationships[rel_id][0],
                        f"deleteRelationship: project {plan.project} has no relationship "
                        f"with id {rel_id}.",
                    )

    async def _projects_of(
        self, ids: set[int], session: AsyncSession | None = None
    ) -> dict[int, int]:
        """The project of each active item among ``ids``."""
        found: dict[int, int] = {}
        wanted = sorted(ids)
        for start in range(0, len(wanted), CHECK_BATCH):
            query = select(items.c.id, items.c.project).where(
                items.c.id.in_(wanted[start : start + CHECK_BATCH]), items.c.active.is_(True)
            )
            if session is None:
                async with self.db.read() as reading:
                    rows = (await reading.execute(query)).all()
            else:
                rows = (await session.execute(query)).all()
            found.update((int(r.id), int(r.project)) for r in rows)
        return found

    # -- writing -------------------------------------------------------------------------

    async def _write(self, plan: _Plan) -> Imported:
        access = await self.access.current()
        caller = access.principal
        catalog = await self.config.catalog()
        first = await self.ids.allocate_run("items", plan.items) if plan.items else 0
        now = utcnow()
        try:
            async with self.outbox.transaction() as session:
                project_key = await tree.lock_project(session, plan.project, added=plan.items)
                if project_key is None:
                    raise NotFound(f"No project with id {plan.project}.")
                named = set(plan.existing_parents) | set(plan.existing_from)
                named |= set(plan.existing_to) | set(plan.existing_versions)
                found = await self._projects_of(named, session)
                for item_id in named - set(found):
                    raise InvalidArgument(
                        f"item {item_id} was deleted while the import was checked; nothing "
                        "was imported."
                    )
                places = await _Places.of(session, plan)
                numbers = await self._numbers(session, plan)
                await self._write_items(
                    session, plan, catalog, caller, first, project_key, places, numbers, now
                )
                if plan.versions:
                    await self._write_versions(session, plan, catalog, caller, first)
                if plan.relationships:
                    await self._write_relationships(session, plan, caller, first, found, now)
                if plan.orders:
                    await self._write_orders(session, plan, first)
                if plan.deleting or plan.deleting_relationships:
                    await self._write_deletions(session, plan, catalog, caller)
        except _Refused as refused:
            # Found only while writing (against the versions before, the project's
            # releases): the transaction is undone, and the line told as a bad one.
            return Imported(plan.lines, bad=[(refused.line, refused.message)], bad_count=1)
        except IntegrityError as exc:
            if unique_violation(exc):
                raise AlreadyExists(
                    "One of the import's relationships exists already; nothing was imported."
                ) from None
            raise
        return Imported(
            plan.lines,
            plan.items,
            plan.relationships,
            first,
            plan.versions,
            len(plan.deleting),
            len(plan.deleting_relationships),
        )

    async def _numbers(self, session: AsyncSession, plan: _Plan) -> dict[int, int]:
        """The first document-key number of each item type the import creates."""
        return {
            item_type: await next_numbers(session, plan.project, item_type, count)
            for item_type, count in sorted(plan.per_type.items())
        }

    async def _write_items(
        self,
        session: AsyncSession,
        plan: _Plan,
        catalog: Catalog,
        caller: Any,
        first: int,
        project_key: str,
        places: _Places,
        numbers: dict[int, int],
        now: Any,
    ) -> None:
        insert = items.insert().returning(*items.c, sort_by_parameter_order=True)
        batch: list[dict[str, Any]] = []
        releases: list[tuple[int, int, dict[int, str]]] = []

        async def flush() -> None:
            rows = (await session.execute(insert, batch)).all()
            for number, item_id, named in releases:
                try:
                    await check_releases(session, plan.project, set(named), named)
                except InvalidArgument as exc:
                    raise _Refused(number, exc.message) from None
                await sync_item_releases(session, item_id, set(named))
            events = [
                await item_event(session, "created", row.id, catalog, caller, row=row)
                for row in rows
            ]
            await self.outbox.add_all(session, events)
            batch.clear()
            releases.clear()

        index = 0
        for entry in plan.entries():
            if entry[1] != "i":
                continue
            number_in_file, _, type_id, child_type, parent_code, fields, global_id = entry
            item_type = catalog.item_types[type_id]
            item_id = first + index
            number = numbers[type_id]
            numbers[type_id] = number + 1
            sort_order, sequence = places.next(index, parent_code)
            batch.append(
                new_row(
                    item_id,
                    plan.project,
                    (type_id, child_type),
                    (
                        f"{project_key}-{item_type.type_key}-{number}",
                        global_id or f"GID-{item_type.type_key}-{item_id}",
                    ),
                    _parent_id(first, parent_code),
                    (sort_order, places.order[index], sequence),
                    fields,
                    caller.user_id,
                    now,
                )
            )
            named = release_ids(item_type, fields)
            if named:
                releases.append((number_in_file, item_id, named))
            index += 1
            if len(batch) >= BATCH:
                await flush()
        if batch:
            await flush()

    async def _write_versions(
        self, session: AsyncSession, plan: _Plan, catalog: Catalog, caller: Any, first: int
    ) -> None:
        """Each version line, in file order, as ``PUT /items/{id}`` writes it (the same
        code); a line the rules refuse undoes the import and names the line."""
        for entry in plan.entries():
            if entry[1] != "v":
                continue
            number, _, target, fields, moved_to = entry
            item_id = first + plan.keys[target][0] if isinstance(target, str) else int(target)
            current = (await session.execute(select(items).where(items.c.id == item_id))).one()
            parent = KEEP if moved_to is None else _parent_id(first, moved_to)
            try:
                await self.items.new_version(session, catalog, current, fields, caller, parent)
            except (InvalidArgument, FailedPrecondition, NotFound) as exc:
                raise _Refused(number, exc.message) from None

    async def _write_orders(self, session: AsyncSession, plan: _Plan, first: int) -> None:
        """Each order line: the children it names first among their parent's, in its
        order; a child that is not the parent's then refuses the line."""
        for entry in plan.entries():
            if entry[1] != "o":
                continue
            number, _, parent_code, children = entry
            parent = _parent_id(first, parent_code)
            ids = [
                first + plan.keys[child][0] if isinstance(child, str) else int(child)
                for child in children
            ]
            strangers = await tree.reorder(
                session, plan.project, parent, await self.items.sequence_of(session, parent), ids
            )
            if strangers:
                where = "the project's root" if parent is None else f"item {parent}"
                named = children[ids.index(strangers[0])]
                raise _Refused(number, f"children: {named!r} is not a child of {where}.")
        # Renumbering changes only what the orders moved.
        await tree.renumber(session, plan.project)

    async def _write_deletions(
        self, session: AsyncSession, plan: _Plan, catalog: Catalog, caller: Any
    ) -> None:
        """Each deletion line, as ``DELETE /items/{id}`` or ``/relationships/{id}``; an
        item already gone with an earlier line's subtree is left as it is."""
        for entry in plan.entries():
            if entry[1] != "d":
                continue
            number, _, member, target = entry
            if member == "deleteRelationship":
                row = (
                    await session.execute(
                        select(relationships).where(
                            relationships.c.id == target, relationships.c.visible.is_(True)
                        )
                    )
                ).first()
                if row is not None:
                    await delete_row(session, self.outbox, row, caller)
                continue
            current = (
                await session.execute(
                    select(items).where(items.c.id == target, items.c.active.is_(True))
                )
            ).first()
            if current is None:
                continue
            try:
                self.items.check_lock(current, caller)
            except FailedPrecondition as exc:
                raise _Refused(number, exc.message) from None
            await self.items.delete_subtree(session, catalog, current, caller)

    async def _write_relationships(
        self,
        session: AsyncSession,
        plan: _Plan,
        caller: Any,
        first: int,
        found: dict[int, int],
        now: Any,
    ) -> None:
        insert = relationships.insert().returning(relationships.c.id, sort_by_parameter_order=True)

        def end(ref: Any) -> tuple[int, int]:
            if isinstance(ref, str):
                return first + plan.keys[ref][0], plan.project
            return int(ref), found[int(ref)]

        batch: list[dict[str, Any]] = []
        ends: list[tuple[int, tuple[int, int], int, int]] = []
        added: Counter[int] = Counter()

        async def flush() -> None:
            new_ids = (await session.scalars(insert, batch)).all()
            await self.outbox.add_all(
                session,
                [
                    relationship_event("created", new_id, project, caller, source, to, rel_type)
                    for new_id, (source, to, rel_type, project) in zip(new_ids, ends, strict=True)
                ],
            )
            batch.clear()
            ends.clear()

        for entry in plan.entries():
            if entry[1] != "r":
                continue
            _, _, from_ref, to_ref, rel_type = entry
            source, source_project = end(from_ref)
            to = end(to_ref)
            batch.append(
                {
                    "project": source_project,
                    "from_item": source,
                    "to_item": to[0],
                    "relationship_type": rel_type,
                    "suspect": False,
                    "created_by": caller.user_id,
                    "created_at": now,
                    "modified_at": now,
                }
            )
            ends.append((source, to, rel_type, source_project))
            added[source_project] += 1
            if len(batch) >= BATCH:
                await flush()
        if batch:
            await flush()
        await tree.count_relationships(session, added)


@dataclass
class _Places:
    """Where each imported item goes: sort order and sequence (taken in file order, as
    one-by-one creation would), and the global order, computed for the whole file.

    Each anchor (the project's root or an existing item that imported items hang under)
    has a gap in the global order after its subtree. Anchors whose subtrees end at the
    same item share that gap; the deeper anchor's new items come first there (they are
    inside the shallower one's subtree). Each gap's new items, in a pre-order walk of
    the imported forest, take numbers from its start as appending them one by one would
    (one apart in a gap of ``GAP``, the rest left for later items there), or a ``GAP``
    apart at the project's end.
    """

    order: array[int]
    counts: dict[int, int]
    sequences: dict[int, str]
    kept: set[int]

    @classmethod
    async def of(cls, session: AsyncSession, plan: _Plan) -> _Places:
        children: dict[int, list[int]] = {}
        for index, parent in enumerate(plan.parent_of):
            children.setdefault(parent, []).append(index)
        anchors = [code for code in children if code < 0]
        for attempt in range(2):
            counts: dict[int, int] = {}
            sequences: dict[int, str] = {}
            gaps: dict[int, list[tuple[int, int, int | None]]] = {}
            for code in anchors:
                anchor = None
                if code != ROOT:
                    anchor = (
                        await session.execute(select(items).where(items.c.id == _existing_id(code)))
                    ).one()
                    sequences[code] = anchor.sequence
                count, low, high = await tree.gap_after(session, plan.project, anchor)
                counts[code] = count
                depth = 0 if anchor is None else anchor.sequence.count(".") + 1
                gaps.setdefault(low, []).append((-depth, code, high))
            order = array("q", bytes(8 * len(plan.parent_of)))
            room = True
            for low, sharing in gaps.items():
                sharing.sort()
                walk = [i for _, code, _ in sharing for i in _preorder(children, code)]
                high = sharing[0][2]
                if high is None:
                    step = tree.GAP
                else:
                    step = (high - low) // (len(walk) + 1)
                    if step < 1:
                        room = False
                        break
                    # As appends one by one do: a step just past the subtree, the rest
                    # of the gap left for later items at the same place (spread evenly,
                    # the next import there found no room and renumbered the project).
                    step = min(step, max(1, (high - low) // tree.GAP))
                for position, index in enumerate(walk, start=1):
                    order[index] = low + position * step
            if room:
                return cls(order, counts, sequences, plan.parents)
            if attempt == 0:
                await tree.renumber(session, plan.project)
        raise InvalidArgument(
            "There is no room for so many items at one place in the project's order; "
            "import them in parts."
        )

    def next(self, index: int, parent: int) -> tuple[int, str]:
        """(sort order, sequence) of item ``index``, the next child of ``parent``."""
        sort_order = self.counts.get(parent, 0)
        self.counts[parent] = sort_order + 1
        sequence = tree.child_sequence(self.sequences.get(parent), sort_order)
        if index in self.kept:
            self.sequences[index] = sequence
        return sort_order, sequence


def _parent_code(plan: _Plan, number: int, parent: Any) -> int:
    """``_Plan.parent_of``'s code for an item line's ``parent``."""
    if parent is None:
        return ROOT
    if isinstance(parent, str):
        if parent not in plan.keys or plan.keys[parent][1] >= number:
            raise InvalidArgument(f"parent: no item line before this one has the key {parent!r}.")
        plan.parents.add(plan.keys[parent][0])
        return plan.keys[parent][0]
    if _is_id(parent):
        plan.existing_parents.setdefault(parent, []).append(number)
        return _existing(parent)
    raise InvalidArgument(
        "parent is the key of an earlier item line or the id of an item of the project "
        "(none: the project's root)."
    )


def _preorder(children: dict[int, list[int]], root: int) -> Iterator[int]:
    stack = list(reversed(children.get(root, [])))
    while stack:
        index = stack.pop()
        yield index
        stack.extend(reversed(children.get(index, [])))


def _parent_id(first: int, code: int) -> int | None:
    if code == ROOT:
        return None
    if code < ROOT:
        return _existing_id(code)
    return first + code


async def _lines(chunks: AsyncIterator[bytes]) -> AsyncIterator[tuple[int, bytes | None]]:
    """(line number, the line's bytes, or None when longer than ``MAX_LINE``)."""
    pending = bytearray()
    number = 0
    long = False
    async for chunk in chunks:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if not long:
                pending += piece
                if len(pending) > MAX_LINE:
                    long = True
                    pending.clear()
            if end < 0:
                break
            number += 1
            yield number, None if long else bytes(pending)
            pending.clear()
            long = False
            start = end + 1
    if pending or long:
        yield number + 1, None if long else bytes(pending)


def _only(doc: dict[str, Any], allowed: tuple[str, ...], what: str) -> None:
    unknown = sorted(set(doc) - set(allowed))
    if unknown:
        raise InvalidArgument(
            f"{', '.join(unknown)}: not a member of {what}; it has {', '.join(allowed)}."
        )


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < 1 << 63


def _item_type(catalog: Catalog, wanted: Any) -> int:
    """An item type's id, from its id or its type key."""
    if isinstance(wanted, str):
        for item_type in catalog.item_types.values():
            if item_type.type_key == wanted:
                return item_type.id
        known = ", ".join(sorted(t.type_key for t in catalog.item_types.values()))
        raise InvalidArgument(f"itemType {wanted!r} is no item type's key; the keys are: {known}.")
    if not _is_id(wanted):
        raise InvalidArgument("itemType is an item type's id or key.")
    return int(wanted)
