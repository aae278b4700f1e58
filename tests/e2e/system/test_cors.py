"""CORS: ``/system/settings/corsdomains`` and what the gateway answers browsers.

GET reads the list and POST replaces it (the contract's summaries read the other way); both
carry the contract's ``{"domains": [...]}``, and POST takes the bare array too.
Preflights need no credentials; only listed origins get CORS headers.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.e2e.api import MakeUser, assert_error, eventually
from tests.e2e.topology import System

LISTED = "https://app.example.com"
UNLISTED = "https://evil.example.net"
PATH = "/system/settings/corsdomains"


@pytest.fixture
def domains(admin: httpx.Client) -> Iterator[list[str]]:
    """Sets the list for one test, and empties it afterwards."""
    response = admin.post(PATH, json=["https://App.Example.com/", "http://localhost:3000"])
    assert response.status_code == 200, response.text
    stored: list[str] = response.json()["data"]["domains"]
    yield stored
    assert admin.post(PATH, json=[]).status_code == 200


def _preflight(system: System, origin: str) -> httpx.Response:
    return httpx.options(
        f"{system.url}/rest/v1/items/1",
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "PUT",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    )


def test_get_reads_and_post_replaces_the_list(admin: httpx.Client, domains: list[str]) -> None:
    assert domains == [LISTED, "http://localhost:3000"]
    assert admin.get(PATH).json()["data"] == {"domains": domains}
    replaced = admin.post(PATH, json=["https://app.example.com:443", "http://[::1]:8080"])
    assert replaced.json()["data"] == {"domains": [LISTED, "http://[::1]:8080"]}
    assert admin.get(PATH).json()["data"] == {"domains": [LISTED, "http://[::1]:8080"]}


def test_the_contracts_whitelist_object_is_taken(admin: httpx.Client, domains: list[str]) -> None:
    # The contract's CrossOriginDomainWhiteList, as its clients send it.
    replaced = admin.post(PATH, json={"domains": ["https://App.Example.com/", "http://b.test"]})
    assert replaced.status_code == 200, replaced.text
    assert replaced.json()["data"] == {"domains": [LISTED, "http://b.test"]}
    assert admin.get(PATH).json()["data"] == {"domains": [LISTED, "http://b.test"]}
    emptied = admin.post(PATH, json={"domains": []})
    assert emptied.json()["data"] == {"domains": []}


def test_preflight_from_a_listed_origin(system: System, domains: list[str]) -> None:
    assert eventually(lambda: _preflight(system, LISTED).status_code == 204)
    response = _preflight(system, LISTED)
    assert response.headers["access-control-allow-origin"] == LISTED
    assert "PUT" in response.headers["access-control-allow-methods"]
    assert response.headers["access-control-allow-headers"] == "authorization, content-type"
    assert "access-control-allow-credentials" not in response.headers
    assert "origin" in response.headers["vary"].lower()
    # The request that follows gets the header too, a refusal included.
    me = httpx.get(
        f"{system.url}/rest/v1/users/current",
        headers={"Origin": LISTED},
        auth=("admin", system.admin_password),
    )
    assert me.status_code == 200
    assert me.headers["access-control-allow-origin"] == LISTED
    assert "X-Request-Id" in me.headers["access-control-expose-headers"]
    anonymous = httpx.get(f"{system.url}/rest/v1/users/current", headers={"Origin": LISTED})
    assert anonymous.status_code == 401
    assert anonymous.headers["access-control-allow-origin"] == LISTED


def test_an_unlisted_origin_gets_no_cors_headers(system: System, domains: list[str]) -> None:
    assert eventually(lambda: _preflight(system, LISTED).status_code == 204)
    response = _preflight(system, UNLISTED)
    assert_error(response, 403, UNLISTED, "corsdomains")
    assert not [h for h in response.headers if h.startswith("access-control-")]
    me = httpx.get(
        f"{system.url}/rest/v1/users/current",
        headers={"Origin": UNLISTED},
        auth=("admin", system.admin_password),
    )
    assert me.status_code == 200
    assert not [h for h in me.headers if h.startswith("access-control-")]


def test_an_emptied_list_allows_no_origin(
    system: System, admin: httpx.Client, domains: list[str]
) -> None:
    assert eventually(lambda: _preflight(system, LISTED).status_code == 204)
    assert admin.post(PATH, json=[]).json()["data"] == {"domains": []}
    assert eventually(lambda: _preflight(system, LISTED).status_code == 403)


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (["app.example.com"], ("'app.example.com'", "http or https origin")),
        (["ftp://app.example.com"], ("http or https origin",)),
        (["https://*.example.com"], ("invalid host name", "no wildcards")),
        (["https://app.example.com/path"], ("origin only",)),
        (["https://user@app.example.com"], ("origin only",)),
        (["https://app.example.com:99999"], ("invalid port",)),
        ([""], ("1 to 255 characters",)),
        (["https://a.example"] * 101, ("At most 100",)),
        ({"origins": [LISTED]}, ('{"domains": [...]}', "JSON array of origins")),
        ({"domains": LISTED}, ('{"domains": [...]}',)),
        ({"domains": [LISTED], "more": 1}, ('{"domains": [...]}',)),
        ({"domains": ["ftp://a.example"]}, ("http or https origin",)),
        ([1], ("JSON array of origins",)),
    ],
)
def test_domains_are_checked(admin: httpx.Client, body: object, words: tuple[str, ...]) -> None:
    before = admin.get(PATH).json()["data"]
    assert_error(admin.post(PATH, json=body), 400, *words)
    assert admin.get(PATH).json()["data"] == before


def test_only_organization_admins_read_and_change_it(system: System, make_user: MakeUser) -> None:
    _id, _name, _pw, user = make_user()
    assert_error(user.get(PATH), 401, "organization administrators")
    assert_error(user.post(PATH, json=[LISTED]), 401, "organization administrators")
