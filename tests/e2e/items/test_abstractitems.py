"""GET /abstractitems: search by project, type, key, release, dates and text.

``contains`` is literal and case-insensitive, and in step with every item write. Values of
three characters or more go through the trigram index (FTS5 on SQLite, GIN on
PostgreSQL); shorter ones scan. Both must answer as the literal LIKE did.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.e2e.api import Query, new_project, project_key, type_ids


@pytest.fixture
def data(admin: httpx.Client) -> dict[str, Any]:
    key = project_key("AB")
    project = new_project(admin, key)
    types = type_ids(admin)
    release = admin.post("/releases", json={"name": "R1", "project": project}).json()["meta"]["id"]
    ids = {}
    for name, type_key, extra in (
        ("Alpha login", "REQ", {"description": "50% of users (sic)"}),
        ("Beta export", "REQ", {"release": release}),
        ("Gamma crash", "DEF", {}),
    ):
        response = admin.post(
            "/items",
            json={
                "project": project,
                "itemType": types[type_key],
                "fields": {"name": name, **extra},
            },
        )
        ids[name.split()[0]] = response.json()["meta"]["id"]
    return {"project": project, "types": types, "ids": ids, "release": release, "key": key}


def _ids(admin: httpx.Client, params: Query) -> list[int]:
    response = admin.get("/abstractitems", params=params)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["meta"]["pageInfo"]["totalResults"] >= len(body["data"])
    return [i["id"] for i in body["data"]]


def test_filters(admin: httpx.Client, data: dict[str, Any]) -> None:
    p, ids = data["project"], data["ids"]
    assert _ids(admin, {"project": p}) == [ids["Alpha"], ids["Beta"], ids["Gamma"]]
    assert _ids(admin, {"project": p, "itemType": data["types"]["DEF"]}) == [ids["Gamma"]]
    keys: Query = [("documentKey", f"{data['key']}-REQ-1"), ("documentKey", f"{data['key']}-DEF-1")]
    assert sorted(_ids(admin, keys)) == sorted([ids["Alpha"], ids["Gamma"]])
    assert _ids(admin, {"release": data["release"]}) == [ids["Beta"]]
    assert _ids(admin, [("project", p), ("contains", "EXPORT"), ("contains", "crash")]) == [
        ids["Beta"],
        ids["Gamma"],
    ]
    assert _ids(admin, {"project": p, "contains": "50%"}) == [ids["Alpha"]]
    assert _ids(admin, {"project": p, "contains": "5_%"}) == [], (
        "contains is literal, not a pattern"
    )
    assert _ids(admin, {"project": p, "contains": "(sic)"}) == [ids["Alpha"]]


def test_dates_sorting_and_paging(admin: httpx.Client, data: dict[str, Any]) -> None:
    p, ids = data["project"], data["ids"]
    hour_ago = (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.000+0000")
    later = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S+0000")
    assert len(_ids(admin, {"project": p, "createdDate": hour_ago})) == 3
    assert _ids(admin, {"project": p, "createdDate": later}) == []
    assert (
        len(_ids(admin, [("project", p), ("modifiedDate", hour_ago), ("modifiedDate", later)])) == 3
    )
    assert len(_ids(admin, {"project": p, "lastActivityDate": hour_ago})) == 3
    assert _ids(admin, {"project": p, "sortBy": "name.desc"}) == [
        ids["Gamma"],
        ids["Beta"],
        ids["Alpha"],
    ]
    assert (
        _ids(admin, {"project": p, "sortBy": "documentKey.asc"})[0] == ids["Gamma"]
    )  # DEF before REQ
    page = admin.get("/abstractitems", params={"project": p, "startAt": 1, "maxResults": 1}).json()
    assert page["meta"]["pageInfo"] == {"startIndex": 1, "resultCount": 1, "totalResults": 3}
    assert [i["id"] for i in page["data"]] == [ids["Beta"]]
    for bad in ({"sortBy": "colour.asc"}, {"sortBy": "name"}, {"createdDate": "yesterday"}):
        response = admin.get("/abstractitems", params={"project": p, **bad})
        assert response.status_code == 400
        assert next(iter(bad)) in response.json()["meta"]["message"]


def test_get_by_id(admin: httpx.Client, data: dict[str, Any]) -> None:
    alpha = data["ids"]["Alpha"]
    body = admin.get(f"/abstractitems/{alpha}", params={"include": "data.itemType"}).json()
    assert body["data"]["id"] == alpha
    assert body["data"]["type"] == "items"
    assert body["linked"]["itemtypes"][str(body["data"]["itemType"])]["typeKey"] == "REQ"
    assert admin.get("/abstractitems/999999999").status_code == 404
    admin.delete(f"/items/{alpha}")
    assert admin.get(f"/abstractitems/{alpha}").status_code == 404
    assert alpha not in _ids(admin, {"project": data["project"]})


TEXTS = {
    "percent": ("Quota 50% reached", "applies to 5_0 users"),
    "slash": (r"Path C:\Temp\New", "it's O'Brien's"),
    "quotes": ('Say "Hello"', "%%% and ___"),
    "umlaut": ("Grüße aus Straße", "ŞİMDİ çok güzel"),
    "cjk": ("日本語のテキスト", "launch 🚀 now"),
    "plain": ("Login screen", "EXPORT to CSV"),
}


@pytest.fixture
def corpus(admin: httpx.Client) -> dict[str, Any]:
    key = project_key("CT")
    project = new_project(admin, key)
    types = type_ids(admin)
    ids = {}
    for label, (name, description) in TEXTS.items():
        response = admin.post(
            "/items",
            json={
                "project": project,
                "itemType": types["REQ"],
                "fields": {"name": name, "description": description},
            },
        )
        assert response.status_code == 201, response.text
        ids[label] = response.json()["meta"]["id"]
    return {"project": project, "ids": ids}


def _found(admin: httpx.Client, project: int, *contains: str) -> set[int]:
    params: Query = [("project", project), ("maxResults", 50)] + [("contains", c) for c in contains]
    response = admin.get("/abstractitems", params=params)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["meta"]["pageInfo"]["totalResults"] == len(body["data"])
    return {i["id"] for i in body["data"]}


def _expected(corpus: dict[str, Any], *contains: str) -> set[int]:
    return {
        corpus["ids"][label]
        for label, texts in TEXTS.items()
        if any(c.lower() in text.lower() for text in texts for c in contains)
    }


@pytest.mark.parametrize(
    "contains",
    [
        ("50%",),
        ("0% r",),
        ("5_%",),
        ("5_0",),
        ("%",),
        ("_",),
        ("%%%",),
        ("\\",),
        ("c:\\temp\\",),
        ("'",),
        ("o'brien's",),
        ('"hello"',),
        ('"',),
        ("GRÜSSE",),
        ("grüße",),
        ("straße",),
        ("şimdi",),
        ("ÇOK",),
        ("日本語",),
        ("日本",),
        ("🚀",),
        ("login",),
        ("LOGIN",),
        ("lo",),
        ("x",),
        ("export", "grüße"),
        ("export", "sv"),
        ("nothing here", "also nothing"),
    ],
)
def test_contains_is_literal(
    admin: httpx.Client, corpus: dict[str, Any], contains: tuple[str, ...]
) -> None:
    assert _found(admin, corpus["project"], *contains) == _expected(corpus, *contains)


def test_contains_follows_changes_and_deletes(admin: httpx.Client, corpus: dict[str, Any]) -> None:
    p, ids = corpus["project"], corpus["ids"]
    assert _found(admin, p, "login screen") == {ids["plain"]}
    patched = admin.patch(
        f"/items/{ids['plain']}",
        json=[{"op": "replace", "path": "/fields/name", "value": "Logout page"}],
    )
    assert patched.status_code == 200, patched.text
    assert _found(admin, p, "login screen") == set()
    assert _found(admin, p, "LOGOUT PAGE") == {ids["plain"]}
    assert _found(admin, p, "export to") == {ids["plain"]}  # the untouched field
    replaced = admin.put(f"/items/{ids['cjk']}", json={"fields": {"name": "Renamed"}})
    assert replaced.status_code == 200, replaced.text
    assert _found(admin, p, "日本語") == set()
    assert _found(admin, p, "🚀") == set()  # the description is gone with PUT
    assert _found(admin, p, "renamed") == {ids["cjk"]}
    assert admin.delete(f"/items/{ids['percent']}").status_code == 204
    assert _found(admin, p, "50%") == set()
    assert _found(admin, p, "50%", "renamed") == {ids["cjk"]}


@pytest.mark.parametrize(
    ("sort_by", "key"),
    [("name.asc", "name"), ("name.desc", "name"), ("sequence.asc", "sequence")],
)
def test_matches_come_in_the_requested_order_across_pages(
    admin: httpx.Client, corpus: dict[str, Any], sort_by: str, key: str
) -> None:
    """Few matches are sorted as a set on PostgreSQL; the order and paging must hold."""
    pages = []
    for start in (0, 2, 4):
        response = admin.get(
            "/abstractitems",
            params=[
                ("project", corpus["project"]),
                ("contains", "e"),
                ("sortBy", sort_by),
                ("startAt", start),
                ("maxResults", 2),
            ],
        )
        assert response.status_code == 200, response.text
        pages += response.json()["data"]
    assert len(pages) == 5  # every text but the CJK one
    assert len({i["id"] for i in pages}) == 5

    def value(item: dict[str, Any]) -> Any:
        if key == "sequence":
            return [int(n) for n in item["location"]["sequence"].split(".")]
        return item["fields"]["name"]

    values = [value(i) for i in pages]
    assert values == sorted(values, reverse=sort_by.endswith(".desc"))
