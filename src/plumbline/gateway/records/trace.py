"""Traceability (labs): traces, coverage and the impact of a change."""

from __future__ import annotations

from typing import Literal, NotRequired

# pydantic reads these TypedDicts for the schemas; before Python 3.12 it needs this one.
from typing_extensions import TypedDict


class LatestRun(TypedDict):
    """A test case's latest run in the asked scope: the run whose result was recorded
    last (one without a result only when none has one)."""

    id: int
    testRunStatus: Literal["PASSED", "FAILED", "BLOCKED", "INPROGRESS", "NOT_RUN"]
    executionDate: NotRequired[str]
    testCycle: NotRequired[int]
    #: How many runs the test case has in the scope.
    runCount: int


class TraceNode(TypedDict):
    """An item or test record a trace reaches: its key, name and type."""

    id: int
    #: "items", or the family of another service's record ("testplans", "testruns", ...).
    type: str
    project: int
    itemType: NotRequired[int]
    documentKey: NotRequired[str]
    name: NotRequired[str]
    #: In a trace as it was (asOf, baseline, an impact at a version): its version then.
    version: NotRequired[int]
    #: Test cases only: the latest run in the scope; left out when it has none there.
    latestRun: NotRequired[LatestRun]


class TraceLink(TypedDict):
    """One relationship followed: to ``item`` from ``fromItem``, one level down."""

    item: TraceNode
    fromItem: int
    relationship: int
    relationshipType: int
    suspect: bool


class Trace(TypedDict):
    """One item of the traced type and what it reaches, level by level (``levels[0]`` the
    items related to it directly)."""

    item: TraceNode
    levels: list[list[TraceLink]]


class CoverageEntry(TypedDict):
    """An item, the test cases that verify it and their latest results, and the verdict:
    NOT_COVERED without test cases, else FAILING if one failed, else BLOCKED if one is
    blocked, else PASSING if all passed, else NOT_RUN."""

    item: TraceNode
    verdict: Literal["PASSING", "FAILING", "BLOCKED", "NOT_RUN", "NOT_COVERED"]
    testCases: list[TraceNode]


class Impact(TypedDict):
    """An item or test record downstream of the changed item, at its nearest depth."""

    item: TraceNode
    depth: int
    #: Ids from the changed item to this one.
    path: list[int]
    relationship: int
    relationshipType: int
    #: The relationship that reaches it is already suspect.
    suspect: bool
    #: Some relationship on the path is already suspect.
    suspectOnPath: bool
