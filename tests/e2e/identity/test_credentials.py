"""``/rest/labs/users/{current|id}/apicredentials``: listing and revoking client credentials.

A revoked client's tokens stop working on every gateway replica within a minute (at
once, by event), without a call per request: a second gateway process shows it.
"""

from __future__ import annotations

import time
from typing import Any

import httpx

from tests.e2e.api import MakeUser, api_credentials, assert_error, eventually
from tests.e2e.topology import System, start_gateway

#: What the issue allows between a revocation and every replica refusing the tokens.
REVOCATION_SECONDS = 60.0


def _token(url: str, client_id: str, secret: str) -> str:
    response = httpx.post(
        f"{url}/rest/oauth/token",
        data={"grant_type": "client_credentials"},
        auth=(client_id, secret),
    )
    assert response.status_code == 200, response.text
    token: str = response.json()["access_token"]
    return token


def _me(url: str, token: str) -> httpx.Response:
    return httpx.get(f"{url}/rest/v1/users/current", headers={"Authorization": f"Bearer {token}"})


def _listed(client: httpx.Client, path: str = "/users/current/apicredentials") -> list[Any]:
    response = client.get(path, params={"maxResults": 50})
    assert response.status_code == 200, response.text
    data: list[Any] = response.json()["data"]
    return data


def _id_of(client: httpx.Client, client_id: str) -> int:
    [entry] = [c for c in _listed(client) if c["clientId"] == client_id]
    return int(entry["id"])


def test_own_credentials_are_listed_without_secrets(system: System, make_user: MakeUser) -> None:
    user_id, username, password, _client = make_user()
    first, _ = api_credentials(system, (username, password))
    second, _ = api_credentials(system, (username, password))
    with system.client((username, password), version="labs") as own:
        listed = _listed(own)
    assert [c["clientId"] for c in listed] == [first, second]
    entry = listed[0]
    assert set(entry) == {"id", "name", "clientId", "user", "created", "type"}
    assert entry["user"] == user_id
    assert entry["type"] == "apicredentials"
    assert entry["created"].endswith("+0000")


def test_revoked_credentials_stop_working(system: System, make_user: MakeUser) -> None:
    _uid, username, password, _client = make_user()
    client_id, secret = api_credentials(system, (username, password))
    token = _token(system.url, client_id, secret)
    assert _me(system.url, token).status_code == 200
    with system.client((username, password), version="labs") as own:
        revoked = own.delete(f"/users/current/apicredentials/{_id_of(own, client_id)}")
        assert revoked.status_code == 204, revoked.text
        assert _listed(own) == []
    assert eventually(lambda: _me(system.url, token).status_code == 401)
    assert_error(_me(system.url, token), 401, "revoked")
    response = httpx.post(
        f"{system.url}/rest/oauth/token",
        data={"grant_type": "client_credentials"},
        auth=(client_id, secret),
    )
    assert response.status_code == 401


def test_only_owners_and_organization_admins_list_and_revoke(
    system: System, labs: httpx.Client, make_user: MakeUser
) -> None:
    owner_id, owner, owner_pw, _c = make_user()
    _other_id, other, other_pw, _c2 = make_user()
    client_id, _secret = api_credentials(system, (owner, owner_pw))
    with system.client((owner, owner_pw), version="labs") as own:
        credentials_id = _id_of(own, client_id)
    with system.client((other, other_pw), version="labs") as stranger:
        assert_error(stranger.get(f"/users/{owner_id}/apicredentials"), 401, "your own")
        refused = stranger.delete(f"/users/{owner_id}/apicredentials/{credentials_id}")
        assert_error(refused, 401, "your own")
        # Someone else's credentials are not the stranger's to revoke as their own either.
        assert_error(
            stranger.delete(f"/users/current/apicredentials/{credentials_id}"), 404, "no API"
        )
    assert [c["clientId"] for c in _listed(labs, f"/users/{owner_id}/apicredentials")] == [
        client_id
    ]
    assert labs.delete(f"/users/{owner_id}/apicredentials/{credentials_id}").status_code == 204
    assert _listed(labs, f"/users/{owner_id}/apicredentials") == []
    assert_error(labs.delete(f"/users/{owner_id}/apicredentials/{credentials_id}"), 404, "no API")


def test_listing_is_labs_only(admin: httpx.Client) -> None:
    assert_error(admin.get("/users/current/apicredentials"), 404, "/rest/labs")


def test_a_second_gateway_refuses_revoked_tokens(system: System, make_user: MakeUser) -> None:
    _uid, username, password, _client = make_user()
    auth = (username, password)
    early_id, early_secret = api_credentials(system, auth)
    late_id, late_secret = api_credentials(system, auth)
    early, late = (
        _token(system.url, early_id, early_secret),
        _token(system.url, late_id, late_secret),
    )
    with system.client(auth, version="labs") as own:
        # Revoked before the second gateway starts: it loads the revoked set at start.
        assert (
            own.delete(f"/users/current/apicredentials/{_id_of(own, early_id)}").status_code == 204
        )
        second = start_gateway(system, "gateway-2")
        try:
            url = f"http://127.0.0.1:{second.http_port}"
            assert_error(_me(url, early), 401, "revoked")
            assert _me(url, late).status_code == 200
            # Revoked through the first gateway while the second runs: it learns by event.
            revoked_at = time.monotonic()
            assert (
                own.delete(f"/users/current/apicredentials/{_id_of(own, late_id)}").status_code
                == 204
            )
            assert eventually(lambda: _me(url, late).status_code == 401, REVOCATION_SECONDS)
            assert time.monotonic() - revoked_at < REVOCATION_SECONDS
        finally:
            assert second.stop() == 0
