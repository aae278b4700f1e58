"""The OpenAPI documents, built from the gateway's routes without servers
(``gateway/openapi.py``); tests/e2e/system/test_openapi.py checks them as served."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi import FastAPI

from plumbline.gateway import openapi
from plumbline.gateway.deps import VERSIONS
from plumbline.gateway.module import install_routes

METHODS = ("get", "put", "post", "delete", "patch")
READABLE = re.compile(r"^[a-z][A-Za-z0-9]+$")


@pytest.fixture(scope="module")
def documents() -> dict[str, dict[str, Any]]:
    app = FastAPI()
    install_routes(app)
    return {version: openapi.describe(app, version, "/") for version in VERSIONS}


def _operations(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (method, path): operation
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    }


def test_every_operation_has_a_readable_unique_operation_id(
    documents: dict[str, dict[str, Any]],
) -> None:
    for version, document in documents.items():
        operations = _operations(document)
        ids: list[str] = [operation.get("operationId", "") for operation in operations.values()]
        unreadable = [i for i in ids if not READABLE.match(i)]
        assert not unreadable, (version, unreadable)
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        assert not repeated, (version, repeated)


def test_operation_ids_follow_the_method_and_path(documents: dict[str, dict[str, Any]]) -> None:
    ids = {key: op["operationId"] for key, op in _operations(documents["v1"]).items()}
    assert ids[("get", "/rest")] == "getRest"
    assert ids[("get", "/rest/v1")] == "getRestByVersion"
    assert ids[("post", "/rest/oauth/token")] == "postOauthToken"
    assert ids[("get", "/rest/v1/items")] == "getItems"
    assert ids[("get", "/rest/v1/items/{id}")] == "getItemsById"
    assert ids[("get", "/rest/v1/items/{id}/versions")] == "getItemsVersions"
    assert (
        ids[("get", "/rest/v1/items/{id}/versions/{versionNum}")] == "getItemsVersionsByVersionNum"
    )
    # The same route in every version's document has the same id.
    for version in ("latest", "labs"):
        mine = {
            (method, path.replace(f"/rest/{version}", "/rest/v1", 1)): op["operationId"]
            for (method, path), op in _operations(documents[version]).items()
        }
        assert {key: mine[key] for key in ids} == ids


DATE_HEADER = "x-service-date-fields-with-time"
#: Every operation whose records show their DATE fields as the date header asks (the
#: routes that read records through deps.dates_with_time and answer them).
HONOURS_DATE_HEADER = {
    "/items",
    "/items/{id}",
    "/items/{id}/children",
    "/items/{id}/parent",
    "/items/{id}/synceditems",
    "/items/{id}/upstreamrelated",
    "/items/{id}/downstreamrelated",
    "/items/{id}/attachments",
    "/activities/{activityId}/affecteditems",
    "/tags/{id}/items",
    "/filters/{id}/results",
    "/abstractitems",
    "/abstractitems/{id}",
    "/testplans",
    "/testplans/{id}",
    "/testplans/{id}/upstreamrelated",
    "/testplans/{id}/downstreamrelated",
    "/testplans/{id}/attachments",
    "/testplans/{id}/testcycles",
    "/testplans/{id}/testgroups/{testGroupId}/testcases",
    "/testplans/{id}/testgroups/{testGroupId}/testcases/{testCaseId}",
    "/testcycles/{testCycleId}",
    "/testcycles/{testCycleId}/testruns",
    "/testruns",
    "/testruns/{id}",
    "/testruns/{id}/upstreamrelated",
    "/testruns/{id}/downstreamrelated",
    "/testruns/{id}/attachments",
    "/attachments/{attachmentId}",
}
#: The same, of the labs operations (under /rest/labs only).
LABS_HONOUR_DATE_HEADER = {"/records"}


def test_routes_that_honour_the_date_header_declare_it(
    documents: dict[str, dict[str, Any]],
) -> None:
    for version, document in documents.items():
        prefix = f"/rest/{version}"
        declaring = {
            (method, path.removeprefix(prefix)): [
                p for p in operation.get("parameters", []) if p["name"] == DATE_HEADER
            ]
            for (method, path), operation in _operations(document).items()
        }
        honouring = HONOURS_DATE_HEADER | (LABS_HONOUR_DATE_HEADER if version == "labs" else set())
        assert {key for key, found in declaring.items() if found} == {
            ("get", path) for path in honouring
        }, version
        for path in honouring:
            [header] = declaring[("get", path)]
            assert header["in"] == "header"
            assert header["required"] is False
            assert header["schema"] == {"type": "boolean", "default": False}
            assert "x-jama-date-fields-with-time" in header["description"]
    # Records as they were keep their dates: history routes do not declare the header.
    v1 = _operations(documents["v1"])
    versioned = v1[("get", "/rest/v1/items/{id}/versions/{versionNum}/versioneditem")]
    assert DATE_HEADER not in [p["name"] for p in versioned.get("parameters", [])]
