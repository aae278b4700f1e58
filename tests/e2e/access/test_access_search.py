"""The access matrix for search, filters and includes: each role x read, list, create, and
the leak checks: ids of items in a project the caller may not read never appear in
``/abstractitems`` results, filter results, sub-query matches or ``linked``, and
``totalResults`` counts only what the caller may see.
"""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.api import (
    MATRIX_ROLES,
    Team,
    assert_error,
    create_item,
    item_types,
    new_project,
    project_key,
    unique,
)


def labs(client: httpx.Client, path: str) -> str:
    """The absolute ``/rest/labs`` URL of ``path`` for a client at ``/rest/v1``."""
    return str(client.base_url).rstrip("/").rsplit("/", 1)[0] + "/labs" + path


def _other_project(admin: httpx.Client) -> dict[str, Any]:
    """A project nobody of the team has a role on."""
    key = project_key("OT")
    return {"id": new_project(admin, key), "key": key, "types": item_types(admin)}


def _ids(response: httpx.Response) -> list[int]:
    assert response.status_code == 200, response.text
    return [r["id"] for r in response.json()["data"]]


def _total(response: httpx.Response) -> int:
    return int(response.json()["meta"]["pageInfo"]["totalResults"])


def test_search_by_role(team: Team, admin: httpx.Client) -> None:
    word = unique("needle")
    other = _other_project(admin)
    mine = [create_item(admin, team.project, f"{word} {n}") for n in range(3)]
    hidden = [create_item(admin, other, f"{word} hidden {n}") for n in range(2)]
    may_read = team.expect("READ_ONLY")
    for role in MATRIX_ROLES:
        client = team.clients[role]
        found = client.get("/abstractitems", params={"contains": word, "maxResults": 50})
        paged = client.get("/abstractitems", params={"contains": word, "maxResults": 1})
        asked_other = client.get(
            "/abstractitems", params={"contains": word, "project": other["id"]}
        )
        one = client.get(f"/abstractitems/{mine[0]}")
        if role == "ORG_ADMIN":
            assert sorted(_ids(found)) == sorted(mine + hidden)
            assert _total(paged) == len(mine + hidden)
            assert sorted(_ids(asked_other)) == sorted(hidden)
            continue
        assert not set(_ids(found)) & set(hidden), role
        assert not set(_ids(asked_other)) & set(hidden), role
        assert _total(asked_other) == 0, role
        assert_error(client.get(f"/abstractitems/{hidden[0]}"), 401, "no access", str(hidden[0]))
        if may_read[role]:
            assert sorted(_ids(found)) == sorted(mine), role
            assert _total(found) == _total(paged) == len(mine), role
            assert len(_ids(paged)) == 1, role
            assert one.status_code == 200, (role, one.text)
        else:
            assert _ids(found) == [], role
            assert _total(found) == 0, role
            assert _total(paged) == 0, role
            assert_error(one, 401, "no access", f"item {mine[0]}")


def test_search_filters_by_other_members_stay_within_readable_projects(
    team: Team, admin: httpx.Client
) -> None:
    """Sorting, type and document-key filters do not widen what a reader finds."""
    word = unique("sorted")
    other = _other_project(admin)
    mine = create_item(admin, team.project, f"{word} mine")
    hidden = create_item(admin, other, f"{word} hidden")
    key = admin.get(f"/items/{hidden}").json()["data"]["documentKey"]
    reader = team.clients["READ_ONLY"]
    for params in (
        {"contains": word, "sortBy": "name.desc"},
        {"contains": word, "sortBy": "id.asc", "itemType": team.project["types"]["REQ"]["id"]},
        {"documentKey": key},
        {"contains": word, "project": [team.project["id"], other["id"]]},
    ):
        response = reader.get("/abstractitems", params=params)
        assert hidden not in _ids(response), params
        assert _total(response) == (0 if "documentKey" in params else 1), params
        if "contains" in params:
            assert _ids(response) == [mine], params


def _filter(client: httpx.Client, rule: dict[str, Any], **extra: Any) -> httpx.Response:
    body = {"name": unique("f"), "filterQuery": {"rule": rule}, "public": True, **extra}
    return client.post(labs(client, "/filters"), json=body)


def _named(word: str) -> dict[str, Any]:
    return {"field": {"name": "name"}, "operator": "CONTAINS", "values": [word]}


def _admins_filters(admin: httpx.Client, word: str, project: int, other: int) -> dict[str, int]:
    """The admin's filters of ``word``: in ``project`` ("specified"), in ``other``
    ("elsewhere"), and in every project ("all")."""
    specified = _filter(admin, _named(word), projectScope="SPECIFIED", specifiedProject=project)
    elsewhere = _filter(admin, _named(word), projectScope="SPECIFIED", specifiedProject=other)
    everywhere = _filter(admin, _named(word), projectScope="ALL")
    ids = {}
    for name, made in (("specified", specified), ("elsewhere", elsewhere), ("all", everywhere)):
        assert made.status_code == 201, made.text
        ids[name] = made.json()["meta"]["id"]
    return ids


def test_filters_by_role(team: Team, admin: httpx.Client) -> None:
    project = team.project["id"]
    other = _other_project(admin)
    word = unique("flt")
    mine = sorted(create_item(admin, team.project, f"{word} {n}") for n in range(3))
    hidden = sorted(create_item(admin, other, f"{word} hidden {n}") for n in range(2))
    ids = _admins_filters(admin, word, project, other["id"])
    may_read, may_write = team.expect("READ_ONLY"), team.expect("READ_WRITE")
    for role in MATRIX_ROLES:
        client = team.clients[role]
        listed = client.get("/filters", params={"project": project, "maxResults": 50})
        read = client.get(f"/filters/{ids['specified']}")
        results = client.get(f"/filters/{ids['specified']}/results", params={"maxResults": 50})
        across = client.get(f"/filters/{ids['all']}/results", params={"maxResults": 50})
        paged = client.get(f"/filters/{ids['all']}/results", params={"maxResults": 1})
        count = client.get(f"/filters/{ids['all']}/count")
        asked_other = client.get(f"/filters/{ids['all']}/results", params={"project": other["id"]})
        created = _filter(client, _named(word), projectScope="SPECIFIED", specifiedProject=project)
        personal = _filter(client, _named(word), projectScope="ALL")
        assert personal.status_code == 201, (role, personal.text)
        if role == "ORG_ADMIN":
            assert sorted(_ids(across)) == sorted(mine + hidden)
            assert _total(paged) == len(mine + hidden)
            assert client.get(f"/filters/{ids['elsewhere']}").status_code == 200
        else:
            assert not set(_ids(across)) & set(hidden), role
            assert_error(client.get(f"/filters/{ids['elsewhere']}"), 401, "no access")
            assert_error(asked_other, 401, "no access", f"project {other['id']}")
            elsewhere_results = client.get(f"/filters/{ids['elsewhere']}/results")
            assert_error(elsewhere_results, 401, "no access")
            assert ids["elsewhere"] not in [f["id"] for f in listed.json().get("data", [])]
        if may_read[role]:
            assert ids["specified"] in _ids(listed), role
            assert read.status_code == 200, (role, read.text)
            assert sorted(_ids(results)) == mine, role
            assert _total(results) == len(mine), role
            if role != "ORG_ADMIN":
                assert sorted(_ids(across)) == mine, role
                assert _total(across) == _total(paged) == len(mine), role
                assert count.json()["data"]["count"] == len(mine), role
        else:
            assert_error(listed, 401, "no access", f"project {project}")
            assert_error(read, 401, "no access", f"filter {ids['specified']}")
            assert_error(results, 401, "no access")
            assert _ids(across) == [], role
            assert _total(across) == 0, role
            assert count.json()["data"]["count"] == 0, role
        if may_write[role]:
            assert created.status_code == 201, (role, created.text)
        else:
            assert_error(created, 401, f"project {project}")


def test_sub_queries_do_not_reach_unreadable_items(team: Team, admin: httpx.Client) -> None:
    """Items related to an item the caller may not see are not found through it."""
    other = _other_project(admin)
    marker = unique("secret")
    mine = create_item(admin, team.project, "Related to a secret")
    hidden = create_item(admin, other, marker)
    relation = admin.post("/relationships", json={"fromItem": mine, "toItem": hidden})
    assert relation.status_code == 201, relation.text
    rule = {"operator": "IN", "values": [], "subQuery": {"rule": _named(marker)}}
    made = _filter(admin, rule, projectScope="ALL")
    assert made.status_code == 201, made.text
    url = f"/filters/{made.json()['meta']['id']}/results"
    assert _ids(admin.get(url)) == [mine]
    for role in ("READ_ONLY", "READ_WRITE", "PROJECT_ADMIN"):
        response = team.clients[role].get(url)
        assert _ids(response) == [], role
        assert _total(response) == 0, role


def test_linked_leaves_out_unreadable_items(team: Team, admin: httpx.Client) -> None:
    """A record that refers to an item of another project: whatever the reader gets, its
    ``linked`` holds no such item, and the include is no reason to refuse the answer."""
    other = _other_project(admin)
    mine = create_item(admin, team.project, "Traced")
    hidden = create_item(admin, other, "Untraceable")
    made = admin.post("/relationships", json={"fromItem": mine, "toItem": hidden})
    assert made.status_code == 201, made.text
    relationship = made.json()["meta"]["id"]
    include = {"include": ["data.toItem", "data.fromItem"]}
    assert (
        str(hidden)
        in admin.get(f"/relationships/{relationship}", params=include).json()["linked"]["items"]
    )
    for role in ("READ_ONLY", "READ_WRITE"):
        client = team.clients[role]
        listing = {"project": team.project["id"], "maxResults": 50}
        for url, params in (
            (f"/relationships/{relationship}", {"include": "data.toItem"}),
            (f"/relationships/{relationship}", include),
            ("/relationships", {**listing, **include}),
        ):
            plain = client.get(url, params={k: v for k, v in params.items() if k != "include"})
            response = client.get(url, params=params)
            assert response.status_code == plain.status_code, (role, url, response.text)
            if response.status_code == 200:
                assert str(hidden) not in response.json().get("linked", {}).get("items", {}), role
        # The item's own includes: the parent, in its project, is there.
        child = create_item(admin, team.project, "Child", parent=mine)
        own = client.get(f"/items/{child}", params={"include": "data.location.parent.item"})
        assert list(own.json()["linked"]["items"]) == [str(mine)], role
