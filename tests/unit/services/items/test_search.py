"""``contains`` through the trigram index matches exactly what the literal LIKE matched.

On both backends, against an oracle (``needle.lower() in search_text``): SQLite through
its FTS5 table (kept in step by triggers), PostgreSQL through its GIN index.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import Connection, delete, event, text, update
from sqlalchemy.engine.interfaces import DBAPICursor

from plumbline.common.access import Access, Role
from plumbline.common.context import Principal
from plumbline.common.db import Database
from plumbline.common.migrations import config_for, upgrade
from plumbline.services.items.models import items, projects
from plumbline.services.items.search import Search, search, search_text
from tests.unit.common.conftest import pg_url  # noqa: F401  (fixture)
from tests.unit.services.conftest import ADMIN, acting_as

TEXTS = [
    "50% of users (sic)",
    "5_0 and a_b",
    r"C:\temp\new and a\b",
    "it's O'Brien",
    'say "hi" to "them"',
    "Grüße aus der Straße",
    "ŞİMDİ ÇOK GÜZEL",
    "\u017ftar (long s)",
    "Star Wars",
    "日本語のテキスト",
    "launch 🚀 now",
    "%%% and ___",
    "Requirement 1234 login EXPORT",
    "requirement 12345 logout import",
    "FTS5 syntax: NEAR(a b) OR x* AND ^c:d",
    "ab",
    "",
]

NEEDLES = [
    "%",
    "_",
    "\\",
    "'",
    '"',
    "50%",
    "0%",
    "5_%",
    "5_0",
    "a_b",
    "a\\b",
    "\\temp\\",
    "it's",
    "o'brien",
    '"hi"',
    '"them"',
    "GRÜSSE",
    "grüße",
    "STRASSE",
    "straße",
    "şimdi",
    "ŞİMDİ",
    "çok",
    "\u017fta",
    "STAR",
    "star",
    "tar",
    "日本",
    "日本語",
    "テキスト",
    "🚀",
    "🚀 n",
    "%%%",
    "___",
    "1234",
    "requirement 1234 ",
    "LOGIN export",
    "xyz",
    "a",
    "ab",
    "b",
    ")",
    "near(a",
    "or x*",
    " and ^c:",
    "  ",
]


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path}/items.db"
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
async def db(url: str) -> AsyncIterator[Database]:
    await upgrade("items", url)
    database = Database(url)
    yield database
    await database.close()


def _row(item_id: int, text_: str, *, project: int = 1, active: bool = True) -> dict[str, Any]:
    now = datetime.now(UTC)
    return {
        "id": item_id,
        "project": project,
        "item_type": 1,
        "document_key": f"P-{item_id}",
        "global_id": f"GID-{item_id}",
        "parent": None,
        "sort_order": item_id,
        "global_sort_order": item_id * 1024,
        "sequence": str(item_id),
        "name": text_[:255],
        "fields_json": "{}",
        "search_text": search_text({"name": text_}),
        "active": active,
        "locked": False,
        "version": 1,
        "created_by": 1,
        "modified_by": 1,
        "created_at": now,
        "modified_at": now,
        "last_activity_at": now,
    }


async def _insert(db: Database, rows: list[dict[str, Any]]) -> None:
    async with db.transaction() as session:
        await session.execute(items.insert(), rows)


async def _search(
    db: Database,
    contains: list[str],
    projects: list[int] | None = None,
    access: Access | None = None,
) -> tuple[list[int], int]:
    """The first 50 ids (by id) and the total (as ``access``; the admin by default)."""
    query = Search(
        projects=projects or [],
        item_types=[],
        document_keys=[],
        releases=[],
        ranges={},
        contains=contains,
        sort_field="id",
        descending=False,
    )
    with acting_as(ADMIN):
        rows, total = await search(db, query, 0, 50, access or Access(ADMIN, {}))
    return [r.id for r in rows], total


async def _found(db: Database, contains: list[str], projects: list[int] | None = None) -> list[int]:
    """Every id found (fewer than a page), by id."""
    ids, total = await _search(db, contains, projects)
    assert total == len(ids) < 50
    return ids


def _expected(corpus: dict[int, tuple[str, bool]], contains: list[str]) -> list[int]:
    """The oracle: active items whose lower-cased text holds one of the lower-cased needles."""
    return sorted(
        item_id
        for item_id, (text_, active) in corpus.items()
        if active and any(n.lower() in text_.lower() for n in contains)
    )


async def _fts_in_step(db: Database) -> None:
    """FTS5's integrity check, which with rank 1 also compares the index with ``items``."""
    if db.sqlite:
        async with db.transaction() as session:
            await session.execute(
                text("INSERT INTO items_fts (items_fts, rank) VALUES ('integrity-check', 1)")
            )


async def test_matches_are_literal_and_case_insensitive(db: Database) -> None:
    corpus = {(i + 1) * 10: (t, True) for i, t in enumerate(TEXTS)}
    # Inactive twins of every text: never found.
    corpus |= {(i + 1) * 10 + 1: (t, False) for i, t in enumerate(TEXTS)}
    corpus[5000] = ("\n".join(TEXTS), True)  # everything in one item
    await _insert(db, [_row(i, t, active=a) for i, (t, a) in corpus.items()])
    await _fts_in_step(db)
    for needle in NEEDLES:
        assert await _found(db, [needle]) == _expected(corpus, [needle]), needle
    # Several values are ORed: long with long (one FTS5 query), long with short (a scan).
    for pair in itertools.combinations(["50%", "STAR", "日本語", "xyz", "ab", "_", '"hi"'], 2):
        assert await _found(db, list(pair)) == _expected(corpus, list(pair)), pair


async def test_matches_follow_writes(db: Database) -> None:
    corpus = {1: ("Alpha login screen", True), 2: ("Beta export", True), 3: ("Gamma", True)}
    await _insert(db, [_row(i, t) for i, (t, _a) in corpus.items()])
    assert await _found(db, ["login"]) == [1]
    async with db.transaction() as session:
        await session.execute(
            update(items)
            .where(items.c.id == 1)
            .values(search_text=search_text({"name": "Alpha LOGOUT screen"}))
        )
        await session.execute(update(items).where(items.c.id == 2).values(active=False))
        await session.execute(delete(items).where(items.c.id == 3))
        # A write that leaves search_text alone keeps the item findable.
        await session.execute(update(items).where(items.c.id == 1).values(sort_order=7))
    await _insert(db, [_row(4, "Delta login again")])
    await _fts_in_step(db)
    assert await _found(db, ["login"]) == [4]
    assert await _found(db, ["logout"]) == [1]
    assert await _found(db, ["export"]) == []
    assert await _found(db, ["gamma"]) == []
    assert await _found(db, ["screen", "again"]) == [1, 4]


async def test_many_hits_and_project_scope(db: Database) -> None:
    # More hits than the index path takes (SQLite then scans): same answers either way.
    rows = [_row(i, f"common word {i}", project=1 + i % 2) for i in range(1, 1201)]
    rows.append(_row(5000, "rare word", project=2))
    await _insert(db, rows)
    assert await _search(db, ["common"], projects=[2]) == (list(range(1, 101, 2)), 600)
    expected = [i for i in range(1, 1201) if "common word 1" in f"common word {i}"]
    assert await _search(db, ["COMMON WORD 1"]) == (expected[:50], len(expected))
    assert await _found(db, ["rare"], projects=[2]) == [5000]
    assert await _found(db, ["rare"], projects=[1]) == []
    assert await _found(db, ["word 1200"]) == [1200]


async def test_only_readable_projects_are_found_and_counted(db: Database) -> None:
    rows = [_row(i, f"common word {i}", project=1 + i % 3) for i in range(1, 601)]
    await _insert(db, rows)
    reader = Access(Principal(7, "reader", frozenset()), {2: Role.READ_ONLY, 3: Role.READ_WRITE})
    readable = [i for i in range(1, 601) if 1 + i % 3 in (2, 3)]
    assert await _search(db, ["common"], access=reader) == (readable[:50], len(readable))
    assert await _search(db, ["word 1"], access=reader) == await _search(
        db, ["word 1"], projects=[2, 3]
    )
    # Asking for a project one may not read finds nothing there.
    assert await _search(db, ["common"], projects=[1], access=reader) == ([], 0)
    only_two = [i for i in readable if 1 + i % 3 == 2]
    assert await _search(db, ["common"], projects=[1, 2], access=reader) == (
        only_two[:50],
        len(only_two),
    )
    nobody = Access(Principal(8, "nobody", frozenset()), {})
    assert await _search(db, ["common"], access=nobody) == ([], 0)


async def _explained(db: Database, contains: list[str], projects: list[int]) -> list[str]:
    """The plan of each statement ``search`` runs."""
    statements: list[tuple[str, Any]] = []

    def record(
        _conn: Connection, _cursor: DBAPICursor, statement: str, parameters: Any, *_: object
    ) -> None:
        if statement.lstrip().upper().startswith(("SELECT", "WITH")):
            statements.append((statement, parameters))

    event.listen(db.engine.sync_engine, "before_cursor_execute", record)
    try:
        await _search(db, contains, projects)
    finally:
        event.remove(db.engine.sync_engine, "before_cursor_execute", record)
    plans = []
    async with db.engine.connect() as conn:
        if not db.sqlite:
            # A table this small is cheaper to read whole; the question is whether the
            # LIKE (with its ESCAPE) can use the trigram index at all.
            await conn.exec_driver_sql("SET enable_seqscan = off")
        for statement, parameters in statements:
            prefix = "EXPLAIN QUERY PLAN " if db.sqlite else "EXPLAIN "
            result = await conn.exec_driver_sql(prefix + statement, parameters)
            plans.append("\n".join(str(row[-1]) for row in result))
    return plans


async def test_the_index_is_used(db: Database) -> None:
    await _insert(
        db,
        [
            _row(i, f"item {i} login" + (" zephyrus" if i % 500 == 0 else ""))
            for i in range(1, 2001)
        ],
    )
    if db.sqlite:
        plans = await _explained(db, ["Zephyrus"], projects=[1])
        in_scope, probe, *searches = plans
        assert "projects" in in_scope  # the kept counts of the projects in scope
        assert "items_fts VIRTUAL TABLE INDEX 0:M" in probe
        assert len(searches) == 2  # count and page
        for plan in searches:
            # From the hits to items by id, not through a project index.
            assert "items_fts VIRTUAL TABLE INDEX 0:M" in plan, plan
            assert "(id=?)" in plan, plan
            assert "ix_items_tree" not in plan, plan
        for plan in await _explained(db, ["lo"], projects=[1]):
            assert "items_fts" not in plan, plan  # too short for trigrams: a scan
    else:
        # VACUUM moves the new rows out of GIN's pending list, as autovacuum would.
        async with db.engine.connect() as conn:
            await conn.execution_options(isolation_level="AUTOCOMMIT")
            await conn.exec_driver_sql("VACUUM ANALYZE items")
        plans = await _explained(db, ["Zephyrus"], projects=[1])
        assert len(plans) == 2
        for plan in plans:
            assert "ix_items_search_text_trgm" in plan, plan


@pytest.fixture
async def sqlite_db(tmp_path: Path) -> AsyncIterator[Database]:
    url = f"sqlite+aiosqlite:///{tmp_path}/items.db"
    await upgrade("items", url)
    database = Database(url)
    yield database
    await database.close()


async def test_a_word_many_items_hold_still_starts_from_the_index(sqlite_db: Database) -> None:
    """800 hits among 4,000 items: more than a fixed limit would take, fewer than a quarter
    of the items in scope (the project's kept count), so the hits are the start. (SQLite's
    FTS5 table; PostgreSQL weighs its trigram index itself.)"""
    db = sqlite_db
    await _insert(
        db, [_row(i, f"item {i}" + (" zephyrus" if i % 5 == 0 else "")) for i in range(1, 4001)]
    )
    async with db.transaction() as session:
        await session.execute(
            projects.insert().values(
                id=1,
                project_key="P",
                name="P",
                is_folder=False,
                fields_json="{}",
                version=1,
                created_by=1,
                modified_by=1,
                created_at=datetime.now(UTC),
                modified_at=datetime.now(UTC),
                active_items=4000,
            )
        )
    _, _, *searches = await _explained(db, ["zephyrus"], projects=[1])
    for plan in searches:
        assert "items_fts VIRTUAL TABLE INDEX 0:M" in plan, plan
    ids, total = await _search(db, ["zephyrus"], projects=[1])
    assert total == 800
    assert ids == list(range(5, 251, 5))


async def test_upgrade_fills_the_index_and_downgrade_removes_it(url: str) -> None:
    await upgrade("items", url)
    config = config_for("items", url)
    await asyncio.to_thread(command.downgrade, config, "0010")
    db = Database(url)
    try:
        async with db.read() as session:
            if db.sqlite:
                left = await session.scalar(
                    text("SELECT count(*) FROM sqlite_master WHERE name LIKE 'items_fts%'")
                )
            else:
                left = await session.scalar(
                    text("SELECT count(*) FROM pg_indexes WHERE indexname = :name"),
                    {"name": "ix_items_search_text_trgm"},
                )
        assert left == 0
        # Items written before the index exists are found once it does.
        await _insert(db, [_row(1, "written before the index"), _row(2, "other")])
        await asyncio.to_thread(command.upgrade, config, "head")
        await _fts_in_step(db)
        assert await _found(db, ["BEFORE THE"]) == [1]
    finally:
        await db.close()
