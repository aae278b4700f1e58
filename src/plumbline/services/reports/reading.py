"""A report's data, read through the REST API as whoever asked for the report: what they
may read is exactly what the report holds, and every rule of the API (access, scopes,
errors) applies once, there. Lists are read a page at a time, so a report never holds a
whole project in memory."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from datetime import datetime
from typing import Any

import httpx

from plumbline.common.dates import utcnow
from plumbline.common.tokens import UserTokens

#: Records a page: the API's most for lists; traces and coverage take larger pages.
PAGE = 50
LARGE_PAGES = {"labs/trace": 500, "labs/coverage": 1_000}


class ReportFailed(Exception):
    """A report cannot be made; the message says why, in words for whoever asked, and
    ``status`` is the API's answer that said so (400 when the making found it)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class Reader:
    """GETs of the REST API as one user, with the moment of the first and last read."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        base_url: Callable[[], str | None],
        tokens: UserTokens,
        user: int,
    ) -> None:
        self.http = http
        self.base_url = base_url
        self.tokens = tokens
        self.user = user
        self.first_read: datetime | None = None
        self.last_read: datetime | None = None
        #: The moment the data was read at, where the API answered one (``meta.asOf``).
        self.as_of: str | None = None

    def _url(self, path: str) -> str:
        base = self.base_url()
        if base is None:
            raise ReportFailed(
                "The reports service does not know the REST API's address "
                "(PLUMBLINE_GATEWAY_URL is not set)."
            )
        return f"{base.rstrip('/')}/rest/{path}"

    async def get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        """The body of ``GET /rest/<path>`` (``path`` starts with the version); a refusal
        is ReportFailed with the API's message."""
        url = self._url(path)
        self.first_read = self.first_read or utcnow()
        try:
            response = await self.tokens.get(self.http, self.user, url, params)
        except httpx.HTTPError as exc:
            raise ConnectionError(f"reading {path}: {type(exc).__name__}") from None
        self.last_read = utcnow()
        if response.status_code == 200:
            body = response.json()
            meta = body.get("meta") if isinstance(body, dict) else None
            if isinstance(meta, dict) and isinstance(meta.get("asOf"), str):
                self.as_of = meta["asOf"]
            return body
        if 400 <= response.status_code < 500:
            raise ReportFailed(_message(response), response.status_code)
        raise ConnectionError(f"reading {path}: the API answered {response.status_code}")

    async def send_file(
        self,
        path: str,
        params: Mapping[str, Any],
        parts: Callable[[], dict[str, Any]],
        timeout: float,
    ) -> httpx.Response:
        """``POST /rest/<path>`` as the user with the multipart form ``parts()`` makes
        (made again for a second try with a new token); the answer as it is."""
        url = self._url(path)
        self.first_read = self.first_read or utcnow()
        for fresh in (False, True):
            token = await self.tokens.of(self.user, fresh)
            try:
                response = await self.http.post(
                    url,
                    params=params,
                    files=parts(),
                    headers={"Authorization": f"Bearer {token}"},
                    timeout=timeout,
                )
            except httpx.HTTPError as exc:
                raise ConnectionError(f"sending to {path}: {type(exc).__name__}") from None
            if response.status_code != 401:
                break
        self.last_read = utcnow()
        return response

    async def stream(self, path: str) -> AsyncIterator[bytes]:
        """The body of ``GET /rest/<path>`` as it arrives (a file); a refusal is
        ReportFailed with the API's message."""
        url = self._url(path)
        self.first_read = self.first_read or utcnow()
        for fresh in (False, True):
            token = await self.tokens.of(self.user, fresh)
            try:
                async with self.http.stream(
                    "GET", url, headers={"Authorization": f"Bearer {token}"}
                ) as response:
                    if response.status_code == 401 and not fresh:
                        continue
                    if response.status_code != 200:
                        await response.aread()
                        if 400 <= response.status_code < 500:
                            raise ReportFailed(_message(response), response.status_code)
                        raise ConnectionError(
                            f"reading {path}: the API answered {response.status_code}"
                        )
                    async for chunk in response.aiter_bytes():
                        yield chunk
            except httpx.HTTPError as exc:
                raise ConnectionError(f"reading {path}: {type(exc).__name__}") from None
            self.last_read = utcnow()
            return

    async def pages(
        self, path: str, params: Mapping[str, Any] | None = None
    ) -> AsyncIterator[tuple[Any, int]]:
        """Every page of a list: (the body, the total), page after page."""
        start, size = 0, LARGE_PAGES.get(path, PAGE)
        while True:
            body = await self.get(path, {**(params or {}), "startAt": start, "maxResults": size})
            info = body["meta"]["pageInfo"]
            yield body, int(info["totalResults"])
            start += int(info["resultCount"])
            if int(info["resultCount"]) == 0 or start >= int(info["totalResults"]):
                return


def _message(response: httpx.Response) -> str:
    try:
        return str(response.json()["meta"]["message"])
    except (ValueError, KeyError, TypeError):
        return f"The API answered {response.status_code}."
