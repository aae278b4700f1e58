"""(labs) ``GET /records``: many records of several types in one call, each as its own
``GET`` answers it; what the caller may not read is left out, never refused."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.api import (
    MakeUser,
    assert_error,
    create_item,
    created_id,
    grant,
    item_types,
    new_project,
    project_key,
)
from tests.e2e.testrecords import (
    add_cases,
    default_group,
    new_cycle,
    new_plan,
    new_test_case,
    runs_of,
)

DATED = {"X-Service-Date-Fields-With-Time": "true"}


def _project(admin: httpx.Client) -> dict[str, Any]:
    key = project_key("LK")
    return {"id": new_project(admin, key), "key": key, "types": item_types(admin)}


def test_records_of_every_type_are_answered_as_their_own_get_does(
    admin: httpx.Client, labs: httpx.Client, make_user: MakeUser
) -> None:
    mine, other = _project(admin), _project(admin)
    first = create_item(admin, mine, "First", description="<p>one</p>")
    second = create_item(admin, mine, "Second")
    hidden = create_item(admin, other, "Hidden")
    link = created_id(admin.post("/relationships", json={"fromItem": first, "toItem": second}))
    comment = created_id(
        admin.post("/comments", json={"body": {"text": "Why?"}, "location": {"item": first}})
    )
    tag = created_id(admin.post("/tags", json={"name": "lookup", "project": mine["id"]}))
    case = new_test_case(admin, mine, "Case")
    plan = new_plan(admin, mine)
    add_cases(admin, plan, default_group(admin, plan), case)
    cycle = new_cycle(admin, plan)
    [run] = [r["id"] for r in runs_of(admin, cycle)]
    baseline = created_id(labs.post("/baselines", json={"name": "B", "project": mine["id"]}))
    asked = {
        "items": [first, second, hidden],
        "relationships": [link],
        "comments": [comment],
        "projects": [mine["id"]],
        "tags": [tag],
        "testplans": [plan],
        "testcycles": [cycle],
        "testruns": [run],
        "baselines": [baseline],
    }
    response = labs.get("/records", params=asked | {"items": [first, second, hidden, 99_999_999]})
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert set(data) == set(asked)
    for kind, ids in asked.items():
        assert sorted(data[kind]) == sorted(str(i) for i in ids), kind
        for id in ids:
            assert data[kind][str(id)] == admin.get(f"/{kind}/{id}").json()["data"], (kind, id)
    # The date header changes the records as it changes their GETs.
    dated = labs.get("/records", params={"items": [first]}, headers=DATED).json()["data"]
    assert dated["items"][str(first)] == admin.get(f"/items/{first}", headers=DATED).json()["data"]

    # A reader of one project gets what it may read; the rest is left out, not refused,
    # even when it is all that was asked for.
    user, _, _, reader = make_user()
    grant(admin, mine["id"], "READ_ONLY", user=user)
    base = str(reader.base_url).rstrip("/").replace("/rest/v1", "/rest/labs")
    seen = reader.get(f"{base}/records", params={"items": [first, hidden], "testruns": [run]})
    assert seen.status_code == 200, seen.text
    assert list(seen.json()["data"]["items"]) == [str(first)]
    assert list(seen.json()["data"]["testruns"]) == [str(run)]
    alone = reader.get(f"{base}/records", params={"items": [hidden], "projects": [other["id"]]})
    assert alone.status_code == 200, alone.text
    assert alone.json()["data"] == {"items": {}, "projects": {}}


def test_bad_asks_are_refused_with_what_is_allowed(admin: httpx.Client, labs: httpx.Client) -> None:
    assert_error(labs.get("/records"), 400, "Between 1 and 200", "items", "testruns")
    too_many = {"items": list(range(1, 150)), "testruns": list(range(1, 60))}
    assert_error(labs.get("/records", params=too_many), 400, "Between 1 and 200", "got 208")
    assert_error(labs.get("/records", params={"items": "one"}), 400, "items")
    # Labs only.
    assert admin.get("/records", params={"items": [1]}).status_code == 404
