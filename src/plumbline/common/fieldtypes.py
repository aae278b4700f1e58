"""The field types of item types: one declaration for the configuration and the API."""

from __future__ import annotations

from typing import Literal

#: The types a custom field added through the API (``POST /itemtypes/{id}/fields``) may have.
CustomFieldType = Literal[
    "INTEGER",
    "STRING",
    "TEXT",
    "LOOKUP",
    "MULTI_LOOKUP",
    "DATE",
    "USER",
    "RELEASE",
    "BOOLEAN",
    "URL_STRING",
]

#: Every field type a configuration document may declare: the custom ones and the system's.
FieldType = Literal[
    CustomFieldType,
    "STEPS",
    "TEST_RUN_STATUS",
    "TEST_CASE_STATUS",
    "DOCUMENT_TYPE_ITEM_LOOKUP",
    "GROUP",
]
