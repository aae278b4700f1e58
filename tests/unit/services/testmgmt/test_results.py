"""JUnit results applied to a cycle's runs: how a report's case finds its runs (by the
references in its properties, else by name), and an ingest end to end on SQLite."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from types import SimpleNamespace

import pytest
from sqlalchemy import func, select

from plumbline.common.errors import InvalidArgument, Unprocessable
from plumbline.services.testmgmt import remote
from plumbline.services.testmgmt.api.results import answer_message
from plumbline.services.testmgmt.junit import Case
from plumbline.services.testmgmt.models import ingests, outbox
from plumbline.services.testmgmt.results import MAX_KEY, Answer, Match, Unmatched, _Index
from tests.unit.services.conftest import ADMIN, acting_as
from tests.unit.services.testmgmt.conftest import Domain

# ---- matching ------------------------------------------------------------------------


def _case(name: str, **properties: str) -> Case:
    return Case(name, "tests.Login", "suite", properties, "PASSED", "", None)


def _index() -> _Index:
    """Runs 1 and 3 of test case 101 ("Login"), 2 of 102 ("Logout"), 4 of 104 (named
    "Login" too, after 101's runs) and 5 of 105, which items no longer answers for."""
    runs = [
        SimpleNamespace(id=1, test_case=101, fields_json=json.dumps({"name": "Login"})),
        SimpleNamespace(id=2, test_case=102, fields_json=json.dumps({"name": "Logout"})),
        SimpleNamespace(
            id=3,
            test_case=101,
            fields_json=json.dumps({"name": "Login", "testRunSteps": [{}, {}]}),
        ),
        SimpleNamespace(id=4, test_case=104, fields_json=json.dumps({"name": "Login"})),
        SimpleNamespace(id=5, test_case=105, fields_json=json.dumps({})),
    ]
    cases = {
        i: remote.TestCase(i, 3, 7, 1, {}, f"P-TC-{i}", f"GID-TC-{i}") for i in (101, 102, 104)
    }
    return _Index(runs, cases)


def test_a_case_matches_by_document_key_global_id_or_id_in_any_case() -> None:
    index = _index()
    assert index.match(_case("x", testcase="p-tc-101")) == (
        101,
        [1, 3],
        "property testcase=p-tc-101",
    )
    assert index.match(_case("x", jama="GID-TC-102")) == (102, [2], "property jama=GID-TC-102")
    # A numeric id matches a run's test case even when items no longer answers for it.
    assert index.match(_case("x", testcaseid="105")) == (105, [5], "property testcaseid=105")
    assert index.steps == {1: 0, 2: 0, 3: 2, 4: 0, 5: 0}
    assert index.keys == {101: "P-TC-101", 102: "P-TC-102", 104: "P-TC-104"}


def test_the_first_reference_that_matches_wins_in_property_order() -> None:
    index = _index()
    # "testcase" comes before "documentkey" whatever the report's order; within one
    # property the values are tried in turn, the unknown ones passed over.
    found = index.match(_case("Logout", documentkey="P-TC-102", testcase="P-TC-999, P-TC-104"))
    assert found == (104, [4], "property testcase=P-TC-104")


def test_without_a_matching_reference_a_case_matches_by_exact_name() -> None:
    index = _index()
    assert index.match(_case("Logout", testcase="P-TC-999")) == (102, [2], "name")
    # Two test cases' runs share the name: the first run's test case answers.
    assert index.match(_case("Login")) == (101, [1, 3], "name")
    assert index.match(_case("login")) is None
    assert index.match(_case("Nothing", requirement="P-TC-999")) is None


def test_a_test_case_outside_the_cycle_is_not_matched_by_its_key() -> None:
    index = _index()
    assert index.match(_case("x", testcase="P-TC-103")) is None
    assert index.match(_case("x", testcase="103")) is None


# ---- ingest --------------------------------------------------------------------------

REPORT = b"""<?xml version="1.0"?>
<testsuites>
  <testsuite name="web">
    <testcase name="test_login" classname="web.Login">
      <properties><property name="testcase" value="p3-tc-101"/></properties>
      <failure message="AssertionError: 500">Traceback: line 1
line 2</failure>
    </testcase>
    <testcase name="Logout" classname="web.Logout"/>
    <testcase name="test_search" classname="web.Search">
      <properties><property name="jama" value="GID-TC-103"/></properties>
      <skipped message="not today"/>
    </testcase>
    <testcase name="test_export" classname="web.Export">
      <properties><property name="requirement" value="P3-TC-555, 556"/></properties>
    </testcase>
    <testcase name="Logout" classname="web.Logout">
      <error message="timeout"/>
    </testcase>
  </testsuite>
</testsuites>
"""


async def _chunks(data: bytes, size: int = 64) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


async def _cycle(testmgmt: Domain) -> tuple[int, dict[tuple[str, int], int]]:
    """A cycle of Default [101, 102] and Smoke [101, 103]: its id and its runs' ids by
    (group name, test case)."""
    testmgmt.items.add_case(101, "Login", steps=2)
    testmgmt.items.add_case(102, "Logout")
    testmgmt.items.add_case(103, "Search", steps=1)
    plan, groups = await testmgmt.plan({"Default": [101, 102], "Smoke": [101, 103]})
    cycle = await testmgmt.cycle(plan)
    names = {v: k for k, v in groups.items()}
    runs = {(names[r.test_group], r.test_case): r.id for r in await testmgmt.runs_of(cycle)}
    return cycle, runs


async def test_ingest_sets_every_run_of_each_matched_case(testmgmt: Domain) -> None:
    cycle, runs = await _cycle(testmgmt)
    with acting_as(ADMIN):
        answer = await testmgmt.results.ingest(cycle, "", _chunks(REPORT))
    # One lookup of the cycle's test cases, each once, for their keys and global ids.
    assert testmgmt.items.asked[-1] == [101, 102, 103]
    failed = "AssertionError: 500\n\nTraceback: line 1\nline 2"
    login = ("test_login", "web.Login")
    assert answer.test_cycle == cycle
    assert answer.test_cases == 5
    assert answer.matched == [
        Match(
            *login,
            runs[("Default", 101)],
            101,
            "P3-TC-101",
            "property testcase=p3-tc-101",
            "FAILED",
            "AssertionError: 500",
        ),
        Match(
            *login,
            runs[("Smoke", 101)],
            101,
            "P3-TC-101",
            "property testcase=p3-tc-101",
            "FAILED",
            "AssertionError: 500",
        ),
        Match(
            "Logout", "web.Logout", runs[("Default", 102)], 102, "P3-TC-102", "name", "PASSED", ""
        ),
        Match(
            "test_search",
            "web.Search",
            runs[("Smoke", 103)],
            103,
            "P3-TC-103",
            "property jama=GID-TC-103",
            "NOT_RUN",
            "not today",
        ),
        Match(
            "Logout",
            "web.Logout",
            runs[("Default", 102)],
            102,
            "P3-TC-102",
            "name",
            "FAILED",
            "timeout",
        ),
    ]
    assert answer.unmatched == [
        Unmatched("test_export", "web.Export", ["P3-TC-555", "556"], "PASSED")
    ]
    assert answer.replayed is False
    stored = {r.id: r for r in await testmgmt.runs_of(cycle)}

    def result(place: tuple[str, int]) -> tuple[str, str, list[str], bool, int]:
        """A run's status, actual results, step statuses, whether it has an execution
        date, and its version."""
        row = stored[runs[place]]
        fields = json.loads(row.fields_json)
        steps = [s["status"] for s in fields["testRunSteps"]]
        dated = "executionDate" in fields
        return row.status, fields.get("actualResults"), steps, dated, row.version

    assert result(("Default", 101)) == ("FAILED", failed, ["FAILED", "FAILED"], True, 2)
    assert result(("Smoke", 101)) == ("FAILED", failed, ["FAILED", "FAILED"], True, 2)
    # Logout was reported twice: the later result stands, in one new version.
    assert result(("Default", 102)) == ("FAILED", "timeout", [], True, 2)
    assert result(("Smoke", 103)) == ("NOT_RUN", "not today", ["NOT_RUN"], False, 2)


async def _events(testmgmt: Domain) -> int:
    async with testmgmt.db.read() as session:
        return int(await session.scalar(select(func.count()).select_from(outbox)) or 0)


async def test_an_ingest_with_a_key_is_answered_again_and_changes_nothing(
    testmgmt: Domain,
) -> None:
    cycle, runs = await _cycle(testmgmt)
    with acting_as(ADMIN):
        first = await testmgmt.results.ingest(cycle, "ci-build-7", _chunks(REPORT))
    events = await _events(testmgmt)
    with acting_as(ADMIN):
        again = await testmgmt.results.ingest(cycle, "ci-build-7", _chunks(REPORT))
    assert again.replayed is True
    assert (again.matched, again.unmatched, again.test_cases) == (
        first.matched,
        first.unmatched,
        5,
    )
    assert await _events(testmgmt) == events
    versions = {r.id: r.version for r in await testmgmt.runs_of(cycle)}
    assert versions[runs[("Default", 101)]] == 2
    # Another key is another ingest.
    with acting_as(ADMIN):
        other = await testmgmt.results.ingest(cycle, "ci-build-8", _chunks(REPORT))
    assert other.replayed is False
    assert {r.id: r.version for r in await testmgmt.runs_of(cycle)}[runs[("Default", 101)]] == 3


async def test_a_key_used_for_another_report_is_refused(testmgmt: Domain) -> None:
    cycle, _ = await _cycle(testmgmt)
    with acting_as(ADMIN):
        await testmgmt.results.ingest(cycle, "ci-build-7", _chunks(REPORT))
    events = await _events(testmgmt)
    other = REPORT.replace(b"</testsuites>", b"<testsuite name='more'/></testsuites>")
    assert other != REPORT
    with acting_as(ADMIN), pytest.raises(Unprocessable) as refused:
        await testmgmt.results.ingest(cycle, "ci-build-7", _chunks(other))
    assert "'ci-build-7' was used for another report" in str(refused.value)
    assert await _events(testmgmt) == events
    # An answer stored before digests were kept stands for any report.
    async with testmgmt.db.transaction() as session:
        await session.execute(ingests.update().values(digest=None))
    with acting_as(ADMIN):
        again = await testmgmt.results.ingest(cycle, "ci-build-7", _chunks(other))
    assert again.replayed is True
    assert await _events(testmgmt) == events


async def test_an_ingest_refuses_a_long_key_before_reading_the_report(
    testmgmt: Domain,
) -> None:
    cycle, _ = await _cycle(testmgmt)
    with acting_as(ADMIN), pytest.raises(InvalidArgument) as refused:
        await testmgmt.results.ingest(cycle, "k" * (MAX_KEY + 1), _chunks(b"<bad"))
    assert str(refused.value) == f"Idempotency-Key must be at most {MAX_KEY} characters."


# ---- the answer: stored, read back as a replay, and as its message ---------------------


def _answer() -> Answer:
    return Answer(
        test_cycle=7,
        test_cases=3,
        matched=[Match("login", "Auth", 11, 5, "P-TC-5", "property testcase=P-TC-5", "PASSED", "")],
        unmatched=[Unmatched("logout", "Auth", ["P-TC-9", "42"], "FAILED")],
    )


def test_the_stored_answer_reads_back_as_a_replay() -> None:
    answer = _answer()
    again = Answer.from_json(answer.to_json())
    assert again.replayed
    assert not answer.replayed
    assert (again.matched, again.unmatched) == (answer.matched, answer.unmatched)
    assert (again.test_cycle, again.test_cases) == (7, 3)


def test_the_answer_message_carries_every_member() -> None:
    message = answer_message(_answer())
    assert (message.test_cycle, message.test_cases, message.replayed) == (7, 3, False)
    match = message.matched[0]
    assert (match.test_run, match.test_case, match.document_key) == (11, 5, "P-TC-5")
    assert (match.matched_by, match.status) == ("property testcase=P-TC-5", "PASSED")
    assert list(message.unmatched[0].references) == ["P-TC-9", "42"]
    assert message.unmatched[0].status == "FAILED"
