"""Works: reports asked for, claimed by one replica's worker at a time, and their files.

A work is QUEUED when asked for, RUNNING once a worker claims it (``claimed_by``, with a
heartbeat), then DONE with its file or FAILED with the reason. A claim is one UPDATE of a
QUEUED row (``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so replicas never take the same
one); a RUNNING work whose worker has gone silent is queued again, at most
``MAX_ATTEMPTS`` times. Only the worker that holds a work may move it on.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Row, Table, and_, delete, func, select, update

from plumbline.common.access import AccessCache, Action
from plumbline.common.context import require_principal
from plumbline.common.dates import utcnow
from plumbline.common.db import Database, affected
from plumbline.common.errors import NotFound
from plumbline.services.reports.catalog import checked, spec_of
from plumbline.services.reports.models import work_chunks, work_inputs, works

QUEUED, RUNNING, DONE, FAILED = "QUEUED", "RUNNING", "DONE", "FAILED"
#: The work of a ReqIF import sent to be made apart (its file is the import's answer).
REQIF_IMPORT = "reqif-import"
#: How often a work is started again after its worker went silent.
MAX_ATTEMPTS = 3


def _queued(report: str, project: int, fmt: str, parameters: Any) -> dict[str, Any]:
    """A new work's row, queued, owned by the caller."""
    return {
        "id": str(uuid.uuid4()),
        "report": report,
        "project": project,
        "owner": require_principal().user_id,
        "format": fmt,
        "parameters_json": json.dumps(parameters),
        "status": QUEUED,
        "progress": 0,
        "message": "Queued",
        "attempts": 0,
        "created_at": utcnow(),
    }


class _Lost(Exception):
    """The worker no longer holds the work (it was queued again meanwhile)."""


class Works:
    """The works table, as callers and workers use it."""

    def __init__(self, db: Database, access: AccessCache) -> None:
        self.db = db
        self.access = access

    async def start(self, report: str, project: int, fmt: str, parameters: Any) -> Row[Any]:
        """Queues a report (READ on the project); the parameters are checked first."""
        spec = spec_of(report)
        fmt = fmt or spec.formats[0]
        values = checked(spec, fmt, parameters if isinstance(parameters, dict) else {})
        access = await self.access.current()
        access.require(Action.READ, project, f"project {project}")
        row = _queued(report, project, fmt, values)
        async with self.db.transaction() as session:
            await session.execute(works.insert().values(row))
        return await self.get(str(row["id"]))

    async def start_import(
        self, project: int, parameters: dict[str, Any], document: AsyncIterator[bytes]
    ) -> Row[Any]:
        """Queues a ReqIF import of ``document`` into ``project``: READ_WRITE on it (READ
        for a dry run), checked before the document is kept."""
        access = await self.access.current()
        action = Action.READ if parameters.get("dryRun") else Action.WRITE
        access.require(Action.READ, project, f"project {project}")
        access.require(action, project, f"the items of project {project}")
        row = _queued(REQIF_IMPORT, project, "JSON", parameters)
        async with self.db.transaction() as session:
            await session.execute(works.insert().values(row))
            seq = 0
            async for data in document:
                if data:
                    await session.execute(
                        work_inputs.insert().values(work=row["id"], seq=seq, data=data)
                    )
                    seq += 1
        return await self.get(str(row["id"]))

    def inputs(self, work_id: str) -> AsyncIterator[bytes]:
        """What the work takes in, chunk by chunk (for its worker)."""
        return self._read(work_inputs, work_id)

    async def _read(self, table: Table, work_id: str) -> AsyncIterator[bytes]:
        """The chunks of ``table`` (a work's file or input) in order, one read each."""
        seq = 0
        while True:
            async with self.db.read() as session:
                data = await session.scalar(
                    select(table.c.data).where(table.c.work == work_id, table.c.seq == seq)
                )
            if data is None:
                return
            yield bytes(data)
            seq += 1

    async def get(self, work_id: str) -> Row[Any]:
        """A work its owner (or an organization administrator) may read; else NotFound."""
        principal = require_principal()
        async with self.db.read() as session:
            row = (await session.execute(select(works).where(works.c.id == work_id))).first()
        if row is None or not (principal.is_admin or row.owner == principal.user_id):
            raise NotFound(f"No report work with id {work_id!r}.")
        return row

    async def page(self, start: int, size: int) -> tuple[list[Row[Any]], int]:
        """The caller's works, newest first (everyone's to an administrator)."""
        principal = require_principal()
        query = select(works)
        if not principal.is_admin:
            query = query.where(works.c.owner == principal.user_id)
        async with self.db.read() as session:
            total = await session.scalar(select(func.count()).select_from(query.subquery()))
            rows = (
                await session.execute(
                    query.order_by(works.c.created_at.desc(), works.c.id).offset(start).limit(size)
                )
            ).all()
        return list(rows), int(total or 0)

    async def chunks(self, work_id: str) -> AsyncIterator[bytes]:
        """A finished work's file, chunk by chunk (its reader checked as ``get``)."""
        row = await self.get(work_id)
        if row.status != DONE and (row.status != FAILED or row.file_name is None):
            raise NotFound(f"Report work {work_id} has no file: it is {row.status}.")
        async for data in self._read(work_chunks, work_id):
            yield data

    # The workers' side.

    async def claim(self, worker: str) -> Row[Any] | None:
        """The oldest queued work, now RUNNING and held by ``worker``; None if none."""
        now = utcnow()
        async with self.db.transaction() as session:
            oldest = (
                select(works.c.id)
                .where(works.c.status == QUEUED)
                .order_by(works.c.created_at, works.c.id)
                .limit(1)
                .with_for_update(skip_locked=True)
            )
            work_id = await session.scalar(oldest)
            if work_id is None:
                return None
            await session.execute(
                update(works)
                .where(works.c.id == work_id)
                .values(
                    status=RUNNING,
                    claimed_by=worker,
                    heartbeat_at=now,
                    started_at=now,
                    attempts=works.c.attempts + 1,
                    progress=0,
                    message="Started",
                )
            )
            return (await session.execute(select(works).where(works.c.id == work_id))).first()

    async def progress(self, work_id: str, worker: str, percent: int, message: str) -> bool:
        """Records how far the work is (and that its worker lives); False when the
        worker no longer holds it."""
        async with self.db.transaction() as session:
            done = await affected(
                session,
                self._held(work_id, worker).values(
                    progress=max(0, min(percent, 99)), message=message, heartbeat_at=utcnow()
                ),
            )
        return bool(done)

    async def heartbeat(self, work_id: str, worker: str) -> None:
        """Records that the worker holding the work lives."""
        async with self.db.transaction() as session:
            await session.execute(self._held(work_id, worker).values(heartbeat_at=utcnow()))

    async def finish(
        self,
        work_id: str,
        worker: str,
        file_name: str,
        media_type: str,
        chunks: Iterable[bytes],
        data_from: datetime | None,
        data_to: datetime | None,
        message: str,
        status: str = DONE,
    ) -> bool:
        """Stores the file and marks the work DONE (or, a refusal whose reasons are the
        file, FAILED), in one transaction; what it took in goes."""
        size = 0
        try:
            async with self.db.transaction() as session:
                held = await affected(
                    session, self._held(work_id, worker).values(status=status, finished_at=utcnow())
                )
                if not held:
                    raise _Lost
                await session.execute(delete(work_inputs).where(work_inputs.c.work == work_id))
                for seq, data in enumerate(chunks):
                    await session.execute(
                        work_chunks.insert().values(work=work_id, seq=seq, data=data)
                    )
                    size += len(data)
                await session.execute(
                    update(works)
                    .where(works.c.id == work_id)
                    .values(
                        progress=100,
                        message=message,
                        file_name=file_name,
                        media_type=media_type,
                        size=size,
                        data_from=data_from,
                        data_to=data_to,
                    )
                )
        except _Lost:
            return False
        return True

    async def fail(self, work_id: str, worker: str, message: str) -> None:
        """Marks the work FAILED with ``message`` (for whoever asked for it); what it
        took in goes."""
        async with self.db.transaction() as session:
            failed = await affected(
                session,
                self._held(work_id, worker).values(
                    status=FAILED, message=message, finished_at=utcnow()
                ),
            )
            if failed:
                await session.execute(delete(work_inputs).where(work_inputs.c.work == work_id))

    async def release(self, worker: str) -> None:
        """Queues again every work ``worker`` holds (it is stopping)."""
        async with self.db.transaction() as session:
            await session.execute(
                update(works)
                .where(works.c.status == RUNNING, works.c.claimed_by == worker)
                .values(status=QUEUED, claimed_by=None, message="Queued again: its worker stopped")
            )

    async def requeue_stale(self, stale: timedelta) -> int:
        """Works whose worker went silent: queued again, or FAILED after MAX_ATTEMPTS."""
        cutoff = utcnow() - stale
        silent = and_(works.c.status == RUNNING, works.c.heartbeat_at < cutoff)
        async with self.db.transaction() as session:
            failed = await affected(
                session,
                update(works)
                .where(silent, works.c.attempts >= MAX_ATTEMPTS)
                .values(
                    status=FAILED,
                    finished_at=utcnow(),
                    message=f"Its making stopped {MAX_ATTEMPTS} times without finishing.",
                ),
            )
            queued = await affected(
                session,
                update(works)
                .where(silent)
                .values(status=QUEUED, claimed_by=None, message="Queued again: its worker stopped"),
            )
        return failed + queued

    async def prune(self, retention: timedelta) -> int:
        """Finished works older than ``retention`` go, with their files."""
        cutoff = utcnow() - retention
        async with self.db.transaction() as session:
            old = select(works.c.id).where(
                works.c.status.in_((DONE, FAILED)), works.c.finished_at < cutoff
            )
            await session.execute(delete(work_chunks).where(work_chunks.c.work.in_(old)))
            await session.execute(delete(work_inputs).where(work_inputs.c.work.in_(old)))
            return await affected(session, delete(works).where(works.c.id.in_(old)))

    @staticmethod
    def _held(work_id: str, worker: str) -> Any:
        return update(works).where(
            works.c.id == work_id, works.c.status == RUNNING, works.c.claimed_by == worker
        )
