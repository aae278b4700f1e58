"""A run's status from its steps, and the generation config."""

from __future__ import annotations

import pytest

from plumbline.common.errors import InvalidArgument
from plumbline.services.testmgmt.generation import Config, derive, parse_config


def _step(status: str = "NOT_RUN", result: str = "") -> dict[str, str]:
    return {"action": "a", "expectedResult": "e", "notes": "", "status": status, "result": result}


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        (["PASSED", "FAILED", "BLOCKED"], "FAILED"),
        (["PASSED", "BLOCKED", "NOT_RUN"], "BLOCKED"),
        (["PASSED", "PASSED"], "PASSED"),
        (["PASSED", "NOT_RUN"], "INPROGRESS"),
        (["INPROGRESS", "NOT_RUN"], "INPROGRESS"),
        (["NOT_RUN", "NOT_RUN"], "NOT_RUN"),
        ([], "NOT_RUN"),
    ],
)
def test_the_status_follows_the_steps(statuses: list[str], expected: str) -> None:
    assert derive([_step(s) for s in statuses]) == expected


def test_the_generation_config() -> None:
    assert parse_config(None) == Config()
    assert parse_config({}) == Config()
    assert parse_config(
        {"testGroupsToInclude": [3, 1, 3], "testRunStatusesToInclude": ["FAILED"]}
    ) == Config((3, 1), ("FAILED",))
    with pytest.raises(InvalidArgument, match="testGroupsToInclude must be a list of ids"):
        parse_config({"testGroupsToInclude": ["a"]})
    with pytest.raises(InvalidArgument, match="'GREEN' is not a test run status"):
        parse_config({"testRunStatusesToInclude": ["GREEN"]})
