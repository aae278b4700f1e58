"""The running system, once per topology, and HTTP clients for it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.api import (
    MATRIX_ROLES,
    MakeUser,
    Team,
    grant,
    item_types,
    new_project,
    project_key,
    user_body,
)
from tests.e2e.topology import System, require_backends, running

TOPOLOGIES = ["embedded", "distributed"]


@pytest.fixture(scope="session", params=TOPOLOGIES)
def system(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[System]:
    """Plumbline, running in one topology for the whole session."""
    workdir: Path = tmp_path_factory.mktemp(request.param)
    if request.param == "distributed":
        require_backends()
    with running(request.param, workdir) as system:
        yield system


@pytest.fixture
def admin(system: System) -> Iterator[httpx.Client]:
    """A client authenticated as the organization admin, at ``/rest/v1``."""
    with system.client(("admin", system.admin_password)) as client:
        yield client


@pytest.fixture
def anonymous(system: System) -> Iterator[httpx.Client]:
    """A client without credentials."""
    with system.client() as client:
        yield client


@pytest.fixture
def labs(system: System) -> Iterator[httpx.Client]:
    """A client authenticated as the organization admin, at ``/rest/labs``."""
    with system.client(("admin", system.admin_password), version="labs") as client:
        yield client


@pytest.fixture
def make_user(admin: httpx.Client, system: System) -> Iterator[MakeUser]:
    """Creates users; see ``MakeUser``. Their clients are closed afterwards."""
    clients: list[httpx.Client] = []

    def make(**overrides: object) -> tuple[int, str, str, httpx.Client]:
        body = user_body(**overrides)
        response = admin.post("/users", json=body)
        assert response.status_code == 201, response.text
        username, password = str(body["username"]), str(body["password"])
        client = system.client((username, password))
        clients.append(client)
        return response.json()["meta"]["id"], username, password, client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def project(admin: httpx.Client) -> dict[str, Any]:
    """A new project: its id, key and the item types by key (modules may define their own)."""
    key = project_key("IT")
    pid = new_project(admin, key)
    return {"id": pid, "key": key, "types": item_types(admin)}


@pytest.fixture
def team(admin: httpx.Client, project: dict[str, Any], make_user: MakeUser) -> Team:
    """A project with one user per role (see ``Team``): the access matrix's cast."""
    clients: dict[str, httpx.Client] = {"ORG_ADMIN": admin}
    ids: dict[str, int] = {"ORG_ADMIN": admin.get("/users/current").json()["data"]["id"]}
    for role in MATRIX_ROLES[:-1]:
        user_id, _name, _pw, client = make_user()
        if role != "NONE":
            grant(admin, project["id"], role, user=user_id)
        clients[role], ids[role] = client, user_id
    return Team(project, clients, ids)
