"""Projects and project folders, on a real SQLite database."""

from __future__ import annotations

import pytest

from plumbline.common.access import Role
from plumbline.common.context import Principal
from plumbline.common.db import Database
from plumbline.common.errors import AlreadyExists, InvalidArgument, NotFound, PermissionDenied
from plumbline.services.items.projects import ProjectInput, Projects
from tests.unit.services.conftest import (
    ADMIN,
    RecordingPlacer,
    access_cache,
    acting_as,
    outbox_for,
)


@pytest.fixture
def projects(items_db: Database) -> Projects:
    return Projects(items_db, outbox_for(items_db, "items"), access_cache(), RecordingPlacer())


async def test_create_and_read_a_project(projects: Projects) -> None:
    with acting_as(ADMIN):
        pid = await projects.create(
            ProjectInput(project_key="DEMO", fields={"name": "Demo", "description": "d"})
        )
        [row] = await projects.get_many([pid])
    assert row.project_key == "DEMO"
    assert row.name == "Demo"
    assert not row.is_folder
    assert row.created_by == ADMIN.user_id
    assert await projects.outbox.watermark() == 1


async def test_project_rules(projects: Projects) -> None:
    with acting_as(ADMIN):
        await projects.create(ProjectInput(project_key="DEMO", fields={"name": "Demo"}))
        with pytest.raises(AlreadyExists, match="already exists"):
            await projects.create(ProjectInput(project_key="DEMO", fields={"name": "Again"}))
        with pytest.raises(InvalidArgument, match="projectKey is required"):
            await projects.create(ProjectInput(fields={"name": "No key"}))
        with pytest.raises(InvalidArgument, match="name"):
            await projects.create(ProjectInput(project_key="NONAME", fields={}))
        with pytest.raises(InvalidArgument, match="projectKey must start"):
            await projects.create(ProjectInput(project_key="1-bad", fields={"name": "x"}))
        with pytest.raises(NotFound):
            await projects.get_many([999])
    with acting_as(Principal(5, "user")), pytest.raises(PermissionDenied):
        await projects.create(ProjectInput(project_key="MINE", fields={"name": "x"}))


async def test_folders_and_parents(projects: Projects) -> None:
    with acting_as(ADMIN):
        folder = await projects.create(ProjectInput(is_folder=True, fields={"name": "Folder"}))
        inner = await projects.create(
            ProjectInput(is_folder=True, parent=folder, fields={"name": "Inner"})
        )
        project = await projects.create(
            ProjectInput(project_key="P", parent=inner, fields={"name": "P"})
        )
        with pytest.raises(InvalidArgument, match="not a folder"):
            await projects.create(
                ProjectInput(project_key="Q", parent=project, fields={"name": "Q"})
            )
        with pytest.raises(InvalidArgument, match="inside itself"):
            await projects.update(folder, ProjectInput(parent=inner))
        await projects.update(project, ProjectInput(clear_parent=True, fields={"name": "Moved"}))
        [row] = await projects.get_many([project])
    assert row.parent is None
    assert row.name == "Moved"
    assert row.version == 2


async def test_adding_an_item_type_to_a_project(items_db: Database) -> None:
    roles: dict[int, dict[int, Role]] = {7: {}, 8: {}}
    projects = Projects(
        items_db, outbox_for(items_db, "items"), access_cache(roles), RecordingPlacer()
    )
    types = {11, 12}
    with acting_as(ADMIN):
        pid = await projects.create(ProjectInput(project_key="P", fields={"name": "P"}))
        folder = await projects.create(ProjectInput(is_folder=True, fields={"name": "F"}))
        before = await projects.outbox.watermark()
        await projects.add_item_type(pid, 11, types)
        await projects.add_item_type(pid, 11, types)  # idempotent
        with pytest.raises(NotFound, match="No item type with id 99"):
            await projects.add_item_type(pid, 99, types)
        with pytest.raises(NotFound, match="No project with id 999"):
            await projects.add_item_type(999, 11, types)
        with pytest.raises(InvalidArgument, match="project folder"):
            await projects.add_item_type(folder, 11, types)
    assert await projects.outbox.watermark() == before  # nothing changed, nothing emitted
    roles[7][pid] = Role.PROJECT_ADMIN
    roles[8][pid] = Role.READ_WRITE
    with acting_as(Principal(7, "padmin")):
        await projects.add_item_type(pid, 12, types)
    with acting_as(Principal(8, "writer")), pytest.raises(PermissionDenied, match="READ_WRITE"):
        await projects.add_item_type(pid, 12, types)
    with acting_as(Principal(8, "writer")), pytest.raises(PermissionDenied, match="no access"):
        await projects.add_item_type(999, 12, types)
