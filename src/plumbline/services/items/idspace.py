"""The abstract-item ID space: blocks handed to the services that create items."""

from __future__ import annotations

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.dates import utcnow
from plumbline.common.db import Database
from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.common.idblocks import BLOCK_SIZE, block_of, first_id_of
from plumbline.services.items import tree
from plumbline.services.items.models import document_key_counters, id_blocks, item_types, projects

OWNERS = ("items", "testmgmt", "attachments")
MAX_KEYS = 10_000


async def next_numbers(session: AsyncSession, project: int, item_type: int, count: int) -> int:
    """The first of ``count`` consecutive document-key numbers of an item type in a project.

    The caller holds the project's lock (``tree.lock_project``), so the counter row is
    read and written by one transaction at a time.
    """
    counters = document_key_counters.c
    # One statement moves the counter on and says where it got to.
    after = await session.scalar(
        update(document_key_counters)
        .where(counters.project == project, counters.item_type == item_type)
        .values(next_number=counters.next_number + count)
        .returning(counters.next_number)
    )
    if after is None:
        await session.execute(
            document_key_counters.insert().values(
                project=project, item_type=item_type, next_number=1 + count
            )
        )
        return 1
    return int(after) - count


async def owner_in(session: AsyncSession, item_id: int) -> str:
    """The service that owns ``item_id``, read in ``session``; NotFound when none does."""
    try:
        block = block_of(item_id)
    except ValueError as exc:
        raise NotFound(str(exc)) from None
    owner = await session.scalar(select(id_blocks.c.owner).where(id_blocks.c.block == block))
    if owner is None:
        raise NotFound(f"No abstract item with id {item_id}.")
    return str(owner)


class IdSpace:
    """Allocates blocks and answers who owns an id."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def allocate(self, owner: str) -> tuple[int, int]:
        """A new block for ``owner``: (first id, size)."""
        if owner not in OWNERS:
            raise InvalidArgument(f"owner must be one of {', '.join(OWNERS)}, got {owner!r}")
        for _ in range(20):
            try:
                async with self.db.transaction() as session:
                    last = await session.scalar(select(func.max(id_blocks.c.block)))
                    block = 0 if last is None else last + 1
                    await session.execute(
                        id_blocks.insert().values(block=block, owner=owner, allocated_at=utcnow())
                    )
                return first_id_of(block), BLOCK_SIZE
            except IntegrityError:
                continue  # another replica took that block; take the next
        raise InvalidArgument("could not allocate an id block; try again")

    async def allocate_run(self, owner: str, count: int) -> int:
        """The first of ``count`` consecutive ids for ``owner``: whole blocks, taken in one
        transaction (a bulk import's, whose k-th item gets the first id + k)."""
        if owner not in OWNERS:
            raise InvalidArgument(f"owner must be one of {', '.join(OWNERS)}, got {owner!r}")
        blocks = max(1, -(-count // BLOCK_SIZE))
        for _ in range(20):
            try:
                async with self.db.transaction() as session:
                    last = await session.scalar(select(func.max(id_blocks.c.block)))
                    start = 0 if last is None else last + 1
                    now = utcnow()
                    await session.execute(
                        id_blocks.insert(),
                        [
                            {"block": start + n, "owner": owner, "allocated_at": now}
                            for n in range(blocks)
                        ],
                    )
                return first_id_of(start)
            except IntegrityError:
                continue  # another replica took one of those blocks; start after it
        raise InvalidArgument("could not allocate id blocks; try again")

    async def owner_of(self, item_id: int) -> str:
        """The service that owns ``item_id``."""
        async with self.db.read() as session:
            return await owner_in(session, item_id)

    async def reserve_keys(self, project: int, item_type: int, count: int) -> list[str]:
        """``count`` document keys for records of ``item_type`` another service creates."""
        if not 1 <= count <= MAX_KEYS:
            raise InvalidArgument(f"count must be between 1 and {MAX_KEYS}, got {count}")
        async with self.db.transaction() as session:
            row = (
                await session.execute(
                    select(projects.c.project_key, projects.c.is_folder).where(
                        projects.c.id == project
                    )
                )
            ).first()
            if row is None:
                raise InvalidArgument(f"project: no project with id {project}.")
            if row.is_folder:
                raise InvalidArgument(f"project {project} is a folder; items live in projects.")
            type_key = await session.scalar(
                select(item_types.c.type_key).where(item_types.c.id == item_type)
            )
            if type_key is None:
                raise InvalidArgument(f"itemType: no item type with id {item_type}.")
            await tree.lock_project(session, project)
            first = await next_numbers(session, project, item_type, count)
        return [f"{row.project_key}-{type_key}-{n}" for n in range(first, first + count)]
