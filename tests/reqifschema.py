"""ReqIF 1.2's XML schema, as the ``reqif`` package ships it, for lxml to validate with.

The schema imports the XML namespace's schema with an empty location, which lxml takes
for the schema importing itself: a copy of the schema directory points those imports at
the XML namespace schema ``xmlschema`` ships (a dependency of ``reqif``)."""

from __future__ import annotations

import functools
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import reqif
import xmlschema
from lxml import etree

_EMPTY_IMPORT = re.compile(
    r'namespace="http://www.w3.org/XML/1998/namespace"(\s+)schemaLocation=""'
)


@functools.cache
def schema() -> Any:
    """The ReqIF schema (lxml's ``XMLSchema``)."""
    source = Path(reqif.__file__).parent / "reqif_schema"
    xml_xsd = Path(xmlschema.__file__).parent / "schemas" / "XML" / "xml.xsd"
    copy = Path(tempfile.mkdtemp(prefix="reqif-schema-")) / "reqif_schema"
    shutil.copytree(source, copy)
    for path in copy.rglob("*.xsd"):
        text = path.read_text(encoding="utf-8")
        located = f'namespace="http://www.w3.org/XML/1998/namespace"\\1schemaLocation="{xml_xsd.as_uri()}"'
        fixed = _EMPTY_IMPORT.sub(located, text)
        if fixed != text:
            path.write_text(fixed, encoding="utf-8")
    return etree.XMLSchema(etree.parse(str(copy / "reqif.xsd")))


def assert_valid(document: bytes) -> Any:
    """The parsed document, once it is shown to be valid ReqIF (the errors otherwise)."""
    parsed = etree.fromstring(document)
    checker = schema()
    assert checker.validate(parsed), "\n".join(str(e) for e in list(checker.error_log)[:20])
    return parsed
