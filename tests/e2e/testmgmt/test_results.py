"""``POST /rest/labs/testcycles/{id}/results``: JUnit reports from CI applied to a cycle."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from plumbline.services.testmgmt import junit
from tests.e2e.api import Team, assert_error
from tests.e2e.testrecords import (
    add_cases,
    default_group,
    new_cycle,
    new_plan,
    new_test_case,
    record,
    run_of,
    runs_of,
    steps,
)

FIXTURES = Path(__file__).parents[2] / "unit" / "services" / "testmgmt" / "fixtures"
XML = {"Content-Type": "application/xml"}


def results_url(client: httpx.Client, cycle: int) -> str:
    """The labs URL of a cycle's results, for a client at ``/rest/v1``."""
    return str(client.base_url).rstrip("/").rsplit("/", 1)[0] + f"/labs/testcycles/{cycle}/results"


def _cycle_of(admin: httpx.Client, project: dict[str, Any], *cases: int) -> int:
    plan = new_plan(admin, project)
    add_cases(admin, plan, default_group(admin, plan), *cases)
    return new_cycle(admin, plan)


def _report(*cases: str) -> bytes:
    return f'<testsuites><testsuite name="s">{"".join(cases)}</testsuite></testsuites>'.encode()


def _case(name: str, outcome: str = "", **properties: str) -> str:
    props = "".join(f'<property name="{k}" value="{v}"/>' for k, v in properties.items())
    inner = (f"<properties>{props}</properties>" if props else "") + outcome
    return f'<testcase name="{name}" classname="c">{inner}</testcase>'


def _statuses(admin: httpx.Client, cycle: int) -> dict[str, str]:
    return {r["fields"]["name"]: r["fields"]["testRunStatus"] for r in runs_of(admin, cycle)}


@pytest.mark.parametrize("dialect", ["surefire", "pytest", "pytest_legacy", "jest", "go"])
def test_each_dialect_is_matched_by_name(
    admin: httpx.Client, project: dict[str, Any], dialect: str
) -> None:
    # The pytest report's "GID-TC-77" is the global id of whichever test case got id 77
    # in this run: point it at none, so every case is matched by its name.
    report = (FIXTURES / f"{dialect}.xml").read_bytes().replace(b"GID-TC-77", b"GID-TC-0")
    expected = {c.name: c for c in junit.parse(report)}
    cases = [new_test_case(admin, project, name) for name in expected]
    cycle = _cycle_of(admin, project, *cases)

    response = admin.post(results_url(admin, cycle), content=report, headers=XML)
    assert response.status_code == 200, response.text
    answer = response.json()["data"]
    assert answer["testCycle"] == cycle
    assert answer["testCases"] == len(expected)
    assert answer["unmatched"] == []
    assert not answer["replayed"]
    assert {m["name"] for m in answer["matched"]} == set(expected)
    assert all(m["matchedBy"] == "name" for m in answer["matched"])
    for run in runs_of(admin, cycle):
        case = expected[run["fields"]["name"]]
        assert run["fields"]["testRunStatus"] == case.status
        assert run["fields"].get("actualResults", "") == case.message
        if case.status != "NOT_RUN":
            assert run["fields"]["executionDate"]
    assert {"PASSED", "FAILED"} <= set(_statuses(admin, cycle).values())


def test_matching_by_property(admin: httpx.Client, project: dict[str, Any]) -> None:
    by_key, by_gid, by_id, by_name = (
        new_test_case(admin, project, name) for name in ("Key", "Gid", "Id", "Name")
    )
    elsewhere = new_test_case(admin, project, "Not in the cycle")
    cycle = _cycle_of(admin, project, by_key, by_gid, by_id, by_name)
    key = admin.get(f"/items/{by_key}").json()["data"]["documentKey"]
    gid = admin.get(f"/items/{by_gid}").json()["data"]["globalId"]
    other_key = admin.get(f"/items/{elsewhere}").json()["data"]["documentKey"]
    report = _report(
        _case("renamed in code", '<failure message="boom">trace</failure>', testcase=key),
        _case("also renamed", "<skipped/>", requirement=gid.lower()),
        _case("third", "<error message='oops'/>", test_case=str(by_id)),
        _case("Name"),
        _case("unknown", testcase=other_key),
        _case("nobody"),
    )
    response = admin.post(results_url(admin, cycle), content=report, headers=XML)
    assert response.status_code == 200, response.text
    answer = response.json()["data"]
    how = {m["testCase"]: m["matchedBy"] for m in answer["matched"]}
    assert how == {
        by_key: f"property testcase={key}",
        by_gid: f"property requirement={gid.lower()}",
        by_id: f"property test_case={by_id}",
        by_name: "name",
    }
    assert [(u["name"], u["references"]) for u in answer["unmatched"]] == [
        ("unknown", [other_key]),
        ("nobody", []),
    ]
    assert _statuses(admin, cycle) == {
        "Key": "FAILED",
        "Gid": "NOT_RUN",
        "Id": "FAILED",
        "Name": "PASSED",
    }
    failed = next(r for r in runs_of(admin, cycle) if r["fields"]["testCase"] == by_key)
    assert failed["fields"]["actualResults"] == "boom\n\ntrace"
    assert next(m for m in answer["matched"] if m["testCase"] == by_key)["summary"] == "boom"


def test_steps_take_the_result_of_their_run(admin: httpx.Client, project: dict[str, Any]) -> None:
    stepped = new_test_case(admin, project, "Stepped", steps("open", "pay"))
    cycle = _cycle_of(admin, project, stepped)
    report = _report(_case("Stepped", '<failure message="declined"/>'))
    assert admin.post(results_url(admin, cycle), content=report, headers=XML).status_code == 200
    [run] = runs_of(admin, cycle)
    assert [s["status"] for s in run["fields"]["testRunSteps"]] == ["FAILED", "FAILED"]
    assert run["fields"]["testRunStatus"] == "FAILED"


def test_a_report_as_a_form_part(admin: httpx.Client, project: dict[str, Any]) -> None:
    cycle = _cycle_of(admin, project, new_test_case(admin, project, "Uploaded"))
    files = {"file": ("report.xml", _report(_case("Uploaded")), "text/xml")}
    response = admin.post(results_url(admin, cycle), files=files)
    assert response.status_code == 200, response.text
    assert _statuses(admin, cycle) == {"Uploaded": "PASSED"}
    no_file = admin.post(
        results_url(admin, cycle),
        files={"note": (None, b"x")},  # a form without a file
    )
    assert_error(no_file, 400, "no file part", "called file", "note")
    other_name = admin.post(
        results_url(admin, cycle),
        files={"report": ("report.xml", _report(_case("Uploaded", "<failure/>")), "text/xml")},
    )
    assert_error(other_name, 400, "no file part", "called file", "report")
    as_text = admin.post(
        results_url(admin, cycle), files={"file": (None, _report(_case("Uploaded", "<failure/>")))}
    )
    assert_error(as_text, 400, "no file part", "called file")
    assert _statuses(admin, cycle) == {"Uploaded": "PASSED"}
    boundary = "c637e12e2b1a998d80d1b087531af51c"
    empty = admin.post(
        results_url(admin, cycle),
        content=f"--{boundary}--\r\n".encode(),
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    assert_error(empty, 400)


def test_the_same_key_changes_nothing_twice(admin: httpx.Client, project: dict[str, Any]) -> None:
    case = new_test_case(admin, project, "Flaky")
    cycle = _cycle_of(admin, project, case)
    report = _report(_case("Flaky", "<failure/>"))
    headers = {**XML, "Idempotency-Key": "build-1234"}
    first = admin.post(results_url(admin, cycle), content=report, headers=headers)
    assert first.status_code == 200, first.text
    [run] = runs_of(admin, cycle)
    assert record(admin, run["id"], testRunStatus="PASSED").status_code == 200

    again = admin.post(results_url(admin, cycle), content=report, headers=headers)
    assert again.status_code == 200, again.text
    assert again.json()["data"]["replayed"] is True
    assert again.json()["data"]["matched"] == first.json()["data"]["matched"]
    assert run_of(admin, run["id"])["fields"]["testRunStatus"] == "PASSED"

    another_report = _report(_case("Flaky", '<failure message="again"/>'))
    reused = admin.post(results_url(admin, cycle), content=another_report, headers=headers)
    assert_error(reused, 422, "'build-1234' was used for another report")
    assert run_of(admin, run["id"])["fields"]["testRunStatus"] == "PASSED"

    other_key = {**XML, "Idempotency-Key": "build-1235"}
    assert (
        admin.post(results_url(admin, cycle), content=report, headers=other_key).json()["data"][
            "replayed"
        ]
        is False
    )
    assert run_of(admin, run["id"])["fields"]["testRunStatus"] == "FAILED"


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<testsuites><testsuite name="s"><testcase name="&lol3;"/></testsuite></testsuites>"""
EXTERNAL_ENTITY = b"""<?xml version="1.0"?>
<!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<testsuites><testsuite name="s"><testcase name="&xxe;"/></testsuite></testsuites>"""


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (BILLION_LAUGHS, ("DTDs and entity declarations are not allowed",)),
        (EXTERNAL_ENTITY, ("DTDs and entity declarations are not allowed",)),
        (b"<testsuites><testsuite>", ("not well-formed", "line")),
        (b"<html><body/></html>", ("testsuites", "testsuite")),
        (b"", ("empty",)),
    ],
)
def test_hostile_or_broken_xml_is_refused(
    admin: httpx.Client, project: dict[str, Any], body: bytes, words: tuple[str, ...]
) -> None:
    cycle = _cycle_of(admin, project, new_test_case(admin, project, "lol"))
    response = admin.post(results_url(admin, cycle), content=body, headers=XML)
    assert_error(response, 400, *words)
    assert _statuses(admin, cycle) == {"lol": "NOT_RUN"}


def test_a_large_report(admin: httpx.Client, project: dict[str, Any]) -> None:
    """10,000 cases in one report (streamed through): the cycle's five are matched."""
    names = [f"case {n}" for n in range(5)]
    cycle = _cycle_of(admin, project, *(new_test_case(admin, project, n) for n in names))
    cases = [_case(f"case {n}", "<failure/>" if n % 2 else "") for n in range(10_000)]
    response = admin.post(results_url(admin, cycle), content=_report(*cases), headers=XML)
    assert response.status_code == 200, response.text
    answer = response.json()["data"]
    assert answer["testCases"] == 10_000
    assert len(answer["matched"]) == 5
    assert len(answer["unmatched"]) == 9_995
    assert _statuses(admin, cycle) == {
        "case 0": "PASSED",
        "case 1": "FAILED",
        "case 2": "PASSED",
        "case 3": "FAILED",
        "case 4": "PASSED",
    }


def test_a_report_over_the_body_limit_streams_through(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    """A report past the 8 MiB API body limit, within the report limit (64 MiB)."""
    cycle = _cycle_of(admin, project, new_test_case(admin, project, "big"))
    output = "x" * 1_000_000
    cases = [_case("big", "<failure/>")] + [
        f'<testcase name="filler {n}"><system-out>{output}</system-out></testcase>'
        for n in range(10)
    ]
    report = _report(*cases)
    assert len(report) > 9 * 2**20
    response = admin.post(results_url(admin, cycle), content=report, headers=XML)
    assert response.status_code == 200, response.text[:300]
    assert response.json()["data"]["testCases"] == 11
    assert _statuses(admin, cycle) == {"big": "FAILED"}


def test_a_report_that_grows_past_its_limit_is_a_413(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    """Sent without a length (chunked), a report over the 64 MiB report limit ends with
    the route's 413 while it streams, not with the cancelled call's error; nothing is
    recorded."""
    cycle = _cycle_of(admin, project, new_test_case(admin, project, "huge"))
    output = "x" * 2**20

    def body() -> Iterator[bytes]:
        yield b'<testsuites><testsuite name="s">' + _case("huge", "<failure/>").encode()
        for n in range(70):
            yield f'<testcase name="filler {n}"><system-out>{output}</system-out></testcase>'.encode()
        yield b"</testsuite></testsuites>"

    response = admin.post(results_url(admin, cycle), content=body(), headers=XML)
    assert_error(response, 413, "JUnit report", "(64 MiB)")
    assert _statuses(admin, cycle) == {"huge": "NOT_RUN"}


def test_where_results_may_go(admin: httpx.Client, project: dict[str, Any]) -> None:
    cycle = _cycle_of(admin, project, new_test_case(admin, project, "Only"))
    report = _report(_case("Only"))
    assert_error(admin.post(results_url(admin, 99_999_999), content=report, headers=XML), 404)
    [run] = runs_of(admin, cycle)
    assert_error(admin.post(results_url(admin, run["id"]), content=report, headers=XML), 404)
    v1 = admin.post(f"/testcycles/{cycle}/results", content=report, headers=XML)
    assert_error(v1, 404, "/rest/labs")


def test_test_runners_may_report_and_readers_may_not(team: Team, admin: httpx.Client) -> None:
    project = team.project
    cycle = _cycle_of(admin, project, new_test_case(admin, project, "Guarded"))
    report = _report(_case("Guarded", "<failure/>"))
    for role, client in team.clients.items():
        response = client.post(results_url(client, cycle), content=report, headers=XML)
        if team.expect("TEST_RUNNER")[role]:
            assert response.status_code == 200, (role, response.text)
        else:
            assert_error(response, 401)
    assert _statuses(admin, cycle) == {"Guarded": "FAILED"}


def test_a_cycle_id_beyond_64_bits_is_a_400(admin: httpx.Client) -> None:
    report = _report(_case("Only"))
    for cycle in (2**63, 2**64 + 5, 10**30):
        response = admin.post(results_url(admin, cycle), content=report, headers=XML)
        assert_error(response, 400, "testCycleId", "out of range", str(2**63 - 1))
