"""The documentation page: login first, Swagger UI from local assets, in a real browser."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlparse

import httpx

from tests.e2e.api import new_project, unique
from tests.e2e.browser import chromium
from tests.e2e.topology import System

if TYPE_CHECKING:
    from playwright.sync_api import ConsoleMessage, Page

# The browser reaches the server under a name that is not localhost: Swagger UI treats
# localhost specially (its validator badge, for one, stays quiet there).
DOCS_HOST = "plumbline-docs.test"
LOGIN_FORM = '<form method="post" action="/api-docs/login">'


def test_the_session_cookie_is_secure_over_https(system: System) -> None:
    """Secure when the request came over HTTPS: here through a trusted proxy (127.0.0.1,
    uvicorn's FORWARDED_ALLOW_IPS default) that says so; not over plain HTTP."""
    form = {"username": "admin", "password": system.admin_password, "version": "v1"}
    plain = httpx.post(f"{system.url}/api-docs/login", data=form)
    assert plain.status_code == 303, plain.text
    assert "secure" not in plain.headers["set-cookie"].lower()
    proxied = httpx.post(
        f"{system.url}/api-docs/login", data=form, headers={"X-Forwarded-Proto": "https"}
    )
    assert proxied.status_code == 303, proxied.text
    attributes = [a.strip() for a in proxied.headers["set-cookie"].lower().split(";")]
    assert "secure" in attributes, attributes
    # Logging out deletes it with the same attributes (a browser keeps a Secure cookie
    # that a non-Secure deletion names).
    logout = httpx.post(
        f"{system.url}/api-docs/logout",
        data={"version": "v1"},
        cookies={"plumbline_session": "x"},
        headers={"X-Forwarded-Proto": "https"},
    )
    assert logout.status_code == 303, logout.text
    deletion = [a.strip() for a in logout.headers["set-cookie"].lower().split(";")]
    assert "secure" in deletion, deletion
    assert "max-age=0" in deletion, deletion


def _login(system: System, version: str = "v1") -> httpx.Cookies:
    response = httpx.post(
        f"{system.url}/api-docs/login",
        data={"username": "admin", "password": system.admin_password, "version": version},
    )
    assert response.status_code == 303, response.text
    assert response.headers["location"] == f"/api-docs/?version={version}"
    cookie = response.headers["set-cookie"].lower()
    assert cookie.startswith("plumbline_session=")
    for attribute in ("httponly", "samesite=strict", "path=/", "max-age="):
        assert attribute in cookie, cookie
    return response.cookies


def test_login_page_first(system: System) -> None:
    for path in ("/api-docs/", "/api-docs", "/api-docs/?version=labs"):
        response = httpx.get(f"{system.url}{path}")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/html")
        assert LOGIN_FORM in response.text
        assert 'name="username"' in response.text
        assert 'type="password"' in response.text
        assert "swagger-ui-bundle.js" not in response.text
        assert response.headers["cache-control"] == "no-store"
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    labs = httpx.get(f"{system.url}/api-docs/?version=labs")
    assert 'name="version" value="labs"' in labs.text
    forged = httpx.get(f"{system.url}/api-docs/", cookies={"plumbline_session": "x.y.z"})
    assert forged.status_code == 200
    assert LOGIN_FORM in forged.text


def test_wrong_password_shows_the_login_again(system: System) -> None:
    response = httpx.post(
        f"{system.url}/api-docs/login",
        data={"username": "<i>admin</i>", "password": "<b>nope</b>"},
    )
    assert response.status_code == 401
    assert LOGIN_FORM in response.text
    assert "not correct" in response.text
    assert "<b>nope</b>" not in response.text
    assert "<i>admin</i>" not in response.text
    assert "&lt;i&gt;admin&lt;/i&gt;" in response.text
    assert "Traceback" not in response.text
    assert "set-cookie" not in response.headers
    empty = httpx.post(f"{system.url}/api-docs/login", data={"username": "admin"})
    assert empty.status_code == 400
    assert LOGIN_FORM in empty.text


def test_logged_in_page_uses_only_local_assets(system: System) -> None:
    cookies = _login(system)
    page = httpx.get(f"{system.url}/api-docs/?version=v1", cookies=cookies)
    assert page.status_code == 200
    assert 'data-spec="/rest/v1/api-docs"' in page.text
    assert "Logged in as admin" in page.text
    for version in ("v1", "latest", "labs"):
        assert f'href="/api-docs/?version={version}"' in page.text
    sources = re.findall(r'(?:src|href|action)="([^"]*)"', page.text)
    assert "/api-docs/assets/swagger-ui-bundle.js" in sources
    assert all(s.startswith("/") and not s.startswith("//") for s in sources), sources
    assert not re.search(r"https?://", page.text)
    policy = page.headers["content-security-policy"]
    assert "script-src 'self';" in policy
    assert "connect-src 'self'" in policy
    assets = {
        "swagger-ui-bundle.js": "text/javascript",
        "swagger-ui-standalone-preset.js": "text/javascript",
        "swagger-ui.css": "text/css",
        "favicon-32x32.png": "image/png",
        "docs.js": "text/javascript",
        "docs.css": "text/css",
    }
    for asset, kind in assets.items():
        response = httpx.get(f"{system.url}/api-docs/assets/{asset}")
        assert response.status_code == 200, asset
        assert response.headers["content-type"].startswith(kind), response.headers
        assert response.content
    for bad in (
        "../../../etc/passwd",
        "..%2F..%2F..%2Fetc%2Fpasswd",
        "..%2Fdocs.py",
        "%2e%2e%2fsetup.py",
        "index.j2",
        "swagger-ui-bundle.js.map",
        "__init__.py",
    ):
        assert httpx.get(f"{system.url}/api-docs/assets/{bad}").status_code == 404, bad
    unknown = httpx.get(f"{system.url}/api-docs/?version=<v7>", cookies=cookies)
    assert unknown.status_code == 404
    assert "<v7>" not in unknown.text


def test_logout_clears_the_cookie(system: System) -> None:
    cookies = _login(system, "labs")
    response = httpx.post(
        f"{system.url}/api-docs/logout", data={"version": "labs"}, cookies=cookies
    )
    assert response.status_code == 303
    assert response.headers["location"] == "/api-docs/?version=labs"
    cleared = response.headers["set-cookie"].lower()
    assert cleared.startswith('plumbline_session=""')
    assert "max-age=0" in cleared
    after = httpx.get(f"{system.url}/api-docs/", cookies=response.cookies)
    assert LOGIN_FORM in after.text


def test_openapi_document_lists_the_routes(system: System) -> None:
    for version in ("v1", "latest"):
        url = f"{system.url}/rest/{version}/api-docs"
        assert httpx.get(url).status_code == 401
        response = httpx.get(url, auth=("admin", system.admin_password))
        assert response.status_code == 200
        document = response.json()
        assert document["openapi"].startswith("3.")
        paths = document["paths"]
        for path in ("users/current", "projects", "usergroups/{id}", "activities"):
            assert f"/rest/{version}/{path}" in paths
        assert not any(p.startswith("/api-docs") for p in paths)
        assert "version" not in str(paths[f"/rest/{version}/users"]["get"].get("parameters", []))
    cookies = _login(system)
    assert httpx.get(f"{system.url}/rest/v1/api-docs", cookies=cookies).status_code == 200


def test_the_session_cookie_never_sends_a_body_without_a_content_type(system: System) -> None:
    """Basic and Bearer callers may send a JSON body with no Content-Type; the page's cookie
    session may not: another site's page can send such a body with the browser's cookie."""
    cookies = _login(system)
    name = unique("Untyped ")
    response = httpx.post(
        f"{system.url}/rest/v1/usergroups",
        content=b'{"name": "%s"}' % name.encode(),
        cookies=cookies,
    )
    assert "content-type" not in response.request.headers
    assert response.status_code == 400, response.text
    assert response.json()["meta"]["message"] == (
        "Request bodies must be JSON with Content-Type: application/json (got none)."
    )
    typed = httpx.post(
        f"{system.url}/rest/v1/usergroups",
        json={"name": name},
        cookies=cookies,
    )
    assert typed.status_code == 201, typed.text


def _recorder(into: list[str]) -> Callable[[ConsoleMessage], None]:
    return lambda message: into.append(message.text)


def _try_current_user(page: Page) -> None:
    current = page.locator(
        ".opblock-get:has(.opblock-summary-path[data-path='/rest/latest/users/current'])"
    )
    current.wait_for()
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert "/rest/latest/projects" in [p.replace("\u200b", "") for p in paths]
    current.locator(".opblock-summary").click()
    current.locator("button.try-out__btn").click()
    current.locator("button.execute").click()
    status = current.locator(".live-responses-table tr.response .response-col_status").first
    status.wait_for()
    assert status.inner_text().strip() == "200"
    reply = current.locator(".live-responses-table tr.response .microlight").first.inner_text()
    assert '"username"' in reply
    assert '"admin"' in reply
    request_url = current.locator(".request-url pre").inner_text()
    assert request_url.endswith("/rest/latest/users/current")


def _try_list_items(page: Page, project: int) -> None:
    items = page.locator(
        ".opblock-get:has(.opblock-summary-path[data-path='/rest/latest/items'])"
    ).first
    items.locator(".opblock-summary").click()
    items.locator("button.try-out__btn").click()
    row = items.locator("tr[data-param-name='project'][data-param-in='query']")
    classes = row.locator(".parameter__name").get_attribute("class") or ""
    assert "required" in classes.split()
    # Without the project the UI refuses to send the request.
    items.locator("button.execute").click()
    assert row.locator("input.invalid").count() == 1
    assert items.locator(".live-responses-table").count() == 0
    row.locator("input").fill(str(project))
    items.locator("button.execute").click()
    status = items.locator(".live-responses-table tr.response .response-col_status").first
    status.wait_for()
    assert status.inner_text().strip() == "200"
    request_url = items.locator(".request-url pre").inner_text()
    assert f"project={project}" in request_url, request_url
    assert "maxResults=20" in request_url, request_url
    assert "startAt=0" in request_url, request_url
    reply = items.locator(".live-responses-table tr.response .microlight").first.inner_text()
    assert '"pageInfo"' in reply, reply
    assert '"totalResults": 0' in reply, reply


def test_browser_logs_in_and_tries_an_operation(system: System) -> None:
    latest = f"{system.url}/rest/latest"
    with httpx.Client(base_url=latest, auth=("admin", system.admin_password)) as api:
        project = new_project(api, unique("UI").upper())
    origin = f"http://{DOCS_HOST}:{urlparse(system.url).port}"
    requested: list[str] = []
    failed: list[str] = []
    console: list[str] = []
    with chromium([f"--host-resolver-rules=MAP {DOCS_HOST} 127.0.0.1"]) as browser:
        page = browser.new_page()
        page.set_default_timeout(10_000)
        page.on("request", lambda r: requested.append(r.url))
        page.on("requestfailed", lambda r: failed.append(f"{r.url} {r.failure}"))
        page.on("console", _recorder(console))

        page.goto(f"{origin}/api-docs/")
        page.fill("input[name=username]", "admin")
        page.fill("input[name=password]", system.admin_password)
        page.click("button[type=submit]")
        page.wait_for_url("**/api-docs/?version=latest")

        # The operations of /rest/latest are listed, with their parameters; "Try it
        # out" sends the request with the session cookie and shows the reply.
        _try_current_user(page)

        # GET /items asks for its required project, sends it and lists the items.
        _try_list_items(page, project)

        # Another version is chosen through the page's URL.
        page.click("nav >> text=v1")
        page.wait_for_url("**/api-docs/?version=v1")
        page.locator(".opblock-summary-path[data-path='/rest/v1/usergroups/{id}']").first.wait_for()

    hosts = {urlparse(url).hostname for url in requested}
    assert hosts == {DOCS_HOST}, [u for u in requested if not u.startswith(origin)]
    assert not failed, failed
    assert not [m for m in console if "Content Security Policy" in m], console
