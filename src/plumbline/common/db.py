"""Async SQLAlchemy engines for the two supported databases.

SQLite (the embedded default) runs in WAL mode with a busy timeout so that readers
never block the writer; PostgreSQL runs on asyncpg.

SQLite statements run inline, on the event loop's thread, not on aiosqlite's thread per
connection: a statement on a local file takes microseconds, and handing each one to a
thread and back cost more CPU than running it (a point read in a session: 290 µs of
CPU through aiosqlite, 110 µs inline). Nothing in a process waits on SQLite's own lock
while holding the loop: this process's writers queue on an asyncio lock first
(``Database.transaction``), and WAL readers never wait. The URL a user writes stays
``sqlite+aiosqlite:///path``.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeVar, cast

from sqlalchemy import BigInteger, Integer, Row, Select, Table, event, pool
from sqlalchemy.dialects import registry
from sqlalchemy.dialects.postgresql import Insert as PostgresqlInsert
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import Insert as SqliteInsert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.dialects.sqlite.pysqlite import SQLiteDialect_pysqlite
from sqlalchemy.engine import URL, CursorResult, make_url
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.sql.dml import Delete, Insert, Update
from sqlalchemy.util import await_

from plumbline.common.errors import InvalidArgument, NotFound, Unavailable

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


class _InlineCursor(sqlite3.Cursor):
    """sqlite3's cursor with what SQLAlchemy's asyncio layer expects of a cursor.

    Each statement runs through ``await_`` of a coroutine that completes at once: the
    greenlet switches to the loop's side and straight back (no event-loop turn), which
    is what ``AsyncConnection.execute`` checks to know the driver is asynchronous.
    """

    def execute(self, sql: str, parameters: Any = (), /) -> _InlineCursor:
        await_(self._run(super().execute, sql, parameters))
        return self

    def executemany(self, sql: str, parameters: Any, /) -> _InlineCursor:
        await_(self._run(super().executemany, sql, parameters))
        return self

    @staticmethod
    async def _run(statement: Any, sql: str, parameters: Any) -> None:
        statement(sql, parameters)

    async def _async_soft_close(self) -> None:
        return None


class _InlineConnection(sqlite3.Connection):
    def cursor(self, factory: Any = _InlineCursor) -> Any:
        return super().cursor(factory)


class SQLiteInlineDialect(SQLiteDialect_pysqlite):
    """The standard-library sqlite3 driver under SQLAlchemy's asyncio API: its calls
    return without ever awaiting, so the greenlet that runs them never switches."""

    driver = "plumbline_inline"
    is_async = True
    supports_statement_cache = True

    @classmethod
    def get_pool_class(cls, url: URL) -> type[pool.Pool]:
        return pool.AsyncAdaptedQueuePool


registry.register("sqlite.plumbline_inline", __name__, "SQLiteInlineDialect")


#: Each PostgreSQL engine's pool: connections kept open, and how many more it may open
#: under load (closed again when returned). A process sets them once from its settings
#: (``configure_pools``): every process of a deployment holds ``pool_size`` connections
#: per service it runs, which PostgreSQL's max_connections must allow for.
POOL = {"pool_size": 10, "max_overflow": 10}


def configure_pools(pool_size: int, max_overflow: int) -> None:
    """The pool of the engines this process makes from now on."""
    POOL.update(pool_size=pool_size, max_overflow=max_overflow)


def create_engine(url: str) -> AsyncEngine:
    """An engine tuned for its backend."""
    check_url(url)
    if is_sqlite(url):
        parsed = make_url(url)
        if parsed.database:
            from pathlib import Path

            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(
            parsed.set(drivername="sqlite+plumbline_inline"),
            connect_args={"timeout": 30, "factory": _InlineConnection, "check_same_thread": False},
        )

        @event.listens_for(engine.sync_engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:
            cursor = dbapi_conn.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.close()

        return engine
    # No ping before each checkout: it cost a round trip, 120 to 200 µs of CPU, on every
    # session. A connection the server dropped (a restart, an idle timeout on the way)
    # fails its first statement instead; SQLAlchemy then discards every pooled connection
    # older than the failure, and ``Database`` answers that one call Unavailable (retry).
    # Connections are renewed after half an hour, before proxies' idle timeouts.
    return create_async_engine(url, **POOL, pool_recycle=1800)


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
        # Reads on PostgreSQL run without BEGIN and ROLLBACK (decision 0028): under READ
        # COMMITTED every statement takes its own snapshot anyway, so a transaction around
        # reads kept nothing consistent and cost two round trips of three for a point
        # read. SQLite's driver never opens one for a SELECT: its reads stay as they are.
        self._reads = (
            self.sessions
            if self.sqlite
            else async_sessionmaker(
                self.engine.execution_options(isolation_level="AUTOCOMMIT"),
                expire_on_commit=False,
            )
        )
        # SQLite has one writer at a time anyway; queueing writers here instead of in
        # SQLite's busy handler (which sleeps in steps of up to 100 ms) keeps latency low.
        self._writer = asyncio.Lock() if self.sqlite else None

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """A session inside one transaction, committed on success (never nest them)."""
        with _connection_lost_is_unavailable():
            if self._writer is None:
                async with self.sessions() as session, session.begin():
                    yield session
                return
            async with self._writer, self.sessions() as session, session.begin():
                yield session

    @asynccontextmanager
    async def read(self, *, settings: bool = False) -> AsyncIterator[AsyncSession]:
        """A session for reads only: each statement sees what was committed when it
        started (READ COMMITTED), with no transaction around them on PostgreSQL. With
        ``settings``, inside one transaction, for ``SET LOCAL`` to last until its end."""
        with _connection_lost_is_unavailable():
            async with (self.sessions if settings else self._reads)() as session:
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


@contextmanager
def _connection_lost_is_unavailable() -> Iterator[None]:
    """A statement that failed because the database dropped its connection (the pool has
    discarded it and those opened before it) raises Unavailable: trying again works."""
    try:
        yield
    except DBAPIError as exc:
        if not exc.connection_invalidated:
            raise
        raise Unavailable("The connection to the database was lost; try again.") from exc


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

    A lone row, the common case of a batch of one, is told by the row count instead of
    ``RETURNING``: no row to fetch back. Several go as one executemany, which SQLAlchemy
    sends as multi-row INSERTs ("insertmanyvalues") from one cached compilation: a
    statement with the rows in its VALUES clause compiled anew for every batch, a third
    of the history's and the inbox's CPU under a burst of events.
    """
    if len(rows) == 1:
        [row] = rows
        if await affected(session, statement.values(row)):
            return {tuple(row[name] for name in key)}
        return set()
    returned = statement.returning(*(statement.table.c[name] for name in key))
    return {tuple(found) for found in await session.execute(returned, list(rows))}


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
