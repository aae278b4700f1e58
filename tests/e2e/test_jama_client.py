"""The real public client, unmodified, in Basic and in OAuth mode."""

from __future__ import annotations

import logging

import httpx
import pytest
from py_jama_rest_client.client import JamaClient

from tests.e2e.harness import System, api_credentials, project_key, unique


@pytest.fixture(params=["basic", "oauth"])
def jama(request: pytest.FixtureRequest, system: System) -> JamaClient:
    logging.getLogger("py_jama_rest_client").setLevel(logging.CRITICAL)
    if request.param == "basic":
        return JamaClient(system.url, credentials=("admin", system.admin_password))
    return JamaClient(system.url, credentials=api_credentials(system), oauth=True)


def test_get_current_user(jama: JamaClient) -> None:
    user = jama.get_current_user()
    assert user["username"] == "admin"
    assert isinstance(user["id"], int)


def test_post_user_returns_the_id_and_get_users_pages_through_all(jama: JamaClient) -> None:
    created = []
    for _ in range(3):
        username = unique("jama")
        new_id = jama.post_user(
            username, "secret-pw", "Jama", "Client", f"{username}@example.com", "NAMED"
        )
        assert isinstance(new_id, int)
        created.append((new_id, username))
    users = jama.get_users()
    by_id = {u["id"]: u["username"] for u in users}
    for new_id, username in created:
        assert by_id[new_id] == username
    assert len(by_id) == len(users), "a page was returned twice"


def test_post_user_twice_is_already_exists(jama: JamaClient) -> None:
    from py_jama_rest_client.client import AlreadyExistsException

    username = unique("dup")
    jama.post_user(username, "pw", "A", "B", f"{username}@example.com", "NAMED")
    with pytest.raises(AlreadyExistsException):
        jama.post_user(username, "pw", "A", "B", f"{username}@example.com", "NAMED")


def test_get_projects(jama: JamaClient, admin: httpx.Client) -> None:
    key = project_key("JC")
    response = admin.post("/projects", json={"projectKey": key, "fields": {"name": key}})
    assert response.status_code == 201, response.text
    projects = jama.get_projects()
    assert key in {p.get("projectKey") for p in projects}


def test_get_available_endpoints(jama: JamaClient) -> None:
    names = {e["name"] for e in jama.get_available_endpoints()}
    assert {"users", "projects"} <= names


def test_oauth_with_wrong_secret_is_refused(system: System) -> None:
    from py_jama_rest_client.client import APIException

    client_id, _secret = api_credentials(system)
    with pytest.raises(APIException):
        JamaClient(system.url, credentials=(client_id, "not-the-secret"), oauth=True)
