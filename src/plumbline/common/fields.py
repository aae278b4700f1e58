"""An item's ``fields`` map checked against its item type, and shown in the caller's form."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import date
from typing import Any

from plumbline.common import int64
from plumbline.common.catalog import Catalog, Field, ItemType
from plumbline.common.errors import InvalidArgument

#: The names of the system fields every item type has: the system sets their values.
SYSTEM_FIELDS = ("documentKey", "globalId")
#: Members the fields of test records show that are not fields of their types.
RECORD_MEMBERS = ("testCase", "testCycle", "testPlan")
#: A custom field's name as sent (stored with ``$<typeId>``, at most 20 more characters,
#: in a column of 128): a letter, then letters, digits and ``_``.
FIELD_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
MAX_FIELD_NAME = 100
_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:T00:00:00(?:\.000)?(?:Z|[+-]00:?00))?$")
MAX_STRING = 255
MAX_TEXT = 1_000_000
STEP_KEYS = ("action", "expectedResult", "notes")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int64(name: str, value: Any, problem: str) -> int:
    """An integer within 64 bits; ``problem`` is the sentence for anything else."""
    if isinstance(value, float) and value.is_integer() and not int64.fits(value):
        # A JSON integer too wide for 64 bits can arrive parsed as a float.
        raise int64.out_of_range(f"fields.{name}", value)
    if not _is_int(value):
        raise InvalidArgument(problem)
    if not int64.fits(value):
        raise int64.out_of_range(f"fields.{name}", value)
    return int(value)


def _check_date(name: str, value: Any) -> str:
    if not isinstance(value, str) or not (match := _DATE.match(value)):
        raise InvalidArgument(f"fields.{name} must be a date like 2024-01-31, got {value!r}.")
    try:
        date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        raise InvalidArgument(f"fields.{name} is not a valid date: {value!r}.") from None
    return f"{match[1]}-{match[2]}-{match[3]}"


def _check_steps(name: str, value: Any, with_status: bool) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise InvalidArgument(f"fields.{name} must be a list of steps.")
    steps = []
    allowed = (*STEP_KEYS, "status", "result") if with_status else STEP_KEYS
    for number, step in enumerate(value):
        if not isinstance(step, dict):
            raise InvalidArgument(
                f"fields.{name}[{number}] must be an object with {', '.join(STEP_KEYS)}."
            )
        unknown = sorted(set(step) - set(allowed))
        if unknown:
            raise InvalidArgument(
                f"fields.{name}[{number}] has unknown member(s) {', '.join(unknown)}; "
                f"allowed: {', '.join(allowed)}."
            )
        for key, member in step.items():
            if member is not None and not isinstance(member, str):
                raise InvalidArgument(f"fields.{name}[{number}].{key} must be a string.")
            if member is not None and "\x00" in member:
                raise InvalidArgument(
                    f"fields.{name}[{number}].{key} must not contain NUL characters."
                )
        steps.append({k: step.get(k) or "" for k in allowed if k in step or k in STEP_KEYS})
    return steps


def check_value(catalog: Catalog, field: Field, value: Any) -> Any:
    """The stored form of one field value, or InvalidArgument naming the field."""
    if value is None:
        return None
    check = _CHECKS.get(field.field_type)
    if check is None:
        raise InvalidArgument(
            f"fields.{field.name} has a field type ({field.field_type}) that cannot be set."
        )
    return check(catalog, field, value)


def _boolean(catalog: Catalog, field: Field, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgument(f"fields.{field.name} must be true or false.")
    return value


def _reference(catalog: Catalog, field: Field, value: Any) -> Any:
    """The id of a user, release, group or item: a positive 64-bit integer."""
    kind = field.field_type
    problem = f"fields.{field.name} must be the id of a {kind.lower().replace('_', ' ')}."
    if _int64(field.name, value, problem) < 1:
        raise InvalidArgument(problem)
    return value


def _options(catalog: Catalog, field: Field, value: Any) -> list[int]:
    if not isinstance(value, list):
        raise InvalidArgument(f"fields.{field.name} must be a list of pick list option ids.")
    return [_check_option(catalog, field, v) for v in value]


def _string(catalog: Catalog, field: Field, value: Any) -> str:
    return _text(field.name, value, MAX_STRING)


def _text(name: str, value: Any, limit: int) -> str:
    if not isinstance(value, str):
        raise InvalidArgument(f"fields.{name} must be a string.")
    if len(value) > limit:
        raise InvalidArgument(f"fields.{name} must be at most {limit} characters.")
    if "\x00" in value:
        # PostgreSQL cannot store NUL in text; refused on both backends, whoever calls.
        raise InvalidArgument(f"fields.{name} must not contain NUL characters.")
    return value


def _check_option(catalog: Catalog, field: Field, value: Any) -> int:
    value = _int64(field.name, value, f"fields.{field.name} must be a pick list option id.")
    option = catalog.options.get(value)
    if option is None or option.pick_list != field.pick_list:
        allowed = ", ".join(
            f"{o.id} ({o.name})" for o in catalog.options_of(field.pick_list or 0) if o.active
        )
        raise InvalidArgument(
            f"fields.{field.name}: {value} is not an option of its pick list; allowed: {allowed}."
        )
    if not option.active:
        raise InvalidArgument(f"fields.{field.name}: option {value} ({option.name}) is inactive.")
    return int(value)


#: How each field type's value is checked and stored.
_CHECKS: dict[str, Callable[[Catalog, Field, Any], Any]] = {
    "STRING": _string,
    "URL_STRING": _string,
    "TEXT": lambda catalog, field, value: _text(field.name, value, MAX_TEXT),
    "INTEGER": lambda catalog, field, value: _int64(
        field.name, value, f"fields.{field.name} must be an integer."
    ),
    "BOOLEAN": _boolean,
    "DATE": lambda catalog, field, value: _check_date(field.name, value),
    "USER": _reference,
    "RELEASE": _reference,
    "GROUP": _reference,
    "DOCUMENT_TYPE_ITEM_LOOKUP": _reference,
    "LOOKUP": _check_option,
    "MULTI_LOOKUP": _options,
    "STEPS": lambda catalog, field, value: _check_steps(field.name, value, with_status=False),
    "TEST_RUN_STATUS": _string,
    "TEST_CASE_STATUS": _string,
}


def check_required(item_type: ItemType, checked: Mapping[str, Any]) -> None:
    """Every required, editable field of ``item_type`` is in ``checked`` (a whole item's
    fields: a create's, or a PUT's that replace them)."""
    for field in item_type.fields:
        if field.required and not field.read_only and field.name not in checked:
            raise InvalidArgument(
                f"fields.{field.name} is required for item type {item_type.type_key}."
            )


def check_fields(
    catalog: Catalog, item_type: ItemType, values: dict[str, Any], creating: bool
) -> dict[str, Any]:
    """The stored fields map: unknown names are refused, read-only ones are ignored."""
    if not isinstance(values, dict):
        raise InvalidArgument("fields must be a JSON object.")
    checked: dict[str, Any] = {}
    for name, value in values.items():
        field = item_type.field(name)
        if field is None:
            known = ", ".join(f.name for f in item_type.fields)
            raise InvalidArgument(
                f"fields.{name} is not a field of item type {item_type.type_key}; "
                f"its fields are: {known}."
            )
        if field.read_only or name in SYSTEM_FIELDS:
            continue
        stored = check_value(catalog, field, value)
        if stored is not None:
            checked[name] = stored
    if creating:
        for field in item_type.fields:
            if field.field_type == "LOOKUP" and field.name not in checked and not field.read_only:
                default = default_option(catalog, field)
                if default is not None:
                    checked[field.name] = default
        check_required(item_type, checked)
    elif "name" in values and item_type.field("name") and not checked.get("name"):
        raise InvalidArgument("fields.name must not be empty.")
    return checked


def default_option(catalog: Catalog, field: Field) -> int | None:
    """The option a new record's LOOKUP field takes when none is sent: its pick list's
    active default, if it has one."""
    if field.pick_list is None:
        return None
    return list_default(catalog, field.pick_list)


def list_default(catalog: Catalog, pick_list: int) -> int | None:
    """A pick list's active default option, if it has one."""
    default = next((o for o in catalog.options_of(pick_list) if o.default and o.active), None)
    return default.id if default else None


def current(item_type: ItemType | None, stored: dict[str, Any]) -> dict[str, Any]:
    """The stored values of the type's fields: values of a field deleted since
    (``DELETE /itemtypes/{id}/fields/{fieldId}``) are hidden, and dropped by the
    record's next write."""
    if item_type is None or stored.keys() <= item_type.names:
        return stored
    return {k: v for k, v in stored.items() if k in item_type.names}


def show(
    item_type: ItemType | None, stored: dict[str, Any], dates_with_time: bool
) -> dict[str, Any]:
    """The fields map as a client sees it."""
    stored = current(item_type, stored)
    if not dates_with_time or item_type is None:
        return stored
    shown = dict(stored)
    for field in item_type.fields:
        if field.field_type == "DATE" and isinstance(shown.get(field.name), str):
            shown[field.name] = f"{shown[field.name]}T00:00:00.000+0000"
    return shown
