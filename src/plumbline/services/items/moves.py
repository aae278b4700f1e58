"""Places in the tree: moving an item with its subtree within its project or to another."""

from __future__ import annotations

import json
import uuid
from typing import Any

from sqlalchemy import select, update

from plumbline.common.access import Action
from plumbline.common.dates import utcnow
from plumbline.common.errors import InvalidArgument
from plumbline.services.items import tree
from plumbline.services.items.events import item_event
from plumbline.services.items.items import Items
from plumbline.services.items.models import (
    comments,
    item_releases,
    item_tags,
    items,
    projects,
    relationships,
)


class Moves:
    """``PUT /items/treelocation`` and cross-project moves (``PUT /items/{id}/location``)."""

    def __init__(self, items_: Items) -> None:
        self.items = items_

    async def to_project(self, item_id: int, target: int) -> tuple[str, list[int]]:
        """Moves the item and its subtree to the bottom of ``target``'s root.

        The move is done by the time this returns; the work id is what the contract's
        asynchronous answer carries. Moved items get document keys of the new project;
        project-bound values (tags, releases) they had in the old project are dropped.
        The caller needs WRITE on both projects.
        """
        access = await self.items.access.current()
        caller = access.principal
        catalog = await self.items.config.catalog()
        work_id = str(uuid.uuid4())
        async with self.items.outbox.transaction() as session:
            source = await session.scalar(select(items.c.project).where(items.c.id == item_id))
            # Both projects, in id order, so two opposite moves cannot deadlock.
            for project in sorted({int(source or target), target}):
                await tree.lock_project(session, project)
            current = await self.items.active(session, item_id, access, Action.WRITE)
            self.items.check_lock(current, caller)
            row = (
                await session.execute(
                    select(projects.c.id, projects.c.is_folder, projects.c.project_key).where(
                        projects.c.id == target
                    )
                )
            ).first()
            if row is None:
                raise InvalidArgument(f"location.parent.project: no project with id {target}.")
            if row.is_folder:
                raise InvalidArgument(f"location.parent.project: project {target} is a folder.")
            access.require(Action.WRITE, target, f"the items of project {target}")
            if target == current.project:
                raise InvalidArgument(
                    "The item is already in that project; move it inside a project with "
                    "PUT /items/{id} and location.parent."
                )
            subtree = (
                await session.execute(
                    select(items).where(
                        items.c.project == current.project,
                        items.c.active.is_(True),
                        (items.c.id == item_id)
                        | items.c.sequence.startswith(current.sequence + "."),
                    )
                )
            ).all()
            moved = [r.id for r in subtree]
            old_parent_sequence = await self.items.sequence_of(session, current.parent)
            sort_order = await tree.next_sort_order(session, target, None)
            new_root_sequence = tree.child_sequence(None, sort_order)
            now = utcnow()
            for member in subtree:
                item_type = catalog.item_types.get(member.item_type)
                number = await self.items._next_number(session, target, member.item_type)
                fields: dict[str, Any] = json.loads(member.fields_json)
                for f in item_type.fields if item_type else ():
                    if f.field_type == "RELEASE":
                        fields.pop(f.name, None)
                relative = member.sequence[len(current.sequence) :]
                type_key = item_type.type_key if item_type else "ITEM"
                await session.execute(
                    update(items)
                    .where(items.c.id == member.id)
                    .values(
                        project=target,
                        parent=None if member.id == item_id else member.parent,
                        sort_order=sort_order if member.id == item_id else member.sort_order,
                        sequence=new_root_sequence + relative,
                        document_key=f"{row.project_key}-{type_key}-{number}",
                        fields_json=json.dumps(fields),
                        version=member.version + 1,
                        modified_by=caller.user_id,
                        modified_at=now,
                        last_activity_at=now,
                    )
                )
                await self.items.outbox.add(
                    session,
                    await item_event(
                        session, "updated", member.id, catalog, caller, movedFrom=current.project
                    ),
                )
            await session.execute(item_tags.delete().where(item_tags.c.item.in_(moved)))
            await session.execute(item_releases.delete().where(item_releases.c.item.in_(moved)))
            await session.execute(
                update(comments).where(comments.c.item.in_(moved)).values(project=target)
            )
            carried = await session.scalars(
                update(relationships)
                .where(relationships.c.from_item.in_(moved))
                .values(project=target)
                .returning(relationships.c.visible)
            )
            shown = sum(1 for visible in carried.all() if visible)
            await tree.count_relationships(session, {current.project: -shown, target: shown})
            await tree.count_items(session, current.project, -len(moved))
            await tree.count_items(session, target, len(moved))
            await tree.close_gap(session, current.project, current.parent, old_parent_sequence)
            await tree.renumber(session, current.project)
            await tree.renumber(session, target)
        return work_id, moved

    async def within_project(
        self,
        item_id: int,
        parent_item: int | None,
        parent_project: int | None,
        peer: int | None,
    ) -> None:
        """``PUT /items/treelocation``: under ``parent``, right after ``peer`` (first if none).

        Needs WRITE on the item's project (parent and peer are in the same project).
        """
        access = await self.items.access.current()
        caller = access.principal
        catalog = await self.items.config.catalog()
        if (parent_item is None) == (parent_project is None):
            raise InvalidArgument("parent takes exactly one of item or project.")
        if peer is not None and peer == item_id:
            raise InvalidArgument("peer must be another item than the one being placed.")
        async with self.items.outbox.transaction() as session:
            current = await self.items.writable(session, item_id, access)
            if parent_project is not None and parent_project != current.project:
                raise InvalidArgument(
                    f"parent.project {parent_project} is not the item's project "
                    f"{current.project}; move between projects with PUT /items/{{id}}/location."
                )
            if parent_item != current.parent:
                await self.items.move_within_project(session, current, parent_item)
                current = await self.items.active(session, item_id)
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
                await self.items.sequence_of(session, current.parent),
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
            await self.items.outbox.add(
                session, await item_event(session, "updated", current.id, catalog, caller)
            )
