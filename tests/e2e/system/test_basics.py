"""Versions, the envelope, paging, trailing slashes, health and metrics."""

from __future__ import annotations

import httpx

from tests.e2e.topology import System


def test_rest_lists_the_versions(system: System) -> None:
    response = httpx.get(f"{system.url}/rest")
    assert response.status_code == 200
    names = [v["name"] for v in response.json()["data"]]
    assert names == ["v1", "latest", "labs"]


def test_version_root_answers_with_and_without_slash(admin: httpx.Client) -> None:
    for path in ("/", ""):
        response = admin.get(path)
        assert response.status_code == 200
        names = {e["name"] for e in response.json()["data"]}
        assert {"users", "usergroups", "projects", "activities"} <= names


def test_unknown_version_is_404(system: System) -> None:
    response = httpx.get(
        f"{system.url}/rest/v9/users/current", auth=("admin", system.admin_password)
    )
    assert response.status_code == 404
    assert "v9" in response.json()["meta"]["message"]


def test_current_user_is_the_admin_in_the_envelope(admin: httpx.Client) -> None:
    body = admin.get("/users/current").json()
    assert body["meta"]["status"] == "OK"
    assert body["meta"]["timestamp"].endswith("+0000")
    assert body["data"]["username"] == "admin"
    assert body["data"]["type"] == "users"
    assert "links" in body


def test_latest_and_labs_serve_the_same_resources(system: System) -> None:
    for version in ("latest", "labs"):
        response = httpx.get(
            f"{system.url}/rest/{version}/users/current", auth=("admin", system.admin_password)
        )
        assert response.status_code == 200
        assert response.json()["data"]["username"] == "admin"


def test_trailing_slash_is_the_same_resource(admin: httpx.Client) -> None:
    with_slash = admin.get("/users/current/")
    without = admin.get("/users/current")
    assert with_slash.status_code == without.status_code == 200
    assert with_slash.json()["data"] == without.json()["data"]


def test_health_readiness_and_metrics(system: System) -> None:
    for process in system.processes:
        base = f"http://127.0.0.1:{process.http_port}"
        assert httpx.get(f"{base}/healthz").status_code == 200
        ready = httpx.get(f"{base}/readyz")
        assert ready.status_code == 200
        assert ready.json()["status"] == "ready"
        metrics = httpx.get(f"{base}/metrics")
        assert metrics.status_code == 200
        assert "plumbline_grpc_server_seconds" in metrics.text or process.name == "gateway"
    gateway_metrics = httpx.get(f"http://127.0.0.1:{system.gateway.http_port}/metrics").text
    assert "plumbline_http_requests_total" in gateway_metrics


def test_every_response_carries_a_request_id(admin: httpx.Client) -> None:
    response = admin.get("/users/current", headers={"X-Request-Id": "abc123"})
    assert response.headers["x-request-id"] == "abc123"
    generated = admin.get("/users/current").headers["x-request-id"]
    assert generated
    assert generated != "abc123"


def test_the_root_leads_to_the_documentation(system: System) -> None:
    response = httpx.get(system.url + "/", follow_redirects=False)
    assert response.status_code == 302
    assert response.headers["location"] == "/api-docs/"
    assert httpx.head(system.url + "/").status_code == 302


def test_head_answers_wherever_get_does(system: System, admin: httpx.Client) -> None:
    for path in ("/users/current", "/projects", "/rest/v1/api-docs"):
        url = path if path.startswith("/rest") else f"/rest/v1{path}"
        get = httpx.get(system.url + url, auth=admin.auth)
        head = httpx.head(system.url + url, auth=admin.auth)
        assert get.status_code == head.status_code == 200, (path, head.status_code)
        assert head.content == b""
        assert head.headers["content-type"] == get.headers["content-type"]
        assert head.headers["content-length"] == get.headers["content-length"]
    assert httpx.head(system.url + "/healthz").status_code == 200
    assert httpx.head(system.url + "/rest/v1/users/current").status_code == 401
    assert httpx.head(system.url + "/rest/v1/nothing/here", auth=admin.auth).status_code == 404
