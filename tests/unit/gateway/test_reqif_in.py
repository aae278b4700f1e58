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
    assert (fields["Description"]["name"], fields["Description"]["fieldType"]) == (
        "description",
        "TEXT",
    )
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


MAPPED = {
    "types": {"Anforderung": "REQ"},
    "attributes": {"Wichtigkeit": "priority"},
    "values": {"Hoch": "high"},
    "relationTypes": {"rt": "Derived from"},
}


def _as_imported() -> reqif_in.Existing:
    """The project after FOREIGN's import: two folders (named by the specifications'
    identifiers), sup-1 with sup-2 under it in the first, sup-3 in the second, and the
    relation sup-3 -> sup-1; plus an item of the project's own, a test case."""
    text = {n: f"<p>Text <b>{n}</b></p>" for n in (1, 2, 3)}

    def req(item: int, parent: int, n: int) -> reqif_in.ExistingItem:
        name = f"Supplier need {n}"
        fields = {"name": name, "description": text[n], "priority": 51}
        return reqif_in.ExistingItem(item, 1, parent, f"sup-{n}", name, fields)

    return reqif_in.Existing(
        [
            reqif_in.ExistingItem(100, 2, None, "s1", "Chapter one", {"name": "Chapter one"}),
            reqif_in.ExistingItem(99, 2, None, "s2", "Chapter two", {"name": "Chapter two"}),
            req(101, 100, 1),
            req(102, 101, 2),
            req(103, 99, 3),
            reqif_in.ExistingItem(120, 3, None, "GID-TC-120", "Own test", {"name": "Own test"}),
        ],
        [(1, 103, 101, 7)],
    )


def test_the_same_document_again_changes_nothing() -> None:
    doc = reqif_in.read(FOREIGN)
    first = reqif_in.plan(doc, TARGET, MAPPED)
    assert first.added == ["s1", "sup-1", "sup-2", "s2", "sup-3"]
    again = reqif_in.plan(doc, TARGET, MAPPED, _as_imported(), delete_left=True)
    assert again.unmapped == []
    assert (again.lines, again.unchanged, again.added, again.changed, again.moved) == (
        [],
        5,
        [],
        [],
        [],
    )
    assert (again.left, again.relationships_left) == ([], [])


def test_a_newer_revision_changes_adds_moves_and_leaves() -> None:
    doc = reqif_in.read(
        FOREIGN.replace(b"Supplier need 2", b"Supplier need 2, revised")
        # sup-3 moves under sup-1, and a new object sup-4 takes its place in chapter two.
        .replace(b"<SPEC-OBJECT-REF>sup-3</SPEC-OBJECT-REF></OBJECT></SPEC-HIERARCHY>", b"<SPEC-OBJECT-REF>sup-4</SPEC-OBJECT-REF></OBJECT></SPEC-HIERARCHY>")
        .replace(b'<SPEC-HIERARCHY IDENTIFIER="h2"', b'<SPEC-HIERARCHY IDENTIFIER="h3x"><OBJECT><SPEC-OBJECT-REF>sup-3</SPEC-OBJECT-REF></OBJECT></SPEC-HIERARCHY><SPEC-HIERARCHY IDENTIFIER="h2"')
        .replace(b'<SPEC-OBJECT IDENTIFIER="sup-3"', b'<SPEC-OBJECT IDENTIFIER="sup-4" LAST-CHANGE="2026-01-01T00:00:00Z"><TYPE><SPEC-OBJECT-TYPE-REF>ot</SPEC-OBJECT-TYPE-REF></TYPE></SPEC-OBJECT><SPEC-OBJECT IDENTIFIER="sup-3"')
    )  # fmt: skip
    existing = _as_imported()
    # Items of the project: one the document no longer holds, and a link between two of
    # its items that it does not have.
    existing.items.append(
        reqif_in.ExistingItem(110, 1, 100, "sup-9", "Dropped", {"name": "Dropped"})
    )
    existing.relationships.append((2, 101, 102, 7))
    existing.relationships.append((3, 101, 102, 8))  # a type the document does not map
    kept = reqif_in.plan(doc, TARGET, MAPPED, existing)
    assert kept.unmapped == []
    assert kept.added == ["sup-4"]
    assert kept.changed == [{"identifier": "sup-2", "item": 102, "fields": ["name"]}]
    assert kept.moved == [{"identifier": "sup-3", "item": 103, "formerParent": 99, "parent": 101}]
    assert kept.unchanged == 3  # the folders, sup-1
    assert kept.left == [{"item": 110, "globalId": "sup-9", "name": "Dropped"}]
    assert kept.relationships_left == [
        {"id": 2, "fromItem": 101, "toItem": 102, "relationshipType": 7}
    ]
    lines = [orjson.loads(line) for line in kept.lines]
    assert lines == [
        {"key": "sup-4", "itemType": 1, "globalId": "sup-4", "parent": 99, "fields": {"name": "sup-4"}},
        # The whole of the fields, as a version line takes them, in the document's tree
        # order (parents first: a move never lands under the item moved).
        {"item": 103, "fields": {"name": "Supplier need 3", "description": "<p>Text <b>3</b></p>", "priority": 51}, "parent": 101},
        {"item": 102, "fields": {"name": "Supplier need 2, revised", "description": "<p>Text <b>2</b></p>", "priority": 51}},
        # sup-3 comes before sup-2 under sup-1 in the document: moved in, it would land
        # below it.
        {"children": [103, 102], "parent": 101},
    ]  # fmt: skip
    assert kept.versions == 2
    assert kept.reordered == [{"parent": 101, "children": 2}]
    deleting = reqif_in.plan(doc, TARGET, MAPPED, existing, delete_left=True)
    assert [orjson.loads(line) for line in deleting.lines[4:]] == [
        {"deleteItem": 110},
        {"deleteRelationship": 2},
    ]


def test_siblings_take_the_documents_order_without_versions() -> None:
    doc = reqif_in.read(FOREIGN)
    existing = _as_imported()
    # The two chapters the other way round at the root, and an item of the project's
    # own between them.
    for item in existing.items:
        item.sort_order = {100: 2, 99: 0, 120: 1}.get(item.id, 0)
    again = reqif_in.plan(doc, TARGET, MAPPED, existing)
    assert (again.versions, again.unchanged, again.added, again.moved) == (0, 5, [], [])
    assert [orjson.loads(line) for line in again.lines] == [{"children": [100, 99], "parent": None}]
    assert again.reordered == [{"parent": None, "children": 2}]
    # A new object between two that are there already: the one after it is put below it.
    inserted = reqif_in.read(
        FOREIGN.replace(b'<SPEC-HIERARCHY IDENTIFIER="h2"', b'<SPEC-HIERARCHY IDENTIFIER="h9"><OBJECT><SPEC-OBJECT-REF>sup-9</SPEC-OBJECT-REF></OBJECT></SPEC-HIERARCHY><SPEC-HIERARCHY IDENTIFIER="h2"')
        .replace(b'<SPEC-OBJECT IDENTIFIER="sup-3"', b'<SPEC-OBJECT IDENTIFIER="sup-9" LAST-CHANGE="2026-01-01T00:00:00Z"><TYPE><SPEC-OBJECT-TYPE-REF>ot</SPEC-OBJECT-TYPE-REF></TYPE></SPEC-OBJECT><SPEC-OBJECT IDENTIFIER="sup-3"')
    )  # fmt: skip
    added = reqif_in.plan(inserted, TARGET, MAPPED, _as_imported())
    assert (added.added, added.versions) == (["sup-9"], 0)
    assert [orjson.loads(line) for line in added.lines][1:] == [
        {"children": ["sup-9", 102], "parent": 101}
    ]
    # Added at the bottom, in the document's order: nothing to reorder.
    appended = reqif_in.read(
        FOREIGN.replace(b'<SPEC-OBJECT IDENTIFIER="sup-3"', b'<SPEC-OBJECT IDENTIFIER="sup-9" LAST-CHANGE="2026-01-01T00:00:00Z"><TYPE><SPEC-OBJECT-TYPE-REF>ot</SPEC-OBJECT-TYPE-REF></TYPE></SPEC-OBJECT><SPEC-OBJECT IDENTIFIER="sup-3"')
        .replace(b'<SPEC-OBJECT-REF>sup-2</SPEC-OBJECT-REF></OBJECT>', b'<SPEC-OBJECT-REF>sup-2</SPEC-OBJECT-REF></OBJECT></SPEC-HIERARCHY><SPEC-HIERARCHY IDENTIFIER="h9"><OBJECT><SPEC-OBJECT-REF>sup-9</SPEC-OBJECT-REF></OBJECT>')
    )  # fmt: skip
    at_end = reqif_in.plan(appended, TARGET, MAPPED, _as_imported())
    assert (at_end.added, at_end.reordered, len(at_end.lines)) == (["sup-9"], [], 1)


def test_a_value_the_document_no_longer_has_is_emptied() -> None:
    doc = reqif_in.read(FOREIGN)
    without = reqif_in.plan(doc, TARGET, MAPPED | {"attributes": {"Wichtigkeit": None}})
    assert without.unmapped == []
    existing = _as_imported()
    # Mapped to nothing, priority is not the document's: kept. Its text is, and sup-1
    # no longer has one.
    doc.objects["sup-1"].values.pop("a-text")
    planned = reqif_in.plan(doc, TARGET, MAPPED | {"attributes": {"Wichtigkeit": None}}, existing)
    assert planned.changed == [{"identifier": "sup-1", "item": 101, "fields": ["description"]}]
    assert orjson.loads(planned.lines[0]) == {
        "item": 101,
        "fields": {"priority": 51, "name": "Supplier need 1"},
    }
    # An item whose type is not the one the document makes it: told, nothing written.
    existing.items[2].item_type = 2
    refused = reqif_in.plan(doc, TARGET, MAPPED, existing)
    assert refused.unmapped == [
        "object 'sup-1' is item 101, a FLD; the document makes it a REQ, and an item's "
        "type cannot change"
    ]


def test_a_field_suggested_for_a_type_is_named_apart_from_its_fields() -> None:
    # A string attribute called Priority: the requirement's priority is a pick list.
    doc = reqif_in.read(FOREIGN.replace(b'LONG-NAME="ReqIF.Name"', b'LONG-NAME="Priority"'))
    planned = reqif_in.plan(doc, TARGET, MAPPED | {"attributes": {"Wichtigkeit": None}})
    assert planned.unmapped[0].startswith(
        "attribute 'Priority' (STRING) of 'Anforderung': field 'priority' (LOOKUP) of"
    )
    assert planned.suggested_config["fields"] == {
        "REQ": [{"name": "priorityString", "label": "Priority", "fieldType": "STRING"}]
    }
    assert planned.suggested_mapping["attributes"]["Priority"] == "priorityString"


def test_files_are_the_archive_paths_an_objects_xhtml_names() -> None:
    value = (
        "<ATTRIBUTE-VALUE-XHTML><DEFINITION><ATTRIBUTE-DEFINITION-XHTML-REF>a-text"
        "</ATTRIBUTE-DEFINITION-XHTML-REF></DEFINITION><THE-VALUE><xhtml:div>"
        '<xhtml:object data="files/ab/diagram.png" type="image/png">diagram.png</xhtml:object>'
        '<xhtml:object data="./files/../files/cd/notes.txt">notes</xhtml:object>'
        '<xhtml:object data="https://example.com/x.png">remote</xhtml:object>'
        '<xhtml:object data="/etc/passwd">absolute</xhtml:object>'
        '<xhtml:object data="../outside.txt">outside</xhtml:object>'
        "</xhtml:div></THE-VALUE></ATTRIBUTE-VALUE-XHTML>"
    )
    doc = reqif_in.read(FOREIGN.replace(b"<VALUES>", b"<VALUES>" + value.encode(), 1))
    assert doc.objects["sup-1"].files == [
        ("files/ab/diagram.png", "image/png"),
        ("files/cd/notes.txt", ""),
    ]
    assert doc.objects["sup-2"].files == []
    members = _zip(**{"a.reqif": b"<x/>", "./files/ab/d.png": b"12"})
    assert reqif_in.archive_members(members) == {
        "a.reqif": "a.reqif",
        "files/ab/d.png": "./files/ab/d.png",
    }
    assert reqif_in.archive_members(FOREIGN) == {}
