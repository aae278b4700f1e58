"""Custom fields of item types: what POST .../fields refuses so that no type becomes
unusable, and the labs operations that change and delete a field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.api import (
    MakeUser,
    assert_error,
    eventually,
    item_types,
    new_project,
    project_key,
    unique,
)
from tests.e2e.topology import System, run_cli

BUILT_IN = ("TC", "TSTPL", "TSTCY", "TSTRN", "ATT")


def _fields(client: httpx.Client, type_id: int) -> dict[str, dict[str, Any]]:
    return {f["name"]: f for f in client.get(f"/itemtypes/{type_id}").json()["data"]["fields"]}


def _add(client: httpx.Client, type_id: int, **body: Any) -> httpx.Response:
    return client.post(f"/itemtypes/{type_id}/fields", json={"label": "Label", **body})


@pytest.fixture
def own_type(system: System, admin: httpx.Client, tmp_path: Path) -> dict[str, Any]:
    """An item type of this test's own (``plumbline config apply``), so that a required
    field on it stops no other test's creates."""
    key = project_key("FT")[:12]
    document = tmp_path / "type.yaml"
    document.write_text(
        f"""
itemTypes:
  - typeKey: {key}
    display: Fielded {key}
    displayPlural: Fielded
    category: CORE
    fields:
      - {{name: name, label: Name, fieldType: STRING, required: true}}
"""
    )
    result = run_cli(system, "config", "apply", str(document))
    assert result.returncode == 0, result.stderr
    assert eventually(lambda: key in item_types(admin))
    return item_types(admin)[key]


def test_a_required_field_without_a_default_is_refused_on_the_built_in_types(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    types = project["types"]
    for key in BUILT_IN:
        refused = _add(
            admin, types[key]["id"], name=unique("must"), fieldType="STRING", required=True
        )
        assert_error(refused, 400, "required", key, "required false")
        assert not any(
            f["required"] and "$" in f["name"] for f in _fields(admin, types[key]["id"]).values()
        )
    # The refusal left every create as it was: a test case is still made with a name only.
    case = admin.post(
        "/items",
        json={"project": project["id"], "itemType": types["TC"]["id"], "fields": {"name": "Still"}},
    )
    assert case.status_code == 201, case.text
    # A LOOKUP whose new pick list's first value is the default is required and harmless,
    # except on test runs, which no request creates.
    assert_error(
        _add(
            admin,
            types["TSTRN"]["id"],
            name=unique("tier"),
            fieldType="LOOKUP",
            required=True,
            pickListValues=["Gold"],
        ),
        400,
        "TSTRN",
        "the system creates every record of this type itself",
    )
    # Read-only, a required field is never asked for.
    shown = _add(
        admin,
        types["ATT"]["id"],
        name=unique("shown"),
        fieldType="STRING",
        required=True,
        readOnly=True,
    )
    assert shown.status_code == 201, shown.text


def test_names_that_shadow_system_fields_or_run_long_are_refused(admin: httpx.Client) -> None:
    types = item_types(admin)
    feature = types["FEAT"]["id"]
    for name in ("testRunSteps", "executionDate", "ExecutionDate", "documentKey", "testCase"):
        assert_error(
            _add(admin, feature, name=name, fieldType="STRING"),
            400,
            f"{name!r} is the name of the system field",
            "Names taken by system fields",
        )
    assert f"testRunSteps${feature}" not in _fields(admin, feature)
    assert_error(_add(admin, feature, name="a" * 101, fieldType="STRING"), 400, "name", "100")
    assert_error(_add(admin, feature, name="steps$2", fieldType="STRING"), 400, "name")
    fits = _add(admin, feature, name=unique("n") + "x" * 91, fieldType="STRING")
    assert fits.status_code == 201, fits.text


def test_a_field_is_changed_and_deleted_and_creates_work_again(
    admin: httpx.Client, labs: httpx.Client, own_type: dict[str, Any]
) -> None:
    type_id = own_type["id"]
    project = new_project(admin, project_key("FD"))
    name = unique("owner")
    added = _add(admin, type_id, name=name, fieldType="STRING", required=True)
    assert added.status_code == 201, added.text
    field_id = added.json()["meta"]["id"]
    stored = f"{name}${type_id}"
    assert _fields(admin, type_id)[stored]["id"] == field_id

    def create(**fields: Any) -> httpx.Response:
        body = {"project": project, "itemType": type_id, "fields": {"name": "x", **fields}}
        return admin.post("/items", json=body)

    assert eventually(lambda: create().status_code == 400)
    assert_error(create(), 400, f"fields.{stored} is required")
    kept = create(**{stored: "ann"})
    assert kept.status_code == 201, kept.text
    item = kept.json()["meta"]["id"]

    # PATCH: the label and the flags; nothing else.
    path = f"/itemtypes/{type_id}/fields/{field_id}"
    changed = labs.patch(path, json={"label": "Owner", "required": False, "triggerSuspect": True})
    assert changed.status_code == 200, changed.text
    assert eventually(lambda: _fields(admin, type_id)[stored]["label"] == "Owner")
    field = _fields(admin, type_id)[stored]
    assert (field["required"], field["triggerSuspect"], field["readOnly"]) == (False, True, False)
    assert eventually(lambda: create().status_code == 201)
    assert_error(labs.patch(path, json={"fieldType": "INTEGER"}), 400, "fieldType")
    assert_error(labs.patch(path, json={}), 400, "Nothing to change", "label, required")
    assert labs.patch(path, json={"required": True}).status_code == 200
    assert eventually(lambda: create().status_code == 400)

    # DELETE: the field goes, its values are hidden, and creates work again.
    assert labs.delete(path).status_code == 204
    assert eventually(lambda: stored not in _fields(admin, type_id))
    assert eventually(lambda: create().status_code == 201)
    data = admin.get(f"/items/{item}").json()["data"]
    assert stored not in data["fields"]
    # A GET's data PUT back, and a PATCH, work on the item as it is shown.
    put = admin.put(f"/items/{item}", json={"fields": data["fields"]})
    assert put.status_code == 200, put.text
    patch = admin.patch(
        f"/items/{item}", json=[{"op": "replace", "path": "/fields/name", "value": "y"}]
    )
    assert patch.status_code == 200, patch.text
    # The name stays taken on this type; the field is unknown now.
    assert_error(_add(admin, type_id, name=name, fieldType="STRING"), 400, "deleted field")
    assert_error(labs.delete(path), 404, str(field_id))
    assert_error(labs.patch(path, json={"label": "x"}), 404, str(field_id))


def test_system_fields_and_unknown_ones_are_not_changed(
    admin: httpx.Client, labs: httpx.Client
) -> None:
    types = item_types(admin)
    run = types["TSTRN"]
    steps = next(f for f in run["fields"] if f["name"] == "testRunSteps")
    path = f"/itemtypes/{run['id']}/fields/{steps['id']}"
    assert_error(labs.delete(path), 400, "testRunSteps is a system field", "custom fields")
    assert_error(labs.patch(path, json={"label": "S"}), 400, "testRunSteps is a system field")
    assert_error(labs.delete(f"/itemtypes/{run['id']}/fields/987654321"), 404, "987654321")
    assert_error(labs.delete(f"/itemtypes/987654321/fields/{steps['id']}"), 404, "987654321")
    other = types["REQ"]["fields"][-1]  # a field of another type is not this type's
    assert_error(labs.delete(f"/itemtypes/{run['id']}/fields/{other['id']}"), 404, "TSTRN")
    bad = labs.patch(f"/itemtypes/{run['id']}/fields/{steps['id']}", json={"label": 5})
    assert_error(bad, 400, "label")
    # Labs only: under v1 the operations do not exist.
    assert admin.delete(path).status_code == 404
    assert admin.patch(path, json={"label": "S"}).status_code == 404


def test_only_organization_administrators_change_or_delete_fields(
    admin: httpx.Client, make_user: MakeUser, system: System
) -> None:
    feature = item_types(admin)["FEAT"]["id"]
    added = _add(admin, feature, name=unique("size"), fieldType="INTEGER")
    path = f"/itemtypes/{feature}/fields/{added.json()['meta']['id']}"
    _id, username, password, _client = make_user()
    with system.client((username, password), version="labs") as user:
        assert_error(user.patch(path, json={"label": "S"}), 401, "organization administrators")
        assert_error(user.delete(path), 401, "organization administrators")
    assert added.json()["meta"]["id"] in [f["id"] for f in _fields(admin, feature).values()]


def test_a_deleted_fields_values_leave_test_plans_as_shown(
    admin: httpx.Client, labs: httpx.Client, project: dict[str, Any]
) -> None:
    """Test plans live in another service: its records hide the value too, and PATCH
    works on the plan as shown."""
    plan_type = project["types"]["TSTPL"]["id"]
    name = unique("budget")
    added = _add(admin, plan_type, name=name, fieldType="INTEGER")
    assert added.status_code == 201, added.text
    stored = f"{name}${plan_type}"
    body = {"project": project["id"], "fields": {"name": "Plan", stored: 3}}
    created: list[int] = []

    def create() -> bool:
        # testmgmt reads the configuration again within 5 seconds of a change.
        response = admin.post("/testplans", json=body)
        created.extend([response.json()["meta"]["id"]] if response.status_code == 201 else [])
        return bool(created)

    assert eventually(create)
    plan = created[0]
    # Another testmgmt replica may not have read the configuration again yet: until then
    # it shows no value of a field it does not know.
    assert eventually(
        lambda: admin.get(f"/testplans/{plan}").json()["data"]["fields"].get(stored) == 3
    )
    assert (
        labs.delete(f"/itemtypes/{plan_type}/fields/{added.json()['meta']['id']}").status_code
        == 204
    )
    assert eventually(
        lambda: stored not in admin.get(f"/testplans/{plan}").json()["data"]["fields"]
    )
    patched = admin.patch(
        f"/testplans/{plan}", json=[{"op": "replace", "path": "/fields/name", "value": "Renamed"}]
    )
    assert patched.status_code == 200, patched.text


def test_the_description_lists_the_field_operations_under_labs_only(
    admin: httpx.Client, labs: httpx.Client
) -> None:
    path = "/rest/labs/itemtypes/{itemTypeId}/fields/{fieldId}"
    document = labs.get("/api-docs").json()
    operations = document["paths"][path]
    assert set(operations) >= {"patch", "delete"}
    assert "204" in operations["delete"]["responses"]
    body = operations["patch"]["requestBody"]["content"]["application/json"]["schema"]
    schema = document["components"]["schemas"][body["$ref"].rsplit("/", 1)[1]]
    assert set(schema["properties"]) == {
        "label",
        "required",
        "readOnly",
        "triggerSuspect",
        "synchronize",
    }
    assert (
        "/rest/v1/itemtypes/{itemTypeId}/fields/{fieldId}"
        not in admin.get("/api-docs").json()["paths"]
    )
    post = admin.get("/api-docs").json()["paths"]["/rest/v1/itemtypes/{itemTypeId}/fields"]["post"]
    assert "system field" in post["description"]
