"""Request bodies (``gateway/bodies.py``)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from plumbline.gateway.bodies import FilterBody, ItemBody, ProjectBody

JSON = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False) | st.integers() | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=10,
)


@given(st.dictionaries(st.text(), JSON))
def test_item_fields_are_accepted_only_if_they_can_be_sent_on(fields: dict[str, Any]) -> None:
    # The gateway sends fields as JSON with orjson (64-bit integers, UTF-8 without NUL for
    # PostgreSQL); a body it cannot send must be a 400, not a 500.
    try:
        body = ItemBody.model_validate({"fields": fields})
    except ValidationError:
        return
    encoded = orjson.dumps(body.fields)
    assert b"\\u0000" not in encoded


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"n": 2**63}, "numbers must be between -9223372036854775808 and 9223372036854775807"),
        ({"n": [-(2**63) - 1]}, "numbers must be between"),
        ({"name": "half \udc9a"}, "not lone surrogates"),
        ({"\udc9a": 1}, "not lone surrogates"),
        ({"deep": {"text": "a\x00b"}}, "NUL"),
    ],
)
def test_what_cannot_be_stored_is_refused(fields: dict[str, Any], words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        ItemBody.model_validate({"fields": fields})
    with pytest.raises(ValidationError, match=words):
        FilterBody.model_validate({"name": "f", "filterQuery": fields})


def test_read_only_members_are_accepted_but_not_described() -> None:
    body = ProjectBody.model_validate({"id": 3, "createdDate": "x", "fields": {"name": "P"}})
    assert body.fields.name == "P"
    described = ProjectBody.model_json_schema()["properties"]
    assert "id" not in described and "createdDate" not in described
    assert "fields" in described
