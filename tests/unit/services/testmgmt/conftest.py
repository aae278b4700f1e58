"""testmgmt's domain on SQLite, with the items service faked at its client
(``remote.Items``): the default configuration's item types, test cases kept here, ids
and document keys counted here."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from grpc import aio
from sqlalchemy import select

from plumbline.common.catalog import Catalog
from plumbline.common.db import Database
from plumbline.common.errors import Unavailable
from plumbline.common.outbox import Outbox
from plumbline.services.items.config import Configuration
from plumbline.services.items.module import install_default_configuration
from plumbline.services.testmgmt import remote
from plumbline.services.testmgmt.cycles import Cycles
from plumbline.services.testmgmt.groups import Groups
from plumbline.services.testmgmt.models import records
from plumbline.services.testmgmt.plans import Plans
from plumbline.services.testmgmt.results import Results
from plumbline.services.testmgmt.runs import Runs
from tests.unit.services.conftest import ADMIN, access_cache, acting_as, migrated, outbox_for

PROJECT = 3
#: A cycle's required fields.
CYCLE = {"name": "Cycle", "startDate": "2026-11-02", "endDate": "2026-11-13"}
_catalogs: list[Catalog] = []


async def default_catalog(tmp_path: Path) -> Catalog:
    """The default configuration as the items service answers it (built once)."""
    if not _catalogs:
        db = await migrated("items", tmp_path)
        config = Configuration(db)
        with acting_as(ADMIN):
            await install_default_configuration(config)
            _catalogs.append(await config.catalog())
        await db.close()
    return _catalogs[0]


def _unreachable() -> aio.Channel:
    raise Unavailable("the fake items client makes no calls")


class FakeItems(remote.Items):
    """The items service as testmgmt's client sees it."""

    def __init__(self, catalog: Catalog) -> None:
        super().__init__(_unreachable)
        self._fixed = catalog
        self.cases: dict[int, remote.TestCase] = {}
        self.asked: list[list[int]] = []
        self._next_id = 1000
        self._keys: dict[tuple[int, int], int] = {}

    async def catalog(self) -> Catalog:
        return self._fixed

    async def new_ids(self, count: int) -> list[int]:
        first = self._next_id
        self._next_id += count
        return list(range(first, first + count))

    async def document_keys(self, project: int, item_type: int, count: int) -> list[str]:
        type_key = self._fixed.item_types[item_type].type_key
        last = self._keys.get((project, item_type), 0)
        self._keys[(project, item_type)] = last + count
        return [f"P{project}-{type_key}-{n}" for n in range(last + 1, last + count + 1)]

    async def test_cases(self, ids: list[int]) -> dict[int, remote.TestCase]:
        self.asked.append(list(ids))
        return {i: self.cases[i] for i in ids if i in self.cases}

    def add_case(self, case_id: int, name: str, steps: int = 0, version: int = 1) -> None:
        """A test case of the project, with ``steps`` steps."""
        type_id = self._type("TC")
        self.cases[case_id] = remote.TestCase(
            case_id,
            PROJECT,
            type_id,
            version,
            {
                "name": name,
                "testCaseSteps": [
                    {"action": f"do {n}", "expectedResult": f"see {n}"} for n in range(steps)
                ],
            },
            f"P{PROJECT}-TC-{case_id}",
            f"GID-TC-{case_id}",
        )

    def _type(self, type_key: str) -> int:
        found = self._fixed.by_key(type_key)
        assert found is not None
        return found.id


@dataclass(frozen=True)
class Domain:
    """testmgmt's domain objects (built as its module's ``start`` builds them), and
    what the tests do with them."""

    db: Database
    outbox: Outbox
    items: FakeItems
    plans: Plans
    groups: Groups
    cycles: Cycles
    runs: Runs
    results: Results

    async def plan(self, groups: dict[str, list[int]]) -> tuple[int, dict[str, int]]:
        """A plan whose groups (by name, the first is the plan's Default) hold the test
        cases given, in order: the plan's id and the groups' ids by name."""
        with acting_as(ADMIN):
            plan = await self.plans.create(PROJECT, {"name": "Plan"})
            [default], _ = await self.groups.page(plan, 0, 10)
            ids: dict[str, int] = {}
            for n, (name, cases) in enumerate(groups.items()):
                ids[name] = default.id if n == 0 else await self.groups.create(plan, name, None)
                for case in cases:
                    await self.groups.add_case(plan, ids[name], case)
        return plan, ids

    async def cycle(self, plan: int, config: dict[str, Any] | None = None) -> int:
        """A cycle of ``plan`` with its runs generated (``config``: what to include)."""
        with acting_as(ADMIN):
            return await self.cycles.create(plan, CYCLE, json.dumps(config or {}).encode())

    async def execute(self, steps: dict[int, str]) -> None:
        """Sets the one step of each run in ``steps`` to its status, as a tester would."""
        with acting_as(ADMIN):
            async with self.outbox.transaction() as session:
                await self.runs.record(
                    session,
                    await self.runs.access.current(),
                    [(run, {"testRunSteps": [{"status": s}]}) for run, s in steps.items()],
                    single=True,
                )

    async def runs_of(self, cycle: int) -> list[Any]:
        """A cycle's runs, in document key order."""
        async with self.db.read() as session:
            return list(
                (
                    await session.execute(
                        select(records)
                        .where(records.c.kind == "run", records.c.cycle == cycle)
                        .order_by(records.c.key_sort)
                    )
                ).all()
            )

    async def fields(self, record: int) -> dict[str, Any]:
        """A record's stored fields."""
        async with self.db.read() as session:
            text = await session.scalar(select(records.c.fields_json).where(records.c.id == record))
        assert text is not None
        found: dict[str, Any] = json.loads(text)
        return found


@pytest.fixture
async def testmgmt(tmp_path: Path) -> AsyncIterator[Domain]:
    db = await migrated("testmgmt", tmp_path)
    items = FakeItems(await default_catalog(tmp_path))
    box = outbox_for(db, "testmgmt")
    access = access_cache()
    runs = Runs(db, box, items, access)
    yield Domain(
        db,
        box,
        items,
        Plans(db, box, items, access),
        Groups(db, box, items, access),
        Cycles(db, box, items, access),
        runs,
        Results(runs),
    )
    await db.close()
