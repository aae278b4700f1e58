"""JUnit XML test reports, parsed as they stream in, for server-side result ingest.

Reads the reports of Maven Surefire, pytest (``--junitxml``), Jest (jest-junit) and Go's
go-junit-report: a ``<testsuites>`` or ``<testsuite>`` root, suites nested to any depth, and
a ``Case`` for every ``<testcase>``. No document tree is built: expat reads the chunks as
they come and a ``<testcase>`` becomes a ``Case`` as soon as it ends.

A case's status comes from the direct children of its ``<testcase>``:

    <failure>    FAILED
    <error>      FAILED
    <skipped>    NOT_RUN    (a failure or error beside it wins)
    none         PASSED

so Surefire's ``<flakyFailure>`` and ``<rerunFailure>`` (a test that passed on a rerun) leave
a case PASSED. No element maps to BLOCKED; it is in ``Status`` because a run may hold it.

``references(case)`` lists what a case refers to, from the case's own properties (names
compared lower-cased) in this order: ``testcase``, ``test_case``, ``testcaseid``,
``requirement``, ``jama``, ``documentkey``. A value may hold several references separated
by commas or spaces. The caller matches each one as a document key (``PRJ-TC-12``), a global
id (``GID-TC-123``) or a numeric id.

Hostile XML is refused with ``InvalidArgument``: any DOCTYPE, and so every entity
declaration and external DTD, is rejected before it is read; entities are never expanded.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterable, Iterable
from dataclasses import dataclass, field
from typing import Literal
from xml.parsers import expat

from plumbline.common.errors import InvalidArgument
from plumbline.common.junit import REFERENCE_PROPERTIES

__all__ = [
    "MAX_CASES",
    "MAX_MESSAGE",
    "REFERENCE_PROPERTIES",
    "Case",
    "JUnitParser",
    "Status",
    "named_references",
    "parse",
    "parse_async",
    "references",
]

#: The most test cases one report may hold.
MAX_CASES = 100_000

#: The longest ``Case.message``, in characters.
MAX_MESSAGE = 100_000

Status = Literal["PASSED", "FAILED", "BLOCKED", "NOT_RUN"]

_ROOTS = ("testsuites", "testsuite")
_OUTCOMES = ("failure", "error", "skipped")
_OUTPUTS = ("system-out", "system-err")
_SEPARATORS = re.compile(r"[,\s]+")
_TRUNCATED = "…"


@dataclass(frozen=True, slots=True)
class Case:
    """One ``<testcase>``: who it is, how it went and what it printed."""

    name: str
    classname: str
    suite: str
    properties: dict[str, str]
    status: Status
    message: str
    time: float | None


def references(case: Case) -> list[str]:
    """What ``case`` refers to, from its ``REFERENCE_PROPERTIES``, first first, no repeats."""
    return list(dict.fromkeys(value for _, value in named_references(case)))


def named_references(case: Case) -> list[tuple[str, str]]:
    """(property name, reference) pairs of ``case``, in ``REFERENCE_PROPERTIES`` order."""
    return [
        (name, value)
        for name in REFERENCE_PROPERTIES
        for value in _SEPARATORS.split(case.properties.get(name, ""))
        if value
    ]


def parse(source: bytes | Iterable[bytes]) -> list[Case]:
    """The cases of a report given whole or as byte chunks."""
    parser = JUnitParser()
    for chunk in [source] if isinstance(source, bytes) else source:
        parser.feed(chunk)
    return parser.close()


async def parse_async(chunks: AsyncIterable[bytes]) -> list[Case]:
    """The cases of a report that arrives as an asynchronous stream of byte chunks."""
    parser = JUnitParser()
    async for chunk in chunks:
        parser.feed(chunk)
    return parser.close()


@dataclass(slots=True)
class _OpenCase:
    """A ``<testcase>`` being read."""

    name: str
    classname: str
    suite: str
    time: float | None
    depth: int
    properties: dict[str, str] = field(default_factory=dict)
    outcomes: list[tuple[str, str, str, str]] = field(default_factory=list)
    outputs: dict[str, list[str]] = field(
        default_factory=lambda: {"system-out": [], "system-err": []}
    )
    in_properties: bool = False

    def close(self) -> Case:
        kinds = {kind for kind, *_ in self.outcomes}
        status: Status = (
            "FAILED" if kinds & {"failure", "error"} else "NOT_RUN" if kinds else "PASSED"
        )
        parts: list[str] = []
        for _, message, type_, text in self.outcomes:
            message, text, type_ = message.strip(), text.strip(), type_.strip()
            parts += [message] if message else []
            parts += [text] if text and text != message else []
            parts += [type_] if type_ and not (message or text) else []
        for name in _OUTPUTS:
            parts += [text for text in (t.strip() for t in self.outputs[name]) if text]
        message = "\n\n".join(parts)
        if len(message) > MAX_MESSAGE:
            message = message[: MAX_MESSAGE - len(_TRUNCATED)] + _TRUNCATED
        return Case(
            self.name, self.classname, self.suite, self.properties, status, message, self.time
        )


class JUnitParser:
    """Reads a JUnit report chunk by chunk: ``feed`` the bytes, then ``close`` for the cases.

    Raises ``InvalidArgument`` from ``feed`` or ``close`` as soon as the report is found to
    be hostile, malformed, of another kind or too large.
    """

    def __init__(self) -> None:
        parser = expat.ParserCreate()
        parser.buffer_text = True
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        parser.StartDoctypeDeclHandler = _refuse_dtd
        parser.EntityDeclHandler = _refuse_dtd
        parser.StartElementHandler = self._start
        parser.EndElementHandler = self._end
        parser.CharacterDataHandler = self._text
        self._parser = parser
        self._done = False
        self._blank = True
        self._depth = 0
        self._suites: list[str] = []
        self._cases: list[Case] = []
        self._case: _OpenCase | None = None
        # Text of the element being captured, what to do with it, and where it ends.
        self._buffer: list[str] | None = None
        self._buffered = 0
        self._target: tuple[str, str, str] = ("", "", "")
        self._target_depth = 0

    def feed(self, data: bytes) -> None:
        """Reads the next chunk of the report."""
        if self._blank and data.strip():
            self._blank = False
        self._parse(data, final=False)

    def close(self) -> list[Case]:
        """Reads the end of the report and gives its cases, in document order."""
        if self._blank:
            self._done = True
            raise InvalidArgument(
                "JUnit report is empty: expected a <testsuites> or <testsuite> document."
            )
        self._parse(b"", final=True)
        return self._cases

    def _parse(self, data: bytes, final: bool) -> None:
        if self._done:
            raise RuntimeError("JUnitParser is closed or has failed; start a new one.")
        try:
            self._parser.Parse(data, final)
        except expat.ExpatError as error:
            self._done = True
            raise InvalidArgument(
                f"JUnit report is not well-formed XML: {expat.ErrorString(error.code)} "
                f"at line {error.lineno}, column {error.offset + 1}."
            ) from None
        except BaseException:
            self._done = True
            raise
        self._done = final

    def _start(self, name: str, attrs: dict[str, str]) -> None:
        depth = self._depth
        self._depth += 1
        case = self._case
        if case is None:
            if depth == 0 and name not in _ROOTS:
                raise InvalidArgument(
                    f"JUnit report: the root element must be <testsuites> or <testsuite>, "
                    f"not <{name}>."
                )
            if name == "testsuite":
                self._suites.append(attrs.get("name", ""))
            elif name == "testcase":
                if len(self._cases) >= MAX_CASES:
                    raise InvalidArgument(
                        f"JUnit report has more than {MAX_CASES:,} test cases; "
                        f"at most {MAX_CASES:,} are allowed in one report."
                    )
                self._case = _OpenCase(
                    name=attrs.get("name", ""),
                    classname=attrs.get("classname", ""),
                    suite=self._suites[-1] if self._suites else "",
                    time=_seconds(attrs.get("time")),
                    depth=depth,
                )
            return
        level = depth - case.depth
        if level == 1:
            if name in _OUTCOMES:
                self._capture(depth, name, attrs.get("message", ""), attrs.get("type", ""))
            elif name in _OUTPUTS:
                self._capture(depth, name, "", "")
            elif name == "properties":
                case.in_properties = True
        elif level == 2 and case.in_properties and name == "property":
            key = attrs.get("name", "").strip().lower()
            if "value" in attrs:
                _add_property(case.properties, key, attrs["value"])
            else:
                self._capture(depth, "property", key, "")

    def _end(self, name: str) -> None:
        self._depth -= 1
        case = self._case
        if case is None:
            if name == "testsuite":
                self._suites.pop()
            return
        if self._buffer is not None and self._depth == self._target_depth:
            self._store(case, "".join(self._buffer)[:MAX_MESSAGE])
        elif self._depth == case.depth:
            self._cases.append(case.close())
            self._case = None
        elif self._depth == case.depth + 1 and name == "properties":
            case.in_properties = False

    def _text(self, data: str) -> None:
        if self._buffer is not None and self._buffered < MAX_MESSAGE:
            self._buffer.append(data)
            self._buffered += len(data)

    def _capture(self, depth: int, kind: str, first: str, second: str) -> None:
        self._buffer = []
        self._buffered = 0
        self._target = (kind, first, second)
        self._target_depth = depth

    def _store(self, case: _OpenCase, text: str) -> None:
        kind, first, second = self._target
        if kind in _OUTCOMES:
            case.outcomes.append((kind, first, second, text))
        elif kind in _OUTPUTS:
            case.outputs[kind].append(text)
        else:
            _add_property(case.properties, first, text.strip())
        self._buffer = None


def _add_property(properties: dict[str, str], name: str, value: str) -> None:
    """Keeps every value of a name given more than once, joined with ', '."""
    if name in properties:
        properties[name] += ", " + value
    else:
        properties[name] = value


def _seconds(raw: str | None) -> float | None:
    """A ``time`` attribute in seconds, or None when it is missing or not a duration."""
    try:
        value = float(raw) if raw else None
    except ValueError:
        return None
    return value if value is not None and 0 <= value < float("inf") else None


def _refuse_dtd(*_: object) -> None:
    raise InvalidArgument("JUnit report: DTDs and entity declarations are not allowed.")
