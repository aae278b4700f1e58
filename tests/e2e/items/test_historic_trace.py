"""Traces as they were (labs): ``/trace`` with ``asOf`` or ``baseline`` and
``/items/{id}/impact`` with ``asOf`` or ``version``, answered from the history after the
graph has changed in every way a trace shows (names, relationships added and removed,
results, items created and deleted), and across projects the caller cannot read."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.api import MakeUser, assert_error, created_id, grant, new_project, project_key
from tests.e2e.testrecords import new_test_case
from tests.e2e.topology import System
from tests.e2e.tracegraph import build_graph, new_item, record_status, relate, trace_of


@pytest.fixture
def graph(admin: httpx.Client, project: dict[str, Any]) -> dict[str, Any]:
    return build_graph(admin, project)


def _shape(body: dict[str, Any]) -> dict[int, list[list[tuple[int, str, str | None]]]]:
    """Each root's levels as (item, name, latest status) triples."""
    return {
        t["item"]["id"]: [
            [
                (
                    link["item"]["id"],
                    link["item"]["name"],
                    link["item"].get("latestRun", {}).get("testRunStatus"),
                )
                for link in level
            ]
            for level in t["levels"]
        ]
        for t in body["data"]
    }


def _baseline(admin: httpx.Client, project: dict[str, Any]) -> tuple[int, str]:
    labs_url = str(admin.base_url).split("/rest/")[0] + "/rest/labs/baselines"
    baseline = created_id(admin.post(labs_url, json={"name": "Then", "project": project["id"]}))
    taken = admin.get(f"/baselines/{baseline}").json()["data"]["createdDate"]
    return baseline, str(taken)


def _latest_version(admin: httpx.Client, item: int) -> int:
    response = admin.get(f"/items/{item}/versions", params={"maxResults": 50})
    assert response.status_code == 200, response.text
    return int(response.json()["data"][-1]["versionNumber"])


def _rename(admin: httpx.Client, item: int, name: str) -> None:
    response = admin.patch(
        f"/items/{item}", json=[{"op": "replace", "path": "/fields/name", "value": name}]
    )
    assert response.status_code == 200, response.text


def _change_after_a_baseline(admin: httpx.Client, graph: dict[str, Any]) -> tuple[int, str, int]:
    """Takes a baseline, then changes everything a trace shows: r1 renamed, r1-t2
    removed, r1-r3 added, t1 failed and t3 passed, r4 created, r3 deleted. The baseline,
    when it was taken, and r4."""
    r1, _, r3 = graph["r"]
    t1, _, t3 = graph["t"]
    baseline, taken = _baseline(admin, graph["project"])
    _rename(admin, r1, "Need 1b")
    assert admin.delete(f"/relationships/{graph['rels']['r1-t2']}").status_code == 204
    relate(admin, r1, r3, graph["related"])
    record_status(admin, graph["cycle"], t1, "FAILED")
    record_status(admin, graph["cycle"], t3, "PASSED")
    r4 = new_item(admin, graph["project"], "REQ", "Need 4")
    assert admin.delete(f"/items/{r3}").status_code == 204
    return baseline, taken, r4


def test_a_trace_as_it_was_at_a_baseline_and_at_a_moment(
    admin: httpx.Client, labs: httpx.Client, graph: dict[str, Any]
) -> None:
    r1, r2, r3 = graph["r"]
    t1, t2, t3 = graph["t"]
    then = {
        r1: [
            [(t1, "Check 1", "PASSED"), (t2, "Check 2", "FAILED"), (r2, "Need 2", None)],
            [(t3, "Check 3", "NOT_RUN")],
        ],
        r2: [[(t3, "Check 3", "NOT_RUN")]],
        r3: [],
    }
    baseline, taken, r4 = _change_after_a_baseline(admin, graph)
    now = trace_of(labs, graph, depth=2, testCycle=graph["cycle"])
    assert "asOf" not in now["meta"]
    assert _shape(now) == {
        r1: [[(t1, "Check 1", "FAILED"), (r2, "Need 2", None)], [(t3, "Check 3", "PASSED")]],
        r2: [[(t3, "Check 3", "PASSED")]],
        r4: [],
    }
    # At the baseline: its items at their versions, relationships and results then.
    at_baseline = trace_of(labs, graph, depth=2, testCycle=graph["cycle"], baseline=baseline)
    assert at_baseline["meta"]["asOf"] == taken
    assert at_baseline["meta"]["pageInfo"]["totalResults"] == 3
    assert _shape(at_baseline) == then
    [first] = [t for t in at_baseline["data"] if t["item"]["id"] == r1]
    assert (first["item"]["name"], first["item"]["version"]) == ("Need 1", 1)
    # At the same moment by time: the same answer (roots in id order).
    at_moment = trace_of(labs, graph, depth=2, testCycle=graph["cycle"], asOf=taken)
    assert at_moment["meta"]["asOf"] == taken
    assert _shape(at_moment) == then
    assert [t["item"]["id"] for t in at_moment["data"]] == [r1, r2, r3]
    # Upstream, one item a page, only one relationship type.
    up = trace_of(
        labs,
        graph,
        itemType=graph["tc"],
        direction="upstream",
        relationshipType=graph["verified"],
        asOf=taken,
        maxResults=2,
    )
    assert up["meta"]["pageInfo"] == {"startIndex": 0, "resultCount": 2, "totalResults": 3}
    assert _shape(up) == {t1: [[(r1, "Need 1", None)]], t2: [[(r1, "Need 1", None)]]}
    # A test run reached by a relationship is shown from its version then.
    runs = admin.get(f"/testcycles/{graph['cycle']}/testruns").json()["data"]
    [run] = [r for r in runs if r["fields"]["testCase"] == t1]
    relate(admin, r2, run["id"], graph["related"])
    _, later = _baseline(admin, graph["project"])
    with_run = trace_of(labs, graph, asOf=later)
    [second] = [t for t in with_run["data"] if t["item"]["id"] == r2]
    [reached] = [link["item"] for link in second["levels"][0] if link["item"]["id"] == run["id"]]
    assert reached["type"] == "testruns"
    assert reached["documentKey"] == run["documentKey"]


def test_coverage_as_it_was_at_a_baseline_and_at_a_moment(
    admin: httpx.Client, labs: httpx.Client, graph: dict[str, Any]
) -> None:
    r1, r2, r3 = graph["r"]
    t1, t2, _ = graph["t"]
    baseline, taken, r4 = _change_after_a_baseline(admin, graph)
    # Verdicts and totals from the relationships and runs then.
    params = {"project": graph["project"]["id"], "itemType": graph["req"]}
    scope = {**params, "testCycle": graph["cycle"]}
    live = labs.get("/coverage", params=scope).json()
    assert {e["item"]["id"]: e["verdict"] for e in live["data"]} == {
        r1: "FAILING",
        r2: "PASSING",
        r4: "NOT_COVERED",
    }
    for at in ({"baseline": baseline}, {"asOf": taken}):
        old = labs.get("/coverage", params={**scope, **at})
        assert old.status_code == 200, old.text
        body = old.json()
        assert body["meta"]["asOf"] == taken
        assert {e["item"]["id"]: e["verdict"] for e in body["data"]} == {
            r1: "FAILING",
            r2: "NOT_RUN",
            r3: "NOT_COVERED",
        }
        assert body["meta"]["totals"]["ALL"] == 3
        [judged] = [e for e in body["data"] if e["item"]["id"] == r1]
        assert [(c["id"], c["latestRun"]["testRunStatus"]) for c in judged["testCases"]] == [
            (t1, "PASSED"),
            (t2, "FAILED"),
        ]
        assert judged["item"]["name"] == "Need 1"
    passing = labs.get("/coverage", params={**scope, "asOf": taken, "verdict": "NOT_RUN"}).json()
    assert [e["item"]["id"] for e in passing["data"]] == [r2]


def test_impact_at_a_version_and_at_a_moment(
    admin: httpx.Client, labs: httpx.Client, graph: dict[str, Any]
) -> None:
    r1, r2, r3 = graph["r"]
    t1, t2, t3 = graph["t"]
    version = _latest_version(admin, r1)
    _, before = _baseline(admin, graph["project"])
    _rename(admin, r1, "Need 1b")
    assert admin.delete(f"/relationships/{graph['rels']['r1-r2']}").status_code == 204
    relate(admin, r1, r3, graph["related"])
    record_status(admin, graph["cycle"], t1, "BLOCKED")

    def reached(**params: Any) -> dict[int, tuple[int, str | None]]:
        response = labs.get(f"/items/{r1}/impact", params=params)
        assert response.status_code == 200, response.text
        return {
            e["item"]["id"]: (e["depth"], e["item"].get("latestRun", {}).get("testRunStatus"))
            for e in response.json()["data"]
        }

    assert reached() == {t1: (1, "BLOCKED"), t2: (1, "FAILED"), r3: (1, None)}
    old = {t1: (1, "PASSED"), t2: (1, "FAILED"), r2: (1, None), t3: (2, "NOT_RUN")}
    assert reached(version=version) == old
    assert reached(asOf=before) == old
    body = labs.get(f"/items/{r1}/impact", params={"version": version}).json()
    listed = admin.get(f"/items/{r1}/versions", params={"maxResults": 50}).json()["data"]
    [following] = [v for v in listed if v["versionNumber"] == version + 1]
    assert body["meta"]["asOf"] < following["createdDate"]
    assert {e["item"]["id"]: e["path"] for e in body["data"]}[t3] == [r1, r2, t3]
    # Its latest version is its impact now.
    latest = _latest_version(admin, r1)
    assert latest > version
    assert reached(version=latest) == reached()
    assert_error(labs.get(f"/items/{r1}/impact", params={"version": 99}), 404, "version")
    assert_error(
        labs.get(f"/items/{r1}/impact", params={"version": 1, "asOf": before}), 400, "not both"
    )
    assert_error(
        labs.get(f"/items/{r1}/impact", params={"asOf": "2001-01-01T00:00:00.000+0000"}),
        404,
        "did not exist",
    )


def test_historic_traces_hold_only_what_the_caller_may_read_and_refuse_bad_moments(
    admin: httpx.Client,
    labs: httpx.Client,
    graph: dict[str, Any],
    system: System,
    make_user: MakeUser,
) -> None:
    project = graph["project"]
    r1, _, _ = graph["r"]
    other = {"id": new_project(admin, project_key("TH")), "types": project["types"]}
    hidden_case = new_test_case(admin, other, "Secret check")
    relate(admin, r1, hidden_case, graph["verified"])
    baseline, taken = _baseline(admin, project)
    user, name, password, _ = make_user()
    grant(admin, project["id"], "READ_ONLY", user=user)
    params = {"project": project["id"], "itemType": graph["req"]}

    def reached(client: httpx.Client, **more: Any) -> set[int]:
        response = client.get("/trace", params={**params, **more})
        assert response.status_code == 200, response.text
        return {
            link["item"]["id"]
            for t in response.json()["data"]
            for level in t["levels"]
            for link in level
        }

    with system.client((name, password), version="labs") as reader:
        assert hidden_case not in reached(reader, baseline=baseline)
        assert hidden_case not in reached(reader, asOf=taken)
        impact = reader.get(f"/items/{r1}/impact", params={"asOf": taken}).json()["data"]
        assert hidden_case not in {e["item"]["id"] for e in impact}
        assert_error(
            reader.get(
                "/trace", params={"project": other["id"], "itemType": graph["req"], "asOf": taken}
            ),
            401,
        )
    assert hidden_case in reached(labs, baseline=baseline)
    assert hidden_case in reached(labs, asOf=taken)
    assert_error(
        labs.get("/trace", params={**params, "asOf": taken, "baseline": baseline}), 400, "not both"
    )
    assert_error(labs.get("/trace", params={**params, "asOf": "yesterday"}), 400, "asOf")
    assert_error(
        labs.get("/coverage", params={**params, "asOf": taken, "filter": 1}), 400, "filter"
    )
    assert_error(labs.get("/trace", params={**params, "baseline": 987654}), 404, "baseline")
    other_baseline, _ = _baseline(admin, other)
    assert_error(
        labs.get("/trace", params={**params, "baseline": other_baseline}), 400, "of project"
    )
    # Before the project had any item: an empty page, not an error.
    empty = trace_of(labs, graph, asOf="2001-01-01T00:00:00.000+0000")
    assert empty["data"] == []
    assert empty["meta"]["pageInfo"]["totalResults"] == 0
