"""Filter rules over records, including the algebra of AND and OR."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from plumbline.services.items.filterquery import Context, Record, matches, run


def _records(values: list[int]) -> dict[int, Record]:
    now = datetime.now(UTC)
    return {
        i: Record(
            id=i,
            parent=None if i == 0 else 0,
            system={
                "id": i,
                "project": 1,
                "globalSortOrder": i,
                "createdDate": now - timedelta(days=i),
            },
            fields={"n": value, "name": f"item {value}"},
        )
        for i, value in enumerate(values)
    }


def _eq(value: int) -> dict[str, Any]:
    return {"field": {"name": "n"}, "operator": "EQUALS", "values": [str(value)]}


@given(st.lists(st.integers(0, 5), min_size=1, max_size=20), st.integers(0, 5), st.integers(0, 5))
def test_and_is_intersection_and_or_is_union(values: list[int], a: int, b: int) -> None:
    context = Context(_records(values), user_id=1)
    first = {r.id for r in context.records.values() if matches(_eq(a), r, context)}
    second = {r.id for r in context.records.values() if matches(_eq(b), r, context)}
    both = {"operator": "AND", "values": [], "rules": [_eq(a), _eq(b)]}
    either = {"operator": "GROUP_OR", "values": [], "rules": [_eq(a), _eq(b)]}
    assert {r.id for r in context.records.values() if matches(both, r, context)} == first & second
    assert {r.id for r in context.records.values() if matches(either, r, context)} == first | second


@given(st.lists(st.integers(0, 100), min_size=1, max_size=20))
def test_order_rules_sort_and_comparisons_agree(values: list[int]) -> None:
    context = Context(_records(values), user_id=1)
    ordered = run({"orderRules": [{"direction": "DESC", "field": {"name": "n"}}]}, context)
    assert [r.fields["n"] for r in ordered] == sorted(values, reverse=True)
    greater = {"field": {"name": "n"}, "operator": "GREATER_THAN", "values": ["50"]}
    assert {r.fields["n"] for r in run({"rule": greater}, context)} == {v for v in values if v > 50}


def test_dates_text_and_tree() -> None:
    context = Context(_records([1, 2, 3]), user_id=1)
    recent = {"field": {"name": "createdDate"}, "operator": "IS_WITHIN_LAST", "values": ["2"]}
    assert {r.id for r in run({"rule": recent}, context)} == {0, 1}
    words = {"field": {"name": "name"}, "operator": "CONTAINS_WORD", "values": ["ITEM"]}
    assert len(run({"rule": words}, context)) == 3
    under = {"field": {"name": "x"}, "operator": "IS_DIRECTLY_UNDER", "values": ["0"]}
    assert {r.id for r in run({"rule": under}, context)} == {1, 2}
    empty = {"field": {"name": "missing"}, "operator": "IS_EMPTY", "values": []}
    assert len(run({"rule": empty}, context)) == 3
