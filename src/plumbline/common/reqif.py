"""What the ReqIF export (reports service) and import (gateway) share: the namespaces,
which item type categories are not items, and text escaped for XHTML."""

from __future__ import annotations

from xml.sax.saxutils import escape

NS = "http://www.omg.org/spec/ReqIF/20110401/reqif.xsd"
XHTML = "http://www.w3.org/1999/xhtml"
#: Item type categories whose records are not items (testmgmt's and attachments'): they
#: are neither exported nor imported.
NOT_ITEMS = frozenset(("TEST_PLAN", "TEST_CYCLE", "TEST_RUN", "ATTACHMENT"))

__all__ = ["NOT_ITEMS", "NS", "XHTML", "escape"]
