"""(labs) ``/trace``, ``/coverage`` and ``/items/{id}/impact``: what a requirements tool
exists to answer, in one call each. The items service follows the relationships
(``Traceability``), testmgmt names each test case's latest run in the asked scope
(``TestRuns.LatestResults``); this module puts the two together
(``docs/contexts/items.md#traceability``)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Annotated, Any, Literal, TypeVar

import orjson
from fastapi import APIRouter, Depends
from starlette.responses import Response

from plumbline.api.baselines.v1 import baselines_pb2
from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2
from plumbline.common.errors import InvalidArgument
from plumbline.gateway import params, query, records, representations, schemas
from plumbline.gateway.deps import Gateway, Gw, Paging, StartAt
from plumbline.gateway.envelope import as_of_page, with_totals
from plumbline.gateway.paging import Page
from plumbline.gateway.query import RequiredProject

router = APIRouter(prefix="/rest/{version}", tags=["traceability"])

#: Record families of other services' records, by kind.
_FAMILIES = {
    testmgmt_pb2.PLAN: "testplans",
    testmgmt_pb2.CYCLE: "testcycles",
    testmgmt_pb2.RUN: "testruns",
}
#: The most items a trace or coverage page holds: more than a list's 50, so that a report
#: (or a client) reads a large project in few requests.
MAX_TRACE_PAGE = 1_000
Verdict = Literal["PASSING", "FAILING", "BLOCKED", "NOT_RUN", "NOT_COVERED"]
VERDICTS: tuple[Verdict, ...] = ("PASSING", "FAILING", "BLOCKED", "NOT_RUN", "NOT_COVERED")

TraceMaxResults = Annotated[
    int,
    Depends(
        query.paging(
            "maxResults",
            description=f"Items per page (at most {MAX_TRACE_PAGE}).",
            minimum=1,
            maximum=MAX_TRACE_PAGE,
            default=20,
        )
    ),
]


async def _trace_page(start_at: StartAt, max_results: TraceMaxResults) -> Page:
    return Page(start_at, max_results)


TracePaging = Annotated[Page, Depends(_trace_page)]
ItemType = Annotated[
    int,
    Depends(query.integer("itemType", required=True, description="The item type to start from.")),
]


def _depth(default: int) -> Any:
    return Depends(
        query.paging(
            "depth",
            description="How many relationships to follow from each item.",
            minimum=1,
            maximum=5,
            default=default,
        )
    )


Depth = Annotated[int, _depth(1)]
ImpactDepth = Annotated[int, _depth(5)]
RelationshipTypes = Annotated[
    list[int],
    Depends(
        query.integers("relationshipType", description="Follow only relationships of these types.")
    ),
]
TestCycle = Annotated[
    int | None,
    Depends(query.integer("testCycle", description="Latest results of this test cycle's runs.")),
]
TestPlan = Annotated[
    int | None,
    Depends(query.integer("testPlan", description="Latest results of this test plan's runs.")),
]
Release = Annotated[
    int | None,
    Depends(
        query.integer(
            "release",
            description="Latest results of the runs of test plans whose release is this one.",
        )
    ),
]


def _direction(values: Sequence[str]) -> bool:
    value = params.single(values, "direction")
    if value is None:
        return False
    if value.lower() not in ("downstream", "upstream"):
        raise InvalidArgument(f"direction must be downstream or upstream, got {value!r}")
    return bool(value.lower() == "upstream")


Upstream = Annotated[
    bool,
    Depends(
        query.parameter(
            "direction",
            {"type": "string", "enum": ["downstream", "upstream"], "default": "downstream"},
            _direction,
            description="downstream: from each item to what it relates to; upstream: to "
            "what relates to it.",
        )
    ),
]


Verdicts = Annotated[
    list[str],
    query.choices(
        "verdict", VERDICTS, "Only items with these verdicts (the totals count every item)."
    ),
]
AsOf = Annotated[
    str | None,
    Depends(
        query.moment(
            "asOf",
            description="The trace as it was at this moment, e.g. 2024-01-31T13:45:00.000+0000 "
            "(from the history: items at their versions then, in id order; relationships "
            "and runs as they were); the answer's meta.asOf names it.",
        )
    ),
]
Baseline = Annotated[
    int | None,
    Depends(
        query.integer(
            "baseline",
            description="The trace as it was when this baseline (of the project) was "
            "taken: its items of itemType in its order, at the versions it holds.",
        )
    ),
]
ImpactAsOf = Annotated[
    str | None,
    Depends(query.moment("asOf", description="The impact as it was at this moment.")),
]
ImpactVersion = Annotated[
    int | None,
    Depends(
        query.integer(
            "version",
            description="The impact as it was when this version of the item was made.",
        )
    ),
]
Filter = Annotated[
    int | None,
    Depends(query.integer("filter", description="Only the items this filter finds.")),
]


Scoped = TypeVar("Scoped", testmgmt_pb2.LatestResultsRequest, baselines_pb2.LatestResultsAtRequest)


def _scoped(request: Scoped, cycle: int | None, plan: int | None, release: int | None) -> Scoped:
    """``request`` with the scope set (the owner refuses more than one)."""
    for name, value in (("test_cycle", cycle), ("test_plan", plan), ("release", release)):
        if value is not None:
            setattr(request, name, value)
    return request


async def _latest(
    gw: Gateway,
    test_cases: Iterable[int],
    cycle: int | None,
    plan: int | None,
    release: int | None,
) -> dict[int, records.LatestRun]:
    """The latest run of each test case in the scope, by test case."""
    wanted = sorted(set(test_cases))
    # testmgmt refuses more than one scope, and a cycle or plan it cannot find.
    request = _scoped(testmgmt_pb2.LatestResultsRequest(test_cases=wanted), cycle, plan, release)
    if not wanted and cycle is None and plan is None and release is None:
        return {}
    reply = await gw.upstreams.testmgmt.runs.LatestResults(request)
    return {r.test_case: representations.latest_run(r) for r in reply.results}


async def _latest_at(
    gw: Gateway,
    moment: str,
    test_cases: Iterable[int],
    cycle: int | None,
    plan: int | None,
    release: int | None,
) -> dict[int, records.LatestRun]:
    """The latest run of each test case in the scope, as the runs were at ``moment``."""
    request = _scoped(
        baselines_pb2.LatestResultsAtRequest(as_of=moment, test_cases=sorted(set(test_cases))),
        cycle,
        plan,
        release,
    )
    reply = await gw.upstreams.baselines.traces.LatestResultsAt(request)
    return {r.test_case: representations.latest_run(r) for r in reply.results}


async def _test_case_types(gw: Gateway) -> list[int]:
    """The item types of the TEST_CASE category (a historic trace marks their items)."""
    types = await gw.catalog.item_types()
    return sorted(int(k) for k, t in types.items() if t.get("category") == "TEST_CASE")


async def _history_positions(gw: Gateway) -> list[core_pb2.Watermark]:
    """Where items and testmgmt are now: a historic trace waits (bounded) until the
    history has their changes up to here (read-your-writes)."""
    return list(
        await asyncio.gather(
            gw.upstreams.items.watermarks.GetWatermark(core_pb2.Watermark(source="items")),
            gw.upstreams.testmgmt.watermarks.GetWatermark(core_pb2.Watermark(source="testmgmt")),
        )
    )


def _one_moment(as_of: str | None, baseline: int | None) -> baselines_pb2.Moment | None:
    if as_of is not None and baseline is not None:
        raise InvalidArgument("give asOf or baseline, not both")
    if as_of is not None:
        return baselines_pb2.Moment(as_of=as_of)
    if baseline is not None:
        return baselines_pb2.Moment(baseline=baseline)
    return None


async def _nodes(
    gw: Gateway, reply: items_pb2.TraceReply, latest: dict[int, records.LatestRun]
) -> dict[int, records.TraceNode]:
    """What the answer shows of each node: items as the items service described them,
    test records read from testmgmt (their names), test cases with their latest run."""
    nodes: dict[int, records.TraceNode] = {}
    foreign: list[int] = []
    for n in reply.nodes:
        if n.foreign and not n.family:
            nodes[n.id] = {"id": n.id, "type": "abstractitems", "project": n.project}
            foreign.append(n.id)
            continue
        node: records.TraceNode = {
            "id": n.id,
            "type": n.family or "items",
            "project": n.project,
            "itemType": n.item_type,
            "documentKey": n.document_key,
            "name": n.name,
        }
        if n.version:
            node["version"] = n.version
        if n.id in latest:
            node["latestRun"] = latest[n.id]
        nodes[n.id] = node
    if foreign:
        found = await gw.upstreams.testmgmt.records.GetRecords(
            testmgmt_pb2.GetRecordsRequest(ids=foreign, skip_missing=True)
        )
        for r in found.records:
            nodes[r.id] |= {
                "type": _FAMILIES.get(r.kind, "abstractitems"),
                "itemType": r.item_type,
                "documentKey": r.document_key,
                "name": str(orjson.loads(r.fields_json or b"{}").get("name", "")),
            }
    return nodes


def _test_cases(reply: items_pb2.TraceReply) -> list[int]:
    return [n.id for n in reply.nodes if n.test_case]


@router.get(
    "/trace",
    summary="Trace a project's items of a type (labs)",
    description="A page of the project's items of itemType in tree order, each with the "
    "items and test records it reaches level by level (depth 1 to 5) by relationships "
    "(of relationshipType, when given) followed downstream (from-item to to-item) or "
    "upstream, each relationship with its type and suspect flag, and each test case with "
    "its latest run in testCycle, testPlan or release (at most one; none: any run). An "
    "item is shown once per trace, at its nearest level; relationships to what the "
    "caller may not read are left out.",
    responses={**schemas.page(records.Trace), **schemas.errors(400, 401, 404)},
)
async def trace(
    gw: Gw,
    page: TracePaging,
    project: RequiredProject,
    item_type: ItemType,
    upstream: Upstream,
    depth: Depth,
    types: RelationshipTypes,
    cycle: TestCycle,
    plan: TestPlan,
    release: Release,
    as_of: AsOf,
    baseline: Baseline,
) -> Response:
    moment = _one_moment(as_of, baseline)
    answered: str | None = None
    if moment is None:
        reply = await gw.upstreams.items.traceability.Trace(
            items_pb2.TraceRequest(
                project=project,
                item_type=item_type,
                upstream=upstream,
                depth=depth,
                relationship_types=types,
                page=page.message(),
            )
        )
        latest = await _latest(gw, _test_cases(reply), cycle, plan, release)
    else:
        historic = await gw.upstreams.baselines.traces.TraceAt(
            baselines_pb2.TraceAtRequest(
                at=moment,
                project=project,
                item_type=item_type,
                upstream=upstream,
                depth=depth,
                relationship_types=types,
                page=page.message(),
                test_case_types=await _test_case_types(gw),
                wait_for=await _history_positions(gw),
            )
        )
        reply, answered = historic.trace, historic.moment
        latest = await _latest_at(gw, answered, _test_cases(reply), cycle, plan, release)
    nodes = await _nodes(gw, reply, latest)
    traces: dict[int, records.Trace] = {
        root: {"item": nodes[root], "levels": []} for root in reply.roots if root in nodes
    }
    for step in reply.steps:
        levels = traces[step.root]["levels"]
        while len(levels) < step.level:
            levels.append([])
        levels[step.level - 1].append(
            {
                "item": nodes[step.item],
                "fromItem": step.parent,
                "relationship": step.relationship,
                "relationshipType": step.relationship_type,
                "suspect": step.suspect,
            }
        )
    info = reply.page_info
    page_of = (info.start_index, info.result_count, info.total_results)
    return as_of_page(list(traces.values()), page_of, answered)


def verdict(runs: Sequence[records.LatestRun | None]) -> Verdict:
    """An item's verdict from its test cases' latest runs (None: no run in the scope)."""
    if not runs:
        return "NOT_COVERED"
    statuses = {r["testRunStatus"] if r is not None else "NOT_RUN" for r in runs}
    if "FAILED" in statuses:
        return "FAILING"
    if "BLOCKED" in statuses:
        return "BLOCKED"
    if statuses == {"PASSED"}:
        return "PASSING"
    return "NOT_RUN"


@router.get(
    "/coverage",
    summary="Which items are verified by tests, and how those tests fare (labs)",
    description="Every item of itemType in the project (those filter finds, when given), "
    "in tree order, with the test cases it relates to downstream by verification "
    "relationships (relationshipType, else the types named Verified by, Verifies, Tested "
    "by or Validated by), their latest runs in testCycle, testPlan or release (at most "
    "one; none: any run), and a verdict: NOT_COVERED without test cases, else FAILING if "
    "one failed, else BLOCKED if one is blocked, else PASSING if all passed, else NOT_RUN. "
    "meta.totals counts every item by verdict (and all of them as ALL) before verdict "
    "and paging narrow the answer. With asOf or baseline, the coverage as it was then "
    "(meta.asOf names the moment; filter cannot be given).",
    responses={
        **schemas.page_with_totals(records.CoverageEntry, "A page of items and the totals."),
        **schemas.errors(400, 401, 404),
    },
)
async def coverage(
    gw: Gw,
    page: TracePaging,
    project: RequiredProject,
    item_type: ItemType,
    types: RelationshipTypes,
    cycle: TestCycle,
    plan: TestPlan,
    release: Release,
    verdicts: Verdicts,
    filter_id: Filter,
    as_of: AsOf,
    baseline: Baseline,
) -> Response:
    moment = _one_moment(as_of, baseline)
    answered: str | None = None
    if moment is None:
        request = items_pb2.CoverageRequest(
            project=project, item_type=item_type, relationship_types=types
        )
        if filter_id is not None:
            request.filter = filter_id
        reply = await gw.upstreams.items.traceability.Coverage(request)
    else:
        if filter_id is not None:
            raise InvalidArgument(
                "filter cannot be given with asOf or baseline: a filter finds items as they are now"
            )
        kept = await gw.upstreams.items.traceability.VerificationTypes(core_pb2.IdList(ids=types))
        case_types = await _test_case_types(gw)
        historic = await gw.upstreams.baselines.traces.CoverageAt(
            baselines_pb2.CoverageAtRequest(
                at=moment,
                project=project,
                item_type=item_type,
                relationship_types=kept.ids,
                test_case_types=case_types,
                wait_for=await _history_positions(gw),
            )
        )
        reply, answered = historic.coverage, historic.moment
    cases = (c for entry in reply.items for c in entry.test_cases)
    if answered is None:
        latest = await _latest(gw, cases, cycle, plan, release)
    else:
        latest = await _latest_at(gw, answered, cases, cycle, plan, release)
    judged = [(entry, verdict([latest.get(c) for c in entry.test_cases])) for entry in reply.items]
    totals = Counter(v for _, v in judged)
    counted = {v: totals.get(v, 0) for v in VERDICTS} | {"ALL": len(judged)}
    if verdicts:
        judged = [(e, v) for e, v in judged if v in verdicts]
    shown = judged[page.start_at : page.start_at + page.max_results]
    ids = [i for entry, _ in shown for i in (entry.item, *entry.test_cases)]
    if moment is None:
        described = await gw.upstreams.items.traceability.DescribeNodes(core_pb2.IdList(ids=ids))
    else:
        described = (
            await gw.upstreams.baselines.traces.DescribeAt(
                baselines_pb2.DescribeAtRequest(at=moment, ids=ids, test_case_types=case_types)
            )
        ).trace
    nodes = await _nodes(gw, described, latest)
    data: list[records.CoverageEntry] = [
        {
            "item": nodes[entry.item],
            "verdict": v,
            "testCases": [nodes[c] for c in entry.test_cases if c in nodes],
        }
        for entry, v in shown
        if entry.item in nodes
    ]
    return with_totals(data, (page.start_at, len(data), len(judged)), counted, answered)


@router.get(
    "/items/{id}/impact",
    summary="What a change of an item affects (labs)",
    description="Every item and test record downstream of the item, transitively to "
    "depth (1 to 5), each once at its nearest depth with the path to it (ids from this "
    "item), the relationship that reaches it and whether that one, or any on the path, "
    "is already suspect; test cases with their latest run (any). Relationships to what "
    "the caller may not read are left out, and not followed. With asOf or version, the "
    "impact as it was then.",
    responses={
        **schemas.page_as_of(records.Impact, "A page of what depends on the item."),
        **schemas.errors(400, 401, 404),
    },
)
async def impact(
    id: int,
    gw: Gw,
    page: Paging,
    depth: ImpactDepth,
    types: RelationshipTypes,
    as_of: ImpactAsOf,
    version: ImpactVersion,
) -> Response:
    answered: str | None = None
    if as_of is None and version is None:
        reply = await gw.upstreams.items.traceability.Impact(
            items_pb2.ImpactRequest(item=id, depth=depth, relationship_types=types)
        )
    else:
        if as_of is not None and version is not None:
            raise InvalidArgument("give asOf or version, not both")
        request = baselines_pb2.ImpactAtRequest(
            item=id,
            depth=depth,
            relationship_types=types,
            test_case_types=await _test_case_types(gw),
            wait_for=await _history_positions(gw),
        )
        if as_of is not None:
            request.as_of = as_of
        else:
            request.version = version or 0
        historic = await gw.upstreams.baselines.traces.ImpactAt(request)
        reply, answered = historic.trace, historic.moment
    steps = list(reply.steps)
    shown = steps[page.start_at : page.start_at + page.max_results]
    # Only the page's nodes are shown: their test cases' runs and records are read.
    on_page = {s.item for s in shown}
    page_nodes = items_pb2.TraceReply(nodes=[n for n in reply.nodes if n.id in on_page])
    if answered is None:
        latest = await _latest(gw, _test_cases(page_nodes), None, None, None)
    else:
        latest = await _latest_at(gw, answered, _test_cases(page_nodes), None, None, None)
    nodes = await _nodes(gw, page_nodes, latest)
    reached = {s.item: s for s in steps}
    data: list[records.Impact] = []
    for step in shown:
        path = [step.item]
        suspect_on_path = step.suspect
        while path[-1] != id:
            via = reached[path[-1]]
            suspect_on_path = suspect_on_path or via.suspect
            path.append(via.parent)
        data.append(
            {
                "item": nodes[step.item],
                "depth": step.level,
                "path": path[::-1],
                "relationship": step.relationship,
                "relationshipType": step.relationship_type,
                "suspect": step.suspect,
                "suspectOnPath": suspect_on_path,
            }
        )
    return as_of_page(data, (page.start_at, len(data), len(steps)), answered)
