"""The interactive documentation at ``/api-docs/``: a login page, then Swagger UI.

Swagger UI's files come from the ``swagger-ui-bundle`` package (``swagger_ui_path``), never
from a CDN; the page's own markup, style and start-up script are in ``docs_templates``.
Logging in exchanges a user name and password (``IssueUserToken``) for an access token
kept in an HttpOnly, SameSite=Strict cookie; the page then reads
``/rest/{version}/api-docs`` and sends its "try it out" requests with that cookie. The
pages carry a Content-Security-Policy that allows scripts, styles and requests from this
server only.

Links in the pages start with the path of the configured public URL, so the UI also works
behind a proxy that serves Plumbline under a context path.
"""

from __future__ import annotations

import html
import logging
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any
from urllib.parse import parse_qs, urlsplit

import swagger_ui_bundle
from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from plumbline.api.identity.v1 import identity_pb2
from plumbline.common.errors import PlumblineError, Throttled
from plumbline.gateway.auth import SESSION_COOKIE, client_address
from plumbline.gateway.deps import VERSIONS

log = logging.getLogger(__name__)

DEFAULT_VERSION = "latest"
MAX_LOGIN_BODY = 16 * 1024

SWAGGER_UI = Path(swagger_ui_bundle.swagger_ui_path)
_SWAGGER_FILES = (
    "swagger-ui.css",
    "swagger-ui-bundle.js",
    "swagger-ui-standalone-preset.js",
    "favicon-32x32.png",
    "favicon-16x16.png",
)
_TEMPLATES = resources.files("plumbline.gateway.docs_templates")
_OWN_FILES = ("docs.css", "docs.js")

_MEDIA_TYPES = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".png": "image/png",
}


def _template(name: str) -> Template:
    return Template(_TEMPLATES.joinpath(name).read_text("utf-8"))


_LOGIN = _template("login.html")
_PAGE = _template("page.html")
_MESSAGE = _template("message.html")
# Only these names are ever served: nothing a request names can reach another file.
_SWAGGER_ASSETS = {name: SWAGGER_UI / name for name in _SWAGGER_FILES}
_OWN_ASSETS = {name: _TEMPLATES.joinpath(name).read_bytes() for name in _OWN_FILES}
ASSETS = frozenset(_SWAGGER_ASSETS) | frozenset(_OWN_ASSETS)

_ASSET_HEADERS = {"Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"}


def _gateway(request: Request) -> Any:
    """The gateway, or None while the upstreams are still being connected."""
    return getattr(request.app.state, "gateway", None)


def _public_url(request: Request) -> str | None:
    gw = _gateway(request)
    return gw.settings.public_url if gw is not None else None


def _prefix(request: Request) -> str:
    """The context path in front of ``/api-docs`` (from the configured public URL)."""
    public_url = _public_url(request)
    return urlsplit(public_url).path.rstrip("/") if public_url else ""


def _page_headers(request: Request) -> dict[str, str]:
    connect = "'self'"
    public_url = _public_url(request)
    if public_url:
        parts = urlsplit(public_url)
        if parts.scheme in ("http", "https") and parts.netloc:
            connect += f" {parts.scheme}://{parts.netloc}"
    policy = (
        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        f"img-src 'self' data:; font-src 'self' data:; connect-src {connect}; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    )
    return {
        "Content-Security-Policy": policy,
        "Cache-Control": "no-store",
        "Referrer-Policy": "same-origin",
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
    }


def _html(request: Request, template: Template, status: int, **values: str) -> HTMLResponse:
    """A page; every value is HTML-escaped except the ones ending in ``_html``."""
    escaped = {
        key.removesuffix("_html"): value if key.endswith("_html") else html.escape(value)
        for key, value in values.items()
    }
    body = template.substitute(prefix=html.escape(_prefix(request)), **escaped)
    return HTMLResponse(body, status_code=status, headers=_page_headers(request))


def _version_links(request: Request, current: str | None) -> str:
    prefix = html.escape(_prefix(request))
    marked = ' aria-current="page"'
    return " ".join(
        f'<a href="{prefix}/api-docs/?version={v}"{marked if v == current else ""}>{v}</a>'
        for v in VERSIONS
    )


def _login_page(
    request: Request, version: str, message: str | None, status: int, username: str = ""
) -> HTMLResponse:
    error = f'<p class="error" role="alert">{html.escape(message)}</p>' if message else ""
    return _html(request, _LOGIN, status, version=version, username=username, error_html=error)


def _message_page(request: Request, message: str, status: int) -> HTMLResponse:
    links = "API versions: " + _version_links(request, None)
    return _html(request, _MESSAGE, status, message=message, links_html=links)


async def _session_user(request: Request) -> str | None:
    """The user name of a valid session cookie, else None."""
    token = request.cookies.get(SESSION_COOKIE)
    gw = _gateway(request)
    if not token or gw is None:
        return None
    try:
        principal = await gw.auth.bearer(token)
    except PlumblineError:
        return None
    return str(principal.username)


async def _read_form(request: Request) -> dict[str, str] | None:
    """The fields of a url-encoded form body, or None when the body is too large."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_LOGIN_BODY:
            return None
    return _form(body)


def _form(body: bytes) -> dict[str, str]:
    try:
        fields = parse_qs(
            body.decode("utf-8", "replace"), keep_blank_values=True, max_num_fields=20
        )
    except ValueError:
        return {}
    return {key: values[-1] for key, values in fields.items()}


def _form_version(form: dict[str, str]) -> str:
    version = form.get("version", DEFAULT_VERSION)
    return version if version in VERSIONS else DEFAULT_VERSION


def install(app: FastAPI) -> None:
    """Adds the documentation routes (not part of the OpenAPI description)."""
    app.get("/api-docs/", include_in_schema=False)(_page)
    app.get("/api-docs", include_in_schema=False)(_page)
    app.post("/api-docs/login", include_in_schema=False)(_login)
    app.post("/api-docs/logout", include_in_schema=False)(_logout)
    app.get("/api-docs/assets/{name}", include_in_schema=False)(_asset)


async def _page(request: Request) -> Response:
    version = request.query_params.get("version", DEFAULT_VERSION)
    if version not in VERSIONS:
        allowed = ", ".join(VERSIONS)
        return _message_page(
            request, f"There is no API version {version!r}; use one of {allowed}.", 404
        )
    if _gateway(request) is None:
        return _message_page(request, "The service is starting; try again shortly.", 503)
    username = await _session_user(request)
    if username is None:
        return _login_page(request, version, None, 200)
    return _html(
        request,
        _PAGE,
        200,
        version=version,
        username=username,
        spec=f"{_prefix(request)}/rest/{version}/api-docs",
        links_html=_version_links(request, version),
    )


async def _login(request: Request) -> Response:
    form = await _read_form(request)
    if form is None:
        return _login_page(request, DEFAULT_VERSION, "The form is too large.", 413)
    version = _form_version(form)
    username, password = form.get("username", ""), form.get("password", "")
    if not username or not password:
        return _login_page(request, version, "Enter a user name and a password.", 400)
    gw = _gateway(request)
    if gw is None:
        return _login_page(request, version, "The service is starting; try again.", 503)
    credentials = identity_pb2.BasicCredentials(username=username, password=password)
    try:
        reply = await gw.auth.logins.attempt(
            username,
            client_address(request),
            lambda: gw.upstreams.identity.auth.IssueUserToken(credentials),
        )
    except PlumblineError as exc:
        if exc.http_status >= 500:
            log.warning("docs login failed: %s", exc)
            message, status = "Logging in is not possible right now; try again later.", 503
        else:
            message = exc.message
            status = 429 if exc.http_status == 429 else 401
        page = _login_page(request, version, message, status, username)
        if isinstance(exc, Throttled):
            page.headers["Retry-After"] = str(exc.retry_after)
        return page
    except Exception:
        log.exception("docs login failed")
        message = "Logging in is not possible right now; try again later."
        return _login_page(request, version, message, 503, username)
    response = RedirectResponse(f"{_prefix(request)}/api-docs/?version={version}", status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        reply.access_token,
        max_age=reply.expires_in,
        httponly=True,
        samesite="strict",
        path="/",
        secure=_secure(request),
    )
    response.headers["Cache-Control"] = "no-store"
    return response


async def _logout(request: Request) -> Response:
    version = _form_version(await _read_form(request) or {})
    response = RedirectResponse(f"{_prefix(request)}/api-docs/?version={version}", status_code=303)
    response.delete_cookie(
        SESSION_COOKIE, path="/", httponly=True, samesite="strict", secure=_secure(request)
    )
    return response


def _secure(request: Request) -> bool:
    """Whether the session cookie is sent only over HTTPS: when the request came over it
    (directly or through a trusted proxy) or the public address is an https one."""
    public_url = _gateway(request).settings.public_url or ""
    return request.url.scheme == "https" or public_url.startswith("https:")


async def _asset(name: str) -> Response:
    media_type = _MEDIA_TYPES.get(Path(name).suffix, "application/octet-stream")
    if name in _OWN_ASSETS:
        return Response(_OWN_ASSETS[name], media_type=media_type, headers=_ASSET_HEADERS)
    path = _SWAGGER_ASSETS.get(name)
    if path is None:
        return Response("Not found", status_code=404, media_type="text/plain")
    return FileResponse(path, media_type=media_type, headers=_ASSET_HEADERS)
