"""Traceability: the relationships of many items followed level by level in one read.

A trace starts from roots (a page of a project's items of one type, or one item for its
impact) and follows relationships one way (downstream: from-item to to-item; upstream:
the reverse) up to a depth, one statement per level for all roots at once. Each root
reaches an abstract item at most once, at its nearest level (the first relationship by id
that reached it), so a cycle in the graph ends. A relationship whose far end the caller
may not read is left out, and nothing is followed past it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.access import Access, AccessCache, Action, readable_where
from plumbline.common.db import Database, chunked
from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.common.graph import Step, check_depth, follow
from plumbline.services.items.config import Configuration
from plumbline.services.items.filters import Filters
from plumbline.services.items.foreign import ends
from plumbline.services.items.models import foreign_items, items, projects, relationships

#: The relationship types verification follows when none are named: these names, in any
#: capitalisation (the default configuration's "Verified by").
VERIFICATION_NAMES = frozenset(("verified by", "verifies", "tested by", "validated by"))
#: The most items coverage reads for one answer (totals are over the whole set).
MAX_COVERED = 1_000_000


@dataclass(frozen=True)
class Node:
    """What a trace shows of an abstract item: an item's key, name and type; of another
    service's record (a test plan or run) only its id and project."""

    id: int
    project: int
    foreign: bool
    item_type: int | None = None
    document_key: str = ""
    name: str = ""
    test_case: bool = False


@dataclass(frozen=True)
class Traced:
    """A page of roots, the steps from them, and the nodes they name."""

    roots: list[int]
    steps: list[Step]
    nodes: list[Node]
    total: int


@dataclass(frozen=True)
class Covered:
    """An item and the test cases that verify it directly."""

    item: int
    test_cases: list[int]


async def walk(
    session: AsyncSession,
    access: Access,
    roots: Sequence[int],
    upstream: bool,
    depth: int,
    types: Sequence[int] = (),
) -> list[Step]:
    """The steps from each root, level by level, in (root order, level, parent, id)."""
    mine, other = (
        (relationships.c.to_item, relationships.c.from_item)
        if upstream
        else (relationships.c.from_item, relationships.c.to_item)
    )
    end = ends()
    statement = (
        select(
            mine.label("mine"),
            other.label("other"),
            relationships.c.id,
            relationships.c.relationship_type,
            relationships.c.suspect,
        )
        .join(end, end.c.id == other)
        .where(relationships.c.visible.is_(True), readable_where(access, end.c.project))
    )
    if types:
        statement = statement.where(relationships.c.relationship_type.in_(list(types)))

    async def fetch(frontier: list[int]) -> list[Any]:
        rows: list[Any] = []
        for part in chunked(frontier):
            rows += (await session.execute(statement.where(mine.in_(part)))).all()
        return rows

    return await follow(roots, depth, fetch)


async def describe(
    session: AsyncSession, ids: Iterable[int], test_cases: frozenset[int] = frozenset()
) -> list[Node]:
    """Nodes for ``ids`` (items, and other services' records relationships named), those
    not found left out; ``test_cases`` are the TEST_CASE item types. The caller has
    already been shown to read them."""
    wanted = sorted(set(ids))
    found: dict[int, Node] = {}
    for part in chunked(wanted):
        own = await session.execute(
            select(items.c.id, items.c.project, items.c.item_type, items.c.document_key)
            .add_columns(items.c.name)
            .where(items.c.id.in_(part), items.c.active.is_(True))
        )
        for row in own.all():
            found[int(row.id)] = Node(
                int(row.id),
                int(row.project),
                False,
                int(row.item_type),
                row.document_key,
                row.name,
                int(row.item_type) in test_cases,
            )
        # The rest may be other services' records that relationships named.
        others = [i for i in part if i not in found]
        if others:
            rows = await session.execute(
                select(foreign_items.c.id, foreign_items.c.project).where(
                    foreign_items.c.id.in_(others)
                )
            )
            for row in rows.all():
                found[int(row.id)] = Node(int(row.id), int(row.project), True)
    return [found[i] for i in wanted if i in found]


class Tracing:
    """Trace, impact and coverage reads (READ on the project; far ends as readable)."""

    def __init__(
        self, db: Database, config: Configuration, filters: Filters, access: AccessCache
    ) -> None:
        self.db = db
        self.config = config
        self.filters = filters
        self.access = access

    async def _test_case_types(self) -> frozenset[int]:
        catalog = await self.config.catalog()
        return frozenset(t.id for t in catalog.item_types.values() if t.category == "TEST_CASE")

    async def _types(self, wanted: Sequence[int]) -> list[int]:
        catalog = await self.config.catalog()
        known = set(catalog.relationship_types)
        for t in wanted:
            if t not in known:
                raise InvalidArgument(
                    f"relationshipType: no relationship type with id {t}; allowed: "
                    f"{', '.join(str(k) for k in sorted(known))}."
                )
        return list(dict.fromkeys(wanted))

    async def _roots_query(self, session: AsyncSession, project: int, item_type: int) -> Any:
        access = await self.access.current()
        if (
            await session.scalar(
                select(projects.c.id).where(
                    projects.c.id == project, projects.c.is_folder.is_(False)
                )
            )
            is None
        ):
            raise NotFound(f"No project with id {project}.")
        access.require(Action.READ, project, f"project {project}")
        catalog = await self.config.catalog()
        if item_type not in catalog.item_types:
            raise InvalidArgument(f"itemType: no item type with id {item_type}.")
        return access, select(items.c.id).where(
            items.c.project == project,
            items.c.item_type == item_type,
            items.c.active.is_(True),
        )

    async def trace(
        self,
        project: int,
        item_type: int,
        upstream: bool,
        depth: int,
        types: Sequence[int],
        start: int,
        size: int,
    ) -> Traced:
        """A page of the project's items of ``item_type`` in tree order, and their trace."""
        check_depth(depth)
        kept = await self._types(types)
        async with self.db.read() as session:
            access, roots_query = await self._roots_query(session, project, item_type)
            total = await session.scalar(select(func.count()).select_from(roots_query.subquery()))
            roots = list(
                (
                    await session.scalars(
                        roots_query.order_by(items.c.sequence, items.c.id).offset(start).limit(size)
                    )
                ).all()
            )
            steps = await walk(session, access, roots, upstream, depth, kept)
            nodes = await describe(
                session, [*roots, *(s.item for s in steps)], await self._test_case_types()
            )
        return Traced(roots, steps, nodes, int(total or 0))

    async def impact(self, item: int, depth: int, types: Sequence[int]) -> Traced:
        """Everything downstream of ``item`` to ``depth``: what a change of it affects."""
        check_depth(depth)
        kept = await self._types(types)
        access = await self.access.current()
        async with self.db.read() as session:
            project = await session.scalar(
                select(items.c.project).where(items.c.id == item, items.c.active.is_(True))
            )
            if project is None:
                raise NotFound(f"No item with id {item}.")
            access.require(Action.READ, int(project), f"item {item}")
            steps = await walk(session, access, [item], False, depth, kept)
            nodes = await describe(
                session, [item, *(s.item for s in steps)], await self._test_case_types()
            )
        return Traced([item], steps, nodes, 1)

    async def verification_types(self, named: Sequence[int]) -> list[int]:
        """The relationship types coverage follows: those named, else those whose name
        says verification (``VERIFICATION_NAMES``)."""
        if named:
            return await self._types(named)
        catalog = await self.config.catalog()
        found = [
            t.id
            for t in catalog.relationship_types.values()
            if t.name.lower() in VERIFICATION_NAMES
        ]
        if not found:
            raise InvalidArgument(
                "No relationship type is named as verification (Verified by, Verifies, "
                "Tested by, Validated by): name one with relationshipType."
            )
        return found

    async def coverage(
        self, project: int, item_type: int, types: Sequence[int], filter_id: int | None
    ) -> tuple[list[Covered], list[int]]:
        """Every item of ``item_type`` in the project (in tree order; only those a filter
        finds, with ``filter_id``) with the test cases it relates to downstream by the
        verification types, and the types followed."""
        kept = await self.verification_types(types)
        cases = await self._test_case_types()
        async with self.db.read() as session:
            access, roots_query = await self._roots_query(session, project, item_type)
        if filter_id is not None:
            try:
                found, _ = await self.filters.results(filter_id, project, 0, MAX_COVERED)
            except NotFound:
                raise InvalidArgument(f"filter: no filter with id {filter_id}.") from None
            roots_query = roots_query.where(items.c.id.in_(found)) if found else None
        if roots_query is None:
            return [], kept
        async with self.db.read() as session:
            roots = list(
                (
                    await session.scalars(
                        roots_query.order_by(items.c.sequence, items.c.id).limit(MAX_COVERED)
                    )
                ).all()
            )
            test_case = items.alias("test_case")
            statement = (
                select(relationships.c.from_item, relationships.c.to_item)
                .join(test_case, test_case.c.id == relationships.c.to_item)
                .where(
                    relationships.c.visible.is_(True),
                    relationships.c.relationship_type.in_(kept),
                    test_case.c.item_type.in_(sorted(cases)),
                    test_case.c.active.is_(True),
                    readable_where(access, test_case.c.project),
                )
            )
            verified: dict[int, list[int]] = defaultdict(list)
            for part in chunked(roots):
                rows = await session.execute(
                    statement.where(relationships.c.from_item.in_(part)).order_by(
                        relationships.c.to_item
                    )
                )
                for row in rows.all():
                    if row.to_item not in verified[row.from_item]:
                        verified[row.from_item].append(int(row.to_item))
        return [Covered(r, verified.get(r, [])) for r in roots], kept

    async def describe(self, ids: Sequence[int]) -> list[Node]:
        """Nodes of the items and records in ``ids`` the caller may read."""
        access = await self.access.current()
        async with self.db.read() as session:
            nodes = await describe(session, ids, await self._test_case_types())
        return [n for n in nodes if access.may(Action.READ, n.project)]
