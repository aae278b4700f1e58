"""Validation messages: what a 400 names."""

from __future__ import annotations

from plumbline.gateway.errors import describe_validation


def test_validation_messages_name_fields() -> None:
    message = describe_validation(
        [
            {"type": "missing", "loc": ("body", "username"), "msg": "Field required"},
            {"type": "extra_forbidden", "loc": ("body", "foo"), "msg": "Extra inputs"},
            {
                "type": "string_too_long",
                "loc": ("body", "email"),
                "msg": "",
                "ctx": {"max_length": 255},
            },
            {
                "type": "string_type",
                "loc": ("body", "fields", "name"),
                "msg": "Input should be a valid string",
            },
        ]
    )
    assert "username is required." in message
    assert "foo is not a known field." in message
    assert "email must be at most 255 characters." in message
    assert "fields.name: Input should be a valid string." in message


def test_invalid_json_and_missing_body() -> None:
    assert "not valid JSON" in describe_validation(
        [{"type": "json_invalid", "loc": ("body", 1), "ctx": {"error": "x"}}]
    )
    assert "needs a JSON body" in describe_validation([{"type": "missing", "loc": ("body",)}])
