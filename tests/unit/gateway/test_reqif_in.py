"""Reading ReqIF safely and mapping it onto a configuration (``gateway/reqif_in.py``)."""

from __future__ import annotations

import io
import zipfile

import orjson
import pytest

from plumbline.common.errors import InvalidArgument
from plumbline.gateway import reqif_in
from tests.reqifdocs import FOREIGN

TARGET = reqif_in.Target(
    item_types={
        1: (
            "REQ",
            "Requirement",
            "CORE",
            {
                "name": {"name": "name", "label": "Name", "fieldType": "STRING"},
                "description": {"name": "description", "label": "Description", "fieldType": "TEXT"},
                "priority": {
                    "name": "priority",
                    "label": "Priority",
                    "fieldType": "LOOKUP",
                    "pickList": 5,
                },
            },
        ),
        2: (
            "FLD",
            "Folder",
            "CORE",
            {"name": {"name": "name", "label": "Name", "fieldType": "STRING"}},
        ),
    },
    options={5: {"high": 51, "low": 52}},
    relationship_types={"derived from": 7, "related to": 8},
    folder_type=2,
)


def _zip(**members: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def test_a_zip_is_unpacked_within_its_limits() -> None:
    assert reqif_in.unpacked(_zip(**{"a.reqif": FOREIGN}), 10**6) == FOREIGN
    assert reqif_in.unpacked(FOREIGN, 10) == FOREIGN  # not a zip: itself
    # A bomb: a megabyte of zeros compresses to a kilobyte.
    with pytest.raises(InvalidArgument, match="more than 100000 bytes"):
        reqif_in.unpacked(_zip(**{"a.reqif": b"0" * 10**6}), 100_000)
    with pytest.raises(InvalidArgument, match="outside"):
        reqif_in.unpacked(_zip(**{"x/../../a.reqif": FOREIGN}), 10**6)
    with pytest.raises(InvalidArgument, match=r"no \.reqif"):
        reqif_in.unpacked(_zip(**{"a.txt": b"x"}), 10**6)
    with pytest.raises(InvalidArgument, match="neither"):
        reqif_in.unpacked(b"PK broken", 10**6)


def test_entities_are_refused_and_nothing_is_fetched() -> None:
    billion = (
        b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;">]><r>&b;</r>'
    )
    with pytest.raises(InvalidArgument, match="DTD or entities"):
        reqif_in.read(billion)


def test_mapping_by_name_and_by_a_document() -> None:
    doc = reqif_in.read(FOREIGN)
    by_name = reqif_in.plan(doc, TARGET, {})
    assert by_name.lines == []
    assert len(by_name.unmapped) == 2  # the type, the relation type
    mapping = {
        "types": {"Anforderung": "REQ"},
        "attributes": {"Wichtigkeit": "priority"},
        "values": {"Hoch": "high"},
        "relationTypes": {"rt": "Derived from"},
    }
    planned = reqif_in.plan(doc, TARGET, mapping)
    assert planned.unmapped == []
    lines = [orjson.loads(line) for line in planned.lines]
    folders = [line for line in lines if line.get("itemType") == 2]
    assert [f["fields"]["name"] for f in folders] == ["Chapter one", "Chapter two"]
    items = {line["key"]: line for line in lines if line.get("globalId")}
    assert items["sup-1"]["fields"] == {
        "name": "Supplier need 1",
        "description": "<p>Text <b>1</b></p>",
        "priority": 51,
    }
    assert items["sup-2"]["parent"] == "sup-1"
    assert items["sup-3"]["parent"] == folders[1]["key"]
    assert lines[-1] == {"fromItem": "sup-3", "toItem": "sup-1", "relationshipType": 7}
    assert (planned.items, planned.relationships, planned.by_type) == (5, 1, {"FLD": 2, "REQ": 3})
    # An attribute mapped to null is left out; a value without an option is told.
    left_out = reqif_in.plan(doc, TARGET, mapping | {"attributes": {"Wichtigkeit": None}})
    assert "priority" not in orjson.loads(left_out.lines[2])["fields"]
    unknown = reqif_in.plan(doc, TARGET, mapping | {"values": {}})
    assert unknown.unmapped == [
        "enumeration value 'Hoch': no option of field 'priority''s pick list has this name; "
        "map it under values"
    ]


def test_what_cannot_be_mapped_comes_with_a_configuration_and_a_mapping() -> None:
    planned = reqif_in.plan(reqif_in.read(FOREIGN), TARGET, {})
    [item_type] = planned.suggested_config["itemTypes"]
    assert item_type["display"] == "Anforderung"
    fields = {f["label"]: f for f in item_type["fields"]}
    assert fields["ReqIF.Text"]["fieldType"] == "TEXT"
    assert fields["Wichtigkeit"] == {
        "name": "wichtigkeit",
        "label": "Wichtigkeit",
        "fieldType": "LOOKUP",
        "pickList": "Prio",
    }
    assert planned.suggested_config["relationshipTypes"] == [{"name": "refines"}]
    assert planned.suggested_config["pickLists"] == [
        {"name": "Prio", "options": [{"name": "Hoch"}]}
    ]
    assert planned.suggested_mapping["types"] == {"Anforderung": item_type["typeKey"]}
