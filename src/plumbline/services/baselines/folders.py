"""Baseline folders (labs): a tree per project that organises its baselines."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row, func, select, update

from plumbline.common.access import AccessCache, Action
from plumbline.common.dates import utcnow
from plumbline.common.db import Database, insert_id
from plumbline.common.errors import AlreadyExists, InvalidArgument
from plumbline.services.baselines.models import baseline_folders, baselines


class Folders:
    """Folders of baselines and which folder a baseline is in."""

    def __init__(self, db: Database, access: AccessCache) -> None:
        self.db = db
        self.access = access

    async def create(self, project: int, name: str, parent: int | None) -> int:
        """A folder in ``project`` (under ``parent``); WRITE on the project."""
        access = await self.access.current()
        access.require(Action.WRITE, project, f"the baselines of project {project}")
        name = name.strip()
        if not name:
            raise InvalidArgument("name is required and must not be blank.")
        folders = baseline_folders.c
        async with self.db.transaction() as session:
            if parent is not None:
                await self._folder(session, project, parent, "parent")
            taken = await session.scalar(
                select(folders.id).where(
                    folders.project == project,
                    folders.parent.is_(None) if parent is None else folders.parent == parent,
                    folders.name == name,
                )
            )
            if taken is not None:
                raise AlreadyExists(f"A baseline folder named {name!r} is already there.")
            return await insert_id(
                session,
                baseline_folders.insert().values(
                    project=project,
                    name=name,
                    parent=parent,
                    created_at=utcnow(),
                    created_by=access.principal.user_id,
                ),
            )

    async def page(self, project: int, start: int, size: int) -> tuple[list[Row[Any]], int]:
        """A project's folders, oldest first (READ on the project)."""
        (await self.access.current()).require(Action.READ, project, f"project {project}")
        where = baseline_folders.c.project == project
        async with self.db.read() as session:
            total = await session.scalar(
                select(func.count()).select_from(baseline_folders).where(where)
            )
            rows = (
                await session.execute(
                    select(baseline_folders)
                    .where(where)
                    .order_by(baseline_folders.c.id)
                    .offset(start)
                    .limit(size)
                )
            ).all()
        return list(rows), int(total or 0)

    async def move(self, project: int, baseline: int, folder: int | None) -> None:
        """Puts a baseline of ``project`` into ``folder`` (None: the top); WRITE."""
        access = await self.access.current()
        access.require(Action.WRITE, project, f"the baselines of project {project}")
        async with self.db.transaction() as session:
            owner = await session.scalar(
                select(baselines.c.project).where(baselines.c.id == baseline)
            )
            if owner != project:
                raise InvalidArgument(f"baseline: no baseline {baseline} in project {project}.")
            if folder is not None:
                await self._folder(session, project, folder, "folder")
            await session.execute(
                update(baselines).where(baselines.c.id == baseline).values(folder=folder)
            )

    @staticmethod
    async def _folder(session: Any, project: int, folder: int, member: str) -> None:
        found = await session.scalar(
            select(baseline_folders.c.project).where(baseline_folders.c.id == folder)
        )
        if found != project:
            raise InvalidArgument(f"{member}: no baseline folder {folder} in project {project}.")
