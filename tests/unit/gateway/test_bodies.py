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


@pytest.mark.parametrize(
    ("sent", "got"),
    [("1004", 1004), (1004, 1004), ("-5", -5), ("0042", 42), ("9223372036854775807", 2**63 - 1)],
)
def test_an_integer_member_takes_a_string_of_digits(sent: Any, got: int) -> None:
    """Clients send ids taken from ``meta.location`` as strings, as the original accepts;
    the description stays the contract's ``integer`` (the leniency is the binding's)."""
    from plumbline.gateway.bodies import ItemAttachmentBody, ItemBody, RelationshipBody

    assert ItemAttachmentBody.model_validate({"attachment": sent}).attachment == got
    body = RelationshipBody.model_validate({"fromItem": sent, "toItem": "7"})
    assert (body.fromItem, body.toItem) == (got, 7)
    assert ItemBody.model_validate({"project": sent, "itemType": "3"}).project == got
    assert ItemAttachmentBody.model_json_schema()["properties"]["attachment"] == {
        "maximum": 2**63 - 1,
        "minimum": -(2**63),
        "title": "Attachment",
        "type": "integer",
    }
    assert ItemBody.model_json_schema()["properties"]["project"]["anyOf"][0] == {"type": "integer"}


@pytest.mark.parametrize("sent", ["12a", "", "1.5", " 3", "3 ", "3\n", "+3", "1_000", "\u0663"])
def test_an_integer_member_refuses_other_strings_naming_the_member(sent: str) -> None:
    from pydantic import ValidationError

    from plumbline.gateway.bodies import ItemAttachmentBody, ItemBody
    from plumbline.gateway.errors import describe_validation

    for model, member in ((ItemAttachmentBody, "attachment"), (ItemBody, "project")):
        with pytest.raises(ValidationError) as info:
            model.model_validate({member: sent})
        message = describe_validation([dict(e) for e in info.value.errors()])
        assert message == f"{member}: must be an integer (a JSON number or a string of digits)."


@pytest.mark.parametrize(
    ("sent", "words"),
    [
        ("9223372036854775808", "less than or equal to 9223372036854775807"),
        ("-9223372036854775809", "greater than or equal to -9223372036854775808"),
        ("9" * 5000, "less than or equal to 9223372036854775807"),
    ],
)
def test_a_string_of_digits_has_the_range_of_a_number(sent: str, words: str) -> None:
    from pydantic import ValidationError

    from plumbline.gateway.bodies import BaselineOriginBody, ItemAttachmentBody
    from plumbline.gateway.errors import describe_validation

    with pytest.raises(ValidationError) as info:
        ItemAttachmentBody.model_validate({"attachment": sent})
    assert (
        describe_validation([dict(e) for e in info.value.errors()])
        == f"attachment: Input should be {words}."
    )
    with pytest.raises(ValidationError) as info:
        BaselineOriginBody.model_validate({"items": ["1", sent]})
    assert describe_validation([dict(e) for e in info.value.errors()]).startswith("items.1: ")
