"""The placer: project places reach identity, and a write does not fail while identity is
down (it catches up instead)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import pytest

from plumbline.api.identity.v1 import identity_pb2
from plumbline.common.db import Database
from plumbline.common.errors import Unavailable
from plumbline.services.items.projects import Placer, ProjectInput, Projects
from tests.unit.services.conftest import ADMIN, access_cache, acting_as, outbox_for


class Identity:
    """A channel whose PlaceProjects is unavailable until ``up``; it keeps what arrives."""

    def __init__(self) -> None:
        self.up = False
        self.reports: list[tuple[list[tuple[int, int, bool]], bool]] = []

    def unary_unary(self, method: str, **_: Any) -> Callable[..., Any]:
        async def call(request: identity_pb2.ProjectPlacements, **_: Any) -> Any:
            assert method.endswith("/PlaceProjects")
            if not self.up:
                raise Unavailable("The identity service is unavailable; try again shortly.")
            self.reports.append(
                ([(p.id, p.parent, p.is_folder) for p in request.projects], request.complete)
            )
            return identity_pb2.ProjectPlacements()

        return call

    unary_stream = stream_unary = stream_stream = unary_unary


async def wait_for(condition: Callable[[], bool]) -> None:
    for _ in range(200):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition never held")


@pytest.fixture
def identity() -> Identity:
    return Identity()


@pytest.fixture
def placer(identity: Identity) -> Placer:
    return Placer(lambda: identity)  # type: ignore[arg-type,return-value]


async def test_a_project_created_while_identity_is_down_is_placed_once_it_is_up(
    items_db: Database, identity: Identity, placer: Placer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(asyncio, "sleep", _fast(asyncio.sleep))
    projects = Projects(items_db, outbox_for(items_db, "items"), access_cache(), placer)
    keeping = asyncio.create_task(placer.keep(projects.placements))
    try:
        with acting_as(ADMIN):
            folder = await projects.create(
                ProjectInput(project_key="F", is_folder=True, fields={"name": "F"})
            )
            inside = await projects.create(
                ProjectInput(project_key="P", parent=folder, fields={"name": "P"})
            )
        assert identity.reports == []  # down: the writes succeeded all the same
        identity.up = True
        await wait_for(lambda: bool(identity.reports))
        assert identity.reports == [([(folder, 0, True), (inside, folder, False)], True)]
    finally:
        keeping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await keeping


async def test_while_identity_is_up_each_write_reports_only_its_project(
    items_db: Database, identity: Identity, placer: Placer
) -> None:
    identity.up = True
    projects = Projects(items_db, outbox_for(items_db, "items"), access_cache(), placer)
    keeping = asyncio.create_task(placer.keep(projects.placements))
    try:
        await wait_for(lambda: bool(identity.reports))  # the report at start
        with acting_as(ADMIN):
            pid = await projects.create(ProjectInput(project_key="A", fields={"name": "A"}))
        assert identity.reports == [([], True), ([(pid, 0, False)], False)]
        assert not placer.behind.is_set()
    finally:
        keeping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await keeping


def _fast(sleep: Callable[[float], Any]) -> Callable[[float], Any]:
    """asyncio.sleep with the placer's retry backoff cut to a hundredth."""

    async def fast(delay: float, *args: Any) -> Any:
        return await sleep(delay / 100, *args)

    return fast
