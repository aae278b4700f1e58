"""Evaluating a stored FilterQuery against items.

A query is a tree: ``AND``/``OR`` (and their ``GROUP_`` forms) combine ``rules``; a leaf
compares one field of the item with ``values`` (strings, converted to the field's type).
A rule with a ``subQuery`` matches items related (either direction) to an item that
matches the sub-query. ``orderRules`` sort the result.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from plumbline.common.dates import parse_datetime
from plumbline.common.errors import InvalidArgument

COMBINE = {"AND", "OR", "GROUP_AND", "GROUP_OR"}
SUPPORTED = COMBINE | {
    "EQUALS",
    "NOT_EQUALS",
    "EQUALS_MULTI",
    "NOT_EQUALS_MULTI",
    "EQUALS_DATE",
    "NOT_EQUALS_DATE",
    "GREATER_THAN",
    "LESS_THAN",
    "GREATER_THAN_DATE",
    "LESS_THAN_DATE",
    "IS_BETWEEN",
    "IN",
    "IS_TRUE",
    "IS_FALSE",
    "CONTAINS",
    "NOT_CONTAINS",
    "CONTAINS_WORD",
    "NOT_CONTAINS_WORD",
    "IS_EMPTY",
    "IS_NOT_EMPTY",
    "HAS_ALL",
    "HAS_NONE",
    "IS_CURRENT_USER",
    "IS_DIRECTLY_UNDER",
    "IS_NOT_DIRECTLY_UNDER",
    "IS_UNDER",
    "IS_UNDER_OR_EQUAL",
    "IS_NOT_UNDER",
    "IS_WITHIN_LAST",
}


@dataclass
class Record:
    """What a rule can look at: an item's system members, fields, tags and relations."""

    id: int
    parent: int | None
    system: dict[str, Any]
    fields: dict[str, Any]
    tags: set[int] = field(default_factory=set)
    related: set[int] = field(default_factory=set)

    def value(self, name: str) -> Any:
        """A system member, ``tags``, or a field."""
        if name in self.system:
            return self.system[name]
        if name == "tags":
            return sorted(self.tags)
        return self.fields.get(name)


@dataclass
class Context:
    """Everything a query sees: the candidate records and who is asking."""

    records: dict[int, Record]
    user_id: int
    now: datetime = field(default_factory=lambda: datetime.now(UTC))

    def ancestors(self, record: Record) -> Iterable[int]:
        """Ids of the record's ancestors, nearest first."""
        seen = set()
        parent = record.parent
        while parent is not None and parent not in seen:
            seen.add(parent)
            yield parent
            above = self.records.get(parent)
            parent = above.parent if above else None


def validate(query: Any, path: str = "filterQuery") -> None:
    """Refuses queries that cannot be evaluated, naming the place."""
    if not isinstance(query, dict):
        raise InvalidArgument(f"{path} must be an object with a rule.")
    rule = query.get("rule")
    if rule is not None:
        _validate_rule(rule, f"{path}.rule")
    for number, order in enumerate(query.get("orderRules") or []):
        if not isinstance(order, dict) or not isinstance(
            (order.get("field") or {}).get("name"), str
        ):
            raise InvalidArgument(f"{path}.orderRules[{number}] needs a field with a name.")
        if order.get("direction", "ASC") not in ("ASC", "DESC"):
            raise InvalidArgument(f"{path}.orderRules[{number}].direction must be ASC or DESC.")


def _validate_rule(rule: Any, path: str) -> None:
    if not isinstance(rule, dict):
        raise InvalidArgument(f"{path} must be an object.")
    operator = rule.get("operator")
    if operator not in SUPPORTED:
        raise InvalidArgument(
            f"{path}.operator {operator!r} is not supported; "
            f"supported: {', '.join(sorted(SUPPORTED))}."
        )
    values = rule.get("values") or []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise InvalidArgument(f"{path}.values must be a list of strings.")
    if operator in COMBINE:
        for number, child in enumerate(rule.get("rules") or []):
            _validate_rule(child, f"{path}.rules[{number}]")
        return
    if rule.get("subQuery") is not None:
        validate(rule["subQuery"], f"{path}.subQuery")
        return
    if not isinstance((rule.get("field") or {}).get("name"), str):
        raise InvalidArgument(f"{path}.field.name is required for operator {operator}.")


def _as(value: Any, text: str) -> Any:
    """``text`` converted to the type of ``value`` (the item's side decides)."""
    if isinstance(value, bool):
        return text.strip().lower() == "true"
    if isinstance(value, int):
        try:
            return int(text)
        except ValueError:
            return None
    if isinstance(value, datetime):
        return _when(text)
    if isinstance(value, date):
        when = _when(text)
        return when.date() if when else None
    return text


def _when(text: str) -> datetime | None:
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text.strip()):
            return parse_datetime(text.strip() + "T00:00:00Z")
        return parse_datetime(text)
    except InvalidArgument:
        return None


def _day(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        return date.fromisoformat(value)
    return value


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == []


_STATES = ("IS_EMPTY", "IS_NOT_EMPTY", "IS_TRUE", "IS_FALSE", "IS_CURRENT_USER", "IS_WITHIN_LAST")
_TREE = (
    "IS_DIRECTLY_UNDER",
    "IS_NOT_DIRECTLY_UNDER",
    "IS_UNDER",
    "IS_UNDER_OR_EQUAL",
    "IS_NOT_UNDER",
)
_TEXT = ("CONTAINS", "NOT_CONTAINS", "CONTAINS_WORD", "NOT_CONTAINS_WORD")


def _leaf(rule: dict[str, Any], record: Record, context: Context) -> bool:
    operator = rule["operator"]
    values: list[str] = rule.get("values") or []
    raw = record.value(rule["field"]["name"])
    many = raw if isinstance(raw, list) else ([] if raw is None else [raw])
    if operator in _STATES:
        return _state(operator, values, raw, many, context)
    if operator in _TREE:
        return _in_tree(operator, values, record, context)
    if operator in _TEXT:
        return _contains(operator, values, many)
    return _compare(operator, values, raw, many)


def _state(operator: str, values: list[str], raw: Any, many: list[Any], context: Context) -> bool:
    """Operators on the value itself: empty, true or false, the caller, recent."""
    if operator == "IS_EMPTY":
        return _empty(raw)
    if operator == "IS_NOT_EMPTY":
        return not _empty(raw)
    if operator == "IS_TRUE":
        return raw is True
    if operator == "IS_FALSE":
        return raw is False or raw is None
    if operator == "IS_CURRENT_USER":
        return context.user_id in many
    # IS_WITHIN_LAST
    when = raw if isinstance(raw, datetime) else _when(str(raw)) if raw else None
    days = int(values[0]) if values and values[0].strip().isdigit() else 0
    return when is not None and when >= context.now - timedelta(days=days)


def _in_tree(operator: str, values: list[str], record: Record, context: Context) -> bool:
    """Operators on the record's place: directly under, or anywhere under, given items."""
    wanted = {int(v) for v in values if v.strip().isdigit()}
    if operator in ("IS_DIRECTLY_UNDER", "IS_NOT_DIRECTLY_UNDER"):
        hit = record.parent in wanted
        return hit if operator == "IS_DIRECTLY_UNDER" else not hit
    hit = bool(wanted & set(context.ancestors(record)))
    if operator == "IS_UNDER_OR_EQUAL":
        hit = hit or record.id in wanted
    return hit if operator != "IS_NOT_UNDER" else not hit


def _contains(operator: str, values: list[str], many: list[Any]) -> bool:
    """Operators on the text: a part of it, or a whole word."""
    text = " ".join(str(v) for v in many).lower()
    if "WORD" in operator:
        words = set(re.findall(r"\w+", text))
        hit = any(v.lower() in words for v in values)
    else:
        hit = any(v.lower() in text for v in values)
    return hit if not operator.startswith("NOT_") else not hit


def _compare(operator: str, values: list[str], raw: Any, many: list[Any]) -> bool:
    """Operators that compare with the values given: equal, among, on a day, ordered."""
    converted = [_as(many[0] if many else "", v) for v in values]
    if operator in ("EQUALS", "EQUALS_MULTI", "IN", "NOT_EQUALS", "NOT_EQUALS_MULTI"):
        hit = any(item in converted for item in many)
        return hit if not operator.startswith("NOT_") else not hit
    if operator in ("HAS_ALL", "HAS_NONE"):
        present = set(many)
        return (
            all(c in present for c in converted)
            if operator == "HAS_ALL"
            else not (present & set(converted))
        )
    if operator in ("EQUALS_DATE", "NOT_EQUALS_DATE"):
        on_days = {_day(_when(v)) for v in values}
        hit = _day(raw) in on_days
        return hit if operator == "EQUALS_DATE" else not hit
    if raw is None or not converted or converted[0] is None:
        return False
    if operator in ("GREATER_THAN", "GREATER_THAN_DATE"):
        return bool(raw > converted[0])
    if operator in ("LESS_THAN", "LESS_THAN_DATE"):
        return bool(raw < converted[0])
    if operator == "IS_BETWEEN":
        return len(converted) == 2 and None not in converted and converted[0] <= raw <= converted[1]
    return False


def matches(rule: dict[str, Any] | None, record: Record, context: Context) -> bool:
    """Whether ``record`` satisfies ``rule`` (no rule: everything matches)."""
    if rule is None:
        return True
    operator = rule["operator"]
    if operator in COMBINE:
        children = rule.get("rules") or []
        results = (matches(child, record, context) for child in children)
        return all(results) if operator in ("AND", "GROUP_AND") else any(results)
    sub = rule.get("subQuery")
    if sub is not None:
        matching = {r.id for r in context.records.values() if matches(sub.get("rule"), r, context)}
        return bool(record.related & matching)
    return _leaf(rule, record, context)


def run(query: dict[str, Any], context: Context) -> list[Record]:
    """The matching records, ordered by ``orderRules`` then tree order."""
    found = [r for r in context.records.values() if matches(query.get("rule"), r, context)]
    found.sort(key=lambda r: (r.system.get("project", 0), r.system.get("globalSortOrder", 0)))
    for order in reversed(query.get("orderRules") or []):
        name = order["field"]["name"]
        found.sort(key=_sort_key(name), reverse=order.get("direction", "ASC") == "DESC")
    return found


def _sort_key(name: str) -> Callable[[Record], tuple[bool, str, Any]]:
    def key(record: Record) -> tuple[bool, str, Any]:
        value = record.value(name)
        if isinstance(value, list):
            value = value[0] if value else None
        # The type name keeps values of different types from being compared.
        return (value is None, type(value).__name__, value if value is not None else 0)

    return key
