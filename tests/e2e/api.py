"""The HTTP helpers every e2e module drives a running system with: unique names, new
projects, items and users, grants and the access matrix's cast, API credentials, the
error check, pages' ids and totals, polling, and the gRPC metadata of the admin's calls.

A module keeps only what is particular to its resource; starting a system is
``tests.e2e.topology``'s.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

import httpx

from plumbline.common.context import ORG_ADMIN, ROLES_KEY, USER_ID_KEY, USERNAME_KEY
from tests.e2e.topology import System

Scalar: TypeAlias = str | int | float | bool | None
Query: TypeAlias = Mapping[str, Scalar | Sequence[Scalar]] | list[tuple[str, Scalar]]
"""Query parameters as httpx takes them: a mapping, or a list of pairs to repeat a name."""


def admin_metadata(admin: httpx.Client) -> tuple[tuple[str, str | bytes], ...]:
    """The gRPC metadata of a call a service takes for the organization admin's."""
    me = admin.get("/users/current").json()["data"]
    return ((USER_ID_KEY, str(me["id"])), (USERNAME_KEY, me["username"]), (ROLES_KEY, ORG_ADMIN))


def unique(prefix: str) -> str:
    """A name no other test uses."""
    return f"{prefix}{uuid.uuid4().hex[:8]}"


def project_key(prefix: str = "P") -> str:
    """A project key no other test uses."""
    return unique(prefix).upper()


def new_project(admin: httpx.Client, key: str | None = None, **body: object) -> int:
    """Creates a project; returns its id.

    ``key`` (a unique one when left out) is its projectKey and, unless ``fields`` is given,
    its name. Other keywords are members of the POST body; a folder (``isFolder=True``)
    gets no key and a unique name.
    """
    if key is not None:
        body["projectKey"] = key
    elif not body.get("isFolder"):
        body.setdefault("projectKey", project_key())
    body.setdefault("fields", {"name": body.get("projectKey", unique("Folder "))})
    response = admin.post("/projects", json=body)
    assert response.status_code == 201, response.text
    return int(response.json()["meta"]["id"])


def item_types(admin: httpx.Client) -> dict[str, dict[str, Any]]:
    """Every item type, by type key."""
    response = admin.get("/itemtypes", params={"maxResults": 50})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["meta"]["pageInfo"]["totalResults"] == len(body["data"])
    return {t["typeKey"]: t for t in body["data"]}


def type_ids(admin: httpx.Client) -> dict[str, int]:
    """Item type ids by type key."""
    return {key: int(t["id"]) for key, t in item_types(admin).items()}


def user_body(**overrides: object) -> dict[str, object]:
    """The POST body of a new user with a unique username; keywords replace members."""
    username = unique("user")
    body: dict[str, object] = {
        "username": username,
        "password": unique("pw-"),
        "firstName": "Test",
        "lastName": "User",
        "email": f"{username}@example.com",
        "licenseType": "NAMED",
    }
    body.update(overrides)
    return body


class MakeUser(Protocol):
    """The ``make_user`` fixture: creates a user; returns (id, username, password, client).

    Keyword arguments replace members of the POST body (see ``user_body``).
    """

    def __call__(self, **overrides: object) -> tuple[int, str, str, httpx.Client]: ...


def grant(
    admin: httpx.Client,
    project: int,
    role: str = "READ_WRITE",
    *,
    user: int | None = None,
    group: int | None = None,
) -> None:
    """Gives a user or a user group ``role`` on a project or folder (adds or changes)."""
    entry: dict[str, object] = {"role": role}
    if user is not None:
        entry["user"] = user
    if group is not None:
        entry["userGroup"] = group
    response = admin.put(f"/projects/{project}/permissions", json=[entry])
    assert response.status_code == 200, response.text


#: The roles of the access matrix: no entry at all, each project role, and the
#: organisation administrator.
MATRIX_ROLES = ("NONE", "READ_ONLY", "TEST_RUNNER", "READ_WRITE", "PROJECT_ADMIN", "ORG_ADMIN")


@dataclass
class Team:
    """One user per role of ``MATRIX_ROLES`` on one project, and each user's client."""

    project: dict[str, Any]
    clients: dict[str, httpx.Client]
    ids: dict[str, int]

    def expect(self, allowed_from: str | None) -> dict[str, bool]:
        """Role -> whether it may, when ``allowed_from`` is the weakest role that may
        (``None``: only the organisation administrator)."""
        order = list(MATRIX_ROLES)
        first = order.index(allowed_from) if allowed_from is not None else order.index("ORG_ADMIN")
        return {role: order.index(role) >= first for role in order}


def api_credentials(system: System, auth: tuple[str, str] | None = None) -> tuple[str, str]:
    """A new OAuth client id and secret of the user ``auth`` names (the admin by default)."""
    response = httpx.post(
        f"{system.url}/rest/labs/users/current/apicredentials",
        json={"name": unique("client-")},
        auth=auth or ("admin", system.admin_password),
    )
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    assert response.json()["meta"]["id"] == data["id"]
    return data["clientId"], data["clientSecret"]


def assert_error(response: httpx.Response, status: int, *words: str) -> None:
    """The response is an error envelope: ``status``, its reason phrase, a timestamp, and a
    message that holds each of ``words``."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    meta = response.json()["meta"]
    assert meta["status"] == httpx.codes.get_reason_phrase(status)
    assert meta["timestamp"].endswith("+0000")
    assert meta["message"]
    for word in words:
        assert word in meta["message"], meta["message"]


def eventually(check: Callable[[], bool], seconds: float = 10.0) -> bool:
    """Polls ``check`` until it holds or ``seconds`` pass (for changes that travel by
    events); returns whether it held."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def create_item(
    admin: httpx.Client,
    project: dict[str, Any],
    name: str,
    parent: int | None = None,
    **fields: object,
) -> int:
    """A requirement in ``project`` (the ``project`` fixture's shape), under ``parent``."""
    body: dict[str, Any] = {
        "project": project["id"],
        "itemType": project["types"]["REQ"]["id"],
        "fields": {"name": name, **fields},
    }
    if parent is not None:
        body["location"] = {"parent": {"item": parent}}
    response = admin.post("/items", json=body)
    assert response.status_code == 201, response.text
    return int(response.json()["meta"]["id"])


def ids_of(response: httpx.Response) -> list[int]:
    """The ids of a page's records (the response must be a 200)."""
    assert response.status_code == 200, response.text
    return [int(record["id"]) for record in response.json()["data"]]


def total_of(response: httpx.Response) -> int:
    """A page's ``totalResults``."""
    return int(response.json()["meta"]["pageInfo"]["totalResults"])


def created_id(response: httpx.Response) -> int:
    """The id of the record a POST created (the response must be a 201)."""
    assert response.status_code == 201, response.text
    return int(response.json()["meta"]["id"])


def assert_answers(
    responses: dict[str, httpx.Response], allowed: bool, role: str, *words: str
) -> None:
    """Access matrix cells: each response (by what it did) succeeded when ``allowed``, and
    otherwise is a 401 whose message holds each of ``words``."""
    for what, response in responses.items():
        if allowed:
            assert response.status_code in (200, 201, 204), (role, what, response.text)
        else:
            assert_error(response, 401, *words)
