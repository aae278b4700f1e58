"""Traceability (labs): ``/trace``, ``/coverage`` and ``/items/{id}/impact`` over
requirements, test cases and their runs, across projects and roles."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.api import MakeUser, assert_error, created_id, grant, new_project, project_key
from tests.e2e.testrecords import new_cycle, new_group, new_plan, new_test_case
from tests.e2e.topology import System
from tests.e2e.tracegraph import build_graph, new_item, record_status, relate, trace_of


@pytest.fixture
def graph(admin: httpx.Client, project: dict[str, Any]) -> dict[str, Any]:
    return build_graph(admin, project)


def _levels(trace: dict[str, Any]) -> list[list[tuple[int, int]]]:
    return [[(link["fromItem"], link["item"]["id"]) for link in level] for level in trace["levels"]]


def test_trace_follows_relationships_level_by_level_with_latest_results(
    labs: httpx.Client, graph: dict[str, Any]
) -> None:
    r1, r2, r3 = graph["r"]
    t1, t2, t3 = graph["t"]
    body = trace_of(labs, graph, depth=2, testCycle=graph["cycle"])
    assert body["meta"]["pageInfo"]["totalResults"] == 3
    by_root = {t["item"]["id"]: t for t in body["data"]}
    assert [t["item"]["id"] for t in body["data"]] == [r1, r2, r3]
    assert by_root[r1]["item"]["name"] == "Need 1"
    assert by_root[r1]["item"]["documentKey"].startswith(graph["project"]["key"])
    assert _levels(by_root[r1]) == [[(r1, t1), (r1, t2), (r1, r2)], [(r2, t3)]]
    assert _levels(by_root[r2]) == [[(r2, t3)]]
    assert by_root[r3]["levels"] == []
    first = {link["item"]["id"]: link for link in by_root[r1]["levels"][0]}
    assert first[t1]["item"]["latestRun"]["testRunStatus"] == "PASSED"
    assert first[t2]["item"]["latestRun"]["testRunStatus"] == "FAILED"
    assert first[t1]["item"]["latestRun"]["testCycle"] == graph["cycle"]
    assert first[t1]["relationshipType"] == graph["verified"]
    assert first[r2]["relationshipType"] == graph["related"]
    assert "latestRun" not in first[r2]["item"]  # a requirement has no runs
    [deep] = by_root[r1]["levels"][1]
    assert deep["item"]["latestRun"]["testRunStatus"] == "NOT_RUN"
    assert deep["relationship"] == graph["rels"]["r2-t3"]
    # Pages larger than a list's: a report reads a project in few of them.
    assert len(trace_of(labs, graph, maxResults=1000)["data"]) == 3
    # Depth 1, only one relationship type, one item a page.
    narrow = trace_of(labs, graph, relationshipType=graph["verified"], maxResults=1)
    assert narrow["meta"]["pageInfo"] == {"startIndex": 0, "resultCount": 1, "totalResults": 3}
    assert _levels(narrow["data"][0]) == [[(r1, t1), (r1, t2)]]


def test_trace_upstream_and_suspect_links(
    admin: httpx.Client, labs: httpx.Client, graph: dict[str, Any]
) -> None:
    r1, r2, _ = graph["r"]
    t1, t2, t3 = graph["t"]
    up = trace_of(labs, graph, itemType=graph["tc"], direction="upstream", depth=2)
    by_root = {t["item"]["id"]: t for t in up["data"]}
    assert _levels(by_root[t3]) == [[(t3, r2)], [(r2, r1)]]
    assert _levels(by_root[t1]) == [[(t1, r1)]]  # nothing relates to r1
    # A suspect-triggering change of r1 marks its downstream links suspect.
    assert (
        admin.patch(
            f"/items/{r1}", json=[{"op": "replace", "path": "/fields/name", "value": "Need 1b"}]
        ).status_code
        == 200
    )
    body = trace_of(labs, graph, depth=1)
    [first] = [t for t in body["data"] if t["item"]["id"] == r1]
    assert {link["item"]["id"]: link["suspect"] for link in first["levels"][0]} == {
        t1: True,
        t2: True,
        r2: True,
    }
    [second] = [t for t in body["data"] if t["item"]["id"] == r2]
    assert [link["suspect"] for link in second["levels"][0]] == [False]


def test_coverage_verdicts_totals_and_scopes(
    admin: httpx.Client, labs: httpx.Client, graph: dict[str, Any]
) -> None:
    r1, r2, r3 = graph["r"]
    t1, t2, t3 = graph["t"]
    params = {"project": graph["project"]["id"], "itemType": graph["req"]}

    def coverage(**more: Any) -> dict[str, Any]:
        response = labs.get("/coverage", params={**params, **more})
        assert response.status_code == 200, response.text
        return dict(response.json())

    def verdicts(body: dict[str, Any]) -> dict[int, str]:
        return {e["item"]["id"]: e["verdict"] for e in body["data"]}

    in_cycle = coverage(testCycle=graph["cycle"])
    assert verdicts(in_cycle) == {r1: "FAILING", r2: "NOT_RUN", r3: "NOT_COVERED"}
    assert in_cycle["meta"]["totals"] == {
        "PASSING": 0,
        "FAILING": 1,
        "BLOCKED": 0,
        "NOT_RUN": 1,
        "NOT_COVERED": 1,
        "ALL": 3,
    }
    [first] = [e for e in in_cycle["data"] if e["item"]["id"] == r1]
    assert [c["id"] for c in first["testCases"]] == [t1, t2]
    assert [c["latestRun"]["testRunStatus"] for c in first["testCases"]] == ["PASSED", "FAILED"]
    # t3 blocked: r2 blocked. A newer cycle where t2 passed: r1 passes in that cycle and
    # in the plan (the latest result), while the first cycle still says it fails.
    record_status(admin, graph["cycle"], t3, "BLOCKED")
    later = new_cycle(admin, graph["plan"], name="Again")
    record_status(admin, later, t1, "PASSED")
    record_status(admin, later, t2, "PASSED")
    assert verdicts(coverage(testCycle=graph["cycle"]))[r2] == "BLOCKED"
    assert verdicts(coverage(testCycle=later)) == {r1: "PASSING", r2: "NOT_RUN", r3: "NOT_COVERED"}
    assert verdicts(coverage(testPlan=graph["plan"])) == {
        r1: "PASSING",
        r2: "BLOCKED",
        r3: "NOT_COVERED",
    }
    overall = coverage()
    [entry] = [e for e in overall["data"] if e["item"]["id"] == r1]
    assert [c["latestRun"]["runCount"] for c in entry["testCases"]] == [2, 2]
    # Narrowed by verdict and paged: the totals still count every item.
    failing = coverage(testCycle=graph["cycle"], verdict="failing")
    assert verdicts(failing) == {r1: "FAILING"}
    assert failing["meta"]["totals"]["ALL"] == 3
    assert failing["meta"]["pageInfo"]["totalResults"] == 1
    paged = coverage(maxResults=2, startAt=2)
    assert [e["item"]["id"] for e in paged["data"]] == [r3]
    assert paged["meta"]["pageInfo"] == {"startIndex": 2, "resultCount": 1, "totalResults": 3}
    # Only the relationship type named: Related to reaches no test case from r1 ... r3.
    assert set(verdicts(coverage(relationshipType=graph["related"])).values()) == {"NOT_COVERED"}


def test_coverage_of_a_release_and_of_a_filter(
    admin: httpx.Client, labs: httpx.Client, graph: dict[str, Any]
) -> None:
    project = graph["project"]
    r1, r2, r3 = graph["r"]
    t1, t2, _ = graph["t"]
    release = created_id(admin.post("/releases", json={"name": "R1", "project": project["id"]}))
    released = new_plan(admin, project, "Released", release=release)
    new_group(admin, released, "Both", t1, t2)
    cycle = new_cycle(admin, released)
    record_status(admin, cycle, t1, "PASSED")
    record_status(admin, cycle, t2, "PASSED")
    params = {"project": project["id"], "itemType": graph["req"], "release": release}
    body = labs.get("/coverage", params=params).json()
    assert {e["item"]["id"]: e["verdict"] for e in body["data"]} == {
        r1: "PASSING",
        r2: "NOT_RUN",
        r3: "NOT_COVERED",
    }
    found = labs.post(
        "/filters",
        json={
            "name": "Need 2 only",
            "filterQuery": {
                "rule": {"field": {"name": "name"}, "operator": "CONTAINS", "values": ["Need 2"]}
            },
        },
    )
    assert found.status_code == 201, found.text
    narrowed = labs.get("/coverage", params={**params, "filter": created_id(found)}).json()
    assert [e["item"]["id"] for e in narrowed["data"]] == [r2]


def test_impact_lists_every_dependant_once_with_its_path(
    admin: httpx.Client, labs: httpx.Client, graph: dict[str, Any]
) -> None:
    r1, r2, _ = graph["r"]
    t1, t2, t3 = graph["t"]
    response = labs.get(f"/items/{r1}/impact")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["meta"]["pageInfo"]["totalResults"] == 4
    shown = {e["item"]["id"]: e for e in body["data"]}
    assert {i: (e["depth"], e["path"]) for i, e in shown.items()} == {
        t1: (1, [r1, t1]),
        t2: (1, [r1, t2]),
        r2: (1, [r1, r2]),
        t3: (2, [r1, r2, t3]),
    }
    assert shown[t1]["item"]["latestRun"]["testRunStatus"] == "PASSED"
    assert not any(e["suspect"] or e["suspectOnPath"] for e in body["data"])
    # r2 changes: its link to t3 turns suspect, and t3 shows it on its path from r1.
    assert (
        admin.patch(
            f"/items/{r2}", json=[{"op": "replace", "path": "/fields/name", "value": "Need 2b"}]
        ).status_code
        == 200
    )
    again = {e["item"]["id"]: e for e in labs.get(f"/items/{r1}/impact").json()["data"]}
    assert (again[t3]["suspect"], again[t3]["suspectOnPath"]) == (True, True)
    assert (again[r2]["suspect"], again[r2]["suspectOnPath"]) == (False, False)
    shallow = labs.get(f"/items/{r1}/impact", params={"depth": 1}).json()
    assert shallow["meta"]["pageInfo"]["totalResults"] == 3
    # A cycle in the graph ends: t3 back to r1 adds nothing new.
    relate(admin, t3, r1, graph["related"])
    assert labs.get(f"/items/{r1}/impact").json()["meta"]["pageInfo"]["totalResults"] == 4


def test_a_relationship_into_a_project_the_caller_cannot_read_shows_nothing_of_it(
    admin: httpx.Client,
    labs: httpx.Client,
    graph: dict[str, Any],
    system: System,
    make_user: MakeUser,
) -> None:
    project = graph["project"]
    r1, _, _ = graph["r"]
    other = {"id": new_project(admin, project_key("TO")), "types": project["types"]}
    hidden_req = new_item(admin, other, "REQ", "Secret need")
    hidden_case = new_test_case(admin, other, "Secret check")
    relate(admin, r1, hidden_req, graph["related"])
    relate(admin, r1, hidden_case, graph["verified"])
    user, name, password, _ = make_user()
    grant(admin, project["id"], "READ_ONLY", user=user)
    with system.client((name, password), version="labs") as reader:
        params = {"project": project["id"], "itemType": graph["req"]}
        seen = [
            link["item"]["id"]
            for t in reader.get("/trace", params=params).json()["data"]
            for level in t["levels"]
            for link in level
        ]
        assert hidden_req not in seen
        assert hidden_case not in seen
        every = [
            link["item"]["id"]
            for t in labs.get("/trace", params=params).json()["data"]
            for level in t["levels"]
            for link in level
        ]
        assert hidden_req in every
        assert hidden_case in every
        covered = reader.get("/coverage", params=params).json()["data"]
        assert hidden_case not in [c["id"] for e in covered for c in e["testCases"]]
        impact = reader.get(f"/items/{r1}/impact").json()["data"]
        assert {hidden_req, hidden_case}.isdisjoint(e["item"]["id"] for e in impact)
        assert reader.get(f"/items/{hidden_req}/impact").status_code in (401, 404)
        assert_error(
            reader.get("/trace", params={"project": other["id"], "itemType": graph["req"]}),
            401,
        )


def test_bad_questions_are_refused_with_what_is_allowed(
    labs: httpx.Client, graph: dict[str, Any]
) -> None:
    base = {"project": graph["project"]["id"], "itemType": graph["req"]}
    assert_error(labs.get("/trace", params={**base, "depth": 6}), 400, "depth", "5")
    assert_error(labs.get("/trace", params={**base, "maxResults": 1001}), 400, "1000")
    assert_error(labs.get("/trace", params={**base, "direction": "sideways"}), 400, "upstream")
    assert_error(labs.get("/trace", params={"project": base["project"]}), 400, "itemType")
    assert_error(labs.get("/trace", params={**base, "itemType": 987654}), 400, "itemType")
    assert_error(labs.get("/trace", params={**base, "project": 987654}), 404, "project")
    assert_error(labs.get("/trace", params={**base, "relationshipType": 987654}), 400, "987654")
    assert_error(labs.get("/coverage", params={**base, "testCycle": 987654}), 404, "test cycle")
    assert_error(
        labs.get(
            "/coverage", params={**base, "testCycle": graph["cycle"], "testPlan": graph["plan"]}
        ),
        400,
        "at most one",
    )
    assert_error(labs.get("/coverage", params={**base, "verdict": "GREEN"}), 400, "PASSING")
    assert_error(labs.get("/items/987654/impact"), 404, "987654")
    # Not in v1: labs only.
    assert (
        labs.get(str(labs.base_url).replace("/labs", "/v1") + "/trace", params=base).status_code
        == 404
    )
