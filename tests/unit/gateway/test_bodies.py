"""Request bodies (``gateway/bodies.py``) and free-form members on their way to the services."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from plumbline.common.errors import InvalidArgument
from plumbline.common.jsonvalues import free_json, json_bytes
from plumbline.gateway.bodies import FilterBody, ItemBody, ProjectBody

JSON = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False) | st.integers() | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=10,
)


@given(st.dictionaries(st.text(), JSON))
def test_item_fields_are_sent_on_or_refused_with_a_400(fields: dict[str, Any]) -> None:
    # The gateway sends fields as JSON with orjson (64-bit integers, UTF-8 without NUL for
    # PostgreSQL); a body it cannot send must be a 400, not a 500.
    body = ItemBody.model_validate({"fields": fields})
    try:
        encoded = free_json(body.fields, "fields")
    except InvalidArgument as exc:
        refused = exc.message
    else:
        assert b"\\u0000" not in encoded.replace(b"\\\\", b"")
        return
    assert refused.startswith("fields")


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"n": 2**63}, "fields.n must be between -9223372036854775808 and 9223372036854775807"),
        ({"n": [-(2**63) - 1]}, "fields.n[0] must be between"),
        ({"name": "half \udc9a"}, "fields.name is not valid Unicode"),
        ({"\udc9a": 1}, "is not valid Unicode"),
        ({"deep": {"text": "a\x00b"}}, "fields.deep.text must not contain NUL"),
    ],
)
def test_what_cannot_be_stored_is_refused(fields: dict[str, Any], words: str) -> None:
    with pytest.raises(InvalidArgument) as info:
        free_json(ItemBody.model_validate({"fields": fields}).fields, "fields")
    assert words in info.value.message
    query = FilterBody.model_validate({"name": "f", "filterQuery": fields}).filterQuery
    with pytest.raises(InvalidArgument, match="filterQuery"):
        free_json(query, "filterQuery")


def test_a_spelled_out_nul_escape_is_text_not_nul() -> None:
    assert orjson.loads(json_bytes({"a": "\\u0000"}, "fields")) == {"a": "\\u0000"}


def test_read_only_members_are_accepted_but_not_described() -> None:
    body = ProjectBody.model_validate({"id": 3, "createdDate": "x", "fields": {"name": "P"}})
    assert body.fields.name == "P"
    described = ProjectBody.model_json_schema()["properties"]
    assert "id" not in described
    assert "createdDate" not in described
    assert "fields" in described


def test_a_test_run_put_back_whole_keeps_only_its_fields() -> None:
    """Scripts PUT a GET ``data`` object back, members this model does not know included."""
    from plumbline.gateway.bodies import TestRunBody

    data = {
        "id": 12,
        "documentKey": "P-TSTRN-1",
        "testGroup": [3, 4],
        "testCaseCurrentVersionNumber": 2,
        "lock": {"locked": False},
        "fields": {"testRunStatus": "PASSED"},
        "type": "testruns",
    }
    body = TestRunBody.model_validate(data)
    assert body.fields == {"testRunStatus": "PASSED"}
    assert set(TestRunBody.model_json_schema()["properties"]) == {"fields"}


def test_a_cycle_generation_config_refuses_unknown_statuses() -> None:
    from pydantic import ValidationError

    from plumbline.gateway.bodies import TestCycleBody

    config = {"testGroupsToInclude": [1], "testRunStatusesToInclude": ["PASSED", "FAILED"]}
    body = TestCycleBody.model_validate({"fields": {}, "testRunGenerationConfig": config})
    assert body.testRunGenerationConfig is not None
    assert body.testRunGenerationConfig.model_dump(exclude_none=True) == config
    assert TestCycleBody.model_validate({"testRunGenerationConfig": {}}).fields == {}
    with pytest.raises(ValidationError):
        TestCycleBody.model_validate(
            {"testRunGenerationConfig": {"testRunStatusesToInclude": ["x"]}}
        )
