"""ReqIF documents the tests share: one as another tool would write it (German names, two
specifications, an enumeration, XHTML, a relation of its own type), and the mapping
that imports it into the default configuration."""

from __future__ import annotations

from typing import Any

NS = {"r": "http://www.omg.org/spec/ReqIF/20110401/reqif.xsd", "x": "http://www.w3.org/1999/xhtml"}

FOREIGN = f"""<?xml version="1.0" encoding="UTF-8"?>
<REQ-IF xmlns="{NS["r"]}" xmlns:xhtml="{NS["x"]}">
<THE-HEADER><REQ-IF-HEADER IDENTIFIER="h"><CREATION-TIME>2026-01-01T00:00:00Z</CREATION-TIME>
<REQ-IF-TOOL-ID>t</REQ-IF-TOOL-ID><REQ-IF-VERSION>1.0</REQ-IF-VERSION>
<SOURCE-TOOL-ID>t</SOURCE-TOOL-ID><TITLE>Supplier spec</TITLE></REQ-IF-HEADER></THE-HEADER>
<CORE-CONTENT><REQ-IF-CONTENT>
<DATATYPES>
 <DATATYPE-DEFINITION-STRING IDENTIFIER="dt-s" LAST-CHANGE="2026-01-01T00:00:00Z" MAX-LENGTH="999"/>
 <DATATYPE-DEFINITION-XHTML IDENTIFIER="dt-x" LAST-CHANGE="2026-01-01T00:00:00Z"/>
 <DATATYPE-DEFINITION-ENUMERATION IDENTIFIER="dt-prio" LONG-NAME="Prio" LAST-CHANGE="2026-01-01T00:00:00Z">
  <SPECIFIED-VALUES>
   <ENUM-VALUE IDENTIFIER="ev-h" LONG-NAME="Hoch" LAST-CHANGE="2026-01-01T00:00:00Z"><PROPERTIES><EMBEDDED-VALUE KEY="0" OTHER-CONTENT=""/></PROPERTIES></ENUM-VALUE>
  </SPECIFIED-VALUES>
 </DATATYPE-DEFINITION-ENUMERATION>
</DATATYPES>
<SPEC-TYPES>
 <SPEC-OBJECT-TYPE IDENTIFIER="ot" LONG-NAME="Anforderung" LAST-CHANGE="2026-01-01T00:00:00Z">
  <SPEC-ATTRIBUTES>
   <ATTRIBUTE-DEFINITION-STRING IDENTIFIER="a-name" LONG-NAME="ReqIF.Name" LAST-CHANGE="2026-01-01T00:00:00Z"><TYPE><DATATYPE-DEFINITION-STRING-REF>dt-s</DATATYPE-DEFINITION-STRING-REF></TYPE></ATTRIBUTE-DEFINITION-STRING>
   <ATTRIBUTE-DEFINITION-XHTML IDENTIFIER="a-text" LONG-NAME="ReqIF.Text" LAST-CHANGE="2026-01-01T00:00:00Z"><TYPE><DATATYPE-DEFINITION-XHTML-REF>dt-x</DATATYPE-DEFINITION-XHTML-REF></TYPE></ATTRIBUTE-DEFINITION-XHTML>
   <ATTRIBUTE-DEFINITION-ENUMERATION IDENTIFIER="a-prio" LONG-NAME="Wichtigkeit" MULTI-VALUED="false" LAST-CHANGE="2026-01-01T00:00:00Z"><TYPE><DATATYPE-DEFINITION-ENUMERATION-REF>dt-prio</DATATYPE-DEFINITION-ENUMERATION-REF></TYPE></ATTRIBUTE-DEFINITION-ENUMERATION>
  </SPEC-ATTRIBUTES>
 </SPEC-OBJECT-TYPE>
 <SPEC-RELATION-TYPE IDENTIFIER="rt" LONG-NAME="refines" LAST-CHANGE="2026-01-01T00:00:00Z"/>
 <SPECIFICATION-TYPE IDENTIFIER="st" LAST-CHANGE="2026-01-01T00:00:00Z"/>
</SPEC-TYPES>
<SPEC-OBJECTS>
{
    "".join(
        f'''
 <SPEC-OBJECT IDENTIFIER="sup-{n}" LAST-CHANGE="2026-01-01T00:00:00Z"><VALUES>
  <ATTRIBUTE-VALUE-STRING THE-VALUE="Supplier need {n}"><DEFINITION><ATTRIBUTE-DEFINITION-STRING-REF>a-name</ATTRIBUTE-DEFINITION-STRING-REF></DEFINITION></ATTRIBUTE-VALUE-STRING>
  <ATTRIBUTE-VALUE-XHTML><DEFINITION><ATTRIBUTE-DEFINITION-XHTML-REF>a-text</ATTRIBUTE-DEFINITION-XHTML-REF></DEFINITION><THE-VALUE><xhtml:div><xhtml:p>Text <xhtml:b>{n}</xhtml:b></xhtml:p></xhtml:div></THE-VALUE></ATTRIBUTE-VALUE-XHTML>
  <ATTRIBUTE-VALUE-ENUMERATION><DEFINITION><ATTRIBUTE-DEFINITION-ENUMERATION-REF>a-prio</ATTRIBUTE-DEFINITION-ENUMERATION-REF></DEFINITION><VALUES><ENUM-VALUE-REF>ev-h</ENUM-VALUE-REF></VALUES></ATTRIBUTE-VALUE-ENUMERATION>
 </VALUES><TYPE><SPEC-OBJECT-TYPE-REF>ot</SPEC-OBJECT-TYPE-REF></TYPE></SPEC-OBJECT>'''
        for n in (1, 2, 3)
    )
}
</SPEC-OBJECTS>
<SPEC-RELATIONS>
 <SPEC-RELATION IDENTIFIER="rel-1" LAST-CHANGE="2026-01-01T00:00:00Z"><SOURCE><SPEC-OBJECT-REF>sup-3</SPEC-OBJECT-REF></SOURCE><TARGET><SPEC-OBJECT-REF>sup-1</SPEC-OBJECT-REF></TARGET><TYPE><SPEC-RELATION-TYPE-REF>rt</SPEC-RELATION-TYPE-REF></TYPE></SPEC-RELATION>
</SPEC-RELATIONS>
<SPECIFICATIONS>
 <SPECIFICATION IDENTIFIER="s1" LONG-NAME="Chapter one" LAST-CHANGE="2026-01-01T00:00:00Z"><TYPE><SPECIFICATION-TYPE-REF>st</SPECIFICATION-TYPE-REF></TYPE><CHILDREN>
  <SPEC-HIERARCHY IDENTIFIER="h1" LAST-CHANGE="2026-01-01T00:00:00Z"><OBJECT><SPEC-OBJECT-REF>sup-1</SPEC-OBJECT-REF></OBJECT><CHILDREN>
   <SPEC-HIERARCHY IDENTIFIER="h2" LAST-CHANGE="2026-01-01T00:00:00Z"><OBJECT><SPEC-OBJECT-REF>sup-2</SPEC-OBJECT-REF></OBJECT></SPEC-HIERARCHY>
  </CHILDREN></SPEC-HIERARCHY></CHILDREN></SPECIFICATION>
 <SPECIFICATION IDENTIFIER="s2" LONG-NAME="Chapter two" LAST-CHANGE="2026-01-01T00:00:00Z"><TYPE><SPECIFICATION-TYPE-REF>st</SPECIFICATION-TYPE-REF></TYPE><CHILDREN>
  <SPEC-HIERARCHY IDENTIFIER="h3" LAST-CHANGE="2026-01-01T00:00:00Z"><OBJECT><SPEC-OBJECT-REF>sup-3</SPEC-OBJECT-REF></OBJECT></SPEC-HIERARCHY>
 </CHILDREN></SPECIFICATION>
</SPECIFICATIONS>
</REQ-IF-CONTENT></CORE-CONTENT></REQ-IF>""".encode()

MAPPING = '{"types": {"Anforderung": "REQ"}, "attributes": {"Wichtigkeit": "priority"}, "values": {"Hoch": "High"}, "relationTypes": {"refines": "Derived from"}}'


def objects_of(doc: Any) -> dict[str, dict[str, Any]]:
    """Each SPEC-OBJECT by identifier: its type and its values by attribute name."""
    names = {
        d.get("IDENTIFIER"): d.get("LONG-NAME") for d in doc.iterfind(".//r:SPEC-ATTRIBUTES/*", NS)
    }
    found: dict[str, dict[str, Any]] = {}
    for obj in doc.iterfind(".//r:SPEC-OBJECT", NS):
        values: dict[str, Any] = {}
        for value in obj.find("r:VALUES", NS):
            definition = names[value.find("r:DEFINITION/*", NS).text]
            if value.get("THE-VALUE") is not None:
                values[definition] = value.get("THE-VALUE")
            elif value.find("r:THE-VALUE", NS) is not None:
                values[definition] = value.find("r:THE-VALUE/x:div", NS)
            else:
                values[definition] = [v.text for v in value.iterfind("r:VALUES/*", NS)]
        found[obj.get("IDENTIFIER")] = {
            "type": obj.find("r:TYPE/r:SPEC-OBJECT-TYPE-REF", NS).text,
            "values": values,
        }
    return found


def tree_of(doc: Any) -> dict[str, list[str]]:
    """Each hierarchy node's object and its children's objects (the top: "")."""
    tree: dict[str, list[str]] = {}
    [spec] = doc.iterfind(".//r:SPECIFICATION", NS)

    def walk(holder: Any, key: str) -> None:
        children = holder.find("r:CHILDREN", NS)
        if children is None:
            return
        for node in children.iterfind("r:SPEC-HIERARCHY", NS):
            target = node.find("r:OBJECT/r:SPEC-OBJECT-REF", NS).text
            tree.setdefault(key, []).append(target)
            walk(node, target)

    walk(spec, "")
    return tree


def relations_of(doc: Any) -> set[tuple[str, str, str]]:
    types = {
        t.get("IDENTIFIER"): t.get("LONG-NAME") for t in doc.iterfind(".//r:SPEC-RELATION-TYPE", NS)
    }
    return {
        (
            rel.find("r:SOURCE/r:SPEC-OBJECT-REF", NS).text,
            rel.find("r:TARGET/r:SPEC-OBJECT-REF", NS).text,
            types[rel.find("r:TYPE/r:SPEC-RELATION-TYPE-REF", NS).text],
        )
        for rel in doc.iterfind(".//r:SPEC-RELATION", NS)
    }
