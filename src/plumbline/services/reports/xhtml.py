"""Rich text (the HTML items keep) as the XHTML a ReqIF attribute value holds: the
elements of the XHTML modules ReqIF's schema allows, in the XHTML namespace, inside one
``div``. Anything else is dropped and its text kept; attributes are dropped but for a
link's ``href`` (http, https, mailto) and a table cell's spans. So the value is valid
against the schema whatever HTML an item holds, and carries no script and nothing that
loads from elsewhere."""

from __future__ import annotations

from typing import Any

from lxml import etree, html

from plumbline.common.reqif import XHTML

#: Elements ReqIF's XHTML subset has (text, hypertext, list, edit, presentation, table).
_INLINE = frozenset(
    [
        "a",
        "abbr",
        "acronym",
        "b",
        "big",
        "br",
        "cite",
        "code",
        "del",
        "dfn",
        "em",
        "i",
        "ins",
        "kbd",
        "q",
        "samp",
        "small",
        "span",
        "strong",
        "sub",
        "sup",
        "tt",
        "var",
    ]
)
_BLOCK = frozenset(
    [
        "address",
        "div",
        "dl",
        "dt",
        "dd",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "li",
        "ol",
        "p",
        "pre",
        "table",
        "caption",
        "thead",
        "tbody",
        "tfoot",
        "tr",
        "th",
        "td",
        "ul",
    ]
)
#: Mapped to the nearest element the subset has.
_RENAMED = {
    "u": "span",
    "s": "del",
    "strike": "del",
    "section": "div",
    "article": "div",
    "blockquote": "div",
}
#: Elements whose content is never text a reader should see.
_DROPPED = frozenset(("script", "style", "head", "title", "iframe", "object", "embed"))
_LINK_SCHEMES = ("http://", "https://", "mailto:")
#: Elements that hold inline content only (text and _INLINE).
_INLINE_ONLY = _INLINE | frozenset(
    ["p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "dt", "caption", "address"]
)
#: Inline elements ``pre`` may not hold.
_NOT_IN_PRE = frozenset(("big", "small", "sub", "sup"))
#: Elements that may stand only inside these.
_PARENTS = {
    "li": {"ul", "ol"},
    "dt": {"dl"},
    "dd": {"dl"},
    "caption": {"table"},
    "thead": {"table"},
    "tbody": {"table"},
    "tfoot": {"table"},
    "tr": {"table", "thead", "tbody", "tfoot"},
    "td": {"tr"},
    "th": {"tr"},
}
#: The children each container must have (and may only have).
_ALLOWED_CHILDREN = {
    "ul": {"li"},
    "ol": {"li"},
    "dl": {"dt", "dd"},
    "table": {"caption", "thead", "tbody", "tfoot", "tr"},
    "thead": {"tr"},
    "tbody": {"tr"},
    "tfoot": {"tr"},
    "tr": {"th", "td"},
}


def _q(tag: str) -> str:
    return f"{{{XHTML}}}{tag}"


def to_xhtml(text: str) -> Any:
    """An ``xhtml:div`` element holding ``text`` (HTML, or plain text) as ReqIF allows."""
    root = etree.Element(_q("div"), nsmap={"xhtml": XHTML})
    if not text.strip():
        return root
    try:
        fragment = html.fragment_fromstring(text, create_parent="div")
    except (etree.ParserError, ValueError):
        root.text = text
        return root
    _copy_children(fragment, root, block=True)
    return root


def _copy_children(source: Any, target: Any, block: bool) -> None:
    """Copies ``source``'s text and children into ``target``."""
    _append_text(target, source.text)
    for child in source:
        tag = child.tag if isinstance(child.tag, str) else ""
        tag = _RENAMED.get(tag.lower(), tag.lower())
        if tag in _DROPPED or not tag:
            _append_text(target, child.tail)
            continue
        parent_tag = etree.QName(target).localname
        allowed = _ALLOWED_CHILDREN.get(parent_tag)
        if not _fits(tag, parent_tag) or (allowed is not None and tag not in allowed):
            # Its content stays, in the element that holds it.
            holder = target
            if allowed is not None:  # text is not allowed directly in a list or table
                holder = _last_or_new(target, allowed)
            _copy_children(child, holder, block)
            _append_text(target if allowed is None else holder, child.tail)
            continue
        element = etree.SubElement(target, _q(tag))
        _copy_attributes(child, element, tag)
        _copy_children(child, element, tag in _BLOCK)
        if tag in _ALLOWED_CHILDREN and not len(element):
            target.remove(element)  # a list or table without its items is not allowed
        _append_text(target, child.tail)


def _fits(tag: str, parent: str) -> bool:
    """Whether ``tag`` may stand directly in ``parent``."""
    if tag not in _INLINE and tag not in _BLOCK:
        return False
    if tag in _PARENTS:
        return parent in _PARENTS[tag]
    if parent in _INLINE_ONLY and tag not in _INLINE:
        return False
    if parent == "pre" and tag in _NOT_IN_PRE:
        return False
    return not (tag == "a" and parent == "a")


def _last_or_new(target: Any, allowed: set[str]) -> Any:
    """The last child of ``target`` that may hold text, or a new one."""
    for tag in ("li", "dd", "tr"):
        if tag in allowed:
            if len(target) and etree.QName(target[-1]).localname == tag:
                holder = target[-1]
            else:
                holder = etree.SubElement(target, _q(tag))
            if tag == "tr":
                return etree.SubElement(holder, _q("td"))
            return holder
    return target


def _copy_attributes(source: Any, target: Any, tag: str) -> None:
    if tag == "a":
        href = str(source.get("href", "")).strip()
        if href.lower().startswith(_LINK_SCHEMES):
            target.set("href", href)
    elif tag in ("td", "th"):
        for name in ("colspan", "rowspan"):
            value = str(source.get(name, "")).strip()
            if value.isdigit() and 0 < int(value) < 1000:
                target.set(name, value)


def _append_text(element: Any, text: str | None) -> None:
    """Adds ``text`` after ``element``'s last child (or to its text), where text may
    stand: not directly in a list or table."""
    if not text:
        return
    if etree.QName(element).localname in _ALLOWED_CHILDREN:
        if not text.strip():
            return
        element = _last_or_new(element, _ALLOWED_CHILDREN[etree.QName(element).localname])
    if len(element):
        last = element[-1]
        last.tail = (last.tail or "") + text
    else:
        element.text = (element.text or "") + text
