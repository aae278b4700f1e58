"""startAt and maxResults, as a route declares and reads them (``deps.Paging``)."""

from __future__ import annotations

import pytest
from fastapi import FastAPI

from plumbline.gateway.deps import Paging
from plumbline.gateway.paging import MAX_RESULTS, MAX_START
from tests.unit.gateway.apps import app_with, get


def _app() -> FastAPI:
    app = app_with()

    @app.get("/page")
    async def page(page: Paging) -> dict[str, int]:
        return {"startAt": page.start_at, "maxResults": page.max_results}

    return app


APP = _app()


async def test_defaults() -> None:
    assert await get(APP, "/page") == (200, {"startAt": 0, "maxResults": 20})


async def test_the_limits_are_accepted() -> None:
    query = f"startAt={MAX_START}&maxResults={MAX_RESULTS}"
    assert await get(APP, f"/page?{query}") == (
        200,
        {"startAt": MAX_START, "maxResults": MAX_RESULTS},
    )


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("maxResults=0", "maxResults must be between 1 and 50, got 0"),
        ("maxResults=80", "maxResults must be between 1 and 50, got 80"),
        ("startAt=-1", f"startAt must be between 0 and {MAX_START}, got -1"),
        ("startAt=99999999999999999999", f"startAt must be between 0 and {MAX_START}, got"),
        ("maxResults=abc", "maxResults must be an integer, got 'abc'"),
        ("startAt=1.5", "startAt must be an integer, got '1.5'"),
        ("maxResults=", "maxResults must be an integer, got ''"),
        ("startAt=1&startAt=2", "startAt may be given once, got 2 values"),
    ],
)
async def test_bad_values_are_refused_with_words_that_name_them(query: str, message: str) -> None:
    status, body = await get(APP, f"/page?{query}")
    assert status == 400
    assert body["meta"]["message"].startswith(message)


async def test_the_caller_is_authenticated_first() -> None:
    status, _ = await get(APP, "/page?maxResults=80", authenticated=False)
    assert status == 401


def test_the_description_shows_the_ranges_and_defaults() -> None:
    operation = APP.openapi()["paths"]["/page"]["get"]
    parameters = {p["name"]: p for p in operation["parameters"]}
    assert parameters["startAt"]["schema"]["minimum"] == 0
    assert parameters["maxResults"]["schema"]["maximum"] == MAX_RESULTS
    assert not parameters["maxResults"]["required"]
