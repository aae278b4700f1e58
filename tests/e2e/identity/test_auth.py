"""Basic, OAuth client credentials and bearer tokens.

What works, what a missing, wrong or garbled credential gets, and what stops one working.
"""

from __future__ import annotations

import base64

import httpx
import pytest

from tests.e2e.api import MakeUser, api_credentials, assert_error, eventually, unique
from tests.e2e.topology import System, run_cli


def _token(system: System, client_id: str, secret: str) -> httpx.Response:
    return httpx.post(
        f"{system.url}/rest/oauth/token",
        data={"grant_type": "client_credentials"},
        auth=(client_id, secret),
    )


def test_client_credentials_exchange_and_bearer_use(system: System) -> None:
    client_id, secret = api_credentials(system)
    response = _token(system, client_id, secret)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["token_type"] == "bearer"
    assert body["expires_in"] == 3600
    assert {"access_token", "scope", "tenant", "jti"} <= set(body)
    assert "refresh_token" not in body
    me = httpx.get(
        f"{system.url}/rest/v1/users/current",
        headers={"Authorization": f"Bearer {body['access_token']}"},
    )
    assert me.status_code == 200
    assert me.json()["data"]["username"] == "admin"


def test_token_endpoint_refuses_bad_requests(system: System) -> None:
    client_id, secret = api_credentials(system)
    wrong_secret = _token(system, client_id, secret + "x")
    assert wrong_secret.status_code == 401
    assert wrong_secret.json()["error"] == "invalid_client"
    wrong_grant = httpx.post(
        f"{system.url}/rest/oauth/token",
        data={"grant_type": "password"},
        auth=(client_id, secret),
    )
    assert wrong_grant.status_code == 400
    assert "client_credentials" in wrong_grant.json()["meta"]["message"]
    no_auth = httpx.post(
        f"{system.url}/rest/oauth/token", data={"grant_type": "client_credentials"}
    )
    assert no_auth.status_code == 401


def test_credentials_endpoint_is_labs_only_and_authenticated(system: System) -> None:
    v1 = httpx.post(
        f"{system.url}/rest/v1/users/current/apicredentials",
        json={"name": "x"},
        auth=("admin", system.admin_password),
    )
    assert v1.status_code == 404
    anonymous = httpx.post(
        f"{system.url}/rest/labs/users/current/apicredentials", json={"name": "x"}
    )
    assert anonymous.status_code == 401


def test_forged_and_garbage_tokens_are_401(system: System) -> None:
    for token in ("garbage", "a.b.c", "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0."):
        response = httpx.get(
            f"{system.url}/rest/v1/users/current", headers={"Authorization": f"Bearer {token}"}
        )
        assert response.status_code == 401
        assert response.json()["meta"]["message"]


def test_credentials(system: System) -> None:
    url = f"{system.url}/rest/v1/users/current"
    assert_error(httpx.get(url), 401, "Authentication is required")
    assert_error(httpx.get(f"{system.url}/rest/v1/projects"), 401)
    for auth in (("admin", "wrong"), ("admin", ""), (unique("nobody"), "x")):
        assert_error(httpx.get(url, auth=auth), 401, "not correct")
    assert_error(
        httpx.post(f"{system.url}/rest/v1/usergroups", json={"name": "x"}, auth=("admin", "no")),
        401,
    )


def test_missing_wrong_and_garbled_credentials(system: System, anonymous: httpx.Client) -> None:
    assert_error(anonymous.get("/users/current"), 401, "Authentication is required")
    for auth in (("admin", "wrong"), ("nobody", "x")):
        response = httpx.get(f"{system.url}/rest/v1/users/current", auth=auth)
        assert_error(response, 401, "not correct")
    for header in ("Basic !!!", "Basic " + "dXNlcg==", "Digest abc", "Bearer"):
        response = httpx.get(
            f"{system.url}/rest/v1/users/current", headers={"Authorization": header}
        )
        assert_error(response, 401)


@pytest.mark.parametrize(
    "header",
    [
        "Basic !!!",
        "Basic",
        "Basic " + base64.b64encode(b"no-colon").decode(),
        "Basic " + base64.b64encode(b":password").decode(),
        "Basic " + base64.b64encode(b"\xff\xfe:x").decode(),
        "Bearer",
        "Bearer not.a.token",
        "Bearer " + "a" * 2000,
        "Digest username=admin",
        "garbage",
    ],
)
def test_garbage_authorization_headers(system: System, header: str) -> None:
    response = httpx.get(f"{system.url}/rest/v1/users/current", headers={"Authorization": header})
    assert_error(response, 401)


def test_deactivated_user_loses_basic_and_token_access(system: System, make_user: MakeUser) -> None:
    user_id, username, password, client = make_user()
    assert client.get("/users/current").status_code == 200  # warms the credential cache
    client_id, secret = api_credentials(system, (username, password))
    token = _token(system, client_id, secret).json()["access_token"]
    bearer = {"Authorization": f"Bearer {token}"}
    url = f"{system.url}/rest/v1/users/current"
    assert httpx.get(url, headers=bearer).status_code == 200

    admin = ("admin", system.admin_password)
    off = httpx.put(
        f"{system.url}/rest/v1/users/{user_id}/active", json={"active": False}, auth=admin
    )
    assert off.status_code == 200
    assert eventually(lambda: httpx.get(url, auth=(username, password)).status_code == 401)
    assert eventually(lambda: httpx.get(url, headers=bearer).status_code == 401)
    assert _token(system, client_id, secret).status_code == 401

    on = httpx.put(
        f"{system.url}/rest/v1/users/{user_id}/active", json={"active": True}, auth=admin
    )
    assert on.status_code == 200
    assert eventually(lambda: httpx.get(url, auth=(username, password)).status_code == 200)


def test_cli_creates_credentials_that_work(system: System, make_user: MakeUser) -> None:
    _user_id, username, _password, _client = make_user()
    result = run_cli(system, "credentials", "create", "--user", username, "--name", "from-cli")
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(": ", 1) for line in result.stdout.strip().splitlines())
    response = _token(system, lines["client_id"], lines["client_secret"])
    assert response.status_code == 200, response.text
    me = httpx.get(
        f"{system.url}/rest/v1/users/current",
        headers={"Authorization": f"Bearer {response.json()['access_token']}"},
    )
    assert me.json()["data"]["username"] == username


def test_cli_refuses_an_unknown_user(system: System) -> None:
    result = run_cli(system, "credentials", "create", "--user", "nobody-" + unique("x"))
    assert result.returncode != 0
    assert "No user named" in result.stderr


def _assert_401(response: httpx.Response) -> None:
    assert response.status_code == 401, (response.request.method, response.request.url)
    assert response.json()["meta"]["status"] == "Unauthorized"
    assert response.json()["meta"]["message"]
    assert "Basic" in response.headers["www-authenticate"]


def test_credentials_are_checked_before_the_path_and_the_method(system: System) -> None:
    requests: list[tuple[str, str, dict[str, object]]] = [
        ("GET", "/rest/v1/nothing/here", {}),
        ("GET", "/rest/v1/items/123456789", {}),
        ("DELETE", "/rest/v1/users", {}),
        ("PATCH", "/rest/latest/projects", {"json": []}),
        ("GET", "/rest/v9/users/current", {}),
        ("GET", "/rest/labs/", {}),
        (
            "POST",
            "/rest/v1/items",
            {"content": b"not json", "headers": {"content-type": "text/plain"}},
        ),
        (
            "PUT",
            "/rest/v1/items/1",
            {"content": b"{broken", "headers": {"content-type": "application/json"}},
        ),
        ("OPTIONS", "/rest/v1/projects", {}),
    ]
    admin = ("admin", system.admin_password)
    for method, path, extra in requests:
        _assert_401(httpx.request(method, f"{system.url}{path}", **extra))  # type: ignore[arg-type]
        _assert_401(
            httpx.request(method, f"{system.url}{path}", auth=("admin", "wrong"), **extra)  # type: ignore[arg-type]
        )
        with_credentials = httpx.request(method, f"{system.url}{path}", auth=admin, **extra)  # type: ignore[arg-type]
        assert with_credentials.status_code != 401, (method, path)
    assert httpx.get(f"{system.url}/rest/v1/nothing", auth=admin).status_code == 404
    assert httpx.delete(f"{system.url}/rest/v1/users", auth=admin).status_code == 405


def test_public_paths_stay_public(system: System) -> None:
    assert httpx.get(f"{system.url}/rest").status_code == 200
    assert httpx.get(f"{system.url}/rest/").status_code == 200
    assert httpx.get(f"{system.url}/healthz").status_code == 200
    assert httpx.get(f"{system.url}/api-docs/").status_code == 200
    assert httpx.get(f"{system.url}/api-docs/assets/docs.js").status_code == 200
    # The token exchange answers for itself (OAuth's invalid_client), not the API's 401.
    token = httpx.post(f"{system.url}/rest/oauth/token", data={"grant_type": "client_credentials"})
    assert token.status_code == 401
    assert token.json()["error"] == "invalid_client"


def test_the_docs_page_session_is_offered_bearer_only(system: System) -> None:
    # A Basic challenge would make the browser open its own login dialog over the page.
    response = httpx.get(
        f"{system.url}/rest/v1/users/current", cookies={"plumbline_session": "expired.or.forged"}
    )
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer realm="plumbline"'
