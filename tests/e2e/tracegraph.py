"""A small traceability graph over HTTP: requirements, test cases verifying them, a plan
and a cycle with results (the traceability and report e2e modules share it)."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.api import created_id
from tests.e2e.testrecords import new_cycle, new_group, new_plan, new_test_case, record, runs_of


def relate(admin: httpx.Client, source: int, target: int, rel_type: int) -> int:
    response = admin.post(
        "/relationships", json={"fromItem": source, "toItem": target, "relationshipType": rel_type}
    )
    return created_id(response)


def new_item(admin: httpx.Client, project: dict[str, Any], key: str, name: str) -> int:
    body = {
        "project": project["id"],
        "itemType": project["types"][key]["id"],
        "fields": {"name": name},
    }
    return created_id(admin.post("/items", json=body))


def record_status(admin: httpx.Client, cycle: int, case: int, status: str) -> None:
    [run] = [r for r in runs_of(admin, cycle) if r["fields"]["testCase"] == case]
    response = record(admin, run["id"], testRunStatus=status)
    assert response.status_code == 200, response.text


def build_graph(admin: httpx.Client, project: dict[str, Any]) -> dict[str, Any]:
    """r1 verified by t1, t2 and related to r2; r2 verified by t3; r3 by nothing. One plan
    with t1..t3 and a cycle where t1 passed and t2 failed."""
    rel_types = {t["name"]: t["id"] for t in admin.get("/relationshiptypes").json()["data"]}
    verified, related = rel_types["Verified by"], rel_types["Related to"]
    r1, r2, r3 = (new_item(admin, project, "REQ", f"Need {n}") for n in (1, 2, 3))
    t1, t2, t3 = (new_test_case(admin, project, f"Check {n}") for n in (1, 2, 3))
    rels = {
        "r1-t1": relate(admin, r1, t1, verified),
        "r1-t2": relate(admin, r1, t2, verified),
        "r1-r2": relate(admin, r1, r2, related),
        "r2-t3": relate(admin, r2, t3, verified),
    }
    plan = new_plan(admin, project)
    new_group(admin, plan, "All", t1, t2, t3)
    cycle = new_cycle(admin, plan)
    record_status(admin, cycle, t1, "PASSED")
    record_status(admin, cycle, t2, "FAILED")
    return {
        "project": project,
        "req": project["types"]["REQ"]["id"],
        "tc": project["types"]["TC"]["id"],
        "r": (r1, r2, r3),
        "t": (t1, t2, t3),
        "rels": rels,
        "verified": verified,
        "related": related,
        "plan": plan,
        "cycle": cycle,
    }


def trace_of(labs: httpx.Client, g: dict[str, Any], **params: Any) -> dict[str, Any]:
    """``GET /trace`` of the graph's requirements (``params`` added or overriding)."""
    response = labs.get(
        "/trace", params={"project": g["project"]["id"], "itemType": g["req"], **params}
    )
    assert response.status_code == 200, response.text
    return dict(response.json())
