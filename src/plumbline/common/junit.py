"""What both ends of a JUnit report's ingest name: the gateway describes the properties a
``<testcase>`` may name its test case with, and testmgmt's parser reads them."""

from __future__ import annotations

#: Case properties naming what the case refers to, in priority order.
REFERENCE_PROPERTIES = ("testcase", "test_case", "testcaseid", "requirement", "jama", "documentkey")
