"""Item types, pick lists, relationship types: the shipped configuration and its changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.e2e.api import (
    MakeUser,
    Team,
    assert_error,
    create_item,
    item_types,
    new_project,
    project_key,
    unique,
)
from tests.e2e.topology import System, run_cli


def test_default_item_types_ship_with_the_keys_clients_expect(admin: httpx.Client) -> None:
    types = item_types(admin)
    assert {
        "REQ",
        "FEAT",
        "DEF",
        "FLD",
        "SET",
        "TXT",
        "TC",
        "TSTPL",
        "TSTCY",
        "TSTRN",
        "ATT",
    } <= set(types)
    categories = {t["typeKey"]: t["category"] for t in types.values()}
    assert categories["TC"] == "TEST_CASE"
    assert categories["TSTRN"] == "TEST_RUN"
    assert categories["ATT"] == "ATTACHMENT"
    assert categories["SET"] == "SET"
    test_case = {f["name"]: f for f in types["TC"]["fields"]}
    assert test_case["testCaseSteps"]["fieldType"] == "STEPS"
    requirement = types["REQ"]
    names = [f["name"] for f in requirement["fields"]]
    assert names[:3] == ["documentKey", "globalId", "name"]
    assert f"risk${requirement['id']}" in names
    status = next(f for f in requirement["fields"] if f["name"] == "status")
    assert status["fieldType"] == "LOOKUP"
    assert isinstance(status["pickList"], int)
    one = admin.get(f"/itemtypes/{requirement['id']}").json()
    assert one["data"]["typeKey"] == "REQ"
    assert "data.fields.pickList" in one["links"]


def test_pick_lists_and_options(admin: httpx.Client) -> None:
    requirement = item_types(admin)["REQ"]
    status = next(f for f in requirement["fields"] if f["name"] == "status")
    with_lists = admin.get(
        f"/itemtypes/{requirement['id']}", params={"include": "data.fields.pickList"}
    ).json()
    assert with_lists["linked"]["picklists"][str(status["pickList"])]["name"] == "Status"
    options = admin.get(f"/picklists/{status['pickList']}/options").json()
    names = [o["name"] for o in options["data"]]
    assert names[:3] == ["Draft", "In Review", "Approved"]
    assert [o["default"] for o in options["data"]].count(True) == 1

    name = unique("Opt ")
    created = admin.post(
        f"/picklists/{status['pickList']}/options", json={"name": name, "color": "#00ff00"}
    )
    assert created.status_code == 201
    option_id = created.json()["meta"]["id"]
    option = admin.get(f"/picklistoptions/{option_id}").json()["data"]
    assert (option["name"], option["color"], option["active"]) == (name, "#00ff00", True)
    again = admin.post(f"/picklists/{status['pickList']}/options", json={"name": name})
    assert again.status_code == 400
    assert "already exists" in again.json()["meta"]["message"]
    option["description"] = "changed"
    assert admin.put(f"/picklistoptions/{option_id}", json=option).status_code == 200
    assert admin.get(f"/picklistoptions/{option_id}").json()["data"]["description"] == "changed"
    assert admin.get("/picklistoptions/987654").status_code == 404
    lists = admin.get("/picklists").json()
    assert lists["meta"]["pageInfo"]["totalResults"] >= 5


def test_relationship_types_have_one_default(admin: httpx.Client) -> None:
    body = admin.get("/relationshiptypes").json()
    defaults = [t for t in body["data"] if t["isDefault"]]
    assert len(defaults) == 1
    assert defaults[0]["name"] == "Related to"
    one = admin.get(
        f"/relationshiptypes/{defaults[0]['id']}",
        params={"timestamp": "2024-01-01T00:00:00.000+0000"},
    )
    assert one.json()["data"]["name"] == "Related to"
    assert (
        admin.get(f"/relationshiptypes/{defaults[0]['id']}", params={"timestamp": "x"}).status_code
        == 400
    )


def test_add_fields_to_an_item_type(admin: httpx.Client) -> None:
    feature = item_types(admin)["FEAT"]
    name = unique("effort")
    created = admin.post(
        f"/itemtypes/{feature['id']}/fields",
        json={"name": name, "label": "Effort", "fieldType": "INTEGER"},
    )
    assert created.status_code == 201, created.text
    lookup = unique("tier")
    admin.post(
        f"/itemtypes/{feature['id']}/fields",
        json={
            "name": lookup,
            "label": "Tier",
            "fieldType": "LOOKUP",
            "pickListValues": ["Gold", "Silver"],
        },
    ).raise_for_status()
    fields = {
        f["name"]: f for f in admin.get(f"/itemtypes/{feature['id']}").json()["data"]["fields"]
    }
    assert fields[f"{name}${feature['id']}"]["fieldType"] == "INTEGER"
    tier = fields[f"{lookup}${feature['id']}"]
    options = admin.get(f"/picklists/{tier['pickList']}/options").json()["data"]
    assert [o["name"] for o in options] == ["Gold", "Silver"]
    twice = admin.post(
        f"/itemtypes/{feature['id']}/fields",
        json={"name": name, "label": "E", "fieldType": "INTEGER"},
    )
    assert twice.status_code == 400
    assert "already exists" in twice.json()["meta"]["message"]
    no_list = admin.post(
        f"/itemtypes/{feature['id']}/fields",
        json={"name": unique("x"), "label": "X", "fieldType": "LOOKUP"},
    )
    assert no_list.status_code == 400
    assert "pick" in no_list.json()["meta"]["message"]
    bad_type = admin.post(
        f"/itemtypes/{feature['id']}/fields", json={"name": "y", "label": "Y", "fieldType": "BLOB"}
    )
    assert bad_type.status_code == 400
    assert "fieldType" in bad_type.json()["meta"]["message"]


def test_project_item_types(admin: httpx.Client) -> None:
    key = project_key("IT")
    project = new_project(admin, key)
    types = admin.get(f"/projects/{project}/itemtypes", params={"maxResults": 50}).json()
    assert "REQ" in {t["typeKey"] for t in types["data"]}
    assert admin.get("/projects/987654/itemtypes").status_code == 404


def test_add_an_item_type_to_a_project(admin: httpx.Client) -> None:
    project = new_project(admin, project_key("AT"))
    feature = item_types(admin)["FEAT"]
    path = f"/projects/{project}/itemtypes/{feature['id']}"
    for _ in range(2):  # idempotent: the second PUT answers the same
        added = admin.put(path)
        assert added.status_code == 200, added.text
        assert added.json()["meta"]["status"] == "OK"
    listed = admin.get(f"/projects/{project}/itemtypes", params={"maxResults": 50}).json()
    assert feature["id"] in [t["id"] for t in listed["data"]]
    assert admin.put(path, json={"id": feature["id"]}).status_code == 200  # a body is ignored
    assert_error(admin.put(f"/projects/{project}/itemtypes/987654"), 404, "item type", "987654")
    assert_error(admin.put(f"/projects/987654/itemtypes/{feature['id']}"), 404, "987654")
    folder = admin.post("/projects", json={"isFolder": True, "fields": {"name": unique("F")}})
    assert_error(
        admin.put(f"/projects/{folder.json()['meta']['id']}/itemtypes/{feature['id']}"),
        400,
        "folder",
    )


def test_only_administrators_add_item_types_to_a_project(team: Team) -> None:
    feature = item_types(team.clients["ORG_ADMIN"])["FEAT"]
    path = f"/projects/{team.project['id']}/itemtypes/{feature['id']}"
    for role, may in team.expect("PROJECT_ADMIN").items():
        answer = team.clients[role].put(path)
        if may:
            assert answer.status_code == 200, (role, answer.text)
        else:
            assert_error(answer, 401, str(team.project["id"]))
    assert_error(team.clients["READ_WRITE"].put(path), 401, "READ_WRITE", "PROJECT_ADMIN")
    assert_error(team.clients["NONE"].put(path), 401, "no access")


def test_normal_users_read_but_do_not_change_configuration(make_user: MakeUser) -> None:
    _id, _name, _pw, client = make_user()
    types = client.get("/itemtypes").json()["data"]
    assert types
    refused = client.post(
        f"/itemtypes/{types[0]['id']}/fields",
        json={"name": "z", "label": "Z", "fieldType": "STRING"},
    )
    assert refused.status_code == 401


def test_config_apply_is_idempotent_and_reports_changes(
    system: System, admin: httpx.Client, tmp_path: Path
) -> None:
    key = project_key("CUST")[:12]
    document = tmp_path / "config.yaml"
    document.write_text(
        f"""
pickLists:
  - name: {key} Colours
    options: [{{name: Red}}, {{name: Blue, default: true}}]
itemTypes:
  - typeKey: {key}
    display: Custom
    displayPlural: Customs
    category: CORE
    fields:
      - {{name: name, label: Name, fieldType: STRING, required: true}}
      - {{name: colour, label: Colour, fieldType: LOOKUP, pickList: {key} Colours, custom: true}}
"""
    )

    def apply(*extra: str) -> str:
        result = run_cli(system, "config", "apply", str(document), *extra)
        assert result.returncode == 0, result.stderr
        return result.stdout

    dry = apply("--dry-run")
    assert f"would create item type {key}" in dry
    assert "would change" in dry
    assert "\ncreated " not in "\n" + dry  # a dry run tells what would happen, not what did
    first = apply()
    assert f"created item type {key}" in first
    assert f"created pick list '{key} Colours'" in first
    assert apply().strip() == "nothing to change"
    broken = tmp_path / "broken.yaml"
    broken.write_text("itemTypes: [{typeKey: lower, display: X}]")
    result = run_cli(system, "config", "apply", str(broken))
    assert result.returncode == 2
    assert "typeKey" in result.stderr


def test_an_included_item_type_shows_a_field_added_a_moment_ago(admin: httpx.Client) -> None:
    """The gateway keeps item types for include=data.itemType; a change through it shows."""
    feature = item_types(admin)["FEAT"]
    project = new_project(admin, project_key("IN"))
    item = admin.post(
        "/items",
        json={"project": project, "itemType": feature["id"], "fields": {"name": "Cached"}},
    )
    assert item.status_code == 201, item.text
    url = f"/items/{item.json()['meta']['id']}"

    def included_fields() -> set[str]:
        body = admin.get(url, params={"include": "data.itemType"}).json()
        return {f["name"] for f in body["linked"]["itemtypes"][str(feature["id"])]["fields"]}

    name = unique("risk")
    assert f"{name}${feature['id']}" not in included_fields()  # the cache is warm now
    admin.post(
        f"/itemtypes/{feature['id']}/fields",
        json={"name": name, "label": "Risk", "fieldType": "INTEGER"},
    ).raise_for_status()
    assert f"{name}${feature['id']}" in included_fields()


def test_relationship_rule_sets(admin: httpx.Client) -> None:
    sets = admin.get("/relationshiprulesets").json()
    traceability = next(r for r in sets["data"] if r["name"] == "Traceability")
    rules = admin.get(
        f"/relationshiprulesets/{traceability['id']}",
        params={"include": "data.rules.relationshipType"},
    ).json()
    assert len(rules["data"]["rules"]) == 5
    names = {t["name"] for t in rules["linked"]["relationshiptypes"].values()}
    assert {"Derived from", "Verified by", "Related to"} <= names
    projects = admin.get(f"/relationshiprulesets/{traceability['id']}/projects").json()
    assert projects["meta"]["pageInfo"]["totalResults"] == len(projects["data"])
    assert admin.get("/relationshiprulesets/987654").status_code == 404


def test_fields_say_the_api_never_overwrites_a_read_only_one(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    """``readOnlyAllowApiOverwrite`` is on every field, false (the contract's default): the
    API does not write read-only fields, as an item's documentKey shows."""
    for item_type in item_types(admin).values():
        for field in item_type["fields"]:
            assert field["readOnlyAllowApiOverwrite"] is False, (item_type["typeKey"], field)
    requirement = admin.get(f"/itemtypes/{project['types']['REQ']['id']}").json()["data"]
    key = next(f for f in requirement["fields"] if f["name"] == "documentKey")
    assert key["readOnly"] is True
    assert key["readOnlyAllowApiOverwrite"] is False
    item = create_item(admin, project, "Keyed", documentKey="MINE-1")
    assert admin.get(f"/items/{item}").json()["data"]["documentKey"] != "MINE-1"
