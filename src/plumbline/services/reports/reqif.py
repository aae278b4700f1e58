"""ReqIF 1.2 export: a project, an item and what is under it, a filter's items or a
baseline, as ``.reqif`` (XML) or ``.reqifz`` (the same in a zip), read through the REST API
as whoever asked (``reading.Reader``) and written as it is read.

What becomes what:

- item types (not test plans, cycles, runs or attachments) are SPEC-OBJECT-TYPEs; their
  fields are attribute definitions named by the field's name (the label in DESC): STRING
  and URL_STRING strings, rich TEXT and STEPS XHTML (steps as a table), plain TEXT a
  string, INTEGER, USER and RELEASE integers (ids), BOOLEAN, DATE, LOOKUP an enumeration
  of its pick list, MULTI_LOOKUP a multi-valued one; every object also has
  ``ReqIF.ForeignID``, its document key;
- items are SPEC-OBJECTs whose IDENTIFIER is their global id (made a valid XML name
  where it is not one), so the same item has the same identifier in every export, and an
  import keeps it;
- the tree is the one SPECIFICATION's hierarchy (a filter's items without their parent
  in the export at its top);
- relationships between exported items are SPEC-RELATIONs typed by relationship type
  (SPEC-RELATION-TYPEs), identified by their ends and type, so stable across a round trip;
- in a ``.reqifz``, the files of the exported items' attachments follow the document as
  ``files/<the start of its SHA-256>/<file name>`` (once for the same name and content),
  and each type has an XHTML attribute
  ``PL.Attachments`` whose value names an item's files (``<object data="files/...">``),
  as ReqIF tools reference a document's files.

Memory holds the configuration, each exported item's id, identifier and parent, and a
page; relationships are read after the items, by item type (``/trace`` at depth 1).
"""

from __future__ import annotations

import hashlib
import re
import zipfile
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from plumbline.common.dates import format_datetime, utcnow
from plumbline.common.reqif import NOT_ITEMS, NS, XHTML, escape
from plumbline.services.reports.reading import Reader, ReportFailed
from plumbline.services.reports.xhtml import to_xhtml

#: The attribute every object has: its document key.
FOREIGN_ID = "ReqIF.ForeignID"
#: The attribute that names an object's files in a ``.reqifz``.
ATTACHMENTS = "PL.Attachments"
#: Where a ``.reqifz`` keeps the attachments' files.
FILES = "files"
#: System fields an item's identity is in, not an attribute of its own.
_IDENTITY_FIELDS = frozenset(("documentKey", "globalId"))
#: Bytes gathered before they are handed on.
FLUSH_BYTES = 256 * 1024
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9._-]*")
_INT64 = (-(2**63), 2**63 - 1)

Progress = Callable[[int, str], Awaitable[None]]


async def _no_progress(percent: int, message: str) -> None:
    return None


def identifier(text: str) -> str:
    """``text`` as an XML ID (an NCName): itself when it is one, else with each character
    an ID cannot hold written as ``_xHH_`` after a leading ``_``."""
    if _NAME.fullmatch(text):
        return text
    return "_" + re.sub(r"[^A-Za-z0-9._-]", lambda m: f"_x{ord(m.group()):x}_", text)


def xsd_datetime(text: str) -> str:
    """A date of the API (``2024-01-31T13:45:00.000+0000`` or ``2024-01-31``) as
    ``xsd:dateTime``."""
    if len(text) == 10:
        return f"{text}T00:00:00Z"
    match = re.fullmatch(r"(.*)([+-]\d{2}):?(\d{2})", text)
    return f"{match.group(1)}{match.group(2)}:{match.group(3)}" if match else text


@dataclass(frozen=True)
class Scope:
    """What is exported: the project, or one of an item's subtree, a filter's items or a
    baseline."""

    item: int | None = None
    filter: int | None = None
    baseline: int | None = None


@dataclass
class _Attribute:
    """An attribute definition: a field of an item type as ReqIF has it."""

    id: str
    name: str
    kind: str  # STRING, XHTML, INTEGER, BOOLEAN, DATE, ENUMERATION
    datatype: str
    label: str = ""
    multi: bool = False
    field_type: str = ""


@dataclass
class _Type:
    id: str
    item_type: dict[str, Any]
    attributes: list[_Attribute] = field(default_factory=list)


@dataclass(frozen=True)
class _File:
    """An attachment's file, as a ``.reqifz`` holds it."""

    attachment: int
    path: str
    name: str
    mime_type: str


@dataclass
class _Catalog:
    types: dict[int, _Type]
    pick_lists: dict[int, dict[str, Any]]
    options: dict[int, list[dict[str, Any]]]
    relationship_types: dict[int, str]


class _Sink:
    """Where lxml writes: bytes kept until taken (no seek: a zip streams into it)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        self.size += len(data)
        return len(data)

    def flush(self) -> None:
        return None

    def close(self) -> None:
        return None

    def take(self) -> bytes:
        data = b"".join(self.parts)
        self.parts.clear()
        self.size = 0
        return data


async def export(
    reader: Reader,
    project: int,
    scope: Scope,
    zipped: bool = False,
    progress: Progress = _no_progress,
) -> AsyncIterator[bytes]:
    """The ReqIF document of ``scope`` in ``project``, in pieces as it is written."""
    info = (await reader.get(f"v1/projects/{project}"))["data"]
    await _check_scope(reader, project, scope)
    catalog = await _catalog(reader)
    files: dict[int, list[_File]] = {}
    if zipped:
        files = await _files(reader, project)
        for spec in catalog.types.values():
            spec.attributes.append(
                _Attribute(
                    f"{spec.id}-{ATTACHMENTS}", ATTACHMENTS, "XHTML", "PL-DT-XHTML", "Attachments"
                )
            )
    now = xsd_datetime(format_datetime(utcnow()))
    name = str(info.get("projectKey") or project)
    sink = _Sink()
    archive = zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED) if zipped else None
    out: Any = archive.open(f"{name}.reqif", "w") if archive is not None else sink
    with etree.xmlfile(out, encoding="utf-8") as xf:
        xf.write_declaration()
        with xf.element(f"{{{NS}}}REQ-IF", nsmap={None: NS, "xhtml": XHTML}):
            xf.write(_header(info, scope, now))
            with xf.element(f"{{{NS}}}CORE-CONTENT"), xf.element(f"{{{NS}}}REQ-IF-CONTENT"):
                xf.write(_datatypes(catalog, now))
                xf.write(_spec_types(catalog, now))
                placed = _Placed()
                with xf.element(f"{{{NS}}}SPEC-OBJECTS"):
                    async for item, parent in _items(reader, project, scope, progress):
                        element = _spec_object(item, catalog, files.get(int(item["id"]), []))
                        if element is None:
                            continue
                        made = placed.unique(element.get("IDENTIFIER"), int(item["id"]))
                        element.set("IDENTIFIER", made)
                        xf.write(element)
                        placed.add(int(item["id"]), made, parent)
                        if sink.size > FLUSH_BYTES:
                            xf.flush()
                            yield sink.take()
                await progress(80, f"{len(placed.order)} items written; their relationships")
                with xf.element(f"{{{NS}}}SPEC-RELATIONS"):
                    async for relation in _relations(reader, project, scope, catalog, placed, now):
                        xf.write(relation)
                        if sink.size > FLUSH_BYTES:
                            xf.flush()
                            yield sink.take()
                with xf.element(f"{{{NS}}}SPECIFICATIONS"):
                    xf.write(_specification(info, scope, placed, now))
    if archive is not None:
        out.close()
        sent = {f.path: f for item in placed.order for f in files.get(item, [])}
        for done, file in enumerate(sent.values()):
            await progress(90 + 9 * done // len(sent), f"files: {done} of {len(sent)}")
            with archive.open(file.path, "w") as member:
                async for data in reader.stream(f"v1/attachments/{file.attachment}/file"):
                    member.write(data)
                    if sink.size > FLUSH_BYTES:
                        yield sink.take()
        archive.close()
    yield sink.take()


async def _files(reader: Reader, project: int) -> dict[int, list[_File]]:
    """The files on the project's items (and test records), by owner."""
    found: dict[int, list[_File]] = {}
    async for body, _ in reader.pages(f"labs/projects/{project}/attachmentlinks"):
        for link in body["data"]:
            attachment = link["attachment"]
            if not attachment.get("fileName"):
                continue  # no file uploaded yet
            name = _file_name(str(attachment["fileName"]))
            made = int(attachment["id"])
            # By content and name, not by id: the same after a round trip.
            folder = str(link.get("sha256") or "")[:16] or f"attachment-{made}"
            found.setdefault(int(link["owner"]), []).append(
                _File(made, f"{FILES}/{folder}/{name}", name, str(attachment.get("mimeType") or ""))
            )
    return found


def _file_name(name: str) -> str:
    """A file's name as an archive member's last part: no directories, no characters a
    file system or an XML attribute would stumble on."""
    last = re.split(r"[/\\]", name)[-1]
    cleaned = re.sub(r"[\x00-\x1f\x7f:*?\"<>|]", "_", last).strip(" .")
    return cleaned[:200] or "file"


async def _check_scope(reader: Reader, project: int, scope: Scope) -> None:
    """Refuses an item, filter or baseline that is not there or not of the project
    before anything is written (the API's 404 for what is not there)."""
    for path, wanted in (
        ("items", scope.item),
        ("filters", scope.filter),
        ("baselines", scope.baseline),
    ):
        if wanted is None:
            continue
        found = (await reader.get(f"v1/{path}/{wanted}"))["data"]
        if int(found.get("project", project)) != project:
            raise ReportFailed(f"{path[:-1]} {wanted} is not of project {project}.")


async def _catalog(reader: Reader) -> _Catalog:
    types: dict[int, _Type] = {}
    pick_lists: dict[int, dict[str, Any]] = {}
    async for body, _ in reader.pages("v1/picklists"):
        pick_lists |= {int(p["id"]): p for p in body["data"]}
    options: dict[int, list[dict[str, Any]]] = {}
    async for body, _ in reader.pages("v1/itemtypes"):
        for item_type in body["data"]:
            if item_type.get("category") in NOT_ITEMS:
                continue
            spec = _Type(f"PL-TYPE-{identifier(item_type['typeKey'])}", item_type)
            spec.attributes.append(
                _Attribute(
                    f"{spec.id}-{FOREIGN_ID}", FOREIGN_ID, "STRING", "PL-DT-STRING", "Document key"
                )
            )
            for f in item_type.get("fields", []):
                if f.get("name") in _IDENTITY_FIELDS:
                    continue  # the object's identifier and ReqIF.ForeignID say these
                attribute = _attribute(spec.id, f)
                if attribute is None:
                    continue
                if attribute.kind == "ENUMERATION":
                    pick_list = int(f["pickList"])
                    if pick_list not in options:
                        options[pick_list] = [
                            o
                            async for body, _ in reader.pages(f"v1/picklists/{pick_list}/options")
                            for o in body["data"]
                        ]
                spec.attributes.append(attribute)
            types[int(item_type["id"])] = spec
    relationship_types: dict[int, str] = {}
    async for body, _ in reader.pages("v1/relationshiptypes"):
        relationship_types |= {int(t["id"]): str(t["name"]) for t in body["data"]}
    return _Catalog(types, pick_lists, options, relationship_types)


def _attribute(type_id: str, f: dict[str, Any]) -> _Attribute | None:
    """A field as an attribute definition; None for what ReqIF does not carry."""
    field_type = str(f.get("fieldType", ""))
    made = f"{type_id}-{identifier(str(f['name']))}"
    label = str(f.get("label", ""))

    def attribute(kind: str, datatype: str, multi: bool = False) -> _Attribute:
        return _Attribute(made, str(f["name"]), kind, datatype, label, multi, field_type)

    if field_type in ("LOOKUP", "MULTI_LOOKUP", "TEST_CASE_STATUS") and f.get("pickList"):
        return attribute(
            "ENUMERATION", f"PL-DT-LIST-{int(f['pickList'])}", field_type == "MULTI_LOOKUP"
        )
    if field_type == "STEPS" or (field_type == "TEXT" and f.get("textType") == "RICHTEXT"):
        return attribute("XHTML", "PL-DT-XHTML")
    if field_type in ("STRING", "URL_STRING", "TEXT", "TEST_RUN_STATUS"):
        return attribute("STRING", "PL-DT-STRING")
    if field_type in ("INTEGER", "USER", "RELEASE", "DOCUMENT_TYPE_ITEM_LOOKUP"):
        return attribute("INTEGER", "PL-DT-INTEGER")
    if field_type == "BOOLEAN":
        return attribute("BOOLEAN", "PL-DT-BOOLEAN")
    if field_type == "DATE":
        return attribute("DATE", "PL-DT-DATE")
    return None


def _e(tag: str, attrib: dict[str, str] | None = None, text: str | None = None) -> Any:
    element = etree.Element(f"{{{NS}}}{tag}", attrib or {})
    if text is not None:
        element.text = text
    return element


def _sub(
    parent: Any, tag: str, attrib: dict[str, str] | None = None, text: str | None = None
) -> Any:
    element = etree.SubElement(parent, f"{{{NS}}}{tag}", attrib or {})
    if text is not None:
        element.text = text
    return element


def _ref(parent: Any, holder: str, tag: str, target: str) -> None:
    _sub(_sub(parent, holder), tag, text=target)


def _header(info: dict[str, Any], scope: Scope, now: str) -> Any:
    header = _e("THE-HEADER")
    what = (
        f"item {scope.item} and what is under it"
        if scope.item is not None
        else f"the items of filter {scope.filter}"
        if scope.filter is not None
        else f"baseline {scope.baseline}"
        if scope.baseline is not None
        else "the project"
    )
    made = _sub(header, "REQ-IF-HEADER", {"IDENTIFIER": f"PL-HEADER-{info['id']}"})
    _sub(made, "COMMENT", text=f"Plumbline export of {what}")
    _sub(made, "CREATION-TIME", text=now)
    _sub(made, "REPOSITORY-ID", text=f"plumbline-project-{info['id']}")
    _sub(made, "REQ-IF-TOOL-ID", text="Plumbline")
    _sub(made, "REQ-IF-VERSION", text="1.0")
    _sub(made, "SOURCE-TOOL-ID", text="Plumbline")
    _sub(made, "TITLE", text=str(info.get("fields", {}).get("name", "")))
    return header


def _datatypes(catalog: _Catalog, now: str) -> Any:
    holder = _e("DATATYPES")
    common = {"LAST-CHANGE": now}
    _sub(
        holder,
        "DATATYPE-DEFINITION-BOOLEAN",
        {"IDENTIFIER": "PL-DT-BOOLEAN", "LONG-NAME": "Boolean", **common},
    )
    _sub(
        holder,
        "DATATYPE-DEFINITION-DATE",
        {"IDENTIFIER": "PL-DT-DATE", "LONG-NAME": "Date", **common},
    )
    for pick_list, options in sorted(catalog.options.items()):
        listed = catalog.pick_lists.get(pick_list, {})
        enumeration = _sub(
            holder,
            "DATATYPE-DEFINITION-ENUMERATION",
            {
                "IDENTIFIER": f"PL-DT-LIST-{pick_list}",
                "LONG-NAME": str(listed.get("name", pick_list)),
                **common,
            },
        )
        values = _sub(enumeration, "SPECIFIED-VALUES")
        for option in options:
            value = _sub(
                values,
                "ENUM-VALUE",
                {
                    "IDENTIFIER": f"PL-EV-{int(option['id'])}",
                    "LONG-NAME": str(option["name"]),
                    **common,
                },
            )
            _sub(
                _sub(value, "PROPERTIES"),
                "EMBEDDED-VALUE",
                {
                    "KEY": str(int(option.get("sortOrder", 0))),
                    "OTHER-CONTENT": str(option.get("color", "")),
                },
            )
    low, high = _INT64
    _sub(
        holder,
        "DATATYPE-DEFINITION-INTEGER",
        {
            "IDENTIFIER": "PL-DT-INTEGER",
            "LONG-NAME": "Integer",
            "MIN": str(low),
            "MAX": str(high),
            **common,
        },
    )
    _sub(
        holder,
        "DATATYPE-DEFINITION-STRING",
        {"IDENTIFIER": "PL-DT-STRING", "LONG-NAME": "String", "MAX-LENGTH": "1000000", **common},
    )
    _sub(
        holder,
        "DATATYPE-DEFINITION-XHTML",
        {"IDENTIFIER": "PL-DT-XHTML", "LONG-NAME": "Rich text", **common},
    )
    return holder


def _spec_types(catalog: _Catalog, now: str) -> Any:
    holder = _e("SPEC-TYPES")
    for spec in catalog.types.values():
        item_type = spec.item_type
        made = _sub(
            holder,
            "SPEC-OBJECT-TYPE",
            {
                "IDENTIFIER": spec.id,
                "LONG-NAME": str(item_type["display"]),
                "DESC": str(item_type["typeKey"]),
                "LAST-CHANGE": now,
            },
        )
        attributes = _sub(made, "SPEC-ATTRIBUTES")
        for a in spec.attributes:
            definition = _sub(
                attributes,
                f"ATTRIBUTE-DEFINITION-{a.kind}",
                {
                    "IDENTIFIER": a.id,
                    "LONG-NAME": a.name,
                    "LAST-CHANGE": now,
                    **({"DESC": a.label} if a.label else {}),
                },
            )
            if a.kind == "ENUMERATION":
                definition.set("MULTI-VALUED", "true" if a.multi else "false")
            _ref(definition, "TYPE", f"DATATYPE-DEFINITION-{a.kind}-REF", a.datatype)
    for type_id, type_name in sorted(catalog.relationship_types.items()):
        _sub(
            holder,
            "SPEC-RELATION-TYPE",
            {"IDENTIFIER": f"PL-RT-{type_id}", "LONG-NAME": type_name, "LAST-CHANGE": now},
        )
    _sub(
        holder,
        "SPECIFICATION-TYPE",
        {"IDENTIFIER": "PL-ST-TREE", "LONG-NAME": "Project tree", "LAST-CHANGE": now},
    )
    return holder


def _spec_object(item: dict[str, Any], catalog: _Catalog, files: list[_File]) -> Any | None:
    spec = catalog.types.get(int(item["itemType"]))
    if spec is None:
        return None
    made = _e(
        "SPEC-OBJECT",
        {
            "IDENTIFIER": identifier(str(item.get("globalId") or f"PL-ITEM-{item['id']}")),
            "LONG-NAME": str(item.get("documentKey", "")),
            "LAST-CHANGE": xsd_datetime(str(item.get("modifiedDate") or item.get("createdDate"))),
        },
    )
    values = _sub(made, "VALUES")
    fields = item.get("fields", {})
    for a in spec.attributes:
        if a.name == ATTACHMENTS:
            if files:
                element = _sub(values, "ATTRIBUTE-VALUE-XHTML")
                _ref(element, "DEFINITION", "ATTRIBUTE-DEFINITION-XHTML-REF", a.id)
                _sub(element, "THE-VALUE").append(_objects(files))
            continue
        value = item.get("documentKey") if a.name == FOREIGN_ID else fields.get(a.name)
        _value(values, a, value, catalog)
    _ref(made, "TYPE", "SPEC-OBJECT-TYPE-REF", spec.id)
    return made


def _objects(files: list[_File]) -> Any:
    """An item's files as XHTML: an ``object`` per file, its text the file's name."""
    holder = etree.Element(f"{{{XHTML}}}div")
    for file in files:
        made = etree.SubElement(
            holder,
            f"{{{XHTML}}}object",
            {"data": file.path, "type": file.mime_type or "application/octet-stream"},
        )
        made.text = file.name
    return holder


def _value(values: Any, a: _Attribute, value: Any, catalog: _Catalog) -> None:
    """Appends ``a``'s value, if it has one ReqIF can carry."""
    if value is None or value == "" or value == []:
        return
    tag = f"ATTRIBUTE-VALUE-{a.kind}"
    ref = f"ATTRIBUTE-DEFINITION-{a.kind}-REF"
    if a.kind == "ENUMERATION":
        chosen = value if isinstance(value, list) else [value]
        known = {int(o["id"]) for o in catalog.options.get(int(a.datatype.rsplit("-", 1)[1]), [])}
        picked = [int(v) for v in chosen if isinstance(v, int) and int(v) in known]
        if not picked:
            return
        element = _sub(values, tag)
        _ref(element, "DEFINITION", ref, a.id)
        listed = _sub(element, "VALUES")
        for option in picked:
            _sub(listed, "ENUM-VALUE-REF", text=f"PL-EV-{option}")
        return
    if a.kind == "XHTML":
        element = _sub(values, tag)
        _ref(element, "DEFINITION", ref, a.id)
        text = _steps_html(value) if a.field_type == "STEPS" else str(value)
        _sub(element, "THE-VALUE").append(to_xhtml(text))
        return
    if a.kind == "INTEGER":
        if isinstance(value, bool) or not isinstance(value, int):
            return
        shown = str(value)
    elif a.kind == "BOOLEAN":
        if not isinstance(value, bool):
            return
        shown = "true" if value else "false"
    elif a.kind == "DATE":
        shown = xsd_datetime(str(value))
    else:
        shown = value if isinstance(value, str) else str(value)
    element = _sub(values, tag, {"THE-VALUE": _xml_text(shown)})
    _ref(element, "DEFINITION", ref, a.id)


def _xml_text(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot hold."""
    return re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]", "", text)


def _steps_html(value: Any) -> str:
    """Test case steps as an HTML table (action, expected result, notes)."""
    if not isinstance(value, list):
        return str(value)
    rows = "".join(
        "<tr>"
        + "".join(
            f"<td>{escape(str(step.get(k, '')) if isinstance(step, dict) else '')}</td>"
            for k in ("action", "expectedResult", "notes")
        )
        + "</tr>"
        for step in value
    )
    return f"<table><tr><th>Action</th><th>Expected result</th><th>Notes</th></tr>{rows}</table>"


class _Placed:
    """The exported items: their identifiers and the tree, in the order read."""

    def __init__(self) -> None:
        self.order: list[int] = []
        self.ids: dict[int, str] = {}
        self.parents: dict[int, int | None] = {}
        self.taken: set[str] = set()

    def unique(self, made: str, item: int) -> str:
        """``made``, or, when another item has it already (global ids need not be
        unique), ``made`` with the item's id."""
        return f"{made}-PL{item}" if made in self.taken else made

    def add(self, item: int, made: str, parent: int | None) -> None:
        self.taken.add(made)
        self.order.append(item)
        self.ids[item] = made
        self.parents[item] = parent


async def _items(
    reader: Reader, project: int, scope: Scope, progress: Progress
) -> AsyncIterator[tuple[dict[str, Any], int | None]]:
    """The items of the scope with their parent items, parents before children."""
    if scope.baseline is not None:
        path = f"v1/baselines/{scope.baseline}/versioneditems"
        parent_of = _baseline_parent
    elif scope.filter is not None:
        path = f"v1/filters/{scope.filter}/results"
        parent_of = _parent
    else:
        path = "v1/items"
        parent_of = _parent
    params = {"project": project} if path == "v1/items" else {}
    inside: set[int] = set()
    done = 0
    async for body, total in reader.pages(path, params):
        for item in body["data"]:
            if item.get("type", "items") != "items" or int(item.get("project", project)) != project:
                continue
            parent = parent_of(item)
            if scope.item is not None:
                if int(item["id"]) != scope.item and parent not in inside:
                    continue
                inside.add(int(item["id"]))
            yield item, parent
        done += len(body["data"])
        await progress(min(79, 5 + 75 * done // max(total, 1)), f"items read: {done} of {total}")


def _parent(item: dict[str, Any]) -> int | None:
    parent = item.get("location", {}).get("parent", {})
    return int(parent["item"]) if parent.get("item") else None


def _baseline_parent(item: dict[str, Any]) -> int | None:
    """A baseline item's parent then (``[id, version]``)."""
    parent = item.get("baselineLocation", {}).get("parent", {}).get("item")
    return int(parent[0]) if parent else None


async def _relations(
    reader: Reader,
    project: int,
    scope: Scope,
    catalog: _Catalog,
    placed: _Placed,
    now: str,
) -> AsyncIterator[Any]:
    """SPEC-RELATIONs between exported items, by the relationships' from-items' types."""
    at = {"baseline": scope.baseline} if scope.baseline is not None else {}
    seen: set[str] = set()
    for item_type in catalog.types:
        params = {"project": project, "itemType": item_type, "depth": 1, **at}
        async for body, _ in reader.pages("labs/trace", params):
            for trace in body["data"]:
                source = placed.ids.get(int(trace["item"]["id"]))
                if source is None:
                    continue
                for link in trace["levels"][0] if trace["levels"] else []:
                    target = placed.ids.get(int(link["item"]["id"]))
                    if target is None:
                        continue
                    type_id = int(link["relationshipType"])
                    made = _relation_id(source, target, catalog.relationship_types.get(type_id, ""))
                    if made in seen:
                        continue
                    seen.add(made)
                    relation = _e(
                        "SPEC-RELATION",
                        {
                            "IDENTIFIER": made,
                            "LAST-CHANGE": now,
                        },
                    )
                    _ref(relation, "SOURCE", "SPEC-OBJECT-REF", source)
                    _ref(relation, "TARGET", "SPEC-OBJECT-REF", target)
                    _ref(relation, "TYPE", "SPEC-RELATION-TYPE-REF", f"PL-RT-{type_id}")
                    yield relation


def _relation_id(source: str, target: str, type_name: str) -> str:
    """A relation's identifier from its ends and its type's name: the same in every
    export, and after a round trip that keeps the objects' identifiers."""
    digest = hashlib.sha256(f"{source}\n{target}\n{type_name}".encode()).hexdigest()[:24]
    return f"PL-REL-{digest}"


def _specification(info: dict[str, Any], scope: Scope, placed: _Placed, now: str) -> Any:
    made = _e(
        "SPECIFICATION",
        {
            "IDENTIFIER": f"PL-SPEC-{identifier(str(info.get('projectKey') or info['id']))}",
            "LONG-NAME": str(info.get("fields", {}).get("name", "")),
            "LAST-CHANGE": now,
        },
    )
    _ref(made, "TYPE", "SPECIFICATION-TYPE-REF", "PL-ST-TREE")
    children: dict[int | None, list[int]] = {}
    for item in placed.order:
        parent = placed.parents[item]
        children.setdefault(parent if parent in placed.ids else None, []).append(item)
    if children.get(None):
        _hierarchy(_sub(made, "CHILDREN"), None, children, placed, now)
    return made


def _hierarchy(
    holder: Any,
    parent: int | None,
    children: dict[int | None, list[int]],
    placed: _Placed,
    now: str,
) -> None:
    """The SPEC-HIERARCHY under ``parent``, without recursion (trees may be deep)."""
    stack = [(holder, child) for child in reversed(children.get(parent, []))]
    while stack:
        into, item = stack.pop()
        node = _sub(
            into, "SPEC-HIERARCHY", {"IDENTIFIER": f"PL-H-{placed.ids[item]}", "LAST-CHANGE": now}
        )
        _ref(node, "OBJECT", "SPEC-OBJECT-REF", placed.ids[item])
        below = children.get(item, [])
        if below:
            nested = _sub(node, "CHILDREN")
            stack.extend((nested, child) for child in reversed(below))


#: Export formats: name -> (media type, file suffix).
FORMATS = {"REQIF": ("application/xml", ".reqif"), "REQIFZ": ("application/zip", ".reqifz")}


def scope_of(params: dict[str, Any]) -> Scope:
    """The scope a work's checked parameters name."""
    return Scope(params.get("item"), params.get("filter"), params.get("baseline"))
