"""Custom fields added, changed and deleted through the API: the names and required
fields refused, and what a deleted field leaves on records."""

from __future__ import annotations

import json
from typing import Any

import pytest

from plumbline.common.context import Principal
from plumbline.common.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from plumbline.services.items import configdoc
from plumbline.services.items.config import Configuration, check_field_name
from plumbline.services.items.configdoc import FieldDoc
from plumbline.services.items.links import Links
from tests.unit.services.conftest import ADMIN, acting_as
from tests.unit.services.items.conftest import World


def _doc(name: str, field_type: str = "STRING", **flags: Any) -> FieldDoc:
    return FieldDoc.model_construct(
        name=name,
        label=name.title(),
        fieldType=field_type,
        readOnly=flags.get("readOnly", False),
        required=flags.get("required", False),
        triggerSuspect=False,
        synchronize=False,
        textType="",
        pickList=flags.get("pickList"),
        itemType=None,
        custom=True,
    )


async def _add(config: Configuration, type_id: int, doc: FieldDoc, values: list[str]) -> int:
    with acting_as(ADMIN):
        return await config.add_field(type_id, doc, values)


async def _refusal(config: Configuration, type_id: int, doc: FieldDoc, values: list[str]) -> str:
    with pytest.raises(InvalidArgument) as info:
        await _add(config, type_id, doc, values)
    return info.value.message


@pytest.mark.parametrize(
    ("name", "clash"),
    [
        ("testRunSteps", "testRunSteps"),
        ("executionDate", "executionDate"),
        ("EXECUTIONDATE", "executionDate"),
        ("documentKey", "documentKey"),
        ("testCase", "testCase"),
        ("name", "name"),
    ],
)
async def test_a_name_that_shadows_a_system_field_is_refused_on_any_type(
    world: World, name: str, clash: str
) -> None:
    """``testRunSteps`` on the feature type would be ``testRunSteps$2``: read without its
    suffix, as clients of the original do, it is the test runs' steps."""
    config = world.items.config
    message = await _refusal(config, world.types["FEAT"], _doc(name), [])
    assert f"system field {clash}" in message
    assert "Names taken by system fields" in message
    assert "executionDate" in message
    assert "testRunSteps" in message


async def test_names_over_the_limit_or_not_identifiers_are_refused(world: World) -> None:
    config = world.items.config
    catalog = await config.catalog()
    check_field_name(catalog, "a" * 100)  # the limit itself is fine
    message = await _refusal(config, world.types["FEAT"], _doc("a" * 101), [])
    assert message == "name must be at most 100 characters, got 101."
    message = await _refusal(config, world.types["FEAT"], _doc("steps$10"), [])
    assert "letters, digits and _" in message


@pytest.mark.parametrize("type_key", ["TC", "TSTPL", "TSTCY", "TSTRN", "ATT"])
async def test_a_required_field_without_a_default_is_refused_on_built_in_types(
    world: World, type_key: str
) -> None:
    config = world.items.config
    message = await _refusal(config, world.types[type_key], _doc("must", required=True), [])
    assert message.startswith(f"required: {type_key} (")
    assert "required false" in message
    # Read-only, it is never asked for; not required, nothing changes for creates.
    await _add(config, world.types[type_key], _doc("shown", readOnly=True, required=True), [])
    await _add(config, world.types[type_key], _doc("optional"), [])


async def test_a_required_lookup_with_a_default_is_accepted_except_on_runs(world: World) -> None:
    config = world.items.config
    tier = _doc("tier", "LOOKUP", required=True)
    await _add(config, world.types["TC"], tier, ["Gold", "Silver"])
    message = await _refusal(config, world.types["TSTRN"], tier, ["Gold"])
    assert "the system creates every record of this type itself" in message
    # An existing list is a default when one of its options is the default.
    await _add(
        config, world.types["ATT"], _doc("risky", "LOOKUP", required=True, pickList="Risk"), []
    )
    with acting_as(ADMIN):
        catalog = await config.catalog()
        status = next(p for p in catalog.pick_lists.values() if p.name == "Test Case Status")
        for option in catalog.options_of(status.id):
            await config.update_option(option.id, {"default": False})
    message = await _refusal(
        config, world.types["TSTCY"], _doc("st", "LOOKUP", required=True, pickList=status.name), []
    )
    assert "needs a default" in message
    # A custom required field of a type of the users' own is theirs to ask for.
    await _add(config, world.types["REQ"], _doc("owner", required=True), [])


async def test_a_test_case_with_a_required_lookup_is_created_without_naming_it(
    world: World,
) -> None:
    config = world.items.config
    field_id = await _add(
        config, world.types["TC"], _doc("tier", "LOOKUP", required=True), ["Gold", "Silver"]
    )
    case = await world.item("Case", type_key="TC")
    [row] = (await world.rows(case)).values()
    catalog = await config.catalog()
    field = next(f for f in catalog.item_types[world.types["TC"]].fields if f.id == field_id)
    gold = catalog.options_of(field.pick_list or 0)[0]
    assert json.loads(row.fields_json)[field.name] == gold.id


async def test_fields_are_changed_and_deleted_by_organization_administrators_only(
    world: World,
) -> None:
    config = world.items.config
    field_id = await _add(config, world.types["FEAT"], _doc("effort", "INTEGER"), [])
    with acting_as(Principal(7, "someone")):
        with pytest.raises(PermissionDenied):
            await config.update_field(world.types["FEAT"], field_id, {"label": "E"})
        with pytest.raises(PermissionDenied):
            await config.delete_field(world.types["FEAT"], field_id)
    with acting_as(ADMIN):
        await config.update_field(
            world.types["FEAT"], field_id, {"label": "Effort (days)", "required": True}
        )
        catalog = await config.catalog()
    field = next(f for f in catalog.item_types[world.types["FEAT"]].fields if f.id == field_id)
    assert (field.label, field.required, field.name) == ("Effort (days)", True, field.name)


async def test_what_cannot_be_changed_is_refused_with_what_can(world: World) -> None:
    config = world.items.config
    tc = world.types["TC"]
    field_id = await _add(config, tc, _doc("note"), [])
    catalog = await config.catalog()
    steps = next(f for f in catalog.item_types[tc].fields if f.name == "testCaseSteps")
    with acting_as(ADMIN):
        with pytest.raises(InvalidArgument) as info:
            await config.update_field(tc, field_id, {"required": True})
        assert info.value.message.startswith("required: TC (Test Case)")
        # Made editable, a required read-only field would be asked for: the same rule.
        shown = await config.add_field(tc, _doc("shown", readOnly=True, required=True), [])
        with pytest.raises(InvalidArgument, match=r"^required: TC \(Test Case\)"):
            await config.update_field(tc, shown, {"readOnly": False})
        await config.update_field(tc, shown, {"label": "Shown"})
        with pytest.raises(InvalidArgument) as info:
            await config.update_field(tc, field_id, {"fieldType": "INTEGER"})
        assert info.value.message == (
            "fieldType cannot change; a field's label, required, readOnly, triggerSuspect, "
            "synchronize can."
        )
        with pytest.raises(InvalidArgument) as info:
            await config.update_field(tc, field_id, {})
        assert info.value.message.startswith("Nothing to change")
        for change in (config.delete_field(tc, steps.id), config.update_field(tc, steps.id, {})):
            with pytest.raises(InvalidArgument) as info:
                await change
            assert info.value.message.startswith("testCaseSteps is a system field of item type TC")
        with pytest.raises(NotFound) as missing:
            await config.delete_field(tc, 987654)
        assert missing.value.message == "No field with id 987654 on item type TC."
        with pytest.raises(NotFound):  # a field of another type is not this type's
            await config.delete_field(world.types["REQ"], field_id)
        with pytest.raises(NotFound):
            await config.update_field(987654, field_id, {"label": "x"})


async def test_deleting_a_required_field_makes_creates_work_again(world: World) -> None:
    """The rescue of a type made unusable before the rules: its required field goes."""
    config = world.items.config
    field_id = await _add(config, world.types["REQ"], _doc("owner", required=True), [])
    with pytest.raises(InvalidArgument, match="is required"):
        await world.item("Refused")
    with acting_as(ADMIN):
        await config.delete_field(world.types["REQ"], field_id)
    assert await world.item("Accepted")


async def test_a_deleted_fields_values_are_hidden_and_dropped_by_the_next_write(
    world: World,
) -> None:
    config = world.items.config
    req = world.types["REQ"]
    await _add(config, req, _doc("effort", "INTEGER"), [])
    name = f"effort${req}"
    value: dict[str, Any] = {name: 5}
    item = await world.item("Estimated", **value)
    catalog = await config.catalog()
    field_id = next(f.id for f in catalog.item_types[req].fields if f.name == name)
    with acting_as(ADMIN):
        await config.delete_field(req, field_id)
        [shown] = await world.items.get_many([item])
        assert name in json.loads(shown.fields_json)  # stored until the next write
        catalog = await config.catalog()
        assert name not in catalog.item_types[req].names
        # A PATCH works on the request object as a GET shows it: without the value.
        await world.items.patch(
            item, [{"op": "replace", "path": "/fields/name", "value": "Renamed"}], False
        )
        [row] = await world.items.get_many([item])
    assert json.loads(row.fields_json).get("name") == "Renamed"
    assert name not in json.loads(row.fields_json)
    # The name stays taken on this type: records elsewhere may still hold its values.
    message = await _refusal(config, req, _doc("effort", "LOOKUP"), ["A"])
    assert "a deleted field of item type REQ was named 'effort'" in message


async def test_a_workflows_status_field_is_not_deleted(world: World) -> None:
    config = world.items.config
    document = configdoc.default()
    feature = next(t for t in document.itemTypes if t.typeKey == "FEAT")
    feature.fields.append(
        FieldDoc(name="stage", label="Stage", fieldType="LOOKUP", pickList="Status", custom=True)
    )
    feature.workflow = configdoc.WorkflowDoc(
        field="stage",
        transitions=[
            configdoc.TransitionDoc(action="Review", **{"from": "Draft", "to": "In Review"})
        ],
    )
    await config.apply(document)
    catalog = await config.catalog()
    stage = catalog.item_types[world.types["FEAT"]].field(f"stage${world.types['FEAT']}")
    assert stage is not None
    with acting_as(ADMIN), pytest.raises(FailedPrecondition) as info:
        await config.delete_field(world.types["FEAT"], stage.id)
    assert "status field of the workflow of item type FEAT" in info.value.message


async def test_applying_a_configuration_that_names_a_deleted_field_restores_it(
    world: World,
) -> None:
    config = world.items.config
    req = world.types["REQ"]
    catalog = await config.catalog()
    risk = catalog.item_types[req].field(f"risk${req}")
    assert risk is not None
    with acting_as(ADMIN):
        await config.delete_field(req, risk.id)
    assert (await config.catalog()).item_types[req].field(risk.name) is None
    changes = await config.apply(configdoc.default())
    assert f"restored field {risk.name} of item type REQ" in changes
    assert (await config.catalog()).item_types[req].field(risk.name) is not None


async def test_a_duplicate_copies_the_required_fields_values(world: World) -> None:
    config = world.items.config
    req = world.types["REQ"]
    await _add(config, req, _doc("owner", required=True), [])
    owner: dict[str, Any] = {f"owner${req}": "ann"}
    original = await world.item("Original", **owner)
    with acting_as(ADMIN):
        copy = await Links(world.items).duplicate(original, False, False)
        [row] = await world.items.get_many([copy])
    assert json.loads(row.fields_json)[f"owner${req}"] == "ann"


async def test_an_existing_name_is_still_already_taken(world: World) -> None:
    config = world.items.config
    await _add(config, world.types["FEAT"], _doc("effort2"), [])
    with pytest.raises(AlreadyExists):
        await _add(config, world.types["FEAT"], _doc("effort2"), [])
