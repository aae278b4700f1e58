"""Field values as the items service checks them, whoever calls it (not only the gateway)."""

from __future__ import annotations

from typing import Any

import pytest

from plumbline.common.catalog import Catalog, Field
from plumbline.common.errors import InvalidArgument
from plumbline.common.fields import check_value


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
