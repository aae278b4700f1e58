"""Bulk import into a project, on a real SQLite database: the same records as creating the
items one by one, all or nothing, every bad line reported, only for writers."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import func, select

from plumbline.common.context import Principal
from plumbline.common.errors import (
    AlreadyExists,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from plumbline.services.items import imports
from plumbline.services.items.idspace import IdSpace
from plumbline.services.items.imports import Imported, Importer
from plumbline.services.items.itemdoc import ItemInput
from plumbline.services.items.models import items, outbox, relationships
from tests.unit.services.conftest import ADMIN, acting_as
from tests.unit.services.items.conftest import READER_OF_A, WRITER_OF_A, World


def importer(world: World) -> Importer:
    domain = world.items
    return Importer(domain, IdSpace(world.db))


async def chunks_of(data: bytes, size: int = 7) -> AsyncIterator[bytes]:
    """``data`` in small pieces, so that lines span chunks."""
    for start in range(0, len(data), size):
        yield data[start : start + size]


def jsonl(*lines: Any) -> bytes:
    return b"".join(
        (line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n" for line in lines
    )


async def run(
    world: World, project: int, data: bytes, who: Principal = ADMIN, size: int = 7
) -> Imported:
    with acting_as(who):
        return await importer(world).run(project, chunks_of(data, size))


async def counts(world: World) -> tuple[int, int, int]:
    async with world.db.read() as session:
        return (
            int(await session.scalar(select(func.count()).select_from(items)) or 0),
            int(await session.scalar(select(func.count()).select_from(relationships)) or 0),
            int(await session.scalar(select(func.count()).select_from(outbox)) or 0),
        )


# -- the same as one by one ---------------------------------------------------------------


async def existing(world: World, project: int) -> dict[str, int]:
    """E1 (with E1a under it) and E2 at the root: items the import hangs things under."""
    e1 = await world.item("E1", project=project)
    e1a = await world.item("E1a", parent=e1, project=project)
    e2 = await world.item("E2", project=project)
    return {"E1": e1, "E1a": e1a, "E2": e2}


def scenario(old: dict[str, int]) -> list[dict[str, Any]]:
    """Items under new and existing parents (E1 is not last, and its subtree ends where
    E1a's does), then relationships among new and existing items."""
    return [
        {"key": "F1", "itemType": "FLD", "fields": {"name": "F1"}},
        {"key": "R1", "itemType": "REQ", "parent": "F1", "fields": {"name": "R1 login"}},
        {"key": "R2", "itemType": 1, "parent": "F1", "fields": {"name": "R2", "priority": 3}},
        {"key": "R1x", "itemType": "REQ", "parent": "R1", "fields": {"name": "R1x"}},
        {"itemType": "REQ", "parent": old["E1"], "fields": {"name": "under E1"}},
        {"key": "U", "itemType": "REQ", "parent": old["E1a"], "fields": {"name": "under E1a"}},
        {"itemType": "REQ", "parent": "U", "fields": {"name": "under U"}},
        {"itemType": "REQ", "fields": {"name": "last at the root"}},
        {"itemType": "DEF", "parent": "F1", "fields": {"name": "D1"}},
        {"item": "R1", "fields": {"name": "R1 login, 2", "description": "<p>two</p>"}},
        {"item": old["E2"], "fields": {"name": "E2, 2"}},
        {"item": "R1", "fields": {"name": "R1 login, 3", "priority": 2}},
        {"item": "R2", "fields": {"name": "R2, 2"}},
        {"fromItem": "R1", "toItem": "R2"},
        {"fromItem": "R2", "toItem": old["E2"], "relationshipType": 2},
        {"fromItem": old["E1"], "toItem": "R1x"},
    ]


async def one_by_one(world: World, project: int, lines: list[dict[str, Any]]) -> None:
    """What a client without the import would do: POST /items, PUT /items/{id} and POST
    /relationships."""
    keys: dict[str, int] = {}

    def ref(value: Any) -> int:
        return keys[value] if isinstance(value, str) else int(value)

    with acting_as(ADMIN):
        for line in lines:
            if "itemType" in line:
                wanted = line["itemType"]
                new = await world.items.create(
                    ItemInput(
                        project=project,
                        item_type=world.types[wanted] if isinstance(wanted, str) else wanted,
                        parent_item=None if "parent" not in line else ref(line["parent"]),
                        fields=line["fields"],
                    )
                )
                if "key" in line:
                    keys[line["key"]] = new
            elif "item" in line:
                await world.items.update(ref(line["item"]), ItemInput(fields=line["fields"]))
            else:
                await world.relationships.create(
                    ref(line["fromItem"]), ref(line["toItem"]), line.get("relationshipType")
                )


class Normal:
    """Records of one project with what must differ between projects taken out: ids
    become their rank in the project, keys lose the project's prefix, dates go."""

    def __init__(self, ranks: dict[int, int]) -> None:
        self.ranks = ranks

    def id(self, value: Any) -> str:
        return f"#{self.ranks[int(value)]}"

    def __call__(self, value: Any, name: str = "") -> Any:
        if isinstance(value, dict):
            return {
                k: self(v, k)
                for k, v in value.items()
                if not k.endswith("Date") and k not in ("globalSortOrder", "project")
            }
        if name in ("id", "parentItem", "fromItem", "toItem", "item"):
            return self.id(value)
        if name == "documentKey":
            return str(value).split("-", 1)[1]
        if name == "globalId":
            prefix, item = str(value).rsplit("-", 1)
            return f"{prefix}-{self.id(item)}"
        if name == "fieldsJson":
            return self(json.loads(base64.b64decode(value)))
        if name == "toProject":
            return "P"
        if isinstance(value, list):
            return [self(v) for v in value]
        return value


def _unnamed(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    """A relationship's event names it by its ends' ids ("1001 to 1002")."""
    if kind.startswith("items.relationship."):
        return {k: v for k, v in payload.items() if k != "name"}
    return payload


async def records(world: World, project: int) -> tuple[list[Any], list[Any], list[Any]]:
    """(items, relationships, events) of ``project``, normalised, in creation order."""
    async with world.db.read() as session:
        rows = (
            await session.execute(
                select(items).where(items.c.project == project).order_by(items.c.id)
            )
        ).all()
        rels = (
            await session.execute(
                select(relationships)
                .where(relationships.c.project == project)
                .order_by(relationships.c.id)
            )
        ).all()
    normal = Normal({row.id: rank for rank, row in enumerate(rows)})
    item_records = [
        {
            "type": row.item_type,
            "child": row.child_item_type,
            "key": normal(row.document_key, "documentKey"),
            "global": normal(row.global_id, "globalId"),
            "parent": None if row.parent is None else normal.id(row.parent),
            "sort": row.sort_order,
            "sequence": row.sequence,
            "name": row.name,
            "fields": normal(json.loads(row.fields_json)),
            "search": row.search_text,
            "version": row.version,
            "flags": (row.active, row.locked, row.created_by, row.modified_by),
        }
        for row in rows
    ]
    rel_records = [
        (normal.id(r.from_item), normal.id(r.to_item), r.relationship_type, r.suspect) for r in rels
    ]
    events = [
        (e.type, e.actor, normal(_unnamed(e.type, e.payload)))
        for e in await world.events_after(0)
        if e.project == project and not e.type.startswith("items.project.")
    ]
    return item_records, rel_records, events


async def test_an_import_makes_what_creating_one_by_one_makes(world: World) -> None:
    old_a = await existing(world, world.a)
    old_b = await existing(world, world.b)
    done = await run(world, world.a, jsonl(*scenario(old_a)))
    assert (done.bad, done.items, done.relationships, done.lines) == ([], 9, 3, 16)
    assert done.versions == 4
    await one_by_one(world, world.b, scenario(old_b))

    imported, made = await records(world, world.a), await records(world, world.b)
    assert imported[0] == made[0]  # items, field by field
    assert imported[1] == made[1]  # relationships
    assert imported[2] == made[2]  # events: what the history and the feed get
    assert len(imported[2]) == 3 + 9 + 4 + 3
    versions = [(r["name"], r["version"]) for r in imported[0] if r["version"] > 1]
    assert versions == [("E2, 2", 2), ("R1 login, 3", 3), ("R2, 2", 2)]
    # The project order (the global order) is the same walk of the tree.
    assert [name for _, name in await world.tree(world.a)] == [
        name for _, name in await world.tree(world.b)
    ]
    assert [name for _, name in await world.tree(world.a)] == [
        "E1", "E1a", "under E1a", "under U", "under E1", "E2, 2",
        "F1", "R1 login, 3", "R1x", "R2, 2", "D1", "last at the root",
    ]  # fmt: skip


async def test_the_kth_item_line_gets_the_first_id_plus_k(world: World) -> None:
    lines = [{"itemType": "REQ", "fields": {"name": f"R{n}"}} for n in range(2500)]
    done = await run(world, world.a, jsonl(*lines), size=64 * 1024)
    assert done.items == 2500
    async with world.db.read() as session:
        found = (
            await session.execute(
                select(items.c.id, items.c.name, items.c.sequence).where(items.c.project == world.a)
            )
        ).all()
    assert {(r.id - done.first_item_id, r.name, r.sequence) for r in found} == {
        (n, f"R{n}", str(n + 1)) for n in range(2500)
    }


async def test_an_item_line_may_set_the_global_id(world: World) -> None:
    done = await run(
        world,
        world.a,
        jsonl(
            {"itemType": "REQ", "globalId": "REQ-7f3a.kept", "fields": {"name": "Kept"}},
            {"itemType": "REQ", "fields": {"name": "Given"}},
        ),
    )
    assert done.items == 2
    async with world.db.read() as session:
        found = dict(
            (
                await session.execute(
                    select(items.c.name, items.c.global_id).where(items.c.project == world.a)
                )
            ).all()
        )
    assert found == {"Kept": "REQ-7f3a.kept", "Given": f"GID-REQ-{done.first_item_id + 1}"}
    refused = await run(
        world,
        world.a,
        jsonl(
            {"itemType": "REQ", "globalId": 12, "fields": {"name": "x"}},
            {"itemType": "REQ", "globalId": "x" * 129, "fields": {"name": "x"}},
        ),
    )
    assert [line for line, _ in refused.bad] == [1, 2]
    assert all("globalId is a string of 1 to 128" in said for _, said in refused.bad)


# -- all or nothing, every bad line ---------------------------------------------------------


async def test_bad_lines_are_all_reported_by_number_and_nothing_is_written(
    world: World,
) -> None:
    in_b = await world.item("in B", project=world.b)
    before = await counts(world)
    data = jsonl(
        {"key": "F", "itemType": "FLD", "fields": {"name": "F"}},
        b"{not json",
        b"[1, 2]",
        {"itemType": "REQ", "fields": {"name": "x"}, "colour": "red"},
        {"itemType": "NOPE", "fields": {"name": "x"}},
        {"itemType": "REQ", "parent": "LATER", "fields": {"name": "x"}},
        {"key": "LATER", "itemType": "REQ", "parent": in_b, "fields": {"name": "x"}},
        {"key": "F", "itemType": "REQ", "fields": {"name": "again"}},
        {"itemType": "REQ", "fields": {"name": "x", "priority": "very"}},
        b"",
        {"fromItem": "F", "toItem": "F"},
        {"fromItem": "F", "toItem": "NOWHERE"},
        {"fromItem": "F", "toItem": 99999},
        {"fromItem": "F", "toItem": "LATER"},
        {"fromItem": "F", "toItem": "LATER"},
        {"itemType": "REQ", "fields": {"name": "after a relationship"}},
        {"something": "else"},
    )
    done = await run(world, world.a, data)
    assert (done.items, done.first_item_id) == (0, 0)
    assert (done.lines, done.bad_count) == (17, 14)
    said = dict(done.bad)
    assert sorted(said) == [2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17]
    assert "not JSON" in said[2]
    assert "a JSON object" in said[3]
    assert "colour: not a member of an item line" in said[4]
    assert "'NOPE' is no item type's key" in said[5]
    assert "REQ" in said[5]
    assert "no item line before this one has the key 'LATER'" in said[6]
    assert f"item {in_b} is in project {world.b}, not in project {world.a}" in said[7]
    assert "the key 'F' is already line 1's" in said[8]
    assert "priority" in said[9]
    assert "must be different items" in said[11]
    assert "no item line has the key 'NOWHERE'" in said[12]
    assert "no item with id 99999" in said[13]
    assert "line 14 is the same relationship" in said[15]
    assert "items come before the versions, relationships and orders" in said[16]
    assert "an item (with itemType), a version of an item (with item), a" in said[17]
    assert await counts(world) == before


async def test_bad_version_lines_are_reported_and_nothing_is_written(world: World) -> None:
    in_b = await world.item("in B", project=world.b)
    mine = await world.item("mine")
    before = await counts(world)
    data = jsonl(
        {"key": "R", "itemType": "REQ", "fields": {"name": "R"}},
        {"key": "BAD", "itemType": "REQ", "fields": {"priority": 2}},
        {"item": "LATER", "fields": {"name": "x"}},
        {"item": "R", "fields": {"priority": 3}},
        {"item": "R", "fields": {"name": "x", "priority": "very"}},
        {"item": "R", "fields": "name"},
        {"item": "R", "fields": {"name": "x"}, "parent": "LATER"},
        {"item": in_b, "fields": {"name": "x"}},
        {"item": 99999, "fields": {"name": "x"}},
        {"item": "BAD", "fields": {"name": "x"}},
        {"item": True, "fields": {"name": "x"}},
        {"item": mine, "fields": {"name": "fine"}},
        {"key": "LATER", "itemType": "REQ", "fields": {"name": "after a version"}},
        {"fromItem": "R", "toItem": mine},
        {"item": "R", "fields": {"name": "after a relationship"}},
    )
    done = await run(world, world.a, data)
    said = dict(done.bad)
    assert sorted(said) == [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15]
    assert "no item line before this one has the key 'LATER'" in said[3]
    assert "fields.name is required" in said[4]
    assert "priority" in said[5]
    assert "fields is an object" in said[6]
    assert "parent: no item line before this one has the key 'LATER'" in said[7]
    assert f"item: item {in_b} is in project {world.b}, not in project {world.a}" in said[8]
    assert "item: no item with id 99999" in said[9]
    assert "the line with the key 'BAD' is bad" in said[10]
    assert "item is the key of an earlier item line or the id" in said[11]
    assert "items come before the versions, relationships and orders" in said[13]
    assert "versions come before the relationships" in said[15]
    assert await counts(world) == before


async def test_a_version_line_with_a_parent_moves_the_item_in_the_same_version(
    world: World,
) -> None:
    p1 = await world.item("P1")
    c = await world.item("C", parent=p1)
    c1 = await world.item("C1", parent=c)
    p2 = await world.item("P2")
    stays = await world.item("stays", parent=p2)
    done = await run(
        world,
        world.a,
        jsonl(
            {"key": "N", "itemType": "REQ", "fields": {"name": "N"}},
            {"item": c, "fields": {"name": "C, 2"}, "parent": "N"},
            {"item": p2, "fields": {"name": "P2, 2"}, "parent": None},
            {"item": stays, "fields": {"name": "stays"}, "parent": p2},
            {"item": p1, "fields": {"name": "P1"}, "parent": p2},
        ),
    )
    assert (done.bad, done.items, done.versions) == ([], 1, 4)
    assert await world.tree(world.a) == [
        ("1", "P2, 2"),
        ("1.1", "stays"),
        ("1.2", "P1"),
        ("2", "N"),
        ("2.1", "C, 2"),
        ("2.1.1", "C1"),
    ]
    rows = await world.rows(c, c1, p1, p2, stays)
    # One version each, the move and the fields together; the subtree moved with C.
    assert {rows[i].version for i in (c, p1, p2, stays)} == {2}
    assert (rows[c].parent, rows[c1].parent, rows[c1].version) == (done.first_item_id, c, 1)
    refused = await run(world, world.a, jsonl({"item": p2, "fields": {"name": "P2"}, "parent": p1}))
    assert refused.bad_count == 1
    assert "cannot be moved under itself or one of its children" in refused.bad[0][1]
    assert (await world.rows(p2))[p2].version == 2


async def test_order_lines_put_children_in_their_order_without_versions(world: World) -> None:
    top = await world.item("top")
    a = await world.item("a", parent=top)
    a1 = await world.item("a1", parent=a)
    b = await world.item("b", parent=top)
    c = await world.item("c", parent=top)
    other = await world.item("other")
    last = await world.last_event()
    done = await run(
        world,
        world.a,
        jsonl(
            {"key": "N", "itemType": "REQ", "parent": top, "fields": {"name": "N"}},
            {"key": "M", "itemType": "REQ", "parent": "N", "fields": {"name": "M"}},
            {"item": b, "fields": {"name": "b, 2"}},
            {"children": [c, "N", a], "parent": top},
            {"children": [other, top], "parent": None},
        ),
    )
    assert (done.bad, done.items, done.versions) == ([], 2, 1)
    # The named children first in the line's order, the others after them in theirs;
    # subtrees go with their roots.
    assert await world.tree(world.a) == [
        ("1", "other"),
        ("2", "top"),
        ("2.1", "c"),
        ("2.2", "N"),
        ("2.2.1", "M"),
        ("2.3", "a"),
        ("2.3.1", "a1"),
        ("2.4", "b, 2"),
    ]
    rows = await world.rows(top, a, a1, b, c, other)
    assert {i: r.version for i, r in rows.items()} == {
        top: 1, a: 1, a1: 1, b: 2, c: 1, other: 1
    }  # fmt: skip
    # The whole project's order follows (a page of the project is in tree order).
    async with world.db.read() as session:
        ordered = (
            await session.scalars(
                select(items.c.id)
                .where(items.c.project == world.a, items.c.active.is_(True))
                .order_by(items.c.global_sort_order)
            )
        ).all()
    first = done.first_item_id
    assert ordered == [other, top, c, first, first + 1, a, a1, b]
    kinds = [e.type for e in await world.events_after(last)]
    assert kinds == ["items.item.created"] * 2 + ["items.item.updated"]


async def test_bad_order_lines_are_reported_and_nothing_is_written(world: World) -> None:
    top = await world.item("top")
    a = await world.item("a", parent=top)
    loose = await world.item("loose")
    in_b = await world.item("in B", project=world.b)
    before = await counts(world)
    done = await run(
        world,
        world.a,
        jsonl(
            {"key": "N", "itemType": "REQ", "fields": {"name": "N"}},
            {"children": [], "parent": top},
            {"children": ["X"], "parent": top},
            {"children": [a, a], "parent": top},
            {"children": [in_b], "parent": None},
            {"children": [a], "parent": top, "peer": 3},
            {"children": [1.5]},
            {"key": "late", "itemType": "REQ", "fields": {"name": "late"}},
        ),
    )
    said = dict(done.bad)
    assert sorted(said) == [2, 3, 4, 5, 6, 7, 8]
    assert "children is a list of 1 to" in said[2]
    assert "no item line before this one has the key 'X'" in said[3]
    assert "children names an item twice" in said[4]
    assert f"children: item {in_b} is in project {world.b}" in said[5]
    assert "peer" in said[6]
    assert "children holds keys of earlier item lines or ids" in said[7]
    assert "items come before the versions, relationships and orders" in said[8]
    assert await counts(world) == before
    # Checked while writing: a child that is not the parent's undoes the import.
    refused = await run(
        world,
        world.a,
        jsonl(
            {"key": "N", "itemType": "REQ", "fields": {"name": "N"}},
            {"children": [a, loose], "parent": top},
        ),
    )
    assert refused.bad == [(2, f"children: {loose} is not a child of item {top}.")]
    assert await counts(world) == before


async def test_deletion_lines_delete_items_with_their_subtree_and_relationships(
    world: World,
) -> None:
    gone = await world.item("gone")
    under = await world.item("under gone", parent=gone)
    kept, other = await world.item("kept"), await world.item("other")
    with acting_as(ADMIN):
        unlinked = await world.relationships.create(kept, other, None)
        linked = await world.relationships.create(other, kept, None)
    last = await world.last_event()
    done = await run(
        world,
        world.a,
        jsonl(
            {"item": under, "fields": {"name": "under gone, 2"}, "parent": None},
            {"deleteItem": gone},
            {"deleteRelationship": unlinked},
        ),
    )
    assert (done.bad, done.versions, done.deleted, done.relationships_deleted) == ([], 1, 1, 1)
    assert [name for _, name in await world.tree(world.a)] == ["kept", "other", "under gone, 2"]
    async with world.db.read() as session:
        left = (await session.scalars(select(relationships.c.id))).all()
    assert left == [linked]
    kinds = [e.type for e in await world.events_after(last)]
    assert kinds == [
        "items.item.updated",
        "items.item.deleted",
        "items.relationship.deleted",
    ]
    # An item that went with an earlier line's subtree is already gone: nothing to do.
    parent = await world.item("parent")
    child = await world.item("child", parent=parent)
    again = await run(world, world.a, jsonl({"deleteItem": parent}, {"deleteItem": child}))
    assert (again.bad, again.deleted) == ([], 2)
    assert [name for _, name in await world.tree(world.a)] == ["kept", "other", "under gone, 2"]


async def test_bad_deletion_lines_are_reported_and_nothing_is_written(world: World) -> None:
    in_b = await world.item("in B", project=world.b)
    mine, other = await world.item("mine"), await world.item("other")
    with acting_as(ADMIN):
        rel_b = await world.relationships.create(
            in_b, await world.item("B2", project=world.b), None
        )
        rel_a = await world.relationships.create(mine, other, None)
    before = await counts(world)
    done = await run(
        world,
        world.a,
        jsonl(
            {"deleteItem": in_b},
            {"deleteItem": 99999},
            {"deleteItem": "mine"},
            {"deleteRelationship": rel_b},
            {"deleteRelationship": rel_a, "deleteItem": mine},
            {"deleteItem": mine},
            {"deleteItem": mine},
            {"item": mine, "fields": {"name": "after a deletion"}},
        ),
    )
    said = dict(done.bad)
    assert sorted(said) == [1, 2, 3, 4, 5, 7, 8]
    assert f"deleteItem: item {in_b} is in project {world.b}, not in project {world.a}" in said[1]
    assert "deleteItem: no item with id 99999" in said[2]
    assert "deleteItem is the id of one of the project's items" in said[3]
    assert f"project {world.a} has no relationship with id {rel_b}" in said[4]
    assert "one member: deleteItem or deleteRelationship" in said[5]
    assert "line 6 deletes it already" in said[7]
    assert "deletions come last" in said[8]
    assert await counts(world) == before


async def test_a_version_line_refused_while_writing_undoes_the_import(world: World) -> None:
    """A version of an item someone else has locked is found only while writing: the
    import is undone, and the answer names the line as a bad one."""
    mine = await world.item("mine")
    with acting_as(WRITER_OF_A):
        await world.items.set_lock(mine, True)
    before = await counts(world)
    data = jsonl(
        *[{"itemType": "REQ", "fields": {"name": f"new {n}"}} for n in range(1200)],
        {"item": mine, "fields": {"name": "mine, 2"}},
    )
    done = await run(world, world.a, data, size=64 * 1024)
    assert (done.items, done.bad_count) == (0, 1)
    [(line, message)] = done.bad
    assert line == 1201
    assert re.match(r"Item \d+ is locked by user", message)
    assert await counts(world) == before


async def test_only_the_first_hundred_bad_lines_are_told_all_are_counted(
    world: World,
) -> None:
    done = await run(world, world.a, b"nope\n" * 250, size=4096)
    assert done.bad_count == 250
    assert [line for line, _ in done.bad] == list(range(1, 101))


async def test_a_line_past_the_limit_is_bad_and_the_next_is_read(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(imports, "MAX_LINE", 100)
    data = jsonl({"itemType": "REQ", "fields": {"name": "x" * 200}}, {"itemType": "REQ"})
    done = await run(world, world.a, data)
    assert [line for line, _ in done.bad] == [1, 2]
    assert "longer than" in done.bad[0][1]
    assert "name" in done.bad[1][1]  # the second line was parsed: its name is missing


async def test_a_failure_while_writing_leaves_nothing(world: World) -> None:
    r1 = await world.item("R1")
    r2 = await world.item("R2")
    with acting_as(ADMIN):
        await world.relationships.create(r1, r2, None)
    before = await counts(world)
    data = jsonl(
        *[{"itemType": "REQ", "fields": {"name": f"new {n}"}} for n in range(1500)],
        {"fromItem": r1, "toItem": r2},  # exists: found only when written
    )
    with pytest.raises(AlreadyExists, match="nothing was imported"):
        await run(world, world.a, data, size=64 * 1024)
    assert await counts(world) == before


async def test_a_last_line_without_a_newline_is_read(world: World) -> None:
    done = await run(world, world.a, b'\n{"itemType": "REQ", "fields": {"name": "end"}}')
    assert (done.lines, done.items, done.bad) == (2, 1, [])


# -- who may import -------------------------------------------------------------------------


async def test_only_writers_of_the_project_may_import(world: World) -> None:
    data = jsonl({"itemType": "REQ", "fields": {"name": "x"}})
    with pytest.raises(PermissionDenied):
        await run(world, world.a, data, who=READER_OF_A)
    with pytest.raises(PermissionDenied):
        await run(world, world.b, data, who=WRITER_OF_A)  # B: read only
    with pytest.raises(NotFound, match="No project with id"):
        await run(world, world.b, data, who=READER_OF_A)  # B: no access at all
    with pytest.raises(NotFound, match="No project with id 424242"):
        await run(world, 424242, data)
    with pytest.raises(InvalidArgument, match="is a folder"):
        await run(world, world.folder, data)
    done = await run(world, world.a, data, who=WRITER_OF_A)
    assert done.items == 1


async def test_an_item_the_importer_may_not_read_is_not_found(world: World) -> None:
    in_b = await world.item("in B", project=world.b)
    data = jsonl(
        {"key": "R", "itemType": "REQ", "fields": {"name": "x"}}, {"fromItem": in_b, "toItem": "R"}
    )
    done = await run(world, world.a, data, who=WRITER_OF_A)
    # B is read-only for the writer: a relationship from B's item would change B.
    assert done.bad == [(2, f"you may not relate item {in_b} from here.")]


async def test_imports_at_one_place_leave_room_for_the_next(world: World) -> None:
    """Items imported under a folder that another follows take numbers from the start of
    the gap, as appends one by one do: the next import there fits without renumbering
    the project (spread over the whole gap, the first left room for about 1,400)."""
    first = await world.item("F1")
    second = await world.item("F2")
    before = await world.rows(first, second)
    for batch, count in enumerate((1100, 2000)):
        lines = [
            {"itemType": "REQ", "parent": first, "fields": {"name": f"R{batch}.{n}"}}
            for n in range(count)
        ]
        done = await run(world, world.a, jsonl(*lines), size=64 * 1024)
        assert done.items == count
    after = await world.rows(first, second)
    assert [after[i].global_sort_order for i in (first, second)] == [
        before[i].global_sort_order for i in (first, second)
    ]  # no renumbering moved them
    names = [name for _, name in await world.tree(world.a)]
    assert names[:2] == ["F1", "R0.0"]
    assert names[1100:1102] == ["R0.1099", "R1.0"]
    assert names[-1] == "F2"
