"""The abstract-item ID space: blocks handed to the services that create items."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from plumbline.common.dates import utcnow
from plumbline.common.db import Database
from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.common.idblocks import BLOCK_SIZE, block_of, first_id_of
from plumbline.services.items.models import id_blocks

OWNERS = ("items", "testmgmt", "attachments")


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

    async def owner_of(self, item_id: int) -> str:
        """The service that owns ``item_id``."""
        try:
            block = block_of(item_id)
        except ValueError as exc:
            raise NotFound(str(exc)) from None
        async with self.db.read() as session:
            owner = await session.scalar(
                select(id_blocks.c.owner).where(id_blocks.c.block == block)
            )
        if owner is None:
            raise NotFound(f"No abstract item with id {item_id}.")
        return str(owner)
