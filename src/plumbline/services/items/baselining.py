"""What the baselines service asks of items: every item as it is now (to start a
history from), and which items a baseline's origin holds, with their versions and places."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, select

from plumbline.common.access import AccessCache, Action
from plumbline.common.db import chunked
from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.services.items.config import Configuration
from plumbline.services.items.filters import Filters
from plumbline.services.items.models import item_releases, items, projects, releases

#: The most items one filter origin may hold (a filter's results are found in memory).
MAX_FILTERED = 1_000_000


@dataclass(frozen=True)
class Origin:
    """Where a baseline's items come from: a project, narrowed by at most one of the rest."""

    project: int
    item: int | None = None
    filter: int | None = None
    release: int | None = None
    items: tuple[int, ...] = ()


@dataclass(frozen=True)
class Member:
    """An item in a baseline: its version and its place now."""

    id: int
    version: int
    project: int
    sequence: str
    parent_item: int | None
    parent_version: int


_COLUMNS = (items.c.id, items.c.version, items.c.project, items.c.sequence, items.c.parent)


class Baselining:
    """Reads for the history and the baselines."""

    def __init__(
        self, db: Any, config: Configuration, filters: Filters, access: AccessCache
    ) -> None:
        self.db = db
        self.config = config
        self.filters = filters
        self.access = access

    async def members(self, origin: Origin) -> list[Member]:
        """The active items of ``origin``, in tree order (READ on the project)."""
        if (
            sum(x is not None for x in (origin.item, origin.filter, origin.release))
            + bool(origin.items)
            > 1
        ):
            raise InvalidArgument(
                "A baseline's origin is a project, an item, a filter, a release or a set "
                "of items: give at most one besides the project."
            )
        access = await self.access.current()
        access.require(Action.READ, origin.project, f"project {origin.project}")
        statement = select(*_COLUMNS).where(
            items.c.project == origin.project, items.c.active.is_(True)
        )
        async with self.db.read() as session:
            if (
                await session.scalar(select(projects.c.id).where(projects.c.id == origin.project))
                is None
            ):
                raise InvalidArgument(f"project: no project with id {origin.project}.")
            if origin.item is not None:
                root = await session.scalar(
                    statement.with_only_columns(items.c.sequence).where(items.c.id == origin.item)
                )
                if root is None:
                    raise InvalidArgument(
                        f"origin.item: no item {origin.item} in project {origin.project}."
                    )
                statement = statement.where(
                    (items.c.id == origin.item) | items.c.sequence.startswith(root + ".")
                )
            elif origin.release is not None:
                release = await session.scalar(
                    select(releases.c.project).where(releases.c.id == origin.release)
                )
                if release != origin.project:
                    raise InvalidArgument(
                        f"origin.release: no release {origin.release} in project {origin.project}."
                    )
                statement = statement.where(
                    items.c.id.in_(
                        select(item_releases.c.item).where(
                            item_releases.c.release == origin.release
                        )
                    )
                )
            if origin.filter is None and not origin.items:
                rows = list((await session.execute(statement.order_by(items.c.sequence))).all())
                return await self._placed(rows)
        named = list(origin.items) or await self._filtered(origin)
        rows = []
        async with self.db.read() as session:
            for chunk in chunked(named):
                rows += (await session.execute(statement.where(items.c.id.in_(chunk)))).all()
        rows.sort(key=lambda r: r.sequence)
        if origin.items:
            missing = sorted(set(origin.items) - {r.id for r in rows})
            if missing:
                raise InvalidArgument(f"items: no item {missing[0]} in project {origin.project}.")
        return await self._placed(rows)

    async def _filtered(self, origin: Origin) -> list[int]:
        """The ids the origin's filter finds in its project."""
        assert origin.filter is not None
        try:
            found, _ = await self.filters.results(origin.filter, origin.project, 0, MAX_FILTERED)
        except NotFound:
            raise InvalidArgument(f"origin.filter: no filter with id {origin.filter}.") from None
        return found

    async def _placed(self, rows: list[Row[Any]]) -> list[Member]:
        """Members with their parents' versions (parents outside the set read too)."""
        versions = {r.id: r.version for r in rows}
        outside = {r.parent for r in rows if r.parent is not None and r.parent not in versions}
        if outside:
            async with self.db.read() as session:
                for chunk in chunked(sorted(outside)):
                    found = await session.execute(
                        select(items.c.id, items.c.version).where(items.c.id.in_(chunk))
                    )
                    versions.update({i: v for i, v in found})
        return [
            Member(
                id=r.id,
                version=r.version,
                project=r.project,
                sequence=r.sequence,
                parent_item=r.parent,
                parent_version=versions.get(r.parent, 0) if r.parent is not None else 0,
            )
            for r in rows
        ]
