"""A ReqIF 1.2 document read safely, and mapped onto a project's configuration as the
bulk import's JSON Lines (``docs/contexts/reports.md#reqif-import-labs``).

Reading refuses what could harm the reader: a DTD or entity declarations, a zip member
outside the archive or larger than allowed, more than ``MAX_OBJECTS`` objects. Mapping
takes SPEC-OBJECT-TYPEs to item types, attribute definitions to fields and enumeration
values to pick list options, by the caller's mapping document where it names them and
by name otherwise; what cannot be mapped is listed, with a configuration to apply and
the mapping to use, before anything is written.
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from lxml import etree

from plumbline.common.errors import InvalidArgument
from plumbline.common.reqif import NOT_ITEMS, NS, XHTML, escape

_R = {"r": NS}
#: The most objects one document may hold.
MAX_OBJECTS = 500_000
#: Attribute names other tools use for an object's name and text (ReqIF's conventions).
NAME_ATTRIBUTES = ("reqif.name", "reqif.chaptername", "name", "title")
TEXT_ATTRIBUTES = ("reqif.text", "description", "text")
#: Attributes that say what the object is elsewhere: kept out of the fields.
IGNORED_ATTRIBUTES = frozenset(
    ("reqif.foreignid", "reqif.foreigncreatedby", "reqif.foreignmodifiedby", "pl.attachments")
)
KINDS = ("BOOLEAN", "DATE", "ENUMERATION", "INTEGER", "REAL", "STRING", "XHTML")


@dataclass
class Attribute:
    """An attribute definition of a SPEC-OBJECT-TYPE."""

    id: str
    name: str
    kind: str
    datatype: str
    multi: bool = False


@dataclass
class ObjectType:
    id: str
    name: str
    desc: str
    attributes: dict[str, Attribute] = field(default_factory=dict)


@dataclass
class SpecObject:
    id: str
    type: str
    #: Attribute id -> (kind, value): str, int, float, bool, an XHTML string, or a list of
    #: enumeration value ids.
    values: dict[str, tuple[str, Any]] = field(default_factory=dict)
    #: The files its XHTML values name (``<object data="...">``), as archive paths.
    files: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Document:
    """What an import needs of a ReqIF document."""

    enums: dict[str, str] = field(default_factory=dict)  # value id -> LONG-NAME
    enum_lists: dict[str, list[str]] = field(default_factory=dict)  # datatype -> value ids
    datatype_names: dict[str, str] = field(default_factory=dict)
    types: dict[str, ObjectType] = field(default_factory=dict)
    relation_types: dict[str, str] = field(default_factory=dict)  # id -> LONG-NAME
    objects: dict[str, SpecObject] = field(default_factory=dict)
    relations: list[tuple[str, str, str]] = field(default_factory=list)
    #: (identifier, name, [(object, parent object or None)] in document order) of each
    #: specification.
    specifications: list[tuple[str, str, list[tuple[str, str | None]]]] = field(
        default_factory=list
    )


def unpacked(data: bytes, limit: int) -> bytes:
    """The ``.reqif`` document of ``data``: itself, or the first ``.reqif`` member of a
    ``.reqifz`` (zip) whose members all stay inside it and under ``limit`` bytes."""
    if not data.startswith(b"PK"):
        return data
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise InvalidArgument("the file is neither ReqIF XML nor a .reqifz zip") from None
    with archive:
        total = 0
        for info in archive.infolist():
            name = info.filename
            if name.startswith(("/", "\\")) or ".." in re.split(r"[/\\]", name) or ":" in name:
                raise InvalidArgument(f"the archive's member {name!r} points outside it")
            total += info.file_size
            if total > limit:
                raise InvalidArgument(
                    f"the archive unpacks to more than {limit} bytes (the import's limit)"
                )
        members = [i for i in archive.infolist() if i.filename.lower().endswith(".reqif")]
        if not members:
            raise InvalidArgument("the .reqifz holds no .reqif document")
        with archive.open(members[0]) as member:
            content = member.read(limit + 1)
        if len(content) > limit:
            raise InvalidArgument(f"the document is larger than {limit} bytes")
        return content


def read(data: bytes) -> Document:
    """The document in ``data`` (ReqIF XML); InvalidArgument saying what is wrong."""
    if re.search(rb"<!(DOCTYPE|ENTITY)", data[:65536]) or b"<!ENTITY" in data:
        raise InvalidArgument("a ReqIF document may not declare a DTD or entities")
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True
    )
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise InvalidArgument(f"the file is not well-formed XML: {exc}") from None
    if etree.QName(root).namespace != NS or etree.QName(root).localname != "REQ-IF":
        raise InvalidArgument(f"the file is not a ReqIF 1.2 document (its root is {root.tag})")
    content = root.find("r:CORE-CONTENT/r:REQ-IF-CONTENT", _R)
    if content is None:
        raise InvalidArgument("the ReqIF document has no REQ-IF-CONTENT")
    doc = Document()
    _datatypes(content, doc)
    _spec_types(content, doc)
    # A datatype without a name of its own (StrictDoc writes none) is called after the
    # first attribute that uses it: a pick list suggested for it reads so.
    for spec_type in doc.types.values():
        for attribute in spec_type.attributes.values():
            doc.datatype_names.setdefault(attribute.datatype, attribute.name)
    _objects(content, doc)
    for rel in content.iterfind("r:SPEC-RELATIONS/r:SPEC-RELATION", _R):
        source = _text(rel, "r:SOURCE/r:SPEC-OBJECT-REF")
        target = _text(rel, "r:TARGET/r:SPEC-OBJECT-REF")
        kind = _text(rel, "r:TYPE/r:SPEC-RELATION-TYPE-REF")
        if source in doc.objects and target in doc.objects and source != target:
            doc.relations.append((source, target, kind))
    for spec in content.iterfind("r:SPECIFICATIONS/r:SPECIFICATION", _R):
        placed: list[tuple[str, str | None]] = []
        top = spec.findall("r:CHILDREN/r:SPEC-HIERARCHY", _R)
        stack: list[tuple[Any, str | None]] = [(h, None) for h in reversed(top)]
        while stack:
            node, parent = stack.pop()
            target = _text(node, "r:OBJECT/r:SPEC-OBJECT-REF")
            if target in doc.objects:
                placed.append((target, parent))
            below = node.findall("r:CHILDREN/r:SPEC-HIERARCHY", _R)
            stack.extend((h, target if target in doc.objects else parent) for h in reversed(below))
        made = spec.get("IDENTIFIER", "")
        doc.specifications.append((made, spec.get("LONG-NAME") or made, placed))
    return doc


def _text(element: Any, path: str) -> str:
    found = element.find(path, _R)
    return (found.text or "").strip() if found is not None else ""


def _datatypes(content: Any, doc: Document) -> None:
    for datatype in content.iterfind("r:DATATYPES/*", _R):
        made = datatype.get("IDENTIFIER", "")
        if datatype.get("LONG-NAME"):
            doc.datatype_names[made] = datatype.get("LONG-NAME")
        if etree.QName(datatype).localname == "DATATYPE-DEFINITION-ENUMERATION":
            values = datatype.findall("r:SPECIFIED-VALUES/r:ENUM-VALUE", _R)
            doc.enum_lists[made] = [v.get("IDENTIFIER", "") for v in values]
            for v in values:
                doc.enums[v.get("IDENTIFIER", "")] = v.get("LONG-NAME") or v.get("IDENTIFIER", "")


def _spec_types(content: Any, doc: Document) -> None:
    for spec_type in content.iterfind("r:SPEC-TYPES/*", _R):
        kind = etree.QName(spec_type).localname
        made = spec_type.get("IDENTIFIER", "")
        name = spec_type.get("LONG-NAME") or made
        if kind == "SPEC-RELATION-TYPE":
            doc.relation_types[made] = name
        if kind != "SPEC-OBJECT-TYPE":
            continue
        found = ObjectType(made, name, spec_type.get("DESC", ""))
        for definition in spec_type.iterfind("r:SPEC-ATTRIBUTES/*", _R):
            attr_kind = etree.QName(definition).localname.removeprefix("ATTRIBUTE-DEFINITION-")
            if attr_kind not in KINDS:
                continue
            found.attributes[definition.get("IDENTIFIER", "")] = Attribute(
                definition.get("IDENTIFIER", ""),
                definition.get("LONG-NAME") or definition.get("IDENTIFIER", ""),
                attr_kind,
                _text(definition, "r:TYPE/*"),
                definition.get("MULTI-VALUED") == "true",
            )
        doc.types[made] = found


def _objects(content: Any, doc: Document) -> None:
    for obj in content.iterfind("r:SPEC-OBJECTS/r:SPEC-OBJECT", _R):
        if len(doc.objects) >= MAX_OBJECTS:
            raise InvalidArgument(f"the document holds more than {MAX_OBJECTS} objects")
        made = SpecObject(obj.get("IDENTIFIER", ""), _text(obj, "r:TYPE/r:SPEC-OBJECT-TYPE-REF"))
        for value in obj.iterfind("r:VALUES/*", _R):
            kind = etree.QName(value).localname.removeprefix("ATTRIBUTE-VALUE-")
            definition = _text(value, "r:DEFINITION/*")
            if kind == "XHTML":
                held = value.find("r:THE-VALUE", _R)
                made.values[definition] = (kind, _inner_html(held) if held is not None else "")
                if held is not None:
                    made.files += _named_files(held)
            elif kind == "ENUMERATION":
                chosen = [(v.text or "").strip() for v in value.iterfind("r:VALUES/*", _R)]
                made.values[definition] = (kind, chosen)
            elif kind in KINDS:
                made.values[definition] = (kind, value.get("THE-VALUE", ""))
        doc.objects[made.id] = made


def _named_files(held: Any) -> list[tuple[str, str]]:
    """(archive path, content type) of each ``object`` an XHTML value holds whose
    ``data`` is a path inside the archive (not a URL, not outside it)."""
    found = []
    for element in held.iter(f"{{{XHTML}}}object", "object"):
        data = (element.get("data") or "").strip()
        if not data or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", data) or data.startswith("/"):
            continue
        path = posixpath.normpath(data.replace("\\", "/"))
        if path.startswith("..") or path == ".":
            continue
        found.append((path, (element.get("type") or "").strip()))
    return found


def archive_members(data: bytes) -> dict[str, str]:
    """The files of a ``.reqifz`` (already checked by ``unpacked``): each one's path as
    a document names it (normalised) and its name in the archive; nothing for a plain
    document."""
    if not data.startswith(b"PK"):
        return {}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {
            posixpath.normpath(i.filename.replace("\\", "/")): i.filename
            for i in archive.infolist()
            if not i.is_dir()
        }


def _inner_html(held: Any) -> str:
    """An XHTML value as the HTML an item's rich text holds: without namespaces, and
    without the one ``div`` that wraps a value (ReqIF's own, not the text's)."""
    parts = list(held)
    if len(parts) == 1 and etree.QName(parts[0]).localname == "div":
        inner = parts[0]
        return (escape(inner.text or "") + "".join(_plain(c) for c in inner)).strip()
    return (escape(held.text or "") + "".join(_plain(p) for p in parts)).strip()


def _plain(element: Any) -> str:
    """``element`` serialized without namespaces."""
    copy = etree.fromstring(etree.tostring(element))
    for node in copy.iter():
        if isinstance(node.tag, str):
            node.tag = etree.QName(node).localname
    etree.cleanup_namespaces(copy)
    return str(etree.tostring(copy, encoding="unicode", with_tail=True))


# -- mapping -----------------------------------------------------------------------------


@dataclass
class Target:
    """The project's configuration, as mapping needs it."""

    #: item type id -> (typeKey, display, category, {field name: field}).
    item_types: dict[int, tuple[str, str, str, dict[str, dict[str, Any]]]]
    #: pick list id -> {option name (lower): option id}.
    options: dict[int, dict[str, int]]
    #: relationship type name (lower) -> id.
    relationship_types: dict[str, int]
    folder_type: int | None = None


@dataclass
class ExistingItem:
    """An item of the project, as a re-import compares it with the document."""

    id: int
    item_type: int
    parent: int | None
    global_id: str
    name: str
    fields: dict[str, Any]
    #: Its place among its parent's children.
    sort_order: int = 0


@dataclass
class Existing:
    """What the project holds: its items, and its relationships as (id, from item, to
    item, relationship type)."""

    items: list[ExistingItem] = field(default_factory=list)
    relationships: list[tuple[int, int, int, int]] = field(default_factory=list)


@dataclass
class Plan:
    """What an import will write, or why it cannot.

    Against what the project holds already (``Existing``): an object whose identifier is
    an item's global id updates that item (a version, only where a field it fills
    differs or its parent does: moved), the others are added; the project's items of the
    item types the import writes that the document does not hold are left (deleted only
    when asked), as are relationships between items it holds, of the relationship types
    it maps, that it no longer has."""

    lines: list[bytes] = field(default_factory=list)
    #: Items and relationships made, items made by type key.
    items: int = 0
    relationships: int = 0
    by_type: dict[str, int] = field(default_factory=dict)
    #: Versions of items the document holds: changed, moved, or both.
    versions: int = 0
    added: list[str] = field(default_factory=list)
    changed: list[dict[str, Any]] = field(default_factory=list)
    moved: list[dict[str, Any]] = field(default_factory=list)
    unchanged: int = 0
    left: list[dict[str, Any]] = field(default_factory=list)
    #: Parents whose children are put in the document's order: (parent, children).
    reordered: list[dict[str, Any]] = field(default_factory=list)
    relationships_left: list[dict[str, Any]] = field(default_factory=list)
    #: Whether the left items and relationships are deleted.
    deleting: bool = False
    #: The keys of the item lines, in order (the k-th gets the import's first id + k).
    new_keys: list[str] = field(default_factory=list)
    #: The held item's id (or a new item's key) of each key the document names.
    item_of: dict[str, int | str] = field(default_factory=dict)
    unmapped: list[str] = field(default_factory=list)
    suggested_config: dict[str, Any] = field(default_factory=dict)
    suggested_mapping: dict[str, Any] = field(default_factory=dict)


_FIELD_FOR = {
    "STRING": "STRING",
    "XHTML": "TEXT",
    "INTEGER": "INTEGER",
    "REAL": "STRING",
    "BOOLEAN": "BOOLEAN",
    "DATE": "DATE",
}
#: Which field types take a value of each ReqIF kind.
_TAKES = {
    "STRING": {"STRING", "URL_STRING", "TEXT"},
    "XHTML": {"TEXT", "STEPS", "STRING"},
    "INTEGER": {"INTEGER", "USER", "RELEASE", "STRING", "TEXT"},
    "REAL": {"STRING", "TEXT", "INTEGER"},
    "BOOLEAN": {"BOOLEAN"},
    "DATE": {"DATE", "STRING"},
    "ENUMERATION": {"LOOKUP", "MULTI_LOOKUP", "TEST_CASE_STATUS"},
}


def plan(
    doc: Document,
    target: Target,
    mapping: dict[str, Any],
    existing: Existing | None = None,
    delete_left: bool = False,
) -> Plan:
    """The import lines of ``doc`` for ``target`` and what its project holds already
    (nothing unless ``existing``), or what cannot be mapped."""
    found = Plan(deleting=delete_left)
    types_named = _lower_keys(mapping.get("types", {}))
    attrs_named = _lower_keys(mapping.get("attributes", {}))
    values_named = _lower_keys(mapping.get("values", {}))
    rels_named = _lower_keys(mapping.get("relationTypes", {}))
    used_types = {o.type for o in doc.objects.values()}
    type_map: dict[str, int] = {}
    for type_id in sorted(used_types):
        spec = doc.types.get(type_id)
        if spec is None:
            found.unmapped.append(f"SPEC-OBJECT-TYPE {type_id!r} is not defined in the document")
            continue
        item_type = _item_type_for(spec, target, types_named)
        if item_type is None:
            found.unmapped.append(
                f"SPEC-OBJECT-TYPE {spec.name!r} ({spec.id}): no item type has this name or "
                "key; map it under types"
            )
            left_out = {k for k, v in attrs_named.items() if v is None}
            wanted = types_named.get(spec.id.lower(), types_named.get(spec.name.lower()))
            _suggest_type(found, spec, doc, wanted, left_out)
            continue
        type_map[type_id] = item_type
    field_map = _fields(doc, target, type_map, attrs_named, found)
    value_map = _values(doc, target, type_map, field_map, values_named, found)
    rel_map: dict[str, int] = {}
    used_kinds = {k for _, _, k in doc.relations}
    for kind in sorted(used_kinds | set(doc.relation_types)):
        name = doc.relation_types.get(kind, kind)
        wanted = rels_named.get(kind.lower()) or rels_named.get(name.lower()) or name
        rel_id = target.relationship_types.get(str(wanted).lower())
        if rel_id is None and kind not in used_kinds:
            continue  # declared, not used: nothing to map, nothing it could leave
        if rel_id is None:
            found.unmapped.append(
                f"SPEC-RELATION-TYPE {name!r} ({kind}): no relationship type has this name; "
                "map it under relationTypes"
            )
            found.suggested_config.setdefault("relationshipTypes", []).append({"name": name})
        else:
            rel_map[kind] = rel_id
    if found.unmapped:
        _suggest_mapping(found, doc, type_map, field_map, target)
        return found
    wanted = _wanted(found, doc, target, type_map, field_map, value_map)
    _lines(found, wanted, doc, target, existing or Existing(), rel_map, type_map)
    return found


def _lower_keys(given: Any) -> dict[str, Any]:
    if not isinstance(given, dict):
        raise InvalidArgument("mapping: types, attributes, values and relationTypes are objects")
    return {str(k).lower(): v for k, v in given.items()}


def _item_type_for(spec: ObjectType, target: Target, named: dict[str, Any]) -> int | None:
    wanted = named.get(spec.id.lower(), named.get(spec.name.lower()))
    for candidate in [wanted] if wanted is not None else [spec.name, spec.desc]:
        for type_id, (key, display, category, _) in target.item_types.items():
            if category in NOT_ITEMS:
                continue
            if str(candidate).lower() in (str(type_id), key.lower(), display.lower()):
                return type_id
    return None


def _fields(
    doc: Document,
    target: Target,
    type_map: dict[str, int],
    named: dict[str, Any],
    found: Plan,
) -> dict[tuple[str, str], dict[str, Any]]:
    """(object type, attribute) -> the field it fills, for attributes with values."""
    used: dict[str, set[str]] = {}
    for obj in doc.objects.values():
        used.setdefault(obj.type, set()).update(obj.values)
    mapped: dict[tuple[str, str], dict[str, Any]] = {}
    for type_id, attrs in sorted(used.items()):
        if type_id not in type_map:
            continue
        spec = doc.types[type_id]
        fields = target.item_types[type_map[type_id]][3]
        for attr_id in sorted(attrs):
            attribute = spec.attributes.get(attr_id)
            if attribute is None or attribute.name.lower() in IGNORED_ATTRIBUTES:
                continue
            keys = (attr_id.lower(), attribute.name.lower())
            if any(k in named and named[k] is None for k in keys):
                continue  # the mapping leaves it out
            wanted = named.get(keys[0], named.get(keys[1]))
            if wanted is None:
                names = [attribute.name.lower()]
                if attribute.name.lower() in NAME_ATTRIBUTES:
                    names.append("name")
                if attribute.name.lower() in TEXT_ATTRIBUTES:
                    names.append("description")
            else:
                names = [str(wanted).lower()]
            hit = next(
                (
                    f
                    for n in names
                    for f in fields.values()
                    if n in (str(f["name"]).lower(), str(f.get("label", "")).lower())
                ),
                None,
            )
            if hit is None or str(hit.get("fieldType")) not in _TAKES[attribute.kind]:
                why = (
                    "no field of"
                    if hit is None
                    else f"field {hit['name']!r} ({hit.get('fieldType')}) of"
                )
                found.unmapped.append(
                    f"attribute {attribute.name!r} ({attribute.kind}) of {spec.name!r}: {why} "
                    f"item type {target.item_types[type_map[type_id]][0]} takes it; map it "
                    "under attributes"
                )
                _suggest_field(
                    found, target.item_types[type_map[type_id]][0], attribute, doc, set(fields)
                )
                continue
            mapped[(type_id, attr_id)] = hit
    return mapped


def _values(
    doc: Document,
    target: Target,
    type_map: dict[str, int],
    field_map: dict[tuple[str, str], dict[str, Any]],
    named: dict[str, Any],
    found: Plan,
) -> dict[str, int]:
    """Enumeration value -> pick list option, for the values objects hold."""
    mapped: dict[str, int] = {}
    missing: set[tuple[str, str]] = set()
    for obj in doc.objects.values():
        for attr_id, (kind, value) in obj.values.items():
            target_field = field_map.get((obj.type, attr_id))
            if kind != "ENUMERATION" or target_field is None:
                continue
            options = target.options.get(int(target_field.get("pickList") or 0), {})
            for value_id in value:
                name = doc.enums.get(value_id, value_id)
                wanted = named.get(value_id.lower(), named.get(name.lower(), name))
                option = options.get(str(wanted).lower())
                if option is None:
                    missing.add((name, str(target_field["name"])))
                else:
                    mapped[value_id] = option
    for name, field_name in sorted(missing):
        found.unmapped.append(
            f"enumeration value {name!r}: no option of field {field_name!r}'s pick list has "
            "this name; map it under values"
        )
    return mapped


def _suggest_type(
    found: Plan, spec: ObjectType, doc: Document, wanted: Any, left_out: set[str]
) -> None:
    """An item type for the object type (its key the one the mapping asked for, if any),
    with a field for each attribute the mapping does not leave out: the name and text
    ones as name and description. Object types of one name (a type per document, as
    StrictDoc writes) share one."""
    key = (
        str(wanted)
        if isinstance(wanted, str) and re.fullmatch(r"[A-Z][A-Z0-9]{0,9}", wanted)
        else ""
    )
    key = key or re.sub(r"[^A-Z0-9]", "", spec.name.upper())[:10] or "REQIF"
    found.suggested_mapping.setdefault("types", {})[spec.name] = key
    suggested = found.suggested_config.setdefault("itemTypes", [])
    made = next((t for t in suggested if t["typeKey"] == key), None)
    if made is None:
        made = {
            "typeKey": key,
            "display": spec.name,
            "displayPlural": spec.name,
            "category": "CORE",
            "fields": [{"name": "name", "label": "Name", "fieldType": "STRING", "required": True}],
        }
        suggested.append(made)
    names = {f["name"] for f in made["fields"]}
    for attribute in spec.attributes.values():
        lower = attribute.name.lower()
        if lower in NAME_ATTRIBUTES or lower in IGNORED_ATTRIBUTES or lower in left_out:
            continue
        field_made = _suggested_field(attribute, doc)
        if lower in TEXT_ATTRIBUTES:
            field_made |= {"name": "description", "label": "Description"}
        if field_made["name"] not in names:
            names.add(field_made["name"])
            made["fields"].append(field_made)


def _suggest_field(
    found: Plan, type_key: str, attribute: Attribute, doc: Document, taken: set[str]
) -> None:
    """A field for the attribute (POST /itemtypes/{id}/fields adds it), named apart from
    the type's fields ``taken``, and the mapping that then fills it; or map it to null to
    leave it out."""
    made = _suggested_field(attribute, doc)
    base, number = str(made["name"]), 1
    while made["name"] in taken:
        number += 1
        made["name"] = f"{base}{attribute.kind.title()}{number if number > 2 else ''}"
    found.suggested_config.setdefault("fields", {}).setdefault(type_key, []).append(made)
    found.suggested_mapping.setdefault("attributes", {})[attribute.name] = made["name"]


def _suggested_field(attribute: Attribute, doc: Document) -> dict[str, Any]:
    name = re.sub(r"[^A-Za-z0-9]", "", attribute.name.title())
    name = (name[:1].lower() + name[1:]) or "field"
    made: dict[str, Any] = {"name": name, "label": attribute.name}
    if attribute.kind == "ENUMERATION":
        made["fieldType"] = "MULTI_LOOKUP" if attribute.multi else "LOOKUP"
        made["pickList"] = doc.datatype_names.get(attribute.datatype, attribute.datatype)
    else:
        made["fieldType"] = _FIELD_FOR[attribute.kind]
        if attribute.kind == "XHTML":
            made["textType"] = "RICHTEXT"
    return made


def _suggest_mapping(
    found: Plan,
    doc: Document,
    type_map: dict[str, int],
    field_map: dict[tuple[str, str], dict[str, Any]],
    target: Target,
) -> None:
    for (type_id, attr_id), f in field_map.items():
        found.suggested_mapping.setdefault("attributes", {})[
            doc.types[type_id].attributes[attr_id].name
        ] = f["name"]
    for type_id, item_type in type_map.items():
        found.suggested_mapping.setdefault("types", {})[doc.types[type_id].name] = (
            target.item_types[item_type][0]
        )
    lists = {
        doc.datatype_names.get(d, d): [doc.enums.get(v, v) for v in values]
        for d, values in doc.enum_lists.items()
    }
    if lists:
        found.suggested_config["pickLists"] = [
            {"name": name, "options": [{"name": o} for o in options]}
            for name, options in lists.items()
        ]


@dataclass
class _Wanted:
    """An item as the document wants it: ``key`` names it in the import's lines."""

    key: str
    item_type: int
    fields: dict[str, Any]
    parent: str | None
    global_id: str | None
    #: The fields the document fills for items of its type (a value it no longer has
    #: is emptied).
    filled: frozenset[str]


def _wanted(
    found: Plan,
    doc: Document,
    target: Target,
    type_map: dict[str, int],
    field_map: dict[tuple[str, str], dict[str, Any]],
    value_map: dict[str, int],
) -> list[_Wanted]:
    """Every item the document makes, parents first."""
    filled: dict[str, frozenset[str]] = {}
    for (type_id, _), mapped_to in field_map.items():
        filled[type_id] = filled.get(type_id, _NAME) | {str(mapped_to["name"])}
    made: list[_Wanted] = []
    for obj_id, parent, folder in _placed(doc, target):
        if folder is not None:
            made.append(_Wanted(obj_id, folder[0], {"name": folder[1]}, None, folder[2], _NAME))
            continue
        obj = doc.objects[obj_id]
        if obj.type not in type_map:
            continue
        fields: dict[str, Any] = {}
        for attr_id, (kind, value) in obj.values.items():
            hit = field_map.get((obj.type, attr_id))
            if hit is None:
                continue
            converted = _converted(kind, value, hit, value_map)
            if converted is not None:
                fields[str(hit["name"])] = converted
        fields.setdefault("name", obj_id)
        made.append(
            _Wanted(
                obj_id,
                type_map[obj.type],
                fields,
                parent,
                obj_id,
                filled.get(obj.type, _NAME),
            )
        )
    return made


_NAME = frozenset({"name"})


def _lines(
    found: Plan,
    wanted: list[_Wanted],
    doc: Document,
    target: Target,
    existing: Existing,
    rel_map: dict[str, int],
    type_map: dict[str, int],
) -> None:
    """The import's lines: new items, versions of changed and moved ones, relationships
    not there yet, and (when asked) deletions of what the document left."""
    by_global = {e.global_id: e for e in existing.items}
    held = {w.key: by_global[w.global_id] for w in wanted if w.global_id in by_global}

    def ref(key: str | None) -> int | str | None:
        return key if key is None or key not in held else held[key].id

    found.item_of = {w.key: held[w.key].id if w.key in held else w.key for w in wanted}

    versions: list[bytes] = []
    moved: set[str] = set()
    for want in wanted:
        type_key = target.item_types[want.item_type][0]
        old = held.get(want.key)
        parent = ref(want.parent)
        if old is None:
            line: dict[str, Any] = {"key": want.key, "itemType": want.item_type}
            if want.global_id:
                line["globalId"] = want.global_id
            if parent is not None:
                line["parent"] = parent
            line["fields"] = want.fields
            found.lines.append(orjson.dumps(line))
            found.new_keys.append(want.key)
            found.items += 1
            found.by_type[type_key] = found.by_type.get(type_key, 0) + 1
            found.added.append(want.global_id or want.key)
            continue
        version = _version(found, want, old, parent, target)
        if version is not None:
            versions.append(version)
            if parent != old.parent:
                moved.add(want.key)
    found.lines += versions
    found.versions = len(versions)
    _relationships(found, doc, existing, rel_map, type_map, held)
    _orders(found, wanted, held, moved, ref)
    scope = {w.item_type for w in wanted}
    kept = {w.global_id for w in wanted if w.global_id}
    for old in existing.items:
        if old.item_type in scope and old.global_id not in kept:
            found.left.append({"item": old.id, "globalId": old.global_id, "name": old.name})
    if found.deleting:
        found.lines += [orjson.dumps({"deleteItem": left["item"]}) for left in found.left]
        found.lines += [
            orjson.dumps({"deleteRelationship": left["id"]}) for left in found.relationships_left
        ]


def _orders(
    found: Plan,
    wanted: list[_Wanted],
    held: dict[str, ExistingItem],
    moved: set[str],
    ref: Callable[[str | None], int | str | None],
) -> None:
    """Order lines for the parents whose children would not end in the document's
    order: the import adds new items at the bottom of their parent, then moves the moved
    ones below them, and the others keep their places."""
    desired: dict[int | str | None, list[str]] = {}
    for want in wanted:
        desired.setdefault(ref(want.parent), []).append(want.key)
    for parent, keys in desired.items():
        staying = sorted((held[k].sort_order, k) for k in keys if k in held and k not in moved)
        expected = [k for _, k in staying]
        expected += [k for k in keys if k not in held] + [k for k in keys if k in moved]
        if expected == keys:
            continue
        children = [held[k].id if k in held else k for k in keys]
        found.lines.append(orjson.dumps({"children": children, "parent": parent}))
        found.reordered.append({"parent": parent, "children": len(children)})


def _version(
    found: Plan, want: _Wanted, old: ExistingItem, parent: int | str | None, target: Target
) -> bytes | None:
    """The version line of an item the document holds, where it changes or moves it."""
    if old.item_type != want.item_type:
        found.unmapped.append(
            f"object {want.key!r} is item {old.id}, a {_type_key(target, old.item_type)}; "
            f"the document makes it a {_type_key(target, want.item_type)}, and an item's "
            "type cannot change"
        )
        return None
    differ = sorted(
        name for name in want.filled if not _same(old.fields.get(name), want.fields.get(name))
    )
    moving = parent != old.parent
    if not differ and not moving:
        found.unchanged += 1
        return None
    fields = {k: v for k, v in old.fields.items() if k not in want.filled} | want.fields
    version: dict[str, Any] = {"item": old.id, "fields": fields}
    if differ:
        found.changed.append({"identifier": want.key, "item": old.id, "fields": differ})
    if moving:
        version["parent"] = parent
        found.moved.append(
            {"identifier": want.key, "item": old.id, "formerParent": old.parent, "parent": parent}
        )
    return orjson.dumps(version)


def _relationships(
    found: Plan,
    doc: Document,
    existing: Existing,
    rel_map: dict[str, int],
    type_map: dict[str, int],
    held: dict[str, ExistingItem],
) -> None:
    """Relationship lines for the document's relations the project does not have yet;
    the relationships between items it holds, of types it maps, that it no longer has."""
    there = {(f, t, kind) for _, f, t, kind in existing.relationships}
    wanted: set[tuple[Any, Any, int]] = set()
    for source, target_obj, kind in doc.relations:
        if doc.objects[source].type not in type_map or doc.objects[target_obj].type not in type_map:
            continue
        ends = (
            held[source].id if source in held else source,
            held[target_obj].id if target_obj in held else target_obj,
            rel_map[kind],
        )
        if ends in wanted:
            continue
        wanted.add(ends)
        if ends not in there:
            found.lines.append(
                orjson.dumps({"fromItem": ends[0], "toItem": ends[1], "relationshipType": ends[2]})
            )
            found.relationships += 1
    ids = {e.id for e in held.values()}
    mapped = set(rel_map.values())
    for rel_id, source_id, target_id, rel_type in existing.relationships:
        if (
            source_id in ids
            and target_id in ids
            and rel_type in mapped
            and (source_id, target_id, rel_type) not in wanted
        ):
            found.relationships_left.append(
                {
                    "id": rel_id,
                    "fromItem": source_id,
                    "toItem": target_id,
                    "relationshipType": rel_type,
                }
            )


def _type_key(target: Target, item_type: int) -> str:
    known = target.item_types.get(item_type)
    return known[0] if known else str(item_type)


def _same(had: Any, wants: Any) -> bool:
    """Whether a field's value is the one the document gives (empty is empty)."""
    if had in (None, "", []) or wants in (None, "", []):
        return had in (None, "", []) and wants in (None, "", [])
    if isinstance(had, list) and isinstance(wants, list):
        if all(isinstance(v, dict) for v in had + wants):  # steps
            members = ("action", "expectedResult", "notes")
            return [[str(v.get(m) or "") for m in members] for v in had] == [
                [str(v.get(m) or "") for m in members] for v in wants
            ]
        return sorted(map(str, had)) == sorted(map(str, wants))
    if isinstance(had, str) and isinstance(wants, str):
        return had.strip() == wants.strip()
    return had == wants or str(had) == str(wants)


def _placed(
    doc: Document, target: Target
) -> list[tuple[str, str | None, tuple[int, str, str | None] | None]]:
    """Each object once with its parent (an object, a specification's folder, or None),
    parents first, and a folder per specification when there are several: (key, parent
    key, (folder type, name, global id) for a folder or None)."""
    placed: list[tuple[str, str | None, tuple[int, str, str | None] | None]] = []
    seen: set[str] = set()
    several = len(doc.specifications) > 1
    for index, (made, name, members) in enumerate(doc.specifications):
        folder = None
        if several and target.folder_type is not None:
            folder = f"__spec_{index}"
            # The specification's identifier names its folder from one revision to the
            # next (unless an object has it too).
            global_id = made if made and made not in doc.objects else None
            placed.append((folder, None, (target.folder_type, name, global_id)))
        for obj, parent in members:
            if obj not in seen:
                seen.add(obj)
                placed.append((obj, parent if parent is not None else folder, None))
    return placed + [(o, None, None) for o in doc.objects if o not in seen]


def _converted(
    kind: str, value: Any, target_field: dict[str, Any], value_map: dict[str, int]
) -> Any:
    """A ReqIF value as the field takes it."""
    field_type = str(target_field.get("fieldType"))
    if kind == "ENUMERATION":
        chosen = [value_map[v] for v in value if v in value_map]
        if field_type == "MULTI_LOOKUP":
            return chosen
        return chosen[0] if chosen else None
    if kind == "XHTML":
        if field_type == "STEPS":
            return list(_steps(value))
        if field_type == "STRING":
            return re.sub(r"<[^>]+>", "", value)
        return value
    if kind == "BOOLEAN":
        return value.strip().lower() in ("true", "1")
    if kind == "DATE":
        return value[:10] if field_type == "DATE" else value
    if field_type == "INTEGER" or (kind == "INTEGER" and field_type in ("USER", "RELEASE")):
        try:
            number = float(value)
        except ValueError:
            return None
        return int(number) if number.is_integer() else None
    return str(value)


def _steps(html: str) -> Iterator[dict[str, str]]:
    """Test case steps from the table an export wrote (action, expected result, notes)."""
    try:
        table = etree.fromstring(f"<div>{html}</div>")
    except etree.XMLSyntaxError:
        return
    for row in table.iter("tr"):
        cells = ["".join(c.itertext()) for c in row if c.tag == "td"]
        if cells:
            cells += [""] * (3 - len(cells))
            yield {"action": cells[0], "expectedResult": cells[1], "notes": cells[2]}
