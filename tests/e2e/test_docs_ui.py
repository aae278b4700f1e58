"""The documentation page: login first, Swagger UI from local assets, in a real browser."""

from __future__ import annotations

import os
import re
import shutil
from urllib.parse import urlparse

import httpx
import pytest

from tests.e2e.harness import System

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def _login(system: System) -> httpx.Cookies:
    response = httpx.post(
        f"{system.url}/api-docs/login",
        data={"username": "admin", "password": system.admin_password, "version": "v1"},
    )
    assert response.status_code == 303
    assert response.headers["location"] == "/api-docs/?version=v1"
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    return response.cookies


def test_login_page_first(system: System) -> None:
    for path in ("/api-docs/", "/api-docs"):
        response = httpx.get(f"{system.url}{path}")
        assert response.status_code == 200
        assert '<form method="post" action="/api-docs/login">' in response.text
        assert "swagger-ui-bundle.js" not in response.text


def test_wrong_password_shows_the_login_again(system: System) -> None:
    response = httpx.post(
        f"{system.url}/api-docs/login", data={"username": "admin", "password": "<b>nope</b>"}
    )
    assert response.status_code == 401
    assert "not correct" in response.text
    assert "<b>nope</b>" not in response.text
    assert "set-cookie" not in response.headers


def test_logged_in_page_uses_only_local_assets(system: System) -> None:
    cookies = _login(system)
    page = httpx.get(f"{system.url}/api-docs/?version=v1", cookies=cookies)
    assert page.status_code == 200
    assert "/rest/v1/api-docs" in page.text
    sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert sources and all(s.startswith("/") for s in sources), sources
    for asset, kind in (("swagger-ui-bundle.js", "javascript"), ("swagger-ui.css", "text/css")):
        response = httpx.get(f"{system.url}/api-docs/assets/{asset}")
        assert response.status_code == 200
        assert kind in response.headers["content-type"]
    for bad in ("../../../etc/passwd", "..%2F..%2Fsetup.py", "index.j2"):
        assert httpx.get(f"{system.url}/api-docs/assets/{bad}").status_code == 404
    assert httpx.get(f"{system.url}/api-docs/?version=v7", cookies=cookies).status_code == 404


def test_openapi_document_lists_the_routes(system: System) -> None:
    for version in ("v1", "latest"):
        url = f"{system.url}/rest/{version}/api-docs"
        assert httpx.get(url).status_code == 401
        document = httpx.get(url, auth=("admin", system.admin_password)).json()
        assert document["openapi"].startswith("3.")
        paths = document["paths"]
        for path in ("users/current", "projects", "usergroups/{id}", "activities"):
            assert f"/rest/{version}/{path}" in paths
        assert not any(p.startswith("/api-docs") for p in paths)
        assert "version" not in str(paths[f"/rest/{version}/users"]["get"].get("parameters", []))


def test_browser_logs_in_and_sees_the_operations(system: System) -> None:
    if not os.path.exists(CHROMIUM):
        message = f"Chromium not found at {CHROMIUM} (make test installs it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    hosts: set[str] = set()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        try:
            page = browser.new_page()
            page.on("request", lambda r: hosts.add(urlparse(r.url).hostname or ""))
            page.goto(f"{system.url}/api-docs/")
            page.fill("input[name=username]", "admin")
            page.fill("input[name=password]", system.admin_password)
            page.click("button[type=submit]")
            page.wait_for_selector(".opblock-summary-path", timeout=15_000)
            paths = page.locator(".opblock-summary-path").all_inner_texts()
            assert any("/users/current" in p for p in paths)
            page.click("text=v1")
            page.wait_for_selector(".opblock-summary-path", timeout=15_000)
            assert "version=v1" in page.url
        finally:
            browser.close()
    assert hosts <= {"127.0.0.1", "localhost", ""}, hosts
