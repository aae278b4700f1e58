"""The interactive documentation at ``/api-docs/``: a login page, then Swagger UI.

Swagger UI's files come from the ``swagger-ui-bundle`` package, never from a CDN. Logging
in exchanges a user name and password for an access token kept in an HttpOnly,
SameSite=Strict cookie; the page then reads ``/rest/{version}/api-docs`` and sends its
"try it out" requests with that cookie.
"""

from __future__ import annotations

import html
import mimetypes
from pathlib import Path
from urllib.parse import parse_qs, quote

import swagger_ui_bundle
from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from plumbline.common.errors import PlumblineError
from plumbline.gateway.auth import SESSION_COOKIE
from plumbline.gateway.deps import VERSIONS
from plumbline.identity.v1 import identity_pb2

ASSETS = Path(swagger_ui_bundle.swagger_ui_path)
SERVED_ASSETS = frozenset(
    {
        "swagger-ui.css",
        "swagger-ui-bundle.js",
        "swagger-ui-standalone-preset.js",
        "favicon-32x32.png",
        "favicon-16x16.png",
    }
)
DEFAULT_VERSION = "latest"

_LOGIN = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Plumbline API documentation: log in</title>
<style>
body {{ font-family: sans-serif; display: flex; justify-content: center; margin-top: 10vh; }}
form {{ display: grid; gap: .6em; min-width: 18em; }}
.error {{ color: #b00020; }}
</style></head>
<body><main>
<h1>Plumbline API</h1>
<p>Log in to read the API documentation.</p>
{error}
<form method="post" action="/api-docs/login">
<input type="hidden" name="version" value="{version}">
<label>User name <input name="username" autocomplete="username" required></label>
<label>Password
<input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Log in</button>
</form>
</main></body></html>
"""

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Plumbline API documentation ({version})</title>
<link rel="stylesheet" href="/api-docs/assets/swagger-ui.css">
<link rel="icon" href="/api-docs/assets/favicon-32x32.png">
<style>
nav {{ font-family: sans-serif; padding: .5em 1em; display: flex; gap: 1em; align-items: center; }}
nav form {{ margin-left: auto; }}
</style></head>
<body>
<nav>API version: {links}
<form method="post" action="/api-docs/logout"><button type="submit">Log out</button></form></nav>
<div id="swagger-ui"></div>
<script src="/api-docs/assets/swagger-ui-bundle.js"></script>
<script src="/api-docs/assets/swagger-ui-standalone-preset.js"></script>
<script>
window.ui = SwaggerUIBundle({{
  url: "/rest/{version}/api-docs",
  dom_id: "#swagger-ui",
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: "StandaloneLayout",
  requestInterceptor: (request) => {{ request.credentials = "same-origin"; return request; }},
}});
</script>
</body></html>
"""


def _version(request: Request) -> str | None:
    value = request.query_params.get("version", DEFAULT_VERSION)
    return value if value in VERSIONS else None


def _login_page(version: str, message: str | None, status: int) -> HTMLResponse:
    error = f'<p class="error" role="alert">{html.escape(message)}</p>' if message else ""
    return HTMLResponse(
        _LOGIN.format(error=error, version=html.escape(version)), status_code=status
    )


async def _logged_in(request: Request) -> bool:
    token = request.cookies.get(SESSION_COOKIE)
    if not token:
        return False
    try:
        await request.app.state.gateway.auth.bearer(token)
    except PlumblineError:
        return False
    return True


def install(app: FastAPI) -> None:
    """Adds the documentation routes (not part of the OpenAPI description)."""

    @app.get("/api-docs", include_in_schema=False)
    @app.get("/api-docs/", include_in_schema=False)
    async def page(request: Request) -> Response:
        version = _version(request)
        if version is None:
            allowed = ", ".join(VERSIONS)
            return HTMLResponse(f"<p>Unknown API version; use one of {allowed}.</p>", 404)
        if not await _logged_in(request):
            return _login_page(version, None, 200)
        current = ' aria-current="page"'
        links = " ".join(
            f'<a href="/api-docs/?version={v}"{current if v == version else ""}>{v}</a>'
            for v in VERSIONS
        )
        return HTMLResponse(_PAGE.format(version=version, links=links))

    @app.post("/api-docs/login", include_in_schema=False)
    async def login(request: Request) -> Response:
        form = {
            k: v[-1] for k, v in parse_qs((await request.body()).decode("utf-8", "replace")).items()
        }
        version = form.get("version", DEFAULT_VERSION)
        if version not in VERSIONS:
            version = DEFAULT_VERSION
        username, password = form.get("username", ""), form.get("password", "")
        if not username or not password:
            return _login_page(version, "Enter a user name and a password.", 400)
        try:
            reply = await request.app.state.gateway.upstreams.identity.IssueUserToken(
                identity_pb2.BasicCredentials(username=username, password=password)
            )
        except PlumblineError as exc:
            status = 401 if exc.http_status == 401 else exc.http_status
            return _login_page(version, exc.message, status)
        response = RedirectResponse(f"/api-docs/?version={quote(version)}", status_code=303)
        response.set_cookie(
            SESSION_COOKIE,
            reply.access_token,
            max_age=reply.expires_in,
            httponly=True,
            samesite="strict",
            path="/",
            secure=request.url.scheme == "https",
        )
        return response

    @app.post("/api-docs/logout", include_in_schema=False)
    async def logout() -> Response:
        response = RedirectResponse("/api-docs/", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path="/")
        return response

    @app.get("/api-docs/assets/{name}", include_in_schema=False)
    async def asset(name: str) -> Response:
        if name not in SERVED_ASSETS:
            return Response(status_code=404)
        media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
        return FileResponse(ASSETS / name, media_type=media_type)
