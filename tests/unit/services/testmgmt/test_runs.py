"""What a result changes in a test run (``runs.apply_execution``)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from plumbline.common.catalog import Catalog, Field, ItemType
from plumbline.common.errors import InvalidArgument
from plumbline.services.testmgmt.runs import apply_execution

TODAY = "2026-11-24"


def _field(name: str, kind: str, read_only: bool = False) -> Field:
    return Field(1, 9, name, name, kind, read_only, False, False, False, None, "", None)


RUN_TYPE = ItemType(
    9,
    "TSTRN",
    "Test Run",
    "Test Runs",
    "",
    "",
    "TEST_RUN",
    (),
    True,
    (
        _field("name", "STRING"),
        _field("description", "TEXT"),
        _field("testRunStatus", "TEST_RUN_STATUS", read_only=True),
        _field("testRunSteps", "STEPS"),
        _field("actualResults", "TEXT"),
        _field("executionDate", "DATE", read_only=True),
        _field("assignedTo", "USER"),
        _field("browser", "STRING"),
    ),
)
CATALOG = Catalog(item_types={9: RUN_TYPE})


def _step(status: str = "NOT_RUN", result: str = "") -> dict[str, str]:
    return {"action": "a", "expectedResult": "e", "notes": "", "status": status, "result": result}


def _run(steps: int = 2, status: str = "NOT_RUN", **fields: Any) -> SimpleNamespace:
    stored = {"name": "Login", "testRunSteps": [_step() for _ in range(steps)], **fields}
    return SimpleNamespace(fields_json=json.dumps(stored), status=status)


def test_step_statuses_decide_the_run_status_and_date() -> None:
    change = apply_execution(
        CATALOG,
        RUN_TYPE,
        _run(),
        {"testRunSteps": [{"status": "PASSED"}, {"status": "FAILED", "result": "500"}]},
        TODAY,
    )
    assert change.status == "FAILED"
    assert change.fields["testRunSteps"][1] == _step("FAILED", "500")
    assert change.fields["executionDate"] == TODAY
    assert change.result_changed


def test_step_texts_sent_back_are_ignored() -> None:
    sent = [dict(_step("PASSED"), action="changed"), _step("PASSED")]
    change = apply_execution(CATALOG, RUN_TYPE, _run(), {"testRunSteps": sent}, TODAY)
    assert [s["action"] for s in change.fields["testRunSteps"]] == ["a", "a"]
    assert change.status == "PASSED"


def test_a_run_with_steps_ignores_a_status_the_steps_do_not_give() -> None:
    change = apply_execution(CATALOG, RUN_TYPE, _run(), {"testRunStatus": "PASSED"}, TODAY)
    assert change.status == "NOT_RUN"
    assert not change.result_changed


def test_a_run_without_steps_takes_the_status_sent() -> None:
    change = apply_execution(CATALOG, RUN_TYPE, _run(steps=0), {"testRunStatus": "BLOCKED"}, TODAY)
    assert change.status == "BLOCKED"
    assert change.fields["executionDate"] == TODAY


def test_read_only_and_shown_members_are_ignored() -> None:
    values = {
        "name": "renamed",
        "documentKey": "X-1",
        "testCase": 5,
        "executionDate": "2000-01-01",
        "actualResults": "fine",
        "browser": "firefox",
    }
    change = apply_execution(CATALOG, RUN_TYPE, _run(steps=0), values, TODAY)
    assert change.fields["name"] == "Login"
    assert "documentKey" not in change.fields
    assert change.fields["actualResults"] == "fine"
    assert change.fields["browser"] == "firefox"
    # Nothing but the text changed; the run is still not run, so no execution date.
    assert change.status == "NOT_RUN"
    assert "executionDate" not in change.fields


def test_back_to_not_run_clears_the_execution_date() -> None:
    run = _run(steps=0, status="PASSED", executionDate="2026-01-01")
    change = apply_execution(CATALOG, RUN_TYPE, run, {"testRunStatus": "NOT_RUN"}, TODAY)
    assert "executionDate" not in change.fields


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"testRunStatus": "DONE"}, "allowed: NOT_RUN, PASSED, FAILED, BLOCKED, INPROGRESS"),
        ({"testRunSteps": [{"status": "OK"}, {}]}, "testRunSteps[0].status: 'OK'"),
        ({"testRunSteps": [{}]}, "must have the run's 2 step(s); got 1"),
        ({"colour": "red"}, "fields.colour is not a field of item type TSTRN"),
        ({"actualResults": 5}, "fields.actualResults must be a string"),
    ],
)
def test_bad_results_say_what_is_allowed(values: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidArgument) as info:
        apply_execution(CATALOG, RUN_TYPE, _run(), values, TODAY)
    assert message in info.value.message
