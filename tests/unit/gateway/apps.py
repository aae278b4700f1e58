"""A bare FastAPI app with the gateway's error handlers and a stand-in authenticator."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import httpx
from fastapi import FastAPI
from starlette.requests import Request

from plumbline.common.context import Principal
from plumbline.common.errors import Unauthenticated
from plumbline.gateway import errors


class Authenticator:
    """Any Authorization header is the user ``test``; none is a 401."""

    async def authenticate(self, request: Request) -> Principal:
        if "authorization" not in request.headers:
            raise Unauthenticated("Authentication is required.")
        return Principal(1, "test")


def app_with() -> FastAPI:
    """An app whose routes may use the gateway's request dependencies."""
    app = FastAPI()
    errors.install(app)
    app.state.gateway = SimpleNamespace(auth=Authenticator())
    return app


async def get(app: FastAPI, url: str, authenticated: bool = True) -> tuple[int, Any]:
    """Status and JSON body of a GET."""
    headers = {"Authorization": "Basic dGVzdDp0ZXN0"} if authenticated else {}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        response = await client.get(url, headers=headers)
    return response.status_code, response.json()
