"""``/rest/labs/system/consumers``: how far the activity feed's, the history's and the
change feed's consumers are behind, per partition, for organization administrators."""

from __future__ import annotations

import httpx

from tests.e2e.api import MakeUser, assert_error, create_item, eventually, item_types, new_project
from tests.e2e.topology import PARTITIONS, System


def test_every_partition_of_each_consumer_is_listed_and_catches_up(
    system: System, admin: httpx.Client, labs: httpx.Client
) -> None:
    project = {"id": new_project(admin), "types": item_types(admin)}
    item = create_item(admin, project, "Consumed")
    assert admin.get(f"/items/{item}/versions").status_code == 200  # the history has it

    def caught_up() -> bool:
        response = labs.get("/system/consumers")
        assert response.status_code == 200, response.text
        listed = response.json()["data"]
        # Reported (a holder reports at each renewal, a few seconds apart) and caught up.
        return all(
            "reportedAt" in p and p["eventsBehind"] == 0 and p["secondsBehind"] == 0 for p in listed
        )

    assert eventually(caught_up, seconds=20)
    response = labs.get("/system/consumers")
    body = response.json()
    partitions = PARTITIONS if system.topology == "distributed" else 1
    assert [(p["consumer"], p["partition"]) for p in body["data"]] == [
        (consumer, n) for consumer in ("activity", "baselines", "hooks") for n in range(partitions)
    ]
    assert body["meta"]["pageInfo"]["totalResults"] == 3 * partitions
    for listed in body["data"]:
        assert listed["holder"], listed  # every partition is consumed by some replica
    if system.topology == "distributed":  # two replicas of each share the partitions
        for consumer in ("activity", "baselines"):
            holders = {p["holder"] for p in body["data"] if p["consumer"] == consumer}
            assert len(holders) in (1, 2), holders


def test_only_organization_administrators_see_the_consumers(
    system: System, make_user: MakeUser
) -> None:
    _id, username, password, _client = make_user()
    url = f"{system.url}/rest/labs/system/consumers"
    assert_error(httpx.get(url, auth=(username, password)), 401, "administrator")
    assert httpx.get(url).status_code == 401
    # A Plumbline extension: not in the contract's version.
    response = httpx.get(
        f"{system.url}/rest/v1/system/consumers", auth=("admin", system.admin_password)
    )
    assert response.status_code == 404, response.text
