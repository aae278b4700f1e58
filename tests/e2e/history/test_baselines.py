"""Baselines over HTTP: taking one (of a project, an item's subtree, a release, a set of
items), its items at their versions and places then, its relationships then, and the
comparison with another baseline or with now."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.api import Team, api_credentials, assert_error, create_item, created_id, total_of
from tests.e2e.topology import System

LABS = "/rest/labs"


def labs(client: httpx.Client, path: str) -> str:
    """An absolute /rest/labs path on the client's server (clients are based at v1)."""
    return str(client.base_url).split("/rest/")[0] + LABS + path


def take(client: httpx.Client, project: dict[str, Any], name: str, **body: Any) -> int:
    response = client.post(
        labs(client, "/baselines"),
        json={"name": name, **body} | ({} if "origin" in body else {"project": project["id"]}),
    )
    return created_id(response)


def items_of(client: httpx.Client, baseline: int) -> list[dict[str, Any]]:
    response = client.get(f"/baselines/{baseline}/versioneditems", params={"maxResults": 50})
    assert response.status_code == 200, response.text
    return list(response.json()["data"])


def compare(client: httpx.Client, baseline: int, to: str = "current") -> list[dict[str, Any]]:
    response = client.get(
        labs(client, f"/baselines/{baseline}/compare"), params={"to": to, "maxResults": 50}
    )
    assert response.status_code == 200, response.text
    return list(response.json()["data"])


def rename(client: httpx.Client, item: int, name: str) -> None:
    response = client.patch(
        f"/items/{item}", json=[{"op": "replace", "path": "/fields/name", "value": name}]
    )
    assert response.status_code == 200, response.text


def _assert_taken(admin: httpx.Client, project: dict[str, Any], first: int, me: int) -> None:
    """Baseline ``first``, "Release 2.1", as ``me`` took it: read, listed, in the feed."""
    data = admin.get(f"/baselines/{first}").json()["data"]
    assert data["name"] == "Release 2.1"
    assert data["description"] == "as shipped"
    assert data["project"] == project["id"]
    assert data["origin"] == {"project": project["id"]}
    assert data["createdBy"] == me
    assert data["type"] == "baselines"
    listed = admin.get("/baselines", params={"project": project["id"]})
    assert first in [b["id"] for b in listed.json()["data"]]
    # Taking it is in the project's activity feed.
    feed = admin.get(
        "/activities", params={"project": project["id"], "objectType": "BASELINE"}
    ).json()["data"]
    assert [(a["eventType"], a["user"]) for a in feed] == [("CREATE", me)]
    assert "Release 2.1" in feed[0]["details"]


def _assert_held(
    admin: httpx.Client, project: dict[str, Any], first: int, taken: list[int]
) -> None:
    """Baseline ``first`` holds the items ``taken`` (top, its child, a loose one) at their
    versions and places of then."""
    top, child, _loose = taken
    held = items_of(admin, first)
    assert [i["id"] for i in held] == taken
    by_id = {i["id"]: i for i in held}
    assert by_id[child]["baselineLocation"]["parent"] == {"item": [top, 1]}
    assert by_id[top]["baselineLocation"]["parent"] == {"project": project["id"]}
    assert by_id[child]["version"] == 1
    assert by_id[child]["currentVersion"] == 1
    assert by_id[child]["baseline"] == first


def test_a_baseline_keeps_versions_and_places(admin: httpx.Client, project: dict[str, Any]) -> None:
    me = admin.get("/users/current").json()["data"]["id"]
    top = create_item(admin, project, "Top")
    child = create_item(admin, project, "Child", parent=top)
    loose = create_item(admin, project, "Loose")
    link = admin.post("/relationships", json={"fromItem": top, "toItem": loose})
    assert link.status_code == 201, link.text

    first = take(admin, project, "Release 2.1", description="as shipped")
    _assert_taken(admin, project, first, me)

    _assert_held(admin, project, first, [top, child, loose])

    # Later changes leave the baseline as it was.
    rename(admin, child, "Child, renamed")
    moved = admin.put(
        f"/items/{loose}", json={"fields": {"name": "Loose"}, "location": {"parent": {"item": top}}}
    )
    assert moved.status_code == 200, moved.text
    one = admin.get(f"/baselines/{first}/versioneditems/{child}").json()["data"]
    assert one["fields"]["name"] == "Child"
    assert one["version"] == 1
    assert one["currentVersion"] == 2
    was = admin.get(f"/baselines/{first}/versioneditems/{loose}").json()["data"]
    assert was["baselineLocation"]["parent"] == {"project": project["id"]}
    assert was["location"]["parent"] == {"project": project["id"]}

    # Its relationships are those of when it was taken.
    late = admin.post("/relationships", json={"fromItem": child, "toItem": loose})
    assert late.status_code == 201, late.text
    then = admin.get(f"/baselines/{first}/versioneditems/{top}/versionedrelationships")
    assert then.status_code == 200, then.text
    assert [(r["fromItem"], r["toItem"]) for r in then.json()["data"]] == [([top, 1], [loose, 1])]
    assert (
        admin.get(f"/baselines/{first}/versioneditems/{child}/versionedrelationships").json()[
            "data"
        ]
        == []
    )

    # Compare with now: two items changed, one relationship added.
    changes = compare(admin, first)
    items = {c["id"]: c for c in changes if c["kind"] == "ITEM"}
    assert items[child]["change"] == "CHANGED"
    assert "name" in items[child]["changedFields"]
    assert (items[child]["fromVersion"], items[child]["toVersion"]) == (1, 2)
    assert items[loose]["change"] == "CHANGED"
    assert "location" in items[loose]["changedFields"]
    assert top not in items
    relationships = [c for c in changes if c["kind"] == "RELATIONSHIP"]
    assert [(c["change"], c["fromItem"], c["toItem"]) for c in relationships] == [
        ("ADDED", child, loose)
    ]

    # Between two baselines: the same, plus a new item and a deleted one.
    added = create_item(admin, project, "Added later")
    gone = admin.delete(f"/items/{child}")
    assert gone.status_code == 204, gone.text
    second = take(admin, project, "Release 2.2")
    changes = compare(admin, first, str(second))
    kinds = {(c["kind"], c["change"], c["id"]) for c in changes}
    assert ("ITEM", "ADDED", added) in kinds
    assert ("ITEM", "REMOVED", child) in kinds
    assert ("ITEM", "CHANGED", loose) in kinds
    assert ("RELATIONSHIP", "ADDED", late.json()["meta"]["id"]) not in kinds  # went with child
    page = admin.get(
        labs(admin, f"/baselines/{first}/compare"),
        params={"to": str(second), "startAt": 1, "maxResults": 1},
    )
    assert len(page.json()["data"]) == 1
    assert total_of(page) == len(changes)
    assert compare(admin, second, str(second)) == []


def test_origins(admin: httpx.Client, project: dict[str, Any]) -> None:
    top = create_item(admin, project, "Subtree top")
    below = create_item(admin, project, "Below", parent=top)
    other = create_item(admin, project, "Elsewhere")
    subtree = take(admin, project, "Subtree", origin={"project": project["id"], "item": top})
    assert [i["id"] for i in items_of(admin, subtree)] == [top, below]
    assert admin.get(f"/baselines/{subtree}").json()["data"]["origin"] == {
        "project": project["id"],
        "item": top,
    }
    chosen = take(admin, project, "Chosen", origin={"project": project["id"], "items": [other]})
    assert [i["id"] for i in items_of(admin, chosen)] == [other]
    everything = {"rule": {"field": {"name": "name"}, "operator": "IS_NOT_EMPTY", "values": []}}
    found = created_id(
        admin.post(
            labs(admin, "/filters"),
            json={
                "name": f"All of {project['key']}",
                "filterQuery": everything,
                "projectScope": "SPECIFIED",
                "specifiedProject": project["id"],
            },
        )
    )
    filtered = take(admin, project, "Filtered", origin={"project": project["id"], "filter": found})
    assert [i["id"] for i in items_of(admin, filtered)] == [top, below, other]
    assert_error(admin.get(f"/baselines/{chosen}/versioneditems/{top}"), 404, "not in baseline")


def test_bad_baselines(team: Team) -> None:
    admin = team.clients["ORG_ADMIN"]
    project = team.project
    assert_error(
        admin.post(labs(admin, "/baselines"), json={"project": project["id"]}), 400, "name"
    )
    assert_error(admin.post(labs(admin, "/baselines"), json={"name": "No project"}), 400, "project")
    assert_error(
        admin.post(
            labs(admin, "/baselines"),
            json={"name": "Two", "origin": {"project": project["id"], "item": 1, "release": 2}},
        ),
        400,
        "at most one",
    )
    assert_error(admin.post("/baselines", json={"name": "v1", "project": project["id"]}), 404)
    assert_error(admin.get("/baselines"), 400, "project")
    assert_error(admin.get("/baselines/999999999"), 404, "baseline")
    baseline = take(admin, project, "Guarded")
    assert team.clients["READ_ONLY"].get(f"/baselines/{baseline}").status_code == 200
    assert_error(team.clients["NONE"].get(f"/baselines/{baseline}"), 401)
    assert_error(team.clients["NONE"].get(f"/baselines/{baseline}/versioneditems"), 401)
    assert_error(
        team.clients["READ_ONLY"].post(
            labs(admin, "/baselines"), json={"name": "Mine", "project": project["id"]}
        ),
        401,
    )
    assert_error(
        admin.get(labs(admin, f"/baselines/{baseline}/compare"), params={"to": "yesterday"}),
        400,
        "current",
    )


def test_folders(team: Team) -> None:
    admin = team.clients["ORG_ADMIN"]
    project = team.project
    baseline = take(admin, project, "Filed")
    folders = labs(admin, "/baselines/folders")
    top = created_id(admin.post(folders, json={"name": "Releases", "project": project["id"]}))
    inner = created_id(
        admin.post(folders, json={"name": "2.x", "project": project["id"], "parent": top})
    )
    assert_error(
        admin.post(folders, json={"name": "Releases", "project": project["id"]}), 400, "already"
    )
    assert_error(
        admin.post(folders, json={"name": "Lost", "project": project["id"], "parent": 999999}),
        400,
        "parent",
    )
    listed = admin.get(folders, params={"project": project["id"]}).json()["data"]
    assert [(f["id"], f.get("parent")) for f in listed] == [(top, None), (inner, top)]
    assert listed[0]["type"] == "baselinefolders"

    moved = admin.put(
        f"/baselinetree/{project['id']}/move", json={"baseline": baseline, "folder": inner}
    )
    assert moved.status_code == 200, moved.text
    assert admin.get(f"/baselines/{baseline}").json()["data"]["folder"] == inner
    back = admin.put(f"/baselinetree/{project['id']}/move", json={"baseline": baseline})
    assert back.status_code == 200, back.text
    assert "folder" not in admin.get(f"/baselines/{baseline}").json()["data"]
    assert_error(
        admin.put(f"/baselinetree/{project['id']}/move", json={"baseline": 999999}), 400, "baseline"
    )
    assert_error(
        team.clients["READ_ONLY"].put(
            f"/baselinetree/{project['id']}/move", json={"baseline": baseline, "folder": top}
        ),
        401,
    )
    assert (
        team.clients["READ_ONLY"].get(folders, params={"project": project["id"]}).status_code == 200
    )
    assert_error(team.clients["NONE"].get(folders, params={"project": project["id"]}), 401)


def test_a_baselines_put_without_a_content_type(
    system: System, admin: httpx.Client, project: dict[str, Any]
) -> None:
    """Clients send some baseline PUTs with no Content-Type at all: a Bearer (or Basic)
    caller's body without one is read as JSON when it parses; one that does not parse is
    refused as before."""
    client_id, secret = api_credentials(system)
    token = httpx.post(
        f"{system.url}/rest/oauth/token",
        data={"grant_type": "client_credentials"},
        auth=(client_id, secret),
    ).json()["access_token"]
    baseline = take(admin, project, "Untyped")
    folder = created_id(
        admin.post(
            labs(admin, "/baselines/folders"), json={"name": "Untyped", "project": project["id"]}
        )
    )
    path = f"{system.url}/rest/v1/baselinetree/{project['id']}/move"
    bearer = {"Authorization": f"Bearer {token}"}
    body = b'{"baseline": %d, "folder": %d}' % (baseline, folder)
    moved = httpx.put(path, content=body, headers=bearer)
    assert "content-type" not in moved.request.headers
    assert moved.status_code == 200, moved.text
    assert admin.get(f"/baselines/{baseline}").json()["data"]["folder"] == folder
    back = admin.put(f"/baselinetree/{project['id']}/move", content=b'{"baseline": %d}' % baseline)
    assert back.status_code == 200, back.text
    assert "folder" not in admin.get(f"/baselines/{baseline}").json()["data"]
    assert_error(
        httpx.put(path, content=b"baseline=%d" % baseline, headers=bearer),
        400,
        "Request bodies must be JSON with Content-Type: application/json (got none)",
    )


def test_a_baseline_has_no_review_link(team: Team) -> None:
    """Plumbline has no reviews: the review link of a baseline is a 404 that says so, once
    the baseline exists and the caller may read it."""
    admin = team.clients["ORG_ADMIN"]
    baseline = take(admin, team.project, "Reviewed")
    for role in ("ORG_ADMIN", "READ_ONLY"):
        assert_error(
            team.clients[role].get(f"/baselines/{baseline}/reviewlink"),
            404,
            f"Baseline {baseline} has no review",
            "no reviews",
        )
    # Unknown and unreadable baselines answer as they do everywhere else.
    unknown = admin.get("/baselines/999999999/reviewlink")
    assert_error(unknown, 404, "baseline")
    assert "review" not in unknown.json()["meta"]["message"]
    assert_error(team.clients["NONE"].get(f"/baselines/{baseline}/reviewlink"), 401)
    # Declared, as every other operation.
    document = admin.get("/api-docs").json()
    operation = document["paths"]["/rest/v1/baselines/{baselineId}/reviewlink"]["get"]
    assert "no review" in operation["description"]
    assert "404" in operation["responses"]


def test_a_baseline_is_renamed(system: System, team: Team) -> None:
    """``PUT /baselines/{id}`` sets the name and description (WRITE on the project), takes
    the record as read back, and leaves the items alone; a client sends it without a
    Content-Type."""
    admin = team.clients["ORG_ADMIN"]
    baseline = take(admin, team.project, "Before", description="first")
    held = items_of(admin, baseline)
    record = admin.get(f"/baselines/{baseline}").json()["data"]
    record.update(name="After", description="second")
    assert admin.put(f"/baselines/{baseline}", json=record).status_code == 200
    now = admin.get(f"/baselines/{baseline}").json()["data"]
    assert (now["name"], now["description"]) == ("After", "second")
    assert now["createdDate"] == record["createdDate"]
    assert items_of(admin, baseline) == held
    # What a client sends: a JSON string with no Content-Type, as a Basic caller.
    bare = httpx.put(
        f"{system.url}/rest/v1/baselines/{baseline}",
        content=b'{"name": "Untyped", "description": ""}',
        auth=("admin", system.admin_password),
    )
    assert "content-type" not in bare.request.headers
    assert bare.status_code == 200, bare.text
    assert admin.get(f"/baselines/{baseline}").json()["data"]["name"] == "Untyped"
    # Who may: writers of the project; readers and strangers may not (the contract's 401).
    for role, may in team.expect("READ_WRITE").items():
        response = team.clients[role].put(f"/baselines/{baseline}", json={"name": role})
        assert response.status_code == (200 if may else 401), (role, response.text)
    assert admin.get(f"/baselines/{baseline}").json()["data"]["name"] == "ORG_ADMIN"
    # Bad bodies and unknown baselines.
    assert_error(admin.put(f"/baselines/{baseline}", json={"name": "  "}), 400, "name")
    assert_error(admin.put(f"/baselines/{baseline}", json={"description": "x"}), 400, "name")
    assert_error(admin.put(f"/baselines/{baseline}", json={"name": "x", "items": []}), 400, "items")
    assert_error(admin.put("/baselines/999999999", json={"name": "x"}), 404, "baseline")
