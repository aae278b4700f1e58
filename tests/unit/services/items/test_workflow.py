"""Workflow rules for writes, on a small catalog: Draft -> Review -> Done."""

from __future__ import annotations

from typing import Any

import pytest

from plumbline.common.catalog import Catalog, Field, ItemType, Option, Transition
from plumbline.common.errors import InvalidArgument
from plumbline.services.items import workflow

DRAFT, REVIEW, DONE = 1, 2, 3


def _field(name: str, field_type: str, pick_list: int | None = None) -> Field:
    return Field(1, 10, name, name, field_type, False, False, False, False, pick_list, "", None)


def _catalog(with_workflow: bool = True) -> tuple[Catalog, ItemType]:
    item_type = ItemType(
        10,
        "REQ",
        "Requirement",
        "Requirements",
        "",
        "",
        "CORE",
        (),
        False,
        (_field("name", "STRING"), _field("status", "LOOKUP", pick_list=5)),
    )
    options = {
        o.id: o
        for o in (
            Option(DRAFT, 5, "Draft", "", "", "", True, True, 0),
            Option(REVIEW, 5, "Review", "", "", "", False, True, 1),
            Option(DONE, 5, "Done", "", "", "", False, True, 2),
        )
    }
    steps = (
        Transition(1, 10, "status", DRAFT, REVIEW, "Submit"),
        Transition(2, 10, "status", REVIEW, DONE, "Approve"),
    )
    catalog = Catalog({10: item_type}, {}, options, {}, steps if with_workflow else ())
    return catalog, item_type


def _change(stored: dict[str, Any], requested: dict[str, Any]) -> dict[str, Any]:
    catalog, item_type = _catalog()
    return workflow.check_change(catalog, item_type, stored, requested, dict(requested))


def test_an_allowed_step_and_an_unchanged_status_pass() -> None:
    assert _change({"status": DRAFT}, {"name": "x", "status": REVIEW})["status"] == REVIEW
    assert _change({"status": REVIEW}, {"name": "x", "status": REVIEW})["status"] == REVIEW


def test_a_status_left_out_is_kept() -> None:
    assert _change({"status": REVIEW}, {"name": "x"}) == {"name": "x", "status": REVIEW}


@pytest.mark.parametrize(
    ("stored", "wanted", "expected"),
    [
        (
            DRAFT,
            DONE,
            "from Draft (1) to Done (3): the workflow of Requirement allows from "
            "Draft (1): 'Submit' to Review (2).",
        ),
        (REVIEW, DRAFT, "allows from Review (2): 'Approve' to Done (3)."),
        (DONE, REVIEW, "allows from Done (3): none."),
        (REVIEW, None, "from Review (2) to no status"),
    ],
)
def test_other_changes_name_both_statuses_and_the_allowed_steps(
    stored: int, wanted: int | None, expected: str
) -> None:
    with pytest.raises(InvalidArgument) as info:
        _change({"status": stored}, {"name": "x", "status": wanted})
    assert expected in info.value.message
    assert info.value.message.startswith("fields.status cannot change")


def test_a_new_item_starts_at_the_default_status() -> None:
    catalog, item_type = _catalog()
    workflow.check_new(catalog, item_type, {"name": "x", "status": DRAFT})
    with pytest.raises(InvalidArgument, match=r"starts its workflow in Draft \(1\), not Done"):
        workflow.check_new(catalog, item_type, {"name": "x", "status": DONE})
    with pytest.raises(InvalidArgument, match="an item without a status starts"):
        _change({}, {"name": "x", "status": DONE})
    assert _change({}, {"name": "x", "status": DRAFT})["status"] == DRAFT


def test_without_a_workflow_anything_goes() -> None:
    catalog, item_type = _catalog(with_workflow=False)
    workflow.check_new(catalog, item_type, {"status": DONE})
    assert workflow.check_change(catalog, item_type, {"status": DRAFT}, {}, {}) == {}
