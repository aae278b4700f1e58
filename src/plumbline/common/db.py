"""Async SQLAlchemy engines for the two supported databases.

SQLite (the embedded default) runs in WAL mode with a busy timeout so that readers
never block the writer; PostgreSQL runs on asyncpg.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar, cast

from sqlalchemy import BigInteger, Integer, Row, Select, Table, event
from sqlalchemy.dialects.postgresql import Insert as PostgresqlInsert
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import Insert as SqliteInsert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import CursorResult, make_url
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.sql.dml import Delete, Insert, Update

from plumbline.common.errors import InvalidArgument, NotFound

T = TypeVar("T")

#: Primary keys: 64-bit on PostgreSQL, INTEGER (so AUTOINCREMENT works) on SQLite.
ID = BigInteger().with_variant(Integer, "sqlite")


def is_sqlite(url: str) -> bool:
    """Whether ``url`` names a SQLite database."""
    return make_url(url).get_backend_name() == "sqlite"


def check_url(url: str) -> None:
    """Refuses database URLs the services cannot use, with a sentence that says why."""
    parsed = make_url(url)
    allowed = {("sqlite", "aiosqlite"), ("postgresql", "asyncpg")}
    if (parsed.get_backend_name(), parsed.get_driver_name()) not in allowed:
        raise InvalidArgument(
            f"unsupported database URL {parsed.render_as_string(hide_password=True)}: "
            "use sqlite+aiosqlite:///path or postgresql+asyncpg://user@host/db"
        )


def create_engine(url: str) -> AsyncEngine:
    """An engine tuned for its backend."""
    check_url(url)
    if is_sqlite(url):
        path = make_url(url).database
        if path:
            from pathlib import Path

            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(url, connect_args={"timeout": 30})

        @event.listens_for(engine.sync_engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:
            cursor = dbapi_conn.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.close()

        return engine
    return create_async_engine(url, pool_size=10, max_overflow=10, pool_pre_ping=True)


async def ensure_database(url: str) -> None:
    """Creates the PostgreSQL database named in ``url`` if it does not exist yet."""
    if is_sqlite(url):
        return
    import asyncpg

    parsed = make_url(url)
    admin = parsed.set(drivername="postgresql", database="postgres")
    conn = await asyncpg.connect(admin.render_as_string(hide_password=False))
    try:
        exists = await conn.fetchval("SELECT 1 FROM pg_database WHERE datname=$1", parsed.database)
        if not exists:
            await conn.execute(f'CREATE DATABASE "{parsed.database}"')
    except asyncpg.DuplicateDatabaseError:
        pass
    finally:
        await conn.close()


class Database:
    """An engine and its session factory for one service."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = create_engine(url)
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        self.sqlite = is_sqlite(url)
        # SQLite has one writer at a time anyway; queueing writers here instead of in
        # SQLite's busy handler (which sleeps in steps of up to 100 ms) keeps latency low.
        self._writer = asyncio.Lock() if self.sqlite else None

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """A session inside one transaction, committed on success (never nest them)."""
        if self._writer is None:
            async with self.sessions() as session, session.begin():
                yield session
            return
        async with self._writer, self.sessions() as session, session.begin():
            yield session

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        """A session for reads only."""
        async with self.sessions() as session:
            yield session

    def insert_ignoring_duplicates(self, table: Table) -> Insert:
        """``INSERT ... ON CONFLICT DO NOTHING`` in this database's dialect."""
        return self.upsert(table).on_conflict_do_nothing()

    def upsert(self, table: Table) -> PostgresqlInsert | SqliteInsert:
        """An INSERT in this database's dialect, for its ``ON CONFLICT`` clauses (both
        dialects spell them alike)."""
        return sqlite_insert(table) if self.sqlite else postgresql_insert(table)

    async def close(self) -> None:
        """Releases every connection."""
        await self.engine.dispose()


#: Ids one ``IN (...)`` takes at most: within both databases' bind-parameter limits
#: (PostgreSQL's 32,767, SQLite's 32,766), with room for the statement's other ones.
IN_CHUNK = 10_000


def chunked(values: Sequence[T], size: int = IN_CHUNK) -> Iterator[list[T]]:
    """``values`` in lists of at most ``size``, for statements that name many ids."""
    for start in range(0, len(values), size):
        yield list(values[start : start + size])


def unique_violation(exc: IntegrityError) -> bool:
    """Whether an integrity error is a unique-constraint violation (both backends)."""
    text = str(exc.orig).lower()
    return "unique" in text or "duplicate key" in text


async def insert_id(session: AsyncSession, statement: Insert) -> int:
    """Runs an INSERT and returns the new row's primary key."""
    result = cast(CursorResult[Any], await session.execute(statement))
    return int(result.inserted_primary_key[0])  # type: ignore[index]


async def affected(session: AsyncSession, statement: Insert | Update | Delete) -> int:
    """Runs an INSERT, UPDATE or DELETE and returns how many rows it touched."""
    result = cast(CursorResult[Any], await session.execute(statement))
    return int(result.rowcount)


async def inserted_keys(
    session: AsyncSession, statement: Insert, rows: Sequence[dict[str, Any]], key: Sequence[str]
) -> set[tuple[Any, ...]]:
    """Runs ``statement``, an INSERT that skips rows already there
    (``insert_ignoring_duplicates``), for ``rows``; the keys (values of the ``key``
    columns) of the rows it inserted.

    A lone row is told by the row count instead of ``RETURNING``: no row to fetch back, a
    round trip less to SQLite's driver thread, in the common case of a batch of one.
    """
    if len(rows) == 1:
        [row] = rows
        if await affected(session, statement.values(row)):
            return {tuple(row[name] for name in key)}
        return set()
    returned = statement.values(list(rows)).returning(*(statement.table.c[name] for name in key))
    return {tuple(found) for found in await session.execute(returned)}


async def first_or_missing(session: AsyncSession, statement: Select[Any], missing: str) -> Row[Any]:
    """The first row ``statement`` reads; ``NotFound(missing)`` when it reads none."""
    row: Row[Any] | None = (await session.execute(statement)).first()
    if row is None:
        raise NotFound(missing)
    return row


def check_batch(rows: Sequence[object], ids: Sequence[int], what: str) -> None:
    """A batch read leaves out ids it cannot find, except when it was asked for one."""
    if len(ids) == 1 and not rows:
        raise NotFound(f"No {what} with id {ids[0]}.")
