"""GET /abstractitems?contains=: literal, case-insensitive, in step with every item write.

Values of three characters or more go through the trigram index (FTS5 on SQLite, GIN on
PostgreSQL); shorter ones scan. Both must answer as the literal LIKE did.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.harness import Query, new_project, project_key, type_ids

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
    assert len(pages) == 5 and len({i["id"] for i in pages}) == 5  # every text but the CJK one

    def value(item: dict[str, Any]) -> Any:
        if key == "sequence":
            return [int(n) for n in item["location"]["sequence"].split(".")]
        return item["fields"]["name"]

    values = [value(i) for i in pages]
    assert values == sorted(values, reverse=sort_by.endswith(".desc"))
