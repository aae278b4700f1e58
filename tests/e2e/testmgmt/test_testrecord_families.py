"""The families test plans and runs share with items: lock, tags, comments, links,
relationships and activities (``/testplans/{id}/...`` and ``/testruns/{id}/...``)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.api import (
    MakeUser,
    Team,
    assert_error,
    create_item,
    created_id,
    eventually,
    grant,
    ids_of,
    new_project,
    project_key,
    unique,
)
from tests.e2e.testrecords import (
    add_cases,
    default_group,
    new_cycle,
    new_plan,
    new_test_case,
    runs_of,
)

#: What each test runs against: the path of a test plan or of a test run.
BASES = ("testplans", "testruns")


@pytest.fixture
def records(admin: httpx.Client, project: dict[str, Any]) -> dict[str, int]:
    """A test plan and one of its runs in ``project``."""
    case = new_test_case(admin, project, "Case")
    plan = new_plan(admin, project)
    add_cases(admin, plan, default_group(admin, plan), case)
    [run] = runs_of(admin, new_cycle(admin, plan))
    return {"testplans": plan, "testruns": int(run["id"])}


def _tag(admin: httpx.Client, project: int) -> int:
    return created_id(admin.post("/tags", json={"name": unique("tag"), "project": project}))


def _comment(client: httpx.Client, item: int, text: str, **more: object) -> httpx.Response:
    body = {"body": {"text": text}, "location": {"item": item}, "commentType": "GENERAL", **more}
    return client.post("/comments", json=body)


@pytest.mark.parametrize("base", BASES)
def test_lock(
    admin: httpx.Client,
    project: dict[str, Any],
    records: dict[str, int],
    make_user: MakeUser,
    base: str,
) -> None:
    record = records[base]
    path = f"/{base}/{record}/lock"
    assert admin.get(path).json()["data"]["locked"] is False
    (locker, _, _, mine), (_, _, _, theirs) = make_user(), make_user()
    for user in (locker, _user_id(theirs)):
        grant(admin, project["id"], "READ_WRITE", user=user)
    response = mine.put(path, json={"locked": True})
    assert response.status_code == 200
    assert response.json()["meta"]["status"] == "OK"
    lock = admin.get(path).json()["data"]
    assert lock["locked"] is True
    assert lock["lockedBy"] == locker
    assert lock["lastLockedDate"]
    assert_error(theirs.put(path, json={"locked": False}), 400, "locked by user", str(locker))
    assert mine.put(path, json={"locked": False}).status_code == 200
    assert admin.get(path).json()["data"]["locked"] is False
    # The other kind's path does not name this record.
    other = "testruns" if base == "testplans" else "testplans"
    assert_error(admin.get(f"/{other}/{record}/lock"), 404)
    assert_error(admin.put(f"/{other}/{record}/lock", json={"locked": True}), 404)


def _user_id(client: httpx.Client) -> int:
    return int(client.get("/users/current").json()["data"]["id"])


@pytest.mark.parametrize("base", BASES)
def test_tags(
    admin: httpx.Client, project: dict[str, Any], records: dict[str, int], base: str
) -> None:
    record = records[base]
    tag = _tag(admin, project["id"])
    path = f"/{base}/{record}/tags"
    response = admin.post(path, json={"tag": tag})
    assert created_id(response) == tag
    assert response.json()["meta"]["location"].endswith(f"{path}/{tag}")
    assert_error(admin.post(path, json={"tag": tag}), 400, "already has the tag")
    assert ids_of(admin.get(path)) == [tag]
    assert admin.get(f"{path}/{tag}").json()["data"]["name"].startswith("tag")
    elsewhere = _tag(admin, new_project(admin, project_key("OT")))
    assert_error(admin.post(path, json={"tag": elsewhere}), 400, "belongs to project")
    assert_error(admin.get(f"{path}/{elsewhere}"), 404, "does not have tag")
    assert admin.delete(f"{path}/{tag}").status_code == 204
    assert ids_of(admin.get(path)) == []
    assert_error(admin.delete(f"{path}/{tag}"), 404)
    assert_error(admin.get(f"/{base}/99999999/tags"), 404)


@pytest.mark.parametrize("base", BASES)
def test_comments(admin: httpx.Client, records: dict[str, int], base: str) -> None:
    record = records[base]
    root = created_id(_comment(admin, record, "first"))
    reply = created_id(admin.post("/comments", json={"body": {"text": "re"}, "inReplyTo": root}))
    assert admin.get(f"/comments/{root}").json()["data"]["location"]["item"] == record
    assert admin.get(f"/comments/{reply}").json()["data"]["location"]["item"] == record
    path = f"/{base}/{record}/comments"
    assert ids_of(admin.get(path)) == [root, reply]
    assert ids_of(admin.get(path, params={"rootCommentsOnly": "true"})) == [root]
    assert_error(_comment(admin, 99999999, "x"), 400, "location.item")


def test_comments_on_a_test_cycle_are_refused(admin: httpx.Client, project: dict[str, Any]) -> None:
    cycle = new_cycle(admin, new_plan(admin, project))
    assert_error(_comment(admin, cycle, "x"), 400, "test cycle")


@pytest.mark.parametrize("base", BASES)
def test_links(admin: httpx.Client, records: dict[str, int], base: str) -> None:
    path = f"/{base}/{records[base]}/links"
    link = created_id(admin.post(path, json={"url": "https://example.com/a", "description": "A"}))
    assert admin.get(f"{path}/{link}").json()["data"]["url"] == "https://example.com/a"
    assert ids_of(admin.get(path)) == [link]
    assert admin.put(f"{path}/{link}", json={"url": "https://example.com/b"}).status_code == 200
    assert admin.get(f"{path}/{link}").json()["data"]["url"] == "https://example.com/b"
    assert_error(admin.post(path, json={"url": "not a url"}), 400, "url")
    assert admin.delete(f"{path}/{link}").status_code == 204
    assert_error(admin.get(f"{path}/{link}"), 404, "has no link")


def test_relationships(
    admin: httpx.Client, project: dict[str, Any], records: dict[str, int]
) -> None:
    plan, run = records["testplans"], records["testruns"]
    requirement = create_item(admin, project, "Requirement")
    into_run = _relate(admin, requirement, run)
    out_of_run = _relate(admin, run, requirement)
    plan_to_run = _relate(admin, plan, run)
    assert ids_of(admin.get(f"/testruns/{run}/upstreamrelationships")) == [into_run, plan_to_run]
    assert ids_of(admin.get(f"/testruns/{run}/downstreamrelationships")) == [out_of_run]
    assert ids_of(admin.get(f"/testplans/{plan}/downstreamrelationships")) == [plan_to_run]
    upstream = admin.get(f"/testruns/{run}/upstreamrelated").json()["data"]
    assert sorted((r["id"], r["type"]) for r in upstream) == sorted(
        [(requirement, "items"), (plan, "testplans")]
    )
    downstream = admin.get(f"/testplans/{plan}/downstreamrelated").json()["data"]
    assert [(r["id"], r["type"]) for r in downstream] == [(run, "testruns")]
    assert ids_of(admin.get(f"/testplans/{plan}/upstreamrelated")) == []
    listed = ids_of(admin.get("/relationships", params={"project": project["id"]}))
    assert {into_run, out_of_run, plan_to_run} <= set(listed)
    assert ids_of(admin.get(f"/items/{requirement}/downstreamrelationships")) == [into_run]
    assert admin.get(f"/relationships/{out_of_run}").json()["data"]["fromItem"] == run
    assert admin.delete(f"/relationships/{into_run}").status_code == 204
    assert ids_of(admin.get(f"/testruns/{run}/upstreamrelationships")) == [plan_to_run]
    assert_error(
        admin.post("/relationships", json={"fromItem": run, "toItem": 99999999}), 400, "toItem"
    )


def _relate(client: httpx.Client, source: int, target: int) -> int:
    return created_id(client.post("/relationships", json={"fromItem": source, "toItem": target}))


def test_activities(admin: httpx.Client, project: dict[str, Any], records: dict[str, int]) -> None:
    plan, run = records["testplans"], records["testruns"]
    assert admin.put(f"/testplans/{plan}", json={"fields": {"name": "Renamed"}}).status_code == 200
    feed = admin.get(f"/testplans/{plan}/activities").json()["data"]
    assert feed[0]["item"] == plan
    assert feed[0]["objectType"] == "TEST_PLAN"
    assert {a["item"] for a in feed} == {plan}
    assert admin.put(f"/testruns/{run}", json={"fields": {"testRunStatus": "PASSED"}}).status_code
    feed = admin.get(f"/testruns/{run}/activities").json()["data"]
    assert feed[0]["item"] == run
    assert feed[0]["objectType"] == "TEST_RESULT"
    admin.post(f"/testruns/{run}/tags", json={"tag": _tag(admin, project["id"])})
    response = admin.get(f"/testruns/{run}/activities")
    assert response.json()["data"][0]["objectType"] == "ITEM_TAG"
    assert response.json()["meta"]["pageInfo"]["totalResults"] == 2


def test_access(team: Team, records: dict[str, int]) -> None:
    admin = team.clients["ORG_ADMIN"]
    tag = _tag(admin, team.project["id"])
    item = create_item(admin, team.project, "Requirement")
    for base in BASES:
        record = records[base]
        admin.post(f"/{base}/{record}/tags", json={"tag": tag})
        link = created_id(admin.post(f"/{base}/{record}/links", json={"url": "https://x.org"}))
        created_id(_comment(admin, record, "hi"))
        created_id(admin.post("/relationships", json={"fromItem": item, "toItem": record}))
        reads = (
            "lock",
            "tags",
            f"tags/{tag}",
            "links",
            f"links/{link}",
            "comments",
            "upstreamrelationships",
            "downstreamrelationships",
            "upstreamrelated",
            "downstreamrelated",
            "activities",
        )
        reader, stranger = team.clients["READ_ONLY"], team.clients["NONE"]
        for read in reads:
            path = f"/{base}/{record}/{read}"
            assert reader.get(path).status_code == 200, (path, reader.get(path).text)
            assert_error(stranger.get(path), 401)
        writes = {
            "lock": reader.put(f"/{base}/{record}/lock", json={"locked": True}),
            "tag": reader.post(
                f"/{base}/{record}/tags", json={"tag": _tag(admin, team.project["id"])}
            ),
            "untag": reader.delete(f"/{base}/{record}/tags/{tag}"),
            "link": reader.post(f"/{base}/{record}/links", json={"url": "https://y.org"}),
            "unlink": reader.delete(f"/{base}/{record}/links/{link}"),
            "comment": _comment(reader, record, "no"),
            "relate": reader.post("/relationships", json={"fromItem": record, "toItem": item}),
        }
        for what, response in writes.items():
            assert response.status_code == 401, (base, what, response.text)
        writer = team.clients["READ_WRITE"]
        assert created_id(_comment(writer, record, "yes"))
        assert created_id(writer.post("/relationships", json={"fromItem": record, "toItem": item}))
    runner = team.clients["TEST_RUNNER"]
    run_lock = f"/testruns/{records['testruns']}/lock"
    assert runner.put(run_lock, json={"locked": True}).status_code == 200
    assert runner.put(run_lock, json={"locked": False}).status_code == 200
    assert_error(runner.put(f"/testplans/{records['testplans']}/lock", json={"locked": True}), 401)


@pytest.mark.parametrize("deleted", ["testruns", "testplans", "testcycles"])
def test_deleting_a_record_takes_what_hangs_on_it_along(
    admin: httpx.Client, project: dict[str, Any], records: dict[str, int], deleted: str
) -> None:
    plan, run = records["testplans"], records["testruns"]
    item = create_item(admin, project, "Requirement")
    tag = _tag(admin, project["id"])
    hanging = {}
    for base, record in (("testplans", plan), ("testruns", run)):
        admin.post(f"/{base}/{record}/tags", json={"tag": tag})
        hanging[record] = created_id(_comment(admin, record, "on it"))
        _relate(admin, item, record)
    cycle = int(admin.get(f"/testruns/{run}").json()["data"]["fields"]["testCycle"])
    target = {"testruns": run, "testplans": plan, "testcycles": cycle}[deleted]
    assert admin.delete(f"/{deleted}/{target}").status_code == 204
    gone = {run} if deleted != "testplans" else {plan, run}

    def remaining() -> set[int]:
        rels = admin.get(f"/items/{item}/downstreamrelationships").json()["data"]
        return {r["toItem"] for r in rels}

    assert eventually(lambda: remaining() == {plan, run} - gone), remaining()
    for record in gone:
        assert_error(admin.get(f"/comments/{hanging[record]}"), 404)
    tagged = admin.get(f"/tags/{tag}").status_code
    assert tagged == 200
    if deleted != "testplans":
        assert ids_of(admin.get(f"/testplans/{plan}/tags")) == [tag]
        assert ids_of(admin.get(f"/testplans/{plan}/comments")) == [hanging[plan]]
