"""The shared helpers: one row or NotFound, a batch that may not miss a single id, the
rows an insert that skips duplicates wrote."""

from __future__ import annotations

import asyncpg
import pytest
from sqlalchemy import BigInteger, Column, MetaData, String, Table, func, literal, select, text

from plumbline.common import db
from plumbline.common.db import Database, check_batch, first_or_missing, inserted_keys
from plumbline.common.errors import NotFound, Unavailable

metadata = MetaData()
things = Table(
    "things",
    metadata,
    Column("id", BigInteger, primary_key=True),
    Column("name", String(20), nullable=False),
)


async def test_first_or_missing_reads_the_row_or_says_what_is_missing(db_url: str) -> None:
    db = Database(db_url)
    try:
        async with db.transaction() as session:
            await session.run_sync(lambda s: metadata.create_all(s.connection()))
            await session.execute(things.insert().values(id=1, name="one"))
        async with db.read() as session:
            row = await first_or_missing(
                session, select(things).where(things.c.id == 1), "No thing with id 1."
            )
            assert row.name == "one"
            with pytest.raises(NotFound, match=r"No thing with id 2\."):
                await first_or_missing(
                    session, select(things).where(things.c.id == 2), "No thing with id 2."
                )
    finally:
        await db.close()


def test_check_batch_refuses_only_a_single_missing_id() -> None:
    check_batch([], [1, 2], "thing")  # a batch leaves out what it cannot find
    check_batch(["row"], [1], "thing")
    with pytest.raises(NotFound, match=r"No thing with id 7\."):
        check_batch([], [7], "thing")


async def test_inserted_keys_names_the_rows_written_not_those_already_there(db_url: str) -> None:
    db = Database(db_url)
    try:
        async with db.transaction() as session:
            await session.run_sync(lambda s: metadata.create_all(s.connection()))
            skipping = db.insert_ignoring_duplicates(things)
            one = await inserted_keys(session, skipping, [{"id": 1, "name": "one"}], ["id"])
            again = await inserted_keys(session, skipping, [{"id": 1, "name": "uno"}], ["id"])
            rows = [{"id": n, "name": f"n{n}"} for n in (3, 1, 2)]
            many = await inserted_keys(session, skipping, rows, ["id", "name"])
            none = await inserted_keys(session, skipping, rows, ["id"])
        assert (one, again, many, none) == ({(1,)}, set(), {(3, "n3"), (2, "n2")}, set())
        async with db.read() as session:
            assert (await session.execute(select(things).order_by(things.c.id))).all() == [
                (1, "one"),
                (2, "n2"),
                (3, "n3"),
            ]
    finally:
        await db.close()


async def test_a_connection_the_server_dropped_fails_once_as_unavailable(pg_url: str) -> None:
    """Without a ping before each checkout, the first statement on a dropped connection
    fails; it says try again (503), and the next session gets a fresh connection."""
    db = Database(pg_url)
    try:
        async with db.read() as session:
            backend = await session.scalar(select(func.pg_backend_pid()))
        admin = await asyncpg.connect(pg_url.replace("+asyncpg", ""))
        try:
            assert await admin.fetchval("SELECT pg_terminate_backend($1)", backend)
        finally:
            await admin.close()
        with pytest.raises(Unavailable, match="connection to the database was lost"):
            async with db.read() as session:
                await session.scalar(select(literal(1)))
        async with db.read() as session:
            assert await session.scalar(select(literal(1))) == 1
    finally:
        await db.close()


async def test_engines_take_the_pool_the_process_configured(
    pg_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(db, "POOL", dict(db.POOL))
    db.configure_pools(pool_size=2, max_overflow=3)
    engine = db.create_engine(pg_url)
    try:
        pool = engine.sync_engine.pool
        assert (pool.size(), pool._max_overflow) == (2, 3)  # type: ignore[attr-defined]
    finally:
        await engine.dispose()


async def test_reads_on_postgresql_run_without_a_transaction_unless_they_set_something(
    pg_url: str,
) -> None:
    """A read session sends no BEGIN (each statement is its own transaction, so each sees
    its own ``now()``); ``settings=True`` holds one transaction, where ``SET LOCAL`` lasts
    to the next statement and is gone for the next session on the same connection."""
    database = Database(pg_url)
    now = select(func.clock_timestamp(), func.now())
    try:
        async with database.read() as session:
            first = (await session.execute(now)).one()
            second = (await session.execute(now)).one()
        assert first.now < second.now  # a new transaction for each statement
        async with database.read(settings=True) as session:
            first = (await session.execute(now)).one()
            await session.execute(text("SET LOCAL plan_cache_mode = force_custom_plan"))
            second = (await session.execute(now)).one()
            assert await session.scalar(text("SHOW plan_cache_mode")) == "force_custom_plan"
        assert first.now == second.now  # one transaction
        async with database.read() as session:
            assert await session.scalar(text("SHOW plan_cache_mode")) == "auto"
    finally:
        await database.close()


async def test_a_read_sees_what_was_committed_before_each_statement(db_url: str) -> None:
    """Both databases read alike: a write committed between two statements of a read
    session is seen by the second (no snapshot is held across a read's statements)."""
    database = Database(db_url)
    try:
        async with database.transaction() as session:
            await session.execute(text("CREATE TABLE t (id INTEGER PRIMARY KEY)"))
        async with database.read() as session:
            before = await session.scalar(text("SELECT count(*) FROM t"))
            async with database.transaction() as other:
                await other.execute(text("INSERT INTO t VALUES (1)"))
            after = await session.scalar(text("SELECT count(*) FROM t"))
        assert (before, after) == (0, 1)
    finally:
        await database.close()
