"""Field values as the items service checks them, whoever calls it (not only the gateway)."""

from __future__ import annotations

from typing import Any

import pytest

from plumbline.common.catalog import Catalog, Field, ItemType, Option
from plumbline.common.errors import InvalidArgument
from plumbline.common.fields import check_fields, check_value, current, show


def _field(name: str, field_type: str) -> Field:
    return Field(1, 10, name, name, field_type, False, False, False, False, None, "", None)


@pytest.mark.parametrize(
    ("field_type", "value", "message"),
    [
        ("STRING", "a\x00b", "fields.f must not contain NUL characters."),
        ("TEXT", "\x00", "fields.f must not contain NUL characters."),
        ("URL_STRING", "http://x/\x00", "fields.f must not contain NUL characters."),
        ("TEST_RUN_STATUS", "PASS\x00", "fields.f must not contain NUL characters."),
        (
            "STEPS",
            [{"action": "a\x00", "expectedResult": "", "notes": ""}],
            "fields.f[0].action must not contain NUL characters.",
        ),
        ("STRING", "x" * 256, "fields.f must be at most 255 characters."),
        ("TEXT", 5, "fields.f must be a string."),
    ],
)
def test_text_that_cannot_be_stored_is_refused_with_the_field(
    field_type: str, value: Any, message: str
) -> None:
    with pytest.raises(InvalidArgument) as info:
        check_value(Catalog(), _field("f", field_type), value)
    assert info.value.message == message


@pytest.mark.parametrize(
    ("field_type", "value"), [("STRING", "plain"), ("TEXT", "multi\nline"), ("STRING", "")]
)
def test_text_that_fits_is_kept(field_type: str, value: str) -> None:
    assert check_value(Catalog(), _field("f", field_type), value) == value


def _lookup_catalog(default: bool) -> tuple[Catalog, ItemType]:
    tier = Field(2, 10, "tier$10", "Tier", "LOOKUP", False, True, False, False, 5, "", None)
    item_type = ItemType(
        10, "TC", "Test Case", "Test Cases", "", "", "TEST_CASE", (), True, (tier,)
    )
    options = {
        7: Option(7, 5, "Gold", "", "", "", default, True, 0),
        8: Option(8, 5, "Silver", "", "", "", False, True, 1),
    }
    return Catalog({10: item_type}, {}, options), item_type


def test_a_required_lookup_left_out_takes_its_pick_lists_default() -> None:
    """The default is applied before the required check: a required field with a
    default never stops a create that does not name it."""
    catalog, item_type = _lookup_catalog(default=True)
    assert check_fields(catalog, item_type, {}, creating=True) == {"tier$10": 7}
    assert check_fields(catalog, item_type, {"tier$10": 8}, creating=True) == {"tier$10": 8}
    catalog, item_type = _lookup_catalog(default=False)
    with pytest.raises(InvalidArgument) as info:
        check_fields(catalog, item_type, {}, creating=True)
    assert info.value.message == "fields.tier$10 is required for item type TC."


def test_values_of_a_field_the_type_no_longer_has_are_hidden() -> None:
    """A deleted field's values stay stored; every read shows the type's fields only."""
    _catalog, item_type = _lookup_catalog(default=True)
    stored = {"tier$10": 7, "gone$10": "old"}
    assert current(item_type, stored) == {"tier$10": 7}
    assert show(item_type, stored, dates_with_time=False) == {"tier$10": 7}
    same = {"tier$10": 7}
    assert current(item_type, same) is same  # nothing to hide: no copy
    assert current(None, stored) is stored
