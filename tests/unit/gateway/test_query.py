"""Query parameters declared as dependencies (``gateway/query.py``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, FastAPI
from starlette.requests import Request

from plumbline.gateway import query
from tests.unit.gateway.apps import app_with, get


def _colour(request: Request) -> str:
    return next((v for k, v in request.query_params.multi_items() if k.lower() == "colour"), "")


Project = query.RequiredProject
Kinds = Annotated[list[str], Depends(query.strings("kind", description="Kinds.", enum=("a", "b")))]
Flag = Annotated[bool, Depends(query.boolean("flag", description="A flag."))]
Colour = Annotated[
    str,
    Depends(query.from_request("colour", {"type": "string"}, _colour, description="Any case.")),
]


def _app() -> FastAPI:
    app = app_with()

    @app.get("/things")
    async def things(project: Project, kinds: Kinds, flag: Flag, colour: Colour) -> dict[str, Any]:
        return {"project": project, "kinds": kinds, "flag": flag, "colour": colour}

    return app


APP = _app()


async def test_values_are_parsed() -> None:
    status, body = await get(APP, "/things?project=7&kind=a&kind=b&flag=TRUE&COLOUR=red")
    assert (status, body) == (
        200,
        {"project": 7, "kinds": ["a", "b"], "flag": True, "colour": "red"},
    )


async def test_a_missing_required_parameter_keeps_the_words_of_params() -> None:
    status, body = await get(APP, "/things")
    assert (status, body["meta"]["message"]) == (400, "the query parameter project is required")


async def test_bad_values_are_params_errors() -> None:
    status, body = await get(APP, "/things?project=7&flag=perhaps")
    assert (status, body["meta"]["message"]) == (400, "flag must be true or false, got 'perhaps'")


async def test_nothing_is_read_before_the_caller_is_authenticated() -> None:
    for url in ("/things", "/things?project=x"):
        assert (await get(APP, url, authenticated=False))[0] == 401


def test_the_declaration_is_the_description() -> None:
    operation = APP.openapi()["paths"]["/things"]["get"]
    parameters = {p["name"]: p for p in operation["parameters"]}
    assert list(parameters) == ["project", "kind", "flag", "colour"]
    assert parameters["project"]["required"] is True
    assert parameters["project"]["schema"]["type"] == "integer"
    assert parameters["kind"]["schema"]["items"]["enum"] == ["a", "b"]
    assert parameters["kind"]["required"] is False
    assert parameters["flag"]["schema"]["type"] == "boolean"
    assert parameters["colour"]["description"] == "Any case."
    assert "422" in operation["responses"]  # openapi.py removes it from the served document
