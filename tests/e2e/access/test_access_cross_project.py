"""What a reader of one project learns of another project through relationships between
them: nothing. A relationship from an item or a test run of project A to an item of
project B is B's as much as A's; a user who may read A but not B finds B's item (its id,
its document key, its name) in no answer: not in relationship lists and includes, nor in
the relationships an item or a run had at a time, a baseline's relationships and its
comparison, nor in A's activity feed. The organisation admin sees it everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from tests.e2e.api import (
    Team,
    assert_error,
    create_item,
    created_id,
    ids_of,
    item_types,
    new_project,
    project_key,
    total_of,
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

#: Strings that are dates: their digits are no ids.
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(T[\d:.]+[+-]\d{4})?$")
#: Members that name an abstract item by its id besides those named ``…item(s)``.
_REFERENCES = {"testcase", "upstream", "downstream"}
#: Strings whose numbers are no ids: keys (a document key names its project, and is
#: looked for as such) and places in a tree.
_NO_IDS = {"documentKey", "globalId", "sequence"}
#: The ``type`` of records that are abstract items (their ``id`` is an item's).
_ITEMS = {"items", "testplans", "testcycles", "testruns", "attachments"}


def _labs(client: httpx.Client, path: str) -> str:
    return str(client.base_url).split("/rest/")[0] + "/rest/labs" + path


def _now() -> str:
    """The moment now as the API takes it (milliseconds, UTC)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "+0000"


def _names_an_item(member: str | None) -> bool:
    name = (member or "").lower()
    return name in _REFERENCES or name.endswith(("item", "items"))


def _written(text: str) -> Iterator[str]:
    """The numbers written in a string (dates aside; of a URL, its path's segments that
    are numbers)."""
    if _DATE.match(text):
        return
    if text.startswith(("http://", "https://")):
        yield from (s for s in urlsplit(text).path.split("/") if s.isdigit())
        return
    yield from re.findall(r"\b\d+\b", text)  # not the digits inside a word (a hex key)


def _references(value: Any, path: str = "", member: str | None = None) -> Iterator[tuple[str, str]]:
    """Every id a JSON document could name an abstract item by, as text, with where it
    is: the numbers of members that hold ids (an abstract item's ``id``, ``…Item``,
    ``[id, version]`` pairs), ids as keys (of ``linked``) and numbers written in strings
    (as in an activity's details)."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        if _names_an_item(member):
            yield path, str(value)
    elif isinstance(value, str) and member not in _NO_IDS:
        yield from ((path, n) for n in _written(value))
    elif isinstance(value, dict):
        if value.get("type") in _ITEMS and isinstance(value.get("id"), int):
            yield f"{path}.id", str(value["id"])
        for key, inner in value.items():
            if key.isdigit():
                yield path, key
            yield from _references(inner, f"{path}.{key}", key)
    elif isinstance(value, list):
        pair = len(value) == 2 and all(isinstance(v, int) for v in value)
        if pair and _names_an_item(member):  # an item at a version
            yield path, str(value[0])
        else:
            for n, inner in enumerate(value):
                yield from _references(inner, f"{path}[{n}]", member)


@dataclass
class _Theirs:
    """Project B's item: what would give it away."""

    id: int
    key: str
    name: str

    def named_in(self, response: httpx.Response) -> list[str]:
        """Where the response names the item (empty: nowhere)."""
        assert response.status_code == 200, response.text
        found = [path for path, n in _references(response.json()) if n == str(self.id)]
        return found + [word for word in (self.key, self.name) if word in response.text]


def _take(client: httpx.Client, project: int, name: str) -> int:
    return created_id(
        client.post(_labs(client, "/baselines"), json={"name": name, "project": project})
    )


def _relate(admin: httpx.Client, source: int, target: int) -> int:
    return created_id(admin.post("/relationships", json={"fromItem": source, "toItem": target}))


def test_a_reader_of_one_project_sees_no_item_of_another(team: Team, admin: httpx.Client) -> None:
    project = team.project
    key = project_key("XB")
    other = {"id": new_project(admin, key), "types": item_types(admin)}
    name = unique("Theirs ")
    theirs = _Theirs(create_item(admin, other, name), key, name)
    mine = create_item(admin, project, "Mine")
    seen = create_item(admin, project, "Seen")
    plan = new_plan(admin, project)
    add_cases(admin, plan, default_group(admin, plan), new_test_case(admin, project, "Case"))
    [run] = [int(r["id"]) for r in runs_of(admin, new_cycle(admin, plan))]
    before = _take(admin, project["id"], "Before")

    inside = _relate(admin, mine, seen)
    out = _relate(admin, mine, theirs.id)
    back = _relate(admin, theirs.id, mine)  # B's relationship: in B's feed
    from_run = _relate(admin, run, theirs.id)
    after = _take(admin, project["id"], "After")
    moment = _now()

    def answers(client: httpx.Client) -> dict[str, httpx.Response]:
        at = {"timestamp": moment}
        return {
            "run then": client.get(f"/abstractitems/{run}/versionedrelationships", params=at),
            "item then": client.get(f"/abstractitems/{mine}/versionedrelationships", params=at),
            "in baseline": client.get(
                f"/baselines/{after}/versioneditems/{mine}/versionedrelationships"
            ),
            "compare now": client.get(
                _labs(client, f"/baselines/{before}/compare"),
                params={"to": "current", "maxResults": 50},
            ),
            "compare baselines": client.get(
                _labs(client, f"/baselines/{before}/compare"),
                params={"to": str(after), "maxResults": 50},
            ),
            "feed": client.get("/activities", params={"project": project["id"], "maxResults": 50}),
            "relationships": client.get(
                "/relationships",
                params=[
                    ("project", project["id"]),
                    ("include", "data.fromItem"),
                    ("include", "data.toItem"),
                ],
            ),
            "downstream": client.get(
                f"/items/{mine}/downstreamrelationships", params={"include": "data.toItem"}
            ),
            "upstream": client.get(f"/items/{mine}/upstreamrelated"),
            "item": client.get(f"/items/{mine}"),
            "run": client.get(f"/testruns/{run}"),
            "run's versions": client.get(f"/testruns/{run}/versions"),
            "item's versions": client.get(f"/items/{mine}/versions"),
        }

    reader = team.clients["READ_ONLY"]
    seen_by_reader = answers(reader)
    leaks = {what: theirs.named_in(r) for what, r in seen_by_reader.items()}
    leaked = {what: where for what, where in leaks.items() if where}
    assert leaked == {}, f"{theirs}: {leaked}"
    # What the reader may read is all there, counted alone.
    then = reader.get(f"/abstractitems/{mine}/versionedrelationships", params={"timestamp": moment})
    assert (ids_of(then), total_of(then)) == ([inside], 1)
    ran = reader.get(f"/abstractitems/{run}/versionedrelationships", params={"timestamp": moment})
    assert (ids_of(ran), total_of(ran)) == ([], 0)
    compared = reader.get(
        _labs(reader, f"/baselines/{before}/compare"), params={"to": "current", "maxResults": 50}
    )
    assert [c["id"] for c in compared.json()["data"] if c["kind"] == "RELATIONSHIP"] == [inside]
    feed = reader.get(
        "/activities", params={"project": project["id"], "objectType": "RELATIONSHIP"}
    )
    assert total_of(feed) == 1, feed.text
    # An activity about a relationship the reader may not read is refused alone, as the
    # relationship is.
    everything = admin.get(
        "/activities", params={"project": project["id"], "objectType": "RELATIONSHIP"}
    )
    hidden = [a["id"] for a in everything.json()["data"] if str(theirs.id) in a["details"].split()]
    assert (len(hidden), total_of(everything)) == (2, 3), everything.text
    for activity in hidden:
        assert_error(
            reader.get(f"/activities/{activity}"), 401, "no access", f"activity {activity}"
        )
        assert_error(
            reader.get(f"/activities/{activity}/affecteditems"), 401, f"activity {activity}"
        )

    # The organisation admin sees B's item wherever it is.
    seen_by_admin = answers(admin)
    for what in ("run then", "item then", "in baseline", "compare now", "compare baselines"):
        assert theirs.named_in(seen_by_admin[what]), what
    assert theirs.named_in(seen_by_admin["feed"])
    assert set(ids_of(seen_by_admin["item then"])) == {inside, out, back}
    assert ids_of(seen_by_admin["run then"]) == [from_run]
    assert total_of(seen_by_admin["feed"]) == total_of(seen_by_reader["feed"]) + 2
