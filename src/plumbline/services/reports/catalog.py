"""The reports a project offers, their parameters, and the check of what a caller sends
(before anything is queued: a bad parameter is a 400 at once, not a failed work later)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from plumbline.common import int64
from plumbline.common.dates import format_datetime, parse_datetime
from plumbline.common.errors import InvalidArgument, NotFound

ParamType = Literal["integer", "integers", "choice", "moment"]
FORMATS = ("XLSX", "CSV", "HTML")


@dataclass(frozen=True)
class Param:
    """A report parameter."""

    name: str
    type: ParamType
    description: str
    required: bool = False
    choices: tuple[str, ...] = ()
    default_value: str | None = None


@dataclass(frozen=True)
class ReportSpec:
    """A report: what it shows and what it takes."""

    id: str
    name: str
    description: str
    parameters: tuple[Param, ...]
    formats: tuple[str, ...] = FORMATS


_SCOPE = (
    Param("testCycle", "integer", "Latest results of this test cycle's runs."),
    Param("testPlan", "integer", "Latest results of this test plan's runs."),
    Param("release", "integer", "Latest results of the runs of test plans of this release."),
)
#: A trace or coverage report read at one moment, from the history: consistent whatever
#: changes while it is made (without them, read as the data is, page by page).
_AT = (
    Param(
        "asOf",
        "moment",
        "Read everything as it was at this moment (e.g. 2024-01-31T13:45:00.000+0000).",
    ),
    Param("baseline", "integer", "Read everything as it was when this baseline was taken."),
)
_TYPES = Param("relationshipType", "integers", "Follow only relationships of these types (ids).")

REPORTS: dict[str, ReportSpec] = {
    spec.id: spec
    for spec in (
        ReportSpec(
            "trace-matrix",
            "Trace matrix",
            "Every item of a type and what it reaches level by level, with relationship "
            "types, suspect flags and test cases' latest results: a sheet per level, and "
            "the first level as a matrix.",
            (
                Param("itemType", "integer", "The item type to start from.", required=True),
                Param(
                    "direction",
                    "choice",
                    "Which way relationships are followed.",
                    choices=("downstream", "upstream"),
                    default_value="downstream",
                ),
                Param("depth", "integer", "Levels to follow (1 to 5).", default_value="2"),
                _TYPES,
                *_SCOPE,
                *_AT,
            ),
        ),
        ReportSpec(
            "coverage-summary",
            "Coverage summary",
            "Every item of a type with its verifying test cases, their latest results and "
            "a verdict; the totals as a bar by verdict.",
            (
                Param("itemType", "integer", "The items to judge.", required=True),
                _TYPES,
                *_SCOPE,
                Param("filter", "integer", "Only the items this filter finds."),
                *_AT,
            ),
        ),
        ReportSpec(
            "test-cycle-summary",
            "Test cycle summary",
            "A test cycle's runs, their results by status, and its execution progress "
            "over time (runs with a result, day by day).",
            (Param("testCycle", "integer", "The test cycle.", required=True),),
        ),
        ReportSpec(
            "reqif-export",
            "ReqIF export",
            "The project's items (or an item and what is under it, a filter's items, or a "
            "baseline) with their relationships and tree as a ReqIF 1.2 document: REQIF "
            "(XML) or REQIFZ (zipped).",
            (
                Param("item", "integer", "Only this item and what is under it."),
                Param("filter", "integer", "Only the items this filter finds."),
                Param("baseline", "integer", "The items as this baseline holds them."),
            ),
            formats=("REQIF", "REQIFZ"),
        ),
        ReportSpec(
            "baseline-comparison",
            "Baseline comparison",
            "What changed between a baseline and another (or its origin now): items "
            "added, removed and changed, relationships added and removed.",
            (
                Param("baseline", "integer", "The baseline.", required=True),
                Param("to", "integer", "The baseline to compare with (default: now)."),
            ),
        ),
    )
}


def spec_of(report: str) -> ReportSpec:
    """The report called ``report``; NotFound naming those there are."""
    found = REPORTS.get(report)
    if found is None:
        raise NotFound(f"No report {report!r}; reports: {', '.join(REPORTS)}.")
    return found


def _integer(param: Param, value: Any) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not int64.fits(value):
        raise InvalidArgument(f"parameters.{param.name} must be an integer id, got {value!r}")
    return value


def checked(spec: ReportSpec, fmt: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters of a work of ``spec``: those given, checked, with defaults."""
    if fmt not in spec.formats:
        raise InvalidArgument(f"format must be one of {', '.join(spec.formats)}, got {fmt!r}")
    known = {p.name: p for p in spec.parameters}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise InvalidArgument(
            f"parameters.{unknown[0]} is not a parameter of {spec.id}; its parameters: "
            f"{', '.join(known)}."
        )
    values: dict[str, Any] = {}
    for param in spec.parameters:
        value = given.get(param.name)
        if value is None:
            if param.required:
                raise InvalidArgument(f"parameters.{param.name} is required for {spec.id}")
            if param.default_value is not None:
                value = param.default_value
            else:
                continue
        values[param.name] = _value(param, value)
    _together(spec, values)
    return values


def _value(param: Param, value: Any) -> Any:
    """A parameter's value, checked against its type."""
    if param.type == "moment":
        if not isinstance(value, str):
            raise InvalidArgument(f"parameters.{param.name} must be a date-time string")
        return format_datetime(parse_datetime(value, f"parameters.{param.name}"))
    if param.type == "integer":
        return _integer(param, value)
    if param.type == "integers":
        listed = value if isinstance(value, list) else [value]
        return [_integer(param, v) for v in listed]
    if not isinstance(value, str) or value not in param.choices:
        raise InvalidArgument(
            f"parameters.{param.name} must be one of {', '.join(param.choices)}, got {value!r}"
        )
    return value


def _together(spec: ReportSpec, values: dict[str, Any]) -> None:
    """Checks what the parameters mean together."""
    if sum(name in values for name in ("testCycle", "testPlan", "release")) > 1 and (
        spec.id != "test-cycle-summary"
    ):
        raise InvalidArgument("give at most one of testCycle, testPlan and release")
    if spec.id == "reqif-export" and sum(n in values for n in ("item", "filter", "baseline")) > 1:
        raise InvalidArgument("give at most one of item, filter and baseline")
    if "asOf" in values and "baseline" in values:
        raise InvalidArgument("give at most one of asOf and baseline")
    if "filter" in values and ("asOf" in values or "baseline" in values):
        raise InvalidArgument(
            "parameters.filter cannot be given with asOf or baseline: a filter finds items "
            "as they are now"
        )
    depth = values.get("depth")
    if depth is not None and not 1 <= depth <= 5:
        raise InvalidArgument(f"parameters.depth must be between 1 and 5, got {depth}")
