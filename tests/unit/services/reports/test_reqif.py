"""The ReqIF exporter over an API it reads (a stand-in answering canned bodies): every
field type as its datatype, rich text made valid XHTML, identifiers made XML names, the
tree and relations, and each document valid against ReqIF 1.2's schema."""

from __future__ import annotations

import io
import zipfile
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest
from lxml import etree

from plumbline.common.reqif import NS as REQIF_NS
from plumbline.common.reqif import XHTML
from plumbline.services.reports import reqif
from plumbline.services.reports.reading import ReportFailed
from plumbline.services.reports.xhtml import to_xhtml
from tests.reqifschema import assert_valid, schema

NS = {"r": REQIF_NS, "x": XHTML}
FIELDS = [
    {"name": "name", "label": "Name", "fieldType": "STRING"},
    {"name": "description", "label": "Description", "fieldType": "TEXT", "textType": "RICHTEXT"},
    {"name": "notes", "label": "Notes", "fieldType": "TEXT"},
    {"name": "count", "label": "Count", "fieldType": "INTEGER"},
    {"name": "done", "label": "Done", "fieldType": "BOOLEAN"},
    {"name": "due", "label": "Due", "fieldType": "DATE"},
    {"name": "priority", "label": "Priority", "fieldType": "LOOKUP", "pickList": 5},
    {"name": "tags$3", "label": "Tags", "fieldType": "MULTI_LOOKUP", "pickList": 5},
    {"name": "owner", "label": "Owner", "fieldType": "USER"},
    {"name": "link", "label": "Link", "fieldType": "URL_STRING"},
    {"name": "steps", "label": "Steps", "fieldType": "STEPS"},
    {"name": "group", "label": "Group", "fieldType": "GROUP"},
]
ITEM_TYPES = [
    {"id": 3, "typeKey": "REQ", "display": "Requirement", "category": "CORE", "fields": FIELDS},
    {"id": 9, "typeKey": "TR", "display": "Test Run", "category": "TEST_RUN", "fields": []},
]


def _item(item: int, parent: int | None, global_id: str, **fields: Any) -> dict[str, Any]:
    return {
        "id": item,
        "type": "items",
        "project": 1,
        "itemType": 3,
        "documentKey": f"P-REQ-{item}",
        "globalId": global_id,
        "modifiedDate": "2026-01-31T13:45:00.000+0100",
        "fields": {"name": f"Item {item}", **fields},
        "location": {"parent": {"item": parent} if parent else {"project": 1}},
    }


ITEMS = [
    _item(
        10,
        None,
        "GID-REQ-10",
        description="<p>A <b>rich</b> text</p><ul><li>one</li></ul><script>x()</script>",
        notes="plain\x01 text <not html>",
        count=-42,
        done=True,
        due="2026-02-01",
        priority=51,
        **{"tags$3": [51, 52, 999]},
        owner=7,
        link="https://example.com/a?b=1&c=2",
        steps=[{"action": "Press <go>", "expectedResult": "It goes", "notes": ""}],
        group=[1, 2],
    ),
    _item(11, 10, "has spaces:and$signs"),
    _item(12, 11, "GID-REQ-12", done=False, count=0),
    _item(13, None, "GID-REQ-10"),  # another item's global id
]


def _link(owner: int, made: int, name: str, mime_type: str, sha256: str) -> dict[str, Any]:
    return {
        "owner": owner,
        "attachment": {"id": made, "fileName": name, "mimeType": mime_type},
        "sha256": sha256,
    }


class Canned:
    """Answers the API paths the exporter reads, as the REST API would."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items
        self.bodies: dict[str, Any] = {
            "v1/projects/1": {"data": {"id": 1, "projectKey": "P", "fields": {"name": "Plan"}}},
            "v1/picklists": [{"id": 5, "name": "Priority"}],
            "v1/picklists/5/options": [
                {"id": 51, "name": "High", "sortOrder": 0, "color": "#f00"},
                {"id": 52, "name": "Low", "sortOrder": 1},
            ],
            "v1/itemtypes": ITEM_TYPES,
            "v1/relationshiptypes": [
                {"id": 2, "name": "Verified by"},
                {"id": 4, "name": "Related"},
            ],
            "v1/items": items,
            "v1/items/11": {"data": items[1]},
            "labs/projects/1/attachmentlinks": [
                _link(12, 70, "a/b\\photo:1.png", "image/png", "ab" * 32),
                _link(10, 71, "outside.txt", "text/plain", "cd" * 32),
                _link(11, 72, "", "", ""),  # no file yet
                _link(11, 70, "a/b\\photo:1.png", "image/png", "ab" * 32),
            ],
        }
        self.files = {70: [b"\x89PNG", b" and more"], 71: [b"not exported"]}

    async def stream(self, path: str) -> AsyncIterator[bytes]:
        for piece in self.files[int(path.split("/")[2])]:
            yield piece

    async def get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        if path not in self.bodies:
            raise ReportFailed(f"No {path}.", 404)
        return self.bodies[path]

    async def pages(
        self, path: str, params: Mapping[str, Any] | None = None
    ) -> AsyncIterator[tuple[Any, int]]:
        if path == "labs/trace":
            data = self._traces(int((params or {})["itemType"]))
        else:
            data = self.bodies[path]
        # Two pages, as a real list would come.
        half = len(data) // 2
        for part in (data[:half], data[half:]):
            yield {"data": part}, len(data)

    def _traces(self, item_type: int) -> list[dict[str, Any]]:
        links = {10: [(11, 2, 100), (12, 4, 101), (99, 2, 102)], 12: [(10, 2, 103)]}
        return [
            {
                "item": {"id": i["id"]},
                "levels": [
                    [
                        {"item": {"id": to}, "relationshipType": kind, "relationship": rel}
                        for to, kind, rel in links.get(i["id"], [])
                    ]
                ]
                if i["id"] in links
                else [],
            }
            for i in self.items
            if i["itemType"] == item_type
        ]


async def _export(scope: reqif.Scope | None = None, zipped: bool = False) -> bytes:
    reader: Any = Canned(ITEMS)
    pieces = reqif.export(reader, 1, scope or reqif.Scope(), zipped)
    return b"".join([piece async for piece in pieces])


def _values(doc: Any, identifier: str) -> dict[str, Any]:
    names = {
        d.get("IDENTIFIER"): d.get("LONG-NAME") for d in doc.iterfind(".//r:SPEC-ATTRIBUTES/*", NS)
    }
    [obj] = [o for o in doc.iterfind(".//r:SPEC-OBJECT", NS) if o.get("IDENTIFIER") == identifier]
    found: dict[str, Any] = {}
    for value in obj.find("r:VALUES", NS):
        name = names[value.find("r:DEFINITION/*", NS).text]
        kind = etree.QName(value).localname.removeprefix("ATTRIBUTE-VALUE-")
        if kind == "XHTML":
            found[name] = (kind, value.find("r:THE-VALUE/x:div", NS))
        elif kind == "ENUMERATION":
            found[name] = (kind, [v.text for v in value.iterfind("r:VALUES/*", NS)])
        else:
            found[name] = (kind, value.get("THE-VALUE"))
    return found


async def test_every_field_type_becomes_its_datatype_in_a_valid_document() -> None:
    doc = assert_valid(await _export())
    values = _values(doc, "GID-REQ-10")
    assert values["name"] == ("STRING", "Item 10")
    assert values["ReqIF.ForeignID"] == ("STRING", "P-REQ-10")
    assert values["notes"] == ("STRING", "plain text <not html>")  # no control characters
    assert values["count"] == ("INTEGER", "-42")
    assert values["done"] == ("BOOLEAN", "true")
    assert values["due"] == ("DATE", "2026-02-01T00:00:00Z")
    assert values["priority"] == ("ENUMERATION", ["PL-EV-51"])
    assert values["tags$3"] == ("ENUMERATION", ["PL-EV-51", "PL-EV-52"])  # 999 is no option
    assert values["owner"] == ("INTEGER", "7")
    assert values["link"] == ("STRING", "https://example.com/a?b=1&c=2")
    assert "group" not in values  # no ReqIF datatype carries it
    kind, rich = values["description"]
    assert kind == "XHTML"
    assert rich.find("x:p/x:b", NS).text == "rich"
    assert rich.find("x:ul/x:li", NS).text == "one"
    assert b"x()" not in etree.tostring(rich)
    _, steps = values["steps"]
    assert [c.text for c in steps.iterfind(".//x:td", NS)] == ["Press <go>", "It goes", None]
    # The multi-select's definition says so; the single one's does not.
    multi = {
        d.get("LONG-NAME"): d.get("MULTI-VALUED")
        for d in doc.iterfind(".//r:ATTRIBUTE-DEFINITION-ENUMERATION", NS)
    }
    assert multi == {"priority": "false", "tags$3": "true"}
    # The test run type is not exported: its records are not items.
    assert [t.get("LONG-NAME") for t in doc.iterfind(".//r:SPEC-OBJECT-TYPE", NS)] == [
        "Requirement"
    ]
    assert _values(doc, "GID-REQ-12")["done"] == ("BOOLEAN", "false")
    assert doc.find(".//r:SPEC-OBJECT", NS).get("LAST-CHANGE") == "2026-01-31T13:45:00.000+01:00"


async def test_identifiers_tree_and_relations() -> None:
    doc = assert_valid(await _export())
    made = [o.get("IDENTIFIER") for o in doc.iterfind(".//r:SPEC-OBJECT", NS)]
    odd = "_has_x20_spaces_x3a_and_x24_signs"
    assert made == ["GID-REQ-10", odd, "GID-REQ-12", "GID-REQ-10-PL13"]
    [spec] = doc.iterfind(".//r:SPECIFICATION", NS)
    tops = spec.findall("r:CHILDREN/r:SPEC-HIERARCHY", NS)
    assert [t.find("r:OBJECT/*", NS).text for t in tops] == ["GID-REQ-10", "GID-REQ-10-PL13"]
    deep = tops[0].find("r:CHILDREN/r:SPEC-HIERARCHY/r:CHILDREN/r:SPEC-HIERARCHY/r:OBJECT/*", NS)
    assert deep.text == "GID-REQ-12"
    relations = [
        (
            r.find("r:SOURCE/*", NS).text,
            r.find("r:TARGET/*", NS).text,
            r.find("r:TYPE/*", NS).text,
        )
        for r in doc.iterfind(".//r:SPEC-RELATION", NS)
    ]
    # Item 99 is not exported: its relationship is left out.
    assert relations == [
        ("GID-REQ-10", odd, "PL-RT-2"),
        ("GID-REQ-10", "GID-REQ-12", "PL-RT-4"),
        ("GID-REQ-12", "GID-REQ-10", "PL-RT-2"),
    ]
    again = assert_valid(await _export())
    assert [r.get("IDENTIFIER") for r in doc.iterfind(".//r:SPEC-RELATION", NS)] == [
        r.get("IDENTIFIER") for r in again.iterfind(".//r:SPEC-RELATION", NS)
    ]


async def test_a_subtree_and_a_zip() -> None:
    doc = assert_valid(await _export(reqif.Scope(item=11)))
    made = [o.get("IDENTIFIER") for o in doc.iterfind(".//r:SPEC-OBJECT", NS)]
    assert made == ["_has_x20_spaces_x3a_and_x24_signs", "GID-REQ-12"]
    assert doc.findall(".//r:SPEC-RELATION", NS) == []  # 10 is not in it
    assert b"PL.Attachments" not in await _export(reqif.Scope(item=11))
    zipped = await _export(reqif.Scope(item=11), zipped=True)
    # The document, then each exported item's file once, by content and name.
    path = "files/abababababababab/photo_1.png"
    with zipfile.ZipFile(io.BytesIO(zipped)) as archive:
        assert archive.namelist() == ["P.reqif", path]
        assert archive.read(path) == b"\x89PNG and more"
        doc = assert_valid(archive.read("P.reqif"))
    named = {
        o.get("IDENTIFIER"): [
            (x.get("data"), x.get("type"), x.text) for x in o.iterfind(".//x:object", NS)
        ]
        for o in doc.iterfind(".//r:SPEC-OBJECT", NS)
    }
    assert named == {
        "_has_x20_spaces_x3a_and_x24_signs": [(path, "image/png", "photo_1.png")],
        "GID-REQ-12": [(path, "image/png", "photo_1.png")],
    }
    with pytest.raises(ReportFailed, match="No v1/items/404"):
        await _export(reqif.Scope(item=404))


def _document_with(value: Any) -> bytes:
    """A valid ReqIF document but for ``value``, one object's XHTML value."""
    when = 'LAST-CHANGE="2026-01-01T00:00:00Z"'
    document = etree.fromstring(
        f"""<REQ-IF xmlns="{REQIF_NS}">
        <THE-HEADER><REQ-IF-HEADER IDENTIFIER="h"><CREATION-TIME>2026-01-01T00:00:00Z
        </CREATION-TIME><REQ-IF-TOOL-ID>t</REQ-IF-TOOL-ID><REQ-IF-VERSION>1.0</REQ-IF-VERSION>
        <SOURCE-TOOL-ID>t</SOURCE-TOOL-ID><TITLE>t</TITLE></REQ-IF-HEADER></THE-HEADER>
        <CORE-CONTENT><REQ-IF-CONTENT>
        <DATATYPES><DATATYPE-DEFINITION-XHTML IDENTIFIER="x" {when}/></DATATYPES>
        <SPEC-TYPES><SPEC-OBJECT-TYPE IDENTIFIER="t" {when}><SPEC-ATTRIBUTES>
        <ATTRIBUTE-DEFINITION-XHTML IDENTIFIER="d" {when}><TYPE>
        <DATATYPE-DEFINITION-XHTML-REF>x</DATATYPE-DEFINITION-XHTML-REF>
        </TYPE></ATTRIBUTE-DEFINITION-XHTML></SPEC-ATTRIBUTES></SPEC-OBJECT-TYPE></SPEC-TYPES>
        <SPEC-OBJECTS><SPEC-OBJECT IDENTIFIER="o" {when}><VALUES><ATTRIBUTE-VALUE-XHTML>
        <DEFINITION><ATTRIBUTE-DEFINITION-XHTML-REF>d</ATTRIBUTE-DEFINITION-XHTML-REF></DEFINITION>
        <THE-VALUE/></ATTRIBUTE-VALUE-XHTML></VALUES>
        <TYPE><SPEC-OBJECT-TYPE-REF>t</SPEC-OBJECT-TYPE-REF></TYPE></SPEC-OBJECT></SPEC-OBJECTS>
        </REQ-IF-CONTENT></CORE-CONTENT></REQ-IF>""".encode()
    )
    document.find(".//r:THE-VALUE", NS).append(value)
    return bytes(etree.tostring(document))


@pytest.mark.parametrize(
    "html",
    [
        "",
        "just text & more",
        "<li>orphan</li><td>cell</td><tr><td>row</td></tr>",
        "<span><p>block in inline</p></span><a href='javascript:x'><a>nested</a></a>",
        "<ul>text<li>a</li></ul><table>loose<tr><td>b</td></tr></table><ol></ol>",
        "<pre>code <sub>x</sub></pre><h1>Title</h1><p><ul><li>in p</li></ul></p>",
        "<blockquote>quoted</blockquote><img src='http://e/x.png'><iframe>i</iframe>",
        "<table><tbody><tr><th colspan='2'>h</th><td rowspan='x'>c</td></tr></tbody></table>",
        "<dl><dt>term</dt><dd>def<p>para</p></dd>loose</dl><u>u</u><s>s</s>",
    ],
)
def test_any_html_becomes_xhtml_the_schema_accepts(html: str) -> None:
    value = to_xhtml(html)
    assert_valid(_document_with(value))
    text = "".join(value.itertext())
    for word in ("orphan", "cell", "block in inline", "nested", "quoted", "term", "para"):
        if word in html:
            assert word in text
    assert "javascript" not in etree.tostring(value).decode()


def test_the_check_of_xhtml_would_see_a_bad_value() -> None:
    """The test above would fail if the value were not valid: a list item outside a list
    is refused, where the same document with a paragraph passes."""
    assert_valid(_document_with(to_xhtml("<p>x</p>")))
    value = to_xhtml("<p>x</p>")
    etree.SubElement(value, f"{{{NS['x']}}}li").text = "bad"
    assert not schema().validate(etree.fromstring(_document_with(value)))
    assert any("}li'" in e.message for e in schema().error_log)


def test_identifiers_and_dates() -> None:
    assert reqif.identifier("GID-REQ-1") == "GID-REQ-1"
    assert reqif.identifier("1abc") == "_1abc"
    assert reqif.identifier("a b") == "_a_x20_b"
    assert reqif.xsd_datetime("2026-01-31T13:45:00.000+0000") == "2026-01-31T13:45:00.000+00:00"
    assert reqif.xsd_datetime("2026-01-31") == "2026-01-31T00:00:00Z"
