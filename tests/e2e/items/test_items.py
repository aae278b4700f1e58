"""Items: the requirements tree over HTTP; locks."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from tests.e2e.api import MakeUser, create_item, grant, unique
from tests.e2e.topology import System


def test_create_and_read_an_item(admin: httpx.Client, project: dict[str, Any]) -> None:
    item_id = create_item(admin, project, "Login works", description="<p>As a user</p>")
    body = admin.get(
        f"/items/{item_id}", params=[("include", "data.createdBy"), ("include", "data.itemType")]
    ).json()
    data = body["data"]
    req = project["types"]["REQ"]
    assert data["documentKey"] == f"{project['key']}-REQ-1"
    assert data["fields"]["documentKey"] == data["documentKey"]
    assert data["globalId"].startswith("GID-")
    assert data["fields"]["globalId"] == data["globalId"]
    assert (data["itemType"], data["project"], data["type"]) == (req["id"], project["id"], "items")
    assert data["resources"]["self"]["allowed"] == ["GET", "PUT", "DELETE"]
    assert data["lock"]["locked"] is False
    assert data["location"]["parent"] == {"project": project["id"]}
    status = next(f for f in req["fields"] if f["name"] == "status")
    assert isinstance(data["fields"]["status"], int), "the pick list default is applied"
    assert body["linked"]["itemtypes"][str(req["id"])]["typeKey"] == "REQ"
    assert body["linked"]["users"][str(data["createdBy"])]["username"] == "admin"
    assert body["links"]["data.fields.status"]["type"] == "picklistoptions"
    assert status["pickList"]


def test_put_replaces_fields_and_ignores_read_only_ones(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    item_id = create_item(admin, project, "Old", description="d")
    data = admin.get(f"/items/{item_id}").json()["data"]
    data["fields"]["name"] = "New"
    data["fields"]["documentKey"] = "HACKED-1"
    response = admin.put(f"/items/{item_id}", json=data)
    assert response.status_code == 200
    assert response.json()["meta"]["status"] == "OK"
    after = admin.get(f"/items/{item_id}").json()["data"]
    assert after["fields"]["name"] == "New"
    assert after["documentKey"] == data["documentKey"] != "HACKED-1"
    assert after["modifiedDate"] >= data["modifiedDate"]
    cleared = admin.put(f"/items/{item_id}", json={"fields": {"name": "Only name"}})
    assert cleared.status_code == 200
    assert "description" not in admin.get(f"/items/{item_id}").json()["data"]["fields"]
    missing = admin.put(f"/items/{item_id}", json={"fields": {"description": "no name"}})
    assert missing.status_code == 400
    assert "fields.name" in missing.json()["meta"]["message"]


def test_fields_that_cannot_be_stored_are_400s(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    # Found by schemathesis: these were 500s (the gateway could not encode them).
    item_id = create_item(admin, project, "Plain")
    body = {"project": project["id"], "itemType": project["types"]["REQ"]["id"]}
    for fields, words in (
        (
            '{"name": "n", "description": 99999999999999999999}',
            "fields.description must be between",
        ),
        ('{"name": "half \\udc9a"}', "fields.name is not valid Unicode"),
        ('{"name": "n", "description": "a\\u0000b"}', "fields.description must not contain NUL"),
    ):
        content = (
            f'{{"project": {body["project"]}, "itemType": {body["itemType"]}, "fields": {fields}}}'
        )
        headers = {"Content-Type": "application/json"}
        for response in (
            admin.post("/items", content=content, headers=headers),
            admin.put(f"/items/{item_id}", content=content, headers=headers),
        ):
            assert response.status_code == 400, response.text
            assert words in response.json()["meta"]["message"]
    # NUL in a PATCH value was a 500 on PostgreSQL.
    operations = [{"op": "replace", "path": "/fields/name", "value": "a\u0000b"}]
    for response in (
        admin.patch(f"/items/{item_id}", json=operations),
        admin.patch("/items", json=[{"id": item_id, "operations": operations}]),
    ):
        assert response.status_code == 400, response.text
        assert "NUL" in response.json()["meta"]["message"]
    assert admin.get(f"/items/{item_id}").json()["data"]["fields"]["name"] == "Plain"


def test_field_validation_names_the_field(admin: httpx.Client, project: dict[str, Any]) -> None:
    req = project["types"]["REQ"]
    base = {"project": project["id"], "itemType": req["id"]}
    cases = [
        ({"name": "x", "colour": "red"}, "fields.colour is not a field"),
        ({"name": 5}, "fields.name must be a string"),
        ({}, "fields.name is required"),
        ({"name": "x", "priority": 999999}, "fields.priority"),
        ({"name": "x", "priority": "High"}, "fields.priority"),
        ({"name": "x", "assignedTo": "admin"}, "fields.assignedTo"),
        ({"name": "x" * 256}, "at most 255"),
    ]
    for fields, message in cases:
        response = admin.post("/items", json={**base, "fields": fields})
        assert response.status_code == 400, (fields, response.text)
        assert message in response.json()["meta"]["message"], response.json()["meta"]["message"]
    for body, message in (
        ({"itemType": req["id"], "fields": {"name": "x"}}, "project"),
        ({"project": project["id"], "fields": {"name": "x"}}, "itemType"),
        ({**base, "itemType": 987654, "fields": {"name": "x"}}, "itemType"),
        (
            {**base, "location": {"parent": {"item": 987654}}, "fields": {"name": "x"}},
            "location.parent.item",
        ),
        ({**base, "project": 987654, "fields": {"name": "x"}}, "project"),
        (
            {**base, "itemType": project["types"]["TSTRN"]["id"], "fields": {"name": "x"}},
            "own resource",
        ),
    ):
        response = admin.post("/items", json=body)
        assert response.status_code == 400, response.text
        assert message in response.json()["meta"]["message"], response.text


INT64 = "between -9223372036854775808 and 9223372036854775807"


def test_integers_wider_than_64_bits_are_400s_that_name_the_field(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    base = {"project": project["id"], "itemType": project["types"]["REQ"]["id"]}
    item_id = create_item(admin, project, "Numbers")
    for value in (2**70, 2**64 - 1, 2**63, -(2**63) - 1):
        for name in ("priority", "assignedTo", "release"):
            fields = {"name": "x", name: value}
            for response in (
                admin.post("/items", json={**base, "fields": fields}),
                admin.put(f"/items/{item_id}", json={"fields": fields}),
            ):
                assert response.status_code == 400, (name, value, response.text)
                assert (
                    f"fields.{name} must be {INT64}, got {value}."
                    in response.json()["meta"]["message"]
                )
        nested = admin.post("/items", json={**base, "fields": {"name": "x", "tags": [1, value]}})
        assert nested.status_code == 400
        assert f"fields.tags[1] must be {INT64}" in nested.text
    for value in (2**64 - 1, 2**63):  # wider values reach PATCH as floats: still a 400
        for path, where in (
            ("/fields/priority", "fields.priority"),
            ("/fields/assignedTo", "fields.assignedTo"),
            ("/location/parent/item", "location.parent.item"),
        ):
            patched = admin.patch(
                f"/items/{item_id}", json=[{"op": "add", "path": path, "value": value}]
            )
            assert patched.status_code == 400, patched.text
            assert f"{where} must be {INT64}" in patched.json()["meta"]["message"]
    for value in (2**70, -(2**63) - 1):
        patched = admin.patch(
            f"/items/{item_id}", json=[{"op": "add", "path": "/fields/priority", "value": value}]
        )
        assert patched.status_code == 400, patched.text
    unpaired = admin.post(
        "/items",
        content=b'{"project": %d, "itemType": %d, "fields": {"name": "a\\ud800"}}'
        % (base["project"], base["itemType"]),
        headers={"Content-Type": "application/json"},
    )
    assert unpaired.status_code == 400
    assert "fields.name" in unpaired.json()["meta"]["message"]
    deep = admin.post("/items", json={**base, "fields": {"name": "x", "description": _nested(300)}})
    assert deep.status_code == 400
    assert "fields" in deep.json()["meta"]["message"]
    assert admin.get(f"/items/{item_id}").json()["data"]["fields"]["name"] == "Numbers"


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def test_ids_wider_than_64_bits_elsewhere_are_400s(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    item_id = create_item(admin, project, "Ids")
    for method, path, body in (
        ("POST", "/relationships", {"fromItem": 2**64, "toItem": item_id}),
        ("POST", "/items", {"project": -(2**63) - 1, "fields": {"name": "x"}}),
        ("POST", f"/items/{item_id}/synceditems", {"item": 2**70}),
        ("POST", f"/items/{item_id}/tags", {"tag": 2**63}),
        ("PUT", "/items/treelocation", {"item": item_id, "parent": {"item": 2**63}}),
        ("PATCH", "/items", [{"id": 2**64 - 1, "operations": []}]),
    ):
        response = admin.request(method, path, json=body)
        assert response.status_code == 400, (method, path, response.text)
        assert "9223372036854775807" in response.json()["meta"]["message"]


MAX_BODY = 8 * 1024 * 1024  # PLUMBLINE_MAX_BODY_BYTES' default


def test_a_body_over_the_limit_is_413_and_one_under_it_meets_the_field_rules(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    def body(size: int) -> bytes:
        head = b'{"project": %d, "itemType": %d, "fields": {"name": "x", "description": "' % (
            project["id"],
            project["types"]["REQ"]["id"],
        )
        return head + b"y" * (size - len(head) - 3) + b'"}}'

    def chunks(data: bytes) -> Iterator[bytes]:
        for start in range(0, len(data), 1 << 16):
            yield data[start : start + (1 << 16)]

    json_type = {"Content-Type": "application/json"}
    for over in (
        admin.post("/items", content=body(MAX_BODY + 1), headers=json_type),
        admin.post("/items", content=chunks(body(MAX_BODY + 1)), headers=json_type),
        admin.patch("/items/1", content=b"[" + b" " * MAX_BODY + b"]", headers=json_type),
    ):
        assert over.status_code == 413, over.text
        assert "retry-after" not in over.headers
        meta = over.json()["meta"]
        assert meta["status"] == "Request Entity Too Large"
        assert "must be at most 8388608 bytes (8 MiB)" in meta["message"]
    for under in (
        admin.post("/items", content=body(MAX_BODY), headers=json_type),
        admin.post("/items", content=chunks(body(MAX_BODY)), headers=json_type),
        admin.post("/items", content=body(4_300_038), headers=json_type),
    ):
        assert under.status_code == 400, under.text[:300]
        assert under.json()["meta"]["message"] == (
            "fields.description must be at most 1000000 characters."
        )


def test_global_id_needs_set_global_id_manually(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    body = {
        "project": project["id"],
        "itemType": project["types"]["REQ"]["id"],
        "globalId": unique("GID-MINE-"),
        "fields": {"name": "x"},
    }
    refused = admin.post("/items", json=body)
    assert refused.status_code == 400
    assert "setGlobalIdManually" in refused.json()["meta"]["message"]
    for value in ("true", "True", "TRUE"):
        body["globalId"] = unique("GID-MINE-")
        created = admin.post(f"/items?setGlobalIdManually={value}", json=body)
        assert created.status_code == 201, created.text
        item = admin.get(f"/items/{created.json()['meta']['id']}").json()["data"]
        assert item["globalId"] == body["globalId"]


def test_patch_semantics(admin: httpx.Client, project: dict[str, Any]) -> None:
    item_id = create_item(admin, project, "Patch me")
    ok = admin.patch(
        f"/items/{item_id}",
        json=[
            {"op": "replace", "path": "/fields/name", "value": "Patched"},
            {"op": "add", "path": "/fields/description", "value": "added"},
        ],
    )
    assert ok.status_code == 200
    assert ok.json()["meta"]["status"] == "OK"
    fields = admin.get(f"/items/{item_id}").json()["data"]["fields"]
    assert (fields["name"], fields["description"]) == ("Patched", "added")
    removed = admin.patch(
        f"/items/{item_id}", json=[{"op": "remove", "path": "/fields/description"}]
    )
    assert removed.status_code == 200
    assert "description" not in admin.get(f"/items/{item_id}").json()["data"]["fields"]
    for operations, message in (
        (
            [{"op": "replace", "path": "/fields/description", "value": "x"}],
            "no such path in target JSON document",
        ),
        ([{"op": "remove", "path": "/nothing"}], "no such path in target JSON document"),
        (
            [{"op": "replace", "path": "/fields/name/deeper", "value": "x"}],
            "The value you provided could not be set at the path.",
        ),
        (
            [{"op": "replace", "path": "/fields/name", "value": 42}],
            "The value you provided could not be set at the path.",
        ),
        ([{"op": "move", "path": "/fields/name", "from": "/x"}], "op must be one of"),
        ([{"op": "replace", "path": "/fields/name"}], "needs a value"),
        ({"op": "replace"}, "JSON array"),
    ):
        response = admin.patch(f"/items/{item_id}", json=operations)
        assert response.status_code == 400, response.text
        assert message in response.json()["meta"]["message"]
    assert admin.get(f"/items/{item_id}").json()["data"]["fields"]["name"] == "Patched"


def test_patch_of_a_field_the_type_lacks_names_it_and_the_types_fields(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    item_id = create_item(admin, project, "Patch me")
    names = ", ".join(
        f["name"]
        for f in project["types"]["REQ"]["fields"]
        if f["name"] not in ("documentKey", "globalId")
    )
    for op in ("add", "replace", "remove"):
        operation: dict[str, Any] = {"op": op, "path": "/fields/foo"}
        if op != "remove":
            operation["value"] = 1
        response = admin.patch(f"/items/{item_id}", json=[operation])
        assert response.status_code == 400, response.text
        assert response.json()["meta"]["message"] == (
            "no such path in target JSON document: /fields/foo; the item type Requirement "
            f"has the fields: {names}."
        )
    unset = admin.patch(
        f"/items/{item_id}",
        json=[{"op": "replace", "path": "/fields/description", "value": "x"}],
    )
    assert unset.status_code == 400
    assert unset.json()["meta"]["message"].startswith(
        "no such path in target JSON document: /fields/description;"
    )
    elsewhere = admin.patch(f"/items/{item_id}", json=[{"op": "remove", "path": "/nothing"}])
    assert elsewhere.json()["meta"]["message"] == "no such path in target JSON document: /nothing"


def test_dates_with_time_header(admin: httpx.Client, project: dict[str, Any]) -> None:
    plan = project["types"]["FEAT"]
    response = admin.post(
        "/items", json={"project": project["id"], "itemType": plan["id"], "fields": {"name": "f"}}
    )
    assert response.status_code == 201
    item_id = response.json()["meta"]["id"]
    feature_field = unique("due")
    admin.post(
        f"/itemtypes/{plan['id']}/fields",
        json={"name": feature_field, "label": "Due", "fieldType": "DATE"},
    ).raise_for_status()
    name = f"{feature_field}${plan['id']}"
    # The item-type cache of the services refreshes within seconds.
    import time

    deadline = time.monotonic() + 10
    while True:
        put = admin.patch(
            f"/items/{item_id}",
            json=[{"op": "add", "path": f"/fields/{name}", "value": "2024-02-29"}],
        )
        if put.status_code == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert put.status_code == 200, put.text
    assert admin.get(f"/items/{item_id}").json()["data"]["fields"][name] == "2024-02-29"
    for header in ("x-service-date-fields-with-time", "x-jama-date-fields-with-time"):
        with_time = admin.get(f"/items/{item_id}", headers={header: "true"}).json()["data"][
            "fields"
        ]
        assert with_time[name] == "2024-02-29T00:00:00.000+0000"
    # true in any capitalisation asks for the time, any other value does not (a list too).
    for value, shown in (("TRUE", with_time[name]), ("false", "2024-02-29"), ("yes", "2024-02-29")):
        asked = {"x-service-date-fields-with-time": value}
        listed = admin.get("/items", params={"project": project["id"]}, headers=asked)
        assert [i["fields"][name] for i in listed.json()["data"] if i["id"] == item_id] == [shown]
    bad = admin.patch(
        f"/items/{item_id}",
        json=[{"op": "replace", "path": f"/fields/{name}", "value": "2024-02-30"}],
    )
    assert bad.status_code == 400


def test_items_list_needs_a_project_and_pages(admin: httpx.Client, project: dict[str, Any]) -> None:
    assert admin.get("/items").status_code == 400
    assert admin.get("/items", params={"project": 987654}).status_code == 404
    for n in range(5):
        create_item(admin, project, f"N{n}")
    first = admin.get("/items", params={"project": project["id"], "maxResults": 2}).json()
    assert first["meta"]["pageInfo"] == {"startIndex": 0, "resultCount": 2, "totalResults": 5}
    last = admin.get(
        "/items", params={"project": project["id"], "startAt": 4, "maxResults": 2}
    ).json()
    assert [i["fields"]["name"] for i in last["data"]] == ["N4"]


def test_item_changes_reach_the_activity_feed(admin: httpx.Client, project: dict[str, Any]) -> None:
    item_id = create_item(admin, project, "Tracked")
    admin.patch(
        f"/items/{item_id}", json=[{"op": "replace", "path": "/fields/name", "value": "Tracked 2"}]
    )
    admin.delete(f"/items/{item_id}")
    feed = admin.get("/activities", params={"project": project["id"], "objectType": "ITEM"}).json()[
        "data"
    ]
    assert [(a["eventType"], a["item"]) for a in feed] == [
        ("DELETE", item_id),
        ("UPDATE", item_id),
        ("CREATE", item_id),
    ]
    by_type = admin.get(
        "/activities", params={"project": project["id"], "itemType": project["types"]["REQ"]["id"]}
    ).json()["data"]
    assert len(by_type) == 3


def test_duplicate(admin: httpx.Client, project: dict[str, Any]) -> None:
    parent = create_item(admin, project, "Folder-ish")
    source = create_item(
        admin, project, "Original", parent=parent, description="text", priority=None
    )
    tag = admin.post("/tags", json={"name": unique("dup"), "project": project["id"]}).json()[
        "meta"
    ]["id"]
    admin.post(f"/items/{source}/tags", json={"tag": tag})
    admin.post(f"/items/{source}/links", json={"url": "https://example.com"})
    copied = admin.post(
        f"/items/{source}/duplicate", json={"includeTags": True, "includeLinks": True}
    )
    assert copied.status_code == 201, copied.text
    copy_id = copied.json()["meta"]["id"]
    copy = admin.get(f"/items/{copy_id}").json()["data"]
    assert (copy["fields"]["name"], copy["fields"]["description"]) == ("Original", "text")
    assert copy["location"]["parent"] == {"item": parent}
    assert copy["location"]["sortOrder"] == 1
    assert copy["documentKey"] != admin.get(f"/items/{source}").json()["data"]["documentKey"]
    assert [t["id"] for t in admin.get(f"/items/{copy_id}/tags").json()["data"]] == [tag]
    assert len(admin.get(f"/items/{copy_id}/links").json()["data"]) == 1
    plain = admin.post(f"/items/{source}/duplicate", json={}).json()["meta"]["id"]
    assert admin.get(f"/items/{plain}/tags").json()["data"] == []
    refused = admin.post(f"/items/{parent}/duplicate", json={})
    assert refused.status_code == 400
    assert "children" in refused.json()["meta"]["message"]


def test_bulk_patch(admin: httpx.Client, project: dict[str, Any]) -> None:
    first = create_item(admin, project, "One")
    second = create_item(admin, project, "Two")
    body = [
        {"id": first, "operations": [{"op": "replace", "path": "/fields/name", "value": "One!"}]},
        {"id": second, "operations": [{"op": "replace", "path": "/fields/nothing", "value": 1}]},
        {"id": 987654, "operations": []},
    ]
    response = admin.patch("/items", json=body)
    assert response.status_code == 200, response.text
    results = {r["id"]: r for r in response.json()["data"]["results"]}
    assert results[first]["status"] == 200
    assert results[second]["status"] == 400
    assert "no such path" in results[second]["message"]
    assert results[987654]["status"] == 404
    assert admin.get(f"/items/{first}").json()["data"]["fields"]["name"] == "One!"
    assert admin.get(f"/items/{second}").json()["data"]["fields"]["name"] == "Two"
    for bad in (
        [],
        {"id": first},
        [{"id": "x", "operations": []}],
        [{"id": first, "operations": [], "extra": 1}],
    ):
        assert admin.patch("/items", json=bad).status_code == 400


def test_concurrent_creates_keep_keys_and_order_unique(
    admin: httpx.Client, project: dict[str, Any], system: System
) -> None:
    import concurrent.futures

    parent = create_item(admin, project, "Busy parent")

    def create(n: int) -> int:
        with system.client(("admin", system.admin_password), timeout=60) as client:
            response = client.post(
                "/items",
                json={
                    "project": project["id"],
                    "itemType": project["types"]["REQ"]["id"],
                    "location": {"parent": {"item": parent}},
                    "fields": {"name": f"c{n}"},
                },
            )
            assert response.status_code == 201, response.text
            return int(response.json()["meta"]["id"])

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(create, range(24)))
    children = admin.get(f"/items/{parent}/children", params={"maxResults": 50}).json()["data"]
    assert sorted(c["id"] for c in children) == sorted(ids)
    assert sorted(c["location"]["sortOrder"] for c in children) == list(range(24))
    assert len({c["documentKey"] for c in children}) == 24
    orders = [c["location"]["globalSortOrder"] for c in children]
    assert len(set(orders)) == 24


def test_every_page_of_a_tree_and_of_children_is_its_slice_of_the_whole(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    """Deep pages seek to their first row; after moves and deletes they must still tile."""
    top = [create_item(admin, project, f"T{n}") for n in range(3)]
    for n in range(4):
        create_item(admin, project, f"T0.{n}", parent=top[0])
        create_item(admin, project, f"T2.{n}", parent=top[2])
    doomed = create_item(admin, project, "T0.gone", parent=top[0])
    assert admin.delete(f"/items/{doomed}").status_code == 204
    moved = admin.put("/items/treelocation", json={"item": top[1], "parent": {"item": top[0]}})
    assert moved.status_code == 200, moved.text

    for url, params in (
        ("/items", {"project": project["id"]}),
        (f"/items/{top[0]}/children", {}),
    ):
        body = admin.get(url, params={**params, "maxResults": 50}).json()
        whole = [i["id"] for i in body["data"]]
        assert len(whole) == (11 if params else 5)
        for size in (1, 2, 5):
            for start in range(0, len(whole) + 2):
                response = admin.get(url, params={**params, "startAt": start, "maxResults": size})
                assert response.status_code == 200, response.text
                page = response.json()
                assert [i["id"] for i in page["data"]] == whole[start : start + size]
                assert page["meta"]["pageInfo"]["totalResults"] == len(whole)


def test_lock_blocks_other_users(
    admin: httpx.Client, project: dict[str, Any], make_user: MakeUser
) -> None:
    item = create_item(admin, project, "I")
    assert admin.get(f"/items/{item}/lock").json()["data"]["locked"] is False
    assert admin.put(f"/items/{item}/lock", json={"locked": True}).status_code == 200
    lock = admin.get(f"/items/{item}/lock", params={"include": "data.lockedBy"}).json()
    assert lock["data"]["locked"] is True
    assert lock["data"]["lastLockedDate"].endswith("+0000")
    admin_id = admin.get("/users/current").json()["data"]["id"]
    assert lock["data"]["lockedBy"] == admin_id
    assert lock["linked"]["users"][str(admin_id)]["username"] == "admin"
    other_id, _name, _pw, other = make_user()
    grant(admin, project["id"], user=other_id)
    seen = other.get(f"/items/{item}").json()["data"]
    assert seen["resources"]["self"]["allowed"] == ["GET"]
    refused = other.patch(
        f"/items/{item}", json=[{"op": "replace", "path": "/fields/name", "value": "x"}]
    )
    assert refused.status_code == 400
    assert "locked" in refused.json()["meta"]["message"]
    assert other.put(f"/items/{item}/lock", json={"locked": False}).status_code == 400
    assert other.delete(f"/items/{item}").status_code == 400
    assert (
        admin.patch(
            f"/items/{item}", json=[{"op": "replace", "path": "/fields/name", "value": "mine"}]
        ).status_code
        == 200
    )
    assert admin.put(f"/items/{item}/lock", json={"locked": False}).status_code == 200
    assert (
        other.patch(
            f"/items/{item}", json=[{"op": "replace", "path": "/fields/name", "value": "x"}]
        ).status_code
        == 200
    )


def test_concurrent_patches_of_one_item_all_land(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    """20 PATCHes at once, each adding another field of one item: none is lost."""
    count = 20
    feature = project["types"]["FEAT"]
    names = []
    for n in range(count):
        name = unique(f"f{n}_")
        created = admin.post(
            f"/itemtypes/{feature['id']}/fields",
            json={"name": name, "label": f"Field {n}", "fieldType": "TEXT"},
        )
        assert created.status_code == 201, created.text
        names.append(f"{name}${feature['id']}")
    body = {"project": project["id"], "itemType": feature["id"], "fields": {"name": "Probe"}}
    probe = admin.post("/items", json=body).json()["meta"]["id"]
    every = [{"op": "add", "path": f"/fields/{n}", "value": "x"} for n in names]
    # The item-type cache of the services refreshes within seconds.
    deadline = time.monotonic() + 15
    while admin.patch(f"/items/{probe}", json=every).status_code != 200:
        assert time.monotonic() < deadline, "the new fields never became usable"
        time.sleep(0.2)
    body["fields"] = {"name": "Busy"}
    item = admin.post("/items", json=body).json()["meta"]["id"]

    def add(n: int) -> int:
        patch = [{"op": "add", "path": f"/fields/{names[n]}", "value": f"value {n}"}]
        return admin.patch(f"/items/{item}", json=patch).status_code

    with ThreadPoolExecutor(max_workers=count) as pool:
        answers = list(pool.map(add, range(count)))
    assert answers == [200] * count
    fields = admin.get(f"/items/{item}").json()["data"]["fields"]
    assert [fields.get(name) for name in names] == [f"value {n}" for n in range(count)]
