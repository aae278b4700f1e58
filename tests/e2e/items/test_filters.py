"""Stored filters: results, counts, favourites, and the query rules."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.api import (
    MakeUser,
    assert_error,
    grant,
    item_types,
    new_project,
    project_key,
    unique,
)


@pytest.fixture
def data(admin: httpx.Client) -> dict[str, Any]:
    key = project_key("FL")
    project = new_project(admin, key)
    types = item_types(admin)
    req = types["REQ"]
    priority = next(f for f in req["fields"] if f["name"] == "priority")
    options = {
        o["name"]: o["id"]
        for o in admin.get(f"/picklists/{priority['pickList']}/options").json()["data"]
    }
    ids = {}
    for name, level in (("Login", "High"), ("Logout", "Low"), ("Export", "High")):
        response = admin.post(
            "/items",
            json={
                "project": project,
                "itemType": req["id"],
                "fields": {"name": name, "priority": options[level]},
            },
        )
        ids[name] = response.json()["meta"]["id"]
    folder = admin.post(
        "/items",
        json={"project": project, "itemType": types["FLD"]["id"], "fields": {"name": "Box"}},
    )
    box = folder.json()["meta"]["id"]
    inner = admin.post(
        "/items",
        json={
            "project": project,
            "itemType": req["id"],
            "location": {"parent": {"item": box}},
            "fields": {"name": "Inside"},
        },
    )
    ids["Inside"] = inner.json()["meta"]["id"]
    ids["Box"] = box
    return {"project": project, "req": req, "options": options, "ids": ids}


def _create(labs: httpx.Client, query: dict[str, Any], **extra: Any) -> int:
    response = labs.post("/filters", json={"name": unique("f"), "filterQuery": query, **extra})
    assert response.status_code == 201, response.text
    return int(response.json()["meta"]["id"])


def _results(admin: httpx.Client, filter_id: int, project: int) -> list[str]:
    body = admin.get(f"/filters/{filter_id}/results", params={"project": project}).json()
    return [i["fields"]["name"] for i in body["data"]]


def test_rules_and_ordering(admin: httpx.Client, labs: httpx.Client, data: dict[str, Any]) -> None:
    p, high = data["project"], str(data["options"]["High"])
    high_reqs = _create(
        labs,
        {
            "rule": {
                "operator": "AND",
                "rules": [
                    {
                        "field": {"name": "itemType"},
                        "operator": "EQUALS",
                        "values": [str(data["req"]["id"])],
                    },
                    {"field": {"name": "priority"}, "operator": "EQUALS", "values": [high]},
                ],
            },
            "orderRules": [{"direction": "DESC", "field": {"name": "name"}}],
        },
    )
    assert _results(admin, high_reqs, p) == ["Login", "Export"]
    count = admin.get(f"/filters/{high_reqs}/count", params={"project": p}).json()
    assert count["data"]["count"] == 2
    word = _create(
        labs, {"rule": {"field": {"name": "name"}, "operator": "CONTAINS", "values": ["log"]}}
    )
    assert _results(admin, word, p) == ["Login", "Logout"]
    under = _create(
        labs,
        {
            "rule": {
                "field": {"name": "location"},
                "operator": "IS_UNDER",
                "values": [str(data["ids"]["Box"])],
            }
        },
    )
    assert _results(admin, under, p) == ["Inside"]
    admin.post(
        "/relationships", json={"fromItem": data["ids"]["Login"], "toItem": data["ids"]["Logout"]}
    )
    related = _create(
        labs,
        {
            "rule": {
                "operator": "IN",
                "values": [],
                "subQuery": {
                    "rule": {"field": {"name": "name"}, "operator": "EQUALS", "values": ["Logout"]}
                },
            }
        },
    )
    assert _results(admin, related, p) == ["Login"]
    page = admin.get(
        f"/filters/{word}/results", params={"project": p, "startAt": 1, "maxResults": 1}
    ).json()
    assert page["meta"]["pageInfo"] == {"startIndex": 1, "resultCount": 1, "totalResults": 2}


def test_scopes_listing_and_favourites(
    admin: httpx.Client, labs: httpx.Client, data: dict[str, Any], make_user: MakeUser
) -> None:
    p = data["project"]
    everything = {"rule": {"field": {"name": "name"}, "operator": "IS_NOT_EMPTY", "values": []}}
    current = _create(labs, everything)
    assert admin.get(f"/filters/{current}/results").status_code == 400
    specified = _create(labs, everything, projectScope="SPECIFIED", specifiedProject=p, public=True)
    assert len(_results(admin, specified, p)) == 5
    listed = admin.get("/filters", params={"project": p, "maxResults": 50}).json()
    assert {current, specified} <= {f["id"] for f in listed["data"]}
    one = admin.get(f"/filters/{specified}", params={"include": "data.author"}).json()
    assert one["data"]["filterQuery"] == everything
    assert one["linked"]["users"]
    other_id, _name, _pw, other = make_user()
    assert other.get(f"/filters/{current}").status_code == 404, "private filters are the author's"
    # A public filter of a project: for those who may read the project.
    assert other.get(f"/filters/{specified}").status_code == 401
    grant(admin, p, "READ_ONLY", user=other_id)
    assert other.get(f"/filters/{specified}").status_code == 200
    assert (
        labs.post("/users/current/favoritefilters", json={"filter": specified}).status_code == 201
    )
    favourites = admin.get("/users/current/favoritefilters").json()
    assert [f["id"] for f in favourites["data"]] == [specified]


def test_bad_filters(labs: httpx.Client, admin: httpx.Client) -> None:
    for query, word in (
        ({"rule": {"operator": "LOCATION_IS", "values": []}}, "not supported"),
        ({"rule": {"operator": "EQUALS", "values": ["x"]}}, "field.name"),
        ({"rule": {"operator": "EQUALS", "field": {"name": "a"}, "values": [1]}}, "values"),
        ({"orderRules": [{"direction": "UP", "field": {"name": "name"}}]}, "direction"),
        # Found by schemathesis: a number beyond 64 bits was a 500.
        (
            {"rule": {"operator": "EQUALS", "values": [2**64]}},
            "filterQuery.rule.values[0] must be between",
        ),
    ):
        response = labs.post("/filters", json={"name": "bad", "filterQuery": query})
        assert response.status_code == 400, response.text
        assert word in response.json()["meta"]["message"], response.text
    assert (
        labs.post(
            "/filters", json={"name": "x", "filterQuery": {}, "projectScope": "SPECIFIED"}
        ).status_code
        == 400
    )
    assert admin.post("/filters", json={"name": "x", "filterQuery": {}}).status_code == 404, (
        "labs only"
    )
    assert admin.get("/filters").status_code == 400
    assert admin.get("/filters/987654").status_code == 404


def test_integers_wider_than_64_bits_in_a_query_are_400s(labs: httpx.Client) -> None:
    for value in (2**70, 2**63, -(2**63) - 1):
        query = {"rule": {"operator": "EQUALS", "field": {"name": "priority"}, "values": [value]}}
        response = labs.post("/filters", json={"name": unique("f"), "filterQuery": query})
        assert response.status_code == 400, response.text
        assert response.json()["meta"]["message"] == (
            "filterQuery.rule.values[0] must be between -9223372036854775808 and "
            f"9223372036854775807, got {value}."
        )


#: What a downloader asks of every filter's results, whatever they hold.
DOWNLOADER = [
    ("include", "data.fields.testPlan"),
    ("include", "data.fields.testCycle"),
    ("include", "data.itemType"),
]


def test_includes_the_results_do_not_have_are_ignored(
    admin: httpx.Client, labs: httpx.Client, data: dict[str, Any]
) -> None:
    p = data["project"]
    everything = {"rule": {"field": {"name": "name"}, "operator": "IS_NOT_EMPTY", "values": []}}
    found = _create(labs, everything, projectScope="SPECIFIED", specifiedProject=p)
    results = admin.get(f"/filters/{found}/results", params=[("project", p), *DOWNLOADER])
    assert results.status_code == 200, results.text
    body = results.json()
    assert len(body["data"]) == 5
    assert set(body["linked"]) == {"itemtypes"}, "nothing to include for the test fields"
    types = {str(i["itemType"]) for i in body["data"]}
    assert set(body["linked"]["itemtypes"]) == types
    assert body["linked"]["itemtypes"][str(data["req"]["id"])]["typeKey"] == "REQ"


@pytest.mark.parametrize(
    ("path", "scoped"),
    [
        ("/projects/{p}", False),
        ("/projects", False),
        ("/items", True),
        ("/abstractitems", True),
        ("/activities", True),
        ("/relationships", True),
    ],
)
def test_every_route_ignores_includes_its_records_do_not_have(
    admin: httpx.Client, data: dict[str, Any], path: str, scoped: bool
) -> None:
    p = data["project"]
    params = [*DOWNLOADER, ("include", "data.nothing.here"), *([("project", p)] if scoped else [])]
    answer = admin.get(path.format(p=p), params=params)
    assert answer.status_code == 200, answer.text
    assert "testplans" not in answer.json()["linked"]


@pytest.mark.parametrize("value", ["fields.testPlan", "data..itemType", "data.fields.a b"])
def test_a_malformed_include_is_a_400_naming_it(
    admin: httpx.Client, labs: httpx.Client, data: dict[str, Any], value: str
) -> None:
    p = data["project"]
    everything = {"rule": {"field": {"name": "name"}, "operator": "IS_NOT_EMPTY", "values": []}}
    found = _create(labs, everything, projectScope="SPECIFIED", specifiedProject=p)
    assert_error(
        admin.get(f"/filters/{found}/results", params=[*DOWNLOADER, ("include", value)]),
        400,
        value,
        "data.fields.<field name>",
        "data.itemType",
    )
