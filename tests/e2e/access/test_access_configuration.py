"""The access matrix for the configuration: item types, pick lists, relationship types and
rule sets are organisation-wide.

Any authenticated user reads them; only organisation administrators change them. The item
types of a project need READ on the project, and a rule set lists only the projects the
caller may read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.e2e.api import (
    MATRIX_ROLES,
    Team,
    assert_answers,
    eventually,
    ids_of,
    item_types,
    new_project,
    total_of,
    unique,
)
from tests.e2e.topology import System, run_cli


def test_configuration_by_role(team: Team, admin: httpx.Client) -> None:
    project = team.project["id"]
    feature = item_types(admin)["FEAT"]
    status = next(f for f in feature["fields"] if f["name"] == "status")
    options = f"/picklists/{status['pickList']}/options"
    may_read, may_change = team.expect("READ_ONLY"), team.expect(None)
    for role in MATRIX_ROLES:
        client = team.clients[role]
        option = admin.get(options).json()["data"][0]
        organisation = {
            "item types": client.get("/itemtypes"),
            "item type": client.get(f"/itemtypes/{feature['id']}"),
            "pick lists": client.get("/picklists"),
            "options": client.get(options),
            "option": client.get(f"/picklistoptions/{option['id']}"),
            "relationship types": client.get("/relationshiptypes"),
            "rule sets": client.get("/relationshiprulesets"),
        }
        assert_answers(organisation, True, role)
        assert_answers(
            {"project's item types": client.get(f"/projects/{project}/itemtypes")},
            may_read[role],
            role,
            "no access",
            f"project {project}",
        )
        changes = {
            "add field": client.post(
                f"/itemtypes/{feature['id']}/fields",
                json={"name": unique("f"), "label": "F", "fieldType": "STRING"},
            ),
            "add option": client.post(options, json={"name": unique("Opt ")}),
            "change option": client.put(f"/picklistoptions/{option['id']}", json=option),
        }
        assert_answers(changes, may_change[role], role)


def _rule_sets(admin: httpx.Client) -> list[dict[str, Any]]:
    """Every rule set, page by page."""
    found: list[dict[str, Any]] = []
    while True:
        page = admin.get("/relationshiprulesets", params={"startAt": len(found), "maxResults": 50})
        found += page.json()["data"]
        if len(found) >= total_of(page):
            return found


def test_rule_sets_list_only_readable_projects(
    system: System, team: Team, admin: httpx.Client, tmp_path: Path
) -> None:
    other = admin.get(f"/projects/{new_project(admin)}").json()["data"]
    name = unique("Rules ")
    document = tmp_path / "rules.yaml"
    document.write_text(
        f"""
relationshipRuleSets:
  - name: {name}
    projects: [{team.project["key"]}, {other["projectKey"]}]
"""
    )
    assert name not in {r["name"] for r in _rule_sets(admin)}  # the snapshot is warm
    result = run_cli(system, "config", "apply", str(document))
    assert result.returncode == 0, result.stderr
    # The service reloads its configuration snapshot within seconds of a change made
    # by another process (the CLI).
    assert eventually(lambda: any(r["name"] == name for r in _rule_sets(admin)))
    rule_set = next(r for r in _rule_sets(admin) if r["name"] == name)
    url = f"/relationshiprulesets/{rule_set['id']}/projects"
    assert total_of(admin.get(url)) == 2
    for role in ("NONE", "READ_ONLY"):
        listed = team.clients[role].get(url)
        expected = [team.project["id"]] if role == "READ_ONLY" else []
        assert (ids_of(listed), total_of(listed)) == (expected, len(expected)), role
