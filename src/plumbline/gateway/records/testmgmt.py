"""Test management: test plans, cycles, runs and groups, results and JUnit reports."""

from __future__ import annotations

from typing import Literal, NotRequired

# pydantic reads these TypedDicts for the schemas; before Python 3.12 it needs this one.
from typing_extensions import TypedDict

from plumbline.gateway.records.common import Lock, TestRecordBase


class TestPlan(TestRecordBase):
    """A test plan; ``fields`` holds the values of the test plan item type's fields."""

    archived: bool
    lock: Lock
    type: Literal["testplans"]


class TestCycle(TestRecordBase):
    """A test cycle of a test plan; ``fields`` carries ``testPlan`` (the plan's id, a link
    to testplans) with the values of the test cycle item type's fields."""

    type: Literal["testcycles"]


class TestRun(TestRecordBase):
    """A test run: one test case's execution in a test cycle.

    ``fields`` carries ``testCase``, ``testCycle``, ``testPlan``, ``testRunStatus``,
    ``testRunSteps``, ``actualResults``, ``executionDate`` and ``assignedTo``.
    ``testGroup`` is the test plan's id and the test group's id.
    """

    testCaseVersionNumber: int
    #: The test case's version now (the run was made from ``testCaseVersionNumber``); left
    #: out when the caller cannot read the test case or it is deleted.
    testCaseCurrentVersionNumber: NotRequired[int]
    sortOrderFromTestGroup: int
    testGroup: list[int]
    lock: Lock
    type: Literal["testruns"]


class TestGroup(TypedDict):
    """A test group of a test plan: the test cases run together."""

    id: int
    name: str
    assignedTo: NotRequired[int]
    type: Literal["testgroups"]


class TestCycleTestGroup(TypedDict):
    """A test group as a test cycle took it."""

    testGroup: int
    name: str
    assignedTo: NotRequired[int]
    testCycle: int
    type: Literal["testcycletestgroups"]


class TestRunResult(TypedDict):
    """The outcome for one test run of a bulk result update."""

    id: int
    status: int
    message: str
    testRunStatus: str


class TestCasesAdded(TypedDict):
    """How many test cases a batch added to a test group."""

    added: int


class IngestMatch(TypedDict):
    """A report's test case and the run it set."""

    name: str
    classname: str
    testRun: int
    testCase: int
    documentKey: str
    #: ``property <name>=<value>`` or ``name``
    matchedBy: str
    testRunStatus: str
    #: The first line of what went to actualResults.
    summary: str


class IngestUnmatched(TypedDict):
    """A report's test case no run of the cycle answers to."""

    name: str
    classname: str
    references: list[str]
    status: str


class IngestAnswer(TypedDict):
    """What a JUnit report did to a test cycle."""

    testCycle: int
    #: How many <testcase> elements the report held.
    testCases: int
    matched: list[IngestMatch]
    unmatched: list[IngestUnmatched]
    #: The stored answer of an earlier upload with the same Idempotency-Key.
    replayed: bool
